"""Cross-entropy's rows in one compiled pass each way: the kernel of `CrossEntropy` (minigrad/fused/cross_entropy.py).

The op first brings every layout to (N, C) rows z and (N,) targets t (`class_rows`), resolves ignored rows
(t = 0, counted = 0) and the weight of each row's target w_t; these kernels take over from there:

    log p_ic = z_ic - m_i - log(sum_c exp(z_ic - m_i)),   m_i = max_c z_ic,
    loss_i = -(1 - eps) w_t log p_i,t  -  (eps / C) counted_i sum_c w_c log p_ic    (w_c = 1 without class weights),
    gz_ic = (p_ic q_i - (1 - eps) w_t [c = t_i] - (eps / C) w_c counted_i) scale_i,
    q_i = sum_c q_ic = (1 - eps) w_t + (eps / C) sum_c w_c counted_i,

eps the label smoothing and scale_i the reduction's factor (losses.row_scale). NumPy makes about ten passes over
the (N, C) logits forward and five backward; here each row is read once forward (its max, its sum, its
probabilities) and written once backward. A row with a NaN, or all -inf, gives NaN, as NumPy's op. float32 only.

    cross_entropy_forward(z, t, w_t, counted, weight, eps) -> (losses, probs)    losses (N,), probs (N, C)
    cross_entropy_backward(probs, t, w_t, counted, weight, eps, scale) -> gz     scale (N, 1), gz (N, C)
        z (N, C) float32; t (N,) integer; w_t, counted (N,) float32; weight (C,) float32 or None; eps a float
Read next: ../fused/cross_entropy.py (the op it implements).
"""

from __future__ import annotations

import functools

import numpy as np

from minigrad.kernels import numba_setup
from minigrad.kernels.numba_math import exp32
from minigrad.kernels.numba_setup import AVAILABLE, kernel
from minigrad.kernels.numba_softmax import row_max

__all__ = ["AVAILABLE", "ready", "cross_entropy_forward", "cross_entropy_backward"]

ZERO, ONE = np.float32(0.0), np.float32(1.0)


@kernel
def _forward_rows(z: np.ndarray, t: np.ndarray, w_t: np.ndarray, counted: np.ndarray, weight: np.ndarray,
                  eps: np.float32, losses: np.ndarray, probs: np.ndarray) -> None:
    """losses (N,) and probs (N, C); `weight` is all ones when the op has no class weights."""
    rows, classes = z.shape
    smooth = eps / np.float32(classes)
    for i in range(rows):
        m = row_max(z, i)
        total = ZERO
        for c in range(classes):
            shifted = z[i, c] - m
            probs[i, c] = shifted  # (for now: z - m, stored, so that LLVM cannot fold m into log_total below)
            total += exp32(shifted)
        log_total = np.log(total)  # log p_ic = (z_ic - m) - log_total, subtracted in that order, as the NumPy op
        target_log_p = probs[i, t[i]] - log_total  # (z - m - log_total as z - (m + log_total) loses digits)
        every_class = ZERO
        for c in range(classes):
            log_p = probs[i, c] - log_total
            probs[i, c] = exp32(log_p)
            every_class += weight[c] * log_p
        loss = -(ONE - eps) * w_t[i] * target_log_p
        if eps != ZERO:
            loss -= smooth * every_class * counted[i]
        losses[i] = loss


@kernel
def _backward_rows(probs: np.ndarray, t: np.ndarray, w_t: np.ndarray, counted: np.ndarray, weight: np.ndarray,
                   eps: np.float32, scale: np.ndarray, gz: np.ndarray) -> None:
    rows, classes = probs.shape
    smooth = eps / np.float32(classes)
    all_weights = ZERO
    for c in range(classes):
        all_weights += weight[c]
    for i in range(rows):
        q = (ONE - eps) * w_t[i] + smooth * all_weights * counted[i]
        s = scale[i]
        spread = smooth * counted[i]
        for c in range(classes):
            gz[i, c] = (probs[i, c] * q - spread * weight[c]) * s
        gz[i, t[i]] -= (ONE - eps) * w_t[i] * s


def _class_weights(weight: np.ndarray | None, classes: int) -> np.ndarray:
    return np.ones(classes, np.float32) if weight is None else np.ascontiguousarray(weight, dtype=np.float32)


def cross_entropy_forward(z: np.ndarray, t: np.ndarray, w_t: np.ndarray, counted: np.ndarray,
                          weight: np.ndarray | None, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """(losses, probs) for (N, C) logits z; see the module docstring for the arguments."""
    z = np.ascontiguousarray(z)
    losses, probs = np.empty(z.shape[0], np.float32), np.empty_like(z)
    if z.size:
        _forward_rows(z, np.ascontiguousarray(t), np.ascontiguousarray(w_t), np.ascontiguousarray(counted),
                      _class_weights(weight, z.shape[1]), np.float32(eps), losses, probs)
    return losses, probs


def cross_entropy_backward(probs: np.ndarray, t: np.ndarray, w_t: np.ndarray, counted: np.ndarray,
                           weight: np.ndarray | None, eps: float, scale: np.ndarray) -> np.ndarray:
    """gz (N, C), the gradient of the rows' logits, the reduction's `scale` (N, 1) already applied."""
    gz = np.empty_like(probs)
    if probs.size:
        scale = np.ascontiguousarray(np.broadcast_to(scale, (probs.shape[0], 1)), dtype=np.float32).reshape(-1)
        _backward_rows(np.ascontiguousarray(probs), np.ascontiguousarray(t), np.ascontiguousarray(w_t),
                       np.ascontiguousarray(counted), _class_weights(weight, probs.shape[1]), np.float32(eps),
                       scale, gz)
    return gz


def _warm_up() -> None:
    z = np.array([[0.0, 1.0], [2.0, -np.inf]], np.float32)
    t, ones = np.array([1, 0]), np.ones(2, np.float32)
    losses, probs = cross_entropy_forward(z, t, ones, ones, None, 0.1)
    cross_entropy_backward(probs, t, ones, ones, None, 0.1, ones[:, None])


@functools.cache
def ready() -> bool:
    """True once the cross-entropy kernels are compiled or loaded from the cache (once per process)."""
    return numba_setup.prepare("cross-entropy", _warm_up)
