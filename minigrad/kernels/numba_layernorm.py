"""LayerNorm over the last axis in two compiled passes per row: the kernel of fused/layer_norm.py's `LayerNorm`.

    mean = sum(x) / n,   rstd = 1 / sqrt(sum((x - mean)**2) / n + eps),   xhat = (x - mean) rstd,
    y = xhat w + b;
    gxhat = gy w,   gx = rstd (gxhat - mean(gxhat) - xhat mean(gxhat xhat)),
    gw = sum over rows of gy xhat,   gb = sum over rows of gy.

The variance is taken around the mean (two passes, as the NumPy op does), never as E[x**2] - E[x]**2, which
cancels catastrophically. Each row stays in the cache between its passes; NumPy makes about 12 passes over the
whole array forward and 15 backward. float32 only; weight and bias are float32 arrays (n,) or None.

    layer_norm_forward(x, weight, bias, eps) -> (y, xhat, rstd)     rstd shaped (..., 1), as the op saves it
    layer_norm_backward(gy, xhat, rstd, weight, has_bias) -> (gx, gw, gb)
        gw is None when weight is None, gb None when not has_bias (the op returns only the others)
Read next: ../fused/layer_norm.py (the op it implements).
"""

from __future__ import annotations

import functools

import numpy as np

from minigrad.kernels import numba_setup
from minigrad.kernels.numba_setup import AVAILABLE, kernel

__all__ = ["AVAILABLE", "ready", "layer_norm_forward", "layer_norm_backward"]

ZERO, ONE = np.float32(0.0), np.float32(1.0)


@kernel
def _forward_rows(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: np.float32,
                  y: np.ndarray, xhat: np.ndarray, rstd: np.ndarray) -> None:
    """Each row of the (N, n) array x: xhat, rstd and y = xhat w + b."""
    rows, n = x.shape
    inv_n = ONE / np.float32(n)
    for i in range(rows):
        total = ZERO
        for j in range(n):
            total += x[i, j]
        mean = total * inv_n
        squares = ZERO
        for j in range(n):
            centred = x[i, j] - mean
            xhat[i, j] = centred
            squares += centred * centred
        r = ONE / np.sqrt(squares * inv_n + eps)
        rstd[i] = r
        for j in range(n):
            h = xhat[i, j] * r
            xhat[i, j] = h
            y[i, j] = h * w[j] + b[j]


@kernel
def _backward_rows(gy: np.ndarray, xhat: np.ndarray, rstd: np.ndarray, w: np.ndarray,
                   gx: np.ndarray, gw: np.ndarray, gb: np.ndarray) -> None:
    """gx row by row; gw and gb summed over the rows (each must start at zero)."""
    rows, n = gy.shape
    inv_n = ONE / np.float32(n)
    for i in range(rows):
        sum_g, sum_gh = ZERO, ZERO
        for j in range(n):
            g, h = gy[i, j], xhat[i, j]
            gw[j] += g * h
            gb[j] += g
            gh = g * w[j]
            sum_g += gh
            sum_gh += gh * h
        mean_g, mean_gh, r = sum_g * inv_n, sum_gh * inv_n, rstd[i]
        for j in range(n):
            gx[i, j] = r * (gy[i, j] * w[j] - mean_g - xhat[i, j] * mean_gh)


def _rows(a: np.ndarray) -> np.ndarray:
    """a as a C-contiguous (N, n) array, n its last axis (a copy only if a is strided)."""
    n = a.shape[-1] if a.ndim else 1
    return np.ascontiguousarray(a).reshape(-1, n)


def layer_norm_forward(x: np.ndarray, weight: np.ndarray | None, bias: np.ndarray | None,
                       eps: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, xhat, rstd) of LayerNorm over x's last axis (float32, at least 1-d); rstd is (..., 1)."""
    rows, n = _rows(x), x.shape[-1]
    w = np.ones(n, np.float32) if weight is None else np.ascontiguousarray(weight)
    b = np.zeros(n, np.float32) if bias is None else np.ascontiguousarray(bias)
    y, xhat = np.empty_like(rows), np.empty_like(rows)
    rstd = np.empty(rows.shape[0], np.float32)
    _forward_rows(rows, w, b, np.float32(eps), y, xhat, rstd)
    return y.reshape(x.shape), xhat.reshape(x.shape), rstd.reshape(x.shape[:-1] + (1,))


def layer_norm_backward(gy: np.ndarray, xhat: np.ndarray, rstd: np.ndarray, weight: np.ndarray | None,
                        has_bias: bool) -> tuple[np.ndarray, np.ndarray | None, np.ndarray | None]:
    """(gx, gw, gb) of LayerNorm from the saved xhat and rstd; gw None without weight, gb None without bias."""
    n = xhat.shape[-1]
    w = np.ones(n, np.float32) if weight is None else np.ascontiguousarray(weight)
    gy_rows = _rows(gy)
    gx = np.empty_like(gy_rows)
    gw, gb = np.zeros(n, np.float32), np.zeros(n, np.float32)
    _backward_rows(gy_rows, _rows(xhat), np.ascontiguousarray(rstd).reshape(-1), w, gx, gw, gb)
    return gx.reshape(xhat.shape), (gw if weight is not None else None), (gb if has_bias else None)


def _warm_up() -> None:
    x = np.array([[1.0, 2.0], [0.0, -1.0]], np.float32)
    w = np.ones(2, np.float32)
    y, xhat, rstd = layer_norm_forward(x, w, w, 1e-5)
    layer_norm_backward(y, xhat, rstd, w, True)


@functools.cache
def ready() -> bool:
    """True once the LayerNorm kernels are compiled or loaded from the cache (once per process)."""
    return numba_setup.prepare("LayerNorm", _warm_up)
