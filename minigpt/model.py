"""A GPT (decoder-only Transformer) built only on minigrad, laid out like nanoGPT's model.py.

Read top to bottom: the positional encodings (`sinusoidal_table`, `Rotary`), the KV cache used by
generation, then the classes in the order a token meets them: `CausalSelfAttention`, `MLP`, `Block`
and `GPT`. Parameter names are GPT-2's (`transformer.h.0.attn.c_attn.weight`, ...), so weights move to
and from nanoGPT / PyTorch unchanged (see interop.py).

Shapes: B batch, T time (tokens), C channels (n_embd), nh heads, hs head size (C // nh), V vocab.
Every piece is a submodule with its GPT-2 name, so a model is changed the PyTorch way, by swapping a module on a
built GPT (`model.transformer.h[0].ln_1 = nn.Identity()`); the course's capstone builds a learner's GPT so.
The reading order (README.md) ends here: sampling.py generates from this model, train.py trains it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt.config import GPTConfig
from minigrad import nn
from minigrad.core import backend
from minigrad.nn import init
from minigrad.tensor import Tensor

# ----------------------------------------------------------------------------------------------------
# Positional encodings


def sinusoidal_table(n_positions: int, dim: int) -> np.ndarray:
    """The original Transformer's fixed encoding: pe[pos, 2i] = sin(pos / 10000^(2i/dim)), pe[pos, 2i+1] = cos(...).

    Each pair of channels is a clock ticking at its own frequency, so every position gets a distinct
    pattern and a fixed offset is a linear map of it. Returns float32 (n_positions, dim).
    """
    position = np.arange(n_positions, dtype=np.float64)[:, None]  # (P, 1)
    frequency = np.exp(-math.log(10000.0) * np.arange(0, dim, 2) / dim)  # (ceil(dim/2),)
    table = np.zeros((n_positions, dim))
    table[:, 0::2] = np.sin(position * frequency)
    table[:, 1::2] = np.cos(position * frequency)[:, : dim // 2]  # an odd dim has one cosine fewer
    return table.astype(np.float32)


class Rotary(nn.Module):
    """Rotary position embedding (RoPE): rotate each (x_i, x_{i+hs/2}) pair of q and k by an angle pos * theta_i.

    rope(x) = x * cos + rotate_half(x) * sin, with rotate_half(x1, x2) = (-x2, x1) (GPT-NeoX / Llama layout).
    Rotating q at position m and k at position n makes q.k depend only on m - n: attention sees relative
    positions and nothing is added to the residual stream. rotate_half is a matmul with a fixed signed
    permutation matrix, so it is differentiable without any new op. The tables are precomputed for
    block_size positions and kept as non-persistent buffers (not saved: they are a pure function of the config).
    """

    def __init__(self, head_size: int, block_size: int, base: float = 10000.0) -> None:
        super().__init__()
        half = head_size // 2
        theta = base ** (-np.arange(half, dtype=np.float64) / half)  # (hs/2,) from 1 down to ~1/base
        angles = np.arange(block_size, dtype=np.float64)[:, None] * theta  # (block_size, hs/2)
        angles = np.concatenate([angles, angles], axis=1)  # (block_size, hs): pair i and i + hs/2 share an angle
        rotate_half = np.zeros((head_size, head_size))
        rotate_half[np.arange(half) + half, np.arange(half)] = -1.0  # out[:half] = -x[half:]
        rotate_half[np.arange(half), np.arange(half) + half] = 1.0  # out[half:] = x[:half]
        self.register_buffer("cos", mg.tensor(np.cos(angles)), persistent=False)
        self.register_buffer("sin", mg.tensor(np.sin(angles)), persistent=False)
        self.register_buffer("rotate_half", mg.tensor(rotate_half), persistent=False)

    def forward(self, x: Tensor, start: int = 0) -> Tensor:
        """Rotate x (B, nh, T, hs) as if its tokens sat at positions start .. start + T - 1."""
        end = start + x.shape[-2]
        cos, sin = self.cos[start:end], self.sin[start:end]  # (T, hs), broadcast over B and nh
        return x * cos + (x @ self.rotate_half) * sin


# ----------------------------------------------------------------------------------------------------
# The KV cache


class KVCache:
    """The keys and values every layer computed for the tokens seen so far, so a new token costs one position.

    Without a cache, generating token t+1 recomputes the keys and values of all t earlier tokens, in every
    layer; with it, each step runs the model on the new token only and attends to the stored keys. Per layer,
    k and v live in arrays preallocated for block_size positions, (B, nh, block_size, hs), of which the first
    `length` are filled: appending writes in place instead of re-concatenating the whole past every step.
    For inference only (under `mg.no_grad()`): stored keys are plain arrays, outside any graph.
    """

    def __init__(self, n_layer: int, block_size: int) -> None:
        self.block_size = block_size
        self.keys: list[Any] = [None] * n_layer
        self.values: list[Any] = [None] * n_layer
        self.lengths = [0] * n_layer

    @property
    def length(self) -> int:
        """How many positions are cached (the position of the next token)."""
        return self.lengths[0]

    def append(self, layer: int, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor]:
        """Store the new keys and values (B, nh, T, hs) of `layer`; return all keys and values so far."""
        B, nh, T, hs = k.shape
        start, end = self.lengths[layer], self.lengths[layer] + T
        if end > self.block_size:
            raise ValueError(f"KVCache: {end} positions do not fit in block_size {self.block_size}")
        if self.keys[layer] is None:
            xp = backend.get_array_module(k.array)
            self.keys[layer] = xp.zeros((B, nh, self.block_size, hs), dtype=k.dtype)
            self.values[layer] = xp.zeros((B, nh, self.block_size, hs), dtype=v.dtype)
        self.keys[layer][:, :, start:end] = k.array
        self.values[layer][:, :, start:end] = v.array
        self.lengths[layer] = end
        k_all = Tensor._make(self.keys[layer][:, :, :end], False)  # (B, nh, end, hs), a view
        v_all = Tensor._make(self.values[layer][:, :, :end], False)  # (B, nh, end, hs)
        return k_all, v_all

    def causal_mask(self, layer: int, T: int) -> Any:
        """Boolean (T, length) for the T newest queries of `layer`: True where query i may attend to key j.

        The new tokens are the *last* T of the `length` cached positions, so query i sits at position
        length - T + i and sees every key up to it: the causal mask aligned to the bottom-right corner.
        (PyTorch's is_causal aligns it top-left, which is right only when queries and keys are the same tokens.)
        """
        length = self.lengths[layer]
        return backend.get_array_module(self.keys[layer]).tri(T, length, length - T, dtype=bool)


# ----------------------------------------------------------------------------------------------------
# The model, in the order a token meets it


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention in which each token sees only itself and earlier tokens.

    One fused Linear (`c_attn`) makes q, k and v for every head at once; the heads become a batch axis,
    (B, nh, T, hs), so all heads run in one batched matmul; `c_proj` mixes the heads' outputs.
    """

    def __init__(self, config: GPTConfig, layer: int, rotary: Rotary | None = None) -> None:
        super().__init__()
        self.n_head, self.n_embd, self.layer = config.n_head, config.n_embd, layer
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.attn_dropout = config.dropout  # on the attention probabilities, in training mode only
        self.resid_dropout = nn.Dropout(config.dropout)
        self.rotary = rotary
        # False lets every token see every other (an encoder's attention): for experiments and tests only.
        self.causal = True
        # For inspection (GPT.attention_maps): when True, forward keeps its attention probabilities.
        self.keep_attention = False
        self.attention: Tensor | None = None

    def forward(self, x: Tensor, kv_cache: KVCache | None = None) -> Tensor:
        B, T, C = x.shape
        nh, hs = self.n_head, C // self.n_head
        # q, k and v for every head from one matmul, split into heads together (one copy, not three)
        qkv = self.c_attn(x).reshape(B, T, 3, nh, hs).permute(2, 0, 3, 1, 4)  # (B, T, 3C) -> (3, B, nh, T, hs)
        q, k, v = qkv[0], qkv[1], qkv[2]  # (B, nh, T, hs) each
        start = 0 if kv_cache is None else kv_cache.lengths[self.layer]
        if self.rotary is not None:
            q, k = self.rotary(q, start), self.rotary(k, start)
        mask, is_causal = None, self.causal
        if kv_cache is not None:
            k, v = kv_cache.append(self.layer, k, v)  # (B, nh, start + T, hs)
            # The T queries are the last T of the keys: the cache's own (bottom-right) causal mask. One new
            # token (each step of generation after the prompt) is the last key and sees them all: no mask,
            # which spares the masked softmax's extra passes (an AMD EPYC: 33 against 79 us a layer, 136 keys).
            mask, is_causal = (kv_cache.causal_mask(self.layer, T) if self.causal and T > 1 else None), False
        dropout_p = self.attn_dropout if self.training else 0.0
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p,
                                           is_causal=is_causal)  # (B, nh, T, hs)
        if self.keep_attention:
            self.attention = F.attention_probs(q, k, attn_mask=mask, is_causal=is_causal)  # (B, nh, T, start + T)
        y = y.transpose(1, 2).reshape(B, T, C)  # (B, T, nh, hs) -> (B, T, C): heads side by side
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """Position-wise feed-forward network: expand 4x, GELU, project back.

    The GELU is the exact x * Phi(x) (`nn.GELU()`), as in nanoGPT, so that nanoGPT's weights give nanoGPT's
    logits (GPT-2 itself used the tanh approximation, `nn.GELU(approximate="tanh")`).
    """

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.gelu = nn.GELU()
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x: Tensor) -> Tensor:
        return self.dropout(self.c_proj(self.gelu(self.c_fc(x))))  # (B, T, 4C) inside


class Block(nn.Module):
    """One Transformer block: attention (tokens talk to each other), then the MLP (each token thinks alone).

    pre-LN (GPT-2):              x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))
    post-LN (Vaswani et al.):    x = ln_1(x + attn(x));  x = ln_2(x + mlp(x))
    Pre-LN keeps an untouched residual path from input to output, which is why deep pre-LN stacks train
    without learning-rate warmup tricks; post-LN normalises that path in every block.
    """

    def __init__(self, config: GPTConfig, layer: int, rotary: Rotary | None = None) -> None:
        super().__init__()
        self.pre_norm = config.norm_position == "pre"
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config, layer, rotary)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x: Tensor, kv_cache: KVCache | None = None) -> Tensor:
        if self.pre_norm:
            x = x + self.attn(self.ln_1(x), kv_cache)
            x = x + self.mlp(self.ln_2(x))
        else:
            x = self.ln_1(x + self.attn(x, kv_cache))
            x = self.ln_2(x + self.mlp(x))
        return x


class GPT(nn.Module):
    """The language model: token ids (B, T) -> next-token logits (B, T, V) and, given targets, the loss."""

    def __init__(self, config: GPTConfig) -> None:
        super().__init__()
        self.config = config
        pos = config.pos_encoding
        # A rotary module has no parameters; one instance (one set of tables) is shared by every layer.
        rotary = Rotary(config.head_size, config.block_size) if pos == "rope" else None

        self.transformer = nn.Module()  # a plain container, so names read transformer.wte, transformer.h.0, ...
        self.transformer.wte = nn.Embedding(config.vocab_size, config.n_embd)
        if pos == "learned":
            self.transformer.wpe = nn.Embedding(config.block_size, config.n_embd)
        self.transformer.drop = nn.Dropout(config.dropout)
        self.transformer.h = nn.ModuleList(Block(config, i, rotary) for i in range(config.n_layer))
        # Post-LN blocks already end in a LayerNorm, so only pre-LN needs a final one (as in GPT-2).
        if config.norm_position == "pre":
            self.transformer.ln_f = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        if config.tie_weights:
            # Weight tying: reading a token in and writing it out use one matrix (fewer parameters, and
            # it trains better at small scale). state_dict lists it under both names, as PyTorch does.
            self.lm_head.weight = self.transformer.wte.weight
        if pos == "sinusoidal":
            # Fixed, not trained and not saved: it is a pure function of the config.
            self.register_buffer("pos_table", mg.tensor(sinusoidal_table(config.block_size, config.n_embd)),
                                 persistent=False)
        self._init_weights()

    def _init_weights(self) -> None:
        """GPT-2's initialisation: N(0, 0.02) weights, zero biases, and the residual projections scaled down.

        Each block adds two `c_proj` outputs to the residual stream, so its variance grows with depth;
        drawing them with std 0.02 / sqrt(2 * n_layer) keeps the stream's scale independent of n_layer.
        """
        for module in self.modules():
            if isinstance(module, nn.Linear):
                init.normal_(module.weight, 0.0, 0.02)
                if module.bias is not None:
                    init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                init.normal_(module.weight, 0.0, 0.02)
        for name, param in self.named_parameters():
            if name.endswith("c_proj.weight"):
                init.normal_(param, 0.0, 0.02 / math.sqrt(2 * self.config.n_layer))

    def forward(self, idx: Any, targets: Any = None, kv_cache: KVCache | None = None) -> tuple[Tensor, Tensor | None]:
        """Logits (B, T, V) for token ids `idx` (B, T), and the mean cross-entropy against `targets` (B, T).

        `idx` and `targets` are integer arrays or Tensors; a target of -1 is ignored (as in nanoGPT).
        With `kv_cache` (generation only, under no_grad), `idx` holds the new tokens, which sit at
        positions kv_cache.length onwards.
        """
        x = self.hidden_states(idx, kv_cache)  # (B, T, C)
        logits = self.lm_head(x)  # (B, T, V)
        loss = None
        if targets is not None:
            if not isinstance(targets, Tensor) and not hasattr(targets, "reshape"):
                targets = np.asarray(targets, dtype=np.int64)  # a nested list of ids
            # The classes on dim 1, as F.cross_entropy (and PyTorch's) expects: (B*T, V) rows, (B*T,) targets.
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=-1)
        return logits, loss

    def hidden_states(self, idx: Any, kv_cache: KVCache | None = None) -> Tensor:
        """The final hidden states (B, T, C) that `lm_head` reads (generation reads only the last one)."""
        shape = tuple(idx.shape) if hasattr(idx, "shape") else np.shape(idx)
        if len(shape) != 2:
            raise ValueError(f"GPT: idx must be token ids of shape (B, T), got shape {shape}")
        T = shape[1]
        start = 0 if kv_cache is None else kv_cache.length
        if start + T > self.config.block_size:
            where = f"{T} tokens" if kv_cache is None else f"{T} new tokens after {start} cached ones"
            raise ValueError(
                f"GPT: cannot forward {where}: the sequence length {start + T} exceeds "
                f"block_size {self.config.block_size} (crop the context to its last {self.config.block_size} tokens)"
            )
        if kv_cache is not None and mg.is_grad_enabled():
            raise RuntimeError("GPT: the KV cache is for inference; run it under mg.no_grad()")
        if not isinstance(idx, Tensor) and not hasattr(idx, "dtype"):
            idx = np.asarray(idx, dtype=np.int64)  # a nested list of ids

        x = self.transformer.wte(idx)  # (B, T, C)
        pos = self.config.pos_encoding
        if pos == "learned":
            x = x + self.transformer.wpe.weight[start:start + T]  # (T, C), broadcast over the batch
        elif pos == "sinusoidal":
            x = x + self.pos_table[start:start + T]  # (T, C)
        x = self.transformer.drop(x)
        for block in self.transformer.h:
            x = block(x, kv_cache)
        if self.config.norm_position == "pre":
            x = self.transformer.ln_f(x)
        return x

    @mg.no_grad()
    def attention_maps(self, idx: Any) -> list[np.ndarray]:
        """Each layer's attention probabilities for `idx` (B, T): a list of n_layer NumPy arrays (B, nh, T, T).

        Entry [b, h, i, j] is how much query token i of head h attends to token j (each row sums to 1, and
        is 0 above the diagonal). Runs one forward pass in eval mode, with no graph; the normal forward pays
        only one `if` per layer for this.
        """
        was_training = self.training
        attentions = [block.attn for block in self.transformer.h]
        self.eval()
        for attn in attentions:
            attn.keep_attention = True
        try:
            self(idx)
            return [attn.attention.numpy() for attn in attentions]
        finally:
            for attn in attentions:
                attn.keep_attention, attn.attention = False, None
            self.train(was_training)

    @mg.no_grad()
    def generate(self, idx: Any, max_new_tokens: int, temperature: float = 1.0, top_k: int | None = None,
                 top_p: float | None = None, use_cache: bool = True) -> Any:
        """Append `max_new_tokens` sampled tokens to the ids `idx` (B, T) and return them, (B, T + max_new_tokens).

        temperature 0 is greedy; top_k / top_p restrict the draw to the most likely tokens (sampling.py).
        The model sees at most the last block_size tokens. `mg.manual_seed` makes the draws repeatable.
        Returns a Tensor (on idx's device) for a Tensor `idx`, otherwise a NumPy array. Put the model in
        eval mode first if it has dropout. Like PyTorch's, it uses the BLAS threads as they are set
        (`mg.set_num_threads`): one token's small products gain little from many threads and lose much when
        the cores are busy, so `minigpt sample` measures the count as it writes (--threads to fix it).

        With `use_cache` the model runs on the whole prompt once, then on one new token per step, reading
        earlier keys and values from a KVCache: the same logits as recomputing the prefix (up to float
        rounding), so the same tokens for the same seed. Once the context is longer than block_size, the
        window slides and drops its oldest token; every cached key was then computed at another position and,
        from the second layer on, with that dropped token in view - for any positional encoding, RoPE
        included. No cached value stays exact, so past block_size each step rebuilds the cache from the
        cropped window, which is the same work as recomputing.
        """
        from minigpt.sampling import next_token

        if max_new_tokens < 0:
            raise ValueError(f"generate: max_new_tokens must be >= 0, got {max_new_tokens}")
        device = idx.device if isinstance(idx, Tensor) else None
        ids = idx.numpy() if isinstance(idx, Tensor) else np.array(idx)  # host ids: sampling runs on the host
        if ids.ndim != 2 or ids.dtype.kind not in "iu" or ids.shape[1] == 0:
            raise ValueError(f"generate: idx must be a non-empty (B, T) array of integer ids, got "
                             f"shape {ids.shape} and dtype {ids.dtype}")
        ids = ids.astype(np.int64)
        block_size = self.config.block_size
        kv_cache = None
        for _ in range(max_new_tokens):
            context = ids[:, -block_size:]  # the model sees at most block_size tokens
            if kv_cache is not None and kv_cache.length == context.shape[1] - 1:
                new = context[:, -1:]  # the cache holds every earlier token of this window: feed the newest
            else:  # the first step, or the window slid: run the whole window from scratch
                new = context
                # A cache pays only if the next step can extend it, i.e. while the window is not yet full.
                kv_cache = KVCache(self.config.n_layer, block_size) if use_cache and new.shape[1] < block_size else None
            x = self.hidden_states(new, kv_cache)  # (B, T, C)
            logits = self.lm_head(x[:, -1:, :])  # (B, 1, V): only the last position predicts the next token
            token = next_token(logits.numpy()[:, -1, :], temperature, top_k, top_p)  # (B,)
            ids = np.concatenate([ids, token[:, None]], axis=1)  # (B, T + 1)
        return mg.tensor(ids, device=device) if device is not None else ids
