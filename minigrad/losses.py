"""The loss functions of `minigrad.functional` (F.cross_entropy, F.nll_loss, F.mse_loss, F.binary_cross_entropy,
F.binary_cross_entropy_with_logits), with PyTorch's arguments, layouts and reductions.

Classes are on dim 1, as in PyTorch: scores (N, C) with targets (N,), or (N, C, d1, ...) with targets
(N, d1, ...). A GPT's logits (B, T, V) are therefore passed as logits.reshape(-1, V) with targets.reshape(-1),
as nanoGPT does; (B, T, V) with (B, T) targets raises an error that says so, rather than reading the wrong
axis as the classes. `reduction` is "mean" (weighted by the class weights of the counted targets), "sum" or
"none". The fused ops are in fused/losses.py. Read next: factories.py.
"""

from __future__ import annotations

from typing import Any

from minigrad.fused import losses
from minigrad.ops import activations
from minigrad.tensor import Tensor, _raw

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
    return losses.CrossEntropy.apply(
        input, targets=_class_ids("cross_entropy", target, input.device), weight=_class_weight(weight, input.device),
        ignore_index=ignore_index, reduction=reduction, label_smoothing=label_smoothing)


def nll_loss(input: Tensor, target: Any, weight: Tensor | None = None, *, ignore_index: int = -100,
             reduction: str = "mean") -> Tensor:
    """-input[target] for log-probabilities `input` (say, log_softmax's output), classes on dim 1;
    `weight`, `ignore_index` and `reduction` as in cross_entropy (which is nll_loss of log_softmax)."""
    _check_reduction("nll_loss", reduction)
    return losses.NLLLoss.apply(input, targets=_class_ids("nll_loss", target, input.device),
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
    loss = losses.BinaryCrossEntropy.apply(input, target)
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
