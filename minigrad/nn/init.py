"""Initialisers that fill a tensor in place, as `torch.nn.init` does (hence the trailing underscore).

Random values are drawn on the host from minigrad's seeded generator (random.py), or from `generator=` when
given, and then copied to the tensor's device, so `mg.manual_seed(s)` gives the same weights on the CPU and on
a GPU. Each writes the tensor's own array with no graph recorded (PyTorch runs them under `no_grad`) and
returns the tensor. The fans and gains are PyTorch's (`_calculate_fan_in_and_fan_out`, `calculate_gain`).
Read next: utils/ (gradient clipping), then ../optim/optimizer.py.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import random
from minigrad.core import backend
from minigrad.random import Generator
from minigrad.tensor import Tensor


def _fill(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Copy host `values` into the tensor's own array (in place: anything sharing it sees the change)."""
    tensor.array[...] = backend.to_device(np.asarray(values).astype(tensor.dtype), tensor.device)
    return tensor


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with `val`."""
    return _fill(tensor, np.full(tensor.shape, val))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with samples of N(mean, std**2)."""
    return _fill(tensor, random.rng_for(generator).normal(mean, std, tensor.shape))


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: Generator | None = None) -> Tensor:
    """Fill with samples of U(a, b)."""
    return _fill(tensor, random.rng_for(generator).uniform(a, b, tensor.shape))


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return _fill(tensor, np.zeros(tensor.shape))


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return _fill(tensor, np.ones(tensor.shape))


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0, b: float = 2.0,
                  generator: Generator | None = None) -> Tensor:
    """Fill with samples of N(mean, std**2) restricted to [a, b] (a and b are values, not multiples of std).

    Drawn by rejection (redraw what falls outside), which is exact; PyTorch inverts the CDF instead.
    """
    if not a < b:
        raise ValueError(f"trunc_normal_: need a < b, got a={a}, b={b}")
    rng = random.rng_for(generator)
    values = rng.normal(mean, std, tensor.shape)
    for _ in range(1000):
        outside = (values < a) | (values > b)
        if not outside.any():
            return _fill(tensor, values)
        values[outside] = rng.normal(mean, std, int(outside.sum()))
    raise ValueError(f"trunc_normal_: [{a}, {b}] holds too little of N({mean}, {std}**2) to sample from")


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The gain PyTorch recommends for a nonlinearity: 1 (linear, sigmoid), 5/3 (tanh), sqrt(2) (relu),
    sqrt(2 / (1 + slope**2)) (leaky_relu, slope `param`, default 0.01), 3/4 (selu)."""
    if nonlinearity in ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                        "conv_transpose3d", "sigmoid"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        if isinstance(slope, bool) or not isinstance(slope, (int, float)):
            raise ValueError(f"negative_slope {slope} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """PyTorch's fans of a weight (out, in, *kernel): fan_in = in * prod(kernel), fan_out = out * prod(kernel)."""
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 dimensions")
    receptive_field = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive_field, tensor.shape[0] * receptive_field


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(6 / (fan_in + fan_out)) (Glorot & Bengio, 2010)."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor: Tensor, gain: float = 1.0, generator: Generator | None = None) -> Tensor:
    """N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def kaiming_uniform_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                     generator: Generator | None = None) -> Tensor:
    """U(-bound, bound), bound = gain * sqrt(3 / fan) with gain = calculate_gain(nonlinearity, a) (He et al., 2015)."""
    if 0 in tensor.shape:
        return tensor  # PyTorch warns and leaves an empty tensor alone
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return uniform_(tensor, -math.sqrt(3.0) * std, math.sqrt(3.0) * std, generator)


def kaiming_normal_(tensor: Tensor, a: float = 0, mode: str = "fan_in", nonlinearity: str = "leaky_relu",
                    generator: Generator | None = None) -> Tensor:
    """N(0, std**2), std = calculate_gain(nonlinearity, a) / sqrt(fan)."""
    if 0 in tensor.shape:
        return tensor
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode)), generator)


def linear_default_(weight: Tensor, bias: Tensor | None = None) -> None:
    """PyTorch's default for Linear: weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

    (PyTorch writes it as kaiming_uniform_ with a = sqrt(5), which works out to this bound.)
    """
    bound = 1 / math.sqrt(weight.shape[1]) if weight.shape[1] > 0 else 0.0
    uniform_(weight, -bound, bound)
    if bias is not None:
        uniform_(bias, -bound, bound)


__all__ = ["calculate_gain", "constant_", "kaiming_normal_", "kaiming_uniform_", "linear_default_", "normal_", "ones_",
           "trunc_normal_", "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_"]
