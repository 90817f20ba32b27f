"""`torch.nn.modules.normalization`'s path: `LayerNorm` (../layers.py), `RMSNorm` (../../compat/rms_norm.py)."""

from minigrad.compat.rms_norm import RMSNorm
from minigrad.nn.layers import LayerNorm

__all__ = ["LayerNorm", "RMSNorm"]
