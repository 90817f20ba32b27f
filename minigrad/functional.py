"""`minigrad.functional` (imported as F): the neural-network functions, as in `torch.nn.functional`.

Each is a thin, typed front for an op class in `minigrad/ops/`; the math and its derivative are there.
Read next: factories.py (making tensors), then random.py.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from minigrad import random
from minigrad.autograd import no_grad
from minigrad.dtypes import result_type
from minigrad.ops import elementwise, linalg, nn, shape
from minigrad.tensor import Tensor, _raw


def softmax(x: Tensor, axis: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) along `axis`: each slice becomes probabilities that sum to 1."""
    return nn.Softmax.apply(x, axis=axis)


def log_softmax(x: Tensor, axis: int = -1) -> Tensor:
    """log(softmax(x)) along `axis`, computed as x - logsumexp(x) so that it never overflows."""
    return nn.LogSoftmax.apply(x, axis=axis)


def gelu(x: Tensor) -> Tensor:
    """GPT-2's tanh approximation (`torch.nn.functional.gelu(x, approximate="tanh")`)."""
    return elementwise.GELU.apply(x)


def relu(x: Tensor) -> Tensor:
    """max(x, 0), elementwise."""
    return elementwise.ReLU.apply(x)


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias, with weight (out_features, in_features) as in `torch.nn.functional.linear`."""
    inputs = (x, weight) if bias is None else (x, weight, bias)
    return linalg.Linear.apply(*inputs)


def cross_entropy(logits: Tensor, targets: Any, ignore_index: int | None = None) -> Tensor:
    """Mean negative log-likelihood of integer `targets` under softmax(`logits`).

    logits (N, C) or (B, T, C); targets (N,) or (B, T). Rows whose target is `ignore_index` are left
    out of the mean. A target outside 0..C-1 raises IndexError naming it.
    """
    return nn.CrossEntropy.apply(logits, targets=_raw(targets, logits.device), ignore_index=ignore_index)


def embedding(weight: Tensor, ids: Any) -> Tensor:
    """Rows of `weight` (num, dim) picked by integer `ids` (any shape): output ids.shape + (dim,)."""
    return nn.Embedding.apply(weight, ids=_raw(ids, weight.device))


def layer_norm(x: Tensor, weight: Tensor | None = None, bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last axis to mean 0 and variance 1, then scale by `weight` and shift by `bias`."""
    inputs = [x] + [t for t in (weight, bias) if t is not None]
    if weight is None and bias is not None:
        raise ValueError("layer_norm: a bias without a weight is not supported; pass weight=ones")
    return nn.LayerNorm.apply(*inputs, eps=eps)


def dropout(x: Tensor, p: float, training: bool = True) -> Tensor:
    """Zero each element with probability `p` and scale the rest by 1/(1-p); identity when not training."""
    if not 0 <= p < 1:
        raise ValueError(f"dropout: p must be in [0, 1), got {p}")
    if not training or p == 0:
        return x
    keep = random.device_rng(x.device).random(x.shape, dtype=x.dtype) >= p
    # astype first: a bool mask times a Python float would be float64, whatever x's dtype.
    return nn.Dropout.apply(x, keep=keep.astype(x.dtype) * (1 / (1 - p)))


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, is_causal: bool = False, mask: Any = None, scale: float | None = None,
    dropout_p: float = 0.0,
) -> Tensor:
    """softmax(q k^T / sqrt(d) + mask) v over the last two axes, (..., T, d) each.

    `is_causal` lets query i see keys up to its own position; when there are fewer queries than keys
    (a KV cache), the queries are the last positions. `mask` is boolean (True = may attend, as in
    PyTorch) or additive; masked scores are -inf, never a large finite number. `dropout_p` drops
    attention probabilities (as nanoGPT's attn_dropout; pass 0 when not training, as with PyTorch's).
    """
    mask = None if mask is None else _raw(mask, q.device)
    keep = None
    if dropout_p > 0:
        if not dropout_p < 1:
            raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got {dropout_p}")
        shape = (*q.shape[:-1], k.shape[-2])  # (..., T_q, T_k), the probabilities' shape
        keep = (random.device_rng(q.device).random(shape, dtype=q.dtype) >= dropout_p).astype(q.dtype)
        keep *= 1 / (1 - dropout_p)
    return nn.ScaledDotProductAttention.apply(q, k, v, is_causal=is_causal, mask=mask, scale=scale, keep=keep)


@no_grad()
def attention_probs(q: Tensor, k: Tensor, is_causal: bool = False, mask: Any = None,
                    scale: float | None = None) -> Tensor:
    """The attention probabilities softmax(q k^T / sqrt(d) + mask), for inspection (no graph)."""
    mask = None if mask is None else _raw(mask, q.device)
    scale = scale if scale is not None else q.shape[-1] ** -0.5
    return Tensor._make(nn.attention_scores(q.data, k.data, is_causal, mask, scale), False)


def concat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along an existing dim (`axis` is NumPy's name for it), as torch.cat."""
    return shape.Concat.apply(*_one_dtype(tensors, "concat"), axis=dim if axis is None else axis)


cat = concat  # PyTorch's name


def stack(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along a new dim (`axis` is NumPy's name for it)."""
    return shape.Stack.apply(*_one_dtype(tensors, "stack"), axis=dim if axis is None else axis)


def _one_dtype(tensors: Sequence[Tensor], op: str) -> list[Tensor]:
    """The tensors converted to the dtype PyTorch would join them in (`result_type` of them all)."""
    tensors = list(tensors)
    if not tensors or not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{op}: expected a non-empty sequence of Tensors")
    dtype = result_type(*tensors)
    return [t._cast(dtype) for t in tensors]


def where(cond: Any, a: Any, b: Any) -> Tensor:
    """Elementwise `a` where `cond` is True, else `b`, as torch.where: tensors or numbers, broadcast.

    a and b meet as a binary op's operands do (PyTorch's type promotion): where(c, 1.0, 0) is float32.
    """
    anchor = next((t for t in (a, b, cond) if isinstance(t, Tensor)), None)
    device = "cpu" if anchor is None else anchor.device
    cond = _raw(cond, device).astype(bool, copy=False)  # backward negates it: ~ must be logical
    if isinstance(b, Tensor) and not isinstance(a, Tensor):
        b, a = b._operands(a)
    else:
        a = a if isinstance(a, Tensor) else Tensor(a, device=device)  # two numbers: as mg.tensor makes them
        a, b = a._operands(b)
    return elementwise.Where.apply(a, b, cond=cond)
