"""The learner's own tensor engine (tutorials/exercises/engine.py; the reference answer tutorials/solutions/engine.py)
and the GPT that runs on it (tutorials/your_engine.py, tutorials/capstone.py).

With the reference answers, the learner's GPT on the learner's engine is minigrad's GPT under another implementation:
from the same weights, in float64, logits and every parameter's gradient agree to 1e-10 relative, and the learner's
loop gives minigpt's losses step by step. A part of the engine that fails its checker falls back, with one line:
an op to the reference answer's op alone, the core (Tensor, apply, order, walk, sum_to) to minigrad's whole engine;
an engine that passes every check but not the whole-model comparison falls back to minigrad's too. The op checkers
hold on shapes hypothesis draws, and the stub's given code is the reference's, line for line. Files in tmp_path.
"""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from minigpt import GPT, GPTConfig
from tutorials.capstone import YourGPT, load_parts, train, train_minigpt
from tutorials.engines import MINIGRAD, engine_of
from tutorials.exercises import find
from tutorials.exercises.checks.engine_ops import SPECS, Case, _run, _twin_grads, diagnose
from tutorials.exercises.grading import Wrong, grade
from tutorials.solutions import engine as reference
from tutorials.your_engine import PARTS, agrees_with_minigrad, load_engine

ROOT = Path(__file__).resolve().parent.parent
SOLUTION = (ROOT / "tutorials" / "solutions" / "engine.py").read_text(encoding="utf-8")
CONFIG = GPTConfig(vocab_size=13, block_size=10, n_layer=2, n_head=2, n_embd=12)


@pytest.fixture(scope="module")
def parts():
    return load_parts("solutions")


def ids(seed, shape=(3, 10)):
    return np.random.default_rng(seed).integers(0, CONFIG.vocab_size, shape)


def test_on_the_reference_engine_logits_and_every_gradient_are_minigrads_in_float64(parts):
    assert parts.engine is not MINIGRAD and parts.engine.name == "参考答案的引擎"
    mg.manual_seed(4)
    theirs = GPT(CONFIG).to(dtype=np.float64)
    problem = agrees_with_minigrad(lambda engine: YourGPT(CONFIG, parts, engine=engine, dtype=np.float64),
                                   parts.engine, theirs, ids(0), ids(1), rtol=1e-10)
    assert problem is None, problem
    mine = YourGPT(CONFIG, parts, dtype=np.float64)  # on parts.engine: the reference engine
    mine.load_state_dict(theirs.state_dict())
    (their_logits, their_loss), (my_logits, my_loss) = theirs(ids(0), ids(1)), mine(ids(0), ids(1))
    assert type(my_logits).__module__ == "tutorials.solutions.engine"  # not a minigrad tensor
    their_loss.backward()
    my_loss.backward()
    np.testing.assert_allclose(my_logits.numpy(), their_logits.numpy(), rtol=1e-10, atol=1e-12)
    mine_by_name = dict(mine.named_parameters())
    for name, p in theirs.named_parameters():
        g, h = p.grad.numpy(), mine_by_name[name].grad.numpy()
        assert np.abs(g - h).max() <= 1e-10 * np.abs(g).max(), name


def test_the_learners_loop_on_the_learners_engine_gives_minigpts_losses(parts):
    mg.manual_seed(5)
    theirs = GPT(CONFIG)
    mine = YourGPT(CONFIG, parts)
    mine.load_state_dict(theirs.state_dict())
    data = (np.arange(2000) * 7) % CONFIG.vocab_size  # a pattern: something to learn in a few steps
    own = train_minigpt(theirs, data, 5, 4, 3e-2, warmup=1, seed=0)
    yours = train(mine, parts, data, 5, 4, 3e-2, warmup=1, seed=0)
    assert own[-1] < own[0]
    assert np.abs(np.array(own) - np.array(yours)).max() <= 1e-5  # float32: rounding only


def test_a_ten_thousand_op_chain_through_the_reference_engine():
    x = reference.Tensor(np.array([1.0, -2.0]), requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001 + 0.0
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full(2, 1.0001**10_000), rtol=1e-9)
    with reference.no_grad():
        z = x * x
    assert z.op is None and not z.requires_grad


def engine_file(tmp_path, old="", new=""):
    """read(): the reference engine with `old` replaced by `new`, as a learner's file (tmp_path/engine.py)."""
    assert old == "" or SOLUTION.count(old) == 1, old
    path = tmp_path / "engine.py"
    path.write_text(SOLUTION.replace(old, new) if old else SOLUTION, encoding="utf-8")

    def read():
        spec = importlib.util.spec_from_file_location("answers_engine", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return read


def test_every_passing_part_of_the_engine_is_the_learners(tmp_path):
    loaded = load_engine("answers", engine_file(tmp_path))
    assert set(loaded.writer.values()) == {"你"} and not loaded.notes
    assert [row[0] for row in loaded.rows()] == [number for _, number, _ in PARTS]


def test_a_wrong_op_falls_back_alone_and_the_rest_stays_the_learners(tmp_path):
    read = engine_file(tmp_path, "return gy @ self.b.swapaxes(-1, -2), self.a.swapaxes(-1, -2) @ gy",
                       "return gy @ self.b, self.a @ gy")
    loaded = load_engine("answers", read)
    assert loaded.writer["MatMul"] == "参考答案" and loaded.status["MatMul"] == "✗ 没通过"
    assert all(w == "你" for key, w in loaded.writer.items() if key != "MatMul")
    assert len(loaded.notes) == 1 and "练习 0.26" in loaded.notes[0] and "check 0.26" in loaded.notes[0]
    assert "\n" not in loaded.notes[0]
    learners = read()
    assert learners.MatMul.backward is not reference.MatMul.backward  # the learner's own module is left as it is
    x = loaded.engine.tensor(np.eye(2), True)
    (x @ loaded.engine.tensor(np.array([[1.0, 2.0], [3.0, 4.0]]), True)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[3.0, 7.0], [3.0, 7.0]])  # the reference's backward


@pytest.mark.parametrize(("old", "new", "said"), [
    ("grads[id(x)] = gx if id(x) not in grads else grads[id(x)] + gx", "grads[id(x)] = gx", "0.11"),
    ("import numpy as np\n", "import numpy as np\nimport no_such_module_anywhere\n", "导入出错"),
])
def test_a_broken_core_runs_the_gpt_on_minigrads_engine(tmp_path, old, new, said):
    loaded = load_engine("answers", engine_file(tmp_path, old, new))
    assert loaded.engine is MINIGRAD and set(loaded.writer.values()) == {"minigrad"}
    assert len(loaded.notes) == 1 and said in loaded.notes[0] and "minigrad 的引擎" in loaded.notes[0]


def test_an_engine_that_passes_its_checks_but_not_the_whole_model_falls_back(tmp_path):
    # the given Tensor.mean edited (dividing by one more): no exercise checks the given methods; the last gate does
    read = engine_file(tmp_path, "keepdims=_keep(keepdim, keepdims)) / n",
                       "keepdims=_keep(keepdim, keepdims)) / (n + 1)")
    parts = load_parts("solutions")
    loaded = load_engine("answers", read)
    assert set(loaded.writer.values()) == {"你"}
    assert agrees_with_minigrad(lambda engine: YourGPT(CONFIG, parts, engine=engine, dtype=np.float64),
                                loaded.engine, GPT(CONFIG).to(dtype=np.float64), ids(0), ids(1)) is not None


def test_the_stubs_given_code_is_the_references():
    """Everything the stub gives (all but what raises NotImplementedError there) is the reference's, line for line."""
    stub = ast.parse((ROOT / "tutorials" / "exercises" / "engine.py").read_text(encoding="utf-8"))
    solution = {getattr(n, "name", None) or ast.unparse(n): n for n in ast.parse(SOLUTION).body
                if not isinstance(n, ast.Expr)}
    for node in (n for n in stub.body if not isinstance(n, ast.Expr)):
        key = getattr(node, "name", None) or ast.unparse(node)
        assert key in solution, key
        if isinstance(node, ast.ClassDef):
            mine = {m.name: ast.unparse(m) for m in node.body if isinstance(m, ast.FunctionDef)}
            theirs = {m.name: ast.unparse(m) for m in solution[key].body if isinstance(m, ast.FunctionDef)}
            for name, code in mine.items():
                if "NotImplementedError" not in code:
                    assert code == theirs[name], (key, name)
        elif "NotImplementedError" not in ast.unparse(node):
            assert ast.unparse(node) == ast.unparse(solution[key]), key


shapes = st.lists(st.integers(1, 3), min_size=0, max_size=3).map(tuple)


@given(shapes, shapes, st.booleans(), st.integers(0, 2**32 - 1))
def test_the_binary_ops_pass_on_drawn_shapes_and_a_swapped_backward_fails(a_shape, b_shape, flip, seed):
    """Add/Sub/Mul/Div's checker comparison on shapes hypothesis draws: one broadcast to the other, either way."""
    if flip:
        a_shape, b_shape = b_shape, a_shape
    try:
        out = np.broadcast_shapes(a_shape, b_shape)
    except ValueError:
        return
    rng = np.random.default_rng(seed)
    case = Case("drawn", [rng.standard_normal(a_shape), 0.5 + rng.random(b_shape)])
    gy = np.asarray(rng.standard_normal(out))
    for number in ("0.12", "0.13", "0.14", "0.15"):
        name, _, _, spec = SPECS[number]
        _, expected = _twin_grads(spec, case, gy)
        _, grads = _run(getattr(reference, name), case, gy)
        for g, e in zip(grads, expected):
            diagnose(g, e, "梯度", "drawn")
    if out and any(s > 1 for s in out):
        swapped = type("Swapped", (reference.Mul,), {"backward": lambda self, gy: (gy * self.a, gy * self.b)})
        _, grads = _run(swapped, case, gy)
        _, expected = _twin_grads(SPECS["0.14"][3], case, gy)
        if not np.allclose(case.arrays[0] * np.ones(out), case.arrays[1] * np.ones(out)):
            with pytest.raises(Wrong):
                for g, e in zip(grads, expected):
                    diagnose(g, e, "梯度", "drawn")


@given(st.lists(st.integers(1, 3), min_size=2, max_size=4), st.integers(0, 2**32 - 1))
def test_matmul_and_reductions_pass_on_drawn_shapes(dims, seed):
    rng = np.random.default_rng(seed)
    n, k, m, *batch = dims + [1]
    a, b = rng.standard_normal((*batch[:1], n, k)), rng.standard_normal((k, m))
    for number, case in (("0.26", Case("drawn", [a, b])), ("0.26", Case("drawn", [b.T, a.swapaxes(-1, -2)])),
                         ("0.20", Case("drawn", [a], {"axis": -1, "keepdims": bool(seed % 2)})),
                         ("0.21", Case("drawn", [a], {"axis": 0, "keepdims": bool(seed % 2)}))):
        name, _, _, spec = SPECS[number]
        y = spec.twin(*[mg.tensor(x, dtype="float64") for x in case.arrays], **case.params)
        gy = np.asarray(rng.standard_normal(y.shape))
        _, expected = _twin_grads(spec, case, gy)
        _, grads = _run(getattr(reference, name), case, gy)
        for g, e in zip(grads, expected):
            diagnose(g, e, "梯度", "drawn")


def test_an_engine_importing_minigrad_or_torch_is_refused(tmp_path):
    read = engine_file(tmp_path, "import numpy as np\n", "import numpy as np\nimport minigrad\n")
    result = grade(find("0.12"), read().Add)
    assert result.status == "wrong" and "不能调用 minigrad" in result.message and "只许 import numpy" in result.message
    torch = pytest.importorskip("torch")

    class AddByTorch(reference.Function):
        def forward(self, a, b):
            return a + b

        def backward(self, gy):
            g = torch.from_numpy(np.array(gy))
            return g.numpy(), g.numpy()

    result = grade(find("0.12"), AddByTorch)
    assert result.status == "wrong" and "不能调用 torch" in result.message, result.message


def test_the_lecture_gpt_names_the_engine_in_its_table(parts):
    table = parts.table()
    for _, number, _ in PARTS:
        assert f"\n{number} " in table
    assert "参考答案的引擎" in table and parts.count() == 35 and parts.mine() == 0
    assert engine_of(reference).name == "你的引擎"


def test_the_site_shows_the_engine_exercises_with_their_hints():
    for module in ("markdown_it", "mdit_py_plugins", "latex2mathml", "pygments"):
        pytest.importorskip(module, reason="the site needs the extra: pip install -e '.[site]'")
    from tutorials.exercises.hints import hints_for
    from tutorials.site.exercises import exercises_html

    html, text = exercises_html(ROOT / "tutorials" / "exercises" / "engine.py", "00", anchor="exercises-engine")
    assert 'id="exercises-engine"' in html and "只许 import numpy" in html
    for _, number, _ in PARTS:
        assert f'id="ex-{number}"' in html and f"练习 {number} " in text, number
    assert html.count('<details class="hint">') == sum(len(hints_for(number)) for _, number, _ in PARTS) > 20
