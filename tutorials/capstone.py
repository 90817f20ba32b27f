"""The capstone's machinery: a GPT built from the learner's own answers (the parts of parts.py).

`learner_parts("answers")` takes three functions from the learner's exercise files (or, with "solutions", from the
reference solutions) and returns a `Parts` (parts.py) for `gpt_from_parts(config, parts)`, which builds minigpt's
GPT and swaps the learner's parts in as modules:

    causal_attention   exercise 3.3 (tutorials/exercises/lecture03.py)
    layer_norm         exercise 5.2 (tutorials/exercises/lecture05.py)
    split_heads        exercise 5.3 (tutorials/exercises/lecture05.py)

(the GELU stays minigpt's: no exercise asks for it). With `derived_backward=True` the LayerNorm is built instead
around the learner's `LayerNorm` Function of exercise 5.5, so that the backward they derived by hand trains the
model. Before a part goes in, two things must hold, or `PartError`
says in one Chinese line which exercise failed and why:

1. its exercise's own checker passes it (the grading of `python -m tutorials.exercises check`);
2. at a GPT's shapes, in float32, its output and gradients equal the default part's, on ordinary inputs and on
   attention scores in the hundreds (where a softmax without its max subtraction overflows). A checker tries small
   float64 examples; a GPT runs (B, nh, T, hs) batches in float32, where an axis written as 1 instead of -1, or a
   transpose of the wrong pair of axes, shows up.

Each part is also checked once more on its first call inside the model, on the model's own tensors. `train_losses`
is the plain training loop the lecture uses (forward, backward, update), so that two models trained from the same
seed on the same batches can be compared loss by loss.
Read next: 09_capstone.py, the lecture that uses it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import minigrad as mg
from minigpt import GPT
from tutorials import parts as default_parts
from tutorials.exercises import answers, find
from tutorials.exercises.grading import grade
from tutorials.parts import Parts

# (the field of Parts, the exercise that writes it, what the learner calls it)
PART_EXERCISES = (
    ("causal_attention", "3.3", "因果注意力"),
    ("layer_norm", "5.2", "LayerNorm 的前向"),
    ("split_heads", "5.3", "把通道切成几个头"),
)
# float32 at GPT shapes: a composed formula and a fused one round differently, by a few units in the 7th digit
# (more for gradients through a near one-hot softmax); a wrong formula is off in the first or second digit.
RTOL, ATOL = 1e-3, 1e-4
SHAPE = (2, 4, 16, 8)  # B, nh, T, hs: a small GPT's attention, C = nh * hs = 32


class PartError(ValueError):
    """A part of the learner's GPT that cannot go in: the message names its exercise, in one line."""

    def __init__(self, number: str, title: str, status: str, message: str) -> None:
        self.number, self.title, self.status = number, title, status
        super().__init__(message)


def learner_parts(source: str = "answers", check_at_first_call: bool = True, derived_backward: bool = False) -> Parts:
    """The GPT parts written in the learner's answer files ("answers") or in the reference solutions ("solutions").

    Each is graded by its exercise's checker, then compared with minigpt's own part at GPT shapes; the first that
    fails raises `PartError` naming its exercise. With `check_at_first_call`, each part is compared once more on
    its first call inside the model (on the model's own tensors), and raises `PartError` there if it differs.
    With `derived_backward`, the LayerNorm is the learner's `LayerNorm` Function of exercise 5.5 (the backward they
    derived by hand) times weight plus bias, instead of 5.2's composed forward, whose backward autograd derives.
    """
    if source not in ("answers", "solutions"):
        raise ValueError(f"learner_parts: source must be 'answers' or 'solutions', not {source!r}")
    modules = {lecture: answers(lecture, solutions=source == "solutions") for lecture in ("03", "05")}
    exercises = PART_EXERCISES + ((DERIVED_LAYER_NORM,) if derived_backward else ())
    functions = {name: getattr(modules[f"{int(number.split('.')[0]):02d}"], find(number).name, None)
                 for name, number, _ in exercises}
    return parts_from(functions, check_at_first_call)


# With it, the LayerNorm part is built around the learner's mg.Function of exercise 5.5 (see `with_derived_backward`).
DERIVED_LAYER_NORM = ("layer_norm_function", "5.5", "LayerNorm 的反向传播")


def parts_from(functions: dict[str, Any], check_at_first_call: bool = True) -> Parts:
    """`learner_parts` for functions given directly, keyed by the fields of Parts they fill (PART_EXERCISES), and
    "layer_norm_function" for an mg.Function of exercise 5.5 (which then makes the LayerNorm part)."""
    derived = "layer_norm_function" in functions
    for name, number, title in PART_EXERCISES + ((DERIVED_LAYER_NORM,) if derived else ()):
        result = grade(find(number), functions.get(name))
        if not result.passed:
            raise PartError(number, title, result.status,
                            f"练习 {number}（{title}）还没通过：{result.message}——你的 GPT 用不了它")
    layer_norm = with_derived_backward(functions["layer_norm_function"]) if derived else \
        with_zero_bias(functions["layer_norm"])
    parts = Parts(layer_norm=layer_norm, split_heads=functions["split_heads"],
                  causal_attention=functions["causal_attention"])
    # which exercise answers for each field: with 5.5's Function, the LayerNorm is its
    named = [DERIVED_LAYER_NORM[1:] if derived and name == "layer_norm" else (number, title)
             for name, number, title in PART_EXERCISES]
    for (name, _, _), (number, title) in zip(PART_EXERCISES, named):
        for what, inputs in probes(name):
            compare_part(getattr(parts, name), getattr(default_parts.DEFAULT, name), inputs, number, title, what)
    if not check_at_first_call:
        return parts
    return Parts(**{name: checked_once(getattr(parts, name), getattr(default_parts.DEFAULT, name), number, title)
                    for (name, _, _), (number, title) in zip(PART_EXERCISES, named)})


def with_zero_bias(layer_norm: Callable[..., mg.Tensor]) -> Callable[..., mg.Tensor]:
    """The learner's layer_norm(x, weight, bias, eps), given zeros for a model without biases (config.bias False)."""
    def part(x: mg.Tensor, weight: mg.Tensor, bias: mg.Tensor | None, eps: float) -> mg.Tensor:
        if bias is None:
            bias = mg.zeros(x.shape[-1], dtype=x.dtype)
        return layer_norm(x, weight, bias, eps)

    return part


def with_derived_backward(normalise: type[mg.Function]) -> Callable[..., mg.Tensor]:
    """y = normalise(x) * weight + bias: exercise 5.5's Function (x̂ and its hand-derived backward), then the affine."""
    def part(x: mg.Tensor, weight: mg.Tensor, bias: mg.Tensor | None, eps: float) -> mg.Tensor:
        if eps != 1e-5:  # the exercise's forward is written for minigpt's eps
            raise ValueError(f"exercise 5.5's LayerNorm normalises with eps = 1e-5; this model asks for {eps}")
        y = normalise.apply(x) * weight
        return y if bias is None else y + bias

    return part


def probes(name: str) -> list[tuple[str, tuple[Any, ...]]]:
    """(what the input is, the part's arguments) at a GPT's shapes in float32, drawn from a fixed seed."""
    rng = np.random.default_rng(9)
    B, nh, T, hs = SHAPE
    C = nh * hs

    def tensor(a: np.ndarray) -> mg.Tensor:
        return mg.tensor(a.astype(np.float32), requires_grad=True)

    if name == "causal_attention":
        q, k, v = (rng.standard_normal(SHAPE) for _ in range(3))
        return [("(B, nh, T, hs) 的 q、k、v", (tensor(q), tensor(k), tensor(v))),
                ("分数上百的 q、k（训练久了会出现）", (tensor(30 * q), tensor(30 * k), tensor(v)))]
    if name == "layer_norm":
        x = rng.standard_normal((B, T, C)) * 2 + 0.5
        weight, bias = rng.standard_normal(C) * 0.5 + 1, rng.standard_normal(C) * 0.1
        return [("残差流 x (B, T, C)", (tensor(x), tensor(weight), tensor(bias), 1e-5))]
    return [("qkv 里的一份 (B, T, C)", (tensor(rng.standard_normal((B, T, C))), nh))]


def compare_part(part: Callable[..., Any], default: Callable[..., Any], inputs: tuple[Any, ...], number: str,
                 title: str, what: str) -> None:
    """PartError unless `part` gives `default`'s output and gradients on `inputs` (float32 tolerances RTOL, ATOL)."""
    def fail(message: str) -> PartError:
        return PartError(number, title, "gpt", f"练习 {number}（{title}）通过了检查，可放进 GPT 里不对："
                                               f"在{what}上{message}——你的 GPT 用不了它")

    tensors = [a for a in inputs if isinstance(a, mg.Tensor)]
    expected, expected_grads = run(default, inputs, tensors)
    fresh = tuple(mg.tensor(a.numpy(), requires_grad=True) if isinstance(a, mg.Tensor) else a for a in inputs)
    try:
        with np.errstate(all="ignore"):  # an overflow is reported below, as what it gave
            got, grads = run(part, fresh, [a for a in fresh if isinstance(a, mg.Tensor)])
    # the learner's code may fail in any way at a shape its checker never tried: one line, naming the exercise
    except Exception as error:
        raise fail(f"运行出错：{type(error).__name__}: {' '.join(str(error).split())}") from error
    if got.shape != expected.shape:
        raise fail(f"输出的形状应为 {expected.shape}，你的是 {got.shape}")
    if got.dtype != expected.dtype:
        raise fail(f"输出应保持 {expected.dtype}，你的是 {got.dtype}（GPT 用 float32 训练）")
    for label, a, b in [("输出", got, expected)] + [(f"第 {i} 个输入的梯度", g, e)
                                                   for i, (g, e) in enumerate(zip(grads, expected_grads))]:
        if not np.all(np.isfinite(a)):
            raise fail(f"{label}里出现了 {a[~np.isfinite(a)][0]}（exp 溢出了？先减去每行的最大值）")
        if not np.allclose(a, b, rtol=RTOL, atol=ATOL):
            index = np.unravel_index(np.argmax(np.abs(a - b)), a.shape)
            raise fail(f"{label}的第 {tuple(int(i) for i in index)} 个元素应为 {b[index]:.6g}，你的是 {a[index]:.6g}")


def run(fn: Callable[..., Any], inputs: tuple[Any, ...], tensors: list[mg.Tensor]) -> tuple[np.ndarray, list[Any]]:
    """fn(*inputs) as an array, and the gradients of sum(fn(*inputs) * u) (u fixed) with respect to `tensors`."""
    y = fn(*inputs)
    if not isinstance(y, mg.Tensor):
        raise TypeError(f"应返回 mg.Tensor，你的是 {type(y).__name__}")
    upstream = np.random.default_rng(1).standard_normal(y.shape).astype(np.float32)
    (y * mg.tensor(upstream)).sum().backward()
    return y.numpy(), [np.zeros(t.shape, np.float32) if t.grad is None else t.grad.numpy() for t in tensors]


def checked_once(part: Callable[..., Any], default: Callable[..., Any], number: str, title: str) -> Callable[..., Any]:
    """`part`, which on its first call also runs `default` on copies of the same inputs and compares them."""
    done = False

    def first_call_checked(*args: Any) -> Any:
        nonlocal done
        if not done:
            done = True
            inputs = tuple(mg.tensor(a.numpy(), requires_grad=True) if isinstance(a, mg.Tensor) else a for a in args)
            with mg.enable_grad():
                compare_part(part, default, inputs, number, title, "模型第一次前向的真实输入")
        return part(*args)

    return first_call_checked


def batches(train: np.ndarray, batch_size: int, block_size: int, seed: int) -> Callable[[], tuple[Any, Any]]:
    """A function that draws the next training batch (x, y), each (batch_size, block_size), from a seeded stream."""
    rng = np.random.default_rng(seed)

    def draw() -> tuple[np.ndarray, np.ndarray]:
        starts = rng.integers(0, len(train) - block_size - 1, batch_size)
        x = np.stack([train[s:s + block_size] for s in starts])
        return x, np.stack([train[s + 1:s + block_size + 1] for s in starts])  # the next character at each position

    return draw


def train_losses(model: GPT, next_batch: Callable[[], tuple[Any, Any]], steps: int, lr: float,
                 warmup: int = 0) -> list[float]:
    """Train `model` with AdamW for `steps` steps (linear warmup, then cosine decay to lr/10); the loss at each step."""
    optimizer = mg.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.99), weight_decay=0.1)
    losses = []
    for step in range(steps):
        if step < warmup:
            rate = lr * (step + 1) / warmup
        else:
            rate = lr / 10 + (lr - lr / 10) * 0.5 * (1 + np.cos(np.pi * (step - warmup) / max(1, steps - warmup)))
        for group in optimizer.param_groups:
            group["lr"] = float(rate)
        x, y = next_batch()
        # forward
        _, loss = model(x, y)
        # backward
        optimizer.zero_grad()
        loss.backward()
        mg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        # update
        optimizer.step()
        losses.append(loss.item())
    return losses
