"""`torch.nn.modules.linear`'s path: `Linear` (../layers.py) and `Identity` (../structure.py)."""

from minigrad.nn.layers import Linear
from minigrad.nn.structure import Identity

__all__ = ["Identity", "Linear"]
