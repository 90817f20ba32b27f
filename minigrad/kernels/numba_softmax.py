"""Softmax and log-softmax, each row in two compiled passes: the kernels of `Softmax` and `LogSoftmax` and of
`stable_softmax` (softmax_rows.py) / `stable_log_softmax` (minigrad/fused/softmax.py).

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
    causal_softmax_(scores, scale) -> scores, now P        (causal_rows.causal_softmax_: attention's row blocks)
    softmax_backward_(gp, p, rowsum) -> gp, now gS          (causal_rows.softmax_backward_)
The last two work in place on the block's own arrays: scale, mask and softmax in one pass over the scores (the
NumPy function takes three, and exps the masked keys too), and gS = P (gP - rowsum) in one instead of two.
Read next: ../fused/softmax.py (the op it implements).
"""

from __future__ import annotations

import functools

import numpy as np

from minigrad.kernels import numba_setup
from minigrad.kernels.numba_math import exp32
from minigrad.kernels.numba_setup import AVAILABLE, kernel

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


@kernel
def _causal_softmax_rows(s: np.ndarray, rows_per_block: int, scale: np.float32) -> None:
    shift = s.shape[1] - rows_per_block  # row i of a block sees keys 0 .. i + shift
    for i in range(s.shape[0]):
        seen = i % rows_per_block + shift + 1
        m = NEG_INF
        for j in range(seen):
            v = s[i, j] * scale
            s[i, j] = v
            m = v if v > m else m
        total = ZERO
        for j in range(seen):
            e = exp32(s[i, j] - m)
            s[i, j] = e
            total += e
        inv = ONE / total
        for j in range(seen):
            s[i, j] *= inv
        masked = ZERO if total == total else total  # a row with a NaN is NaN everywhere, as in NumPy's softmax
        for j in range(seen, s.shape[1]):
            s[i, j] = masked


@kernel
def _softmax_backward_in_place(gp: np.ndarray, p: np.ndarray, rowsum: np.ndarray) -> None:
    for i in range(gp.shape[0]):
        for j in range(gp.shape[1]):
            gp[i, j] = (gp[i, j] - rowsum[i]) * p[i, j]


def causal_softmax_(scores: np.ndarray, scale: float) -> np.ndarray:
    """softmax(scores * scale + causal mask) over the last axis, in place (see causal_rows.causal_softmax_).

    `scores` is a C-contiguous (..., R, K) block with R <= K (a block's new product: causal_rows makes one).
    """
    rows, keys = scores.shape[-2:]
    if not (scores.flags.c_contiguous and rows <= keys):
        raise ValueError(f"causal_softmax_: a C-contiguous (..., R, K) block with R <= K, not {scores.shape}")
    if scores.size:
        _causal_softmax_rows(scores.reshape(-1, keys), rows, np.float32(scale))
    return scores


def softmax_backward_(gp: np.ndarray, p: np.ndarray, rowsum: np.ndarray) -> np.ndarray:
    """gS = P * (gP - rowsum) in place in gp (C-contiguous, like p), rowsum of shape (..., R, 1)."""
    if not gp.flags.c_contiguous or gp.shape != p.shape or rowsum.shape != gp.shape[:-1] + (1,):
        raise ValueError(f"softmax_backward_: gp {gp.shape} (C-contiguous), p {p.shape}, rowsum {rowsum.shape}")
    if gp.size:
        rows = gp.reshape(-1, gp.shape[-1])
        _softmax_backward_in_place(rows, np.ascontiguousarray(p).reshape(rows.shape),
                                   np.ascontiguousarray(rowsum).reshape(-1))
    return gp


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
    block = np.ones((1, 2, 3), np.float32)
    softmax_backward_(block.copy(), causal_softmax_(block, 0.5), np.ones((1, 2, 1), np.float32))


@functools.cache
def ready() -> bool:
    """True once the softmax kernels are compiled or loaded from the cache (once per process)."""
    return numba_setup.prepare("softmax", _warm_up)
