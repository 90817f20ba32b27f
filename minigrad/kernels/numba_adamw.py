"""One parameter's Adam / AdamW update in one compiled pass: the kernel of `Adam.step` and `AdamW.step` (today
minigrad/optim/adam.py, whose formulas these are, with the same two scalars folded in):

    AdamW: p = p (1 - lr wd);   Adam: g = g + wd p;
    m = m + (1 - beta1) (g - m),   v = v + (1 - beta2) (g**2 - v),
    p = p - (lr sqrt(bc2) / bc1) m / (sqrt(v) + eps sqrt(bc2)),   bc1 = 1 - beta1**t, bc2 = 1 - beta2**t.

The optimizer keeps one array per parameter (p, its gradient, m and v), so this is one call per parameter: NumPy
makes about twelve passes over the four arrays, the kernel reads each once and writes p, m and v once. Every
scalar is rounded to float32 first, as NumPy does when it multiplies a float32 array by a Python float, so the
kernel equals the NumPy step to float32 rounding. The gradient is never written.

    adam_step(p, g, m, v, lr, beta1, beta2, eps, weight_decay, step, decoupled) -> None   (p, m, v in place)
        p, g, m, v float32 arrays of one shape, p, m and v C-contiguous (a strided copy would receive the update
        and be thrown away: the kernel refuses them); step the count t after this step (1 on the first)
Read next: ../optim/adam.py (the update it implements).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from minigrad.kernels import numba_setup
from minigrad.kernels.numba_setup import AVAILABLE, kernel

__all__ = ["AVAILABLE", "ready", "adam_step"]

ZERO = np.float32(0.0)


@kernel
def _update(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, decay: np.float32, l2: np.float32,
            one_minus_beta1: np.float32, one_minus_beta2: np.float32, eps_term: np.float32,
            step_size: np.float32) -> None:
    """The update on flat arrays; decay = 1 - lr wd (AdamW, else 1), l2 = wd (Adam, else 0)."""
    for i in range(p.size):
        pi = p[i] * decay
        gi = g[i] + l2 * pi if l2 != ZERO else g[i]
        mi = m[i] + one_minus_beta1 * (gi - m[i])
        vi = v[i] + one_minus_beta2 * (gi * gi - v[i])
        m[i] = mi
        v[i] = vi
        p[i] = pi - step_size * (mi / (np.sqrt(vi) + eps_term))


def adam_step(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, lr: float, beta1: float, beta2: float,
              eps: float, weight_decay: float, step: int, decoupled: bool) -> None:
    """Update p, m and v in place for one parameter (see the module docstring)."""
    for name, a in (("parameter", p), ("exp_avg", m), ("exp_avg_sq", v)):
        if not a.flags.c_contiguous:
            raise ValueError(f"adam_step: the {name} array must be C-contiguous, to be updated in place")
    sqrt_bc2 = math.sqrt(1 - beta2**step)
    decay = 1 - lr * weight_decay if decoupled and weight_decay != 0 else 1.0
    l2 = weight_decay if not decoupled else 0.0
    # Each Python scalar becomes float32 where NumPy's step would make it one (NEP 50: a Python float takes the
    # array's dtype); the flat views below are views, never copies, of the contiguous arrays.
    _update(p.reshape(-1), np.ascontiguousarray(g).reshape(-1), m.reshape(-1), v.reshape(-1), np.float32(decay),
            np.float32(l2), np.float32(1 - beta1), np.float32(1 - beta2), np.float32(eps * sqrt_bc2),
            np.float32(lr * sqrt_bc2 / (1 - beta1**step)))


def _warm_up() -> None:
    p, g, m, v = (np.ones(3, np.float32) for _ in range(4))
    adam_step(p, g, m, v, 1e-3, 0.9, 0.999, 1e-8, 0.1, 1, True)


@functools.cache
def ready() -> bool:
    """True once the Adam kernel is compiled or loaded from the cache (once per process)."""
    return numba_setup.prepare("AdamW", _warm_up)
