"""`torch.nn.modules.container`'s path: `Sequential`, `ModuleList` (../layers.py), `ModuleDict` (../structure.py)."""

from minigrad.nn.layers import ModuleList, Sequential
from minigrad.nn.structure import ModuleDict

__all__ = ["ModuleDict", "ModuleList", "Sequential"]
