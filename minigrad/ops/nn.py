"""Fused neural-network ops, each with a hand-derived, numerically stable backward.

Every op here could be composed from the primitive ops (minigrad/reference.py does exactly that,
and tests/test_fused.py shows both agree). Fusing them keeps fewer temporaries alive, skips many
small graph nodes, and lets us subtract the row maximum before `exp`, so large logits never overflow.
Read next: minigrad/functional.py, which exposes these as F.softmax, F.cross_entropy, ...
"""

from __future__ import annotations

import math
from typing import Any

from minigrad import backend
from minigrad.backend import get_array_module
from minigrad.tensor import Function, ShapeError


def stable_softmax(x: Any, axis: int) -> Any:
    """softmax(x) = exp(x - max(x)) / sum(exp(x - max(x))): the same value, and exp never overflows."""
    xp = get_array_module(x)
    e = xp.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def stable_log_softmax(x: Any, axis: int) -> Any:
    """log_softmax(x) = x - logsumexp(x), with logsumexp(x) = m + log(sum(exp(x - m))), m = max(x)."""
    xp = get_array_module(x)
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


class Softmax(Function):
    """y = exp(x) / sum(exp(x));  gx = y * (gy - sum(gy * y))  (the Jacobian diag(y) - y y^T, applied)."""

    axis: int

    def forward(self, x):
        self.y = stable_softmax(x, self.axis)
        return self.y

    def backward(self, gy):
        y = self.y
        return y * (gy - (gy * y).sum(axis=self.axis, keepdims=True))


class LogSoftmax(Function):
    """y = x - logsumexp(x);  gx = gy - softmax(x) * sum(gy)."""

    axis: int

    def forward(self, x):
        self.y = stable_log_softmax(x, self.axis)
        return self.y

    def backward(self, gy):
        xp = get_array_module(gy)
        return gy - xp.exp(self.y) * gy.sum(axis=self.axis, keepdims=True)


class CrossEntropy(Function):
    """loss = mean over counted rows of -log softmax(z)[target];  gz = (softmax(z) - onehot(target)) / n.

    Rows whose target equals `ignore_index` are not counted and get no gradient.
    """

    targets: Any
    ignore_index: int | None

    def forward(self, logits):
        xp = get_array_module(logits)
        num_classes = logits.shape[-1]
        targets = self.targets
        if targets.dtype.kind not in "iu":
            raise TypeError(f"cross_entropy: targets must be integer class ids, not {targets.dtype}")
        if targets.shape != logits.shape[:-1]:
            raise ShapeError(f"cross_entropy: logits {logits.shape} need targets {logits.shape[:-1]}, "
                             f"got {targets.shape}")
        z = logits.reshape(-1, num_classes)  # (N, C)
        t = targets.reshape(-1)  # (N,)
        counted = xp.ones(t.shape, dtype=bool) if self.ignore_index is None else t != self.ignore_index
        check_ids("cross_entropy", "target", t[counted], num_classes)
        t = xp.where(counted, t, 0)  # any valid row for the ignored ones; their weight is 0
        log_probs = stable_log_softmax(z, axis=-1)
        rows = xp.arange(t.shape[0])
        self.weight = (counted / counted.sum()).astype(z.dtype)  # 1/n for counted rows, 0 otherwise
        self.probs, self.t, self.rows, self.shape = xp.exp(log_probs), t, rows, logits.shape
        return -(log_probs[rows, t] * self.weight).sum()

    def backward(self, gy):
        gz = self.probs.copy()
        gz[self.rows, self.t] -= 1
        gz *= self.weight[:, None] * gy
        return gz.reshape(self.shape)


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
    """

    eps: float

    def forward(self, x, weight=None, bias=None):
        xp = get_array_module(x)
        centered = x - x.mean(axis=-1, keepdims=True)
        self.rstd = 1 / xp.sqrt((centered * centered).mean(axis=-1, keepdims=True) + self.eps)
        self.xhat = centered * self.rstd
        self.weight, self.has_bias = weight, bias is not None
        y = self.xhat if weight is None else self.xhat * weight
        return y if bias is None else y + bias

    def backward(self, gy):
        xhat, width = self.xhat, self.xhat.shape[-1]
        gxhat = gy if self.weight is None else gy * self.weight
        gx = self.rstd * (gxhat - gxhat.mean(axis=-1, keepdims=True)
                          - xhat * (gxhat * xhat).mean(axis=-1, keepdims=True))
        grads = [gx]
        if self.weight is not None:
            grads.append((gy * xhat).reshape(-1, width).sum(axis=0))
        if self.has_bias:
            grads.append(gy.reshape(-1, width).sum(axis=0))
        return tuple(grads)


class Embedding(Function):
    """y = weight[ids] (one row per id);  gweight[i] = sum of gy over the positions where ids == i."""

    ids: Any

    def forward(self, weight):
        if self.ids.dtype.kind not in "iu":
            raise TypeError(f"embedding: ids must be integers, not {self.ids.dtype}")
        check_ids("embedding", "id", self.ids, weight.shape[0])
        self.weight_shape, self.dtype = weight.shape, weight.dtype
        return weight[self.ids]

    def backward(self, gy):
        gw = get_array_module(gy).zeros(self.weight_shape, dtype=self.dtype)
        # A token that occurs twice must collect both gradients: scatter-add, not assignment.
        backend.scatter_add(gw, self.ids.reshape(-1), gy.reshape(-1, self.weight_shape[-1]))
        return gw


class Dropout(Function):
    """y = x * mask / (1 - p), mask ~ Bernoulli(1 - p);  gx = gy * mask / (1 - p)."""

    keep: Any  # the mask already divided by (1 - p)

    def forward(self, x):
        return x * self.keep

    def backward(self, gy):
        return gy * self.keep


def causal_mask(xp: Any, t_query: int, t_key: int) -> Any:
    """Boolean (T_q, T_k): True where query i may look at key j.

    Queries are the last T_q positions of the keys (a KV cache appends queries at the end), so
    query i sits at position i + T_k - T_q and sees keys up to and including that position.
    """
    return xp.tri(t_query, t_key, k=t_key - t_query, dtype=bool)


def attention_scores(q: Any, k: Any, is_causal: bool, mask: Any, scale: float) -> Any:
    """Masked, scaled scores q k^T * scale, softmaxed over the keys: the attention probabilities."""
    xp = get_array_module(q)
    scores = (q @ xp.swapaxes(k, -1, -2)) * scale  # (..., T_q, T_k)
    if is_causal:
        scores = xp.where(causal_mask(xp, q.shape[-2], k.shape[-2]), scores, -xp.inf)
    if mask is not None:
        # An additive mask takes the scores' dtype, so a float64 mask never promotes float32 attention.
        scores = xp.where(mask, scores, -xp.inf) if mask.dtype == bool else scores + mask.astype(scores.dtype)
    return stable_softmax(scores, axis=-1)


class ScaledDotProductAttention(Function):
    """y = P v with P = softmax(q k^T / sqrt(d) + mask), masked entries -inf.

    gv = P^T gy;  gP = gy v^T;  gS = P * (gP - sum(gP * P)) / sqrt(d);  gq = gS k;  gk = gS^T q.
    """

    is_causal: bool
    mask: Any
    scale: float | None

    def forward(self, q, k, v):
        if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
            raise ShapeError(f"scaled_dot_product_attention: q {q.shape}, k {k.shape}, v {v.shape}")
        scale = self.scale if self.scale is not None else 1 / math.sqrt(q.shape[-1])
        self.p = attention_scores(q, k, self.is_causal, self.mask, scale)
        self.q, self.k, self.v, self.used_scale = q, k, v, scale
        return self.p @ v

    def backward(self, gy):
        xp = get_array_module(gy)
        p = self.p
        gv = xp.swapaxes(p, -1, -2) @ gy
        gp = gy @ xp.swapaxes(self.v, -1, -2)
        gs = p * (gp - (gp * p).sum(axis=-1, keepdims=True)) * self.used_scale
        gq = gs @ self.k
        gk = xp.swapaxes(gs, -1, -2) @ self.q
        return gq, gk, gv
