"""Modules that arrange others or reshape: `ModuleDict`, `Identity`, `Flatten`, `Unflatten`, and the softmax
modules `Softmax` and `LogSoftmax`, as in `torch.nn`.

    self.transformer = nn.ModuleDict(dict(wte=nn.Embedding(V, C), h=nn.ModuleList([Block() for _ in range(L)])))

Read next: activations.py, the activation modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import minigrad.functional as F
from minigrad.nn.module import Module
from minigrad.tensor import Tensor


class ModuleDict(Module):
    """A dict of modules whose parameters are registered under their keys, in insertion order."""

    def __init__(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def update(self, modules: Mapping[str, Module] | Iterable[tuple[str, Module]]) -> None:
        """Add or replace modules, from a mapping or from (key, module) pairs."""
        for key, module in (modules.items() if isinstance(modules, Mapping) else modules):
            self[key] = module

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]

    def __setitem__(self, key: str, module: Module) -> None:
        if not isinstance(module, Module):
            raise TypeError(f"ModuleDict: {key!r} is a {type(module).__name__}, not a Module")
        setattr(self, key, module)

    def __delitem__(self, key: str) -> None:
        delattr(self, key)

    def __contains__(self, key: str) -> bool:
        return key in self._modules

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def values(self) -> Iterable[Module]:
        return self._modules.values()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()

    def pop(self, key: str) -> Module:
        module = self._modules[key]
        del self[key]
        return module

    def clear(self) -> None:
        for key in list(self._modules):
            del self[key]

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("ModuleDict has no forward: call the modules it holds")


class Identity(Module):
    """Returns its input unchanged (a placeholder, e.g. where a layer is switched off); ignores any arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:
        return input


class Flatten(Module):
    """Merge dims start_dim..end_dim into one (by default all but the batch dim): (N, C, H) -> (N, C*H)."""

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input: Tensor) -> Tensor:
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Split dim `dim` into `unflattened_size`: Unflatten(1, (2, 3)) maps (N, 6) -> (N, 2, 3)."""

    def __init__(self, dim: int, unflattened_size: tuple[int, ...]) -> None:
        super().__init__()
        self.dim, self.unflattened_size = dim, tuple(unflattened_size)

    def forward(self, input: Tensor) -> Tensor:
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Softmax(Module):
    """exp(x_i) / sum_j exp(x_j) along `dim`."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.softmax(input, _dim(self))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """x_i - log sum_j exp(x_j) along `dim`."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:
        return F.log_softmax(input, _dim(self))

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


def _dim(module: Softmax | LogSoftmax) -> int:
    """PyTorch guesses a dim when none was given (with a deprecation warning); minigrad asks for it."""
    if module.dim is None:
        raise TypeError(f"{type(module).__name__}: pass dim= (PyTorch's implicit dim choice is deprecated)")
    return module.dim
