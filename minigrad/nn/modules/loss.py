"""`torch.nn.modules.loss`'s path: the loss modules (../losses.py, ../../compat/nll_loss.py)."""

from minigrad.compat.losses import BCELoss, BCEWithLogitsLoss, KLDivLoss
from minigrad.compat.nll_loss import NLLLoss
from minigrad.nn.losses import CrossEntropyLoss, MSELoss

__all__ = ["BCELoss", "BCEWithLogitsLoss", "CrossEntropyLoss", "KLDivLoss", "MSELoss", "NLLLoss"]
