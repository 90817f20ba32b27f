"""The capstone (tutorials/capstone.py): the learner's own GPT, an nn.Module built from their answers.

With the reference answers it is minigpt's GPT under another implementation: loaded with minigpt's weights it gives
the same logits and gradients, and the learner's training loop gives the same losses step by step (float32
rounding). A part that cannot be used (blank, wrong, a file that does not import, a mistake that shows only at
the model's shapes, a NaN) falls back to the reference for that part alone, with one line naming the exercise and
the command that checks it; nothing raises. Answer files are written to tmp_path, never into the checkout.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigpt import GPT, GPTConfig
from tutorials.capstone import PARTS, YourGPT, fall_back_if, load_parts, train, train_minigpt
from tutorials.engines import MINIGRAD

CONFIG = GPTConfig(vocab_size=23, block_size=16, n_layer=2, n_head=4, n_embd=32)
SOLUTIONS = Path(__file__).resolve().parent.parent / "tutorials" / "solutions"
# Composed formulas against minigpt's fused ops, both float32: each step's loss agrees to ~1e-7 relative;
# 5 steps of AdamW at lr 3e-3 leave it under 1e-5 (measured ~5e-7).
LOSS_TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def reference_parts():
    return load_parts("solutions")


def ids(seed: int, shape=(3, 16)) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, CONFIG.vocab_size, shape)


def twins(parts):
    mg.manual_seed(3)
    theirs = GPT(CONFIG)
    mine = YourGPT(CONFIG, parts)
    mine.load_state_dict(theirs.state_dict())
    return theirs, mine


def test_the_names_are_minigpts_so_its_state_dict_loads(reference_parts):
    theirs, mine = twins(reference_parts)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert mine.lm_head.weight is mine.transformer.wte.weight  # tied, as minigpt's


def test_with_the_reference_answers_logits_and_every_gradient_are_minigpts(reference_parts):
    theirs, mine = twins(reference_parts)
    (their_logits, their_loss), (my_logits, my_loss) = theirs(ids(0), ids(1)), mine(ids(0), ids(1))
    np.testing.assert_allclose(my_logits.numpy(), their_logits.numpy(), rtol=1e-5, atol=1e-5)
    assert abs(my_loss.item() - their_loss.item()) < 1e-5
    their_loss.backward()
    my_loss.backward()
    mine_by_name = dict(mine.named_parameters())
    for name, p in theirs.named_parameters():
        g, h = p.grad.numpy(), mine_by_name[name].grad.numpy()
        assert np.abs(g - h).max() <= 1e-4 * np.abs(g).max() + 1e-7, name


def test_the_learners_loop_gives_minigpts_losses_step_by_step(reference_parts):
    theirs, mine = twins(reference_parts)
    data = np.random.default_rng(5).integers(0, CONFIG.vocab_size, 3000)
    own = train_minigpt(theirs, data, 5, 4, 3e-3, warmup=2, seed=0)
    yours = train(mine, reference_parts, data, 5, 4, 3e-3, warmup=2, seed=0)
    assert own[-1] < own[0]
    assert np.abs(np.array(own) - np.array(yours)).max() <= LOSS_TOLERANCE


def test_blank_answers_fall_back_part_by_part_with_one_line_for_all():
    parts = load_parts("answers")  # the checkout's answer files are the blank stubs
    assert set(parts.writer) == {key for key, _, _ in PARTS} and set(parts.writer.values()) == {"参考答案"}
    assert len(parts.notes) == 2 and "还没写的练习 9.1" in parts.notes[0]  # one line for the model, one for the engine
    assert "python -m tutorials.exercises check" in parts.notes[0]
    assert "还没写的引擎练习" in parts.notes[1] and parts.engine is not MINIGRAD  # the reference's engine stands in
    assert parts.engine.name == "参考答案的引擎"
    table = parts.table()
    assert all(number in table for _, number, _ in PARTS) and "谁写的" in table


def reader(tmp_path: Path, files: dict[str, str]):
    """read(lecture): the module in tmp_path/answers_NN.py (written from `files`, else from the solutions' file);
    read("engine") the learner's engine, tmp_path/answers_engine.py. The learner's file starts with a line of its
    own: its code is then the learner's, not the reference's (compared by value, line numbers included: the grader
    refuses the reference's code to an answer, origin.py)."""
    def read(lecture: str):
        path = tmp_path / f"answers_{lecture}.py"
        stem = f"lecture{lecture}" if lecture != "engine" else "engine"
        source = files.get(lecture, (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8"))
        path.write_text("# 学习者的答案（测试里由参考答案改成）\n" + source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location(f"answers_{lecture}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return read


def test_passing_answers_are_the_learners(tmp_path):
    parts = load_parts("answers", read=reader(tmp_path, {}))
    assert set(parts.writer.values()) == {"你"} and not parts.notes
    assert parts.mine() == parts.count() == len(PARTS) + 20  # the model's 15 parts and the engine's 20


SOLUTION_03 = (SOLUTIONS / "lecture03.py").read_text(encoding="utf-8")
SOLUTION_09 = (SOLUTIONS / "lecture09.py").read_text(encoding="utf-8")
BROKEN = {
    "syntax": ({"09": SOLUTION_09 + "\ndef oops(:\n"}, "lecture09.py 导入出错（SyntaxError", "9.1", "check 09"),
    "import": ({"09": "import no_such_module_anywhere\n" + SOLUTION_09}, "导入出错（ModuleNotFoundError", "9.7",
               "check 09"),
    # passes its checker (T up to 6) and breaks at the model's T = 12: only the second gate sees it
    "shape": ({"03": SOLUTION_03.replace("    T = q.shape[-2]\n", "    T = q.shape[-2]\n    T = min(T, 6)\n", 1)},
              "练习 3.3（因果注意力）通过了检查，在模型的形状上却不对", "3.3", "check 3.3"),
    "nan": ({"09": SOLUTION_09.replace("    return h @ c_proj_weight.swapaxes(-1, -2) + c_proj_bias",
                                       "    y = h @ c_proj_weight.swapaxes(-1, -2) + c_proj_bias\n"
                                       "    return y * float('nan') if x.shape[-1] == 20 else y")},
            "在模型的形状上却不对：输出里出现了 nan", "9.2", "check 9.2"),
}


@pytest.mark.parametrize("kind", list(BROKEN))
def test_a_broken_answer_file_falls_back_with_one_line_and_never_raises(tmp_path, kind):
    files, said, number, command = BROKEN[kind]
    parts = load_parts("answers", read=reader(tmp_path, files))
    key = next(k for k, n, _ in PARTS if n == number)
    assert parts.writer[key] == "参考答案"
    assert len(parts.notes) == 1 and said in parts.notes[0] and command in parts.notes[0], parts.notes
    assert "\n" not in parts.notes[0]
    untouched = [k for k, n, _ in PARTS if n.split(".")[0] not in {f.lstrip("0") or "0" for f in files}]
    assert all(parts.writer[k] == "你" for k in untouched)
    if kind in ("shape", "nan"):  # only that part fell back; the rest of its file is still the learner's
        same_file = [k for k, n, _ in PARTS if n.split(".")[0] == number.split(".")[0] and k != key]
        assert same_file and all(parts.writer[k] == "你" for k in same_file)
    theirs, mine = twins(parts)  # and the model built from what is left works
    np.testing.assert_allclose(mine(ids(0))[0].numpy(), theirs(ids(0))[0].numpy(), rtol=1e-5, atol=1e-5)


def test_a_part_that_fails_later_falls_back_with_one_line_naming_it():
    # lecture 09 §3 and §7: a part that passed both gates but breaks the curve or the sampling is found, replaced by
    # the reference with one line that names its exercise, as the gates do; the learner's other parts stay theirs
    parts = load_parts("solutions")

    def bad(*args, **kwargs):
        return 0.0

    parts.functions["train_step"], parts.writer["train_step"], parts.writer["lr_at"] = bad, "你", "你"
    line = fall_back_if(parts, ("lr_at", "train_step"),
                        lambda p: "曲线对不上" if p.functions["train_step"] is bad else None)
    assert line is not None and "练习 9.7" in line and "曲线对不上" in line and "\n" not in line
    assert "check 9.7" in line and parts.notes[-1] == line
    assert parts.writer["train_step"] == "参考答案" and parts.functions["train_step"] is not bad
    assert parts.writer["lr_at"] == "你"
    assert fall_back_if(parts, ("lr_at", "train_step"), lambda p: None) is None
