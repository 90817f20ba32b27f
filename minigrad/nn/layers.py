"""The layers a GPT is built from, with PyTorch's names, shapes and default initialisation.

Each is a `Module` (module.py) whose `forward` calls one function of `minigrad.functional`, where the
op and its derivative live. Containers (`Sequential`, `ModuleList`) come last; the activation modules
(`nn.GELU`, `nn.ReLU`, ...) are in activations.py and the losses (`nn.CrossEntropyLoss`, ...) in losses.py.
Read next: activations.py, losses.py, then init.py and ../optim/.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import numpy as np

import minigrad.functional as F
from minigrad.nn import init
from minigrad.nn.module import Module, Parameter
from minigrad.tensor import Tensor


class Linear(Module):
    """y = x @ weight.T + bias, with weight (out_features, in_features) as in PyTorch."""

    def __init__(self, in_features: int, out_features: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(np.zeros((out_features, in_features)), dtype=dtype, device=device)
        self.bias = Parameter(np.zeros(out_features), dtype=dtype, device=device) if bias else None
        init.linear_default_(self.weight, self.bias)

    def forward(self, x: Tensor) -> Tensor:
        return F.linear(x, self.weight, self.bias)  # x @ weight.T + bias, as one op

    def extra_repr(self) -> str:
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Embedding(Module):
    """A lookup table: row i of `weight` (num_embeddings, embedding_dim) is the vector of id i."""

    def __init__(self, num_embeddings: int, embedding_dim: int, padding_idx: int | None = None, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.weight = Parameter(np.zeros((num_embeddings, embedding_dim)), dtype=dtype, device=device)
        init.normal_(self.weight)
        if padding_idx is not None:  # PyTorch starts the padding row at zero (and never updates it)
            self.weight.array[padding_idx] = 0

    def forward(self, ids: Any) -> Tensor:
        return F.embedding(ids, self.weight, self.padding_idx)

    def extra_repr(self) -> str:
        padding = "" if self.padding_idx is None else f", padding_idx={self.padding_idx}"
        return f"{self.num_embeddings}, {self.embedding_dim}{padding}"


class LayerNorm(Module):
    """Normalise the last axis to mean 0, variance 1 (the biased variance, as PyTorch), then scale (weight) and
    shift (bias)."""

    def __init__(self, normalized_shape: int, eps: float = 1e-5, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.normalized_shape, self.eps = normalized_shape, eps
        self.weight = Parameter(np.ones(normalized_shape), dtype=dtype, device=device)
        self.bias = Parameter(np.zeros(normalized_shape), dtype=dtype, device=device) if bias else None

    def forward(self, x: Tensor) -> Tensor:
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return f"{self.normalized_shape}, eps={self.eps}"


class Dropout(Module):
    """Zero elements with probability p in training mode; the identity in eval mode."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if not 0 <= p < 1:
            raise ValueError(f"Dropout: p must be in [0, 1), got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, x: Tensor) -> Tensor:
        if self.inplace:  # PyTorch's setting: the result written into x itself, as any in-place op
            return x._in_place("dropout_", lambda t: F.dropout(t, self.p, self.training))
        return F.dropout(x, self.p, self.training)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Sequential(Module):
    """Modules applied one after another; indexable (`seq[0]`) like a list."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for i, module in enumerate(modules):
            setattr(self, str(i), module)

    def forward(self, x: Any) -> Any:
        for module in self._modules.values():
            x = module(x)
        return x

    def __getitem__(self, index: int | slice) -> Module:
        modules = list(self._modules.values())
        return Sequential(*modules[index]) if isinstance(index, slice) else modules[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())


class ModuleList(Module):
    """A list of modules whose parameters are registered (named '0', '1', ...)."""

    def __init__(self, modules: Iterable[Module] = ()) -> None:
        super().__init__()
        for module in modules:
            self.append(module)

    def append(self, module: Module) -> ModuleList:
        setattr(self, str(len(self._modules)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        for module in modules:
            self.append(module)
        return self

    def __getitem__(self, index: int | slice) -> Module:
        modules = list(self._modules.values())
        return ModuleList(modules[index]) if isinstance(index, slice) else modules[index]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())
