"""Ops that move elements around without changing them: reshape, permute, expand, repeat, flip, tril and
triu, concat, stack, clone, and the copy to another device.

Each backward moves the gradient back to where the element came from; where one element went to several
places (expand, repeat), their gradients add up. The Tensor methods that call these ops, checking their
arguments as PyTorch does, are in minigrad/tensor/shape.py.
Read next: indexing.py (x[index] and gather), then linalg.py.
"""

from __future__ import annotations

import numpy as np

from minigrad.core import backend
from minigrad.core.backend import get_array_module
from minigrad.core.function import Function, Tensors, shapes_refused


class Reshape(Function):
    """y = x with a new shape (same elements, same order);  gx = gy reshaped back."""

    shape: tuple[int, ...]
    double_backward = "linear"  # y = A x: for double backward its backward runs as an op (higher_order.py)

    def forward(self, x):
        self.source_shape = x.shape
        with shapes_refused("Reshape", x):
            return x.reshape(self.shape)

    def backward(self, gy):
        return gy.reshape(self.source_shape)


class Permute(Function):
    """y = x with its dims reordered (y's dim i is x's dim dims[i]);  gx = gy with the inverse order."""

    dims: tuple[int, ...]
    double_backward = "linear"

    def forward(self, x):
        return x.transpose(self.dims)

    def backward(self, gy):
        return gy.transpose(tuple(int(d) for d in np.argsort(self.dims)))  # plain ints, for any backend


class Expand(Function):
    """y = x broadcast to `shape` (a read-only view, no copy);  gx = gy summed back to x's shape.

    That sum is the engine's `sum_to` (autograd.py), which every broadcasting op relies on, so this
    backward hands gy on as it is.
    """

    shape: tuple[int, ...]
    double_backward = "linear"

    def forward(self, x):
        return get_array_module(x).broadcast_to(x, self.shape)

    def backward(self, gy):
        return gy


class Repeat(Function):
    """y = x tiled `repeats` times along each dim (torch's repeat, NumPy's tile);  gx = the sum of gy's tiles."""

    repeats: tuple[int, ...]
    double_backward = "linear"

    def forward(self, x):
        self.source_shape = x.shape
        return get_array_module(x).tile(x, self.repeats)

    def backward(self, gy):
        # x counts as having leading size-1 dims up to len(repeats); gy's dim i then holds repeats[i] tiles
        # of x's size sides[i]. Splitting each dim into (tile, side) and summing over the tiles undoes tile.
        sides = (1,) * (len(self.repeats) - len(self.source_shape)) + tuple(self.source_shape)
        split = [size for pair in zip(self.repeats, sides) for size in pair]  # (r0, s0, r1, s1, ...)
        gx = gy.reshape(split).sum(axis=tuple(range(0, len(split), 2)))
        return gx.reshape(self.source_shape)


class Flip(Function):
    """y = x with the order of its elements reversed along `dims`;  gx = gy reversed along them again."""

    dims: tuple[int, ...]
    double_backward = "linear"

    def forward(self, x):
        return get_array_module(x).flip(x, axis=self.dims).copy()  # a copy, as PyTorch's (NumPy's is a view)

    def backward(self, gy):
        return get_array_module(gy).flip(gy, axis=self.dims)


class Tril(Function):
    """y = x on and below the `diagonal`-th diagonal of the last two dims, else 0;  gx = tril(gy), the same mask."""

    diagonal: int
    double_backward = "linear"

    def forward(self, x):
        return get_array_module(x).tril(x, self.diagonal)

    def backward(self, gy):
        return get_array_module(gy).tril(gy, self.diagonal)


class Triu(Function):
    """y = x on and above the `diagonal`-th diagonal of the last two dims, else 0;  gx = triu(gy), the same mask."""

    diagonal: int
    double_backward = "linear"

    def forward(self, x):
        return get_array_module(x).triu(x, self.diagonal)

    def backward(self, gy):
        return get_array_module(gy).triu(gy, self.diagonal)


class Concat(Function):
    """y = the inputs joined along axis;  each gx = its slice of gy."""

    axis: int
    double_backward = Tensors()

    def forward(self, *xs):
        with shapes_refused("Concat", *xs):
            self.sizes = [x.shape[self.axis] for x in xs]
            return get_array_module(xs[0]).concatenate(xs, axis=self.axis)

    def backward(self, gy):
        xp = get_array_module(gy)
        boundaries = np.cumsum(self.sizes)[:-1].tolist()
        return tuple(xp.split(gy, boundaries, axis=self.axis))


class Stack(Function):
    """y = the inputs stacked along a new axis;  each gx = gy's slice at its position on that axis."""

    axis: int
    double_backward = Tensors()

    def forward(self, *xs):
        with shapes_refused("Stack", *xs):
            return get_array_module(xs[0]).stack(xs, axis=self.axis)

    def backward(self, gy):
        xp = get_array_module(gy)
        return tuple(xp.take(gy, i, axis=self.axis) for i in range(gy.shape[self.axis]))


class Clone(Function):
    """y = a copy of x in its own memory (torch.clone);  gx = gy."""

    double_backward = "linear"

    def forward(self, x):
        return x.copy()

    def backward(self, gy):
        return gy


class ToDevice(Function):
    """y = x copied to another device;  gx = gy copied back."""

    device: str
    double_backward = "linear"

    def forward(self, x):
        self.source_device = backend.device_of(x)
        return backend.to_device(x, self.device)

    def backward(self, gy):
        return backend.to_device(gy, self.source_device)
