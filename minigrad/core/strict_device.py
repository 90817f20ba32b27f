"""A strict stand-in for a GPU device, for the CPU test suite.

`StrictArray` holds a NumPy array but behaves like a CuPy array where it matters for catching bugs:
- it refuses implicit conversion to NumPy (`np.asarray(a)` raises TypeError), as CuPy does;
- it refuses to mix with NumPy arrays in arithmetic or in `xp.*` calls, as CuPy does;
- explicit scalar reads (`float(a)`, `a.item()` on one element) and `asnumpy(a)` are allowed.

`xp` is its array module: `xp.exp(a)`, `xp.zeros(...)`, `xp.add.at(...)` work on StrictArrays and
return StrictArrays. Running the engine's tests on the device ``"strict"`` therefore proves that no op
copies data to the host behind the user's back, without needing a GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np


class HostLeakError(TypeError):
    """Raised when device data would silently become a NumPy array."""


def _unwrap(value: Any) -> Any:
    """StrictArray -> its NumPy array; a NumPy array (a host array) is refused, like CuPy refuses it."""
    if isinstance(value, StrictArray):
        return value._array
    if isinstance(value, np.ndarray):
        raise HostLeakError(
            f"a host NumPy array {value.shape} met a device array: move it with Tensor.to(device) first"
        )
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap(v) for v in value)
    if isinstance(value, slice):
        return slice(_unwrap(value.start), _unwrap(value.stop), _unwrap(value.step))
    return value


def _wrap(value: Any) -> Any:
    if isinstance(value, (np.ndarray, np.generic)) and not isinstance(value, StrictArray):
        return StrictArray(np.asarray(value))
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


def _call(function: Any, args: tuple, kwargs: dict) -> Any:
    args = _unwrap(args)
    kwargs = {key: _unwrap(value) for key, value in kwargs.items()}
    return _wrap(function(*args, **kwargs))


class StrictArray:
    """A NumPy array that pretends to live on a device (see the module docstring)."""

    __slots__ = ("_array",)
    __array_priority__ = 1000

    def __init__(self, array: np.ndarray) -> None:
        self._array = array

    # The whole point: no silent trip to the host.
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise HostLeakError("implicit conversion of a device array to NumPy; use asnumpy() or Tensor.numpy()")

    def __array_ufunc__(self, ufunc: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _call(getattr(ufunc, method), inputs, kwargs)

    __array_function__ = None  # np.concatenate(a, ...) etc. must go through xp, as with CuPy

    # Explicit scalar reads are allowed (CuPy allows them too, with a device sync).
    def item(self) -> Any:
        return self._array.item()

    def __float__(self) -> float:
        return float(self._array)

    def __int__(self) -> int:
        return int(self._array)

    def __bool__(self) -> bool:
        return bool(self._array)

    def __index__(self) -> int:
        return self._array.__index__()

    def __len__(self) -> int:
        return len(self._array)

    def __repr__(self) -> str:
        return f"StrictArray({self._array!r})"

    # Attributes and methods of the array itself.
    shape = property(lambda self: self._array.shape)
    dtype = property(lambda self: self._array.dtype)
    ndim = property(lambda self: self._array.ndim)
    size = property(lambda self: self._array.size)
    strides = property(lambda self: self._array.strides)
    itemsize = property(lambda self: self._array.itemsize)
    nbytes = property(lambda self: self._array.nbytes)
    flags = property(lambda self: self._array.flags)
    T = property(lambda self: StrictArray(self._array.T))

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):  # e.g. __array_interface__, which would let NumPy read the data
            raise AttributeError(name)
        attribute = getattr(self._array, name)  # reshape, transpose, sum, astype, copy, ...
        if callable(attribute):
            return lambda *args, **kwargs: _call(attribute, args, kwargs)
        return _wrap(attribute)

    def __getitem__(self, index: Any) -> Any:
        return _wrap(self._array[_unwrap(index)])

    def __setitem__(self, index: Any, value: Any) -> None:
        self._array[_unwrap(index)] = _unwrap(value)

    # Operators go through __array_ufunc__, which refuses host arrays.
    def __add__(self, other): return np.add(self, other)
    def __radd__(self, other): return np.add(other, self)
    def __iadd__(self, other): return np.add(self, other, out=self)
    def __sub__(self, other): return np.subtract(self, other)
    def __rsub__(self, other): return np.subtract(other, self)
    def __isub__(self, other): return np.subtract(self, other, out=self)
    def __mul__(self, other): return np.multiply(self, other)
    def __rmul__(self, other): return np.multiply(other, self)
    def __imul__(self, other): return np.multiply(self, other, out=self)
    def __truediv__(self, other): return np.true_divide(self, other)
    def __rtruediv__(self, other): return np.true_divide(other, self)
    def __itruediv__(self, other): return np.true_divide(self, other, out=self)
    def __floordiv__(self, other): return np.floor_divide(self, other)
    def __mod__(self, other): return np.remainder(self, other)
    def __pow__(self, other): return np.power(self, other)
    def __rpow__(self, other): return np.power(other, self)
    def __matmul__(self, other): return np.matmul(self, other)
    def __rmatmul__(self, other): return np.matmul(other, self)
    def __neg__(self): return np.negative(self)
    def __abs__(self): return np.absolute(self)
    def __invert__(self): return np.invert(self)
    def __and__(self, other): return np.logical_and(self, other)
    def __or__(self, other): return np.logical_or(self, other)
    def __lt__(self, other): return np.less(self, other)
    def __le__(self, other): return np.less_equal(self, other)
    def __gt__(self, other): return np.greater(self, other)
    def __ge__(self, other): return np.greater_equal(self, other)
    def __eq__(self, other): return np.equal(self, other)
    def __ne__(self, other): return np.not_equal(self, other)

    __hash__ = None  # arrays are not hashable


class _StrictUfunc:
    """A NumPy ufunc that takes and returns StrictArrays (with `.at` for scatter-add)."""

    def __init__(self, ufunc: np.ufunc) -> None:
        self._ufunc = ufunc

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return _call(self._ufunc, args, kwargs)

    def at(self, target: StrictArray, index: Any, values: Any = None) -> None:
        args = (index,) if values is None else (index, values)
        self._ufunc.at(target._array, *_unwrap(args))

    def reduce(self, *args: Any, **kwargs: Any) -> Any:
        return _call(self._ufunc.reduce, args, kwargs)


class _StrictGenerator:
    """A NumPy Generator whose draws land on the stand-in device."""

    def __init__(self, seed: Any) -> None:
        self._rng = np.random.default_rng(seed)

    def random(self, size: Any = None, dtype: Any = np.float64) -> StrictArray:
        return StrictArray(np.asarray(self._rng.random(size, dtype=dtype)))

    def standard_normal(self, size: Any = None, dtype: Any = np.float64) -> StrictArray:
        return StrictArray(np.asarray(self._rng.standard_normal(size, dtype=dtype)))


class _StrictRandom:
    """`xp.random` of the stand-in device (only what minigrad draws on a device)."""

    default_rng = _StrictGenerator


class _StrictModule:
    """The array module of the stand-in device: NumPy's functions, on StrictArrays."""

    random = _StrictRandom()

    newaxis = None
    pi = np.pi
    e = np.e
    inf = np.inf
    nan = np.nan

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(np, name)
        if isinstance(attribute, np.ufunc):
            return _StrictUfunc(attribute)
        if isinstance(attribute, type):  # dtypes such as xp.float32 pass through
            return attribute
        if callable(attribute):
            return lambda *args, **kwargs: _call(attribute, args, kwargs)
        return attribute

    def asarray(self, value: Any, dtype: Any = None) -> StrictArray:
        """Host -> device copy, the explicit way in (like `cupy.asarray`)."""
        if isinstance(value, StrictArray):
            return value if dtype is None else StrictArray(value._array.astype(dtype, copy=False))
        return StrictArray(np.array(value, dtype=dtype))

    array = asarray


xp = _StrictModule()


def asnumpy(array: StrictArray) -> np.ndarray:
    """Device -> host copy, the explicit way out (like `cupy.asnumpy`)."""
    return np.array(array._array)
