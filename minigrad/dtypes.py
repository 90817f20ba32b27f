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
            groups[2].append(_SCALAR_DTYPE[_CATEGORY[kind]])
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
