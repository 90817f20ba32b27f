"""Reductions over axes (NumPy's `axis` / `keepdims`): sum, mean, max, var.

A reduction's backward spreads the gradient back over the reduced axes. It first puts the reduced
axes back as size-1 axes (`expand_reduced`), so that broadcasting does the spreading.
Read next: shape.py.
"""

from __future__ import annotations

import math
from typing import Any

from minigrad.backend import get_array_module
from minigrad.function import Function


def expand_reduced(gy: Any, axis: tuple[int, ...] | None, keepdims: bool, ndim: int) -> Any:
    """Give a reduction's gradient its reduced axes back as size 1, so it broadcasts over them."""
    if keepdims or ndim == 0:
        return gy
    axes = range(ndim) if axis is None else axis
    shape = list(gy.shape)
    for a in sorted(axes):
        shape.insert(a, 1)
    return gy.reshape(shape)


def reduced_count(shape: tuple[int, ...], axis: tuple[int, ...] | None) -> int:
    """How many elements each output of a reduction over `axis` summarises."""
    return math.prod(shape) if axis is None else math.prod(shape[a] for a in axis)


class Sum(Function):
    """y = sum of x over axis;  dy/dx = 1 for every element summed."""

    axis: tuple[int, ...] | None
    keepdims: bool

    def forward(self, x):
        self.shape = x.shape
        return x.sum(axis=self.axis, keepdims=self.keepdims)

    def backward(self, gy):
        gy = expand_reduced(gy, self.axis, self.keepdims, len(self.shape))
        return get_array_module(gy).broadcast_to(gy, self.shape)


class Mean(Function):
    """y = sum of x over axis / n;  dy/dx = 1/n."""

    axis: tuple[int, ...] | None
    keepdims: bool

    def forward(self, x):
        self.shape = x.shape
        return x.mean(axis=self.axis, keepdims=self.keepdims)

    def backward(self, gy):
        gy = expand_reduced(gy, self.axis, self.keepdims, len(self.shape))
        n = reduced_count(self.shape, self.axis)
        return get_array_module(gy).broadcast_to(gy / n, self.shape)


class Max(Function):
    """y = max of x over axis;  dy/dx = 1 at the maximum (shared equally among ties), else 0."""

    axis: tuple[int, ...] | None
    keepdims: bool

    def forward(self, x):
        y = x.max(axis=self.axis, keepdims=self.keepdims)
        is_max = (x == expand_reduced(y, self.axis, self.keepdims, x.ndim)).astype(x.dtype)
        self.share = is_max / is_max.sum(axis=self.axis, keepdims=True)
        return y

    def backward(self, gy):
        gy = expand_reduced(gy, self.axis, self.keepdims, self.share.ndim)
        return gy * self.share


class Var(Function):
    """Population variance y = mean((x - m)**2) over axis, m = mean(x);  dy/dx = 2 (x - m) / n.

    (The term through m vanishes: sum(x - m) = 0.)
    """

    axis: tuple[int, ...] | None
    keepdims: bool

    def forward(self, x):
        self.centered = x - x.mean(axis=self.axis, keepdims=True)
        return (self.centered * self.centered).mean(axis=self.axis, keepdims=self.keepdims)

    def backward(self, gy):
        gy = expand_reduced(gy, self.axis, self.keepdims, self.centered.ndim)
        n = reduced_count(self.centered.shape, self.axis)
        return gy * self.centered * (2 / n)
