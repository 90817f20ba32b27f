"""Tensor's math methods, a base class of Tensor: elementwise functions (exp, log, tanh, clamp, ...), reductions
(sum, mean, max, var, logsumexp, ...) and softmax, each a thin front for one op in ops/ or fused/; and the
comparisons (<, ==, ...) and logical operators (&, |, ~), which are not differentiable and return bool tensors.

The reductions take PyTorch's `dim` (an int, a sequence, or None for every axis) and `keepdim`, and NumPy's
`axis` and `keepdims` as aliases; `_axes` below turns any of them into the sorted tuple of axes the ops take.
As in shape.py, the ops import Tensor, so these methods reach them through the package
(`minigrad.ops.reduce`) when they are called.
Read next: ops/elementwise.py, then ops/reduce.py.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

import minigrad
from minigrad.core import backend
from minigrad.core.dtypes import result_type

if TYPE_CHECKING:
    from minigrad.tensor import Tensor

# A reduction's `dim`: one axis, several, or None for every axis.
Dims = int | Sequence[int] | None


class MathMethods:
    """The elementwise, reduction and softmax methods of `Tensor` (tensor.py); `self` is always a Tensor."""

    __slots__ = ()

    # Elementwise functions (on integers, exp, log, sqrt, ... give float32, the default float, as in PyTorch)
    def exp(self) -> Tensor:
        return minigrad.ops.elementwise.Exp.apply(self)

    def log(self) -> Tensor:
        return minigrad.ops.elementwise.Log.apply(self)

    def sqrt(self) -> Tensor:
        return minigrad.ops.elementwise.Sqrt.apply(self)

    def rsqrt(self) -> Tensor:
        """1 / sqrt(x)."""
        return minigrad.ops.elementwise.Rsqrt.apply(self)

    def square(self) -> Tensor:
        x = self._cast(np.dtype(np.int64)) if self.dtype == np.bool_ else self  # booleans square as int64
        return minigrad.ops.elementwise.Square.apply(x)

    def abs(self) -> Tensor:
        return minigrad.ops.elementwise.Abs.apply(self)

    def sign(self) -> Tensor:
        """-1, 0 or 1 (its gradient is 0); a boolean tensor is its own sign, as in PyTorch."""
        if self.dtype == np.bool_:
            return self.clone()
        return minigrad.ops.elementwise.Sign.apply(self)

    def sin(self) -> Tensor:
        return minigrad.ops.elementwise.Sin.apply(self)

    def cos(self) -> Tensor:
        return minigrad.ops.elementwise.Cos.apply(self)

    def erf(self) -> Tensor:
        """The error function, 2/sqrt(pi) * integral from 0 to x of exp(-t**2) dt."""
        return minigrad.ops.elementwise.Erf.apply(self)

    def tanh(self) -> Tensor:
        return minigrad.ops.activations.Tanh.apply(self)

    def sigmoid(self) -> Tensor:
        return minigrad.ops.activations.Sigmoid.apply(self)

    def relu(self) -> Tensor:
        return minigrad.ops.activations.ReLU.apply(self)

    def gelu(self, approximate: str = "none") -> Tensor:
        """F.gelu: the exact GELU x * Phi(x) by default, approximate="tanh" for GPT-2's form."""
        return minigrad.fused.gelu.gelu_op(approximate).apply(self)

    def maximum(self, other: Any) -> Tensor:
        """The larger of the two, elementwise (a tie gives each half the gradient)."""
        return minigrad.ops.elementwise.Maximum.apply(*self._operands(other))

    def minimum(self, other: Any) -> Tensor:
        """The smaller of the two, elementwise (a tie gives each half the gradient)."""
        return minigrad.ops.elementwise.Minimum.apply(*self._operands(other))

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        """Each element limited to [min, max]; either bound may be None, a number or a tensor."""
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of min and max must not be None")
        # PyTorch's result dtype: clamp(int_tensor, 0.5) is float32, clamp(bool_tensor, 0, 1) int64.
        x = self._cast(result_type(self, *(b for b in (min, max) if b is not None)))
        return minigrad.ops.elementwise.Clamp.apply(x, _bound(x, min, low=True), _bound(x, max, low=False))

    clip = clamp

    # ----------------------------------------------------------------------------------------------
    # Reductions: PyTorch's `dim` (an int, a sequence, or None for every axis) and `keepdim`; NumPy's
    # `axis` and `keepdims` are accepted as aliases.
    def sum(self, dim: Dims = None, keepdim: bool = False, *, dtype: Any = None, axis: Dims = None,
            keepdims: bool | None = None) -> Tensor:
        """The sum over `dim`; integers and bools sum to int64, as in PyTorch."""
        axes, keepdim = _reduction("sum", self.ndim, dim, keepdim, axis, keepdims)
        return minigrad.ops.reduce.Sum.apply(self._as(dtype), axis=axes, keepdims=keepdim)

    def mean(self, dim: Dims = None, keepdim: bool = False, *, dtype: Any = None, axis: Dims = None,
             keepdims: bool | None = None) -> Tensor:
        """The mean over `dim` (float tensors only, as in PyTorch, unless `dtype` converts first)."""
        axes, keepdim = _reduction("mean", self.ndim, dim, keepdim, axis, keepdims)
        return minigrad.ops.reduce.Mean.apply(self._as(dtype), axis=axes, keepdims=keepdim)

    def amax(self, dim: Dims = (), keepdim: bool = False, *, axis: Dims = None, keepdims: bool | None = None) -> Tensor:
        """The largest value over `dim` (every axis by default); ties share the gradient."""
        axes, keepdim = _reduction("amax", self.ndim, dim, keepdim, axis, keepdims)
        return minigrad.ops.reduce.Amax.apply(self, axis=axes, keepdims=keepdim)

    def amin(self, dim: Dims = (), keepdim: bool = False, *, axis: Dims = None, keepdims: bool | None = None) -> Tensor:
        """The smallest value over `dim` (every axis by default); ties share the gradient."""
        axes, keepdim = _reduction("amin", self.ndim, dim, keepdim, axis, keepdims)
        return minigrad.ops.reduce.Amax.apply(self, axis=axes, keepdims=keepdim, smallest=True)

    def max(self, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None, keepdims: bool | None = None) -> Any:
        """As PyTorch: `x.max()` is the largest element; `x.max(dim)` is the named tuple (values, indices)
        along `dim`, the gradient going to the index; `x.max(other_tensor)` is `maximum`."""
        if isinstance(dim, minigrad.Tensor):
            return self.maximum(dim)
        return self._extreme("max", dim, keepdim, axis, keepdims)

    def min(self, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None, keepdims: bool | None = None) -> Any:
        """As `max`, for the smallest: a tensor, the named tuple (values, indices) along `dim`, or `minimum`."""
        if isinstance(dim, minigrad.Tensor):
            return self.minimum(dim)
        return self._extreme("min", dim, keepdim, axis, keepdims)

    def _extreme(self, op: str, dim: Any, keepdim: bool, axis: Any, keepdims: bool | None) -> Any:
        dim, keepdim = _dim_alias(op, dim, keepdim, axis, keepdims)
        smallest = op == "min"
        if dim is None:  # every element: a NaN wins, ties share the gradient (PyTorch's max())
            return minigrad.ops.reduce.Amax.apply(self, axis=None, keepdims=False, smallest=smallest, nan_wins=True)
        d = _dim(op, dim, self.ndim)
        x = self if self.ndim else self.reshape(1)
        xp = backend.get_array_module(x.array)
        if x.shape[d] == 0:
            raise IndexError(f"{op}: cannot take the {op} over dim {dim} of size 0 (shape {self.shape})")
        indices = xp.expand_dims((xp.argmin if smallest else xp.argmax)(x.array, axis=d), d)  # a NaN wins
        values = minigrad.ops.reduce.TakeAlongDim.apply(x, indices=indices, axis=d, keepdims=keepdim)
        indices = minigrad.Tensor._make((indices if keepdim else indices.squeeze(d)).astype(np.int64), False)
        if self.ndim == 0:
            values, indices = values.reshape(()), indices.reshape(())
        return minigrad.ops.reduce.ValuesIndices(values, indices)

    def argmax(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
               keepdims: bool | None = None) -> Tensor:
        """The index of the largest value along `dim` (int64); dim=None: the index into the flattened tensor."""
        return self._arg_extreme("argmax", dim, keepdim, axis, keepdims)

    def argmin(self, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
               keepdims: bool | None = None) -> Tensor:
        """The index of the smallest value along `dim` (int64); dim=None: the index into the flattened tensor."""
        return self._arg_extreme("argmin", dim, keepdim, axis, keepdims)

    def _arg_extreme(self, op: str, dim: Any, keepdim: bool, axis: Any, keepdims: bool | None) -> Tensor:
        dim, keepdim = _dim_alias(op, dim, keepdim, axis, keepdims)
        xp = backend.get_array_module(self.array)
        if self.numel() == 0:
            raise IndexError(f"{op}: an empty tensor {self.shape} has no {op[3:]}imum")
        if dim is None:
            index = getattr(xp, op)(self.array.reshape(-1))
            return minigrad.Tensor._make(index.astype(np.int64).reshape((1,) * self.ndim if keepdim else ()), False)
        d = _dim(op, dim, self.ndim)
        index = getattr(xp, op)(self.array.reshape(1) if self.ndim == 0 else self.array, axis=d)
        index = xp.expand_dims(index, d) if keepdim and self.ndim else index
        return minigrad.Tensor._make(index.astype(np.int64).reshape(index.shape if self.ndim else ()), False)

    def var(self, dim: Dims = None, unbiased: bool | None = None, keepdim: bool = False, *,
            correction: float | None = None, axis: Dims = None, keepdims: bool | None = None) -> Tensor:
        """The variance over `dim`, sum((x - mean)**2) / (n - correction): PyTorch's default correction=1
        is the unbiased estimate; correction=0 (or unbiased=False) the population variance, as numpy.var."""
        return self._spread(minigrad.ops.reduce.Var, "var", dim, unbiased, keepdim, correction, axis, keepdims)

    def std(self, dim: Dims = None, unbiased: bool | None = None, keepdim: bool = False, *,
            correction: float | None = None, axis: Dims = None, keepdims: bool | None = None) -> Tensor:
        """The standard deviation sqrt(var) over `dim`, with var's `correction` (1 by default, as PyTorch)."""
        return self._spread(minigrad.ops.reduce.Std, "std", dim, unbiased, keepdim, correction, axis, keepdims)

    def _spread(self, op_class: Any, op: str, dim: Any, unbiased: bool | None, keepdim: bool,
                correction: float | None, axis: Any, keepdims: bool | None) -> Tensor:
        if isinstance(dim, bool):  # var(True): PyTorch's old spelling of var(unbiased=True)
            dim, unbiased = None, dim
        if unbiased is not None and correction is not None:
            raise TypeError(f"{op}: pass correction or unbiased, not both")
        if correction is None:
            correction = 0 if unbiased is False else 1
        axes, keepdim = _reduction(op, self.ndim, dim, keepdim, axis, keepdims)
        return op_class.apply(self, axis=axes, keepdims=keepdim, correction=correction)

    def prod(self, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None, axis: int | None = None,
             keepdims: bool | None = None) -> Tensor:
        """The product over one `dim` (or every element); zeros get their exact gradient."""
        dim, keepdim = _dim_alias("prod", dim, keepdim, axis, keepdims)
        axes = None if dim is None else (_dim("prod", dim, self.ndim),) if self.ndim else None
        return minigrad.ops.reduce.Prod.apply(self._as(dtype), axis=axes, keepdims=keepdim)

    def cumsum(self, dim: int | None = None, *, dtype: Any = None, axis: int | None = None) -> Tensor:
        """Running sums along `dim`: y_i = x_0 + ... + x_i."""
        return self._cumulative(minigrad.ops.reduce.CumSum, "cumsum", dim, dtype, axis)

    def cumprod(self, dim: int | None = None, *, dtype: Any = None, axis: int | None = None) -> Tensor:
        """Running products along `dim`: y_i = x_0 * ... * x_i (zeros get their exact gradient)."""
        return self._cumulative(minigrad.ops.reduce.CumProd, "cumprod", dim, dtype, axis)

    def _cumulative(self, op_class: Any, op: str, dim: Any, dtype: Any, axis: Any) -> Tensor:
        dim, _ = _dim_alias(op, dim, False, axis, None)
        if dim is None:
            raise TypeError(f"{op}: pass dim, as PyTorch requires")
        x = self._as(dtype)
        if self.ndim == 0:
            return op_class.apply(x.reshape(1), axis=_dim(op, dim, 0)).reshape(())
        return op_class.apply(x, axis=_dim(op, dim, self.ndim))

    def logsumexp(self, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None,
                  keepdims: bool | None = None) -> Tensor:
        """log(sum(exp(x))) over `dim`, without overflow (the max is taken out first)."""
        axes, keepdim = _reduction("logsumexp", self.ndim, dim, keepdim, axis, keepdims)
        return minigrad.ops.reduce.LogSumExp.apply(self, axis=axes, keepdims=keepdim)

    def norm(self, p: Any = "fro", dim: Dims = None, keepdim: bool = False, dtype: Any = None) -> Tensor:
        """The vector p-norm (sum |x|**p)**(1/p) over `dim` (every element by default): p=2 ("fro"), 1, any
        p > 0, or inf (max |x|)."""
        p = 2 if p == "fro" else p
        if isinstance(p, str) or not p > 0:
            raise NotImplementedError(f"norm: p={p!r} is not supported; use p > 0, inf or 'fro'")
        x = self._as(dtype)
        if x.dtype.kind != "f":
            raise RuntimeError(f"norm: input dtype must be a floating point type, not {x.dtype}")
        axes, keepdim = _reduction("norm", self.ndim, dim, keepdim, None, None)
        return minigrad.ops.reduce.Norm.apply(x, p=float(p), axis=axes, keepdims=keepdim)

    def softmax(self, dim: int | None = None, dtype: Any = None, *, axis: int | None = None) -> Tensor:
        """exp(x) / sum(exp(x)) along `dim` (the last by default)."""
        return self._along(minigrad.fused.softmax.Softmax, "softmax", dim, dtype, axis)

    def log_softmax(self, dim: int | None = None, dtype: Any = None, *, axis: int | None = None) -> Tensor:
        """log(softmax(x)) along `dim` (the last by default), computed as x - logsumexp(x)."""
        return self._along(minigrad.fused.softmax.LogSoftmax, "log_softmax", dim, dtype, axis)

    def _along(self, op_class: Any, op: str, dim: int | None, dtype: Any, axis: int | None) -> Tensor:
        dim, _ = _dim_alias(op, dim, False, axis, None)
        x, d = self._as(dtype), _dim(op, -1 if dim is None else dim, self.ndim)
        if self.ndim == 0:  # one element: softmax is 1, log_softmax 0
            return op_class.apply(x.reshape(1), axis=0).reshape(())
        return op_class.apply(x, axis=d)

    def _as(self, dtype: Any) -> Tensor:
        """This tensor converted to `dtype` first (the `dtype=` of sum, mean, softmax, ...), or itself."""
        return self if dtype is None else self.astype(dtype)

    # Comparisons: not differentiable, they return boolean tensors.
    def _compare(self, other: Any, name: str) -> Tensor:
        if isinstance(other, minigrad.Tensor) and type(other.array) is not type(self.array):
            raise RuntimeError(f"{name}: inputs are on different devices ({self.device}, {other.device})")
        x, y = self._operands(other)
        xp = backend.get_array_module(self.array)
        return minigrad.Tensor._make(getattr(xp, name)(x.array, y.array), False)

    def __lt__(self, other: Any) -> Tensor:
        return self._compare(other, "less")

    def __le__(self, other: Any) -> Tensor:
        return self._compare(other, "less_equal")

    def __gt__(self, other: Any) -> Tensor:
        return self._compare(other, "greater")

    def __ge__(self, other: Any) -> Tensor:
        return self._compare(other, "greater_equal")

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None:  # as PyTorch: Python's own answer, False (`if eos_id == None:` with a tensor id)
            return NotImplemented
        return self._compare(other, "equal")

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        if other is None:  # True, by Python's identity rule, as in PyTorch
            return NotImplemented
        return self._compare(other, "not_equal")

    __hash__ = object.__hash__  # tensors are hashed by identity, as in PyTorch
    lt, le, gt, ge, eq, ne = __lt__, __le__, __gt__, __ge__, __eq__, __ne__  # PyTorch's method names for them

    def all(self, dim: Dims = None, keepdim: bool = False) -> Tensor:
        """Whether every element (along `dim`) is nonzero: a bool tensor, as torch.all."""
        return self._logical("all", dim, keepdim)

    def any(self, dim: Dims = None, keepdim: bool = False) -> Tensor:
        """Whether some element (along `dim`) is nonzero: a bool tensor, as torch.any."""
        return self._logical("any", dim, keepdim)

    def _logical(self, op: str, dim: Dims, keepdim: bool) -> Tensor:
        axes, keepdim = _reduction(op, self.ndim, dim, keepdim, None, None)
        xp = backend.get_array_module(self.array)
        return minigrad.Tensor._make(getattr(xp, op)(self.array, axis=axes, keepdims=keepdim), False)

    def where(self, condition: Any, other: Any) -> Tensor:
        """This tensor where `condition` is True, else `other`: x.where(c, y) is torch.where(c, x, y)."""
        return minigrad.functional.where(condition, self, other)

    # Logical operators on bool tensors (bitwise on integers), as in PyTorch: masks such as (x > 0) & (x < 1).
    def __and__(self, other: Any) -> Tensor:
        return self._bitwise(other, "bitwise_and")

    def __or__(self, other: Any) -> Tensor:
        return self._bitwise(other, "bitwise_or")

    __rand__, __ror__ = __and__, __or__

    def __invert__(self) -> Tensor:
        return self._bitwise(None, "invert")

    def _bitwise(self, other: Any, name: str) -> Tensor:
        if self.dtype.kind == "f" or isinstance(other, float) or getattr(other, "dtype", self.dtype).kind == "f":
            raise TypeError(f"{name}: only bool and integer tensors have it, not float (compare first: x > 0)")
        if other is None:
            return minigrad.Tensor._make(backend.get_array_module(self.array).invert(self.array), False)
        return self._compare(other, name)


def _axes(axis: Any, ndim: int, op: str = "reduce") -> tuple[int, ...] | None:
    """Normalise `dim` (an int, a sequence, or None) to a sorted tuple of non-negative axes, or None for all.

    As in PyTorch: an empty sequence means every axis; a 0-d tensor accepts dim 0 and -1 (its one element);
    NumPy integers and 0-d integer tensors count as ints; out of range is an IndexError, a repeat an error.
    """
    if axis is None:
        return None
    dims = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    if not dims:
        return None
    rank = max(ndim, 1)
    axes = []
    for a in dims:
        a = operator.index(a)
        if not -rank <= a < rank:
            raise IndexError(f"{op}: dim {a} is out of range for a tensor with {ndim} dimensions "
                             f"(expected {-rank} to {rank - 1})")
        if a % rank in axes:
            raise RuntimeError(f"{op}: dim {a} appears more than once in {axis}")
        axes.append(a % rank)
    return None if ndim == 0 else tuple(sorted(axes))


def _dim(op: str, dim: Any, ndim: int) -> int:
    """One dim (not a sequence), as a non-negative int (0 for a 0-d tensor)."""
    if isinstance(dim, (tuple, list)):
        raise TypeError(f"{op}: dim must be a single int, not {dim!r}")
    axes = _axes(dim, ndim, op)
    return 0 if axes is None else axes[0]


def _dim_alias(op: str, dim: Any, keepdim: bool, axis: Any, keepdims: bool | None) -> tuple[Any, bool]:
    """(dim, keepdim), taking NumPy's spellings axis= and keepdims= as aliases, as PyTorch does."""
    if axis is not None:
        if dim is not None and dim != ():
            raise TypeError(f"{op}: pass dim or its alias axis, not both")
        dim = axis
    return dim, bool(keepdim if keepdims is None else keepdims)


def _reduction(op: str, ndim: int, dim: Any, keepdim: bool, axis: Any, keepdims: bool | None) -> tuple[Any, bool]:
    """A reduction's (axes, keepdim) from PyTorch's or NumPy's spelling of its arguments."""
    dim, keepdim = _dim_alias(op, dim, keepdim, axis, keepdims)
    return _axes(dim, ndim, op), keepdim


def _bound(x: Tensor, bound: Any, low: bool) -> Tensor:
    """A clamp bound as a tensor of x's dtype (on x's device); a missing one is -inf / +inf (the dtype's
    extreme for integers). A tensor bound stays in the graph."""
    xp = backend.get_array_module(x.array)
    if isinstance(bound, minigrad.Tensor):
        return bound if bound.dtype == x.dtype else bound.astype(x.dtype)
    if bound is None:
        extremes = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
        bound = (-np.inf if low else np.inf) if x.dtype.kind == "f" else (extremes.min if low else extremes.max)
    return minigrad.Tensor._make(xp.asarray(bound, dtype=x.dtype), False)
