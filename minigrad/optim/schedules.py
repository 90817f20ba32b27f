"""Learning-rate schedules: plain functions of the iteration number.

A schedule is just arithmetic, so the training loop stays explicit about what it does:

    for it in range(max_iters):
        lr = cosine_with_warmup(it, max_lr=6e-4, warmup_iters=100, decay_iters=5000, min_lr=6e-5)
        set_lr(optimizer, lr)   # i.e. group["lr"] = lr for every group
        ...

The scheduler objects of `torch.optim.lr_scheduler` (../compat/lr_scheduler.py) compute with the same two
curves, `cosine_between` and `linear_between`. Because the rate depends only on `it` (never on how many times a
run was stopped and resumed), a resumed run follows exactly the same schedule as an uninterrupted one.
Read next: checkpoint.py, which saves an optimizer's state.
"""

from __future__ import annotations

import math
from typing import Any


def cosine_with_warmup(it: int, max_lr: float, warmup_iters: int, decay_iters: int, min_lr: float) -> float:
    """nanoGPT's `get_lr`: a linear warmup to `max_lr`, then a cosine decay to `min_lr`, then `min_lr`.

        it <  warmup_iters:          max_lr * (it + 1) / (warmup_iters + 1)
        warmup_iters <= it <= decay_iters:
                                     min_lr + (max_lr - min_lr) * (1 + cos(pi * r)) / 2,
                                     r = (it - warmup_iters) / (decay_iters - warmup_iters)
        it >  decay_iters:           min_lr
    """
    if it < warmup_iters:
        return max_lr * (it + 1) / (warmup_iters + 1)  # (it + 1): the very first step already learns
    if it > decay_iters or decay_iters <= warmup_iters:
        return min_lr if it > decay_iters else max_lr
    return cosine_between(max_lr, min_lr, (it - warmup_iters) / (decay_iters - warmup_iters))


def linear_with_warmup(it: int, max_lr: float, warmup_iters: int, decay_iters: int, min_lr: float) -> float:
    """The same warmup, then a straight line from `max_lr` down to `min_lr` at `decay_iters`."""
    if it < warmup_iters:
        return max_lr * (it + 1) / (warmup_iters + 1)
    if it >= decay_iters:
        return min_lr
    return linear_between(max_lr, min_lr, (it - warmup_iters) / (decay_iters - warmup_iters))


def constant_with_warmup(it: int, max_lr: float, warmup_iters: int) -> float:
    """The same warmup, then `max_lr` for ever."""
    return max_lr * (it + 1) / (warmup_iters + 1) if it < warmup_iters else max_lr


def cosine_between(start: float, end: float, pct: float) -> float:
    """Half a cosine from `start` (pct = 0) to `end` (pct = 1): end + (start - end) * (1 + cos(pi * pct)) / 2.
    Past pct = 1 it climbs back up (a cosine, not a clamp): the schedules above stop at `decay_iters` first."""
    coeff = 0.5 * (1.0 + math.cos(math.pi * pct))  # goes from 1 to 0
    return end + coeff * (start - end)


def linear_between(start: float, end: float, pct: float) -> float:
    """A straight line from `start` (pct = 0) to `end` (pct = 1)."""
    return start + pct * (end - start)


def set_lr(optimizer: Any, lr: float) -> None:
    """Give every parameter group of `optimizer` the learning rate `lr`."""
    for group in optimizer.param_groups:
        group["lr"] = lr
