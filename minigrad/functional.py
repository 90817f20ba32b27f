"""`minigrad.functional` (imported as F): the neural-network functions, as in `torch.nn.functional`.

Each is a thin, typed front for an op class in `minigrad/ops/` or `minigrad/fused/`, where the math and its
derivative are; the names, argument orders and defaults are PyTorch's. The losses come last (F.cross_entropy,
F.nll_loss, F.mse_loss, F.binary_cross_entropy, F.binary_cross_entropy_with_logits): classes are on dim 1, as
in PyTorch, so a GPT's logits (B, T, V) are passed as logits.reshape(-1, V) with targets.reshape(-1), as nanoGPT
does; (B, T, V) with (B, T) targets raises an error that says so, rather than reading the wrong axis as the
classes. `reduction` is "mean" (weighted by the class weights of the counted targets), "sum" or "none".
Read next: fused/softmax.py (the hand-derived ops F calls), and factories.py.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from minigrad import fused, random
from minigrad.compat.functional_more import batch_norm, huber_loss, kl_div, l1_loss, pad, smooth_l1_loss
from minigrad.core import backend
from minigrad.core.autograd import is_grad_enabled, no_grad
from minigrad.core.dtypes import result_type
from minigrad.ops import activations, elementwise, linalg, shape
from minigrad.tensor import ShapeError, Tensor, _raw


def softmax(input: Tensor, dim: int | None = None, dtype: Any = None, *, axis: int | None = None) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim`: each slice becomes probabilities that sum to 1."""
    return input.softmax(_required_dim("softmax", dim, axis), dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, dtype: Any = None, *, axis: int | None = None) -> Tensor:
    """log(softmax(x)) along `dim`, computed as x - logsumexp(x) so that it never overflows."""
    return input.log_softmax(_required_dim("log_softmax", dim, axis), dtype=dtype)


def _required_dim(op: str, dim: int | None, axis: int | None) -> int:
    """`dim` (or its alias `axis`), which PyTorch requires: its old implicit choice depended on the rank."""
    if dim is None and axis is None:
        raise TypeError(f"{op}: pass dim (dim=-1 for the last axis), as PyTorch requires")
    if dim is not None and axis is not None:
        raise TypeError(f"{op}: pass dim or its alias axis, not both")
    return dim if dim is not None else axis


# Activations ---------------------------------------------------------------------------------------------------
def gelu(input: Tensor, approximate: str = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF: PyTorch's exact GELU (nanoGPT's); approximate="tanh" is
    GPT-2's tanh form x/2 (1 + tanh(sqrt(2/pi) (x + 0.044715 x**3)))."""
    return fused.gelu.gelu_op(approximate).apply(input)


def relu(input: Tensor) -> Tensor:
    """max(x, 0), elementwise."""
    return activations.ReLU.apply(input)


def sigmoid(input: Tensor) -> Tensor:
    """1 / (1 + exp(-x)), elementwise."""
    return activations.Sigmoid.apply(input)


def tanh(input: Tensor) -> Tensor:
    """tanh(x), elementwise."""
    return activations.Tanh.apply(input)


def silu(input: Tensor) -> Tensor:
    """x * sigmoid(x), elementwise (also called swish)."""
    return activations.SiLU.apply(input)


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, a smooth relu; x itself where beta x > threshold."""
    return activations.Softplus.apply(input, beta=beta, threshold=threshold)


def leaky_relu(input: Tensor, negative_slope: float = 0.01) -> Tensor:
    """x where x > 0, else negative_slope * x."""
    return activations.LeakyReLU.apply(input, negative_slope=negative_slope)


def elu(input: Tensor, alpha: float = 1.0) -> Tensor:
    """x where x > 0, else alpha * (exp(x) - 1)."""
    return activations.ELU.apply(input, alpha=alpha)


# Layers --------------------------------------------------------------------------------------------------------
def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias, with weight (out_features, in_features) as in `torch.nn.functional.linear`."""
    if weight.ndim != 2:  # PyTorch takes a 1-d weight only without a bias: not worth the special case
        raise ShapeError(f"linear: weight must be 2-D (out_features, in_features), not {weight.shape}")
    inputs = (input, weight) if bias is None else (input, weight, bias)
    return linalg.Linear.apply(*inputs)


def embedding(input: Any, weight: Tensor, padding_idx: int | None = None) -> Tensor:
    """Rows of `weight` (num, dim) picked by integer ids `input` (any shape): output input.shape + (dim,).

    The row `padding_idx` gets no gradient.
    """
    if not isinstance(weight, Tensor) or weight.dtype.kind != "f":
        raise TypeError("embedding: the arguments are (input, weight), as in PyTorch: integer ids first, then "
                        "the float weight matrix")
    ids = _raw(input, weight.device)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"embedding: input must be integer ids, not {ids.dtype} (the arguments are (input, "
                        "weight), as in PyTorch)")
    if padding_idx is not None:
        if not -weight.shape[0] <= padding_idx < weight.shape[0]:
            raise ValueError(f"embedding: padding_idx {padding_idx} is out of range for {weight.shape[0]} rows")
        padding_idx %= weight.shape[0]
    return fused.embedding.Embedding.apply(weight, ids=ids, padding_idx=padding_idx)


def layer_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise over the last len(normalized_shape) axes to mean 0 and variance 1 (the biased variance),
    then scale by `weight` and shift by `bias` (each shaped normalized_shape)."""
    normalized_shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if input.shape[input.ndim - len(normalized_shape):] != normalized_shape or not normalized_shape:
        raise ValueError(f"layer_norm: normalized_shape {normalized_shape} must be the last axes of the input "
                         f"{input.shape}")
    if weight is None and bias is not None:
        raise ValueError("layer_norm: a bias without a weight is not supported; pass weight=ones")
    if len(normalized_shape) > 1:  # normalise the trailing axes as one
        flat = layer_norm(input.reshape(*input.shape[:-len(normalized_shape)], -1), math.prod(normalized_shape),
                          *(t.reshape(-1) for t in (weight, bias) if t is not None), eps=eps)
        return flat.reshape(input.shape)
    inputs = [input] + [t for t in (weight, bias) if t is not None]
    return fused.layer_norm.LayerNorm.apply(*inputs, eps=eps)


def rms_norm(input: Tensor, normalized_shape: int | Sequence[int], weight: Tensor | None = None,
             eps: float | None = None) -> Tensor:
    """y = x / sqrt(mean(x**2 over the last dims) + eps) * weight, composed (its gradient is the chain rule's).

    `eps=None` is the machine epsilon of input's dtype, as in PyTorch.
    """
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if tuple(input.shape[input.ndim - len(shape):]) != shape:
        raise ShapeError(f"rms_norm: normalized_shape {shape} does not end input's shape {input.shape}")
    eps = float(np.finfo(input.dtype).eps) if eps is None else eps
    dims = tuple(range(input.ndim - len(shape), input.ndim))
    y = input * ((input * input).mean(dim=dims, keepdim=True) + eps).rsqrt()
    return y if weight is None else y * weight


def dropout(input: Tensor, p: float = 0.5, training: bool = True) -> Tensor:
    """Zero each element with probability `p` and scale the rest by 1/(1-p); identity when not training."""
    if not 0 <= p < 1:
        raise ValueError(f"dropout: p must be in [0, 1), got {p}")
    if not training or p == 0:
        return input
    keep = random.device_rng(input.device).random(input.shape, dtype=input.dtype) >= p
    # astype first: a bool mask times a Python float would be float64, whatever x's dtype.
    return fused.dropout.Dropout.apply(input, keep=keep.astype(input.dtype) * (1 / (1 - p)))


# Attention -----------------------------------------------------------------------------------------------------
def scaled_dot_product_attention(
    query: Tensor, key: Tensor, value: Tensor, attn_mask: Any = None, dropout_p: float = 0.0,
    is_causal: bool = False, scale: float | None = None,
) -> Tensor:
    """softmax(q k^T * scale + mask) v over the last two axes: q (..., L, E), k (..., S, E), v (..., S, Ev).

    As in PyTorch: `scale` defaults to 1/sqrt(E); `is_causal` lets query i see keys 0..i (the lower triangle
    of an (L, S) matrix, aligned top-left, so with L < S the queries are the *first* positions: a KV cache,
    whose queries are the last ones, passes its own mask). `attn_mask` is boolean (True = may attend) or a
    float added to the scores, broadcast to (..., L, S); it cannot be combined with is_causal. Masked scores
    are -inf, never a large finite number; a query masked from every key gets an output of 0. `dropout_p`
    drops attention probabilities (pass 0 when not training, as with PyTorch's).
    """
    mask = _attention_mask(query, attn_mask, is_causal)
    keep = None
    if dropout_p > 0:
        if not dropout_p < 1:
            raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got {dropout_p}")
        probs_shape = (*query.shape[:-1], key.shape[-2])  # (..., L, S)
        keep = (random.device_rng(query.device).random(probs_shape, dtype=query.dtype) >= dropout_p)
        keep = keep.astype(query.dtype) * (1 / (1 - dropout_p))
    if isinstance(mask, Tensor):  # a float mask that requires grad: an input of the op, so it gets its gradient
        return fused.attention.ScaledDotProductAttention.apply(query, key, value, mask._cast(query.dtype),
                                                               is_causal=is_causal, mask=None, scale=scale, keep=keep)
    return fused.attention.ScaledDotProductAttention.apply(query, key, value, is_causal=is_causal, mask=mask,
                                                           scale=scale, keep=keep)


def _attention_mask(query: Tensor, attn_mask: Any, is_causal: bool) -> Any:
    """The mask as a backend array on the query's device (or None), checked as PyTorch checks it; a float mask
    that requires grad stays a Tensor."""
    if attn_mask is None:
        return None
    if is_causal:
        raise RuntimeError("scaled_dot_product_attention: pass attn_mask or is_causal=True, not both (as in "
                           "PyTorch); fold the causal mask into attn_mask")
    if isinstance(attn_mask, Tensor) and attn_mask.requires_grad and is_grad_enabled():
        return attn_mask  # a learned float bias (a bool tensor cannot require grad): the op differentiates it
    mask = _raw(attn_mask, query.device)
    if mask.dtype != np.bool_ and mask.dtype.kind != "f":
        raise TypeError(f"scaled_dot_product_attention: attn_mask must be boolean (True = may attend) or float "
                        f"(added to the scores), not {mask.dtype}")
    return mask


@no_grad()
def attention_probs(query: Tensor, key: Tensor, attn_mask: Any = None, is_causal: bool = False,
                    scale: float | None = None) -> Tensor:
    """The attention probabilities softmax(q k^T * scale + mask), for inspection (no graph); the arguments
    mean what they mean for scaled_dot_product_attention."""
    mask = _attention_mask(query, attn_mask, is_causal)
    scale = scale if scale is not None else query.shape[-1] ** -0.5
    return Tensor._make(fused.attention.attention_scores(query.array, key.array, is_causal, mask, scale), False)


# Tensors of classes and vectors --------------------------------------------------------------------------------
def one_hot(tensor: Any, num_classes: int = -1) -> Tensor:
    """Integer class ids (any shape) as int64 one-hot vectors: output shape tensor.shape + (num_classes,).

    num_classes=-1 means the largest id + 1.
    """
    ids = (tensor if isinstance(tensor, Tensor) else Tensor(tensor)).array
    if ids.dtype.kind not in "iu":
        raise TypeError(f"one_hot: the input must be integer class ids, not {ids.dtype}")
    if num_classes == -1:
        if ids.size == 0:
            raise RuntimeError("one_hot: cannot infer num_classes from an empty tensor; pass num_classes")
        num_classes = int(ids.max()) + 1
    fused.embedding.check_ids("one_hot", "class id", ids, num_classes)
    xp = backend.get_array_module(ids)
    return Tensor._make((ids[..., None] == xp.arange(num_classes)).astype(np.int64), False)


def normalize(input: Tensor, p: float = 2.0, dim: int = 1, eps: float = 1e-12) -> Tensor:
    """x / max(||x||_p, eps) along `dim`: unit vectors (a zero vector stays zero)."""
    return input / input.norm(p, dim, keepdim=True).clamp(min=eps)


def concat(tensors: Sequence[Tensor], dim: int = 0, *, axis: int | None = None) -> Tensor:
    """Join tensors along an existing dim (`axis` is NumPy's name for it), as torch.cat."""
    tensors = _one_dtype(tensors, "cat")
    dim, ndim = dim if axis is None else axis, tensors[0].ndim
    if ndim == 0:
        raise RuntimeError("cat: 0-d tensors cannot be concatenated (they have no dim to join); use stack")
    if not -ndim <= dim < ndim:
        raise IndexError(f"cat: dim {dim} is out of range for tensors with {ndim} dims")
    return shape.Concat.apply(*tensors, axis=dim)


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


# Losses --------------------------------------------------------------------------------------------------------
REDUCTIONS = ("mean", "sum", "none")


def _check_reduction(op: str, reduction: str) -> None:
    if reduction not in REDUCTIONS:
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', not {reduction!r}")


def _class_ids(op: str, target: Any, device: str) -> Any:
    ids = _raw(target, device)
    if ids.dtype.kind not in "iu":
        raise TypeError(f"{op}: target must be integer class ids, not {ids.dtype} (class-probability targets "
                        "are not supported)")
    return ids


def _class_weight(weight: Tensor | None, device: str) -> Any:
    return None if weight is None else _raw(weight, device)


def cross_entropy(input: Tensor, target: Any, weight: Tensor | None = None, *, ignore_index: int = -100,
                  reduction: str = "mean", label_smoothing: float = 0.0) -> Tensor:
    """Negative log-likelihood of integer `target` under softmax(`input`) over the classes (dim 1).

    `weight` (C,) weighs each class; targets equal to `ignore_index` count for nothing; with `label_smoothing`
    eps the target distribution is (1 - eps) on the target class plus eps / C on every class. A mean over no
    counted target is nan, as in PyTorch. A target outside 0..C-1 raises IndexError naming it.
    """
    _check_reduction("cross_entropy", reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got {label_smoothing}")
    return fused.cross_entropy.CrossEntropy.apply(
        input, targets=_class_ids("cross_entropy", target, input.device), weight=_class_weight(weight, input.device),
        ignore_index=ignore_index, reduction=reduction, label_smoothing=label_smoothing)


def nll_loss(input: Tensor, target: Any, weight: Tensor | None = None, *, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """-input[target] for log-probabilities `input` (say, log_softmax's output), classes on dim 1;
    `weight`, `ignore_index` and `reduction` as in cross_entropy (which is nll_loss of log_softmax)."""
    _check_reduction("nll_loss", reduction)
    return fused.cross_entropy.NLLLoss.apply(input, targets=_class_ids("nll_loss", target, input.device),
                                weight=_class_weight(weight, input.device), ignore_index=ignore_index,
                                reduction=reduction)


def _reduce(op: str, loss: Tensor, reduction: str) -> Tensor:
    _check_reduction(op, reduction)
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def mse_loss(input: Tensor, target: Any, *, reduction: str = "mean") -> Tensor:
    """The mean (or sum) of the squared differences (input - target)**2, broadcast as PyTorch does."""
    _check_reduction("mse_loss", reduction)
    return _reduce("mse_loss", (input - target).square(), reduction)


def binary_cross_entropy(input: Tensor, target: Any, weight: Any = None, *, reduction: str = "mean") -> Tensor:
    """-(t log(p) + (1 - t) log(1 - p)) for probabilities p = `input` and targets t in [0, 1], each log
    clamped at -100 as in PyTorch; `weight` multiplies each element's loss."""
    _check_reduction("binary_cross_entropy", reduction)
    target = _like_input(input, target)
    if target.shape != input.shape:
        raise ValueError(f"binary_cross_entropy: target {target.shape} must have the input's shape {input.shape}")
    loss = fused.cross_entropy.BinaryCrossEntropy.apply(input, target)
    return _reduce("binary_cross_entropy", loss if weight is None else loss * weight, reduction)


def binary_cross_entropy_with_logits(input: Tensor, target: Any, weight: Any = None, *, reduction: str = "mean",
                                     pos_weight: Any = None) -> Tensor:
    """binary_cross_entropy(sigmoid(x), t), computed from the logits x without ever forming log(sigmoid(x)):

    loss = (1 - t) x + softplus(-x) = softplus(x) - t x, which is stable for any x. `pos_weight` multiplies
    the positive term: loss = (1 - t) x + (1 + (pos_weight - 1) t) softplus(-x), as in PyTorch.
    """
    _check_reduction("binary_cross_entropy_with_logits", reduction)
    target = _like_input(input, target)
    if target.shape != input.shape:
        raise ValueError(f"binary_cross_entropy_with_logits: target {target.shape} must have the input's shape "
                         f"{input.shape}")
    softplus = activations.Softplus.apply(-input, beta=1.0, threshold=float("inf"))  # log(1 + exp(-x)), exact
    positive = softplus if pos_weight is None else (1 + (pos_weight - 1) * target) * softplus
    loss = (1 - target) * input + positive
    return _reduce("binary_cross_entropy_with_logits", loss if weight is None else loss * weight, reduction)


def _like_input(input: Tensor, target: Any) -> Tensor:
    """The target as a tensor on the input's device; numbers and arrays take the input's dtype."""
    return target if isinstance(target, Tensor) else Tensor(target, device=input.device, dtype=input.dtype)


__all__ = [
    "attention_probs", "batch_norm", "binary_cross_entropy", "binary_cross_entropy_with_logits", "cross_entropy",
    "dropout", "elu", "embedding", "gelu", "huber_loss", "kl_div", "l1_loss", "layer_norm", "leaky_relu", "linear",
    "log_softmax", "mse_loss", "nll_loss", "normalize", "one_hot", "pad", "relu", "rms_norm",
    "scaled_dot_product_attention", "sigmoid", "silu", "smooth_l1_loss", "softmax", "softplus", "tanh",
]  # (cat, concat, stack and where live here too, but PyTorch has them as torch.cat, ...: see minigrad/__init__.py)


def __getattr__(name: str) -> object:
    """A torch name minigrad does not have fails here, in one line saying so and what to use instead."""
    from minigrad.compat.missing import refuse

    raise refuse(__name__, name)
