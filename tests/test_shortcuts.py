"""Every exercise the library can do refuses the library's code to the answer, under every name it is reached by.

The shortcut answers the grader learns from (tutorials/exercises/shortcuts.py) take one path to the job; the
answers here take another: the defining module imported by its name, a class found in a built model's graph or
modules, a PyTorch-style alias, a `from ... import` taken before grading began. Each must be refused, and the
checker, which calls the same code to compute what is expected, must still pass the reference solution.
"""

from __future__ import annotations

import importlib
from types import ModuleType, SimpleNamespace

import numpy as np
import pytest
from course_helpers import own_copy

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig
from minigpt.sampling import next_token, top_k_filter  # taken before grading: the answers' namespace is guarded too
from minigpt.sizing import parameter_count
from minigrad.optim import cosine_with_warmup
from tutorials.exercises import LECTURES, find, refusal
from tutorials.exercises.grading import answer_file, grade
from tutorials.exercises.shortcuts import SHORTCUTS

sol09 = own_copy("09")
eng = own_copy("engine")
Tensor, apply, no_grad, sum_to, topological_order = (eng.Tensor, eng.apply, eng.no_grad, eng.sum_to,
                                                    eng.topological_order)  # the shortcuts below build on them



def through_its_module(obj):
    """`obj` as reached by importing its defining module by name (not the public path the shortcuts use)."""
    return getattr(importlib.import_module(obj.__module__), obj.__name__)


def named(name):
    """A library module-level function named `name`, reached through the module that defines it."""
    by_code, by_name = refusal.index()
    function = next(v for v in by_name.get(name, []) if not isinstance(v, type))
    module, attribute = next((o, a) for o, a, _ in by_code[function.__code__]
                             if isinstance(o, ModuleType) and o.__name__ == function.__module__)
    return lambda *args, **kwargs: getattr(importlib.import_module(module.__name__), attribute)(*args, **kwargs)


def op_of(make):
    a = mg.tensor([0.5, 1.5, -1.0], requires_grad=True, dtype="float64")
    return type(make(a)._ctx)


def delegate(make, **params):
    op_class = op_of(make)

    class Delegate(mg.Function):
        def forward(self, *xs):
            self.op = through_its_module(op_class)(**params)
            return self.op.forward(*xs)

        def backward(self, gy):
            gxs = self.op.backward(gy)
            return gxs[0] if isinstance(gxs, tuple) and len(gxs) == 3 else gxs

    return Delegate


SUM_TO = None  # filled below from the library, by name: the original itself, as a `from x import` would hold it


def sum_to_captured(g, shape):
    return SUM_TO(g, shape)


def config(C, n_head=4, **kw):
    return GPTConfig(vocab_size=8, block_size=16, n_layer=1, n_head=n_head, n_embd=C, **kw)


def block_of(C, **kw):
    return GPT(config(C, **kw)).transformer.h[0]


def layer_norm_module(x, w, b, eps=1e-5):
    ln = mg.nn.LayerNorm(x.shape[-1], eps=eps).to(dtype=x.dtype)
    ln.load_state_dict({"weight": w, "bias": b})
    return ln(x)


def attention_module(x, w_attn, b_attn, w_proj, b_proj, n_head):
    attn = type(block_of(x.shape[-1], n_head=n_head).attn)(config(x.shape[-1], n_head=n_head), 0).to(dtype=x.dtype)
    attn.load_state_dict({"c_attn.weight": w_attn, "c_attn.bias": b_attn, "c_proj.weight": w_proj,
                          "c_proj.bias": b_proj})
    return attn(x)


def post_ln_block_module(x, w, n_head):
    block = type(block_of(x.shape[-1], n_head=n_head))(config(x.shape[-1], n_head=n_head, norm_position="post"), 0)
    block = block.to(dtype=x.dtype)
    block.load_state_dict(w)
    return block(x)


def sdpa_by_alias(q, k, v, **kw):
    return importlib.import_module("minigrad.nn.functional").scaled_dot_product_attention(q, k, v, **kw)


def mlp_module(x, w1, b1, w2, b2):
    mlp = type(block_of(x.shape[-1]).mlp)(config(x.shape[-1])).to(dtype=x.dtype)
    mlp.load_state_dict({"c_fc.weight": w1, "c_fc.bias": b1, "c_proj.weight": w2, "c_proj.bias": b2})
    return mlp(x)


def adamw_through_its_module(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    param = mg.nn.Parameter(mg.tensor(p.copy()))
    optimizer = through_its_module(mg.optim.AdamW)([param], lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
    optimizer.state[param] = {"step": t - 1, "exp_avg": m, "exp_avg_sq": v}
    param.grad = mg.tensor(g)
    optimizer.step()
    p[...] = param.array


def train_step_clipping_by_the_library(model, x, y, state, lr, grad_clip=1.0, weight_decay=0.1):
    _, loss = model(x, y)
    for _, p in model.named_parameters():
        p.grad = None
    loss.backward()
    importlib.import_module("minigrad.nn.utils").clip_grad_norm_([p for _, p in model.named_parameters()], grad_clip)
    state["t"] = state.get("t", 0) + 1
    for name, p in model.named_parameters():
        m = state.setdefault("m", {}).setdefault(name, np.zeros_like(p.array))
        v = state.setdefault("v", {}).setdefault(name, np.zeros_like(p.array))
        sol09.adamw_update(p.array, p.grad.numpy(), m, v, state["t"], lr, weight_decay=weight_decay * (p.ndim >= 2))
    return loss.item()


def in_blocks_through_its_module(f, x, block):
    threads = importlib.import_module("minigrad.kernels.threads")
    size, threads.BLOCK_SIZE = threads.BLOCK_SIZE, block
    try:
        return threads.in_chunks(f, x)
    finally:
        threads.BLOCK_SIZE = size


class FixedStarts:
    def __init__(self, starts):
        self.starts = np.asarray(starts)

    def integers(self, *args, **kwargs):
        return self.starts


def engine_op_through_importlib(expression):
    """An op of the learner's engine computed by minigrad imported with importlib, its gradient by .backward()."""
    class Op:
        def __init__(self, **params):
            self.params = params

        def forward(self, *xs):
            self.xs, minigrad = xs, importlib.import_module("minigrad")
            return expression(*[minigrad.tensor(x, dtype=x.dtype) for x in xs], **self.params).numpy()

        def backward(self, gy):
            minigrad = importlib.import_module("minigrad")
            tensors = [minigrad.tensor(x, requires_grad=True, dtype=x.dtype) for x in self.xs]
            expression(*tensors, **self.params).backward(minigrad.tensor(gy, dtype=gy.dtype))
            return tuple(t.grad.numpy() for t in tensors)

    return Op


class TensorThroughImportlib:
    def __init__(self, array, requires_grad=False):
        self.array = importlib.import_module("minigrad.tensor").Tensor(array).numpy()
        self.requires_grad, self.grad, self.op = requires_grad, None, None


def apply_reading_minigrads_switch(op, *inputs):
    y = Tensor(op.forward(*[x.array for x in inputs]))
    if importlib.import_module("minigrad.core.grad_mode").is_grad_enabled() and any(x.requires_grad for x in inputs):
        y.requires_grad, y.op, op.inputs = True, op, inputs
    return y


# the learner's engine: minigrad reached through importlib (the engine's watch refuses any route: engine_guard.py)
ENGINE_SECOND_PATHS = {
    "0.8": TensorThroughImportlib,
    "0.9": apply_reading_minigrads_switch,
    "0.10": lambda root: importlib.import_module("minigrad.core.autograd").topological_order(root),
    "0.11": lambda root, grad: importlib.import_module("minigrad.core.autograd").backward(root, grad),
    "0.12": engine_op_through_importlib(lambda a, b: a + b),
    "0.13": engine_op_through_importlib(lambda a, b: a - b),
    "0.14": engine_op_through_importlib(lambda a, b: a * b),
    "0.15": engine_op_through_importlib(lambda a, b: a / b),
    "0.16": engine_op_through_importlib(lambda x, exponent: x**exponent),
    "0.17": engine_op_through_importlib(lambda x: x.exp()),
    "0.18": engine_op_through_importlib(lambda x: x.log()),
    "0.19": engine_op_through_importlib(lambda x: x.erf()),
    "0.20": engine_op_through_importlib(lambda x, axis, keepdims: x.sum(axis=axis, keepdims=keepdims)),
    "0.21": engine_op_through_importlib(lambda x, axis, keepdims: x.amax(dim=() if axis is None else axis,
                                                                         keepdim=keepdims)),
    "0.22": engine_op_through_importlib(lambda x, shape: x.reshape(shape)),
    "0.23": engine_op_through_importlib(lambda x, axis1, axis2: x.transpose(axis1, axis2)),
    "0.24": engine_op_through_importlib(lambda x, index: x[index]),
    "0.25": engine_op_through_importlib(lambda x, mask, value: x.masked_fill(mask, value)),
    "0.26": engine_op_through_importlib(lambda a, b: a.matmul(b)),
}

SECOND_PATHS = {**ENGINE_SECOND_PATHS,
    "0.2": delegate(lambda a: a * a),
    "0.3": delegate(lambda a: a.tanh()),
    "0.4": sum_to_captured,
    "0.5": delegate(lambda a: a / (a + 3)),
    "1.4": lambda P, ids: float(importlib.import_module("minigrad.nn.functional").nll_loss(
        mg.tensor(np.log(P[ids[:-1]])), ids[1:]).item()),
    "2.3": lambda s, enc, W_a: (sdpa_by_alias((s @ W_a)[:, None], enc, enc, scale=1.0)[:, 0],
                                ((enc @ (s @ W_a)[:, :, None])[:, :, 0]).softmax(axis=-1)),
    "3.1": lambda x: mg.nn.Softmax(dim=-1)(x),
    "3.2": lambda q, k, v: sdpa_by_alias(q, k, v),
    "3.3": lambda q, k, v: named("scaled_dot_product_attention")(q, k, v, is_causal=True),
    "3.5": delegate(lambda a: F.softmax(a, dim=-1), axis=-1),
    "4.1": lambda n, dim: named("sinusoidal_table")(n, dim).astype(np.float64),
    "4.2": lambda k, dim: float(named("sinusoidal_table")(k + 1, dim)[[0, k]].astype(np.float64).prod(0).sum()),
    "4.3": lambda x, position, base=10000.0: through_its_module(type(GPT(config(
        len(x), n_head=1, pos_encoding="rope")).transformer.h[0].attn.rotary))(len(x), position + 1, base)(
        mg.tensor(np.asarray(x, dtype=np.float64)[None, None, None]), start=position).numpy()[0, 0, 0],
    "5.1": lambda C: sum(p.numel() for p in block_of(C).parameters()),
    "5.2": layer_norm_module,
    "5.4": attention_module,
    "5.5": delegate(lambda a: F.layer_norm(a, (3,)), eps=1e-5),
    "5.6": post_ln_block_module,
    "6.1": lambda data, starts, block_size: named("get_batch")(np.asarray(data), len(starts), block_size,
                                                              FixedStarts(starts)),
    "6.3": lambda logits, k: (lambda z: np.exp(z - z.max()) / np.exp(z - z.max()).sum())(
        top_k_filter(np.asarray(logits, dtype=np.float64), k)),
    "6.4": lambda logits, p: (lambda z: np.exp(z - z.max()) / np.exp(z - z.max()).sum())(
        named("top_p_filter")(np.asarray(logits, dtype=np.float64), p)),
    "6.5": lambda logits, rng, temperature=1.0, top_k=None, top_p=None: int(next_token(
        np.asarray(logits)[None], temperature, top_k, top_p, rng)[0]),
    "6.6": lambda q, k, v, cache: cache["k"].append(k) or cache["v"].append(v) or sdpa_by_alias(
        mg.tensor(q[None, None], dtype="float64"), mg.tensor(np.array(cache["k"])[None], dtype="float64"),
        mg.tensor(np.array(cache["v"])[None], dtype="float64")).numpy()[0, 0],
    "7.2": lambda model, ids, n: through_its_module(type(model)).generate(model, ids, n, temperature=0.0),
    "7.4": lambda V, block, L, C: parameter_count(GPTConfig(vocab_size=V, block_size=block, n_layer=L, n_head=4,
                                                            n_embd=C)),
    "7.5": lambda a, b: (lambda S: S(a).gap(S(b)))(importlib.import_module("tutorials.yardstick").Score),
    "8.2": in_blocks_through_its_module,
    "9.1": lambda idx, wte, wpe: (lambda emb: emb(idx, wte) + emb(np.arange(idx.shape[-1]), wpe))(
        importlib.import_module("minigrad.nn.functional").embedding),
    "9.2": mlp_module,
    "9.3": lambda x, ln_1, attn, ln_2, mlp: type(block_of(x.shape[-1])).forward(
        SimpleNamespace(pre_norm=True, ln_1=ln_1, attn=lambda h, kv_cache=None: attn(h), ln_2=ln_2, mlp=mlp), x),
    "9.4": lambda logits, targets: importlib.import_module("minigrad.nn.functional").cross_entropy(
        logits.reshape(-1, logits.shape[-1]), np.asarray(targets).reshape(-1)),
    "9.5": lambda step, max_lr, warmup, decay, min_lr: cosine_with_warmup(step, max_lr, warmup, decay, min_lr),
    "9.6": adamw_through_its_module,
    "9.7": train_step_clipping_by_the_library,
}


@pytest.fixture(scope="module", autouse=True)
def captured_sum_to():
    global SUM_TO
    SUM_TO = next(v for v in refusal.index()[1]["sum_to"] if not isinstance(v, type))


def test_every_exercise_with_shortcuts_is_tested_here_through_a_second_path():
    assert set(SECOND_PATHS) == set(SHORTCUTS)
    assert len(SHORTCUTS) >= 25


@pytest.mark.parametrize("number", sorted(SECOND_PATHS, key=lambda n: tuple(map(int, n.split(".")))))
def test_the_library_is_refused_through_a_second_import_path(number):
    result = grade(find(number), SECOND_PATHS[number])
    assert result.status == "wrong", (result.status, result.message)
    assert "不能调用" in result.message, result.message


@pytest.mark.parametrize("number", sorted(SHORTCUTS, key=lambda n: tuple(map(int, n.split(".")))))
def test_the_shortcuts_the_grader_learns_from_are_refused_and_the_solution_passes(number):
    exercise = find(number)
    for shortcut in exercise.shortcuts:
        result = grade(exercise, shortcut)
        assert result.status == "wrong" and "不能调用" in result.message, (result.status, result.message)
    solutions = importlib.import_module(f"tutorials.solutions.{answer_file(exercise)}")
    assert grade(exercise, getattr(solutions, exercise.name)).passed


def test_an_answer_that_catches_the_refusal_still_fails():
    def softmax_or_else(x):
        try:
            return F.softmax(x, dim=-1)
        except Exception:  # noqa: BLE001 (the point of the test)
            e = (x - x.amax(-1, keepdim=True)).exp()
            return e / e.sum(axis=-1, keepdims=True)

    result = grade(find("3.1"), softmax_or_else)
    assert result.status == "wrong" and "不能调用 F.softmax" in result.message, result.message


def test_everything_is_put_back_after_grading():
    before = {id(code): [(o, n, vars(o).get(n)) for o, n, _ in bindings]
              for code, bindings in refusal.index()[0].items()}
    for number in SECOND_PATHS:
        grade(find(number), SECOND_PATHS[number])
    for code in refusal.index()[0]:
        for owner, name, value in before.get(id(code), []):
            assert vars(owner).get(name) is value, (owner, name)
    assert top_k_filter.__name__ == "top_k_filter" and F.softmax(mg.tensor([0.0, 0.0]), dim=-1).numpy()[0] == 0.5


def test_the_checkers_themselves_may_call_the_library():
    # 5.4's and 5.6's checkers compare with minigpt's own modules, 7.4's counts a GPT it builds itself
    for number in ("5.4", "5.6", "7.4"):
        solutions = importlib.import_module(f"tutorials.solutions.lecture0{number[0]}")
        assert grade(find(number), getattr(solutions, find(number).name)).passed


def test_the_open_tasks_have_no_shortcut_answers():
    assert not [e.number for lecture in LECTURES.values() for e in lecture if e.open and e.shortcuts]
