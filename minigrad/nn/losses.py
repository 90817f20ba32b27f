"""Loss modules, as in `torch.nn`: each holds its settings and calls one loss of `minigrad.functional`.

    loss = nn.CrossEntropyLoss(label_smoothing=0.1)(logits, targets)   # logits (N, C), targets (N,)

Read next: init.py.
"""

from __future__ import annotations

from typing import Any

import minigrad.functional as F
from minigrad.nn.module import Module
from minigrad.tensor import Tensor


class CrossEntropyLoss(Module):
    """F.cross_entropy: the classes on dim 1 of the input, integer class ids as the target."""

    # Keywords after `weight`: PyTorch's next positional slots are the deprecated size_average and reduce, so a
    # positional call that PyTorch would read differently fails here instead of meaning something else.
    def __init__(self, weight: Tensor | None = None, *, ignore_index: int = -100, reduction: str = "mean",
                 label_smoothing: float = 0.0) -> None:
        super().__init__()
        self.register_buffer("weight", weight)  # the class weights move with .to(device), as in PyTorch
        self.ignore_index = ignore_index
        self.reduction, self.label_smoothing = reduction, label_smoothing

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               reduction=self.reduction, label_smoothing=self.label_smoothing)

    def extra_repr(self) -> str:
        return f"ignore_index={self.ignore_index}, reduction={self.reduction!r}, label_smoothing={self.label_smoothing}"


class MSELoss(Module):
    """F.mse_loss: the mean (or sum) of the squared differences."""

    def __init__(self, *, reduction: str = "mean") -> None:  # keyword only, as CrossEntropyLoss's settings
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)

    def extra_repr(self) -> str:
        return f"reduction={self.reduction!r}"
