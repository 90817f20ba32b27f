"""`nn.Transformer` and its parts, as in `torch.nn`: the paper's encoder-decoder, built from modules minigrad has
(MultiheadAttention, Linear, LayerNorm, Dropout) under PyTorch's names, so that a PyTorch state_dict loads.

An encoder layer is self-attention (SA) then a feed-forward network FF(x) = linear2(dropout(activation(linear1(x)))),
each sublayer's output through its own dropout before the residual add, with the LayerNorm after the add (post-LN,
the paper's and PyTorch's default) or before the sublayer (pre-LN, norm_first=True, as GPT-2 and minigpt):

    post-LN:  x = norm1(x + SA(x));        x = norm2(x + FF(x))
    pre-LN:   x = x + SA(norm1(x));        x = x + FF(norm2(x))

A decoder layer puts cross-attention (CA: queries from the decoder, keys and values from the encoder's output,
`memory`) between the two, with norm3 for FF. The stacks (TransformerEncoder, TransformerDecoder) deep-copy one
layer num_layers times, as PyTorch does, and end with an optional norm; nn.Transformer gives each stack a final
LayerNorm. Masks mean what they mean for MultiheadAttention: a boolean mask's True may NOT attend, a float mask is
added to the scores (generate_square_subsequent_mask's -inf above the diagonal is the causal one); key padding
masks are (N, S). `is_causal` is a hint, as in PyTorch: the mask it describes must still be passed.
Read next: multihead_attention.py (the attention in every layer).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import minigrad.functional as F
from minigrad.compat.multihead_attention import MultiheadAttention
from minigrad.factories import full
from minigrad.nn import init
from minigrad.nn.layers import Dropout, LayerNorm, Linear, ModuleList
from minigrad.nn.module import Module
from minigrad.tensor import Tensor


def _activation(activation: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """"relu" or "gelu" as the function; a callable (F.gelu, nn.GELU(), ...) as it is."""
    if not isinstance(activation, str):
        return activation
    if activation not in ("relu", "gelu"):
        raise RuntimeError(f"activation should be relu/gelu, not {activation}")
    return F.relu if activation == "relu" else F.gelu


class TransformerEncoderLayer(Module):
    """Self-attention and feed-forward, each with a residual add and a LayerNorm (post- or pre-LN: see above)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        where = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **where)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **where)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **where)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
        self.dropout1, self.dropout2 = Dropout(dropout), Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, src: Tensor, src_mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool = False) -> Tensor:
        """src (S, N, E), or (N, S, E) with batch_first, or unbatched (S, E): the output has its shape."""
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any, is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """Self-attention over the target, cross-attention over the encoder's output, feed-forward; each with a
    residual add and a LayerNorm (norm1, norm2, norm3; post- or pre-LN: see above)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        where = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **where)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **where)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **where)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **where)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **where)
        self.dropout1, self.dropout2, self.dropout3 = Dropout(dropout), Dropout(dropout), Dropout(dropout)
        self.activation = _activation(activation)

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None, tgt_is_causal: bool = False,
                memory_is_causal: bool = False) -> Tensor:
        """tgt (T, N, E) and memory (S, N, E) (batch first with batch_first): the output has tgt's shape."""
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask, tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask, memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask, tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask, memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask: Any, key_padding_mask: Any, is_causal: bool) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask, need_weights=False,
                           is_causal=is_causal)[0]
        return self.dropout1(x)

    def _mha_block(self, x: Tensor, memory: Tensor, attn_mask: Any, key_padding_mask: Any, is_causal: bool) -> Tensor:
        x = self.multihead_attn(x, memory, memory, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                                need_weights=False, is_causal=is_causal)[0]
        return self.dropout2(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerEncoder(Module):
    """num_layers deep copies of `encoder_layer` (`layers.0`, `layers.1`, ...), then `norm` if given.
    enable_nested_tensor and mask_check choose PyTorch's fast paths; they are accepted and change nothing here."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList(copy.deepcopy(encoder_layer) for _ in range(num_layers))
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src: Tensor, mask: Any = None, src_key_padding_mask: Any = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=bool(is_causal))
        return x if self.norm is None else self.norm(x)


class TransformerDecoder(Module):
    """num_layers deep copies of `decoder_layer` (`layers.0`, `layers.1`, ...), then `norm` if given."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList(copy.deepcopy(decoder_layer) for _ in range(num_layers))
        self.num_layers, self.norm = num_layers, norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Any = None, memory_mask: Any = None,
                tgt_key_padding_mask: Any = None, memory_key_padding_mask: Any = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask, tgt_key_padding_mask=tgt_key_padding_mask,
                      memory_key_padding_mask=memory_key_padding_mask, tgt_is_causal=bool(tgt_is_causal),
                      memory_is_causal=memory_is_causal)
        return x if self.norm is None else self.norm(x)


class Transformer(Module):
    """The paper's encoder-decoder: encoder = num_encoder_layers encoder layers and a LayerNorm, decoder the same
    with decoder layers; forward(src, tgt, ...) = decoder(tgt, encoder(src)). Every weight matrix (every parameter
    of more than one dimension) starts Xavier-uniform, as PyTorch's _reset_parameters draws it."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = "relu", custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        layer = {"dim_feedforward": dim_feedforward, "dropout": dropout, "activation": activation,
                 "layer_norm_eps": layer_norm_eps, "batch_first": batch_first, "norm_first": norm_first,
                 "bias": bias, "device": device, "dtype": dtype}
        norm = {"eps": layer_norm_eps, "bias": bias, "device": device, "dtype": dtype}
        self.encoder = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **layer), num_encoder_layers, LayerNorm(d_model, **norm))
        self.decoder = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **layer), num_decoder_layers, LayerNorm(d_model, **norm))
        for param in self.parameters():
            if param.ndim > 1:
                init.xavier_uniform_(param)
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Any = None, tgt_mask: Any = None, memory_mask: Any = None,
                src_key_padding_mask: Any = None, tgt_key_padding_mask: Any = None,
                memory_key_padding_mask: Any = None, src_is_causal: bool | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        """src (S, N, E) and tgt (T, N, E) (batch first with batch_first; or unbatched (S, E), (T, E)): the
        decoder's output, tgt's shape. For a language model's decoder, tgt_mask is the causal mask."""
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask (sz, sz) as floats: 0 where position i may see j (j <= i), -inf above the diagonal."""
        return full((sz, sz), float("-inf"), dtype=dtype, device=device).triu(1)
