"""`minigrad.utils`, as `torch.utils`: data/ holds Dataset and DataLoader; tensorboard.py the SummaryWriter (an
optional extra, imported only when asked for, as in PyTorch)."""

import importlib

from minigrad.utils import data

__all__ = ["data"]


def __getattr__(name: str) -> object:
    """`minigrad.utils.tensorboard` is imported when first reached (it needs an optional extra); other missing names
    are refused in one line."""
    if name == "tensorboard":
        try:
            return importlib.import_module("minigrad.utils.tensorboard")
        except ImportError as error:  # as an attribute, a missing extra is an AttributeError (hasattr answers False)
            raise AttributeError(str(error)) from None
    from minigrad.compat.missing import refuse

    raise refuse(__name__, name)
