"""The stable softmax row step, shared by the fused softmax (../fused/softmax.py), the fused attention
(../fused/attention.py) and attention's row-block kernel (causal_rows.py), so it sits under all three.
Read next: ../fused/softmax.py (the op it serves).
"""

from __future__ import annotations

from typing import Any

from minigrad.core.backend import get_array_module
from minigrad.kernels import blas


def stable_softmax(x: Any, axis: int, overwrite: bool = False, safe: bool = False) -> Any:
    """softmax(x) = exp(x - max(x)) / sum(exp(x - max(x))): the same value, and exp never overflows.

    The three passes run in place on one new array; with `overwrite`, on x itself (no array as large
    as x is made: attention uses this for its (T, T) scores). With `safe`, a slice that is all -inf
    (a query masked from every key) gets zeros instead of 0/0 = nan, as PyTorch's attention does.
    """
    xp = get_array_module(x)
    if x.size == 0:  # nothing to normalise (max of an empty axis would raise)
        return x if overwrite else x.copy()
    m = x.max(axis=axis, keepdims=True)
    if safe:
        m = xp.where(m == -xp.inf, 0, m)
    e = xp.subtract(x, m, out=x if overwrite else None)
    xp.exp(e, out=e)
    total = blas.row_sum(e) if axis in (-1, e.ndim - 1) else e.sum(axis=axis, keepdims=True)
    e /= xp.where(total == 0, 1, total) if safe else total
    return e
