"""`nn.NLLLoss`, as in PyTorch: the loss module of F.nll_loss, for programs that write LogSoftmax and NLLLoss apart
(PyTorch's tutorials name the pair; nn.CrossEntropyLoss is the two in one, minigrad/nn/losses.py).

    loss = nn.NLLLoss()(nn.LogSoftmax(dim=1)(logits), targets)   # = nn.CrossEntropyLoss()(logits, targets)

Read next: ../fused/cross_entropy.py (the loss it shares its math with).
"""

from __future__ import annotations

from typing import Any

import minigrad.functional as F
from minigrad.nn.module import Module
from minigrad.tensor import Tensor


class NLLLoss(Module):
    """F.nll_loss: minus the log-probability of each target class (classes on dim 1 of the input), averaged."""

    def __init__(self, weight: Tensor | None = None, *, ignore_index: int = -100, reduction: str = "mean") -> None:
        super().__init__()
        self.register_buffer("weight", weight)  # the class weights move with .to(device), as in PyTorch
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, input: Tensor, target: Any) -> Tensor:
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction)
