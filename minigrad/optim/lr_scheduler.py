"""`minigrad.optim.lr_scheduler`, as `torch.optim.lr_scheduler`: the scheduler objects live in
../compat/lr_scheduler.py; the formulas they compute with, and that training uses, in schedules.py."""

from minigrad.compat.lr_scheduler import (
    CosineAnnealingLR,
    LambdaLR,
    LinearLR,
    LRScheduler,
    OneCycleLR,
    SequentialLR,
    StepLR,
)

__all__ = ["CosineAnnealingLR", "LRScheduler", "LambdaLR", "LinearLR", "OneCycleLR", "SequentialLR", "StepLR"]
