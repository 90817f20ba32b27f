"""More of torch.nn's loss modules, each holding its settings and calling one loss of F: `nn.BCEWithLogitsLoss`
(sigmoid and binary cross-entropy in one stable formula), `nn.BCELoss` (on probabilities), `nn.KLDivLoss`, and
`nn.L1Loss`, `nn.SmoothL1Loss`, `nn.HuberLoss`.
As nn/losses.py's, their settings after `weight` are keyword-only: PyTorch's next positional slots are its
deprecated size_average and reduce, so a positional call PyTorch would read differently fails here instead.

    loss = nn.BCEWithLogitsLoss(pos_weight=mg.tensor([3.0]))(logits, labels)

Read next: lazy.py.
"""

from __future__ import annotations

from typing import Any

import minigrad.functional as F
from minigrad.nn.module import Module
from minigrad.tensor import Tensor


class BCEWithLogitsLoss(Module):
    """F.binary_cross_entropy_with_logits: `weight` multiplies each element's loss, `pos_weight` the positive term
    (weigh a rare class up). Both are buffers: they move with .to(device) and are saved, as in PyTorch."""

    def __init__(self, weight: Tensor | None = None, *, reduction: str = "mean", pos_weight: Tensor | None = None
                 ) -> None:
        super().__init__()
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.reduction = reduction

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy_with_logits(input, target, self.weight, reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class BCELoss(Module):
    """F.binary_cross_entropy: -(t log p + (1 - t) log(1 - p)) for probabilities p (after a sigmoid)."""

    def __init__(self, weight: Tensor | None = None, *, reduction: str = "mean") -> None:
        super().__init__()
        self.register_buffer("weight", weight)
        self.reduction = reduction

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class KLDivLoss(Module):
    """F.kl_div: the input holds log-probabilities; the target probabilities (or, with log_target, their logs).
    reduction="batchmean" gives the divergence per sample; PyTorch's default "mean" divides by every element."""

    def __init__(self, *, reduction: str = "mean", log_target: bool = False) -> None:
        super().__init__()
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class L1Loss(Module):
    """F.l1_loss: the mean (or sum) of |input - target|."""

    def __init__(self, *, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(Module):
    """F.smooth_l1_loss: squared below `beta`, linear above it."""

    def __init__(self, *, reduction: str = "mean", beta: float = 1.0) -> None:
        super().__init__()
        self.reduction, self.beta = reduction, beta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(Module):
    """F.huber_loss: squared below `delta`, linear above it (smooth_l1_loss times delta)."""

    def __init__(self, reduction: str = "mean", delta: float = 1.0) -> None:
        super().__init__()
        self.reduction, self.delta = reduction, delta

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)
