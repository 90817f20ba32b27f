"""`Module` and `Parameter`: the bookkeeping behind every layer, as in `torch.nn.Module`.

Assigning a Parameter or a Module to an attribute registers it, in definition order, so that
`named_parameters()` yields dotted names (`transformer.h.0.attn.c_attn.weight`) in a stable order and
`state_dict()` / `load_state_dict()` can save and restore a model by those names.
Read next: layers.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np

from minigrad.core import backend, observers
from minigrad.tensor import Tensor, _is_backend_array


class IncompatibleKeys(NamedTuple):
    """What `load_state_dict` returns, as PyTorch's: the model's keys the dict lacked, and the dict's extra keys."""

    missing_keys: list[str]
    unexpected_keys: list[str]


class Parameter(Tensor):
    """A tensor that is a trainable weight of a module (requires grad unless told otherwise)."""

    __slots__ = ()

    def __init__(self, data: Any, requires_grad: bool = True, dtype: Any = None, device: Any = None) -> None:
        super().__init__(data, requires_grad=requires_grad, dtype=dtype, device=device)

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()  # as PyTorch prints a parameter


class Module:
    """Base class of every layer and model: subclasses set attributes in `__init__` and define `forward`."""

    def __init__(self) -> None:
        # object.__setattr__: these three must exist before __setattr__ can register anything.
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_buffers", {})
        object.__setattr__(self, "_modules", {})
        object.__setattr__(self, "training", True)

    def __getattr__(self, name: str) -> Any:
        """A torch.nn.Module name minigrad does not have: one line saying so (found attributes never come here)."""
        from minigrad.compat.missing import refuse

        raise refuse("minigrad.nn.Module", name)

    def __setattr__(self, name: str, value: Any) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError(f"{type(self).__name__}: call super().__init__() before assigning {name}")
        if name in self._buffers and (value is None or isinstance(value, Tensor)) and not isinstance(value, Parameter):
            # Assigning to a buffer replaces its tensor and keeps it a buffer (e.g. a recomputed table).
            self._buffers[name] = (value, self._buffers[name][1])
            object.__setattr__(self, name, value)
            return
        # As PyTorch: a parameter or submodule assigned again keeps its place in the order (parameters(),
        # state_dict(), and so clip_grad_norm_'s sum); it leaves the other registries.
        keep = (self._parameters if isinstance(value, Parameter)
                else self._modules if isinstance(value, Module) else None)
        for registry in (self._parameters, self._buffers, self._modules):
            if registry is not keep:
                registry.pop(name, None)
        if keep is not None:
            keep[name] = value
        object.__setattr__(self, name, value)

    def __delattr__(self, name: str) -> None:
        for registry in (self._parameters, self._buffers, self._modules):
            registry.pop(name, None)
        object.__delattr__(self, name)

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """A tensor that belongs to the module but is not trained (e.g. a fixed table or a causal mask).

        It moves with `to(device)`; it is saved in `state_dict()` only when `persistent`.
        """
        if name in self._parameters or name in self._modules:
            raise KeyError(f"register_buffer: {name!r} is already a parameter or a submodule")
        self._buffers[name] = (tensor, persistent)
        object.__setattr__(self, name, tensor)

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not observers.active:
            return self.forward(*args, **kwargs)
        with observers.module_scope(self):  # mg.viz.record_modules names the ops this module makes
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

    def get_submodule(self, target: str) -> Module:
        """The submodule at dotted path `target` ('' is this module), as PyTorch's `get_submodule`."""
        module = self
        for i, name in enumerate(target.split(".") if target else []):
            if name not in module._modules:
                where = ".".join(target.split(".")[:i]) or type(module).__name__
                raise AttributeError(f"{where} has no attribute `{name}`")
            module = module._modules[name]
        return module

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call `fn` on every submodule, children first, then on this module; returns self (as PyTorch).

            model.apply(init_weights)   # e.g. normal_ on every Linear's weight
        """
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    def named_parameters(self, prefix: str = "", recurse: bool = True) -> Iterator[tuple[str, Parameter]]:
        """Every parameter once (a tied weight under its first name), in definition order (with `recurse=False`,
        only this module's own)."""
        seen: set[int] = set()
        for module_name, module in (self.named_modules(prefix) if recurse else [(prefix, self)]):
            for name, param in module._parameters.items():
                if id(param) not in seen:
                    seen.add(id(param))
                    yield (f"{module_name}.{name}" if module_name else name), param

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def buffers(self) -> Iterator[Tensor]:
        """Every buffer (persistent or not), as `named_buffers` without the names."""
        for _, buffer in self.named_buffers():
            yield buffer

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target` ('h.0.attn.c_attn.weight')."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if name not in module._parameters:
            raise AttributeError(f"{type(module).__name__} has no parameter `{name}`")
        return module._parameters[name]

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter under `name`, as assigning it does (None: the attribute exists, holding no parameter)."""
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        setattr(self, name, param)

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a submodule under `name`, as assigning it does (for names made in a loop)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        if "." in name or not name:
            raise KeyError(f'module name can\'t contain ".", got: {name}' if name else "module name can't be empty")
        setattr(self, name, module)

    register_module = add_module

    def named_buffers(self, persistent_only: bool = False) -> Iterator[tuple[str, Tensor]]:
        """Every buffer by its dotted name (None placeholders skipped)."""
        for module_name, module in self.named_modules():
            dot = f"{module_name}." if module_name else ""
            for name, (buffer, persistent) in module._buffers.items():
                if buffer is not None and (persistent or not persistent_only):
                    yield dot + name, buffer

    def _state_items(self) -> Iterator[tuple[str, Tensor]]:
        """Every saved tensor by its full name, module by module (its parameters, then its persistent
        buffers), as PyTorch orders them; a tied weight appears under each of its names."""
        for module_name, module in self.named_modules():
            dot = f"{module_name}." if module_name else ""
            for name, param in module._parameters.items():
                yield dot + name, param
            for name, (buffer, persistent) in module._buffers.items():
                if buffer is not None and persistent:
                    yield dot + name, buffer

    # ----------------------------------------------------------------------------------------------
    # Saving and loading
    def state_dict(self) -> dict[str, Tensor]:
        """Name -> tensor (sharing the module's data; detached from any graph)."""
        return {name: tensor.detach() for name, tensor in self._state_items()}

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> IncompatibleKeys:
        """Copy values (Tensors or arrays, from any device) into this module's tensors, in place.

        Each tensor keeps its device and dtype. A shape mismatch always raises; with `strict` (the
        default) so does any missing or unexpected key. The one RuntimeError lists every problem at once, in
        PyTorch's words, and nothing is copied unless all is well. Returns (missing_keys, unexpected_keys).
        """
        own = dict(self._state_items())
        missing = [name for name in own if name not in state_dict]
        unexpected = [name for name in state_dict if name not in own]
        problems = [
            f"size mismatch for {name}: copying a param with shape {tuple(value.shape)} from checkpoint, "
            f"the shape in current model is {tuple(own[name].shape)}."
            for name, value in state_dict.items()
            if name in own and tuple(value.shape) != own[name].shape
        ]
        if strict and unexpected:
            problems.insert(0, "Unexpected key(s) in state_dict: " + ", ".join(f'"{k}"' for k in unexpected) + ". ")
        if strict and missing:
            problems.insert(0, "Missing key(s) in state_dict: " + ", ".join(f'"{k}"' for k in missing) + ". ")
        if problems:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t" + "\n\t".join(problems))
        for name, value in state_dict.items():
            if name in own:
                target = own[name]
                data = value.array if isinstance(value, Tensor) else value
                if not _is_backend_array(data):
                    data = np.asarray(data)
                # In place: anything sharing the tensor's array (an earlier state_dict) sees the new values.
                target.array[...] = backend.to_device(data, target.device).astype(target.dtype, copy=False)
        return IncompatibleKeys(missing, unexpected)

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
        """Move every parameter and buffer to `device` and/or convert floats to `dtype`, in place.

        The tensors stay the same objects (only their `.array` changes), so references to them stay
        valid; gradients move with them. Create the optimizer after moving the model. As in PyTorch, a dtype
        may come first: `model.to(mg.float64)`.
        """
        if device is not None and _is_dtype(device):  # a dtype in the device's place
            device, dtype = None, device
        device = None if device is None else backend.canonical_device(device)

        def convert(data: Any) -> Any:
            if dtype is not None and data.dtype.kind == "f":
                data = data.astype(dtype)
            return data if device is None else backend.to_device(data, device)

        seen: set[int] = set()  # a tied weight is converted once
        params = (p for _, p in self.named_parameters())
        for tensor in [*params, *(b for _, b in self.named_buffers())]:
            if id(tensor) not in seen:
                seen.add(id(tensor))
                tensor.array = convert(tensor.array)
                if tensor.grad is not None:
                    tensor.grad.array = convert(tensor.grad.array)
        return self

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Switch gradient tracking of every parameter on or off (freezing a part of a model); returns self."""
        for param in self.parameters():
            param.requires_grad = requires_grad
        return self

    def cpu(self) -> Module:
        return self.to("cpu")

    def cuda(self, device: int | None = None) -> Module:
        return self.to("cuda" if device is None else f"cuda:{device}")

    def float(self) -> Module:
        """Float parameters and buffers to float32 (integer ones stay)."""
        return self.to(dtype=np.float32)

    def double(self) -> Module:
        return self.to(dtype=np.float64)

    def half(self) -> Module:
        return self.to(dtype=np.float16)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget every parameter's gradient (None, or zeros in place)."""
        for param in self.parameters():
            if set_to_none or param.grad is None:
                param.grad = None
            else:
                param.grad.array[...] = 0

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


def _is_dtype(arg: Any) -> bool:
    """Whether an argument of `to` names a dtype (np.float64, "float64") rather than a device ("cuda:1")."""
    try:
        np.dtype(arg)
    except TypeError:
        return False
    return True
