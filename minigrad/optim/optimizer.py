"""`Optimizer`: the bookkeeping every optimizer shares (parameter groups, state, state_dict), as in PyTorch.

An optimizer holds `param_groups`, a list of dicts: each has its "params" and its own hyperparameters
("lr", "weight_decay", ...), so that e.g. biases and LayerNorm weights can go without weight decay:

    optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}], lr=3e-4)

A learning-rate schedule sets `group["lr"]` before each `step()`. Per-parameter state (Adam's moments,
SGD's momentum buffer) lives in `self.state[param]` as backend arrays, updated in place on the device.
Read next: sgd.py, then adam.py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np

from minigrad.core import backend
from minigrad.tensor import Tensor


class Optimizer:
    """Base class: subclasses pass their default hyperparameters and define `step()`."""

    def __init__(self, params: Iterable[Tensor] | Iterable[dict[str, Any]], defaults: dict[str, Any]) -> None:
        self.defaults = dict(defaults)
        self.param_groups: list[dict[str, Any]] = []
        # Keyed by the parameter itself. Tensors hash by identity, and two live objects never share a
        # hash, so the dict never calls Tensor.__eq__ (which compares elementwise).
        self.state: dict[Tensor, dict[str, Any]] = {}
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for group in groups:
            self.add_param_group(group)

    def add_param_group(self, group: dict[str, Any]) -> None:
        """Add a group of parameters; hyperparameters it does not set take the optimizer's defaults."""
        group = dict(group)
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__} can only optimize Tensors, got {type(p).__name__}")
            if not p.requires_grad:
                raise ValueError(f"{type(self).__name__}: a parameter {p.shape} does not require grad")
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if len({id(p) for p in params}) != len(params) or any(id(p) in seen for p in params):
            raise ValueError(f"{type(self).__name__}: a parameter appears twice (in one group or in two groups)")
        for key, value in self.defaults.items():
            group.setdefault(key, value)
        group["params"] = params
        self.param_groups.append(group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Forget the gradients (as PyTorch: set them to None, or fill them with zeros in place)."""
        for group in self.param_groups:
            for p in group["params"]:
                if set_to_none or p.grad is None:
                    p.grad = None
                else:
                    p.grad.array[...] = 0

    def step(self) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define step()")

    # ----------------------------------------------------------------------------------------------
    # Saving and restoring: parameters are named by their index across all groups, in order.
    def _params(self) -> list[Tensor]:
        return [p for group in self.param_groups for p in group["params"]]

    def state_dict(self) -> dict[str, Any]:
        """{"state": {index: {name: Tensor or number}}, "param_groups": [{hyperparameters, "params": [index]}]}.

        The tensors share memory with the optimizer (as in PyTorch): save them before the next step.
        Everything else is plain numbers, lists and strings, so the whole can be written as
        safetensors + JSON (see checkpoint.py).
        """
        index = {id(p): i for i, p in enumerate(self._params())}
        state = {
            index[id(p)]: {
                name: Tensor._make(value, False) if _is_array(value) else value for name, value in s.items()
            }
            for p, s in self.state.items()
        }
        groups = [
            {**{k: v for k, v in g.items() if k != "params"}, "params": [index[id(p)] for p in g["params"]]}
            for g in self.param_groups
        ]
        return {"state": dict(sorted(state.items())), "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Restore hyperparameters and state saved by `state_dict()` (keys may be ints or, from JSON, strings).

        State arrays are copied onto each parameter's device and float dtype, so the loaded dict is
        never aliased by later in-place updates.
        """
        saved_groups = state_dict["param_groups"]
        if len(saved_groups) != len(self.param_groups):
            raise ValueError(
                f"load_state_dict: the checkpoint has {len(saved_groups)} parameter groups, "
                f"this optimizer {len(self.param_groups)}"
            )
        for i, (saved, group) in enumerate(zip(saved_groups, self.param_groups)):
            if len(saved["params"]) != len(group["params"]):
                raise ValueError(
                    f"load_state_dict: parameter group {i} has {len(saved['params'])} parameters in the "
                    f"checkpoint, {len(group['params'])} here"
                )
        params = self._params()
        self.state = {}
        for index, saved_state in state_dict["state"].items():
            if not 0 <= int(index) < len(params):
                raise ValueError(f"load_state_dict: state for parameter {index}, but there are {len(params)}")
            p = params[int(index)]
            self.state[p] = {name: _restore(value, p) for name, value in saved_state.items()}
        for saved, group in zip(saved_groups, self.param_groups):
            for key, value in saved.items():
                if key == "params":
                    continue
                if isinstance(value, list) and isinstance(group.get(key), tuple):
                    value = tuple(value)  # JSON turned the tuple (betas) into a list
                group[key] = value

    def __repr__(self) -> str:
        lines = [f"{type(self).__name__} ("]
        for i, group in enumerate(self.param_groups):
            settings = ", ".join(f"{k}={v}" for k, v in group.items() if k != "params")
            lines.append(f"  group {i}: {len(group['params'])} parameters, {settings}")
        return "\n".join(lines) + "\n)"


def _is_array(value: Any) -> bool:
    return not isinstance(value, (int, float, bool, str, np.generic)) and hasattr(value, "shape")


def _restore(value: Any, p: Tensor) -> Any:
    """A saved state value as this optimizer's own: arrays copied to p's device and float dtype."""
    if isinstance(value, Tensor):
        value = value.array
    if not _is_array(value):
        return value
    array = backend.to_device(value, p.device)
    dtype = p.dtype if array.dtype.kind == "f" else array.dtype
    return array.astype(dtype, copy=True)  # a copy even when nothing changes: no aliasing
