"""Activation functions: tanh, sigmoid, relu, leaky_relu, elu, silu and softplus (GELU: ../fused/gelu.py).

Elementwise like the ops in elementwise.py, each with its derivative beside it. tanh and sigmoid turn
integer input into float32, as PyTorch does; the others refuse integers, as PyTorch does, rather than
guess a dtype. Read next: reduce.py.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.backend import get_array_module
from minigrad.core.function import Function
from minigrad.ops.elementwise import to_float


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
