"""A nanoGPT-layout GPT in PyTorch: the reference oracle for minigpt's tests and benchmarks.

It follows nanoGPT's model.py (learned positions, pre-LN, exact GELU, tied embeddings, causal SDPA) and has
the same parameter names, so `load_minigpt(model)` copies a minigpt GPT into it through `to_nanogpt` and the
two compute the same function. Imports torch; minigpt itself never imports this module.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
import torch.nn as tnn
import torch.nn.functional as TF

from minigpt.config import GPTConfig
from minigpt.interop import to_nanogpt


class CausalSelfAttention(tnn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.n_head = config.n_head
        self.c_attn = tnn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = tnn.Linear(config.n_embd, config.n_embd, bias=config.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)  # (B, nh, T, hs)
        y = TF.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C)
        return self.c_proj(y)


class MLP(tnn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.c_fc = tnn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = tnn.GELU()
        self.c_proj = tnn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(tnn.Module):
    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.ln_1 = tnn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config)
        self.ln_2 = tnn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TorchGPT(tnn.Module):
    """nanoGPT's GPT (without dropout): learned positions, pre-LN, weights tied when config.tie_weights."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        if config.pos_encoding != "learned" or config.norm_position != "pre":
            raise ValueError("TorchGPT is nanoGPT's model: learned positions and pre-LN only")
        self.config = config
        self.transformer = tnn.ModuleDict(dict(
            wte=tnn.Embedding(config.vocab_size, config.n_embd),
            wpe=tnn.Embedding(config.block_size, config.n_embd),
            h=tnn.ModuleList([Block(config) for _ in range(config.n_layer)]),
            ln_f=tnn.LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = tnn.Linear(config.n_embd, config.vocab_size, bias=False)
        if config.tie_weights:
            self.transformer.wte.weight = self.lm_head.weight

    def forward(self, idx: torch.Tensor, targets: torch.Tensor | None = None) -> tuple[torch.Tensor, Any]:
        B, T = idx.shape
        pos = torch.arange(T, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)  # (B, T, C)
        for block in self.transformer.h:
            x = block(x)
        logits = self.lm_head(self.transformer.ln_f(x))  # (B, T, V)
        loss = None
        if targets is not None:
            loss = TF.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)
        return logits, loss

    @torch.no_grad()
    def generate(self, idx: torch.Tensor, max_new_tokens: int) -> torch.Tensor:
        """Greedy decoding, recomputing the cropped context each step (nanoGPT's loop, temperature 0)."""
        for _ in range(max_new_tokens):
            logits, _ = self(idx[:, -self.config.block_size:])
            idx = torch.cat([idx, logits[:, -1, :].argmax(dim=-1, keepdim=True)], dim=1)
        return idx


def load_minigpt(model: Any, dtype: torch.dtype | None = None) -> TorchGPT:
    """A TorchGPT holding exactly the weights of the minigpt `model` (float64 when the model is float64)."""
    weights = to_nanogpt(model)
    if dtype is None:
        dtype = torch.float64 if next(iter(weights.values())).dtype == np.float64 else torch.float32
    reference = TorchGPT(model.config).to(dtype)
    reference.load_state_dict({name: torch.from_numpy(np.ascontiguousarray(w)) for name, w in weights.items()})
    reference.eval()
    return reference

