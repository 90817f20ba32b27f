"""Fused neural-network ops, each with a hand-derived, numerically stable backward.

Every op here could be composed from the primitive ops (minigrad/reference.py does exactly that,
and tests/test_fused.py shows both agree). Fusing them keeps fewer temporaries alive, skips many
small graph nodes, and lets us subtract the row maximum before `exp`, so large logits never overflow.
Read next: losses.py (the fused losses), then minigrad/functional.py, which exposes these as F.softmax,
F.layer_norm, F.cross_entropy, ...
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from minigrad import backend
from minigrad.backend import get_array_module
from minigrad.function import Function
from minigrad.ops.activations import require_float
from minigrad.tensor import ShapeError


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
    total = backend.row_sum(e) if axis in (-1, e.ndim - 1) else e.sum(axis=axis, keepdims=True)
    e /= xp.where(total == 0, 1, total) if safe else total
    return e


def stable_log_softmax(x: Any, axis: int) -> Any:
    """log_softmax(x) = x - logsumexp(x), with logsumexp(x) = m + log(sum(exp(x - m))), m = max(x)."""
    xp = get_array_module(x)
    if x.size == 0:  # nothing to normalise (max of an empty axis would raise)
        return x.copy()
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


class Softmax(Function):
    """y = exp(x) / sum(exp(x));  gx = y * (gy - sum(gy * y))  (the Jacobian diag(y) - y y^T, applied)."""

    axis: int

    def forward(self, x):
        self.y = stable_softmax(require_float("softmax", x), self.axis)
        return self.y

    def backward(self, gy):
        y = self.y
        return y * (gy - (gy * y).sum(axis=self.axis, keepdims=True))


class LogSoftmax(Function):
    """y = x - logsumexp(x);  gx = gy - softmax(x) * sum(gy)."""

    axis: int

    def forward(self, x):
        self.y = stable_log_softmax(require_float("log_softmax", x), self.axis)
        return self.y

    def backward(self, gy):
        xp = get_array_module(gy)
        return gy - xp.exp(self.y) * gy.sum(axis=self.axis, keepdims=True)


def check_ids(op: str, what: str, ids: Any, size: int) -> None:
    """Raise IndexError naming the first id outside 0..size-1 (one scalar read, not a host copy)."""
    if ids.size == 0:
        return
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or high >= size:
        bad = low if low < 0 else high
        raise IndexError(f"{op}: {what} {bad} is out of range; valid {what}s are 0..{size - 1}")


class LayerNorm(Function):
    """y = xhat * w + b,  xhat = (x - mean) / sqrt(var + eps), over the last axis.

    gxhat = gy * w;  gx = (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)) / sqrt(var + eps);
    gw = sum(gy * xhat), gb = sum(gy) over every axis but the last.
    float16 input is normalised in float32, as PyTorch does: its variance easily overflows float16's 65504
    (a spread of 256 is enough), and 1 / sqrt(inf) would silently turn the whole row into zeros.
    """

    eps: float

    def forward(self, x, weight=None, bias=None):
        xp = get_array_module(x)
        self.dtype = x.dtype
        x, weight, bias = (None if a is None else a.astype(np.float32) if a.dtype == np.float16 else a
                           for a in (x, weight, bias))
        xhat = x - backend.row_mean(x)  # centred here, normalised in place below
        self.rstd = 1 / xp.sqrt(backend.row_mean(xhat * xhat) + self.eps)
        xhat *= self.rstd
        self.xhat, self.weight, self.has_bias = xhat, weight, bias is not None
        y = xhat * weight if weight is not None else xhat.copy()  # a copy: xhat is saved for backward
        if bias is not None:
            y += bias
        return y.astype(self.dtype, copy=False)

    def backward(self, gy):
        xhat, width = self.xhat, self.xhat.shape[-1]
        gy = gy.astype(xhat.dtype, copy=False)  # float16: the gradients are computed in float32 too
        grads = []
        if self.weight is not None:
            grads.append(backend.column_sum((gy * xhat).reshape(-1, width)))
        if self.has_bias:
            grads.append(backend.column_sum(gy.reshape(-1, width)))
        gxhat = gy if self.weight is None else gy * self.weight
        # gx = rstd * (gxhat - mean(gxhat) - xhat * mean(gxhat * xhat)), built in one new array:
        gx = xhat * backend.row_mean(gxhat * xhat)
        gx += backend.row_mean(gxhat)
        get_array_module(gy).subtract(gxhat, gx, out=gx)
        gx *= self.rstd
        return tuple(g.astype(self.dtype, copy=False) for g in (gx, *grads))

    def composed(self, x, weight=None, bias=None):
        """The same function from primitive ops, whose graph gives double backward (higher_order.py)."""
        from minigrad import reference  # (it imports the ops)

        inputs = (t if t is None or t.dtype != np.float16 else t.float() for t in (x, weight, bias))
        return reference.layer_norm(*inputs, eps=self.eps).to(self.dtype)


class Embedding(Function):
    """y = weight[ids] (one row per id);  gweight[i] = sum of gy over the positions where ids == i.

    The row `padding_idx` (if any) gets no gradient, as in PyTorch: a padding token's vector stays put.
    """

    ids: Any
    padding_idx: int | None = None
    is_linear = True  # y = A weight: for double backward its backward runs as an op (higher_order.py)

    def forward(self, weight):
        check_ids("embedding", "id", self.ids, weight.shape[0])
        self.weight_shape, self.dtype = weight.shape, weight.dtype
        return weight[self.ids]

    def backward(self, gy):
        gw = get_array_module(gy).zeros(self.weight_shape, dtype=self.dtype)
        # A token that occurs twice must collect both gradients: scatter-add, not assignment.
        backend.scatter_add(gw, self.ids.reshape(-1), gy.reshape(-1, self.weight_shape[-1]))
        if self.padding_idx is not None:
            gw[self.padding_idx] = 0
        return gw


class Dropout(Function):
    """y = x * mask / (1 - p), mask ~ Bernoulli(1 - p);  gx = gy * mask / (1 - p)."""

    keep: Any  # the mask already divided by (1 - p)
    is_linear = True

    def forward(self, x):
        return x * self.keep

    def backward(self, gy):
        return gy * self.keep


@functools.lru_cache(maxsize=32)
def causal_bias(xp: Any, t_query: int, t_key: int, dtype: Any) -> Any:
    """0 where query i may see key j (j <= i), -inf elsewhere: added to the scores, it masks them.

    PyTorch's `is_causal` alignment: the lower triangle of a (T_q, T_k) matrix, from its top-left corner.
    (A KV cache, whose queries are the last positions of the keys, passes its own mask instead.)
    Cached per shape: the same few (T_q, T_k) come back every step.
    """
    return xp.where(xp.tri(t_query, t_key, dtype=bool), 0.0, -xp.inf).astype(dtype)


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


def attention_scores(q: Any, k: Any, is_causal: bool, mask: Any, scale: float) -> Any:
    """Masked, scaled scores q k^T * scale, softmaxed over the keys: the attention probabilities.

    A query masked from every key gets probabilities 0 (an output of 0), as in PyTorch, not nan.
    """
    xp = get_array_module(q)
    scores = q @ transposed_right(k, q.shape[-2])  # (..., T_q, T_k): a new array, so the steps below work in place
    scores *= scale
    if is_causal:
        scores += causal_bias(xp, q.shape[-2], k.shape[-2], scores.dtype)
    if mask is not None:
        # An additive mask takes the scores' dtype, so a float64 mask never promotes float32 attention.
        scores = xp.where(mask, scores, -xp.inf) if mask.dtype == bool else scores + mask.astype(scores.dtype)
    return stable_softmax(scores, axis=-1, overwrite=True, safe=mask is not None)


class ScaledDotProductAttention(Function):
    """y = P' v with P = softmax(S), S = q k^T / sqrt(d) + mask (masked entries -inf), P' = P * keep.

    keep is the dropout mask divided by (1 - p), or 1 without dropout. gv = P'^T gy;  gP' = gy v^T;
    gP = gP' * keep;  gS = P * (gP - rowsum(gP * P));  gq = gS k / sqrt(d);  gk = gS^T q / sqrt(d).
    rowsum(gP * P)_i = sum_j (gy_i . v_j) P'_ij = gy_i . y_i, so it is computed from gy and y, (T, d) arrays,
    instead of from two (T, T) ones (the trick FlashAttention uses).
    """

    is_causal: bool
    mask: Any
    scale: float | None
    keep: Any  # None, or the dropout mask over the probabilities, already divided by (1 - p)

    def forward(self, q, k, v):
        if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
            raise ShapeError(f"scaled_dot_product_attention: q {q.shape}, k {k.shape}, v {v.shape}")
        scale = self.scale if self.scale is not None else 1 / math.sqrt(q.shape[-1])
        self.q, self.k, self.v, self.used_scale = q, k, v, scale
        # Causal self-attention (a GPT's) in blocks of query rows, each against only the keys it may see.
        self.row_blocks = causal_row_blocks(q, k, v) if self.is_causal and self.mask is None else None
        if self.row_blocks is not None:
            return self._forward_in_row_blocks()
        self.p = attention_scores(q, k, self.is_causal, self.mask, scale)  # (..., T_q, T_k)
        dropped = self.p if self.keep is None else self.p * self.keep
        self.dropped = dropped
        self.y = dropped @ v  # (..., T_q, d)
        return self.y

    def backward(self, gy):
        if self.row_blocks is not None:
            return self._backward_in_row_blocks(gy)
        xp = get_array_module(gy)
        gv = xp.swapaxes(self.dropped, -1, -2) @ gy
        gs = gy @ transposed_right(self.v, gy.shape[-2])  # gP', a new array that becomes gS in place
        if self.keep is not None:
            gs *= self.keep
        gs -= backend.row_sum(gy * self.y)
        gs *= self.p
        gq = gs @ self.k
        gq *= self.used_scale  # the scale is applied to the (T, d) products, not to the (T, T) gS
        gk = xp.swapaxes(gs, -1, -2) @ self.q
        gk *= self.used_scale
        return gq, gk, gv

    # Causal attention in row blocks: the same formulas as above, for the queries `rows` = r0:r1 against
    # the keys :r1. Every key past r1 is masked for all of them, so its score, exp and products are skipped:
    # with T = 128 in blocks of 32, 10 of the 16 (32 x 32) tiles of the (T, T) matrix are computed.

    def _forward_in_row_blocks(self):
        xp = get_array_module(self.q)
        # Every block reads the first rows of k and v: one contiguous copy now (a GPT's q, k, v are strided
        # views of one projection) saves every product below from copying its operands again.
        q, k, v = (xp.ascontiguousarray(a) for a in (self.q, self.k, self.v))
        self.q, self.k, self.v = q, k, v
        k_t = transposed_right(k, CAUSAL_ROW_BLOCK)  # once for every block
        self.y = xp.empty(v.shape, dtype=v.dtype)
        self.p, self.dropped = [], []  # one (..., r1 - r0, r1) array per block
        for r0, r1 in self.row_blocks:
            scores = q[..., r0:r1, :] @ k_t[..., :r1]
            scores *= self.used_scale
            scores[..., r0:] += causal_bias(xp, r1 - r0, r1 - r0, scores.dtype)  # the block on the diagonal
            p = stable_softmax(scores, axis=-1, overwrite=True)
            dropped = p if self.keep is None else p * self.keep[..., r0:r1, :r1]
            self.y[..., r0:r1, :] = dropped @ v[..., :r1, :]
            self.p.append(p)
            self.dropped.append(dropped)
        return self.y

    def _backward_in_row_blocks(self, gy):
        q, k, v = self.q, self.k, self.v
        xp = get_array_module(gy)
        gq, gk, gv = xp.empty(q.shape, dtype=q.dtype), xp.zeros(k.shape, dtype=k.dtype), xp.zeros_like(v)
        rowsum = backend.row_sum(gy * self.y)
        v_t = transposed_right(v, CAUSAL_ROW_BLOCK)
        for (r0, r1), p, dropped in zip(self.row_blocks, self.p, self.dropped):
            gy_rows = gy[..., r0:r1, :]
            gv[..., :r1, :] += xp.swapaxes(dropped, -1, -2) @ gy_rows
            gs = gy_rows @ v_t[..., :r1]
            if self.keep is not None:
                gs *= self.keep[..., r0:r1, :r1]
            gs -= rowsum[..., r0:r1, :]
            gs *= p
            gq[..., r0:r1, :] = gs @ k[..., :r1, :]
            gk[..., :r1, :] += xp.swapaxes(gs, -1, -2) @ q[..., r0:r1, :]
        gq *= self.used_scale
        gk *= self.used_scale
        return gq, gk, gv

    def composed(self, q, k, v):
        """The same attention from primitive ops (reference.softmax), whose graph gives double backward."""
        from minigrad import reference  # (it imports the ops)

        xp = get_array_module(q.data)
        scores = (q @ k.swapaxes(-1, -2)) * self.used_scale  # (..., T_q, T_k)
        if self.is_causal:
            scores = scores + causal_bias(xp, q.shape[-2], k.shape[-2], scores.dtype)
        if self.mask is not None and self.mask.dtype == bool:
            scores = scores.masked_fill(xp.broadcast_to(~self.mask, scores.shape), -math.inf)
        elif self.mask is not None:
            scores = scores + self.mask.astype(scores.dtype)
        hidden = xp.isneginf(scores.data).all(axis=-1, keepdims=True)  # a query masked from every key: p = 0
        p = reference.softmax(scores.masked_fill(xp.broadcast_to(hidden, scores.shape), 0.0), -1)
        p = p.masked_fill(xp.broadcast_to(hidden, p.shape), 0.0)
        return (p if self.keep is None else p * self.keep) @ v
