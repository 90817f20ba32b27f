"""Causal self-attention in blocks of query rows: the kernel behind attention.py's formula, for a GPT's shapes.

The formulas are attention.py's; here they run for the queries r0:r1 against the keys :r1 only. Every key past
r1 is masked for all of them, so its score, exp and products are skipped: with T = 128 in blocks of 32, 10 of
the 16 (32 x 32) tiles of the (T, T) matrix are computed. The op calls `forward`/`backward` with itself, and
they save and read its buffers as its own whole-matrix path does. tests/test_ops_nn.py checks both paths equal.
Each block's scale, mask and softmax (`causal_softmax_`) and its backward step (`softmax_backward_`) are written
here in NumPy; with the compiled kernels (select.py) numba_softmax.py runs each in one pass instead.
Read next: select.py, the one seam through which the compiled kernels are chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from minigrad.core.backend import get_array_module
from minigrad.kernels.blas import row_sum, transposed_right
from minigrad.kernels.select import compiled
from minigrad.kernels.softmax_rows import stable_softmax

# Query rows per block of causal attention: large enough that each block's products stay large BLAS calls.
CAUSAL_ROW_BLOCK = 32


def causal_row_blocks(q: Any, k: Any, v: Any) -> list[tuple[int, int]] | None:
    """The row ranges (r0, r1) that split causal self-attention into blocks, or None to compute it whole.

    Self-attention only (q, k, v of one shape: no cache, no broadcast batch axes, whose gradients would need
    summing), and only when there are at least two blocks.
    """
    t = q.shape[-2] if q.ndim >= 2 else 0
    if not (q.shape == k.shape == v.shape and t > CAUSAL_ROW_BLOCK):
        return None
    return [(r0, min(r0 + CAUSAL_ROW_BLOCK, t)) for r0 in range(0, t, CAUSAL_ROW_BLOCK)]


def causal_softmax_(scores: Any, scale: float, causal_bias: Callable[..., Any]) -> Any:
    """P = softmax(scores * scale + M) over the last axis, in place, for a block of R query rows against K keys.

    M is the causal mask of the block's last R rows of a (K, K) matrix: row i sees keys j <= i + K - R, the rest
    are -inf (so P is 0 there). `causal_bias` is the formula's mask (attention.causal_bias), applied to the
    (R, R) block on the diagonal. Returns `scores`, now P.
    """
    rows, keys = scores.shape[-2:]
    scores *= scale
    scores[..., keys - rows:] += causal_bias(get_array_module(scores), rows, rows, scores.dtype)
    return stable_softmax(scores, axis=-1, overwrite=True)


def softmax_backward_(gp: Any, p: Any, rowsum: Any) -> Any:
    """gS = P * (gP - rowsum(gP * P)), in place in gp, with the row sums given (..., R, 1). Returns gp, now gS."""
    gp -= rowsum
    gp *= p
    return gp


def forward(op: Any, causal_bias: Callable[..., Any]) -> Any:
    """The attention output y for op.q, op.k, op.v, block by block; saves p and the dropped p per block on `op`.

    `causal_bias` is the formula's mask (attention.causal_bias), for the block on the diagonal.
    """
    xp = get_array_module(op.q)
    # Every block reads the first rows of k and v: one contiguous copy now (a GPT's q, k, v are strided
    # views of one projection) saves every product below from copying its operands again.
    q, k, v = (xp.ascontiguousarray(a) for a in (op.q, op.k, op.v))
    op.q, op.k, op.v = q, k, v
    k_t = transposed_right(k, CAUSAL_ROW_BLOCK)  # once for every block
    op.y = xp.empty(v.shape, dtype=v.dtype)
    op.p, op.dropped = [], []  # one (..., r1 - r0, r1) array per block
    for r0, r1 in op.row_blocks:
        scores = q[..., r0:r1, :] @ k_t[..., :r1]  # a new array, which the softmax overwrites
        fast = compiled("softmax", scores)  # kernels/numba_softmax.py: the three steps in one pass, or None
        if fast:
            p = fast.causal_softmax_(scores, op.used_scale)
        else:
            p = causal_softmax_(scores, op.used_scale, causal_bias)
        dropped = p if op.keep is None else p * op.keep[..., r0:r1, :r1]
        op.y[..., r0:r1, :] = dropped @ v[..., :r1, :]
        op.p.append(p)
        op.dropped.append(dropped)
    return op.y


def backward(op: Any, gy: Any) -> tuple[Any, Any, Any]:
    """(gq, gk, gv) for the upstream gradient gy, block by block, from the buffers `forward` saved on `op`."""
    q, k, v = op.q, op.k, op.v
    xp = get_array_module(gy)
    gq, gk, gv = xp.empty(q.shape, dtype=q.dtype), xp.zeros(k.shape, dtype=k.dtype), xp.zeros_like(v)
    rowsum = row_sum(gy * op.y)
    v_t = transposed_right(v, CAUSAL_ROW_BLOCK)
    for (r0, r1), p, dropped in zip(op.row_blocks, op.p, op.dropped):
        gy_rows = gy[..., r0:r1, :]
        gv[..., :r1, :] += xp.swapaxes(dropped, -1, -2) @ gy_rows
        gs = gy_rows @ v_t[..., :r1]
        if op.keep is not None:
            gs *= op.keep[..., r0:r1, :r1]
        fast = compiled("softmax", gs, p)  # the same step in one pass, or None
        gs = (fast.softmax_backward_ if fast else softmax_backward_)(gs, p, rowsum[..., r0:r1, :])
        gq[..., r0:r1, :] = gs @ k[..., :r1, :]
        gk[..., :r1, :] += xp.swapaxes(gs, -1, -2) @ q[..., r0:r1, :]
    gq *= op.used_scale
    gk *= op.used_scale
    return gq, gk, gv
