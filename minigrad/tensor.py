"""Tensor: an array that remembers how it was computed, the first of the engine's two classes.

A `Tensor` wraps a backend array (`.data`) and, when it was computed from tensors that require grad,
remembers the `Function` that made it (`._ctx`; function.py). References only point from outputs to
inputs, never back, so a graph is freed by reference counting alone, with no cycles for the garbage
collector to find. Its operators and methods (`+`, `@`, `exp`, `sum`, `reshape`, ...) each call one op.

Read next: function.py (Function, one op), then autograd.py (the backward pass).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from minigrad import autograd, backend

if TYPE_CHECKING:
    from minigrad.function import Function

# The dtypes the engine computes in. float32 is the default; float64 is for gradient checks.
FLOAT_DTYPES = (np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


def _check_dtype(dtype: np.dtype) -> np.dtype:
    if dtype.kind not in "fiub" or (dtype.kind == "f" and dtype not in FLOAT_DTYPES):
        raise TypeError(f"unsupported dtype {dtype}: use a float (float32, float64), integer or bool dtype")
    return dtype


class ShapeError(ValueError):
    """A shape mismatch, with a message naming the op and the shapes."""


class Tensor:
    """An n-dimensional array that remembers how it was computed, for reverse-mode autodiff.

    `Tensor(data, requires_grad=False, dtype=None, device=None)`: Python floats and float arrays
    become float32 unless `dtype` says otherwise; integers and bools keep their dtype.
    """

    __slots__ = ("data", "grad", "requires_grad", "_ctx", "_retains_grad", "name", "__weakref__")
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
            dtype = _check_dtype(np.dtype(dtype))
        elif data.dtype.kind == "f":
            dtype = np.dtype(np.float32)
        else:
            dtype = _check_dtype(data.dtype)
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
        return self.shape[0]

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

    def numpy(self) -> np.ndarray:
        """A host NumPy copy of the data (never a view that aliases a GPU buffer)."""
        return backend.as_numpy(self.data).copy()

    def item(self) -> float | int | bool:
        if self.data.size != 1:
            raise ValueError(f"item(): only a one-element tensor has an item, not shape {self.shape}")
        return self.data.item()

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def detach(self) -> Tensor:
        """The same data, cut off from the graph (no copy)."""
        return Tensor._make(self.data, False)

    def to(self, device: Any) -> Tensor:
        """A copy on `device` ('cpu', 'cuda', 'cuda:N', 'strict'); the tensor itself when already there.

        Differentiable: the gradient flows back to the original device.
        """
        device = backend.canonical_device(device)
        if device == self.device:
            return self
        backend.backend_for_device(device)  # fails early, naming what to install
        return ops.shape.ToDevice.apply(self, device=device)

    def astype(self, dtype: Any) -> Tensor:
        """A copy converted to `dtype` (differentiable between float dtypes)."""
        return ops.elementwise.Cast.apply(self, dtype=_check_dtype(np.dtype(dtype)))

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
    # Operators (NumPy broadcasting; Python scalars on either side)
    def _lift(self, other: Any) -> Tensor:
        """A scalar or array operand as a constant tensor on this tensor's device.

        A Python number takes this tensor's dtype when it is a float (as NumPy 2 does); a Python float
        next to an integer tensor becomes float32, the default float.
        """
        if isinstance(other, Tensor):
            return other
        float_dtype = self.dtype if self.dtype.kind == "f" else None
        if isinstance(other, (int, float, bool)):
            xp = backend.get_array_module(self.data)
            dtype = float_dtype or (np.float32 if isinstance(other, float) else None)
            return Tensor._make(xp.asarray(other, dtype=dtype), False)
        return Tensor(other, device=self.device, dtype=float_dtype)

    def _pair(self, other: Any) -> tuple[Tensor, Tensor]:
        """(self, other) ready for a binary op: an integer or bool operand meeting a float one takes its
        dtype, as in PyTorch (NumPy would turn int64 and float32 into float64)."""
        other = self._lift(other)
        if self.dtype.kind == "f" and other.dtype.kind != "f":
            return self, Tensor._make(other.data.astype(self.dtype), False)
        if other.dtype.kind == "f" and self.dtype.kind != "f":
            return Tensor._make(self.data.astype(other.dtype), False), other
        return self, other

    def __add__(self, other: Any) -> Tensor:
        return ops.elementwise.Add.apply(*self._pair(other))

    def __radd__(self, other: Any) -> Tensor:
        x, y = self._pair(other)
        return ops.elementwise.Add.apply(y, x)

    def __sub__(self, other: Any) -> Tensor:
        return ops.elementwise.Sub.apply(*self._pair(other))

    def __rsub__(self, other: Any) -> Tensor:
        x, y = self._pair(other)
        return ops.elementwise.Sub.apply(y, x)

    def __mul__(self, other: Any) -> Tensor:
        return ops.elementwise.Mul.apply(*self._pair(other))

    def __rmul__(self, other: Any) -> Tensor:
        x, y = self._pair(other)
        return ops.elementwise.Mul.apply(y, x)

    def __truediv__(self, other: Any) -> Tensor:
        return ops.elementwise.Div.apply(*_float_division(*self._pair(other)))

    def __rtruediv__(self, other: Any) -> Tensor:
        x, y = self._pair(other)
        return ops.elementwise.Div.apply(*_float_division(y, x))

    def __pow__(self, exponent: Any) -> Tensor:
        if isinstance(exponent, (int, float)):
            return ops.elementwise.PowScalar.apply(self, exponent=exponent)
        return ops.elementwise.Pow.apply(*self._pair(exponent))

    def __rpow__(self, base: Any) -> Tensor:
        x, y = self._pair(base)
        return ops.elementwise.Pow.apply(y, x)

    def __matmul__(self, other: Any) -> Tensor:
        return ops.linalg.MatMul.apply(*self._pair(other))

    def __rmatmul__(self, other: Any) -> Tensor:
        x, y = self._pair(other)
        return ops.linalg.MatMul.apply(y, x)

    def __neg__(self) -> Tensor:
        return ops.elementwise.Neg.apply(self)

    # Comparisons: not differentiable, they return boolean tensors.
    def _compare(self, other: Any, name: str) -> Tensor:
        other = self._lift(other)
        if type(other.data) is not type(self.data):
            raise RuntimeError(f"{name}: inputs are on different devices ({self.device}, {other.device})")
        xp = backend.get_array_module(self.data)
        return Tensor._make(getattr(xp, name)(self.data, other.data), False)

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
        return ops.shape.GetItem.apply(self, index=ops.shape.device_index(index, self.device))

    # ----------------------------------------------------------------------------------------------
    # Elementwise functions
    def exp(self) -> Tensor:
        return ops.elementwise.Exp.apply(self)

    def log(self) -> Tensor:
        return ops.elementwise.Log.apply(self)

    def sqrt(self) -> Tensor:
        return ops.elementwise.Sqrt.apply(self)

    def tanh(self) -> Tensor:
        return ops.elementwise.Tanh.apply(self)

    def sigmoid(self) -> Tensor:
        return ops.elementwise.Sigmoid.apply(self)

    def relu(self) -> Tensor:
        return ops.elementwise.ReLU.apply(self)

    def gelu(self) -> Tensor:
        return ops.elementwise.GELU.apply(self)

    def abs(self) -> Tensor:
        return ops.elementwise.Abs.apply(self)

    def masked_fill(self, mask: Any, value: float) -> Tensor:
        """Where `mask` is True, `value` (e.g. -inf for attention); elsewhere this tensor."""
        mask = _raw(mask, self.device).astype(bool, copy=False)  # backward negates it: ~ must be logical
        return ops.elementwise.MaskedFill.apply(self, mask=mask, value=value)

    # Reductions: NumPy's axis / keepdims.
    def sum(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        return ops.reduce.Sum.apply(self, axis=_axes(axis, self.ndim), keepdims=keepdims)

    def mean(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        return ops.reduce.Mean.apply(self, axis=_axes(axis, self.ndim), keepdims=keepdims)

    def max(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        return ops.reduce.Max.apply(self, axis=_axes(axis, self.ndim), keepdims=keepdims)

    def var(self, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Tensor:
        """Population variance (divides by n), as `numpy.var`."""
        return ops.reduce.Var.apply(self, axis=_axes(axis, self.ndim), keepdims=keepdims)

    def softmax(self, axis: int = -1) -> Tensor:
        return ops.nn.Softmax.apply(self, axis=axis)

    def log_softmax(self, axis: int = -1) -> Tensor:
        return ops.nn.LogSoftmax.apply(self, axis=axis)

    # Shapes
    def reshape(self, *shape: Any) -> Tensor:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return ops.shape.Reshape.apply(self, shape=shape)

    view = reshape

    def transpose(self, *axes: Any) -> Tensor:
        """Permute the axes (NumPy semantics: no arguments reverses them)."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        return ops.shape.Transpose.apply(self, axes=tuple(a % self.ndim for a in axes) if self.ndim else ())

    def swapaxes(self, axis1: int, axis2: int) -> Tensor:
        axes = list(range(self.ndim))
        axes[axis1], axes[axis2] = axes[axis2], axes[axis1]
        return self.transpose(*axes)

    @property
    def T(self) -> Tensor:
        return self.transpose()


def _is_backend_array(data: Any) -> bool:
    try:
        backend.backend_of(data)
    except TypeError:
        return False
    return not isinstance(data, np.generic)


def _float_division(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """Integer / integer is a float division: both become float32 (NumPy would give float64)."""
    if a.dtype.kind == "f":
        return a, b
    return Tensor._make(a.data.astype(np.float32), False), Tensor._make(b.data.astype(np.float32), False)


def _axes(axis: Any, ndim: int) -> tuple[int, ...] | None:
    """Normalise `axis` to a sorted tuple of non-negative axes (None: all), checking the range."""
    if axis is None:
        return None
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    for a in axes:
        if not -ndim <= a < max(ndim, 1):
            raise ValueError(f"axis {a} is out of range for a tensor with {ndim} dimensions")
    return tuple(sorted(a % ndim if ndim else 0 for a in axes))


def _raw(value: Any, device: str) -> Any:
    """Integer ids, targets, masks and conditions: a Tensor's array, or an array moved to `device`."""
    if isinstance(value, Tensor):
        return backend.to_device(value.data, device)
    if _is_backend_array(value):
        return backend.to_device(value, device)
    return backend.to_device(np.asarray(value), device)


# The ops import Function (above) from this module; Tensor's methods call them.
from minigrad import ops  # noqa: E402
