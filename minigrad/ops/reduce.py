"""Reductions over axes: sum, mean, amax/amin, max/min along a dim, var, std, prod, cumsum, cumprod,
logsumexp, norm.

Each op takes `axis` (None for every axis, or a sorted tuple of non-negative axes; Tensor's `_axes` turns
PyTorch's `dim` into that) and `keepdims`. A reduction's backward spreads the gradient back over the
reduced axes: it first puts them back as size-1 axes (`expand_reduced`), so that broadcasting does the
spreading. Integer sums, products and cumulative sums are int64, as in PyTorch.
Read next: shape.py.
"""

from __future__ import annotations

import functools
import math
import operator
from typing import Any, NamedTuple

import numpy as np

from minigrad.core.backend import get_array_module
from minigrad.core.function import Function, Tensors
from minigrad.ops.elementwise import pytorch_sign, to_float
from minigrad.ops.shape import Concat


class ValuesIndices(NamedTuple):
    """What `max(dim)` and `min(dim)` return, as PyTorch's `torch.return_types.max`: (values, indices)."""

    values: Any
    indices: Any


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


def accumulator(dtype: np.dtype) -> Any:
    """The dtype of an integer or bool sum, product or cumulative sum: int64 (NumPy would give uint64 for
    uint8); floats keep theirs."""
    return None if dtype.kind == "f" else np.int64


def check_float_input(op: str, x: Any) -> None:
    """RuntimeError for an integer array, as PyTorch's mean and var (activations.require_float: NotImplementedError)."""
    if x.dtype.kind != "f":
        raise RuntimeError(f"{op}: input dtype must be a floating point type, not {x.dtype}; "
                           "convert it first (or pass dtype=)")


class Sum(Function):
    """y = sum of x over axis;  dy/dx = 1 for every element summed."""

    axis: tuple[int, ...] | None
    keepdims: bool
    double_backward = "linear"  # y = A x: for double backward its backward runs as an op (higher_order.py)

    def forward(self, x):
        self.shape = x.shape
        return x.sum(axis=self.axis, keepdims=self.keepdims, dtype=accumulator(x.dtype))

    def backward(self, gy):
        gy = expand_reduced(gy, self.axis, self.keepdims, len(self.shape))
        return get_array_module(gy).broadcast_to(gy, self.shape)


class Mean(Function):
    """y = sum of x over axis / n;  dy/dx = 1/n.  (An empty axis gives nan, as 0/0.)"""

    axis: tuple[int, ...] | None
    keepdims: bool
    double_backward = "linear"

    def forward(self, x):
        check_float_input("mean", x)
        self.shape = x.shape
        return x.mean(axis=self.axis, keepdims=self.keepdims)

    def backward(self, gy):
        gy = expand_reduced(gy, self.axis, self.keepdims, len(self.shape))
        n = reduced_count(self.shape, self.axis)
        return get_array_module(gy).broadcast_to(gy / max(n, 1), self.shape)


class Amax(Function):
    """y = max of x over axis;  dy/dx = 1 at the maximum, shared equally among ties, else 0.

    `smallest` makes it amin. With `nan_wins` (PyTorch's max() over every element) a NaN is the maximum
    and takes the gradient; without it (PyTorch's amax) a slice holding a NaN gets 0/0 = nan gradients.
    """

    axis: tuple[int, ...] | None
    keepdims: bool
    smallest: bool = False
    nan_wins: bool = False
    constants = ("share",)  # piecewise constant: its derivative is 0 (higher_order.py)
    double_backward = Tensors()

    def forward(self, x):
        if x.size == 0 or reduced_count(x.shape, self.axis) == 0:
            name = "amin" if self.smallest else "amax"
            raise RuntimeError(f"{name}: cannot reduce over an empty dimension of shape {x.shape} (no identity)")
        xp = get_array_module(x)
        y = x.min(axis=self.axis, keepdims=True) if self.smallest else x.max(axis=self.axis, keepdims=True)
        is_extreme = x == y
        if self.nan_wins:
            is_extreme |= xp.isnan(x)
        share = is_extreme.astype(x.dtype if x.dtype.kind == "f" else np.float32)
        share /= share.sum(axis=self.axis, keepdims=True)
        self.share = share
        return y if self.keepdims else expand_reduced_away(y, self.axis)

    def backward(self, gy):
        gy = expand_reduced(gy, self.axis, self.keepdims, self.share.ndim)
        return gy * self.share


def expand_reduced_away(y: Any, axis: tuple[int, ...] | None) -> Any:
    """Drop the size-1 axes a keepdims reduction left (the inverse of expand_reduced)."""
    return y.reshape(()) if axis is None else y.squeeze(axis)


class TakeAlongDim(Function):
    """y = x at `indices` along `axis` (max(dim) and min(dim) pick their values so);  dy/dx = 1 at the
    picked element, 0 elsewhere, so exactly one element of each slice gets the gradient, as in PyTorch."""

    indices: Any  # integer, shaped like x with the axis of size 1
    axis: int
    keepdims: bool
    double_backward = "linear"

    def forward(self, x):
        xp = get_array_module(x)
        self.length = x.shape[self.axis]
        y = xp.take_along_axis(x, self.indices, axis=self.axis)
        return y if self.keepdims else y.squeeze(self.axis)

    def backward(self, gy):
        xp = get_array_module(gy)
        gy = gy if self.keepdims else xp.expand_dims(gy, self.axis)
        positions = xp.arange(self.length).reshape([-1 if a == self.axis else 1 for a in range(gy.ndim)])
        return xp.where(positions == self.indices, gy, 0)


class Var(Function):
    """y = sum((x - m)**2) / (n - correction) over axis, m = mean(x);  dy/dx = 2 (x - m) / (n - correction).

    (The term through m vanishes: sum(x - m) = 0.) correction=1 is the unbiased estimate (PyTorch's default),
    0 the population variance. When n <= correction the divisor is 0: inf, or nan for 0/0, as in PyTorch.
    """

    axis: tuple[int, ...] | None
    keepdims: bool
    correction: float
    double_backward = Tensors()

    def forward(self, x):
        check_float_input("var", x)
        xp = get_array_module(x)
        n = reduced_count(x.shape, self.axis)
        self.centered = x - x.mean(axis=self.axis, keepdims=True)
        # An array divisor, so that 0 gives inf or nan (with NumPy's warning), not Python's ZeroDivisionError.
        self.divisor = xp.asarray(max(n - self.correction, 0), dtype=x.dtype)
        return (self.centered * self.centered).sum(axis=self.axis, keepdims=self.keepdims) / self.divisor

    def backward(self, gy):
        gy = expand_reduced(gy, self.axis, self.keepdims, self.centered.ndim)
        return gy * self.centered * (2 / self.divisor)

    constants = ("divisor",)  # (a count)

    def recompute(self, x, *, y):
        return {"centered": x - x.mean(self.axis, keepdim=True)}  # for a backward on tensors (higher_order.py)


class Std(Function):
    """y = sqrt(var(x));  dy/dx = (x - m) / ((n - correction) y), and 0 where y = 0 (a constant slice), as in
    PyTorch. Var's forward and backward, chained by hand with those of sqrt."""

    axis: tuple[int, ...] | None
    keepdims: bool
    correction: float
    double_backward = "composed"

    def forward(self, x):
        self.var = Var(axis=self.axis, keepdims=True, correction=self.correction)
        self.y = get_array_module(x).sqrt(self.var.forward(x))
        return self.y if self.keepdims else expand_reduced_away(self.y, self.axis)

    def backward(self, gy):
        gy = expand_reduced(gy, self.axis, self.keepdims, self.y.ndim)
        return self.var.backward(get_array_module(gy).where(self.y == 0, 0, gy / (2 * self.y)))

    def composed(self, x):
        """sqrt(var(x)) from the Var op, 0 where var is 0, as above: its graph gives double backward."""
        var = Var.apply(x, axis=self.axis, keepdims=self.keepdims, correction=self.correction)
        constant = var.array == 0
        return var.masked_fill(constant, 1.0).sqrt().masked_fill(constant, 0.0)


class Prod(Function):
    """y = product of x over axis (None or one axis);  dy/dx_i = product of every x_j but x_i.

    Computed as (product of the x_j before i) * (product of those after i), so a zero input needs no
    division by zero: with one zero, only the zero's position gets a gradient; with two, no position does.
    """

    axis: tuple[int, ...] | None
    keepdims: bool
    double_backward = "composed"

    def forward(self, x):
        self.x = x
        return x.prod(axis=self.axis, keepdims=self.keepdims, dtype=accumulator(x.dtype))

    def backward(self, gy):
        xp = get_array_module(gy)
        x = self.x.reshape(-1) if self.axis is None else xp.moveaxis(self.x, self.axis[0], -1)  # (..., n)
        ones = xp.ones_like(x[..., :1])
        before = xp.cumprod(xp.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
        after = xp.flip(xp.cumprod(xp.flip(xp.concatenate([x[..., 1:], ones], axis=-1), -1), axis=-1), -1)
        others = before * after
        others = others.reshape(self.x.shape) if self.axis is None else xp.moveaxis(others, -1, self.axis[0])
        return others * expand_reduced(gy, self.axis, self.keepdims, self.x.ndim)

    def composed(self, x):
        """The product as a chain of multiplications (there is no cumprod op): its graph gives double backward."""
        flat, axis = (x.reshape(-1), 0) if self.axis is None else (x, self.axis[0])
        factors = [flat[(slice(None),) * axis + (i,)] for i in range(flat.shape[axis])]
        if not factors:
            return x.sum(self.axis, keepdim=self.keepdims) * 0 + 1  # an empty product is 1
        y = functools.reduce(operator.mul, factors)
        if not self.keepdims:
            return y
        return y.reshape([1 if self.axis is None or a == axis else n for a, n in enumerate(x.shape)])


class CumSum(Function):
    """y_i = x_1 + ... + x_i along axis;  gx_j = gy_j + ... + gy_n (a cumulative sum from the end)."""

    axis: int
    double_backward = "linear"

    def forward(self, x):
        return get_array_module(x).cumsum(x, axis=self.axis, dtype=accumulator(x.dtype))

    def backward(self, gy):
        xp = get_array_module(gy)
        return xp.flip(xp.cumsum(xp.flip(gy, self.axis), axis=self.axis), self.axis)


class CumProd(Function):
    """y_i = x_1 * ... * x_i along axis;  gx_j = (x_1 ... x_(j-1)) * s_j, where s_j = sum over i >= j of
    gy_i * (x_(j+1) ... x_i), that is s_n = gy_n and s_j = gy_j + x_(j+1) * s_(j+1).

    The naive gx_j = (sum over i >= j of gy_i y_i) / x_j divides by zero at a zero input; the recurrence never
    divides, so it is exact for every input, zeros included, and gives what PyTorch gives.
    """

    axis: int
    double_backward = "composed"

    def forward(self, x):
        self.x = x
        return get_array_module(x).cumprod(x, axis=self.axis, dtype=accumulator(x.dtype))

    def backward(self, gy):
        xp = get_array_module(gy)
        x, gy = xp.moveaxis(self.x, self.axis, 0), xp.moveaxis(gy, self.axis, 0)  # the axis first: (n, ...)
        if x.shape[0] == 0:
            return xp.moveaxis(gy, 0, self.axis)
        before = xp.cumprod(xp.concatenate([xp.ones_like(x[:1]), x[:-1]]), axis=0)  # x_1 ... x_(j-1)
        s = [gy[-1]]
        for j in range(x.shape[0] - 2, -1, -1):  # the recurrence, from the end
            s.append(gy[j] + x[j + 1] * s[-1])
        return xp.moveaxis(before * xp.stack(s[::-1]), 0, self.axis)

    def composed(self, x):
        """The running product as a chain of multiplications: its graph gives double backward."""
        factors = [x[(slice(None),) * self.axis + (slice(i, i + 1),)] for i in range(x.shape[self.axis])]
        ys = factors[:1]
        for factor in factors[1:]:
            ys.append(ys[-1] * factor)
        return Concat.apply(*ys, axis=self.axis) if ys else x * 1


class LogSumExp(Function):
    """y = log(sum(exp(x))) over axis, computed as m + log(sum(exp(x - m))) with m = max(x), so exp never
    overflows;  dy/dx = exp(x - y) = softmax(x)."""

    axis: tuple[int, ...] | None
    keepdims: bool
    double_backward = Tensors(x=0, y="output")

    def forward(self, x):
        xp = get_array_module(x)
        x = to_float(x)
        if reduced_count(x.shape, self.axis) == 0:  # an empty sum: log(0) = -inf
            y = xp.full(x.sum(axis=self.axis, keepdims=True).shape, -xp.inf, dtype=x.dtype)
        else:
            m = x.max(axis=self.axis, keepdims=True)
            m = xp.where(xp.isinf(m), 0, m)  # all -inf (or an inf): shifting would make inf - inf = nan
            y = m + xp.log(xp.exp(x - m).sum(axis=self.axis, keepdims=True))
        self.x, self.y = x, y
        return y if self.keepdims else expand_reduced_away(y, self.axis)

    def backward(self, gy):
        xp = get_array_module(gy)
        return expand_reduced(gy, self.axis, self.keepdims, self.x.ndim) * xp.exp(self.x - self.y)

    def recompute(self, x, *, y):
        return {"y": expand_reduced(y, self.axis, self.keepdims, x.ndim)}  # the output with its reduced axes


class Norm(Function):
    """y = (sum |x|**p)**(1/p) over axis (p > 0), or max |x| (p = inf);
    dy/dx = sign(x) (|x| / y)**(p - 1); 0 where y = 0 or x = 0, as in PyTorch (p = 2: x / y)."""

    p: float
    axis: tuple[int, ...] | None
    keepdims: bool
    double_backward = Tensors(x=0, y="output")

    def forward(self, x):
        xp = get_array_module(x)
        a = xp.abs(x)
        if self.p == math.inf:
            y = a.max(axis=self.axis, keepdims=True)
        elif self.p == 2:
            y = xp.sqrt((x * x).sum(axis=self.axis, keepdims=True))
        elif self.p == 1:
            y = a.sum(axis=self.axis, keepdims=True)
        else:
            y = (a**self.p).sum(axis=self.axis, keepdims=True) ** (1 / self.p)
        self.x, self.y = x, y
        return y if self.keepdims else expand_reduced_away(y, self.axis)

    def backward(self, gy):
        xp = get_array_module(gy)
        x, y = self.x, self.y
        gy = expand_reduced(gy, self.axis, self.keepdims, x.ndim)
        if self.p == math.inf:  # the gradient of max |x|, shared among ties (none when the max is nan)
            share = (xp.abs(x) == y).astype(x.dtype)
            share /= xp.maximum(share.sum(axis=self.axis, keepdims=True), 1)
            return gy * share * pytorch_sign(x)
        if self.p == 1:
            return gy * pytorch_sign(x)  # 0 at nan, as in PyTorch
        safe_y = xp.where(y == 0, 1, y)
        if self.p == 2:
            return xp.where(y == 0, 0, gy * (x / safe_y))
        ratio = xp.abs(x) / safe_y
        return xp.where((y == 0) | (x == 0), 0, gy * xp.sign(x) * ratio ** (self.p - 1))

    def recompute(self, x, *, y):
        return {"y": expand_reduced(y, self.axis, self.keepdims, x.ndim)}  # the output with its reduced axes
