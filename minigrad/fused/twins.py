"""The fused ops' twins: each composed from primitive Tensor ops, slow and readable.

The fused ops beside this file (softmax.py, cross_entropy.py, layer_norm.py, gelu.py, embedding.py, attention.py) and
ops/reduce.py's logsumexp each have a hand-derived backward. Here each is written the way one first writes it
on paper, with nothing but `+ - * / exp log sqrt tanh erf max sum mean @` and indexing, so autograd derives
the backward by the chain rule through a dozen small nodes. tests/test_fused.py shows that both give the
same values and the same gradients. Read a function here, then its fused twin, and the derivation in the
twin's docstring is the sum of the chain rule steps here.

Training never calls this module: the fused ops are faster, keep fewer buffers alive, and cannot overflow where
these might (see log_softmax). Double backward does: the `composed` method of the GELUs, layer norm, attention
and cross-entropy calls its twin here, and higher_order.py differentiates that graph.
Read next: ../../minigpt/model.py, the GPT these ops were made for, where the reading order ends.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from minigrad.core.backend import get_array_module
from minigrad.factories import arange, tensor
from minigrad.kernels.causal_rows import causal_hidden
from minigrad.tensor import Tensor, _raw


def softmax(x: Tensor, dim: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)), after subtracting the maximum (softmax does not change when x shifts)."""
    # The shift is a constant as far as the result is concerned, so it need not be differentiated.
    e = (x - x.amax(dim, keepdim=True).detach()).exp()
    return e / e.sum(dim, keepdim=True)


def log_softmax(x: Tensor, dim: int = -1) -> Tensor:
    """x - log(sum(exp(x))), shifted by the maximum so that exp cannot overflow.

    The naive `softmax(x).log()` is the same function, but log(0) = -inf once a probability underflows.
    """
    shifted = x - x.amax(dim, keepdim=True).detach()
    return shifted - shifted.exp().sum(dim, keepdim=True).log()


def logsumexp(x: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:
    """m + log(sum(exp(x - m))) with m = max(x), a constant for the chain rule (the result does not depend on it)."""
    m = x.amax(() if dim is None else dim, keepdim=True).detach()
    y = m + (x - m).exp().sum(dim, keepdim=True).log()
    return y if keepdim else y.reshape(x.sum(dim).shape)


def cross_entropy(logits: Tensor, targets: Any, weight: Tensor | None = None, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """-(1 - eps) w_t log p[t] - eps / C sum_c w_c log p[c] per row, with p = softmax over the classes (dim 1)."""
    log_probs, t, counted, w = _class_rows(log_softmax(logits, dim=1), targets, weight, ignore_index)
    w_t = w[t] * counted  # (N,)
    picked = log_probs[arange(t.shape[0], device=logits.device), t]  # (N,)
    num_classes = logits.shape[1]
    losses = -(1 - label_smoothing) * w_t * picked - label_smoothing / num_classes * (log_probs @ w) * counted
    return _reduce(losses, w_t, reduction, _ids(targets, logits.device).shape)


def nll_loss(log_probs: Tensor, targets: Any, weight: Tensor | None = None, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """-w_t log_probs[t] per row (classes on dim 1), by indexing: its backward scatters into the picked entries."""
    x, t, counted, w = _class_rows(log_probs, targets, weight, ignore_index)
    w_t = w[t] * counted  # (N,)
    losses = -w_t * x[arange(t.shape[0], device=log_probs.device), t]
    return _reduce(losses, w_t, reduction, _ids(targets, log_probs.device).shape)


def _class_rows(scores: Tensor, targets: Any, weight: Tensor | None, ignore_index: int) -> tuple:
    """(N, C) rows, (N,) targets (ignored ones as class 0), their 0/1 counted flags and the class weights."""
    num_classes = scores.shape[1]
    rows = scores if scores.ndim == 2 else scores.reshape(scores.shape[0], num_classes, -1).swapaxes(1, 2).reshape(
        -1, num_classes)  # (N, C, d) -> (N * d, C): one row per target
    t = _ids(targets, scores.device).reshape(-1)  # (N,)
    counted = (t != ignore_index).astype(scores.dtype)
    t = t * (t != ignore_index)  # an ignored row picks class 0, then weighs 0
    w = tensor(np.ones(num_classes), dtype=scores.dtype, device=scores.device) if weight is None else weight
    return rows, t, counted, w


def _reduce(losses: Tensor, w_t: Tensor, reduction: str, shape: tuple[int, ...]) -> Tensor:
    """The reduction: the losses in the targets' shape ("none"), their sum, or their sum over the counted
    targets' weights ("mean")."""
    if reduction == "none":
        return losses.reshape(shape)
    return losses.sum() / w_t.sum() if reduction == "mean" else losses.sum()


def binary_cross_entropy(p: Tensor, t: Tensor) -> Tensor:
    """-(t log(p) + (1 - t) log(1 - p)), each log clamped at -100, elementwise."""
    return -(t * p.log().clamp(min=-100) + (1 - t) * (1 - p).log().clamp(min=-100))


def layer_norm(x: Tensor, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """(x - mean) / sqrt(var + eps) over the last axis, then * weight + bias."""
    centered = x - x.mean(-1, keepdim=True)
    var = (centered * centered).mean(-1, keepdim=True)  # the population (biased) variance
    y = centered / (var + eps).sqrt()
    if weight is not None:
        y = y * weight
    if bias is not None:
        y = y + bias
    return y


def gelu(x: Tensor) -> Tensor:
    """The exact GELU x * Phi(x), with the normal CDF Phi(x) = (1 + erf(x / sqrt(2))) / 2."""
    return x * 0.5 * (1 + (x / math.sqrt(2)).erf())


def gelu_tanh(x: Tensor) -> Tensor:
    """GPT-2's tanh approximation: x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))."""
    return 0.5 * x * (1 + (math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)).tanh())


def scaled_dot_product_attention(q: Tensor, k: Tensor, v: Tensor, attn_mask: Any = None, is_causal: bool = False,
                                 scale: float | None = None, keep: Any = None) -> Tensor:
    """softmax(q k^T * scale + mask) v, scale = 1 / sqrt(d) by default; masked scores are -inf (a boolean mask:
    True = may attend), and a query masked from every key gets probabilities 0, as in PyTorch. `keep` is a
    dropout mask over the probabilities, already divided by (1 - p) (the fused op's)."""
    xp = get_array_module(q.array)
    mask = None if attn_mask is None else _raw(attn_mask, q.device)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = (q @ k.swapaxes(-1, -2)) * scale  # (..., T_q, T_k)
    if isinstance(attn_mask, Tensor) and attn_mask.requires_grad:  # a learned bias: differentiated too
        scores, mask = scores + attn_mask._cast(scores.dtype), None
    if is_causal:  # query i sees keys 0..i: the lower triangle, from the top-left corner (as PyTorch)
        scores = scores.masked_fill(xp.broadcast_to(causal_hidden(xp, *scores.shape[-2:]), scores.shape), -math.inf)
    if mask is not None and mask.dtype == bool:
        scores = scores.masked_fill(xp.broadcast_to(~mask, scores.shape), -math.inf)
    elif mask is not None:
        scores = scores + mask.astype(scores.dtype)
    hidden = xp.isneginf(scores.array).all(axis=-1, keepdims=True)  # a query masked from every key: p = 0
    p = softmax(scores.masked_fill(xp.broadcast_to(hidden, scores.shape), 0.0), -1)
    p = p.masked_fill(xp.broadcast_to(hidden, p.shape), 0.0)
    return (p if keep is None else p * keep) @ v


def embedding(ids: Any, weight: Tensor) -> Tensor:
    """Rows of weight picked by integer-array indexing; its backward scatter-adds, like the fused op's."""
    return weight[_ids(ids, weight.device)]


def _ids(ids: Any, device: str) -> Tensor:
    """Integer ids (an array or a Tensor) as a Tensor on `device`."""
    return ids.to(device) if isinstance(ids, Tensor) else tensor(ids, device=device)
