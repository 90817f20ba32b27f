"""Activation functions: tanh, sigmoid, relu, leaky_relu, elu, silu, softplus and the two GELUs.

Elementwise like the ops in elementwise.py, each with its derivative beside it. tanh and sigmoid turn
integer input into float32, as PyTorch does; the others refuse integers, as PyTorch does, rather than
guess a dtype. Read next: reduce.py.
"""

from __future__ import annotations

import math
from typing import Any

from minigrad.backend import get_array_module
from minigrad.function import Function
from minigrad.ops import special
from minigrad.ops.elementwise import to_float
from minigrad.threads import in_chunks


def require_float(op: str, x: Any) -> Any:
    """`x` itself; NotImplementedError for an integer array (PyTorch has no integer kernel for these)."""
    if x.dtype.kind != "f":
        raise NotImplementedError(f"{op}: not implemented for {x.dtype} tensors; convert to a float dtype first")
    return x


class Tanh(Function):
    """y = tanh(x);  dy/dx = 1 - y**2."""

    def forward(self, x):
        self.y = get_array_module(x).tanh(to_float(x))
        return self.y

    def backward(self, gy):
        return gy * (1 - self.y * self.y)


def stable_sigmoid(x: Any) -> tuple[Any, Any]:
    """(sigmoid(x), exp(-|x|)) for a float array, without overflow and with full relative precision.

    With e = exp(-|x|) <= 1: sigmoid(x) = 1 / (1 + e) for x >= 0 and e / (1 + e) for x < 0. The naive
    1 / (1 + exp(-x)) overflows exp far left, and 1 - (...) forms lose every digit there (sigmoid(-20) is
    2.1e-9, not 0), which log(sigmoid(x)) would turn into -inf.
    """
    xp = get_array_module(x)
    e = xp.exp(-xp.abs(x))
    return xp.where(x >= 0, 1, e) / (1 + e), e


class Sigmoid(Function):
    """y = 1 / (1 + exp(-x));  dy/dx = y * (1 - y)."""

    def forward(self, x):
        self.y, _ = stable_sigmoid(to_float(x))
        return self.y

    def backward(self, gy):
        return gy * self.y * (1 - self.y)


class ReLU(Function):
    """y = max(x, 0);  dy/dx = 0 where x <= 0, else 1 (a nan passes its gradient, as in PyTorch)."""

    def forward(self, x):
        self.positive = ~(x <= 0)
        return get_array_module(x).maximum(x, 0)  # not x * positive: -inf * 0 would be nan

    def backward(self, gy):
        return gy * self.positive


class LeakyReLU(Function):
    """y = x where x > 0, else slope * x;  dy/dx = 1 where x > 0, else slope (at 0 too, as in PyTorch)."""

    negative_slope: float

    def forward(self, x):
        self.positive = require_float("leaky_relu", x) > 0
        return get_array_module(x).where(self.positive, x, x * self.negative_slope)

    def backward(self, gy):
        return get_array_module(gy).where(self.positive, gy, gy * self.negative_slope)


class ELU(Function):
    """y = x where x > 0, else alpha (exp(x) - 1);  dy/dx = alpha exp(x) = y + alpha where x <= 0, else 1 (a nan
    passes its gradient, as in PyTorch)."""

    alpha: float

    def forward(self, x):
        xp = get_array_module(x)
        self.positive = ~(require_float("elu", x) <= 0)
        self.y = xp.where(self.positive, x, self.alpha * xp.expm1(xp.minimum(x, 0)))  # min: no exp overflow
        return self.y

    def backward(self, gy):
        return get_array_module(gy).where(self.positive, gy, gy * (self.y + self.alpha))


class SiLU(Function):
    """y = x sigmoid(x) (also called swish);  dy/dx = s + x s (1 - s) with s = sigmoid(x)."""

    def forward(self, x):
        self.x = require_float("silu", x)
        self.s, _ = stable_sigmoid(x)
        return x * self.s

    def backward(self, gy):
        s = self.s
        return gy * (s * (1 + self.x * (1 - s)))

    def recompute(self, x, *, y):
        return {"s": x.sigmoid()}  # for a backward on tensors (higher_order.py)


class Softplus(Function):
    """y = log(1 + exp(beta x)) / beta, or x where beta x > threshold;  dy/dx = sigmoid(beta x), or 1."""

    beta: float
    threshold: float

    def forward(self, x):
        xp = get_array_module(x)
        z = require_float("softplus", x) * self.beta
        self.linear = z > self.threshold
        self.s, e = stable_sigmoid(z)
        # log(1 + exp(z)) = max(z, 0) + log(1 + exp(-|z|)): exp never overflows, log1p keeps small values.
        smooth = (xp.maximum(z, 0) + xp.log1p(e)) / self.beta
        return xp.where(self.linear, x, smooth)

    def backward(self, gy):
        return get_array_module(gy).where(self.linear, gy, gy * self.s)

    def recompute(self, x, *, y):
        return {"s": (x * self.beta).sigmoid()}  # for a backward on tensors (higher_order.py)


class GELU(Function):
    """The exact GELU: y = x Phi(x), Phi the standard normal's CDF, Phi(x) = (1 + erf(x / sqrt(2))) / 2;
    dy/dx = Phi(x) + x phi(x), phi(x) = exp(-x**2 / 2) / sqrt(2 pi) its density.

    PyTorch's `gelu(x)` (approximate="none") and nanoGPT's MLP. Forward computes the slope dy/dx beside y
    (Phi and phi come out of one pass, special.normal_cdf_and_density) and keeps only the slope: backward is
    then one product, gx = gy * dy/dx. A GPT runs this on every activation of its MLPs, so the work goes in
    cache-sized blocks, and on very large arrays over the threads (threads.in_chunks). reference.gelu
    composes it from erf.
    """

    def forward(self, x):
        y, self.slope = in_chunks(gelu_and_slope, require_float("gelu", x))
        return y

    def backward(self, gy):
        return gy * self.slope

    def composed(self, x):
        """The same function from primitive ops, whose graph gives double backward (higher_order.py)."""
        from minigrad import reference  # (it imports the ops)

        return reference.gelu(x)


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
    they make two arrays instead of ten (reference.gelu has the plain formula; tests/test_fused.py checks
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
        from minigrad import reference  # (it imports the ops)

        return reference.gelu_tanh(x)
