"""`torch.nn.modules.loss`'s path: the loss modules (../losses.py, ../../compat/nll_loss.py)."""

from minigrad.compat.losses import BCELoss, BCEWithLogitsLoss, HuberLoss, KLDivLoss, L1Loss, SmoothL1Loss
from minigrad.compat.nll_loss import NLLLoss
from minigrad.nn.losses import CrossEntropyLoss, MSELoss

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "HuberLoss", "KLDivLoss", "L1Loss", "MSELoss", "NLLLoss",
           "SmoothL1Loss"]
