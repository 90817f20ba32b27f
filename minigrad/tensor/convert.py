"""Tensor's conversions, a base class of Tensor: to another dtype or device (`to`, `float()`, `long()`, ...),
to Python values (`item()`, `float(t)`, `if loss < best:`, `for row in t:`), and to NumPy (`np.asarray(t)`).
Each follows PyTorch, down to its error messages where they help. `seed_gradient`, at the end, converts
the gradient given to `backward()` or `mg.grad` (None, a Tensor, an array) into the one backward starts from.

Only a conversion between float dtypes passes a gradient (through the Cast op); one to or from an
integer or bool dtype makes a constant, as in PyTorch. The ops import Tensor, and Tensor's class statement
needs this module first, so the methods reach the ops through the package (`minigrad.ops`) when called.

Read next: inplace.py.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

import minigrad
from minigrad.core import backend
from minigrad.core.dtypes import check_dtype

if TYPE_CHECKING:
    from minigrad.tensor.tensor import Tensor


class ConversionMethods:
    """The conversion methods of `Tensor` (tensor.py); `self` is always a Tensor."""

    __slots__ = ()

    # ----------------------------------------------------------------------------------------------
    # Another dtype or device
    def to(self, *args: Any, device: Any = None, dtype: Any = None) -> minigrad.Tensor:
        """This tensor on another device and/or with another dtype, as `torch.Tensor.to`.

        `to(device)`, `to(dtype)`, `to(device, dtype)`, `to(other)` (other's device and dtype), or keywords.
        Returns the tensor itself when nothing changes. Differentiable across devices and between float
        dtypes; a conversion to or from an integer or bool dtype passes no gradient.
        """
        for arg in args:
            if isinstance(arg, minigrad.Tensor):
                device, dtype = arg.device, arg.dtype
            elif _names_a_device(arg):
                device = arg
            else:
                dtype = arg
        y = self if dtype is None else self._cast(check_dtype(dtype))
        if device is None:
            return y
        device = backend.canonical_device(device)
        if device == y.device:
            return y
        backend.backend_for_device(device)  # fails early, naming what to install
        return minigrad.ops.shape.ToDevice.apply(y, device=device)

    def _cast(self, dtype: np.dtype) -> minigrad.Tensor:
        """This tensor as `dtype`: itself if it is already; through Cast between floats, so that the gradient
        flows back; otherwise a constant, since no gradient passes to or from integers and bools."""
        if dtype == self.dtype:
            return self
        if dtype.kind == "f" and self.dtype.kind == "f":
            return minigrad.ops.elementwise.Cast.apply(self, dtype=dtype)
        return minigrad.Tensor._make(self.array.astype(dtype), False)

    def type(self, dtype: Any = None) -> Any:
        """With no argument, the type name as PyTorch gives it ('torch.FloatTensor'); otherwise `to(dtype)`, where
        dtype may also be such a name."""
        if dtype is None:
            return "torch." + _TYPE_NAMES[self.dtype.name]
        if isinstance(dtype, type) and isinstance(getattr(dtype, "dtype", None), np.dtype):  # mg.LongTensor, ...
            dtype = dtype.dtype
        if isinstance(dtype, str) and dtype.startswith("torch.") and dtype.endswith("Tensor"):
            names = {name: key for key, name in _TYPE_NAMES.items()}
            if dtype[len("torch."):] not in names:
                raise TypeError(f"type: invalid type {dtype!r}")
            dtype = names[dtype[len("torch."):]]
        return self.to(dtype)

    def astype(self, dtype: Any) -> minigrad.Tensor:
        """A copy converted to `dtype` (NumPy's name; PyTorch's `to(dtype)` returns the tensor itself if it can)."""
        dtype = check_dtype(dtype)
        return self.clone() if dtype == self.dtype else self._cast(dtype)

    def cpu(self) -> minigrad.Tensor:
        """This tensor on the cpu (itself if it is there already), as `to("cpu")`."""
        return self.to("cpu")

    def cuda(self, device: Any = None) -> minigrad.Tensor:
        """This tensor on the GPU (`"cuda"`, or `cuda:N` for an int or a device name), as `to("cuda")`."""
        return self.to("cuda" if device is None else f"cuda:{device}" if isinstance(device, int) else device)

    # New tensors like this one: of its dtype and on its device unless told otherwise (`x.new_zeros(3)`).
    def new_tensor(self, data: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
        """A tensor of `data` (a copy), with this tensor's dtype and device by default, as torch's new_tensor."""
        return minigrad.Tensor(data, requires_grad, *self._like(dtype, device))

    def new_full(self, size: Any, fill_value: Any, dtype: Any = None, device: Any = None,
                 requires_grad: bool = False) -> Tensor:
        """A tensor of shape `size` filled with `fill_value`, with this tensor's dtype and device by default."""
        return minigrad.factories.full(size, fill_value, *self._like(dtype, device), requires_grad)

    def new_zeros(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
        return self.new_full(_size(size), 0, dtype, device, requires_grad)

    def new_ones(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
        return self.new_full(_size(size), 1, dtype, device, requires_grad)

    def new_empty(self, *size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
        """An uninitialised tensor in PyTorch; here filled with zeros (the values must not be relied on)."""
        return self.new_full(_size(size), 0, dtype, device, requires_grad)

    def _like(self, dtype: Any, device: Any) -> tuple[Any, Any]:
        """(dtype, device), this tensor's where not given (a NumPy dtype is falsy: compare with None)."""
        return self.dtype if dtype is None else dtype, self.device if device is None else device

    def nelement(self) -> int:
        """The number of elements (numel)."""
        return int(self.array.size)

    def element_size(self) -> int:
        """The bytes one element takes (4 for float32)."""
        return int(self.dtype.itemsize)

    # PyTorch's shorthands for `to(dtype)`.
    def float(self) -> minigrad.Tensor:
        return self.to(np.float32)

    def double(self) -> minigrad.Tensor:
        return self.to(np.float64)

    def half(self) -> minigrad.Tensor:
        return self.to(np.float16)

    def long(self) -> minigrad.Tensor:
        return self.to(np.int64)

    def int(self) -> minigrad.Tensor:
        return self.to(np.int32)

    def bool(self) -> minigrad.Tensor:
        return self.to(np.bool_)

    # ----------------------------------------------------------------------------------------------
    # Python values
    def item(self) -> Any:
        """The one element as a Python number."""
        if self.array.size != 1:
            raise ValueError(f"item(): only a one-element tensor has an item, not shape {self.shape}")
        return self.array.item()

    def tolist(self) -> Any:
        """The elements as (nested) Python lists of numbers; a 0-d tensor gives its number."""
        return self.numpy().tolist()

    def __bool__(self) -> bool:
        """The truth of a one-element tensor, so that `if loss < best:` works; more elements are ambiguous."""
        if self.array.size != 1:
            values = "no values" if self.array.size == 0 else "more than one value"
            raise RuntimeError(f"Boolean value of Tensor with {values} is ambiguous")
        return bool(self.array.item())

    def __float__(self) -> float:
        return float(self._python_number("float"))

    def __int__(self) -> int:
        return int(self._python_number("int"))

    def __index__(self) -> int:
        """A one-element integer tensor may stand where Python wants an int (`range(t)`, `items[t]`)."""
        if self.dtype.kind not in "iu" or self.array.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.array.item())

    def __iter__(self) -> Iterator[minigrad.Tensor]:
        """The slices along the first dim, t[0], t[1], ... (each differentiable); a 0-d tensor has none."""
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def _python_number(self, name: str) -> Any:
        if self.array.size != 1:
            raise ValueError(f"{name}(): only one-element tensors can be converted to Python scalars, "
                             f"not shape {self.shape}")
        return self.array.item()

    # ----------------------------------------------------------------------------------------------
    # NumPy
    def numpy(self) -> np.ndarray:
        """A host NumPy copy of the data (never a view that aliases a GPU buffer)."""
        return backend.as_numpy(self.array).copy()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        """`np.asarray(t)`: the data itself on the CPU, as PyTorch gives it (a copy only if asked)."""
        if self.device != "cpu":  # CuPy refuses this implicit copy to the host too: it would be a hidden, slow one
            raise TypeError(f"implicit conversion of a tensor on device '{self.device}' to a NumPy array is not "
                            "allowed; use .numpy(), an explicit copy to the host")
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        array = self.array if dtype is None else self.array.astype(dtype, copy=False)
        return array.copy() if copy else array

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        """NumPy meeting a tensor. `array += tensor` writes into the array: makemore's `p.array += -lr * p.grad`
        updates p in place, as in PyTorch. `array + tensor`, `array < tensor`: the tensor's operator (a Tensor).
        Any other NumPy function reads the tensor as `np.asarray` does (refused for one that requires grad)."""
        out = kwargs.get("out")
        if out is not None and not any(isinstance(o, minigrad.Tensor) for o in out):  # in place, into arrays
            arrays = [x.array if isinstance(x, minigrad.Tensor) else x for x in inputs]
            return getattr(ufunc, method)(*arrays, **kwargs)
        names = _OPERATORS.get(ufunc)
        if method == "__call__" and not kwargs and len(inputs) == 2 and names is not None:
            a, b = inputs  # the tensor's operator, or the reflected one when the tensor is on the right
            return getattr(a, names[0])(b) if isinstance(a, minigrad.Tensor) else getattr(b, names[1])(a)
        arrays = [np.asarray(x) if isinstance(x, minigrad.Tensor) else x for x in inputs]
        return getattr(ufunc, method)(*arrays, **kwargs)


# PyTorch's tensor type names, by dtype name (`x.type()`).
_TYPE_NAMES = {
    "float16": "HalfTensor", "float32": "FloatTensor", "float64": "DoubleTensor", "int8": "CharTensor",
    "int16": "ShortTensor", "int32": "IntTensor", "int64": "LongTensor", "uint8": "ByteTensor", "bool": "BoolTensor",
}

# Python's binary operators (the operator module's names): the arithmetic ones are those with an in-place form
# (add, iadd; `concat` has one too but no ufunc behind it), plus the comparisons, whose reflection is the mirrored
# comparison (a < b is b > a) rather than an __r...__ method.
_MIRRORED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
_BINARY = [name for name in operator.__all__ if f"i{name.rstrip('_')}" in operator.__all__ or name in _MIRRORED]


class _Probe:
    """Stands on the right of an array to learn which ufunc NumPy calls for an operator."""

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> np.ufunc:
        return ufunc


def _ufuncs_of_operators() -> dict[np.ufunc, tuple[str, str]]:
    """NumPy's ufunc behind each binary operator, asked of NumPy itself (its names change: true_divide in NumPy 1
    is divide in NumPy 2), mapped to the tensor's method when it is on the left and when it is on the right."""
    table = {}
    for name in _BINARY:
        try:
            ufunc = getattr(operator, name)(np.zeros(()), _Probe())
        except TypeError:  # an operator NumPy has no ufunc for (concat)
            continue
        base = name.rstrip("_")
        table[ufunc] = (f"__{base}__", f"__{_MIRRORED.get(base, 'r' + base)}__")
    return table


_OPERATORS = _ufuncs_of_operators()


def _size(size: tuple) -> tuple[int, ...]:
    """A size given either way, f(2, 3) or f((2, 3))."""
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else tuple(size)


def _names_a_device(arg: Any) -> bool:
    """Whether an argument of `to` is a device ('cuda:1') rather than a dtype ('float32', np.float64)."""
    if not isinstance(arg, str):
        return False
    try:
        np.dtype(arg)
    except TypeError:
        return True
    return False


def seed_gradient(y: Tensor, grad: Any, create_graph: bool, output: int | None = None) -> Any:
    """The gradient that backward starts from at `y`: ones for a scalar, else `grad` (a Tensor or an array
    shaped like y), as a backend array, or as a Tensor when the gradients record a graph of their own.

    `output` is y's position among `mg.grad`'s outputs, for the error messages (None: `y.backward()`).
    """
    from minigrad.tensor.tensor import ShapeError, Tensor, _raw  # (tensor.py imports this module)

    who, subject, arg = ("backward()", "this tensor", "grad") if output is None else \
        ("grad", f"output {output}", f"grad_outputs[{output}]")
    if not y.requires_grad:
        why = (f"it is {y.dtype}, and integers and bools (argmax's indices, comparisons) have no gradient"
               if y.dtype.kind != "f" else "it was made under no_grad(), or from tensors none of which requires grad "
               "(a gradient that does not depend on its inputs, as relu's or a linear function's, is such a constant)")
        raise RuntimeError(f"{who}: {subject} does not require grad: {why}")
    if grad is None:
        if y.array.size != 1:
            raise RuntimeError(f"{who}: {arg} can be omitted only for a scalar output, not shape {y.shape}")
        array = backend.get_array_module(y.array).ones_like(y.array)
    else:
        array = grad.array if create_graph and isinstance(grad, Tensor) else _raw(grad, y.device)
        if array.shape != y.shape:
            raise ShapeError(f"{who}: {arg} has shape {array.shape}, the tensor {y.array.shape}")
        if create_graph and isinstance(grad, Tensor):  # it may have a graph of its own: keep it
            return grad if grad.device == y.device and grad.dtype == y.dtype else grad.to(y.device, y.dtype)
        array = array.astype(y.dtype, copy=False)
    return Tensor._make(array, False) if create_graph else array
