"""Gradient utilities: `clip_grad_norm_`, which keeps one bad batch from blowing up training; `nn.utils.rnn`
(`pad_sequence`, as in PyTorch) is ../../compat/rnn_utils.py, under PyTorch's path.

Read next: ../../optim/optimizer.py, which applies the (clipped) gradients.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable

from minigrad.compat import rnn_utils as rnn
from minigrad.tensor import Tensor

__all__ = ["clip_grad_norm_", "rnn"]
sys.modules[__name__ + ".rnn"] = rnn  # PyTorch's path, torch.nn.utils.rnn, to compat/rnn_utils.py


def clip_grad_norm_(parameters: Iterable[Tensor] | Tensor, max_norm: float) -> float:
    """Scale all gradients together so that their global L2 norm is at most `max_norm`, in place.

        norm = sqrt(sum over every gradient element g of g**2)
        if norm > max_norm:  g <- g * max_norm / (norm + 1e-6)     (PyTorch's formula)

    Returns the norm before clipping, as a Python float (worth logging: spikes show instability).
    """
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad.array for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    # Sum on the device, then read one number back (one synchronisation, not one per parameter).
    total = math.sqrt(float(sum((g * g).sum() for g in grads)))
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g *= coef
    return total


def __getattr__(name: str) -> object:
    """A torch name minigrad does not have fails here, in one line saying so and what to use instead."""
    from minigrad.compat.missing import refuse

    raise refuse(__name__, name)
