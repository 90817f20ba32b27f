"""PyTorch's legacy tensor types, `torch.FloatTensor`, `torch.LongTensor`, ...: old spellings of a dtype that
programs still write, handled alike.

    mg.LongTensor([1, 2, 3])          # tensor([1, 2, 3]): the data, as int64
    mg.FloatTensor(2, 3)              # a (2, 3) float32 tensor: sizes (zeros here; PyTorch leaves it uninitialised)
    isinstance(x, mg.LongTensor)      # whether x is an int64 tensor, as PyTorch answers
    x.type(mg.LongTensor)             # x.to(mg.int64)

Read next: ../functional.py's pad and kl_div, in functional_more.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minigrad


class LegacyTensorType(type):
    """The class of the legacy types: `isinstance(x, mg.FloatTensor)` asks whether x is a float32 tensor (on the
    CPU: PyTorch's GPU types were torch.cuda.FloatTensor)."""

    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, minigrad.Tensor) and obj.dtype == cls.dtype and obj.device == "cpu"


class LegacyTensor(metaclass=LegacyTensorType):
    """A legacy type: calling it makes a tensor of its dtype from data, or of the given sizes (filled with zeros)."""

    dtype: np.dtype

    def __new__(cls, *args: Any, device: Any = None) -> minigrad.Tensor:  # type: ignore[misc]
        if all(isinstance(a, int) and not isinstance(a, bool) for a in args):  # sizes, as FloatTensor(2, 3)
            return minigrad.zeros(*args, dtype=cls.dtype, device=device)
        if len(args) == 1:
            return minigrad.tensor(args[0], dtype=cls.dtype, device=device)
        raise TypeError(f"{cls.__name__}(): give the data (one list, array or tensor) or the sizes (ints), not "
                        f"{', '.join(type(a).__name__ for a in args)}")


class FloatTensor(LegacyTensor):
    dtype = np.dtype(np.float32)


class DoubleTensor(LegacyTensor):
    dtype = np.dtype(np.float64)


class HalfTensor(LegacyTensor):
    dtype = np.dtype(np.float16)


class LongTensor(LegacyTensor):
    dtype = np.dtype(np.int64)


class IntTensor(LegacyTensor):
    dtype = np.dtype(np.int32)


class ShortTensor(LegacyTensor):
    dtype = np.dtype(np.int16)


class CharTensor(LegacyTensor):
    dtype = np.dtype(np.int8)


class ByteTensor(LegacyTensor):
    dtype = np.dtype(np.uint8)


class BoolTensor(LegacyTensor):
    dtype = np.dtype(np.bool_)


__all__ = ["BoolTensor", "ByteTensor", "CharTensor", "DoubleTensor", "FloatTensor", "HalfTensor", "IntTensor",
           "LongTensor", "ShortTensor"]
