"""Adding gradients up during the backward walk (autograd.py) without aliasing anyone's buffer.

A tensor used twice receives two gradients, which add up. Adding in place saves an allocation, but only into a
buffer that no one else holds ("owned"): an op may hand the same array to two inputs (add returns gy twice), or a
view of gy (reshape), and adding into such an array would corrupt the other gradient. So when an op returns its
gradients the walk says which are new buffers only one input receives (`is_fresh`): only those are added into,
or become a leaf's `.grad` without a copy. A slice's gradient (`SliceGradient`) goes into its slice alone.
Read next: observers.py, the walk's other edge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minigrad.core.backend import get_array_module


class SliceGradient:
    """The gradient of y = x[basic]: zeros of x's shape with gy in the slice, kept as (basic, gy) until it is
    needed. Added into an owned buffer it touches only the slice (q, k and v, three slices of one projection,
    made three arrays of zeros as large as the projection a layer); otherwise it is made `dense`."""

    def __init__(self, shape: tuple[int, ...], dtype: Any, basic: Any, gy: Any) -> None:
        self.shape, self.dtype, self.basic, self.gy = shape, dtype, basic, gy

    def dense(self) -> Any:
        gx = get_array_module(self.gy).zeros(self.shape, dtype=self.dtype)
        gx[self.basic] = self.gy
        return gx

    def add_into(self, gx: Any) -> None:
        if self.basic is None:
            gx += self.gy
        else:
            gx[self.basic] += self.gy  # (indexed: gx[0, 1] alone would be a copied scalar, not a view)


def dense(gx: Any) -> Any:
    """`gx` as an array: a SliceGradient made dense, anything else as it is."""
    return gx.dense() if isinstance(gx, SliceGradient) else gx


class Gradients:
    """The gradients still being summed, keyed by tensor id, and which of them are owned. With `tensors`
    (create_graph) they are tensors, always added out of place; owned then says one needs no clone for `.grad`."""

    __slots__ = ("pending", "owned", "tensors")

    def __init__(self, seeds: dict[int, Any], tensors: bool) -> None:
        self.pending = seeds  # {tensor id: its gradient so far}; the walk pops each when it is complete
        self.owned: set[int] = set()
        self.tensors = tensors

    def pop(self, tensor: Any, watchers: list) -> Any:
        """The tensor's finished gradient (None if it has none), as the observers pass it on (observers.py)."""
        gy = self.pending.pop(id(tensor), None)
        for watcher in watchers if gy is not None else ():  # the tensor's hooks may replace it
            gy = watcher.on_gradient(tensor, gy)
        return gy

    def owns(self, tensor: Any) -> bool:
        """Whether the tensor's gradient is a buffer no one else holds (a hook may keep the array it was shown)."""
        return id(tensor) in self.owned and not tensor._hooks

    def add(self, parent: Any, gx: Any, owned: bool) -> None:
        """Add `gx` (owned: a new buffer that only `parent` receives) to `parent`'s gradient so far."""
        key = id(parent)
        if key not in self.pending:
            self.pending[key] = dense(gx)
            if owned:
                self.owned.add(key)
        elif key in self.owned and not self.tensors:
            if isinstance(gx, SliceGradient):
                gx.add_into(self.pending[key])
            else:
                self.pending[key] += gx
        else:  # a new tensor (or array) that no one else holds
            self.pending[key] = self.pending[key] + dense(gx)
            self.owned.add(key)


def is_fresh(gx: Any, gy: Any, gxs: Sequence) -> bool:
    """Whether `gx`, one of the gradients `gxs` (arrays) an op returned for `gy`, is a new array only this input
    receives; not gy itself, a view (reshape, transpose, broadcast_to), nor an array returned for two inputs."""
    return gx is not gy and getattr(gx, "base", None) is None and sum(g is gx for g in gxs) == 1


def as_gradient(g: Any, owned: bool) -> Any:
    """A gradient as `mg.grad` returns it: a Tensor that shares its memory with nothing else."""
    from minigrad.tensor import Tensor  # (the tensor package imports the engine)

    if isinstance(g, Tensor):
        return g if owned else g.clone()
    return Tensor._make(g if owned else g.copy(), False)
