"""`nn.LazyLinear`, as in PyTorch: a Linear layer whose `in_features` is read from its first input (the English
d2l textbook builds every model with it). Until then its weight has shape (out_features, 0); the first call
fills in the weight and bias (the same Parameter objects, so an optimizer made earlier keeps them), initialises
them as Linear does, and the layer becomes a plain `nn.Linear`, as PyTorch's does.

    net = nn.Sequential(nn.LazyLinear(256), nn.ReLU(), nn.LazyLinear(10))
    net(X)      # a first call, with a batch, fixes every in_features

Read next: ../nn/layers.py (Linear itself).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core import backend
from minigrad.nn import init
from minigrad.nn.layers import Linear
from minigrad.nn.module import Module, Parameter
from minigrad.tensor import Tensor


class LazyLinear(Linear):
    """y = x @ weight.T + bias, with weight (out_features, in_features) and in_features = x.shape[-1]."""

    def __init__(self, out_features: int, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        Module.__init__(self)
        self.in_features, self.out_features = 0, out_features
        self.weight = Parameter(np.zeros((out_features, 0)), dtype=dtype, device=device)
        self.bias = Parameter(np.zeros(out_features), dtype=dtype, device=device) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        self.in_features = x.shape[-1]
        xp = backend.get_array_module(self.weight.array)
        self.weight.array = xp.zeros((self.out_features, self.in_features), dtype=self.weight.dtype)
        init.linear_default_(self.weight, self.bias)  # U(-1/sqrt(in_features), 1/sqrt(in_features)), as Linear
        self.__class__ = Linear  # PyTorch's lazy modules become their ordinary class once filled in
        return Linear.forward(self, x)
