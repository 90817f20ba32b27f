"""Softmax and log-softmax, each row in two compiled passes: the kernels of `Softmax` and `LogSoftmax` and of
`stable_softmax` / `stable_log_softmax` (minigrad/fused/softmax.py).

    m = max(x),   softmax(x) = exp(x - m) / sum(exp(x - m)),   log_softmax(x) = (x - m) - log(sum(exp(x - m)));
    softmax backward:      gx = y (gy - sum(gy y));
    log_softmax backward:  gx = gy - exp(y) sum(gy).

The same arithmetic as NumPy's op, so the same edge cases: a row with a NaN is all NaN; a fully masked row (all
-inf) is all NaN, as in PyTorch's softmax, or all 0 with `safe=True` (attention's choice: a query that sees no key
gets no weight). Any axis: another axis than the last is moved last (a copy). float32 only.

    softmax_forward(x, axis=-1, safe=False) -> y             (the op saves y)
    softmax_backward(gy, y, axis=-1) -> gx
    log_softmax_forward(x, axis=-1) -> y                     (the op saves y)
    log_softmax_backward(gy, y, axis=-1) -> gx
Read next: numba_cross_entropy.py.
"""

from __future__ import annotations

import functools

import numpy as np

from minigrad.fused.kernels import numba_setup
from minigrad.fused.kernels.numba_math import exp32
from minigrad.fused.kernels.numba_setup import AVAILABLE, kernel

__all__ = ["AVAILABLE", "ready", "softmax_forward", "softmax_backward", "log_softmax_forward",
           "log_softmax_backward"]

ZERO, ONE, NEG_INF = np.float32(0.0), np.float32(1.0), np.float32(-np.inf)


@kernel
def row_max(x: np.ndarray, i: int) -> np.float32:
    """max of row i (a NaN in the row need not win here: it makes its row's sum, and so every output, NaN)."""
    m = NEG_INF
    for j in range(x.shape[1]):
        m = x[i, j] if x[i, j] > m else m
    return m


@kernel
def _softmax_rows(x: np.ndarray, y: np.ndarray, safe: bool) -> None:
    for i in range(x.shape[0]):
        m = row_max(x, i)
        if safe and m == NEG_INF:
            m = ZERO  # a fully masked row: exp(-inf) = 0 everywhere, not exp(nan)
        total = ZERO
        for j in range(x.shape[1]):
            e = exp32(x[i, j] - m)
            y[i, j] = e
            total += e
        if safe and total == ZERO:
            total = ONE
        inv = ONE / total
        for j in range(x.shape[1]):
            y[i, j] *= inv


@kernel
def _log_softmax_rows(x: np.ndarray, y: np.ndarray) -> None:
    for i in range(x.shape[0]):
        m = row_max(x, i)
        total = ZERO
        for j in range(x.shape[1]):
            shifted = x[i, j] - m
            y[i, j] = shifted
            total += exp32(shifted)
        log_total = np.log(total)
        # x - m is stored first and log_total taken from it, as the NumPy op does: written (x - m) - log_total in
        # one line, the `reassoc` flag lets LLVM compute x - (m + log_total), which loses log_total's digits when
        # m is large (logits near 1000: an error of 3e-5 instead of 1e-7).
        for j in range(x.shape[1]):
            y[i, j] -= log_total


@kernel
def _softmax_backward_rows(gy: np.ndarray, y: np.ndarray, gx: np.ndarray) -> None:
    for i in range(gy.shape[0]):
        dot = ZERO
        for j in range(gy.shape[1]):
            dot += gy[i, j] * y[i, j]
        for j in range(gy.shape[1]):
            gx[i, j] = y[i, j] * (gy[i, j] - dot)


@kernel
def _log_softmax_backward_rows(gy: np.ndarray, y: np.ndarray, gx: np.ndarray) -> None:
    for i in range(gy.shape[0]):
        total = ZERO
        for j in range(gy.shape[1]):
            total += gy[i, j]
        for j in range(gy.shape[1]):
            gx[i, j] = gy[i, j] - exp32(y[i, j]) * total


def as_rows(a: np.ndarray, axis: int) -> np.ndarray:
    """a with `axis` moved last, as a C-contiguous (N, n) array (a copy only if it is not one already)."""
    moved = np.moveaxis(a, axis, -1) if a.ndim else a.reshape(1)
    return np.ascontiguousarray(moved).reshape(-1, moved.shape[-1])


def from_rows(rows: np.ndarray, like: np.ndarray, axis: int) -> np.ndarray:
    """The inverse of as_rows: (N, n) rows back to the shape and axis order of `like`."""
    if like.ndim == 0:
        return rows.reshape(())
    moved_shape = np.moveaxis(np.empty(like.shape, dtype=[]), axis, -1).shape  # (a zero-byte array: just shapes)
    return np.moveaxis(rows.reshape(moved_shape), -1, axis)


def _apply(rows_kernel, axis: int, *arrays: np.ndarray, **flags) -> np.ndarray:
    """Run a row kernel over `arrays` (all of one shape) along `axis`; empty arrays need no work."""
    if arrays[0].size == 0:
        return arrays[0].copy()
    rows = [as_rows(a, axis) for a in arrays]
    out = np.empty_like(rows[0])
    rows_kernel(*rows, out, **flags)
    return from_rows(out, arrays[0], axis)


def softmax_forward(x: np.ndarray, axis: int = -1, safe: bool = False) -> np.ndarray:
    """softmax(x) along `axis`; with `safe`, a fully masked (all -inf) slice gives zeros instead of NaN."""
    return _apply(_softmax_rows, axis, x, safe=safe)


def softmax_backward(gy: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """gx = y (gy - sum(gy y)) along `axis`, from the saved output y."""
    return _apply(_softmax_backward_rows, axis, gy, y)


def log_softmax_forward(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """log_softmax(x) = x - logsumexp(x) along `axis`."""
    return _apply(_log_softmax_rows, axis, x)


def log_softmax_backward(gy: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    """gx = gy - exp(y) sum(gy) along `axis`, from the saved output y."""
    return _apply(_log_softmax_backward_rows, axis, gy, y)


def _warm_up() -> None:
    x = np.array([[0.0, -np.inf], [1.0, 2.0]], np.float32)
    for safe in (False, True):
        softmax_backward(x, softmax_forward(x, safe=safe))
    log_softmax_backward(x, log_softmax_forward(x))


@functools.cache
def ready() -> bool:
    """True once the softmax kernels are compiled or loaded from the cache (once per process)."""
    return numba_setup.prepare("softmax", _warm_up)
