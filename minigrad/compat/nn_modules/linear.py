"""`torch.nn.modules.linear`'s path: `Linear` (../layers.py) and `Identity` (../structure.py)."""

from minigrad.compat.lazy import LazyLinear
from minigrad.nn.layers import Linear
from minigrad.nn.structure import Identity

NonDynamicallyQuantizableLinear = Linear  # PyTorch's name for MultiheadAttention's out_proj: a plain Linear here

__all__ = ["Identity", "LazyLinear", "Linear"]  # (and NonDynamicallyQuantizableLinear, by this path only)
