"""No route to the library's code or to the reference solution passes, whatever the answer's form.

tests/test_shortcuts.py reaches the library through its names (import paths, aliases); here each test takes one
of the other routes: a default argument, a closure, an attribute of a stand-in object, a function rebuilt from a
code object, an answer compiled under a library file's name, and the reference solution imported, exec'd or read
from tutorials/solutions/ (in a learner's file, read as `check` reads it, in a child process).
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path
from types import FunctionType, SimpleNamespace

import numpy as np
import pytest
from course_helpers import own_copy

import minigpt.model
import minigrad as mg
import minigrad.functional as F
import tutorials.exercises as exercises
from minigrad import nn
from tutorials.exercises import find, isolation, print_reports
from tutorials.exercises.grading import grade

sol09 = own_copy("09")
SOLUTIONS = Path(exercises.__file__).resolve().parent.parent / "solutions"


def refused(number: str, answer, words: str = "不能调用") -> str:
    result = grade(find(number), answer)
    assert result.status == "wrong" and words in result.message, (result.status, result.message)
    return result.message


def train_step_clipping_by_default_argument(model, x, y, state, lr, grad_clip=1.0, weight_decay=0.1,
                                            clip=nn.utils.clip_grad_norm_):
    _, loss = model(x, y)
    params = list(model.named_parameters())
    for _, p in params:
        p.grad = None
    loss.backward()
    params = [(name, p) for name, p in params if p.grad is not None]
    clip([p for _, p in params], grad_clip)  # the library's clipping, held since the answer was defined
    state["t"] = state.get("t", 0) + 1
    for name, p in params:
        m = state.setdefault("m", {}).setdefault(name, np.zeros_like(p.array))
        v = state.setdefault("v", {}).setdefault(name, np.zeros_like(p.array))
        sol09.adamw_update(p.array, p.grad.numpy(), m, v, state["t"], lr,
                           weight_decay=weight_decay if p.ndim >= 2 else 0.0)
    return loss.item()


def test_a_default_argument():
    assert "clip_grad_norm_" in refused("9.7", train_step_clipping_by_default_argument)


def test_a_closure():
    def make():
        library_softmax = F.softmax

        def softmax(x):
            return library_softmax(x, dim=-1)

        return softmax

    assert "softmax" in refused("3.1", make())


def test_an_attribute_of_a_stand_in_object():
    tools = SimpleNamespace(norm=F.layer_norm)

    def layer_norm(x, weight, bias, eps=1e-5):
        return tools.norm(x, (x.shape[-1],), weight, bias, eps)

    refused("5.2", layer_norm)


def test_minigpts_block_on_a_stand_in_object_is_refused_to_9_3():
    forward = minigpt.model.Block.forward  # held before grading began

    def block(x, ln_1, attn, ln_2, mlp):
        return forward(SimpleNamespace(pre_norm=True, ln_1=ln_1, attn=lambda h, cache=None: attn(h), ln_2=ln_2,
                                       mlp=mlp), x)

    assert "Block.forward" in refused("9.3", block)


def test_a_function_rebuilt_from_a_code_object():
    original = F.softmax  # its code, globals and defaults, taken before grading began
    code, space, defaults, keywords = original.__code__, original.__globals__, original.__defaults__, \
        original.__kwdefaults__

    def softmax(x):
        mine = FunctionType(code, space, "mine", defaults)
        mine.__kwdefaults__ = keywords
        return mine(x, -1)

    refused("3.1", softmax)


def test_an_answer_compiled_under_a_library_files_name():
    space = {"F": F}
    exec(compile("def softmax(x):\n    return F.softmax(x, dim=-1)\n", F.__file__, "exec"), space)  # noqa: S102
    assert "F.softmax" in refused("3.1", space["softmax"])
    # the same disguise on an answer of its own is graded as an answer: it passes
    own = "def softmax(x):\n    e = (x - x.amax(dim=-1, keepdim=True)).exp()\n    return e / e.sum(-1, keepdims=True)\n"
    exec(compile(own, F.__file__, "exec"), space)  # noqa: S102
    assert grade(find("3.1"), space["softmax"]).passed


def test_unwrapping_a_refused_function_does_not_reach_the_original():
    import inspect

    def softmax(x):
        return inspect.unwrap(F.softmax)(x, dim=-1)

    refused("3.1", softmax)


def test_calling_the_reference_solution_while_graded():
    def softmax(x):
        from tutorials.solutions.lecture03 import softmax as reference

        return reference(x)

    assert "参考答案" in refused("3.1", softmax)


def test_a_reference_helper_held_by_a_default_argument():
    import tutorials.solutions.lecture09 as reference

    def train_step(model, x, y, state, lr, grad_clip=1.0, weight_decay=0.1, step=reference.train_step):
        return step(model, x, y, state, lr, grad_clip, weight_decay)

    assert "参考答案" in refused("9.7", train_step)


def test_the_reference_graded_on_purpose_still_passes():
    import tutorials.solutions.lecture09 as reference

    assert grade(find("9.7"), reference.train_step).passed  # it calls its own adamw_update


# --------------------------------------------------------------------------------------------------
# The learner's file: read as `check` reads it


def learner_file(tmp_path, monkeypatch, source: str, lecture: str = "03") -> None:
    path = tmp_path / f"lecture{lecture}.py"
    path.write_text(f"SOLUTIONS = {str(SOLUTIONS)!r}\n" + source, encoding="utf-8")

    def read(lecture_read: str, solutions: bool = False, file: str = ""):
        spec = importlib.util.spec_from_file_location(f"learner_{tmp_path.name}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    monkeypatch.setattr(exercises, "answers", read)


ROUTES = {
    "imported": "from tutorials.solutions.lecture03 import softmax\n",
    "imported by importlib": "import importlib\n"
                             "softmax = importlib.import_module('tutorials.solutions.lecture03').softmax\n",
    "exec'd": "space = {}\nexec(open(SOLUTIONS + '/lecture03.py').read(), space)\nsoftmax = space['softmax']\n",
    "exec'd a line lower": "space = {}\nexec('\\n' + open(SOLUTIONS + '/lecture03.py').read(), space)\n"
                           "softmax = space['softmax']\n",
    "exec'd while graded": "def softmax(x):\n    space = {}\n"
                           "    exec('\\n\\n' + open(SOLUTIONS + '/lecture03.py').read(), space)\n"
                           "    return space['softmax'](x)\n",
}


@pytest.mark.skipif(not isolation.can_fork(), reason="check grades in a forked child")
@pytest.mark.parametrize("route", list(ROUTES))
def test_the_reference_solution_in_the_learners_file_is_refused(tmp_path, monkeypatch, capsys, route):
    learner_file(tmp_path, monkeypatch, ROUTES[route])
    assert not print_reports("3.1")
    out = capsys.readouterr().out
    assert "✗ 3.1" in out and "参考答案" in out and "0/1 通过" in out, out


@pytest.mark.skipif(not isolation.can_fork(), reason="check grades in a forked child")
def test_a_learners_own_answer_in_the_same_file_passes(tmp_path, monkeypatch, capsys):
    learner_file(tmp_path, monkeypatch, "def softmax(x):\n    e = (x - x.amax(dim=-1, keepdim=True)).exp()\n"
                                        "    return e / e.sum(axis=-1, keepdims=True)\n")
    assert print_reports("3.1")
    assert "1/1 通过" in capsys.readouterr().out


def test_the_checker_itself_may_still_call_the_library():
    import tutorials.solutions.lecture05 as reference

    assert grade(find("5.4"), reference.causal_self_attention).passed  # its checker runs minigpt's attention
    assert math.isfinite(float(F.softmax(mg.tensor([1.0, 2.0]), dim=-1).numpy()[0]))
