"""Causal self-attention in blocks of query rows: the kernel behind attention.py's formula, for a GPT's shapes.

The formulas are attention.py's; here they run for the queries r0:r1 against the keys :r1 only. Every key past
r1 is masked for all of them, so its score, exp and products are skipped: with T = 128 in blocks of 32, 10 of
the 16 (32 x 32) tiles of the (T, T) matrix are computed. A kernel knows arrays only: `forward` takes q, k, v
and returns y with what the op must save for `backward` (`Saved`), and the op keeps it; the causal mask
(`causal_hidden`, `mask_causal_`) is written here, below the op, which uses it for its whole-matrix path too.
tests/test_ops_nn.py checks both paths equal.
Each block's scale, mask and softmax (`causal_softmax_`) and its backward step (`softmax_backward_`) are written
here in NumPy; with the compiled kernels (select.py) numba_softmax.py runs each in one pass instead.
Read next: ../fused/attention.py (the op it implements).
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from minigrad.core.backend import get_array_module
from minigrad.kernels.blas import row_sum, transposed_right
from minigrad.kernels.select import compiled
from minigrad.kernels.softmax_rows import stable_softmax

# Query rows per block of causal attention: large enough that each block's products stay large BLAS calls.
CAUSAL_ROW_BLOCK = 32


@functools.lru_cache(maxsize=32)
def causal_hidden(xp: Any, t_query: int, t_key: int) -> Any:
    """True where query i may not see key j (j > i): PyTorch's `is_causal` alignment, the lower triangle of a
    (T_q, T_k) matrix from its top-left corner, is what stays visible. Cached per shape: the same few
    (T_q, T_k) come back every step. (A KV cache, whose queries are the last positions of the keys, passes its
    own mask instead.)"""
    return ~xp.tri(t_query, t_key, dtype=bool)


def mask_causal_(xp: Any, scores: Any) -> Any:
    """The scores of the keys a query may not see set to -inf, in place (so their probabilities are 0).

    Set, not added to: a NaN or inf in a hidden score stays hidden, as the key is, and the rows that cannot see
    it stay finite, as in PyTorch's fused attention on the CPU (its reference formula, which adds the -inf mask,
    would spread the NaN to every row; a future token then could change the past).
    """
    xp.copyto(scores, -xp.inf, where=causal_hidden(xp, *scores.shape[-2:]))  # (where= broadcasts, on CuPy too)
    return scores


class Saved(NamedTuple):
    """What the op keeps from `forward` for `backward`: contiguous q, k, v, the output y, and per block of rows
    the probabilities P and the dropped P' (P itself without dropout)."""

    q: Any
    k: Any
    v: Any
    y: Any
    p: list
    dropped: list


def causal_row_blocks(q: Any, k: Any, v: Any) -> list[tuple[int, int]] | None:
    """The row ranges (r0, r1) that split causal self-attention into blocks, or None to compute it whole.

    Self-attention only (q, k, v of one shape: no cache, no broadcast batch axes, whose gradients would need
    summing), and only when there are at least two blocks.
    """
    t = q.shape[-2] if q.ndim >= 2 else 0
    if not (q.shape == k.shape == v.shape and t > CAUSAL_ROW_BLOCK):
        return None
    return [(r0, min(r0 + CAUSAL_ROW_BLOCK, t)) for r0 in range(0, t, CAUSAL_ROW_BLOCK)]


def causal_softmax_(scores: Any, scale: float) -> Any:
    """P = softmax(scores * scale + M) over the last axis, in place, for a block of R query rows against K keys.

    M is the causal mask of the block's last R rows of a (K, K) matrix: row i sees keys j <= i + K - R, the rest
    are -inf (so P is 0 there). `mask_causal_` sets them (it sets rather than adds: a NaN the mask hides stays
    hidden), on the (R, R) block on the diagonal. Returns `scores`, now P.
    """
    rows, keys = scores.shape[-2:]
    scores *= scale
    mask_causal_(get_array_module(scores), scores[..., keys - rows:])
    return stable_softmax(scores, axis=-1, overwrite=True)


def softmax_backward_(gp: Any, p: Any, rowsum: Any) -> Any:
    """gS = P * (gP - rowsum(gP * P)), in place in gp, with the row sums given (..., R, 1). Returns gp, now gS."""
    gp -= rowsum
    gp *= p
    return gp


def forward(q: Any, k: Any, v: Any, scale: float, keep: Any, row_blocks: list[tuple[int, int]]) -> Saved:
    """The attention output y for q, k, v, block by block (`row_blocks`, from causal_row_blocks), with `keep` the
    dropout mask or None; returns y within what the op saves for `backward`."""
    xp = get_array_module(q)
    # Every block reads the first rows of k and v: one contiguous copy now (a GPT's q, k, v are strided
    # views of one projection) saves every product below from copying its operands again.
    q, k, v = (xp.ascontiguousarray(a) for a in (q, k, v))
    k_t = transposed_right(k, CAUSAL_ROW_BLOCK)  # once for every block
    y = xp.empty(v.shape, dtype=v.dtype)
    saved = Saved(q, k, v, y, [], [])  # one (..., r1 - r0, r1) array per block in p and dropped
    for r0, r1 in row_blocks:
        scores = q[..., r0:r1, :] @ k_t[..., :r1]  # a new array, which the softmax overwrites
        fast = compiled("softmax", scores)  # kernels/numba_softmax.py: the three steps in one pass, or None
        p = fast.causal_softmax_(scores, scale) if fast else causal_softmax_(scores, scale)
        dropped = p if keep is None else p * keep[..., r0:r1, :r1]
        y[..., r0:r1, :] = dropped @ v[..., :r1, :]
        saved.p.append(p)
        saved.dropped.append(dropped)
    return saved


def backward(saved: Saved, gy: Any, scale: float, keep: Any,
             row_blocks: list[tuple[int, int]]) -> tuple[Any, Any, Any]:
    """(gq, gk, gv) for the upstream gradient gy, block by block, from what `forward` returned."""
    q, k, v = saved.q, saved.k, saved.v
    xp = get_array_module(gy)
    gq, gk, gv = xp.empty(q.shape, dtype=q.dtype), xp.zeros(k.shape, dtype=k.dtype), xp.zeros_like(v)
    rowsum = row_sum(gy * saved.y)
    v_t = transposed_right(v, CAUSAL_ROW_BLOCK)
    for (r0, r1), p, dropped in zip(row_blocks, saved.p, saved.dropped):
        gy_rows = gy[..., r0:r1, :]
        gv[..., :r1, :] += xp.swapaxes(dropped, -1, -2) @ gy_rows
        gs = gy_rows @ v_t[..., :r1]
        if keep is not None:
            gs *= keep[..., r0:r1, :r1]
        fast = compiled("softmax", gs, p)  # the same step in one pass, or None
        gs = (fast.softmax_backward_ if fast else softmax_backward_)(gs, p, rowsum[..., r0:r1, :])
        gq[..., r0:r1, :] = gs @ k[..., :r1, :]
        gk[..., :r1, :] += xp.swapaxes(gs, -1, -2) @ q[..., r0:r1, :]
    gq *= scale
    gk *= scale
    return gq, gk, gv
