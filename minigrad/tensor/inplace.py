"""Tensor's in-place updates, a base class of Tensor: `+=`, `-=`, `*=`, `/=`, and `add_`, `sub_`, `mul_`,
`div_`, `zero_`, `fill_`, `copy_`, as in PyTorch.

In place means in place: `w -= x` writes into w's own array, so every reference to w sees the change
(the optimizer's update, `with mg.no_grad(): w -= lr * w.grad`). The result is computed as the
out-of-place op would compute it, then converted to w's dtype (a float result cannot go into an integer
tensor). Refused: a leaf that requires grad while grad mode is on, as in PyTorch (the update would not
be recorded; do it under `mg.no_grad()`), and a tensor an op computed in a recorded graph (PyTorch
records an in-place op there; minigrad records none, so it says so instead). Each update also counts up
the tensor's `_version`, and backward refuses an input that changed after an op recorded it, as
PyTorch does: that op's gradient would be wrong.

Read next: shape.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from minigrad import autograd, backend
from minigrad.dtypes import category


class InPlaceMethods:
    """The in-place methods of `Tensor` (tensor.py); `self` is always a Tensor."""

    __slots__ = ()

    def __iadd__(self, other: Any) -> Any:
        return self.add_(other)

    def __isub__(self, other: Any) -> Any:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Any:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Any:
        return self.div_(other)

    def add_(self, other: Any, *, alpha: float = 1) -> Any:
        """self += alpha * other, in place."""
        return self._in_place("add_", lambda: self + (other if alpha == 1 else alpha * other))

    def sub_(self, other: Any, *, alpha: float = 1) -> Any:
        """self -= alpha * other, in place."""
        return self._in_place("sub_", lambda: self - (other if alpha == 1 else alpha * other))

    def mul_(self, other: Any) -> Any:
        """self *= other, in place."""
        return self._in_place("mul_", lambda: self * other)

    def div_(self, other: Any) -> Any:
        """self /= other, in place (an integer tensor cannot hold the float quotient: that raises)."""
        return self._in_place("div_", lambda: self / other)

    def zero_(self) -> Any:
        """Every element set to 0, in place."""
        return self._in_place("zero_", lambda: 0, check_dtype=False)

    def fill_(self, value: Any) -> Any:
        """Every element set to `value` (a number or a one-element tensor), in place."""
        if hasattr(value, "requires_grad"):
            value = value.item()
        return self._in_place("fill_", lambda: value, check_dtype=False)

    def copy_(self, source: Any) -> Any:
        """The values of `source` (broadcast to this shape, converted to this dtype) copied in, in place."""
        if getattr(source, "requires_grad", False) and autograd.grad_mode.enabled:
            raise RuntimeError("copy_: copying from a tensor that requires grad is not recorded in a graph; "
                               "copy under mg.no_grad(), or use source.clone()")
        if hasattr(source, "requires_grad"):  # a Tensor
            source = backend.to_device(source.data, self.device)
        elif not isinstance(source, (bool, int, float)):  # an array on any device, or a (nested) list
            source = backend.to_device(source if hasattr(source, "dtype") else np.asarray(source), self.device)
        return self._in_place("copy_", lambda: source, check_dtype=False)

    def _in_place(self, op: str, compute: Callable[[], Any], check_dtype: bool = True) -> Any:
        """Write `compute()` (computed without a graph) into this tensor's own array; return the tensor."""
        if self._ctx is not None:
            raise RuntimeError(f"{op}: this tensor was computed by {self._ctx.name} in a recorded graph, and "
                               "minigrad records no in-place op; write y = y + ... instead")
        if self.requires_grad and autograd.grad_mode.enabled:
            raise RuntimeError(f"{op}: a leaf tensor that requires grad is being used in an in-place operation; "
                               "update it under `with mg.no_grad():`")
        with autograd.no_grad():
            result = compute()
        values = getattr(result, "data", result)  # a Tensor's array, or a number or array as it is
        if hasattr(result, "requires_grad"):
            if check_dtype and category(result.dtype) > category(self.dtype):
                raise RuntimeError(f"{op}: result type {result.dtype} can't be cast to the desired output "
                                   f"type {self.dtype}")
            if result.shape != self.shape:
                raise RuntimeError(f"{op}: the result's shape {result.shape} does not match this tensor's "
                                   f"{self.shape} (an in-place op cannot change it)")
        try:
            self.data[...] = values  # converted to this tensor's dtype, as PyTorch does
        except ValueError as error:  # NumPy: a read-only view (expand) or a shape that does not broadcast
            raise RuntimeError(f"{op}: cannot write into this tensor of shape {self.shape}: {error}") from error
        self._version += 1
        return self
