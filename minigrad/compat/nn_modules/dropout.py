"""`torch.nn.modules.dropout`'s path: `Dropout` (../layers.py)."""

from minigrad.nn.layers import Dropout

__all__ = ["Dropout"]
