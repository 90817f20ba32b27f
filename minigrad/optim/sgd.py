"""Stochastic gradient descent, with optional momentum and L2 weight decay (PyTorch's `torch.optim.SGD`).

Read next: adam.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from minigrad.optim.optimizer import Optimizer


class SGD(Optimizer):
    """`SGD(params, lr, momentum=0.0, weight_decay=0.0, nesterov=False)`."""

    def __init__(self, params: Iterable[Any], lr: float, momentum: float = 0.0, weight_decay: float = 0.0,
                 nesterov: bool = False) -> None:
        if lr < 0 or momentum < 0 or weight_decay < 0:
            raise ValueError(f"SGD: lr, momentum and weight_decay must be >= 0 (got {lr}, {momentum}, {weight_decay})")
        if nesterov and momentum == 0:
            raise ValueError("SGD: nesterov needs momentum > 0")
        super().__init__(params, {"lr": lr, "momentum": momentum, "weight_decay": weight_decay, "nesterov": nesterov})

    def step(self) -> None:
        """One update of every parameter that has a gradient g (PyTorch's rule, dampening 0):

            g   = g + weight_decay * p                 (L2 penalty, when weight_decay > 0)
            buf = g on the first step, then momentum * buf + g   (when momentum > 0)
            d   = g + momentum * buf if nesterov else buf
            p   = p - lr * d
        """
        for group in self.param_groups:
            lr, momentum, weight_decay = group["lr"], group["momentum"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue  # a parameter that took no part in the loss is left alone
                g = p.grad.array
                if weight_decay != 0:
                    g = g + weight_decay * p.array  # a new array: the stored gradient stays untouched
                if momentum != 0:
                    state = self.state.setdefault(p, {})
                    buf = state.get("momentum_buffer")
                    if buf is None:
                        buf = state["momentum_buffer"] = g.copy()
                    else:
                        buf *= momentum  # in place, on the device
                        buf += g
                    g = g + momentum * buf if group["nesterov"] else buf
                p.array -= lr * g
