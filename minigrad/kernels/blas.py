"""BLAS sums and transposed copies: faster implementations of a few array steps that the fused ops share.

NumPy sums short contiguous rows one at a time, and multiplies a batched product whose right operand is a
transposed view in its own loop; BLAS does either in one call. Each function here returns what the plain
NumPy expression in its docstring returns (the same sum, added in another order), and falls back to that
expression for other dtypes, devices (CuPy, the stand-in) and small arrays. tests/test_backend.py checks them.
Read next: ../fused/layer_norm.py (the first op that sums rows with it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core.backend import get_array_module

# row_sum and column_sum go to BLAS from this many rows up: below, a BLAS call costs more than NumPy's own sum
# (an Intel Xeon: one row of 128, 3.0 against 1.2 us, as in a KV cache's decoding; 64 rows, even).
BLAS_SUM_FROM_ROWS = 64


def _blas_sums(a: Any, rows: int) -> bool:
    """Whether row_sum/column_sum of a, whose sums run over `rows` rows, is one BLAS product."""
    return type(a) is np.ndarray and a.dtype in (np.float32, np.float64) and a.size > 0 and rows >= BLAS_SUM_FROM_ROWS


def row_sum(a: Any) -> Any:
    """The sum over the last axis, kept as an axis of length 1: shape (..., n) -> (..., 1).

    On the CPU, for float32 and float64, it is the matrix-vector product rows @ ones: NumPy reduces short contiguous
    rows one row at a time, while BLAS does all rows in one call, 5 to 10 times faster on rows of 32 to 256 (an Intel
    Xeon: a (2048, 256) float32 array, 0.31 against 0.03 ms). The same sum, added in another order. Other dtypes and
    devices (CuPy, the stand-in), and fewer than BLAS_SUM_FROM_ROWS rows, use `sum`. By np.dot: @ keeps Python's lock
    through a product with a 1-D operand (threads splitting a batch wait), np.dot makes the same BLAS call without it.
    """
    if a.ndim == 0 or not _blas_sums(a, a.size // max(a.shape[-1], 1)):
        return a.sum(axis=-1, keepdims=True)
    rows = a.reshape(-1, a.shape[-1])  # a view when a is contiguous, as the callers' arrays are
    return np.dot(rows, np.ones(a.shape[-1], dtype=a.dtype)).reshape(*a.shape[:-1], 1)


def row_mean(a: Any) -> Any:
    """The mean over the last axis, kept as an axis of length 1 (see row_sum)."""
    total = row_sum(a)
    total /= a.shape[-1]
    return total


def column_sum(rows: Any) -> Any:
    """The sum of the rows of a 2-D array: shape (N, n) -> (n,), as rows.sum(axis=0).

    A bias's gradient is the sum of gy over every row. On the CPU, for float32 and float64, it is the
    vector-matrix product ones @ rows, one BLAS call (see row_sum): NumPy's column sums of a (768, 128)
    float32 array take 26 us on an Intel Xeon, the product 7 us. Other dtypes and devices, and fewer than
    BLAS_SUM_FROM_ROWS rows, use `sum`.
    """
    if not _blas_sums(rows, rows.shape[0]):
        return rows.sum(axis=0)
    return np.dot(np.ones(rows.shape[0], dtype=rows.dtype), rows)  # np.dot, not @: see row_sum


# From this many rows of the left operand up, a batched product a @ b^T runs faster on a contiguous copy of b^T.
COPY_TRANSPOSE_FROM_ROWS = 32


def transposed_right(b: Any, rows_of_left: int) -> Any:
    """b with its last two axes swapped, as the right operand of a batched product whose left one has
    `rows_of_left` rows per matrix: a contiguous copy from COPY_TRANSPOSE_FROM_ROWS rows up, else a view.

    NumPy hands each matrix of a batched product to BLAS only when its rows are contiguous in memory; a
    swapaxes view as the right operand is not, and NumPy multiplies in its own loop instead. With enough
    rows the copy pays for itself: q k^T for a GPT's (12, 4, 32, 32) by (12, 4, 32, 64) blocks took 182 us on
    the view against 69 us on the copy (an Intel Xeon). For a KV cache's one new query it does not: 4.7
    against 16 us against 256 keys. (A transposed left operand goes to BLAS as it is.)
    """
    xp = get_array_module(b)
    b_t = xp.swapaxes(b, -1, -2)
    return xp.ascontiguousarray(b_t) if rows_of_left >= COPY_TRANSPOSE_FROM_ROWS else b_t
