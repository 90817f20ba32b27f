"""The two GELUs, fused: PyTorch's exact one, x Phi(x), and GPT-2's tanh approximation, each computing its
derivative beside its value, in place.

Composed from primitives (twins.gelu, twins.gelu_tanh) each is five to ten nodes; fused, forward keeps one
array for backward (the slope, or tanh's t) and backward is a product or a few in-place steps.
Read next: embedding.py.
"""

from __future__ import annotations

import math
from typing import Any

from minigrad.core.backend import get_array_module
from minigrad.core.function import Function
from minigrad.kernels import special
from minigrad.kernels.select import compiled
from minigrad.kernels.threads import in_chunks
from minigrad.ops.activations import require_float


class GELU(Function):
    """The exact GELU: y = x Phi(x), Phi the standard normal's CDF, Phi(x) = (1 + erf(x / sqrt(2))) / 2;
    dy/dx = Phi(x) + x phi(x), phi(x) = exp(-x**2 / 2) / sqrt(2 pi) its density.

    PyTorch's `gelu(x)` (approximate="none") and nanoGPT's MLP. Forward computes the slope dy/dx beside y
    (Phi and phi come out of one pass, special.normal_cdf_and_density) and keeps only the slope: backward is
    then one product, gx = gy * dy/dx. A GPT runs this on every activation of its MLPs, so the work goes in
    cache-sized blocks, and on very large arrays over the threads (../kernels/threads.py, in_chunks). With the
    compiled kernels (kernels/select.py) the same formula runs as one pass instead (kernels/numba_gelu.py).
    twins.gelu composes it from erf.
    """

    def forward(self, x):
        fast = compiled("gelu", require_float("gelu", x))  # kernels/numba_gelu.py, or None: the NumPy code
        y, self.slope = fast.gelu_forward(x) if fast else in_chunks(gelu_and_slope, x)
        return y

    def backward(self, gy):
        return gy * self.slope

    def composed(self, x):
        """The same function from primitive ops, whose graph gives double backward (higher_order.py)."""
        from minigrad.fused import twins  # (it imports the ops)

        return twins.gelu(x)


def gelu_and_slope(x: Any) -> tuple[Any, Any]:
    """(x Phi(x), Phi(x) + x phi(x)): the exact GELU and its derivative, for a block of a float array."""
    cdf, density = special.normal_cdf_and_density(x)
    density *= x
    density += cdf  # the slope
    cdf *= x  # y
    return cdf, density


def gelu_op(approximate: str) -> type[Function]:
    """The GELU op for F.gelu's `approximate`: "none" (exact, the default) or "tanh"."""
    if approximate == "none":
        return GELU
    if approximate == "tanh":
        return GELUTanh
    raise ValueError(f"gelu: approximate must be 'none' or 'tanh', not {approximate!r}")


GELU_C = math.sqrt(2 / math.pi)
GELU_A = 0.044715


class GELUTanh(Function):
    """GPT-2's tanh approximation: y = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x**3).

    dy/dx = (1 + t)/2 + x/2 (1 - t**2) du/dx, with t = tanh(u), du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x**2).
    PyTorch's `gelu(x, approximate="tanh")`. Both directions are written in place, one line per factor, so
    they make two arrays instead of ten (twins.gelu has the plain formula; tests/test_fused.py checks
    that the two agree).
    """

    def forward(self, x):
        xp = get_array_module(x)
        self.x = require_float("gelu", x)
        t = xp.multiply(x, x, out=xp.empty_like(x))  # (an array even for 0-d x, so tanh can write into it)
        t *= GELU_A
        t += 1
        t *= x
        t *= GELU_C  # u = C x (1 + A x**2)
        self.t = xp.tanh(t, out=t)
        y = t + 1
        y *= x
        y *= 0.5  # y = x/2 (1 + t)
        return y

    def backward(self, gy):
        x, t = self.x, self.t
        gx = x * x
        gx *= 3 * GELU_A
        gx += 1
        gx *= GELU_C
        gx *= x  # x du/dx
        sech2 = t * t
        sech2 *= -1
        sech2 += 1  # 1 - t**2
        gx *= sech2
        gx += t
        gx += 1
        gx *= 0.5  # dy/dx = (1 + t + x (1 - t**2) du/dx) / 2
        gx *= gy
        return gx

    def composed(self, x):
        """The same function from primitive ops, whose graph gives double backward (higher_order.py)."""
        from minigrad.fused import twins  # (it imports the ops)

        return twins.gelu_tanh(x)
