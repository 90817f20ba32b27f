"""The dtypes minigrad computes in, and PyTorch's rule for the dtype of an op on mixed operands.

float32 is the default float (what `mg.tensor(1.5)` and `mg.randn` make); float64 is for gradient checks;
float16 is there for inference. Integers and bools are data: token ids, targets, masks.

When an op meets two dtypes, NumPy and PyTorch disagree (NumPy turns int64 and float32 into float64, and
an int32 array times the Python int 2 into int64). minigrad follows PyTorch (`torch.result_type`), so a
float32 model stays float32 and an int32 tensor times 2 stays int32. `result_type` is that rule, the one
place the engine decides a binary op's dtype.

Read next: tensor/tensor.py, whose operators call `result_type`.
"""

from __future__ import annotations

import builtins
import functools
from typing import Any

import numpy as np

DEFAULT_FLOAT = np.dtype(np.float32)
FLOAT_DTYPES = (np.dtype(np.float16), DEFAULT_FLOAT, np.dtype(np.float64))

# PyTorch's categories, lowest first: a result never falls to a lower category than an operand's.
_CATEGORY = {"b": 0, "u": 1, "i": 1, "f": 2}
_CATEGORY_NAMES = ("bool", "integer", "float")

# The dtype a Python number gets when it alone decides the result (an integer tensor times 2.5 is float32).
_SCALAR_DTYPE = (np.dtype(np.bool_), np.dtype(np.int64), DEFAULT_FLOAT)


def check_dtype(dtype: Any) -> np.dtype:
    """`dtype` (a NumPy dtype, a scalar type such as np.float32, or a name such as "float32") as a np.dtype,
    if minigrad computes in it; otherwise a TypeError naming it."""
    try:
        dtype = np.dtype(dtype)
    except TypeError as error:
        raise TypeError(f"unknown dtype {dtype!r}: use a NumPy dtype or its name, such as 'float32'") from error
    if dtype.kind not in _CATEGORY or (dtype.kind == "f" and dtype not in FLOAT_DTYPES):
        raise TypeError(f"unsupported dtype {dtype}: use a float (float32, float64), integer or bool dtype")
    return dtype


def category(dtype: np.dtype) -> int:
    """0 for bool, 1 for integers, 2 for floats."""
    return _CATEGORY[dtype.kind]


def is_number(value: Any) -> bool:
    """A Python number or a NumPy scalar: an operand that, like a Python number in PyTorch, has no dimensions
    and the lowest priority in `result_type`."""
    return isinstance(value, (bool, int, float, np.generic))


def result_type(*operands: Any) -> np.dtype:
    """The dtype of a binary op's result, as `torch.result_type`.

    `operands` are tensors (anything with `.dtype` and `.ndim`) and numbers (`is_number`). The result
    takes the highest category (bool < integer < float) among all operands; its size comes from the
    operands of that category in the highest priority group: tensors with dimensions, then 0-d tensors,
    then numbers. So an int32 tensor times 2 is int32, times 2.5 is float32 (a number of a higher
    category gives the default dtype of its category), a float32 tensor plus a float64 0-d tensor is
    float32, and an int32 tensor plus a float64 0-d tensor is float64.
    """
    groups: tuple[list[np.dtype], list[np.dtype], list[np.dtype]] = ([], [], [])  # dimensioned, 0-d, numbers
    for x in operands:
        if is_number(x):
            if isinstance(x, complex) or (isinstance(x, np.generic) and x.dtype.kind not in _CATEGORY):
                raise TypeError(f"unsupported operand {x!r}: minigrad has bool, integer and float dtypes")
            kind = np.asarray(x).dtype.kind
            groups[2].append(_SCALAR_DTYPE[_CATEGORY[kind]] if kind != "f" else _default_float)
        else:
            groups[0 if x.ndim else 1].append(x.dtype)
    top = max(category(dtype) for group in groups for dtype in group)
    for group in groups:
        candidates = [dtype for dtype in group if category(dtype) == top]
        if candidates:
            dtype = functools.reduce(np.promote_types, candidates)
            if category(dtype) != top:  # NumPy makes a float of uint64 and int64; PyTorch has no rule
                names = ", ".join(str(d) for d in candidates)
                raise TypeError(f"no common {_CATEGORY_NAMES[top]} dtype for {names}")
            return dtype
    raise AssertionError("unreachable: some group holds the top category")


# ------------------------------------------------------------------------------------------------------
# PyTorch's dtype names. A tensor's `.dtype` is a NumPy dtype, so each name IS that NumPy dtype: `x.dtype ==
# mg.float32` holds, `dtype=mg.long` works wherever a dtype is taken, and code that passes np.float32 or
# "float32" keeps working. (`mg.dtype` is np.dtype, so `isinstance(mg.float32, mg.dtype)` holds as in PyTorch.)
# minigrad/__init__.py adds the aliases that would shadow Python's builtins here: mg.float, mg.int, mg.bool.
dtype = np.dtype
float16 = half = np.dtype(np.float16)
float32 = np.dtype(np.float32)
float64 = double = np.dtype(np.float64)
int8 = np.dtype(np.int8)
int16 = short = np.dtype(np.int16)
int32 = np.dtype(np.int32)
int64 = long = np.dtype(np.int64)
uint8 = np.dtype(np.uint8)
bool_ = np.dtype(np.bool_)


_default_float = DEFAULT_FLOAT  # PyTorch's one global switch of this kind; set_default_dtype changes it


def get_default_dtype() -> np.dtype:
    """The dtype Python floats and float data become (float32 unless `set_default_dtype` said otherwise), as
    `torch.get_default_dtype`."""
    return _default_float


def set_default_dtype(d: Any) -> None:
    """As `torch.set_default_dtype`: the float dtype that Python floats, float data, the factories (zeros, randn,
    ...), new layers' parameters and integer-to-float results get from now on (float16, float32 or float64)."""
    global _default_float
    d = check_dtype(d)
    if d.kind != "f":
        raise TypeError(f"only floating-point types are supported as the default type, got {d}")
    _default_float = d


class finfo:
    """Machine limits of a float dtype, as `torch.finfo`: Python numbers `bits`, `eps`, `max`, `min`, `tiny`
    (= `smallest_normal`), `resolution` (10 ** -decimal digits), and `dtype` (its name). The default dtype's
    when no type is given."""

    def __init__(self, type: Any = None) -> None:  # noqa: A002  (PyTorch's parameter name)
        d = _default_float if type is None else check_dtype(type)
        if d.kind != "f":
            raise TypeError(f"torch.finfo() requires a floating point input type, got {d}; use iinfo")
        info = np.finfo(d)
        self.bits, self.dtype = info.bits, str(d)
        self.eps, self.max, self.min = builtins.float(info.eps), builtins.float(info.max), builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = 10.0 ** -info.precision

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution}, min={self.min}, max={self.max}, eps={self.eps}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, as `torch.iinfo`: Python ints `bits`, `min`, `max`, and `dtype` (its name)."""

    def __init__(self, type: Any) -> None:  # noqa: A002
        d = check_dtype(type)
        if d.kind not in "iu":
            raise TypeError(f"torch.iinfo() requires an integer input type, got {d}; use finfo")
        info = np.iinfo(d)
        self.bits, self.min, self.max, self.dtype = info.bits, builtins.int(info.min), builtins.int(info.max), str(d)

    def __repr__(self) -> str:
        return f"iinfo(min={self.min}, max={self.max}, dtype={self.dtype})"
