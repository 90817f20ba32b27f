"""`minigrad.utils`, as `torch.utils`: data/ holds Dataset and DataLoader; tensorboard.py the SummaryWriter (an
optional extra, imported only when asked for, as in PyTorch)."""

from minigrad.utils import data

__all__ = ["data"]
