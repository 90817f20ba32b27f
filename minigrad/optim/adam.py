"""Adam and AdamW (PyTorch's `torch.optim.Adam` and `torch.optim.AdamW`).

They differ only in weight decay. Adam adds an L2 penalty to the gradient, so the decay is rescaled
by the adaptive step like any gradient; AdamW ("decoupled weight decay", Loshchilov & Hutter) shrinks
the weights directly, p <- p * (1 - lr * weight_decay), which is what GPT training uses.
Read next: schedules.py, then checkpoint.py.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from minigrad.core import backend
from minigrad.kernels.select import compiled
from minigrad.optim.optimizer import Optimizer


class Adam(Optimizer):
    """`Adam(params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0)`: L2 weight decay."""

    decoupled_weight_decay = False

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.0) -> None:
        name = type(self).__name__
        if lr < 0 or eps < 0 or weight_decay < 0:
            raise ValueError(f"{name}: lr, eps and weight_decay must be >= 0 (got {lr}, {eps}, {weight_decay})")
        if not all(0 <= beta < 1 for beta in betas):
            raise ValueError(f"{name}: betas must be in [0, 1), got {betas}")
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay})

    def step(self) -> None:
        """One update of every parameter p that has a gradient g; t counts this parameter's steps:

            g = g + weight_decay * p                   (Adam: L2 penalty)
            p = p * (1 - lr * weight_decay)            (AdamW: decoupled decay, instead)
            m = beta1 * m + (1 - beta1) * g            (running mean of g)
            v = beta2 * v + (1 - beta2) * g**2         (running mean of g squared)
            p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

        m and v start at zero, so early on they underestimate; dividing by 1 - beta**t (the bias
        correction) undoes that. Everything happens in place on the device, with one scratch array
        (adam_update); with the compiled kernels (minigrad/kernels/select.py), in one pass per parameter
        (numba_adamw.py).
        """
        for group in self.param_groups:
            lr, eps, weight_decay = group["lr"], group["eps"], group["weight_decay"]
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue  # a parameter that took no part in the loss is left alone
                g = p.grad.array
                xp = backend.get_array_module(p.array)
                state = self.state.get(p)
                if not state:
                    state = self.state[p] = {"step": 0, "exp_avg": xp.zeros_like(p.array),
                                             "exp_avg_sq": xp.zeros_like(p.array)}
                state["step"] += 1
                m, v = state["exp_avg"], state["exp_avg_sq"]
                fast = compiled("adamw", p.array, g, m, v)  # kernels/numba_adamw.py, or None: the NumPy code
                if fast and not all(a.flags.c_contiguous for a in (p.array, m, v)):
                    fast = None  # the kernel updates p, m and v in place: each must be one C-ordered block
                (fast.adam_step if fast else adam_update)(p.array, g, m, v, lr, beta1, beta2, eps, weight_decay,
                                                          state["step"], self.decoupled_weight_decay)


def adam_update(p: Any, g: Any, m: Any, v: Any, lr: float, beta1: float, beta2: float, eps: float,
                weight_decay: float, t: int, decoupled: bool) -> None:
    """One Adam (decoupled=False) or AdamW (decoupled=True) update of the array p, in place, with its gradient
    g, its moments m and v (also updated in place) and t its step count after this step (see Adam.step)."""
    xp = backend.get_array_module(p)
    if weight_decay != 0:
        if decoupled:
            p *= 1 - lr * weight_decay
        else:
            g = g + weight_decay * p  # a new array: the stored gradient stays untouched
    scratch = g - m  # the step's one new array, reused below
    scratch *= 1 - beta1
    m += scratch  # m = beta1 * m + (1 - beta1) * g, as m + (1 - beta1) (g - m): one pass fewer
    xp.multiply(g, g, out=scratch)
    scratch -= v
    scratch *= 1 - beta2
    v += scratch  # v = beta2 * v + (1 - beta2) * g**2, the same way
    # lr / bc1 * m / (sqrt(v) / sqrt(bc2) + eps), with bc = 1 - beta**t, is, multiplying through
    # by sqrt(bc2): (lr sqrt(bc2) / bc1) * m / (sqrt(v) + eps sqrt(bc2)). Two scalars, not two passes.
    sqrt_bc2 = math.sqrt(1 - beta2**t)
    denom = xp.sqrt(v, out=scratch)
    denom += eps * sqrt_bc2
    update = xp.divide(m, denom, out=scratch)
    update *= lr * sqrt_bc2 / (1 - beta1**t)
    p -= update


class AdamW(Adam):
    """`AdamW(params, lr, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01)`: decoupled weight decay."""

    decoupled_weight_decay = True

    def __init__(self, params: Iterable[Any], lr: float = 1e-3, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.01) -> None:
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
