"""Tensor: an array that remembers how it was computed, the first of the engine's two classes.

A `Tensor` wraps a backend array (`.array`) and, when it was computed from tensors that require grad,
remembers the `Function` that made it (`._ctx`; function.py). References only point from outputs to
inputs, never back, so a graph is freed by reference counting alone, with no cycles for the garbage
collector to find. Its operators and methods (`+`, `@`, `exp`, `sum`, `reshape`, ...) each call one op; the
ops import Tensor, so every method reaches them through the package (`minigrad.ops....`) when it is called.

The class is written in six files of this package, one job each; the other five hold its base classes:
- here: making a tensor, its attributes, backward, the operators (with PyTorch's type promotion from
  dtypes.py) and indexing;
- math.py (`MathMethods`): the elementwise functions, the reductions and softmax;
- convert.py (`ConversionMethods`): to another dtype or device, to Python values and to NumPy;
- inplace.py (`InPlaceMethods`): in-place updates, `w -= lr * w.grad`, `zero_()`, ...;
- shape.py (`ShapeMethods`): reshape, permute, transpose, squeeze, expand, split, gather, ...;
- hooks.py (`HookMethods`): register_hook and retain_grad.
The rest of PyTorch's surface (log1p, //, `.data`, `.shape` as a `Size`, ...) is not the engine's: it is attached
to the class from above when minigrad is imported (../compat/tensor_methods.py), so this file imports nothing from
compat/ (its `shape` replaces the plain tuple below with the same sizes as a `Size`, a tuple that prints as PyTorch's).

Read next: ../core/function.py (Function, one op), then ../core/autograd.py (the backward pass).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

import minigrad
from minigrad.core import autograd, backend
from minigrad.core.dtypes import FLOAT_DTYPES, check_dtype, get_default_dtype, is_number, result_type
from minigrad.tensor.convert import ConversionMethods, seed_gradient
from minigrad.tensor.hooks import HookMethods
from minigrad.tensor.inplace import InPlaceMethods
from minigrad.tensor.math import MathMethods
from minigrad.tensor.shape import ShapeMethods

if TYPE_CHECKING:
    from minigrad.core.function import Function

__all__ = ["FLOAT_DTYPES", "ShapeError", "Tensor"]


class ShapeError(ValueError):
    """A shape mismatch, with a message naming the op and the shapes."""


class Tensor(MathMethods, ConversionMethods, InPlaceMethods, ShapeMethods, HookMethods):
    """An n-dimensional array that remembers how it was computed, for reverse-mode autodiff.

    `Tensor(data, requires_grad=False, dtype=None, device=None)`: Python floats and float arrays
    become float32 unless `dtype` says otherwise; integers and bools keep their dtype.
    """

    # _version counts in-place updates (inplace.py), so that backward can refuse a changed input.
    __slots__ = ("array", "grad", "requires_grad", "_ctx", "_retains_grad", "_hooks", "_version", "name", "__weakref__")
    __array_priority__ = 1000  # so that `numpy_array + tensor` calls Tensor.__radd__

    def __init__(self, data: Any, requires_grad: bool = False, dtype: Any = None, device: Any = None) -> None:
        if isinstance(data, Tensor):
            data = data.array
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
            dtype = get_default_dtype()
        else:
            dtype = check_dtype(data.dtype)
        if data.dtype != dtype:
            data = data.astype(dtype)
        if requires_grad and dtype.kind != "f":
            raise TypeError(f"only float tensors can require grad, not {dtype}")
        self.array = backend.to_device(data, device)
        if self.array is given:
            # Never alias the caller's array (torch.tensor copies too): neither an optimizer step
            # nor a later change to the array may reach across.
            self.array = self.array.copy()
        self.grad: Tensor | None = None
        self.requires_grad = requires_grad
        self._ctx: Function | None = None
        self._retains_grad = False
        self._hooks: list | None = None  # register_hook (hooks.py)
        self._version = 0
        self.name: str | None = None

    @classmethod
    def _make(cls, data: Any, requires_grad: bool) -> Tensor:
        """The engine's fast constructor: `data` is already a backend array of the right dtype."""
        out = object.__new__(Tensor)
        if not hasattr(data, "shape") or isinstance(data, np.generic):  # NumPy reductions give scalars
            data = backend.get_array_module(data).asarray(data)
        out.array = data
        out.grad = None
        out.requires_grad = requires_grad
        out._ctx = None
        out._retains_grad = False
        out._hooks = None
        out._version = 0
        out.name = None
        return out

    # ----------------------------------------------------------------------------------------------
    # Attributes
    @property
    def shape(self) -> tuple[int, ...]:
        return self.array.shape

    @property
    def ndim(self) -> int:
        return self.array.ndim

    @property
    def dtype(self) -> np.dtype:
        return self.array.dtype

    @property
    def device(self) -> str:
        return backend.device_of(self.array)

    @property
    def is_leaf(self) -> bool:
        return self._ctx is None

    @property
    def grad_fn(self) -> Function | None:
        """The op that made this tensor (None for leaves and for tensors made under no_grad)."""
        return self._ctx

    def numel(self) -> int:
        return int(self.array.size)

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

    def detach(self) -> Tensor:
        """The same data, cut off from the graph (no copy)."""
        return Tensor._make(self.array, False)

    def clone(self) -> Tensor:
        """A copy in its own memory; differentiable (the gradient passes through unchanged)."""
        return minigrad.ops.shape.Clone.apply(self)

    def contiguous(self) -> Tensor:
        """The tensor itself when its elements lie in memory in row-major order; otherwise a row-major copy (which
        `view` can reshape), differentiable, as in PyTorch."""
        return self if self.array.flags.c_contiguous else self.clone()

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Switch gradient tracking of this leaf on or off, in place; returns the tensor."""
        if self._ctx is not None and not requires_grad:
            raise RuntimeError("requires_grad_: only leaf tensors can change requires_grad; use detach() "
                               "for a copy of this one outside the graph")
        if requires_grad and self.dtype.kind != "f":
            raise TypeError(f"requires_grad_: only float tensors can require grad, not {self.dtype}")
        self.requires_grad = requires_grad
        return self

    def zero_grad(self) -> None:
        self.grad = None

    # ----------------------------------------------------------------------------------------------
    # The backward pass
    def backward(self, gradient: Any = None, retain_graph: bool | None = None, create_graph: bool = False,
                 *, grad: Any = None) -> None:
        """Compute the gradient of this tensor with respect to every leaf that requires grad.

        A scalar output needs no `gradient`; otherwise `gradient` (PyTorch's name; `grad=` too: a Tensor
        or array shaped like this tensor) is the upstream gradient, dL/dself. Gradients accumulate into each
        leaf's `.grad`.
        After the call the graph's saved buffers are released unless `retain_graph=True`.
        With `create_graph=True`, each `.grad` is a tensor with a graph of its own, which can be
        differentiated again (higher_order.py); `retain_graph` then defaults to True, as in PyTorch.
        `mg.grad` returns gradients instead of accumulating them.
        """
        seed = seed_gradient(self, gradient if grad is None else grad, create_graph)
        autograd.backward(self, seed, create_graph if retain_graph is None else retain_graph, create_graph=create_graph)

    # ----------------------------------------------------------------------------------------------
    # Operators (NumPy broadcasting; Python numbers on either side; PyTorch's result dtype)
    def _operands(self, other: Any) -> tuple[Tensor, Tensor]:
        """(self, other) as two tensors of one dtype, `result_type(self, other)` (dtypes.py), for a binary op.

        A number becomes a 0-d array of that dtype. An array counts as a tensor of its own dtype (as in
        PyTorch, a float64 NumPy array widens a float32 tensor). A list or tuple is refused, as PyTorch
        refuses it. A float tensor that changes dtype does so through Cast, so its gradient flows back.
        """
        if isinstance(other, (list, tuple)):
            raise TypeError(_sequence_operand(other))
        if isinstance(other, Tensor):
            if other.dtype == self.dtype:
                return self, other  # the common case, decided at once
        elif isinstance(other, (int, float)) and self.dtype.kind == "f":  # x * 0.5 keeps x's dtype
            return self, Tensor._make(backend.get_array_module(self.array).asarray(other, dtype=self.dtype), False)
        elif not is_number(other):
            other = Tensor(other, device=self.device, dtype=getattr(other, "dtype", None))
        dtype = result_type(self, other)
        if is_number(other):  # astype, not asarray(dtype=): an int too large for uint8 wraps, as in PyTorch
            number = backend.get_array_module(self.array).asarray(other).astype(dtype)
            return self._cast(dtype), Tensor._make(number, False)
        return self._cast(dtype), other._cast(dtype)

    def __add__(self, other: Any) -> Tensor:
        return minigrad.ops.elementwise.Add.apply(*self._operands(other))

    def __radd__(self, other: Any) -> Tensor:
        x, y = self._operands(other)
        return minigrad.ops.elementwise.Add.apply(y, x)

    def __sub__(self, other: Any) -> Tensor:
        return minigrad.ops.elementwise.Sub.apply(*self._operands(other))

    def __rsub__(self, other: Any) -> Tensor:
        x, y = self._operands(other)
        return minigrad.ops.elementwise.Sub.apply(y, x)

    def __mul__(self, other: Any) -> Tensor:
        return minigrad.ops.elementwise.Mul.apply(*self._operands(other))

    def __rmul__(self, other: Any) -> Tensor:
        x, y = self._operands(other)
        return minigrad.ops.elementwise.Mul.apply(y, x)

    def __truediv__(self, other: Any) -> Tensor:
        return minigrad.ops.elementwise.Div.apply(*_true_division(*self._operands(other)))

    def __rtruediv__(self, other: Any) -> Tensor:
        x, y = self._operands(other)
        return minigrad.ops.elementwise.Div.apply(*_true_division(y, x))

    def __pow__(self, exponent: Any) -> Tensor:
        if isinstance(exponent, (int, float)):  # in PyTorch's result dtype: a boolean ** 2 is int64
            x = self if self.dtype.kind == "f" else self._cast(result_type(self, exponent))
            return minigrad.ops.elementwise.PowScalar.apply(x, exponent=exponent)
        return minigrad.ops.elementwise.Pow.apply(*self._operands(exponent))

    def __rpow__(self, base: Any) -> Tensor:
        x, y = self._operands(base)
        return minigrad.ops.elementwise.Pow.apply(y, x)

    def __matmul__(self, other: Any) -> Tensor:
        return minigrad.ops.linalg.MatMul.apply(*_matmul_operands(self, other))

    def __rmatmul__(self, other: Any) -> Tensor:
        x, y = _matmul_operands(self, other)
        return minigrad.ops.linalg.MatMul.apply(y, x)

    def __neg__(self) -> Tensor:
        return minigrad.ops.elementwise.Neg.apply(self)

    # Comparisons (<, ==, ...) and logical operators (&, |, ~), which return boolean tensors: math.py.

    def __getitem__(self, index: Any) -> Tensor:
        """x[index] with PyTorch's rules (ops/indexing.py): ints, slices, None, ..., integer tensors,
        lists and arrays, bool masks. An element picked twice gets both gradients."""
        basic, advanced = minigrad.ops.indexing.split_index(index, self.device)
        return minigrad.ops.indexing.GetItem.apply(self, basic=basic, advanced=advanced)

    def masked_fill(self, mask: Any, value: Any) -> Tensor:
        """Where `mask` is True, `value` (a number, e.g. -inf for attention, or a 0-d tensor); elsewhere this tensor."""
        mask = _raw(mask, self.device).astype(bool, copy=False)  # backward negates it: ~ must be logical
        if isinstance(value, Tensor):
            if value.ndim != 0:
                raise RuntimeError(f"masked_fill: value must be a number or a 0-d tensor, not shape {value.shape}")
            if value.requires_grad:  # PyTorch differentiates the value too: where(mask, value, x) does
                return minigrad.ops.elementwise.Where.apply(value._cast(self.dtype), self, cond=mask)
            value = value.item()  # one scalar read, as for any number
        return minigrad.ops.elementwise.MaskedFill.apply(self, mask=mask, value=value)


def _sequence_operand(other: list | tuple) -> str:
    """The error for `tensor - [1, 2]` (PyTorch refuses it too), with the likely cause when it is max's tuple."""
    if hasattr(other, "values") and hasattr(other, "indices"):
        return ("unsupported operand: x.max(dim) and x.min(dim) return the named tuple (values, indices), as in "
                "PyTorch: use x.max(dim).values (or x.amax(dim))")
    return (f"unsupported operand: a Tensor and a {type(other).__name__}; as in PyTorch, make it a tensor "
            "first: mg.tensor(...)")


def _is_backend_array(data: Any) -> bool:
    try:
        backend.backend_of(data)
    except TypeError:
        return False
    return not isinstance(data, np.generic)


def _true_division(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Integer / integer is a true division, in the default float (NumPy would give float64)."""
    if a.dtype.kind == "f":
        return a, b
    return a._cast(get_default_dtype()), b._cast(get_default_dtype())


def _matmul_operands(x: Tensor, other: Any) -> tuple[Tensor, Tensor]:
    """(x, other) for matmul: two tensors must share a dtype, as in PyTorch; an array is promoted with x."""
    if isinstance(other, Tensor) and other.dtype != x.dtype:
        raise TypeError(f"matmul: both operands must have the same dtype, got {x.dtype} and {other.dtype}; "
                        "convert one with .to(dtype)")
    return x._operands(other)


def _raw(value: Any, device: str) -> Any:
    """Integer ids, targets, masks and conditions: a Tensor's array, or an array moved to `device`."""
    if isinstance(value, Tensor):
        return backend.to_device(value.array, device)
    if _is_backend_array(value):
        return backend.to_device(value, device)
    return backend.to_device(np.asarray(value), device)
