"""Dropout, fused: multiply by a random 0/1 mask scaled by 1 / (1 - p), the same mask in backward.

F.dropout draws the mask (minigrad/random.py); the op only applies it. Composed from primitives it is one
multiplication by a constant tensor.
Read next: attention.py.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.function import Function


class Dropout(Function):
    """y = x * mask / (1 - p), mask ~ Bernoulli(1 - p);  gx = gy * mask / (1 - p)."""

    keep: Any  # the mask already divided by (1 - p)
    is_linear = True

    def forward(self, x):
        return x * self.keep

    def backward(self, gy):
        return gy * self.keep
