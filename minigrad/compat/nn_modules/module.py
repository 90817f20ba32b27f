"""`torch.nn.modules.module`'s path: `Module` (../module.py)."""

from minigrad.nn.module import Module

__all__ = ["Module"]
