"""Indexing with PyTorch's rules: `x[index]` (GetItem) and `x.gather(dim, index)` (Gather).

Both pick elements of x, and may pick one element twice (`x[[0, 0]]`): its gradient must then arrive
twice, so both backwards scatter-add (`scatter_add`, NumPy's `np.add.at`).

An index is read as PyTorch reads it. Ints, slices, None and `...` are "basic": they pick a regular grid
and give a view. Integer tensors, lists, tuples and arrays, and bool masks are "advanced": they pick
elements one by one. NumPy and PyTorch agree on everything except an int standing with advanced indices:
NumPy counts the int as advanced too, PyTorch applies it first, as a plain selection. On x of shape
(3, 4, 5), `x[0, :, [1, 2]]` has shape (2, 4) in NumPy and (4, 2) in PyTorch. `split_index` therefore
turns an index into PyTorch's two steps, each a NumPy index: the basic part, then the advanced part.

Read next: scatter.py, then linalg.py.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from minigrad.core import backend
from minigrad.core.backend import get_array_module
from minigrad.core.function import Function, Tensors, shapes_refused
from minigrad.core.gradients import SliceGradient
from minigrad.tensor import Tensor


def scatter_add(target: Any, index: Any, values: Any) -> None:
    """target[index] += values, accumulating repeated indices (`np.add.at` semantics), in place."""
    get_array_module(target).add.at(target, index, values)


class GetItem(Function):
    """y = x[basic][advanced];  gx = zeros like x, with gy added where each element of y came from."""

    basic: Any  # a NumPy index of ints, slices, None and ..., or None when there is none
    advanced: Any  # a NumPy index holding arrays, or None when there is none
    double_backward = "linear"  # y = A x: for double backward its backward runs as an op (higher_order.py)

    def forward(self, x):
        self.source_shape, self.dtype = x.shape, x.dtype
        if self.basic is not None:
            x = x[self.basic]
        return x if self.advanced is None else x[self.advanced]

    def backward(self, gy):
        if self.advanced is None:  # each element picked at most once: gy in a slice of zeros (core/gradients.py)
            return SliceGradient(self.source_shape, self.dtype, self.basic, gy)
        gx = get_array_module(gy).zeros(self.source_shape, dtype=self.dtype)
        target = gx if self.basic is None else gx[self.basic]  # a view: adding into it adds into gx
        scatter_add(target, self.advanced, gy)  # an element picked twice collects both gradients
        return gx


class Gather(Function):
    """y[i, j] = x[index[i, j], j] for dim 0 (torch.gather; likewise for any dim);  gx = gy scatter-added back."""

    dim: int
    index: Any  # an integer array with x's number of dims
    double_backward = "linear"

    def forward(self, x):
        self.source_shape, self.dtype = x.shape, x.dtype
        # Every element of y names its source: `index` along dim, its own position along every other dim.
        xp = get_array_module(self.index)
        ndim = self.index.ndim
        self.where = tuple(
            self.index if d == self.dim else xp.arange(n).reshape([-1 if e == d else 1 for e in range(ndim)])
            for d, n in enumerate(self.index.shape)
        )
        return x[self.where]

    def backward(self, gy):
        gx = get_array_module(gy).zeros(self.source_shape, dtype=self.dtype)
        scatter_add(gx, self.where, gy)
        return gx


def split_index(index: Any, device: str) -> tuple[Any, Any]:
    """PyTorch's reading of `x[index]` as (basic, advanced): x[index] is x[basic][advanced] in NumPy.

    Either part may be None (not needed). Tensors, lists, tuples and NumPy arrays inside the index become
    arrays on `device`; a 0-d integer one counts as an int, as in PyTorch.
    """
    parts = tuple(_index_part(part, device) for part in _as_tuple(index))
    advanced = [_is_advanced(part) for part in parts]
    if not any(advanced):
        return parts, None
    if not any(isinstance(part, int) and not isinstance(part, bool) for part in parts):
        return None, parts  # no int among advanced indices: NumPy and PyTorch agree
    # Step 1 applies the ints, slices and None, and keeps every dim an advanced index will use.
    # Step 2 applies the advanced indices to what is left: the ints' dims are gone, every other dim is whole.
    first: list[Any] = []
    then: list[Any] = []
    for part, is_advanced in zip(parts, advanced):
        if is_advanced:
            first += [slice(None)] * _dims_used(part)
            then.append(part)
        elif isinstance(part, int):
            first.append(part)
        elif part is Ellipsis:
            first.append(part)
            then.append(part)
        else:  # a slice or None: applied in step 1; the dim it leaves is taken whole in step 2
            first.append(part)
            then.append(slice(None))
    if Ellipsis not in first:
        first.append(Ellipsis)  # so that step 1 gives a view even when the ints pick a single element
    return tuple(first), tuple(then)


def _as_tuple(index: Any) -> tuple:
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and any(
        part is None or part is Ellipsis or isinstance(part, (list, tuple, slice, Tensor))
        or (hasattr(part, "ndim") and not isinstance(part, np.generic))
        for part in index
    ):
        # PyTorch reads such a list as a tuple (deprecated), NumPy as one array index: refuse to guess.
        raise IndexError(
            "index: a list holding lists, tensors, slices, None or ... is ambiguous (PyTorch reads it as a "
            "tuple, NumPy as an array); write x[tuple(index)] or x[mg.tensor(index)]"
        )
    return (index,)


def _index_part(part: Any, device: str) -> Any:
    """One entry of an index: an int, slice, None, ..., Python bool, or an integer or bool array on `device`."""
    if part is None or part is Ellipsis or isinstance(part, (bool, slice)):
        return part
    if isinstance(part, np.bool_):
        return bool(part)
    if isinstance(part, (int, np.integer)):
        return operator.index(part)
    array = index_array(part, device, "index")
    kind = array.dtype.kind
    if kind == "u" and array.dtype.itemsize == 1:
        raise IndexError("index: a uint8 index is a mask in PyTorch and integers in NumPy; use bool or int64")
    if kind not in "iub":
        raise IndexError(f"index: tensors used as indices must be integer or bool, not {array.dtype}")
    if kind != "b" and array.ndim == 0:
        return int(array)  # a 0-d integer tensor selects, as an int does (on a GPU this reads the value)
    return array


def index_array(value: Any, device: str, op: str) -> Any:
    """Indices given as a Tensor, a NumPy or device array, a list or a tuple, as an array on `device`."""
    if isinstance(value, Tensor):
        array = value.array
    elif isinstance(value, (list, tuple)):
        array = np.asarray(value) if len(value) else np.zeros(0, dtype=np.int64)  # [] picks nothing
    elif isinstance(value, np.ndarray) or _is_array_or_scalar(value):
        array = value
    else:
        raise IndexError(
            f"{op}: {type(value).__name__} is not a valid index; use ints, slices, None, ..., "
            "or integer or bool tensors"
        )
    return backend.to_device(array, device)


def _is_advanced(part: Any) -> bool:
    return isinstance(part, bool) or hasattr(part, "ndim")


def _dims_used(part: Any) -> int:
    """How many dims of x an advanced index consumes: 1 for integers, the mask's own dims for a bool mask."""
    if isinstance(part, bool):
        return 0  # a Python bool adds a dim, as None does
    return part.ndim if part.dtype.kind == "b" else 1


def _is_array_or_scalar(value: Any) -> bool:
    """Whether `value` is a device's array or a NumPy scalar (tensor.py's `_is_backend_array` excludes scalars)."""
    try:
        backend.backend_of(value)
    except TypeError:
        return False
    return True


class SetItem(Function):
    """y = x with y[index] = value (PyTorch's `x[index] = value` in a graph);  gx = gy * keep (0 where written,
    1 elsewhere), gvalue = gy[index] (the engine sums it back to value's own, broadcast, shape).

    The forward writes into x's own array: `Tensor.__setitem__` (tensor/inplace.py) runs it on a stand-in for the
    tensor's earlier self (tensor/versions.py), so the write is in place, as in PyTorch. Neither gradient needs a
    value of x or of value: only the mask of what was overwritten is kept."""

    basic: Any
    advanced: Any
    constants = ("keep",)  # a 0/1 mask: its derivative is zero (higher_order.py)
    double_backward = Tensors()

    def forward(self, x, value):
        self.keep = get_array_module(x).ones(x.shape, dtype=x.dtype)
        _select(self.keep, self.basic, self.advanced, 0)
        with shapes_refused("SetItem", x, value):
            _select(x, self.basic, self.advanced, value)
        return x

    def backward(self, gy):
        gv = gy if self.basic is None else gy[self.basic]
        return gy * self.keep, (gv if self.advanced is None else gv[self.advanced])


def _select(x: Any, basic: Any, advanced: Any, value: Any) -> None:
    """x[basic][advanced] = value, in place (x[basic] is a view, so the write reaches x)."""
    if advanced is None:
        x[basic] = value
    else:
        (x if basic is None else x[basic])[advanced] = value
