"""Gradients that can be differentiated again: how each op's backward runs on tensors for create_graph=True.

An ordinary backward (autograd.py) hands each op a raw array `gy` and gets raw arrays back: nothing is recorded,
which keeps training fast. With `create_graph=True` the gradients must be tensors that remember how they were
computed, so that they can be differentiated again (a Hessian-vector product, Newton's method, the fourth
derivative of tanh). Backward is then itself a computation on tensors, recorded like any forward pass: for each
op the engine calls `backward_on_tensors(ctx, gy, y)`, which takes one of three routes, by what the op declares.

1. **The same backward, on tensors** (the default). Most backwards are a formula in `gy` and the saved values,
   such as Tanh's `gy * (1 - self.y * self.y)`. Run on tensors, the formula records its own graph. So the
   engine runs the op's one `backward` on a copy of the op whose saved buffers are tensors:
   - a buffer saved under the name of one of `forward`'s arguments (`self.x`, `self.a`, `self.b`) becomes that
     input tensor, and one saved as `self.y` the output tensor;
   - a buffer the op derived from its inputs in another way (SiLU's `s = sigmoid(x)`) becomes the tensor that
     the op's `recompute(*inputs, y=y)` computes for it, again, from the input tensors;
   - a float buffer named in the op's `constants` (Abs's `sign`, which is flat: its derivative is 0) stays as
     it is, and so do boolean and integer buffers (masks, indices), constants by nature.
   Any other float buffer is refused with an error that names it: taken for a constant, it would make the
   second derivative silently wrong. The few `xp.` calls in a backward go to tensor/xp.py, NumPy's names on
   tensors (`get_array_module` of a Tensor returns it).
2. **Linear ops with one input** (`is_linear = True`: sum, reshape, indexing, embedding, dropout, ...). Such an
   op computes y = A x for a fixed matrix A; its backward, gx = A^T gy, is linear in gy and does not involve x.
   So that backward runs as an op of its own, `Transposed`, whose forward is the op's array backward (A^T) and
   whose backward is A again: the op's own array forward. A third derivative flips it back, and so on.
3. **Fused ops** (those with a `composed` method: the GELUs, layer norm, attention, cross-entropy, std, prod).
   Their backward is derived by hand and written in place, for speed, so it cannot run on tensors. Their
   composed twin (fused/twins.py) computes the same function from primitive ops: the engine runs it again on the
   input tensors and differentiates it with `autograd.local_grads`, which records the graph.

What has no derivative gets none: argmax, indices and comparisons give integer or bool tensors outside the
graph, and a gradient that does not depend on the inputs (relu's is gy times a 0/1 mask) is a constant;
`mg.grad` says which when asked to differentiate one.

So every op keeps its forward and backward side by side, on arrays, as the fast path needs them, and double
backward costs a line or two per op where it costs anything. tests/test_double_backward.py runs `gradgradcheck`
(gradcheck.py) on every op class, and fails for an op class it does not know.
Read next: ../tools/gradcheck.py (`gradgradcheck`), then the last section of tutorials/00_autograd.py.
"""

from __future__ import annotations

import copy
import functools
import inspect
from typing import Any

import numpy as np

from minigrad.core import autograd
from minigrad.core.function import Function
from minigrad.tensor import Tensor
from minigrad.tools.anomaly import AnomalyError


def backward_on_tensors(ctx: Function, gy: Tensor, y: Tensor) -> tuple[Tensor | None, ...]:
    """The gradients of `ctx`'s inputs for the upstream gradient `gy` at its output `y`, as tensors whose graph
    is recorded (grad mode is on while the engine runs with create_graph). See the module docstring."""
    try:
        return _backward_on_tensors(ctx, gy, y)
    except AnomalyError as error:  # an op of this backward made a NaN or an inf: say whose backward it was
        raise AnomalyError(f"{error}\n  in the backward of {ctx.name}, run on tensors for create_graph=True") from None


def _backward_on_tensors(ctx: Function, gy: Tensor, y: Tensor) -> tuple[Tensor | None, ...]:
    if isinstance(ctx, Transposed):
        return (Transposed.apply(gy, op=ctx.op, flipped=not ctx.flipped),)
    if ctx.is_linear:
        return (Transposed.apply(gy, op=copy.copy(ctx)),)
    if hasattr(ctx, "composed"):
        return autograd.local_grads(ctx.composed(*ctx.parents), gy, ctx.parents)
    gxs = _with_tensors(ctx, y).backward(gy)
    gxs = gxs if isinstance(gxs, tuple) else (gxs,)
    return tuple(gx if gx is None or isinstance(gx, Tensor) else Tensor._make(gx, False) for gx in gxs)


def _with_tensors(ctx: Function, y: Tensor) -> Function:
    """A copy of `ctx` whose saved buffers are tensors (route 1 of the module docstring)."""
    twin = copy.copy(ctx)
    names = _input_names(type(ctx))[: len(ctx.parents)]
    recomputed = ctx.recompute(*ctx.parents, y=y)
    for name, value in vars(ctx).items():
        if name in recomputed:
            setattr(twin, name, recomputed[name])
        elif name in names:
            setattr(twin, name, _matching(ctx, name, value, ctx.parents[names.index(name)]))
        elif name == "y":
            setattr(twin, name, _matching(ctx, name, value, y))
        elif _is_float_array(value) and name not in ctx.constants:
            raise RuntimeError(
                f"{ctx.name}: cannot run its backward on tensors for create_graph=True: its saved buffer `{name}` "
                "is neither an input, the output, recomputed (recompute) nor a constant (constants); see "
                "minigrad/core/higher_order.py"
            )
    return twin


@functools.cache
def _input_names(op_class: type) -> tuple[str, ...]:
    """The names of `forward`'s arguments, in order (none after a *xs)."""
    names = []
    for parameter in list(inspect.signature(op_class.forward).parameters.values())[1:]:  # [1:]: self
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            break
        names.append(parameter.name)
    return tuple(names)


def _matching(ctx: Function, name: str, value: Any, tensor: Tensor) -> Tensor:
    """`tensor`, after checking that the buffer saved as `name` is it (its shape, at least)."""
    if tuple(value.shape) != tensor.shape:
        raise RuntimeError(f"{ctx.name}: its saved buffer `{name}` has shape {tuple(value.shape)}, but the tensor of "
                           f"that name has shape {tensor.shape}; recompute it (minigrad/core/higher_order.py)")
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
    is_linear = True  # (its backward on tensors flips it: see _backward_on_tensors)

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
    """The one gradient of a one-input op (a backward may return it alone or in a 1-tuple)."""
    return gxs[0] if isinstance(gxs, tuple) else gxs
