"""Making tensors: `tensor`, `zeros`, `ones`, `randn`, `arange` (each with dtype=, device=, requires_grad=).

Read next: random.py, the seeded generator behind `randn` and weight initialisation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import random
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


def randn(*shape: Any, dtype: Any = np.float32, device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples, drawn on the host from the seeded generator (same on every device)."""
    data = random.host_rng().standard_normal(_shape(shape))
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def arange(n: int, dtype: Any = np.int64, device: Any = None, requires_grad: bool = False) -> Tensor:
    """The integers 0, 1, ..., n - 1 (int64 unless `dtype`)."""
    return Tensor(np.arange(n, dtype=dtype), requires_grad=requires_grad, dtype=dtype, device=device)
