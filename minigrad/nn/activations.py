"""Activation modules, as in `torch.nn`: each wraps one function of `minigrad.functional` and holds its settings.

    nn.Sequential(nn.Linear(4, 16), nn.GELU(), nn.Linear(16, 1))

Read next: losses.py.
"""

from __future__ import annotations

from collections.abc import Callable

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
    """max(x, 0); with inplace=True written into x itself (x.relu_()), as PyTorch's."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return x.relu_() if self.inplace else F.relu(x)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


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

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, x: Tensor) -> Tensor:
        return _maybe_in_place(self.inplace, "silu_", F.silu, x)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, x: Tensor) -> Tensor:
        return _maybe_in_place(self.inplace, "leaky_relu_", lambda t: F.leaky_relu(t, self.negative_slope), x)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """x where x > 0, else alpha * (exp(x) - 1)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, x: Tensor) -> Tensor:
        return _maybe_in_place(self.inplace, "elu_", lambda t: F.elu(t, self.alpha), x)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class Softplus(Module):
    """log(1 + exp(beta x)) / beta; x itself where beta x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


def _maybe_in_place(inplace: bool, op: str, f: Callable[[Tensor], Tensor], x: Tensor) -> Tensor:
    """f(x); with `inplace` (PyTorch's setting) written into x itself, recorded as any in-place op
    (../tensor/inplace.py)."""
    return x._in_place(op, f) if inplace else f(x)
