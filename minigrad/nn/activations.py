"""Activation modules, as in `torch.nn`: each wraps one function of `minigrad.functional` and holds its settings.

    nn.Sequential(nn.Linear(4, 16), nn.GELU(), nn.Linear(16, 1))

Read next: losses.py.
"""

from __future__ import annotations

import minigrad.functional as F
from minigrad.fused.gelu import gelu_op
from minigrad.nn.module import Module
from minigrad.tensor import Tensor


class GELU(Module):
    """x * Phi(x), Phi the standard normal CDF (approximate="none", PyTorch's default and nanoGPT's), or GPT-2's
    tanh approximation (approximate="tanh")."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        gelu_op(approximate)  # an unknown `approximate` fails here, not at the first forward
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class ReLU(Module):
    """max(x, 0)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


class Tanh(Module):
    """tanh(x)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Sigmoid(Module):
    """1 / (1 + exp(-x))."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class SiLU(Module):
    """x * sigmoid(x)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x."""

    def __init__(self, negative_slope: float = 0.01) -> None:
        super().__init__()
        self.negative_slope = negative_slope

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class ELU(Module):
    """x where x > 0, else alpha * (exp(x) - 1)."""

    def __init__(self, alpha: float = 1.0) -> None:
        super().__init__()
        self.alpha = alpha

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(x, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class Softplus(Module):
    """log(1 + exp(beta x)) / beta; x itself where beta x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"
