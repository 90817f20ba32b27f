"""`torch.nn.modules.sparse`'s path: `Embedding` (../layers.py)."""

from minigrad.nn.layers import Embedding

__all__ = ["Embedding"]
