"""Causal self-attention without the (T, T) matrix, FlashAttention style: a kernel for
`ScaledDotProductAttention` with is_causal=True, no mask and no dropout (minigrad/fused/attention.py). Not wired
into minigrad (it is slower there than the op's row blocks): it lives here for its measurement in kernels.py,
which also checks it equal to the op before timing it.

For each query i, over the keys j <= i in blocks of KEY_BLOCK, with s_ij = scale q_i . k_j:

    forward (online softmax): per block, m' = max(m, max_j s_ij);  l = l exp(m - m') + sum_j exp(s_ij - m');
        acc = acc exp(m - m') + sum_j exp(s_ij - m') v_j;  m = m'.   After the last block: y_i = acc / l and
        lse_i = m + log(l), the row's log-sum-exp: p_ij = exp(s_ij - lse_i) is the attention weight.
    backward (recomputing p from lse): D_i = gy_i . y_i;  dp_ij = gy_i . v_j;  ds_ij = p_ij (dp_ij - D_i);
        gq_i = scale sum_j ds_ij k_j;  gk_j = scale sum_i ds_ij q_i;  gv_j = sum_i p_ij gy_i.

These are the NumPy op's formulas (the rowsum trick D_i = gy_i . y_i included); what differs is the memory: the
op keeps P, (B, nh, T, T) floats, for backward, the kernel keeps lse, (B, nh, T), and recomputes P block by
block. The scores of one block of keys live in a small buffer, so every pass stays in the L1 cache. The keys
are read transposed (kT, vT: (d, T) per head), so that the innermost loop runs over keys and vectorises.
Self-attention only: q, k, v of one shape (..., T, d), float32, with PyTorch's causal alignment (query i sees
keys 0..i). A NaN in a row of q makes that row's output NaN, as in the NumPy op (which, through P's masked
entries, also spreads it to gk and gv rows of keys that query never sees; the kernel does not).
Its gain is memory, not yet time: on an Intel Xeon (AVX-512, one thread) it takes about twice the NumPy op's
time at gpt-small and gpt-medium shapes (benchmarks/kernels.py), whose products run in BLAS; per pair of query
and key it does a d-long product in vector code, and the updates of gk and gv rows dominate the backward.

    attention_forward(q, k, v, scale) -> (y, lse)                 y (..., T, d), lse (..., T)
    attention_backward(gy, q, k, v, y, lse, scale) -> (gq, gk, gv)
Read next: minigrad/kernels/numba_setup.py (how the compiled kernels are built and cached).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from minigrad.kernels import numba_setup
from minigrad.kernels.numba_math import exp32
from minigrad.kernels.numba_setup import AVAILABLE, kernel

__all__ = ["AVAILABLE", "ready", "attention_forward", "attention_backward"]

KEY_BLOCK = 64  # keys per block: a block's scores, and its rows of k and v, stay in the L1 cache
ZERO, ONE, NEG_INF = np.float32(0.0), np.float32(1.0), np.float32(-np.inf)


@kernel(inline="always")
def _scores(qi: np.ndarray, kt: np.ndarray, j0: int, scale: np.float32, s: np.ndarray) -> None:
    """s[j] = scale qi . k_(j0 + j) for the len(s) keys from j0 (kt: one head's keys transposed, (d, T))."""
    s[:] = ZERO
    for c in range(qi.size):
        qc, keys = qi[c], kt[c, j0:j0 + s.size]  # a contiguous row: the loop below vectorises over keys
        for j in range(s.size):
            s[j] += qc * keys[j]
    for j in range(s.size):
        s[j] *= scale


@kernel
def _forward_heads(q: np.ndarray, kt: np.ndarray, v: np.ndarray, scale: np.float32,
                   y: np.ndarray, lse: np.ndarray) -> None:
    heads, t, d = q.shape
    buffer = np.empty(KEY_BLOCK, np.float32)
    acc = np.empty(d, np.float32)
    for h in range(heads):
        for i in range(t):
            # One-dimensional rows (and slices of them): LLVM vectorises loops over these, not over q[h, i, c].
            qi, m, total = q[h, i], NEG_INF, ZERO
            acc[:] = ZERO
            for j0 in range(0, i + 1, KEY_BLOCK):
                s = buffer[:min(KEY_BLOCK, i + 1 - j0)]
                _scores(qi, kt[h], j0, scale, s)
                new_m = m
                for j in range(s.size):
                    new_m = s[j] if s[j] > new_m else new_m
                if s[0] != s[0]:
                    new_m = s[0]  # (a NaN score: it would be skipped by the max, so it is made the max)
                alpha = exp32(m - new_m)  # rescales what the earlier blocks summed (0 for the first block)
                total *= alpha
                for c in range(d):
                    acc[c] *= alpha
                for j in range(s.size):
                    e = exp32(s[j] - new_m)  # the block's unnormalised weights
                    s[j] = e
                    total += e
                for j in range(s.size):
                    p, vj = s[j], v[h, j0 + j]
                    for c in range(d):
                        acc[c] += p * vj[c]
                m = new_m
            yi, inv = y[h, i], ONE / total
            for c in range(d):
                yi[c] = acc[c] * inv
            lse[h, i] = m + np.log(total)


@kernel
def _backward_heads(gy: np.ndarray, q: np.ndarray, kt: np.ndarray, vt: np.ndarray, y: np.ndarray,
                    lse: np.ndarray, scale: np.float32, gq: np.ndarray, gk: np.ndarray, gv: np.ndarray) -> None:
    """gq, gk, gv (which must start at zero), without the factor `scale` on gq and gk (applied by the caller)."""
    heads, t, d = q.shape
    p_buffer, ds_buffer = np.empty(KEY_BLOCK, np.float32), np.empty(KEY_BLOCK, np.float32)
    for h in range(heads):
        gk_h, gv_h = gk[h], gv[h]  # (T, d) views, made once per head (a view per key costs more)
        for i in range(t):
            qi, gyi, yi, gqi = q[h, i], gy[h, i], y[h, i], gq[h, i]
            row_d = ZERO  # D_i = gy_i . y_i
            for c in range(d):
                row_d += gyi[c] * yi[c]
            for j0 in range(0, i + 1, KEY_BLOCK):
                n = min(KEY_BLOCK, i + 1 - j0)
                p, ds = p_buffer[:n], ds_buffer[:n]
                _scores(qi, kt[h], j0, scale, p)
                _scores(gyi, vt[h], j0, ONE, ds)  # dp_ij = gy_i . v_j
                lse_i = lse[h, i]
                for j in range(n):
                    pj = exp32(p[j] - lse_i)  # (through a local: a store read back at once stops vectorising)
                    p[j] = pj
                    ds[j] = pj * (ds[j] - row_d)
                for j in range(n):
                    pj, dsj, key = p[j], ds[j], j0 + j
                    for c in range(d):
                        gv_h[key, c] += pj * gyi[c]
                        gk_h[key, c] += dsj * qi[c]
                for c in range(d):  # gq_i = sum_j ds_j k_j, a sum over the keys for each c: it vectorises over j
                    keys, total = kt[h, c, j0:j0 + n], ZERO
                    for j in range(n):
                        total += ds[j] * keys[j]
                    gqi[c] += total


def _heads(a: np.ndarray) -> np.ndarray:
    """(..., T, d) as a C-contiguous (H, T, d) array, H the product of the leading axes."""
    return np.ascontiguousarray(a).reshape((math.prod(a.shape[:-2]),) + a.shape[-2:])  # (not -1: T or d may be 0)


def _transposed(a: np.ndarray) -> np.ndarray:
    """(H, T, d) -> a C-contiguous (H, d, T) copy."""
    return np.ascontiguousarray(np.swapaxes(a, -1, -2))


def attention_forward(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """(y, lse) of causal self-attention; q, k, v float32 of one shape (..., T, d)."""
    if not q.shape == k.shape == v.shape or q.ndim < 2:
        raise ValueError(f"attention_forward: causal self-attention needs q, k, v of one shape (..., T, d), "
                         f"got {q.shape}, {k.shape}, {v.shape}")
    qh, kh, vh = _heads(q), _heads(k), _heads(v)
    y, lse = np.zeros_like(qh), np.empty(qh.shape[:2], np.float32)
    if q.size:
        _forward_heads(qh, _transposed(kh), vh, np.float32(scale), y, lse)
    return y.reshape(q.shape), lse.reshape(q.shape[:-1])


def attention_backward(gy: np.ndarray, q: np.ndarray, k: np.ndarray, v: np.ndarray, y: np.ndarray,
                       lse: np.ndarray, scale: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(gq, gk, gv) of causal self-attention, recomputing the weights from the saved lse."""
    qh, kh, vh = _heads(q), _heads(k), _heads(v)
    gq, gk, gv = np.zeros_like(qh), np.zeros_like(kh), np.zeros_like(vh)
    if q.size:
        _backward_heads(_heads(gy), qh, _transposed(kh), _transposed(vh), _heads(y),
                        np.ascontiguousarray(lse).reshape(qh.shape[:2]), np.float32(scale), gq, gk, gv)
        gq *= np.float32(scale)
        gk *= np.float32(scale)
    return gq.reshape(q.shape), gk.reshape(k.shape), gv.reshape(v.shape)


def _warm_up() -> None:
    q = np.arange(8, dtype=np.float32).reshape(1, 4, 2) / 8
    y, lse = attention_forward(q, q, q, 0.5)
    attention_backward(q, q, q, q, y, lse, 0.5)


@functools.cache
def ready() -> bool:
    """True once the attention kernels are compiled or loaded from the cache (once per process)."""
    return numba_setup.prepare("attention", _warm_up)
