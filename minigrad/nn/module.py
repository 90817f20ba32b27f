"""`Module` and `Parameter`: the bookkeeping behind every layer, as in `torch.nn.Module`.

Assigning a Parameter or a Module to an attribute registers it, in definition order, so that
`named_parameters()` yields dotted names (`transformer.h.0.attn.c_attn.weight`) in a stable order and
`state_dict()` / `load_state_dict()` can save and restore a model by those names.
Read next: layers.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from minigrad import backend
from minigrad.tensor import Tensor


class Parameter(Tensor):
    """A tensor that is a trainable weight of a module (requires grad unless told otherwise)."""

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True, dtype: Any = None, device: Any = None) -> None:
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, device=device)


class Module:
    """Base class of every layer and model: subclasses set attributes in `__init__` and define `forward`."""

    def __init__(self) -> None:
        # object.__setattr__: these three must exist before __setattr__ can register anything.
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}: call super().__init__() before assigning {name}")
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        object.__setattr__(self, name, value)

    def register_buffer(self, name: str, tensor: Tensor, persistent: bool = True) -> None:
        """A tensor that belongs to the module's state but is not trained (e.g. a fixed table)."""
        setattr(self, name, tensor)
        self._buffers[name] = (tensor, persistent)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # ----------------------------------------------------------------------------------------------
    # Walking the tree
    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """This module and every submodule, depth first, with dotted names ('' for this one)."""
        seen: set[int] = set()
        stack = [(prefix, self)]
        while stack:
            name, module = stack.pop()
            if id(module) in seen:
                continue
            seen.add(id(module))
            yield name, module
            children = [(f"{name}.{child}" if name else child, m) for child, m in module._modules.items()]
            stack.extend(reversed(children))

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def children(self) -> Iterator[Module]:
        yield from self._modules.values()

    def named_children(self) -> Iterator[tuple[str, Module]]:
        yield from self._modules.items()

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Parameter]]:
        """Every parameter once (a tied weight under its first name), in definition order."""
        seen: set[int] = set()
        for module_name, module in self.named_modules(prefix):
            for name, param in module._parameters.items():
                if id(param) not in seen:
                    seen.add(id(param))
                    yield (f"{module_name}.{name}" if module_name else name), param

    def parameters(self) -> Iterator[Parameter]:
        for _, param in self.named_parameters():
            yield param

    def _state_items(self) -> Iterator[tuple[str, Tensor]]:
        """Every saved tensor by its full name; a tied weight appears under each of its names."""
        for module_name, module in self.named_modules():
            dot = f"{module_name}." if module_name else ""
            for name, param in module._parameters.items():
                yield dot + name, param
            for name, (buffer, persistent) in module._buffers.items():
                if persistent:
                    yield dot + name, buffer

    # ----------------------------------------------------------------------------------------------
    # Saving and loading
    def state_dict(self) -> dict[str, Tensor]:
        """Name -> tensor (sharing the module's data; detached from any graph)."""
        return {name: tensor.detach() for name, tensor in self._state_items()}

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> tuple[list[str], list[str]]:
        """Copy values (Tensors or arrays) into this module's tensors, keeping their device and dtype.

        With `strict`, any missing or unexpected key, and any shape mismatch, raises one KeyError or
        ValueError listing all of them. Returns (missing_keys, unexpected_keys).
        """
        own = dict(self._state_items())
        missing = [name for name in own if name not in state_dict]
        unexpected = [name for name in state_dict if name not in own]
        mismatched = [
            f"{name}: checkpoint {tuple(value.shape)}, model {own[name].shape}"
            for name, value in state_dict.items()
            if name in own and tuple(value.shape) != own[name].shape
        ]
        if mismatched:
            raise ValueError("load_state_dict: shape mismatch for " + "; ".join(mismatched))
        if strict and (missing or unexpected):
            raise KeyError(
                f"load_state_dict: missing keys {missing or 'none'}; unexpected keys {unexpected or 'none'}"
            )
        for name, value in state_dict.items():
            if name in own:
                target = own[name]
                array = value.numpy() if isinstance(value, Tensor) else backend.as_numpy(value)
                target.data = backend.to_device(np.asarray(array, dtype=target.dtype).copy(), target.device)
        return missing, unexpected

    # ----------------------------------------------------------------------------------------------
    # Modes and devices
    def train(self, mode: bool = True) -> Module:
        """Training mode (dropout active) for this module and every submodule."""
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        """Evaluation mode: dropout off."""
        return self.train(False)

    def to(self, device: Any = None, dtype: Any = None) -> Module:
        """Move every parameter and buffer to `device` and/or convert floats to `dtype`, in place."""
        for _, tensor in self._state_items():
            data = tensor.data
            if dtype is not None and data.dtype.kind == "f":
                data = data.astype(dtype)
            if device is not None:
                data = backend.to_device(data, backend.canonical_device(device))
            tensor.data = data
            tensor.grad = None
        return self

    def zero_grad(self) -> None:
        for param in self.parameters():
            param.grad = None

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, child in self._modules.items():
            child_lines = repr(child).split("\n")
            lines.append(f"  ({name}): " + "\n  ".join(child_lines))
        return lines[0] + ")" if len(lines) == 1 else "\n".join(lines) + "\n)"
