"""Tensor: an array that remembers how it was computed, the first of the engine's two classes.

A `Tensor` wraps a backend array (`.data`) and, when it was computed from tensors that require grad,
remembers the `Function` that made it (`._ctx`; function.py). References only point from outputs to
inputs, never back, so a graph is freed by reference counting alone, with no cycles for the garbage
collector to find. Its operators and methods (`+`, `@`, `exp`, `sum`, `reshape`, ...) each call one op.

The class is written in four files, one job each; the other three hold its base classes:
- here: making a tensor, its attributes, backward, the operators (with PyTorch's type promotion from
  dtypes.py), indexing, and the elementwise and reduction methods;
- tensor_convert.py (`ConversionMethods`): to another dtype or device, to Python values and to NumPy;
- tensor_inplace.py (`InPlaceMethods`): in-place updates, `w -= lr * w.grad`, `zero_()`, ...;
- tensor_shape.py (`ShapeMethods`): reshape, permute, transpose, squeeze, expand, split, gather, ...

Read next: function.py (Function, one op), then autograd.py (the backward pass).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from minigrad import autograd, backend
from minigrad.dtypes import DEFAULT_FLOAT, FLOAT_DTYPES, check_dtype, is_number, result_type
from minigrad.tensor_convert import ConversionMethods
from minigrad.tensor_inplace import InPlaceMethods
from minigrad.tensor_shape import ShapeMethods

if TYPE_CHECKING:
    from minigrad.function import Function

__all__ = ["FLOAT_DTYPES", "ShapeError", "Tensor"]

# A reduction's `dim`: one axis, several, or None for every axis.
Dims = int | Sequence[int] | None


class ShapeError(ValueError):
    """A shape mismatch, with a message naming the op and the shapes."""


class Tensor(ConversionMethods, InPlaceMethods, ShapeMethods):
    """An n-dimensional array that remembers how it was computed, for reverse-mode autodiff.

    `Tensor(data, requires_grad=False, dtype=None, device=None)`: Python floats and float arrays
    become float32 unless `dtype` says otherwise; integers and bools keep their dtype.
    """

    # _version counts in-place updates (tensor_inplace.py), so that backward can refuse a changed input.
    __slots__ = ("data", "grad", "requires_grad", "_ctx", "_retains_grad", "_version", "name", "__weakref__")
    __array_priority__ = 1000  # so that `numpy_array + tensor` calls Tensor.__radd__

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None, device: Any = None) -> None:
        if isinstance(data, Tensor):
            data = data.data
        given = data
        if device is None:
            device = backend.device_of(data) if _is_backend_array(data) else "cpu"
        device = backend.canonical_device(device)
        if _is_backend_array(data) and backend.device_of(data) != device:
            data = backend.as_numpy(data)
        if not _is_backend_array(data):
            data = np.asarray(data)
        if dtype is not None:
            dtype = check_dtype(dtype)
        elif data.dtype.kind == "f":
            dtype = DEFAULT_FLOAT
        else:
            dtype = check_dtype(data.dtype)
        if data.dtype != dtype:
            data = data.astype(dtype)
        if requires_grad and dtype.kind != "f":
            raise TypeError(f"only float tensors can require grad, not {dtype}")
        self.data = backend.to_device(data, device)
        if self.data is given:
            # Never alias the caller's array (torch.tensor copies too): neither an optimizer step
            # nor a later change to the array may reach across.
            self.data = self.data.copy()
        self.grad: Tensor | None = None
        self.requires_grad = requires_grad
        self._ctx: Function | None = None
        self._retains_grad = False
        self._version = 0
        self.name: str | None = None

    @classmethod
    def _make(cls, data: Any, requires_grad: bool) -> Tensor:
        """The engine's fast constructor: `data` is already a backend array of the right dtype."""
        out = object.__new__(Tensor)
        if not hasattr(data, "shape") or isinstance(data, np.generic):  # NumPy reductions give scalars
            data = backend.get_array_module(data).asarray(data)
        out.data = data
        out.grad = None
        out.requires_grad = requires_grad
        out._ctx = None
        out._retains_grad = False
        out._version = 0
        out.name = None
        return out

    # ----------------------------------------------------------------------------------------------
    # Attributes
    @property
    def shape(self) -> tuple[int, ...]:
        return self.data.shape

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def dtype(self) -> np.dtype:
        return self.data.dtype

    @property
    def device(self) -> str:
        return backend.device_of(self.data)

    @property
    def is_leaf(self) -> bool:
        return self._ctx is None

    @property
    def grad_fn(self) -> Function | None:
        """The op that made this tensor (None for leaves and for tensors made under no_grad)."""
        return self._ctx

    def numel(self) -> int:
        return int(self.data.size)

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def size(self, dim: int | None = None) -> tuple[int, ...] | int:
        """The shape, or the size of one dim (negative counts from the end), as in PyTorch."""
        if dim is None:
            return self.shape
        if not -self.ndim <= dim < self.ndim:
            raise IndexError(f"size: dim {dim} is out of range for a tensor with {self.ndim} dims")
        return self.shape[dim]

    def dim(self) -> int:
        """The number of dims (`ndim`)."""
        return self.ndim

    def __repr__(self) -> str:
        extras = "" if self.device == "cpu" else f", device='{self.device}'"
        if self.dtype not in (np.float32, np.int64, np.bool_):
            extras += f", dtype={self.dtype}"
        if self._ctx is not None:
            extras += f", grad_fn={self._ctx.name}"
        elif self.requires_grad:
            extras += ", requires_grad=True"
        body = np.array2string(self.numpy(), separator=", ", prefix="tensor(")
        return f"tensor({body}{extras})"

    def detach(self) -> Tensor:
        """The same data, cut off from the graph (no copy)."""
        return Tensor._make(self.data, False)

    def clone(self) -> Tensor:
        """A copy in its own memory; differentiable (the gradient passes through unchanged)."""
        return ops.shape.Clone.apply(self)

    def contiguous(self) -> Tensor:
        """The tensor itself: no op here depends on the memory layout, so there is nothing to do."""
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Switch gradient tracking of this leaf on or off, in place; returns the tensor."""
        if self._ctx is not None and not requires_grad:
            raise RuntimeError("requires_grad_: only leaf tensors can change requires_grad; use detach() "
                               "for a copy of this one outside the graph")
        if requires_grad and self.dtype.kind != "f":
            raise TypeError(f"requires_grad_: only float tensors can require grad, not {self.dtype}")
        self.requires_grad = requires_grad
        return self

    def retain_grad(self) -> Tensor:
        """Keep this non-leaf tensor's gradient in `.grad` after backward (as in PyTorch)."""
        self._retains_grad = True
        return self

    def zero_grad(self) -> None:
        self.grad = None

    # ----------------------------------------------------------------------------------------------
    # The backward pass
    def backward(self, grad: Any = None, retain_graph: bool = False) -> None:
        """Compute the gradient of this tensor with respect to every leaf that requires grad.

        A scalar output needs no `grad`; otherwise `grad` (a Tensor or array shaped like this
        tensor) is the upstream gradient, dL/dself. Gradients accumulate into each leaf's `.grad`.
        After the call the graph's saved buffers are released unless `retain_graph=True`.
        """
        if not self.requires_grad:
            raise RuntimeError(
                "backward(): this tensor does not require grad: it was made under no_grad(), or from "
                "tensors none of which has requires_grad=True"
            )
        xp = backend.get_array_module(self.data)
        if grad is None:
            if self.data.size != 1:
                raise RuntimeError(
                    f"backward(): grad can be omitted only for a scalar output, not shape {self.shape}"
                )
            grad = xp.ones_like(self.data)
        else:
            grad = _raw(grad, self.device)  # a Tensor, a NumPy array or an array already on this device
            if grad.shape != self.shape:
                raise ShapeError(f"backward(): grad has shape {grad.shape}, the tensor {self.shape}")
            grad = grad.astype(self.dtype, copy=False)
        autograd.backward(self, grad, retain_graph)

    def _accumulate_grad(self, gx: Any, owned: bool) -> None:
        """Add `gx` into `.grad`; the stored gradient never aliases another tensor's gradient."""
        if self.grad is None:
            self.grad = Tensor._make(gx if owned else gx.copy(), False)
        else:
            self.grad.data += gx

    # ----------------------------------------------------------------------------------------------
    # Operators (NumPy broadcasting; Python numbers on either side; PyTorch's result dtype)
    def _operands(self, other: Any) -> tuple[Tensor, Tensor]:
        """(self, other) as two tensors of one dtype, `result_type(self, other)` (dtypes.py), for a binary op.

        A number becomes a 0-d array of that dtype. An array counts as a tensor of its own dtype (as in
        PyTorch, a float64 NumPy array widens a float32 tensor); a list becomes a tensor as `mg.tensor`
        makes one. A float tensor that changes dtype does so through Cast, so its gradient flows back.
        """
        if isinstance(other, Tensor):
            if other.dtype == self.dtype:
                return self, other  # the common case, decided at once
        elif isinstance(other, (int, float)) and self.dtype.kind == "f":  # x * 0.5 keeps x's dtype
            return self, Tensor._make(backend.get_array_module(self.data).asarray(other, dtype=self.dtype), False)
        elif not is_number(other):
            other = Tensor(other, device=self.device, dtype=getattr(other, "dtype", None))
        dtype = result_type(self, other)
        if is_number(other):  # astype, not asarray(dtype=): an int too large for uint8 wraps, as in PyTorch
            number = backend.get_array_module(self.data).asarray(other).astype(dtype)
            return self._cast(dtype), Tensor._make(number, False)
        return self._cast(dtype), other._cast(dtype)

    def __add__(self, other: Any) -> Tensor:
        return ops.elementwise.Add.apply(*self._operands(other))

    def __radd__(self, other: Any) -> Tensor:
        x, y = self._operands(other)
        return ops.elementwise.Add.apply(y, x)

    def __sub__(self, other: Any) -> Tensor:
        return ops.elementwise.Sub.apply(*self._operands(other))

    def __rsub__(self, other: Any) -> Tensor:
        x, y = self._operands(other)
        return ops.elementwise.Sub.apply(y, x)

    def __mul__(self, other: Any) -> Tensor:
        return ops.elementwise.Mul.apply(*self._operands(other))

    def __rmul__(self, other: Any) -> Tensor:
        x, y = self._operands(other)
        return ops.elementwise.Mul.apply(y, x)

    def __truediv__(self, other: Any) -> Tensor:
        return ops.elementwise.Div.apply(*_true_division(*self._operands(other)))

    def __rtruediv__(self, other: Any) -> Tensor:
        x, y = self._operands(other)
        return ops.elementwise.Div.apply(*_true_division(y, x))

    def __pow__(self, exponent: Any) -> Tensor:
        if isinstance(exponent, (int, float)):
            return ops.elementwise.PowScalar.apply(self, exponent=exponent)
        return ops.elementwise.Pow.apply(*self._operands(exponent))

    def __rpow__(self, base: Any) -> Tensor:
        x, y = self._operands(base)
        return ops.elementwise.Pow.apply(y, x)

    def __matmul__(self, other: Any) -> Tensor:
        return ops.linalg.MatMul.apply(*_matmul_operands(self, other))

    def __rmatmul__(self, other: Any) -> Tensor:
        x, y = _matmul_operands(self, other)
        return ops.linalg.MatMul.apply(y, x)

    def __neg__(self) -> Tensor:
        return ops.elementwise.Neg.apply(self)

    # Comparisons: not differentiable, they return boolean tensors.
    def _compare(self, other: Any, name: str) -> Tensor:
        if isinstance(other, Tensor) and type(other.data) is not type(self.data):
            raise RuntimeError(f"{name}: inputs are on different devices ({self.device}, {other.device})")
        x, y = self._operands(other)
        xp = backend.get_array_module(self.data)
        return Tensor._make(getattr(xp, name)(x.data, y.data), False)

    def __lt__(self, other: Any) -> Tensor:
        return self._compare(other, "less")

    def __le__(self, other: Any) -> Tensor:
        return self._compare(other, "less_equal")

    def __gt__(self, other: Any) -> Tensor:
        return self._compare(other, "greater")

    def __ge__(self, other: Any) -> Tensor:
        return self._compare(other, "greater_equal")

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return self._compare(other, "equal")

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return self._compare(other, "not_equal")

    __hash__ = object.__hash__  # tensors are hashed by identity, as in PyTorch

    def __getitem__(self, index: Any) -> Tensor:
        """x[index] with PyTorch's rules (ops/indexing.py): ints, slices, None, ..., integer tensors,
        lists and arrays, bool masks. An element picked twice gets both gradients."""
        basic, advanced = ops.indexing.split_index(index, self.device)
        return ops.indexing.GetItem.apply(self, basic=basic, advanced=advanced)

    # ----------------------------------------------------------------------------------------------
    # Elementwise functions (on integers, exp, log, sqrt, ... give float32, the default float, as in PyTorch)
    def exp(self) -> Tensor:
        return ops.elementwise.Exp.apply(self)

    def log(self) -> Tensor:
        return ops.elementwise.Log.apply(self)

    def sqrt(self) -> Tensor:
        return ops.elementwise.Sqrt.apply(self)

    def rsqrt(self) -> Tensor:
        """1 / sqrt(x)."""
        return ops.elementwise.Rsqrt.apply(self)

    def square(self) -> Tensor:
        return ops.elementwise.Square.apply(self)

    def abs(self) -> Tensor:
        return ops.elementwise.Abs.apply(self)

    def sign(self) -> Tensor:
        """-1, 0 or 1 (its gradient is 0)."""
        return ops.elementwise.Sign.apply(self)

    def sin(self) -> Tensor:
        return ops.elementwise.Sin.apply(self)

    def cos(self) -> Tensor:
        return ops.elementwise.Cos.apply(self)

    def erf(self) -> Tensor:
        """The error function, 2/sqrt(pi) * integral from 0 to x of exp(-t**2) dt."""
        return ops.elementwise.Erf.apply(self)

    def tanh(self) -> Tensor:
        return ops.activations.Tanh.apply(self)

    def sigmoid(self) -> Tensor:
        return ops.activations.Sigmoid.apply(self)

    def relu(self) -> Tensor:
        return ops.activations.ReLU.apply(self)

    def gelu(self, approximate: str = "none") -> Tensor:
        """F.gelu: the exact GELU x * Phi(x) by default, approximate="tanh" for GPT-2's form."""
        return ops.activations.gelu_op(approximate).apply(self)

    def maximum(self, other: Any) -> Tensor:
        """The larger of the two, elementwise (a tie gives each half the gradient)."""
        return ops.elementwise.Maximum.apply(*self._operands(other))

    def minimum(self, other: Any) -> Tensor:
        """The smaller of the two, elementwise (a tie gives each half the gradient)."""
        return ops.elementwise.Minimum.apply(*self._operands(other))

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:
        """Each element limited to [min, max]; either bound may be None, a number or a tensor."""
        if min is None and max is None:
            raise RuntimeError("clamp: at least one of min and max must not be None")
        x = self
        if x.dtype.kind != "f" and any(isinstance(b, float) or isinstance(b, Tensor) and b.dtype.kind == "f"
                                       for b in (min, max)):
            x = x.astype(np.float32)  # clamp(int_tensor, 0.5) is float32, as in PyTorch
        return ops.elementwise.Clamp.apply(x, _bound(x, min, low=True), _bound(x, max, low=False))

    clip = clamp

    def masked_fill(self, mask: Any, value: float) -> Tensor:
        """Where `mask` is True, `value` (e.g. -inf for attention); elsewhere this tensor."""
        mask = _raw(mask, self.device).astype(bool, copy=False)  # backward negates it: ~ must be logical
        return ops.elementwise.MaskedFill.apply(self, mask=mask, value=value)

    # ----------------------------------------------------------------------------------------------
    # Reductions: PyTorch's `dim` (an int, a sequence, or None for every axis) and `keepdim`; NumPy's
    # `axis` and `keepdims` are accepted as aliases.
    def sum(self, dim: Dims = None, keepdim: bool = False, *, dtype: Any = None, axis: Dims = None,
            keepdims: bool | None = None) -> Tensor:
        """The sum over `dim`; integers and bools sum to int64, as in PyTorch."""
        axes, keepdim = _reduction("sum", self.ndim, dim, keepdim, axis, keepdims)
        return ops.reduce.Sum.apply(self._as(dtype), axis=axes, keepdims=keepdim)

    def mean(self, dim: Dims = None, keepdim: bool = False, *, dtype: Any = None, axis: Dims = None,
             keepdims: bool | None = None) -> Tensor:
        """The mean over `dim` (float tensors only, as in PyTorch, unless `dtype` converts first)."""
        axes, keepdim = _reduction("mean", self.ndim, dim, keepdim, axis, keepdims)
        return ops.reduce.Mean.apply(self._as(dtype), axis=axes, keepdims=keepdim)

    def amax(self, dim: Dims = (), keepdim: bool = False, *, axis: Dims = None, keepdims: bool | None = None) -> Tensor:
        """The largest value over `dim` (every axis by default); ties share the gradient."""
        axes, keepdim = _reduction("amax", self.ndim, dim, keepdim, axis, keepdims)
        return ops.reduce.Amax.apply(self, axis=axes, keepdims=keepdim)

    def amin(self, dim: Dims = (), keepdim: bool = False, *, axis: Dims = None, keepdims: bool | None = None) -> Tensor:
        """The smallest value over `dim` (every axis by default); ties share the gradient."""
        axes, keepdim = _reduction("amin", self.ndim, dim, keepdim, axis, keepdims)
        return ops.reduce.Amax.apply(self, axis=axes, keepdims=keepdim, smallest=True)

    def max(self, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None, keepdims: bool | None = None) -> Any:
        """As PyTorch: `x.max()` is the largest element; `x.max(dim)` is the named tuple (values, indices)
        along `dim`, the gradient going to the index; `x.max(other_tensor)` is `maximum`."""
        if isinstance(dim, Tensor):
            return self.maximum(dim)
        return self._extreme("max", dim, keepdim, axis, keepdims)

    def min(self, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None, keepdims: bool | None = None) -> Any:
        """As `max`, for the smallest: a tensor, the named tuple (values, indices) along `dim`, or `minimum`."""
        if isinstance(dim, Tensor):
            return self.minimum(dim)
        return self._extreme("min", dim, keepdim, axis, keepdims)

    def _extreme(self, op: str, dim: Any, keepdim: bool, axis: Any, keepdims: bool | None) -> Any:
        dim, keepdim = _dim_alias(op, dim, keepdim, axis, keepdims)
        smallest = op == "min"
        if dim is None:  # every element: a NaN wins, ties share the gradient (PyTorch's max())
            return ops.reduce.Amax.apply(self, axis=None, keepdims=False, smallest=smallest, nan_wins=True)
        d = _dim(op, dim, self.ndim)
        x = self if self.ndim else self.reshape(1)
        xp = backend.get_array_module(x.data)
        if x.shape[d] == 0:
            raise IndexError(f"{op}: cannot take the {op} over dim {dim} of size 0 (shape {self.shape})")
        indices = xp.expand_dims((xp.argmin if smallest else xp.argmax)(x.data, axis=d), d)  # a NaN wins
        values = ops.reduce.TakeAlongDim.apply(x, indices=indices, axis=d, keepdims=keepdim)
        indices = Tensor._make((indices if keepdim else indices.squeeze(d)).astype(np.int64), False)
        if self.ndim == 0:
            values, indices = values.reshape(()), indices.reshape(())
        return ops.reduce.ValuesIndices(values, indices)

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
        xp = backend.get_array_module(self.data)
        if self.numel() == 0:
            raise IndexError(f"{op}: an empty tensor {self.shape} has no {op[3:]}imum")
        if dim is None:
            index = getattr(xp, op)(self.data.reshape(-1))
            return Tensor._make(index.astype(np.int64).reshape((1,) * self.ndim if keepdim else ()), False)
        d = _dim(op, dim, self.ndim)
        index = getattr(xp, op)(self.data.reshape(1) if self.ndim == 0 else self.data, axis=d)
        index = xp.expand_dims(index, d) if keepdim and self.ndim else index
        return Tensor._make(index.astype(np.int64).reshape(index.shape if self.ndim else ()), False)

    def var(self, dim: Dims = None, unbiased: bool | None = None, keepdim: bool = False, *,
            correction: float | None = None, axis: Dims = None, keepdims: bool | None = None) -> Tensor:
        """The variance over `dim`, sum((x - mean)**2) / (n - correction): PyTorch's default correction=1
        is the unbiased estimate; correction=0 (or unbiased=False) the population variance, as numpy.var."""
        return self._spread(ops.reduce.Var, "var", dim, unbiased, keepdim, correction, axis, keepdims)

    def std(self, dim: Dims = None, unbiased: bool | None = None, keepdim: bool = False, *,
            correction: float | None = None, axis: Dims = None, keepdims: bool | None = None) -> Tensor:
        """The standard deviation sqrt(var) over `dim`, with var's `correction` (1 by default, as PyTorch)."""
        return self._spread(ops.reduce.Std, "std", dim, unbiased, keepdim, correction, axis, keepdims)

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
        return ops.reduce.Prod.apply(self._as(dtype), axis=axes, keepdims=keepdim)

    def cumsum(self, dim: int | None = None, *, dtype: Any = None, axis: int | None = None) -> Tensor:
        """Running sums along `dim`: y_i = x_0 + ... + x_i."""
        dim, _ = _dim_alias("cumsum", dim, False, axis, None)
        if dim is None:
            raise TypeError("cumsum: pass dim, as PyTorch requires")
        x = self._as(dtype)
        if self.ndim == 0:
            return ops.reduce.CumSum.apply(x.reshape(1), axis=_dim("cumsum", dim, 0)).reshape(())
        return ops.reduce.CumSum.apply(x, axis=_dim("cumsum", dim, self.ndim))

    def logsumexp(self, dim: Dims = None, keepdim: bool = False, *, axis: Dims = None,
                  keepdims: bool | None = None) -> Tensor:
        """log(sum(exp(x))) over `dim`, without overflow (the max is taken out first)."""
        axes, keepdim = _reduction("logsumexp", self.ndim, dim, keepdim, axis, keepdims)
        return ops.reduce.LogSumExp.apply(self, axis=axes, keepdims=keepdim)

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
        return ops.reduce.Norm.apply(x, p=float(p), axis=axes, keepdims=keepdim)

    def softmax(self, dim: int | None = None, dtype: Any = None, *, axis: int | None = None) -> Tensor:
        """exp(x) / sum(exp(x)) along `dim` (the last by default)."""
        return self._along(ops.nn.Softmax, "softmax", dim, dtype, axis)

    def log_softmax(self, dim: int | None = None, dtype: Any = None, *, axis: int | None = None) -> Tensor:
        """log(softmax(x)) along `dim` (the last by default), computed as x - logsumexp(x)."""
        return self._along(ops.nn.LogSoftmax, "log_softmax", dim, dtype, axis)

    def _along(self, op_class: Any, op: str, dim: int | None, dtype: Any, axis: int | None) -> Tensor:
        dim, _ = _dim_alias(op, dim, False, axis, None)
        x, d = self._as(dtype), _dim(op, -1 if dim is None else dim, self.ndim)
        if self.ndim == 0:  # one element: softmax is 1, log_softmax 0
            return op_class.apply(x.reshape(1), axis=0).reshape(())
        return op_class.apply(x, axis=d)

    def _as(self, dtype: Any) -> Tensor:
        """This tensor converted to `dtype` first (the `dtype=` of sum, mean, softmax, ...), or itself."""
        return self if dtype is None else self.astype(dtype)


def _is_backend_array(data: Any) -> bool:
    try:
        backend.backend_of(data)
    except TypeError:
        return False
    return not isinstance(data, np.generic)


def _true_division(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Integer / integer is a true division, in the default float32 (NumPy would give float64)."""
    if a.dtype.kind == "f":
        return a, b
    return a._cast(DEFAULT_FLOAT), b._cast(DEFAULT_FLOAT)


def _matmul_operands(x: Tensor, other: Any) -> tuple[Tensor, Tensor]:
    """(x, other) for matmul: two tensors must share a dtype, as in PyTorch; an array is promoted with x."""
    if isinstance(other, Tensor) and other.dtype != x.dtype:
        raise TypeError(f"matmul: both operands must have the same dtype, got {x.dtype} and {other.dtype}; "
                        "convert one with .to(dtype)")
    return x._operands(other)


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
    xp = backend.get_array_module(x.data)
    if isinstance(bound, Tensor):
        return bound if bound.dtype == x.dtype else bound.astype(x.dtype)
    if bound is None:
        extremes = np.finfo(x.dtype) if x.dtype.kind == "f" else np.iinfo(x.dtype)
        bound = (-np.inf if low else np.inf) if x.dtype.kind == "f" else (extremes.min if low else extremes.max)
    return Tensor._make(xp.asarray(bound, dtype=x.dtype), False)


def _raw(value: Any, device: str) -> Any:
    """Integer ids, targets, masks and conditions: a Tensor's array, or an array moved to `device`."""
    if isinstance(value, Tensor):
        return backend.to_device(value.data, device)
    if _is_backend_array(value):
        return backend.to_device(value, device)
    return backend.to_device(np.asarray(value), device)


# The ops import Tensor (above) from this module; Tensor's methods call them.
from minigrad import ops  # noqa: E402
