"""Gradients that can be differentiated again: how each op's backward runs on tensors for create_graph=True.

An ordinary backward (autograd.py) hands each op a raw array `gy` and gets raw arrays back: nothing is recorded,
which keeps training fast. With `create_graph=True` the gradients must be tensors that remember how they were
computed, so that they can be differentiated again (a Hessian-vector product, Newton's method, the fourth
derivative of tanh). Backward is then itself a computation on tensors, recorded like any forward pass: for each
op the engine calls `backward_on_tensors(ctx, gy, y)`, which takes one of three routes, the one that the op
declares in its `double_backward` attribute (an op that declares none is refused).

1. **The same backward, on tensors** (`double_backward = Tensors(...)`). Most backwards are a formula in `gy` and
   the saved values, such as Tanh's `gy * (1 - self.y * self.y)`. Run on tensors, the formula records its own
   graph. So the engine runs the op's one `backward` on a copy of the op whose saved buffers are tensors:
   - a buffer that the declaration names becomes that input tensor or the output tensor: Mul declares
     `Tensors(a=0, b=1)`, so `self.a` becomes input 0 and `self.b` input 1; Tanh declares `Tensors(y="output")`;
   - a buffer the op derived from its inputs in another way (SiLU's `s = sigmoid(x)`) becomes the tensor that
     the op's `recompute(*inputs, y=y)` computes for it, again, from the input tensors;
   - a float buffer named in the op's `constants` (Abs's `sign`, which is flat: its derivative is 0) stays as
     it is, and so do boolean and integer buffers (masks, indices), constants by nature.
   Any other float buffer is refused with an error that names it: taken for a constant, it would make the
   second derivative silently wrong. The few `xp.` calls in a backward go to tensor/xp.py, NumPy's names on
   tensors (`get_array_module` of a Tensor returns it).
2. **Linear ops with one input** (`double_backward = "linear"`: sum, reshape, indexing, embedding, ...). Such an
   op computes y = A x for a fixed matrix A; its backward, gx = A^T gy, is linear in gy and does not involve x.
   So that backward runs as an op of its own, `Transposed`, whose forward is the op's array backward (A^T) and
   whose backward is A again: the op's own array forward. A third derivative flips it back, and so on.
3. **Fused ops** (`double_backward = "composed"`, with a `composed` method: the GELUs, layer norm, attention,
   cross-entropy, std, prod).
   Their backward is derived by hand and written in place, for speed, so it cannot run on tensors. Their
   composed twin (fused/twins.py) computes the same function from primitive ops: the engine runs it again on the
   input tensors and differentiates it with `autograd.local_grads`, which records the graph.

What has no derivative gets none: argmax, indices and comparisons give integer or bool tensors outside the
graph, and a gradient that does not depend on the inputs (relu's is gy times a 0/1 mask) is a constant;
`mg.grad` says which when asked to differentiate one.

So every op keeps its forward and backward side by side, on arrays, as the fast path needs them, and double
backward costs a line or two per op where it costs anything. tests/test_double_backward.py runs `gradgradcheck`
(gradcheck.py) on every op class, and fails for an op class it does not know or one that declares nothing.
Read next: ../fused/softmax.py (the hand-derived ops); ../tools/gradcheck.py checks any op's gradient.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from minigrad.core import autograd
from minigrad.core.function import Function, Tensors
from minigrad.core.gradients import dense
from minigrad.core.observers import AnomalyError
from minigrad.tensor import Tensor


def backward_on_tensors(ctx: Function, gy: Tensor, y: Tensor) -> tuple[Tensor | None, ...]:
    """The gradients of `ctx`'s inputs for the upstream gradient `gy` at its output `y`, as tensors whose graph
    is recorded (grad mode is on while the engine runs with create_graph). See the module docstring."""
    try:
        return _backward_on_tensors(ctx, gy, y)
    except AnomalyError as error:  # an op of this backward made a NaN or an inf: say whose backward it was
        raise AnomalyError(f"{error}\n  in the backward of {ctx.name}, run on tensors for create_graph=True") from None


def _backward_on_tensors(ctx: Function, gy: Tensor, y: Tensor) -> tuple[Tensor | None, ...]:
    route = ctx.double_backward
    if isinstance(ctx, Transposed):
        return (Transposed.apply(gy, op=ctx.op, flipped=not ctx.flipped),)
    if route == "linear":
        return (Transposed.apply(gy, op=copy.copy(ctx)),)
    if route == "composed":
        return autograd.local_grads(ctx.composed(*ctx.parents), gy, ctx.parents)
    if not isinstance(route, Tensors):
        raise RuntimeError(f"{ctx.name}: cannot be differentiated twice (create_graph=True): it declares no "
                           "double_backward (\"linear\", \"composed\" or Tensors(...); minigrad/core/higher_order.py)")
    gxs = _with_tensors(ctx, route.saved, y).backward(gy)
    gxs = gxs if isinstance(gxs, tuple) else (gxs,)
    return tuple(gx if gx is None or isinstance(gx, Tensor) else Tensor._make(gx, False) for gx in gxs)


def _with_tensors(ctx: Function, saved: dict[str, int | str], y: Tensor) -> Function:
    """A copy of `ctx` whose saved buffers are tensors (route 1 of the module docstring)."""
    twin = copy.copy(ctx)
    recomputed = ctx.recompute(*ctx.parents, y=y)
    for name, value in vars(ctx).items():
        which = saved.get(name)
        if name in recomputed:
            setattr(twin, name, recomputed[name])
        elif which == "output":
            setattr(twin, name, _matching(ctx, name, value, y))
        elif isinstance(which, int) and which < len(ctx.parents):
            setattr(twin, name, _matching(ctx, name, value, ctx.parents[which]))
        elif _is_float_array(value) and name not in ctx.constants:
            raise RuntimeError(
                f"{ctx.name}: cannot run its backward on tensors for create_graph=True: its saved buffer `{name}` "
                "is neither an input nor the output (as its Tensors(...) declares), recomputed (recompute) nor a "
                "constant (constants); see minigrad/core/higher_order.py"
            )
    return twin


def _matching(ctx: Function, name: str, value: Any, tensor: Tensor) -> Tensor:
    """`tensor`, after checking that the buffer saved as `name`, declared to stand for it, is it (its shape)."""
    if tuple(value.shape) != tensor.shape:
        raise RuntimeError(f"{ctx.name}: its saved buffer `{name}` has shape {tuple(value.shape)}, but the tensor its "
                           f"Tensors(...) declaration names has shape {tensor.shape}; recompute it (higher_order.py)")
    return tensor


def _is_float_array(value: Any) -> bool:
    return hasattr(value, "shape") and not isinstance(value, np.dtype) and value.dtype.kind == "f"


class Transposed(Function):
    """gx = A^T gy, the backward of a linear op y = A x, run as an op;  its own backward is A: the op's forward.

    `flipped=True` runs the other way round (forward A, backward A^T): the backward of this op, for a third
    derivative. `op` is a copy of the linear op, so that releasing the original graph leaves it whole.
    """

    __slots__ = ("label",)  # survives release(), so a drawing can still name the node
    op: Function
    flipped: bool = False
    double_backward = "linear"  # (its backward on tensors flips it: see _backward_on_tensors)

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self.label = self.op.name if self.flipped else f"{self.op.name}.backward"

    @property
    def name(self) -> str:
        return self.label

    def forward(self, g):
        return self.op.forward(g) if self.flipped else _single(self.op.backward(g))

    def backward(self, gy):
        return _single(self.op.backward(gy)) if self.flipped else self.op.forward(gy)


def _single(gxs: Any) -> Any:
    """The one gradient of a one-input op (a backward may return it alone or in a 1-tuple), as an array (a slice's
    backward returns a sparse `SliceGradient`, ops/indexing.py)."""
    return dense(gxs[0] if isinstance(gxs, tuple) else gxs)
