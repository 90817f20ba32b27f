"""The gradients of one backward walk (autograd.py): the form they take, and adding them up without aliasing.

A gradient has one of two forms in a walk, decided once, by `gradients_for`, and nowhere else:
- arrays (`ArrayGradients`), training's path: each op's `backward` runs on backend arrays and records nothing;
- tensors (`TensorGradients`), with `create_graph`: each op's backward runs on tensors (higher_order.py), so the
  gradients record a graph of their own and can be differentiated again.
The walk asks its form for every step that depends on it (run an op's backward, show a gradient to an observer as
an array or a tensor, add one in, hand one to a leaf or to `mg.grad`'s caller), so it reads the same either way.
Why not tensors always: the fast path adds gradients in place into buffers only one input holds, keeps a slice's
gradient as its slice alone (`SliceGradient`), and sums a broadcast input's gradient with one NumPy call; as
tensors, each of these would be an op to dispatch, or a copy, on every step of training.

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

from minigrad.core import backend
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


def gradients_for(seeds: dict[int, Any], create_graph: bool) -> Gradients:
    """The one place that decides the form of a walk's gradients: tensors that record a graph with
    `create_graph`, else arrays. `seeds` are already in that form (tensor/convert.py's seed_gradient)."""
    return TensorGradients(seeds) if create_graph else ArrayGradients(seeds)


class Gradients:
    """The gradients still being summed, keyed by tensor id, and which of them are owned; the form's own steps
    are its subclasses'."""

    __slots__ = ("pending", "owned")

    def __init__(self, seeds: dict[int, Any]) -> None:
        self.pending = seeds  # {tensor id: its gradient so far}; the walk pops each when it is complete
        self.owned: set[int] = set()

    def pop(self, tensor: Any, watchers: list) -> Any:
        """The tensor's finished gradient (None if it has none), as the observers pass it on (observers.py)."""
        gy = self.pending.pop(id(tensor), None)
        for watcher in watchers if gy is not None else ():  # the tensor's hooks may replace it
            gy = watcher.on_gradient(tensor, gy)
        return gy

    def owns(self, tensor: Any) -> bool:
        """Whether the tensor's gradient is a buffer no one else holds (a hook may keep the array it was shown)."""
        return id(tensor) in self.owned and not tensor._hooks

    def _start(self, key: int, gx: Any, owned: bool) -> None:
        self.pending[key] = dense(gx)
        if owned:
            self.owned.add(key)


class ArrayGradients(Gradients):
    """Gradients as backend arrays: ops' backward on arrays, in-place sums into owned buffers."""

    __slots__ = ()

    def backward(self, ctx: Any, gy: Any, y: Any) -> tuple:
        gxs = ctx.backward(gy)  # on raw arrays: nothing is recorded (training's fast path)
        return gxs if isinstance(gxs, tuple) else (gxs,)

    def array(self, g: Any) -> Any:
        return g

    def tensor(self, g: Any) -> Any:
        from minigrad.tensor import Tensor  # (the tensor package imports the engine)

        return Tensor._make(g, False)

    def like(self, t: Any, g: Any) -> Any:
        """`t`, a tensor a hook returned for the gradient `g`, back in this form (on g's device)."""
        return backend.to_device(t.array, backend.device_of(g))

    def add(self, parent: Any, gx: Any, owned: bool) -> None:
        """Add `gx` (owned: a new buffer that only `parent` receives) to `parent`'s gradient so far."""
        key = id(parent)
        if key not in self.pending:
            self._start(key, gx, owned)
        elif key in self.owned:
            if isinstance(gx, SliceGradient):
                gx.add_into(self.pending[key])
            else:
                self.pending[key] += gx
        else:  # a new array that no one else holds
            self.pending[key] = self.pending[key] + dense(gx)
            self.owned.add(key)

    def to_leaf(self, tensor: Any, g: Any, owned: bool) -> None:
        """Add `g` into `tensor.grad` (gradients add up across calls until zeroed, as in PyTorch), never aliasing
        another tensor's gradient."""
        if tensor.grad is None:
            tensor.grad = self.result(g, owned)
        else:
            tensor.grad.array += g

    def result(self, g: Any, owned: bool) -> Any:
        """A gradient as `mg.grad` returns it: a Tensor that shares its memory with nothing else."""
        from minigrad.tensor import Tensor  # (the tensor package imports the engine)

        return Tensor._make(g if owned else g.copy(), False)


class TensorGradients(Gradients):
    """Gradients as tensors with a graph of their own (create_graph): always added out of place, so that the
    graph records every sum; owned then only says that one needs no clone for `.grad`."""

    __slots__ = ()

    def backward(self, ctx: Any, gy: Any, y: Any) -> tuple:
        from minigrad.core.higher_order import backward_on_tensors  # (it imports the ops, which import us)

        gxs = backward_on_tensors(ctx, gy, y)
        return gxs if isinstance(gxs, tuple) else (gxs,)

    def array(self, g: Any) -> Any:
        return getattr(g, "array", g)  # (None stays None)

    def tensor(self, g: Any) -> Any:
        return g

    def like(self, t: Any, g: Any) -> Any:
        return t

    def add(self, parent: Any, gx: Any, owned: bool) -> None:
        key = id(parent)
        if key not in self.pending:
            self._start(key, gx, owned)
        else:
            self.pending[key] = self.pending[key] + dense(gx)
            self.owned.add(key)

    def to_leaf(self, tensor: Any, g: Any, owned: bool) -> None:
        """A gradient tensor keeps its graph: it is added out of place, as in PyTorch."""
        tensor.grad = self.result(g, owned) if tensor.grad is None else tensor.grad + g

    def result(self, g: Any, owned: bool) -> Any:
        return g if owned else g.clone()


def is_fresh(gx: Any, gy: Any, gxs: Sequence) -> bool:
    """Whether `gx`, one of the gradients `gxs` (arrays) an op returned for `gy`, is a new array only this input
    receives; not gy itself, a view (reshape, transpose, broadcast_to), nor an array returned for two inputs."""
    return gx is not gy and getattr(gx, "base", None) is None and sum(g is gx for g in gxs) == 1
