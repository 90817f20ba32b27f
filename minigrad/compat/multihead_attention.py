"""`MultiheadAttention`, as `torch.nn.MultiheadAttention`: the projections around one call of
`F.scaled_dot_product_attention`; or, when the weights are asked for (need_weights, PyTorch's default), PyTorch's
explicit path, the engine's softmax op over the masked scores, so that the weights are a tensor of their own (not
the attention op: there PyTorch 2.13 gives NaN for a query masked from every key, and its fused op, as ours, 0).
Every input, a float `attn_mask` included, gets its gradient (a learned bias such as ALiBi's trains).
Read next: ../fused/attention.py (the attention it calls).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minigrad.functional as F
from minigrad.nn import init
from minigrad.nn.layers import Linear
from minigrad.nn.module import Module, Parameter
from minigrad.tensor import Tensor


class MultiheadAttention(Module):
    """`MultiheadAttention(embed_dim, num_heads, dropout=0.0, bias=True, batch_first=False)`.

    Parameters as PyTorch's: `in_proj_weight` (3E, E) holding W_q, W_k, W_v stacked, `in_proj_bias` (3E,) and
    `out_proj` (a Linear E -> E). forward(query, key, value, ...) returns (attn_output, attn_weights):

        head_h = softmax(q_h k_h^T / sqrt(hs) + mask) v_h,   q = query W_q^T + b_q (and so for k, v)
        attn_output = concat(head_1, ..., head_nh) W_o^T + b_o

    Inputs are (L, N, E) or, with `batch_first=True`, (N, L, E), or unbatched (L, E). Not covered (they raise):
    separate key/value sizes (kdim, vdim), add_bias_kv, add_zero_attn.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise ValueError(f"embed_dim must be divisible by num_heads (got {embed_dim} and {num_heads})")
        if add_bias_kv or add_zero_attn or kdim not in (None, embed_dim) or vdim not in (None, embed_dim):
            raise NotImplementedError("MultiheadAttention: minigrad has no add_bias_kv, add_zero_attn or "
                                      "kdim/vdim other than embed_dim")
        self.embed_dim, self.num_heads, self.head_dim = embed_dim, num_heads, embed_dim // num_heads
        self.dropout, self.batch_first = dropout, batch_first
        self.in_proj_weight = Parameter(np.zeros((3 * embed_dim, embed_dim)), dtype=dtype, device=device)
        self.in_proj_bias = Parameter(np.zeros(3 * embed_dim), dtype=dtype, device=device) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        init.xavier_uniform_(self.in_proj_weight)  # PyTorch's _reset_parameters: xavier, zero biases
        if bias:
            init.zeros_(self.out_proj.bias)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any = None,
                need_weights: bool = True, attn_mask: Any = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """attn_mask (L, S) or (N * nh, L, S) and key_padding_mask (N, S): boolean (True = may NOT attend, the
        opposite of scaled_dot_product_attention's) or float (added to the scores). `is_causal` is only a hint
        that attn_mask is causal, as in PyTorch, so it needs attn_mask. Weights are (N, L, S), averaged over
        heads unless average_attn_weights=False ((N, nh, L, S)); None unless need_weights."""
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint.")
        if query.ndim == 2:  # unbatched (L, E), as PyTorch allows: a batch of one
            return self._unbatched(query, key, value, key_padding_mask, need_weights, attn_mask,
                                   average_attn_weights, is_causal)
        if not self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        B, L, E = query.shape
        S, nh, hs = key.shape[1], self.num_heads, self.head_dim
        w, b = self.in_proj_weight, self.in_proj_bias
        q, k, v = (F.linear(x, w[i * E:(i + 1) * E], None if b is None else b[i * E:(i + 1) * E])
                   for i, x in enumerate((query, key, value)))
        q = q.view(B, L, nh, hs).transpose(1, 2)  # (B, nh, L, hs)
        k = k.view(B, S, nh, hs).transpose(1, 2)  # (B, nh, S, hs)
        v = v.view(B, S, nh, hs).transpose(1, 2)  # (B, nh, S, hs)
        masks = _masks(attn_mask, key_padding_mask, (B, nh, L, S), query.device)
        dropout_p = self.dropout if self.training else 0.0
        if need_weights:  # PyTorch's explicit path: the weights are returned, so they are a tensor of their own
            scores = (q @ k.transpose(-2, -1)) * hs**-0.5  # (B, nh, L, S)
            for mask in masks:
                scores = _apply_mask(scores, mask)
            probs = F.dropout(F.softmax(scores, dim=-1), dropout_p)  # (B, nh, L, S)
            y = probs @ v  # (B, nh, L, hs)
        else:  # PyTorch's fast path: the one attention op
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=_sdpa_mask(masks, q), dropout_p=dropout_p)
        y = y.transpose(1, 2).reshape(B, L, E)  # (B, L, nh * hs): the heads side by side
        y = self.out_proj(y)
        if not self.batch_first:
            y = y.transpose(0, 1)  # (L, B, E)
        if not need_weights:
            return y, None
        return y, probs.mean(dim=1) if average_attn_weights else probs

    def _unbatched(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Any,
                   *options: Any) -> tuple[Tensor, Tensor | None]:
        """forward on (L, E) inputs, a key_padding_mask (S,) and attn_mask (L, S) or (nh, L, S), as a batch of one."""
        dim = 0 if self.batch_first else 1
        if key_padding_mask is not None:
            key_padding_mask = _as_tensor(key_padding_mask, query.device).unsqueeze(0)  # (1, S)
        y, weights = self.forward(query.unsqueeze(dim), key.unsqueeze(dim), value.unsqueeze(dim), key_padding_mask,
                                  *options)
        return y.squeeze(dim), None if weights is None else weights.squeeze(0)

    def extra_repr(self) -> str:
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}, batch_first={self.batch_first}"


def _as_tensor(mask: Any, device: str) -> Tensor:
    """A mask given as a NumPy array (or list) as a tensor on the scores' device; a Tensor stays as it is."""
    return mask if isinstance(mask, Tensor) else Tensor(np.asarray(mask), dtype=np.asarray(mask).dtype, device=device)


def _masks(attn_mask: Any, key_padding_mask: Any, scores_shape: tuple[int, ...], device: str) -> list[Tensor]:
    """The masks given, each as a tensor broadcastable to the scores (B, nh, L, S)."""
    B, nh, L, S = scores_shape
    masks = []
    if attn_mask is not None:
        mask = _as_tensor(attn_mask, device)
        masks.append(mask if mask.ndim == 2 else mask.view(B, nh, L, S))
    if key_padding_mask is not None:
        masks.append(_as_tensor(key_padding_mask, device).view(B, 1, 1, S))
    return masks


def _sdpa_mask(masks: list[Tensor], q: Tensor) -> Tensor | None:
    """The masks as one mask in scaled_dot_product_attention's terms: a boolean one flipped (here True = may NOT
    attend, there True = may attend); several, or a float one, as one float mask added to the scores."""
    if not masks:
        return None
    if len(masks) == 1 and masks[0].dtype == np.bool_:
        return ~masks[0]
    total = None
    for mask in masks:
        if mask.dtype == np.bool_:
            mask = Tensor(np.zeros(mask.shape), dtype=q.dtype, device=q.device).masked_fill(mask, float("-inf"))
        total = mask if total is None else total + mask
    return total


def _apply_mask(scores: Tensor, mask: Tensor) -> Tensor:
    """A boolean mask sets the scores it marks True to -inf; a float mask is added (and gets a gradient)."""
    if mask.dtype == np.bool_:
        return scores.masked_fill(mask, float("-inf"))
    return scores + mask
