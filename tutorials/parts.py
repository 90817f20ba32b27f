"""The parts a GPT is made of, as plain functions on Tensors, and the modules that put them into a built GPT.

`Parts` lists the four functions that do the computing in minigpt's GPT besides its matmuls and lookups. Each
field is a function with the signature and meaning below; the defaults are what minigpt itself computes:

    layer_norm(x, weight, bias, eps)   y = (x - mean(x)) / sqrt(var(x) + eps) * weight + bias over the last axis
                                       (the biased variance); weight and bias (C,), bias None when config.bias
                                       is False
    split_heads(x, n_head)             (B, T, C) -> (B, nh, T, hs): head h gets channels h*hs .. (h+1)*hs - 1
    causal_attention(q, k, v)          softmax(q k^T / sqrt(hs) + mask) v per head, q, k, v (B, nh, T, hs), the
                                       mask -inf where key j > query i
    gelu(x)                            x * Phi(x), Phi the standard normal CDF (the exact GELU, as nanoGPT)

`gpt_from_parts(config, parts)` builds minigpt's GPT and then, the PyTorch way, swaps a module in for each part
that is not the default: `PartLayerNorm` for every LayerNorm, `PartAttention` for every block's attention,
`PartGELU` for every MLP's activation. A swapped module keeps the very Parameters (and names) of the one it
replaces, so the state_dict is minigpt's and a GPT built from the default parts is minigpt's GPT, bit for bit.

The course's capstone (capstone.py) fills the parts with a learner's answers. `PartAttention` runs the plain causal
case only and refuses the rest in one line: a KV cache (use `generate(..., use_cache=False)`, which gives the same
tokens), attention dropout while training, non-causal attention. `GPT.attention_maps` still shows minigpt's own
attention probabilities.
Read next: capstone.py, which checks a learner's parts before they go in.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig
from minigrad import Tensor


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


class PartLayerNorm(mg.nn.Module):
    """A LayerNorm computed by a `layer_norm` part, with the weight, bias and eps of the LayerNorm it replaces."""

    def __init__(self, ln: mg.nn.LayerNorm, layer_norm: Callable[..., Tensor]) -> None:
        super().__init__()
        self.weight, self.bias, self.eps = ln.weight, ln.bias, ln.eps  # the same Parameters: the same state_dict
        self.layer_norm = layer_norm

    def forward(self, x: Tensor) -> Tensor:
        return self.layer_norm(x, self.weight, self.bias, self.eps)


class PartGELU(mg.nn.Module):
    """The MLP's activation computed by a `gelu` part."""

    def __init__(self, gelu: Callable[[Tensor], Tensor]) -> None:
        super().__init__()
        self.gelu = gelu

    def forward(self, x: Tensor) -> Tensor:
        return self.gelu(x)


class PartAttention(mg.nn.Module):
    """minigpt's CausalSelfAttention with its heads split by a `split_heads` part and mixed by `causal_attention`.

    It keeps the projections (`c_attn`, `c_proj`), the dropout and the rotary tables of the attention it replaces.
    """

    def __init__(self, attn: mg.nn.Module, split_heads: Callable[[Tensor, int], Tensor],
                 causal_attention: Callable[[Tensor, Tensor, Tensor], Tensor]) -> None:
        super().__init__()
        self.n_head, self.n_embd, self.layer = attn.n_head, attn.n_embd, attn.layer
        self.c_attn, self.c_proj = attn.c_attn, attn.c_proj  # the same Parameters, in the same order
        self.attn_dropout, self.resid_dropout, self.rotary = attn.attn_dropout, attn.resid_dropout, attn.rotary
        self.causal, self.keep_attention, self.attention = attn.causal, False, None  # as minigpt's (attention_maps)
        self.split_heads, self.causal_attention = split_heads, causal_attention

    def forward(self, x: Tensor, kv_cache: Any = None) -> Tensor:
        self.refuse_what_a_part_cannot_do(kv_cache)
        B, T, C = x.shape
        qkv = self.c_attn(x)  # (B, T, 3C): q, k and v side by side
        q, k, v = (self.split_heads(qkv[:, :, i * C:(i + 1) * C], self.n_head) for i in range(3))  # (B, nh, T, hs)
        if self.rotary is not None:
            q, k = self.rotary(q), self.rotary(k)
        y = self.causal_attention(q, k, v)  # (B, nh, T, hs)
        if not isinstance(y, Tensor) or y.shape != q.shape:
            got = y.shape if isinstance(y, Tensor) else type(y).__name__
            raise ValueError(f"GPT: the causal_attention part returned {got}, expected a Tensor of shape {q.shape}")
        if self.keep_attention:
            self.attention = F.attention_probs(q, k, is_causal=True)  # (B, nh, T, T): minigpt's own probabilities
        y = y.transpose(1, 2).reshape(B, T, C)  # (B, T, nh, hs) -> (B, T, C): heads side by side
        return self.resid_dropout(self.c_proj(y))

    def refuse_what_a_part_cannot_do(self, kv_cache: Any) -> None:
        """A `causal_attention` part sees only the plain causal case: T queries against the same T keys, no dropout."""
        if kv_cache is not None:
            raise ValueError("GPT: a custom causal_attention part cannot run with a KV cache "
                             "(generate(..., use_cache=False) recomputes the window instead, with the same tokens)")
        dropout_p = self.attn_dropout if self.training else 0.0
        if dropout_p > 0:
            raise ValueError(f"GPT: a custom causal_attention part has no attention dropout (dropout={dropout_p}); "
                             "use dropout=0.0 or minigpt's own attention")
        if not self.causal:
            raise ValueError("GPT: a custom causal_attention part is always causal; this model asked for non-causal "
                             "attention")


def swap(module: mg.nn.Module, **children: mg.nn.Module) -> None:
    """`module.name = child` for each named child, keeping the order of module's children.

    The order is that of named_parameters() and state_dict(), and so of a gradient norm summed over them: minigrad
    lists a re-assigned child last, so every child is assigned again, in the order minigpt built them.
    """
    for name, child in list(module.named_children()):
        setattr(module, name, children.pop(name, child))
    if children:
        raise ValueError(f"swap: {type(module).__name__} has no child named {', '.join(children)}")


def gpt_from_parts(config: GPTConfig, parts: Parts) -> GPT:
    """minigpt's GPT for `config`, with a module swapped in for each part that is not the default.

    The weights are drawn by GPT(config) (a part has no parameters), so the same seed gives the same initial
    weights as minigpt's own GPT.
    """
    model = GPT(config)
    custom = parts.custom()
    if "layer_norm" in custom:
        if config.norm_position == "pre":
            swap(model.transformer, ln_f=PartLayerNorm(model.transformer.ln_f, parts.layer_norm))
        for block in model.transformer.h:
            swap(block, ln_1=PartLayerNorm(block.ln_1, parts.layer_norm),
                 ln_2=PartLayerNorm(block.ln_2, parts.layer_norm))
    if "split_heads" in custom or "causal_attention" in custom:
        for block in model.transformer.h:
            swap(block, attn=PartAttention(block.attn, parts.split_heads, parts.causal_attention))
    if "gelu" in custom:
        for block in model.transformer.h:
            swap(block.mlp, gelu=PartGELU(parts.gelu))
    return model
