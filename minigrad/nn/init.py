"""Initialisers that fill a tensor in place, as `torch.nn.init` does (hence the trailing underscore).

Random values are drawn on the host from minigrad's seeded generator (random.py) and then copied to
the tensor's device, so `mg.manual_seed(s)` gives the same weights on the CPU and on a GPU.
Read next: utils.py (gradient clipping), then ../optim/optimizer.py.
"""

from __future__ import annotations

import math

import numpy as np

from minigrad import backend, random
from minigrad.tensor import Tensor


def _fill(tensor: Tensor, values: np.ndarray) -> Tensor:
    """Copy host `values` into the tensor's own array (in place: anything sharing it sees the change)."""
    tensor.data[...] = backend.to_device(values.astype(tensor.dtype), tensor.device)
    return tensor


def constant_(tensor: Tensor, value: float) -> Tensor:
    return _fill(tensor, np.full(tensor.shape, value))


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    return _fill(tensor, random.host_rng().normal(mean, std, tensor.shape))


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    return _fill(tensor, random.host_rng().uniform(a, b, tensor.shape))


def zeros_(tensor: Tensor) -> Tensor:
    return _fill(tensor, np.zeros(tensor.shape))


def ones_(tensor: Tensor) -> Tensor:
    return _fill(tensor, np.ones(tensor.shape))


def linear_default_(weight: Tensor, bias: Tensor | None = None) -> None:
    """PyTorch's default for Linear: weight and bias ~ U(-1/sqrt(fan_in), 1/sqrt(fan_in)).

    (PyTorch writes it as kaiming_uniform_ with a = sqrt(5), which works out to this bound.)
    """
    bound = 1 / math.sqrt(weight.shape[1]) if weight.shape[1] > 0 else 0.0
    uniform_(weight, -bound, bound)
    if bias is not None:
        uniform_(bias, -bound, bound)
