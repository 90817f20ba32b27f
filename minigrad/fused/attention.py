"""Scaled dot-product attention, fused: the formula, in readable NumPy, forward and backward.

Attention is written three times, each with one job:
- here, the formula: the whole (T_q, T_k) matrix of scores, softmaxed, times v, and its hand-derived backward;
- kernels/causal_rows.py, the kernel: the same formulas for causal self-attention in blocks of query rows,
  skipping the masked tiles (the op chooses it for a GPT's shapes);
- twins.scaled_dot_product_attention, the twin: the same function composed from primitive ops, which
  tests/test_fused.py holds this op to, and which double backward differentiates (higher_order.py).
Read next: twins.py (each fused op's composed twin); ../kernels/causal_rows.py is this op's second implementation.
"""

from __future__ import annotations

import math
from typing import Any

from minigrad.core.backend import get_array_module
from minigrad.core.function import Function
from minigrad.kernels import causal_rows
from minigrad.kernels.blas import row_sum, transposed_right
from minigrad.kernels.causal_rows import mask_causal_
from minigrad.kernels.softmax_rows import stable_softmax
from minigrad.tensor import ShapeError


def attention_scores(q: Any, k: Any, is_causal: bool, mask: Any, scale: float) -> Any:
    """Masked, scaled scores q k^T * scale, softmaxed over the keys: the attention probabilities.

    A query masked from every key gets probabilities 0 (an output of 0), as in PyTorch, not nan.
    """
    xp = get_array_module(q)
    scores = q @ transposed_right(k, q.shape[-2])  # (..., T_q, T_k): a new array, so the steps below work in place
    scores *= scale
    if is_causal:
        mask_causal_(xp, scores)
    if mask is not None:
        # An additive mask takes the scores' dtype, so a float64 mask never promotes float32 attention.
        scores = xp.where(mask, scores, -xp.inf) if mask.dtype == bool else scores + mask.astype(scores.dtype)
    return stable_softmax(scores, axis=-1, overwrite=True, safe=mask is not None)


class ScaledDotProductAttention(Function):
    """y = P' v with P = softmax(S), S = q k^T / sqrt(d) + mask (masked entries -inf), P' = P * keep.

    keep is the dropout mask divided by (1 - p), or 1 without dropout. gv = P'^T gy;  gP' = gy v^T;
    gP = gP' * keep;  gS = P * (gP - rowsum(gP * P));  gq = gS k / sqrt(d);  gk = gS^T q / sqrt(d).
    A float mask that requires grad (a learned bias, ALiBi's slopes) is a fourth input: dS/dmask = 1, so
    gmask = gS (the engine sums it back to the mask's broadcast shape). Otherwise the mask is a constant.
    rowsum(gP * P)_i = sum_j (gy_i . v_j) P'_ij = gy_i . y_i, so it is computed from gy and y, (T, d) arrays,
    instead of from two (T, T) ones (the trick FlashAttention uses).
    """

    is_causal: bool
    mask: Any
    scale: float | None
    keep: Any  # None, or the dropout mask over the probabilities, already divided by (1 - p)
    double_backward = "composed"

    def forward(self, q, k, v, mask=None):
        self.mask_is_input = mask is not None
        if self.mask_is_input:
            self.mask = mask
        if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
            raise ShapeError(f"scaled_dot_product_attention: q {q.shape}, k {k.shape}, v {v.shape}")
        scale = self.scale if self.scale is not None else 1 / math.sqrt(q.shape[-1])
        self.used_scale = scale
        # Causal self-attention (a GPT's) in blocks of query rows, each against only the keys it may see.
        self.row_blocks = causal_rows.causal_row_blocks(q, k, v) if self.is_causal and self.mask is None else None
        if self.row_blocks is not None:
            self.saved = causal_rows.forward(q, k, v, scale, self.keep, self.row_blocks)
            return self.saved.y
        self.q, self.k, self.v = q, k, v
        self.p = attention_scores(q, k, self.is_causal, self.mask, scale)  # (..., T_q, T_k)
        dropped = self.p if self.keep is None else self.p * self.keep
        self.dropped = dropped
        self.y = dropped @ v  # (..., T_q, d)
        return self.y

    def backward(self, gy):
        if self.row_blocks is not None:
            return causal_rows.backward(self.saved, gy, self.used_scale, self.keep, self.row_blocks)
        xp = get_array_module(gy)
        gv = xp.swapaxes(self.dropped, -1, -2) @ gy
        gs = gy @ transposed_right(self.v, gy.shape[-2])  # gP', a new array that becomes gS in place
        if self.keep is not None:
            gs *= self.keep
        gs -= row_sum(gy * self.y)
        gs *= self.p
        gq = gs @ self.k
        gq *= self.used_scale  # the scale is applied to the (T, d) products, not to the (T, T) gS
        gk = xp.swapaxes(gs, -1, -2) @ self.q
        gk *= self.used_scale
        return (gq, gk, gv, gs) if self.mask_is_input else (gq, gk, gv)  # gs is gS, the mask's gradient

    def composed(self, q, k, v, mask=None):
        """The same attention from primitive ops (the twin), whose graph gives double backward (higher_order.py)."""
        from minigrad.fused import twins  # (it imports the ops)

        return twins.scaled_dot_product_attention(q, k, v, attn_mask=self.mask if mask is None else mask,
                                                  is_causal=self.is_causal, scale=self.used_scale, keep=self.keep)
