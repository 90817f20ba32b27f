"""Gradient utilities."""

from __future__ import annotations

import math
from collections.abc import Iterable

from minigrad.tensor import Tensor


def clip_grad_norm_(parameters: Iterable[Tensor], max_norm: float) -> float:
    """Scale all gradients together so their global L2 norm is at most `max_norm`; returns the norm before.

    As in PyTorch: coef = max_norm / (norm + 1e-6), applied (in place) only when it is below 1.
    """
    grads = [p.grad.data for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    # Sum on the device, then read one number back (one synchronisation, not one per parameter).
    total = math.sqrt(float(sum((g * g).sum() for g in grads)))
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g *= coef
    return total
