"""More of `torch.nn.functional`, composed from the ops minigrad has (each gradient comes from them):
`F.pad` (constant padding, and cropping with negative pads), `F.kl_div`, the L1 family (`F.l1_loss`, `F.smooth_l1_loss`,
`F.huber_loss`) and `F.batch_norm`. They are F's names:
`minigrad/functional.py` imports them.
Read next: losses.py (the loss modules that call kl_div and binary_cross_entropy_with_logits).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import minigrad
from minigrad.core.autograd import no_grad

REDUCTIONS = ("none", "batchmean", "sum", "mean")


def pad(input: minigrad.Tensor, pad: Sequence[int], mode: str = "constant", value: float | None = None
        ) -> minigrad.Tensor:
    """`input` with `value` (default 0) added around its last dims: `pad` = (left, right) for the last dim, then
    (top, bottom) for the one before, and so on, as in PyTorch. A negative pad crops instead.

    Only mode="constant": its gradient is the slice of the upstream gradient where the input went (concatenation
    and slicing give it); the other modes ("reflect", "replicate", "circular") are refused in one line.
    """
    if mode != "constant":
        raise NotImplementedError(f"F.pad: minigrad has only mode='constant', not {mode!r}; build the border "
                                  "yourself with slicing and mg.cat")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"F.pad: padding length must be even and at most twice the number of dims "
                         f"({input.ndim}), got {len(pad)}")
    out = input
    for i in range(len(pad) // 2):
        dim, before, after = input.ndim - 1 - i, int(pad[2 * i]), int(pad[2 * i + 1])
        size = out.shape[dim] + before + after
        if size < 0:
            raise RuntimeError(f"F.pad: the padded size of dim {dim} would be {size} (input {tuple(input.shape)}, "
                               f"pad {tuple(pad)})")
        keep = slice(max(-before, 0), out.shape[dim] - max(-after, 0))  # negative pads crop first
        out = out[(slice(None),) * dim + (keep,)]
        blocks = [_filled(out, dim, before, value), out, _filled(out, dim, after, value)]
        out = minigrad.cat([b for b in blocks if b is not None], dim) if before > 0 or after > 0 else out
    return out


def _filled(x: minigrad.Tensor, dim: int, size: int, value: float | None) -> minigrad.Tensor | None:
    """A block shaped like x except `size` along `dim`, filled with `value` (None when size <= 0)."""
    if size <= 0:
        return None
    shape = tuple(size if d == dim else n for d, n in enumerate(x.shape))
    return minigrad.full(shape, 0 if value is None else value, dtype=x.dtype, device=x.device)


def kl_div(input: minigrad.Tensor, target: Any, *, reduction: str = "mean", log_target: bool = False
           ) -> minigrad.Tensor:
    """The Kullback-Leibler divergence of `target` from the distribution whose log-probabilities are `input`:

        loss = target * (log(target) - input)           (0 where target = 0, as PyTorch's xlogy gives it)
        loss = exp(target) * (target - input)           with log_target=True (target holds log-probabilities)

    reduction: "mean" (over every element, PyTorch's default, which it warns is not the divergence), "batchmean"
    (the sum divided by the batch size: the divergence per sample), "sum" or "none".
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"kl_div: reduction must be one of {REDUCTIONS}, not {reduction!r}")
    target = target if isinstance(target, minigrad.Tensor) else minigrad.tensor(target, dtype=input.dtype)
    if log_target:
        loss = target.exp() * (target - input)
    elif target.requires_grad:  # xlogy: PyTorch's values, and its gradient for the target (NaN where t = 0)
        loss = minigrad.xlogy(target, target) - target * input
    else:  # the same values without NumPy's log(0) warning: log(1) = 0 where the target is 0
        loss = target * (target.masked_fill(target == 0, 1.0).log() - input)
    if reduction == "batchmean":
        return loss.sum() / (input.shape[0] if input.ndim else 1)
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def _reduced(op: str, loss: minigrad.Tensor, reduction: str) -> minigrad.Tensor:
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{op}: reduction must be 'none', 'mean' or 'sum', not {reduction!r}")
    return loss.mean() if reduction == "mean" else loss.sum() if reduction == "sum" else loss


def l1_loss(input: minigrad.Tensor, target: Any, *, reduction: str = "mean") -> minigrad.Tensor:
    """|input - target|, averaged (or summed)."""
    return _reduced("l1_loss", (input - target).abs(), reduction)


def huber_loss(input: minigrad.Tensor, target: Any, *, reduction: str = "mean", delta: float = 1.0
               ) -> minigrad.Tensor:
    """0.5 d**2 where |d| < delta, else delta (|d| - 0.5 delta), for d = input - target: squared near 0, linear
    beyond, so that an outlier pulls with a bounded gradient."""
    d = (input - target).abs()
    return _reduced("huber_loss", minigrad.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), reduction)


def smooth_l1_loss(input: minigrad.Tensor, target: Any, *, reduction: str = "mean", beta: float = 1.0
                   ) -> minigrad.Tensor:
    """huber_loss / beta: 0.5 d**2 / beta where |d| < beta, else |d| - 0.5 beta (l1_loss when beta = 0)."""
    if beta == 0:
        return l1_loss(input, target, reduction=reduction)
    d = (input - target).abs()
    return _reduced("smooth_l1_loss", minigrad.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta), reduction)


def batch_norm(input: minigrad.Tensor, running_mean: minigrad.Tensor | None, running_var: minigrad.Tensor | None,
               weight: minigrad.Tensor | None = None, bias: minigrad.Tensor | None = None, training: bool = False,
               momentum: float = 0.1, eps: float = 1e-5) -> minigrad.Tensor:
    """Normalise each channel (dim 1) over the batch (and the length, for (N, C, L)), then scale and shift:

        y = (x - mean) / sqrt(var + eps) * weight + bias

    In training, mean and var are the batch's (var biased), and the running statistics, when given, move towards
    them in place: running = (1 - momentum) * running + momentum * batch (the unbiased var, as PyTorch keeps it).
    Otherwise the running statistics are used.
    """
    dims = (0, *range(2, input.ndim))  # every dim but the channels
    shape = (1, input.shape[1]) + (1,) * (input.ndim - 2)  # (1, C) or (1, C, 1): broadcast over the batch
    if training:
        count = input.numel() // input.shape[1]
        if count <= 1:
            raise ValueError(f"Expected more than 1 value per channel when training, got input size "
                             f"{tuple(input.shape)}")
        mean, var = input.mean(dims), input.var(dims, correction=0)
        if running_mean is not None and running_var is not None:
            with no_grad():
                running_mean.mul_(1 - momentum).add_(momentum * mean)
                running_var.mul_(1 - momentum).add_(momentum * count / (count - 1) * var)
    else:
        mean, var = running_mean, running_var
    y = (input - mean.reshape(shape)) / (var.reshape(shape) + eps).sqrt()
    if weight is not None:
        y = y * weight.reshape(shape)
    return y if bias is None else y + bias.reshape(shape)
