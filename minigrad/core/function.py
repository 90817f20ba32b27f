"""Function: one differentiable op, the second of the engine's two classes (tensor/tensor.py has the first).

A `Function` subclass is one op: its `forward` and `backward` work on raw backend arrays and stand side
by side, so the math is read in one place. `apply` runs it on tensors and, when a gradient will be
needed, records it in the graph: the output tensor's `_ctx` is the Function, whose `parents` are the
input tensors (define-by-run). Each op checks its own inputs' shapes (`check_broadcast` for the ones
that broadcast) and declares how it is differentiated twice (`double_backward`, with `Tensors`).

Read next: autograd.py (the backward pass), then ops/elementwise.py.
"""

from __future__ import annotations

import contextlib
import itertools
from typing import Any

from minigrad.core import observers
from minigrad.core.grad_mode import grad_mode
from minigrad.tensor import ShapeError, Tensor


class Tensors:
    """`double_backward = Tensors(a=0, b=1, y="output")`: the op's backward runs again on tensors, with its saved
    buffer `self.a` standing for input 0, `self.b` for input 1 and `self.y` for the output (higher_order.py)."""

    def __init__(self, **saved: int | str) -> None:
        self.saved = saved


class Function:
    """One differentiable op. Subclasses define `forward(*arrays)` and `backward(gy)`.

    `forward` receives the inputs' backend arrays and saves on `self` exactly what `backward` needs.
    `backward(gy)` receives the gradient of the output and returns the gradient of each input (a
    tuple, or a single array for one input), with the output's shape broadcast as the forward did;
    the engine sums it back to each input's shape. It must never modify `gy` in place.

    Each op declares how its gradient is differentiated again (create_graph=True; higher_order.py), in
    `double_backward`: "linear" (y = A x for a fixed A: its backward runs as an op), "composed" (a fused op whose
    `composed(*inputs)` computes the same function from primitive ops) or `Tensors(...)` (its `backward` runs on
    tensors, the saved buffers named as inputs or the output; `constants` are float buffers with derivative zero,
    `recompute` makes other derived buffers again). An op that declares nothing cannot be differentiated twice.
    """

    double_backward: str | Tensors | None = None
    constants: tuple[str, ...] = ()

    # `scope` (set only while mg.viz.record_modules runs) is a slot, so release() keeps it for drawing; so is
    # `in_place_of`, the stand-in input of an op recorded in place (tensor/versions.py), which backward follows.
    __slots__ = ("parents", "needs_input_grad", "released", "created_at", "scope", "in_place_of", "__dict__")

    def __init__(self, **params: Any) -> None:
        for key, value in params.items():  # op parameters such as axis=, keepdims=
            setattr(self, key, value)
        self.released = False

    @property
    def name(self) -> str:
        """The op's name as drawings and error messages show it (`MatMul`, `Softmax`, ...)."""
        return type(self).__name__

    def forward(self, *xs: Any) -> Any:
        raise NotImplementedError

    def backward(self, gy: Any) -> Any:
        raise NotImplementedError

    def recompute(self, *inputs: Tensor, y: Tensor) -> dict[str, Tensor]:
        """The saved buffers that are neither an input nor the output, computed again from the input tensors
        (and the output `y`), for a backward on tensors (higher_order.py). Most ops save none."""
        return {}

    def release(self) -> None:
        """Drop the buffers saved for backward; keep the graph's structure (parents) for drawing."""
        vars(self).clear()
        self.released = True

    @classmethod
    def apply(cls, *inputs: Tensor, **params: Any) -> Tensor:
        """Run the op forward on tensors, and record it in the graph when a gradient will be needed."""
        _check_devices(cls.__name__, inputs)
        ctx = cls(**params)
        ctx.needs_input_grad = tuple(t.requires_grad for t in inputs)  # known to forward: save only what is needed
        y = ctx.forward(*[t.array for t in inputs])
        requires_grad = grad_mode.enabled and any(ctx.needs_input_grad)
        out = Tensor._make(y, requires_grad)
        if requires_grad:  # define-by-run: the output remembers its op, the op its inputs
            ctx.parents = inputs
            ctx.input_versions = [t._version for t in inputs]  # backward checks that none changed in place
            out._ctx = ctx
        for observer in observers.active:  # anomaly detection, the drawing's module scopes (observers.py)
            observer.on_forward(ctx, inputs, y)
        return out


def _check_devices(name: str, inputs: tuple[Tensor, ...]) -> None:
    """Refuse inputs on different devices (a NumPy and a CuPy array), naming the op and the devices."""
    device_type = type(inputs[0].array)
    if any(type(other.array) is not device_type for other in inputs[1:]):
        raise RuntimeError(f"{name}: inputs are on different devices ({', '.join(t.device for t in inputs)})")


def check_broadcast(op: str, *xs: Any, core: int = 0) -> None:
    """Refuse inputs whose shapes do not broadcast together (NumPy's rule: aligned from the right, the sizes on
    each axis are equal or 1, a missing axis counting as 1: (2, 3) and (3,) give (2, 3), (3, 1) and (1, 4) give
    (3, 4), (2, 3) and (4,) fail), with a ShapeError naming the op and the shapes. `core` trailing axes are the
    op's own and left out (matmul's two). In backward, autograd.sum_to undoes the broadcast."""
    shapes = [x.shape[: max(x.ndim - core, 0)] for x in xs]
    if all(shape == shapes[0] for shape in shapes):
        return  # the common case, decided at once
    for sizes in itertools.zip_longest(*(reversed(shape) for shape in shapes), fillvalue=1):
        if len(set(sizes) - {1}) > 1:
            shown = ", ".join(str(x.shape) for x in xs)
            raise ShapeError(f"{op}: input shapes {shown} do not broadcast (sizes {sizes} on one axis)")


class shapes_refused(contextlib.AbstractContextManager):
    """`with shapes_refused("Concat", *xs):` around the one array call of an op that can refuse only its inputs'
    shapes (concatenate, reshape, einsum, where): its ValueError becomes a ShapeError naming the op and shapes."""

    def __init__(self, op: str, *xs: Any) -> None:
        self.op, self.xs = op, xs

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> None:
        if kind is not None and issubclass(kind, ValueError) and not issubclass(kind, ShapeError):
            raise ShapeError(f"{self.op}: input shapes {', '.join(str(x.shape) for x in self.xs)}: {error}") from error
