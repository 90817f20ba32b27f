"""Making tensors, as PyTorch's factories do: `tensor`, `zeros`, `ones`, `full`, `randn`, `eye`, `arange`,
`linspace`, and `zeros_like`, `ones_like`, `full_like`, `randn_like` (each with dtype=, device=, requires_grad=).

Where PyTorch infers a dtype from the numbers given, so does minigrad: `full((2,), 3)` and `arange(5)` are
int64, `full((2,), 3.0)` and `arange(0, 1, 0.25)` float32 (the default float), `full((2,), True)` bool.
Read next: random.py, the seeded generator behind `randn` and weight initialisation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import random
from minigrad.dtypes import check_dtype, result_type
from minigrad.tensor import Tensor


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor from a number, a (nested) list or an array; float data becomes float32 unless `dtype`."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def _shape(shape: tuple) -> tuple[int, ...]:
    """Accept both zeros(2, 3) and zeros((2, 3)), as PyTorch does."""
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


def zeros(*shape: Any, dtype: Any = np.float32, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of `shape` filled with 0 (float32 unless `dtype`)."""
    return Tensor(np.zeros(_shape(shape), dtype=dtype), requires_grad=requires_grad, dtype=dtype, device=device)


def ones(*shape: Any, dtype: Any = np.float32, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of `shape` filled with 1 (float32 unless `dtype`)."""
    return Tensor(np.ones(_shape(shape), dtype=dtype), requires_grad=requires_grad, dtype=dtype, device=device)


def full(size: Any, fill_value: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of shape `size` filled with `fill_value`; the dtype follows the value unless `dtype` says."""
    dtype = result_type(fill_value) if dtype is None else check_dtype(dtype)
    data = np.full(tuple(size) if isinstance(size, (tuple, list)) else (size,), fill_value, dtype=dtype)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def randn(*shape: Any, dtype: Any = np.float32, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples, drawn on the host from the seeded generator (same on every device)."""
    data = random.host_rng().standard_normal(_shape(shape))
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def eye(n: int, m: int | None = None, dtype: Any = np.float32, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The n x m identity matrix (n x n unless `m`): ones on the diagonal, zeros elsewhere."""
    return Tensor(np.eye(n, m, dtype=dtype), requires_grad=requires_grad, dtype=dtype, device=device)


def arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """start, start + step, ... up to but not including `end`; `arange(n)` is 0, 1, ..., n - 1.

    int64 when start, end and step are all integers, float32 when any is a float (unless `dtype`).
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    inferred = result_type(start, end, step)
    data = np.arange(start, end, step, dtype=np.float64 if inferred.kind == "f" else inferred)
    return Tensor(data, requires_grad=requires_grad, dtype=inferred if dtype is None else dtype, device=device)


def linspace(start: float, end: float, steps: int, dtype: Any = np.float32, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from `start` to `end`, both included (float32 unless `dtype`)."""
    if steps < 0:
        raise ValueError(f"linspace: steps must be non-negative, got {steps}")
    data = np.linspace(start, end, steps)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


# The `_like` factories: the shape, dtype and device of `like`, unless given.
def zeros_like(like: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return full_like(like, 0, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(like: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return full_like(like, 1, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(like: Tensor, fill_value: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    dtype = like.dtype if dtype is None else dtype
    return full(like.shape, fill_value, dtype=dtype, device=device or like.device, requires_grad=requires_grad)


def randn_like(like: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    dtype = like.dtype if dtype is None else check_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"randn_like: normal samples need a float dtype, not {dtype}; pass dtype=")
    return randn(*like.shape, dtype=dtype, device=device or like.device, requires_grad=requires_grad)


__all__ = ["arange", "eye", "full", "full_like", "linspace", "ones", "ones_like", "randn",
           "randn_like", "tensor", "zeros", "zeros_like"]
