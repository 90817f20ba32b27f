"""The parts a GPT is made of, as plain functions on Tensors: the seam through which a GPT can be built from other code.

`GPT(config, parts=Parts(...))` swaps any of them without editing minigpt. Each field is a function with the
signature and meaning below; the defaults are exactly what minigpt uses (the fused ops), so `GPT(config)` and
`GPT(config, Parts())` compute the same values, bit for bit, at the same speed:

    layer_norm(x, weight, bias, eps)   y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias over the last axis
                                       (the biased variance); weight and bias (C,), bias None when config.bias
                                       is False
    split_heads(x, n_head)             (B, T, C) -> (B, nh, T, hs): head h gets channels h*hs .. (h+1)*hs - 1
    causal_attention(q, k, v)          softmax(q k^T / sqrt(hs) + mask) v per head, q, k, v (B, nh, T, hs), the
                                       mask -inf where key j > query i
    gelu(x)                            x * Phi(x), Phi the standard normal CDF (the exact GELU, as nanoGPT)

The course's capstone (tutorials/capstone.py) fills these with a learner's answers to the exercises and trains the
result. Two paths need minigpt's own attention and refuse a custom one in one line: a forward with a KV cache
(`generate` then recomputes the whole window each step instead, which gives the same tokens), and attention
dropout while training; `GPT.attention_maps` always shows minigpt's own attention probabilities. The default
split_heads is replaced in the model by one reshape of q, k and v together: the same values, one copy, not three.
Read next: model.py, which calls these parts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields

import minigrad.functional as F
from minigrad import nn
from minigrad.tensor import Tensor


def layer_norm(x: Tensor, weight: Tensor | None, bias: Tensor | None, eps: float) -> Tensor:
    """y = (x - mu) / sqrt(sigma^2 + eps) * weight + bias over the last axis: minigrad's fused LayerNorm."""
    return F.layer_norm(x, (x.shape[-1],), weight, bias, eps)


def split_heads(x: Tensor, n_head: int) -> Tensor:
    """(B, T, C) -> (B, nh, T, hs): a reshape that gives each head its hs channels, then heads before time."""
    B, T, C = x.shape
    return x.reshape(B, T, n_head, C // n_head).transpose(1, 2)  # (B, T, nh, hs) -> (B, nh, T, hs)


def causal_attention(q: Tensor, k: Tensor, v: Tensor) -> Tensor:
    """softmax(q k^T / sqrt(hs), future keys -inf) v, per head: minigrad's fused attention, (B, nh, T, hs)."""
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def gelu(x: Tensor) -> Tensor:
    """y = x * Phi(x): the exact GELU (nanoGPT's `nn.GELU()`), minigrad's fused op."""
    return F.gelu(x)


@dataclass(frozen=True)
class Parts:
    """The functions a GPT calls for its LayerNorms, its heads, its attention and its MLP's activation."""

    layer_norm: Callable[[Tensor, Tensor | None, Tensor | None, float], Tensor] = layer_norm
    split_heads: Callable[[Tensor, int], Tensor] = split_heads
    causal_attention: Callable[[Tensor, Tensor, Tensor], Tensor] = causal_attention
    gelu: Callable[[Tensor], Tensor] = gelu

    def custom(self) -> list[str]:
        """The names of the parts that are not minigpt's own, in field order (empty for the defaults)."""
        default = Parts()
        return [f.name for f in fields(self) if getattr(self, f.name) is not getattr(default, f.name)]


DEFAULT = Parts()


def apply_norm(parts: Parts, ln: nn.LayerNorm | nn.Module, x: Tensor) -> Tensor:
    """The model's LayerNorm `ln` applied to x: the module itself by default (so its hooks run, as in PyTorch, and
    a model may swap it for another module), else parts.layer_norm with the module's weight, bias and eps."""
    if parts.layer_norm is DEFAULT.layer_norm:
        return ln(x)
    return parts.layer_norm(x, ln.weight, ln.bias, ln.eps)


def apply_gelu(parts: Parts, module: nn.Module, x: Tensor) -> Tensor:
    """The MLP's activation: its nn.GELU module by default (hooks run on it), else parts.gelu."""
    return module(x) if parts.gelu is DEFAULT.gelu else parts.gelu(x)


def custom_attention(parts: Parts, q: Tensor, k: Tensor, v: Tensor, cached: bool, dropout_p: float,
                     causal: bool) -> Tensor:
    """Run a custom `causal_attention` part on q, k, v (B, nh, T, hs), or refuse what it cannot do in one line.

    A custom part sees only the plain causal case: T queries against the same T keys, no dropout.
    """
    if cached:
        raise ValueError("GPT: a custom causal_attention part cannot run with a KV cache "
                         "(generate(..., use_cache=False) recomputes the window instead, with the same tokens)")
    if dropout_p > 0:
        raise ValueError(f"GPT: a custom causal_attention part has no attention dropout (dropout={dropout_p}); "
                         "use dropout=0.0 or minigpt's own attention")
    if not causal:
        raise ValueError("GPT: a custom causal_attention part is always causal; this model asked for non-causal "
                         "attention")
    y = parts.causal_attention(q, k, v)
    if not isinstance(y, Tensor) or y.shape != q.shape:
        got = y.shape if isinstance(y, Tensor) else type(y).__name__
        raise ValueError(f"GPT: the causal_attention part returned {got}, expected a Tensor of shape {q.shape}")
    return y
