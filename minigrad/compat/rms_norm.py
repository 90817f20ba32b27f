"""`RMSNorm`, as `torch.nn.RMSNorm`: LayerNorm without the mean, composed from primitive ops.

Read next: ../fused/layer_norm.py (its readable cousin).
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minigrad.functional as F
from minigrad.nn.module import Module, Parameter
from minigrad.tensor import Tensor


class RMSNorm(Module):
    """y = x / sqrt(mean(x**2 over the last len(normalized_shape) dims) + eps) * weight.

    `eps=None` means the machine epsilon of the input's dtype, as in PyTorch; `weight` starts at ones.
    """

    def __init__(self, normalized_shape: int | tuple[int, ...], eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        self.normalized_shape, self.eps, self.elementwise_affine = shape, eps, elementwise_affine
        self.weight = Parameter(np.ones(shape), dtype=dtype, device=device) if elementwise_affine else None

    def forward(self, x: Tensor) -> Tensor:
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
