"""Ops that move elements around without changing them: reshape, transpose, indexing, concat, stack.

Each backward moves the gradient back to where the element came from. Indexing with integer arrays
may pick one element twice; its gradient must then arrive twice, so that backward scatter-adds.
Read next: linalg.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import backend
from minigrad.backend import get_array_module
from minigrad.function import Function
from minigrad.tensor import Tensor


class Reshape(Function):
    """y = x with a new shape (same elements, same order);  gx = gy reshaped back."""

    shape: tuple[int, ...]

    def forward(self, x):
        self.source_shape = x.shape
        return x.reshape(self.shape)

    def backward(self, gy):
        return gy.reshape(self.source_shape)


class Transpose(Function):
    """y = x with its axes permuted;  gx = gy with the inverse permutation."""

    axes: tuple[int, ...]

    def forward(self, x):
        return x.transpose(self.axes)

    def backward(self, gy):
        return gy.transpose(tuple(int(axis) for axis in np.argsort(self.axes)))  # plain ints, for any backend


class GetItem(Function):
    """y = x[index];  gx = zeros like x, with gy added at index (scatter-add for integer arrays)."""

    index: Any

    def forward(self, x):
        self.source_shape, self.dtype = x.shape, x.dtype
        return x[self.index]

    def backward(self, gy):
        gx = get_array_module(gy).zeros(self.source_shape, dtype=self.dtype)
        if is_advanced_index(self.index):
            backend.scatter_add(gx, self.index, gy)  # a repeated index collects every gradient
        else:
            gx[self.index] = gy  # basic indexing picks each element at most once
        return gx


def is_advanced_index(index: Any) -> bool:
    parts = index if isinstance(index, tuple) else (index,)
    return any(getattr(part, "ndim", 0) > 0 or isinstance(part, list) for part in parts)


def device_index(index: Any, device: str) -> Any:
    """An index for `tensor[index]`: Tensors and NumPy arrays inside it become arrays on `device`."""
    if isinstance(index, tuple):
        return tuple(device_index(part, device) for part in index)
    if isinstance(index, Tensor):
        return backend.to_device(index.data, device)
    if isinstance(index, (np.ndarray, list)):
        return backend.to_device(np.asarray(index), device)
    return index


class Concat(Function):
    """y = the inputs joined along axis;  each gx = its slice of gy."""

    axis: int

    def forward(self, *xs):
        self.sizes = [x.shape[self.axis] for x in xs]
        return get_array_module(xs[0]).concatenate(xs, axis=self.axis)

    def backward(self, gy):
        xp = get_array_module(gy)
        boundaries = np.cumsum(self.sizes)[:-1].tolist()
        return tuple(xp.split(gy, boundaries, axis=self.axis))


class Stack(Function):
    """y = the inputs stacked along a new axis;  each gx = gy's slice at its position on that axis."""

    axis: int

    def forward(self, *xs):
        return get_array_module(xs[0]).stack(xs, axis=self.axis)

    def backward(self, gy):
        xp = get_array_module(gy)
        return tuple(xp.take(gy, i, axis=self.axis) for i in range(gy.shape[self.axis]))


class ToDevice(Function):
    """y = x copied to another device;  gx = gy copied back."""

    device: str

    def forward(self, x):
        self.source_device = backend.device_of(x)
        return backend.to_device(x, self.device)

    def backward(self, gy):
        return backend.to_device(gy, self.source_device)
