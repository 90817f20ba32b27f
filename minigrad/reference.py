"""The fused ops, composed from primitive Tensor ops: slow, readable twins for learners.

`minigrad/ops/nn.py` gives softmax, log_softmax, cross_entropy, layer_norm, attention and gelu each a
hand-derived backward. Here each is written the way one first writes it on paper, with nothing but
`+ - * / exp log sqrt tanh max sum mean @` and indexing, so autograd derives the backward by the chain
rule through a dozen small nodes. tests/test_fused.py shows that both give the same values and the same
gradients. Read a function here, then its fused twin, and the derivation in the twin's docstring is the
sum of the chain rule steps here.

Nothing in minigrad calls this module: the fused ops are faster, keep fewer buffers alive, and cannot
overflow where these might (see log_softmax).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad.factories import arange, ones, tensor
from minigrad.functional import where
from minigrad.tensor import Tensor


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)), after subtracting the maximum (softmax does not change when x shifts)."""
    # The shift is a constant as far as the result is concerned, so it need not be differentiated.
    e = (x - x.max(axis=axis, keepdims=True).detach()).exp()
    return e / e.sum(axis=axis, keepdims=True)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """x - log(sum(exp(x))), shifted by the maximum so that exp cannot overflow.

    The naive `softmax(x).log()` is the same function, but log(0) = -inf once a probability underflows.
    """
    shifted = x - x.max(axis=axis, keepdims=True).detach()
    return shifted - shifted.exp().sum(axis=axis, keepdims=True).log()


def cross_entropy(logits: Tensor, targets: Any, ignore_index: int | None = None) -> Tensor:
    """Mean over the counted rows of -log_softmax(logits)[row, target]."""
    num_classes = logits.shape[-1]
    t = _ids(targets, logits.device).reshape(-1)  # (N,)
    log_probs = log_softmax(logits.reshape(-1, num_classes))  # (N, C)
    counted = ones(*t.shape, dtype=bool, device=logits.device) if ignore_index is None else t != ignore_index
    picked = log_probs[arange(t.shape[0], device=logits.device), t * counted]  # an ignored row picks class 0...
    weight = counted.astype(logits.dtype)  # ...and then weighs 0
    return -(picked * weight).sum() / weight.sum()


def layer_norm(x: Tensor, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the last axis, then * weight + bias."""
    centered = x - x.mean(axis=-1, keepdims=True)
    var = (centered * centered).mean(axis=-1, keepdims=True)  # the population variance
    y = centered / (var + eps).sqrt()
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def gelu(x: Tensor) -> Tensor:
    """GPT-2's tanh approximation: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))."""
    return 0.5 * x * (1 + (math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)).tanh())


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, is_causal: bool = False,
                                 mask: Any = None) -> Tensor:
    """softmax(q k^T / sqrt(d) + mask) v; masked scores are -inf (boolean mask: True = may attend)."""
    t_q, t_k = q.shape[-2], k.shape[-2]
    scores = (q @ k.swapaxes(-1, -2)) / math.sqrt(q.shape[-1])  # (..., T_q, T_k)
    if is_causal:
        # Query i is position i + T_k - T_q of the keys (the last positions, as with a KV cache).
        scores = where(np.tri(t_q, t_k, t_k - t_q, dtype=bool), scores, -math.inf)
    if mask is not None:
        is_boolean = (mask.dtype if hasattr(mask, "dtype") else np.asarray(mask).dtype) == np.bool_
        scores = where(mask, scores, -math.inf) if is_boolean else scores + mask
    return softmax(scores, axis=-1) @ v


def embedding(weight: Tensor, ids: Any) -> Tensor:
    """Rows of weight picked by integer-array indexing; its backward scatter-adds, like the fused op's."""
    return weight[_ids(ids, weight.device)]


def _ids(ids: Any, device: str) -> Tensor:
    """Integer ids (an array or a Tensor) as a Tensor on `device`."""
    return ids.to(device) if isinstance(ids, Tensor) else tensor(ids, device=device)
