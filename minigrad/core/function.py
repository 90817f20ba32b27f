"""Function: one differentiable op, the second of the engine's two classes (tensor/tensor.py has the first).

A `Function` subclass is one op: its `forward` and `backward` work on raw backend arrays and stand side
by side, so the math is read in one place. `apply` runs it on tensors and, when a gradient will be
needed, records it in the graph: the output tensor's `_ctx` is the Function, whose `parents` are the
input tensors.

Read next: autograd.py (the backward pass), then ops/elementwise.py.
"""

from __future__ import annotations

import traceback
from typing import Any

from minigrad.core import autograd
from minigrad.tensor import ShapeError, Tensor


class Function:
    """One differentiable op. Subclasses define `forward(*arrays)` and `backward(gy)`.

    `forward` receives the inputs' backend arrays and saves on `self` exactly what `backward` needs.
    `backward(gy)` receives the gradient of the output and returns the gradient of each input (a
    tuple, or a single array for one input), with the output's shape broadcast as the forward did;
    the engine sums it back to each input's shape. It must never modify `gy` in place.

    For gradients that are differentiated again (create_graph=True) the same `backward` runs on tensors;
    higher_order.py explains how, and what the attributes below declare: `is_linear` (y = A x for a fixed A),
    `constants` (float buffers whose derivative is zero), `recompute` (buffers derived from the inputs, as
    tensors), or a `composed(*inputs)` method (the same function from primitive ops) for a fused op.
    """

    is_linear = False
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

    def backward_into(self, gx: Any, gy: Any) -> bool:
        """Add this op's gradient for `gy` into `gx` in place and return True, or return False (the default) to have
        `backward` run. `gx` is the gradient so far of the op's one input, a buffer the backward pass owns; an op
        whose backward would make an array mostly of zeros (a slice's) adds only the part that is not zero."""
        return False

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
        device_type = type(inputs[0].data)
        for other in inputs[1:]:
            if type(other.data) is not device_type:
                devices = ", ".join(t.device for t in inputs)
                raise RuntimeError(f"{cls.__name__}: inputs are on different devices ({devices})")
        ctx = cls(**params)
        try:
            y = ctx.forward(*[t.data for t in inputs])
        except ValueError as error:
            if isinstance(error, ShapeError) or not _is_shape_error(error):
                raise  # a ValueError about values (integers to negative powers, ...) keeps its own words
            shapes = ", ".join(str(t.shape) for t in inputs)
            raise ShapeError(f"{cls.__name__}: input shapes {shapes}: {error}") from error
        requires_grad = autograd.grad_mode.enabled and any(t.requires_grad for t in inputs)
        out = Tensor._make(y, requires_grad)
        if requires_grad:
            ctx.parents = inputs
            ctx.needs_input_grad = tuple(t.requires_grad for t in inputs)
            ctx.input_versions = [t._version for t in inputs]  # backward checks that none changed in place
            out._ctx = ctx
        if autograd.scope_hook is not None:  # drawing: which module's forward made this op
            ctx.scope = autograd.scope_hook.scope
        if autograd.anomaly_hook is not None:
            ctx.created_at = traceback.extract_stack()[:-2]
            autograd.anomaly_hook.forward(ctx, inputs, y)
        return out


def _is_shape_error(error: ValueError) -> bool:
    """Whether the array library refused the inputs' shapes (NumPy and CuPy say "broadcast", "shape" or
    "dimension"), as opposed to their values; only then does an error name the op and the shapes."""
    message = str(error)
    return any(word in message for word in ("broadcast", "shape", "dimension"))
