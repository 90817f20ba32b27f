"""Writing an optimizer's state to a safetensors file: arrays as tensors, everything else as JSON metadata.

safetensors stores a flat dict of named arrays plus string metadata, and nothing else (no pickle).
An optimizer's `state_dict()` is nested, so we flatten it: the arrays become tensors named
`state.{param_index}.{name}` (e.g. `state.3.exp_avg`), and the numbers ("step") and the parameter
groups' hyperparameters go into the metadata as JSON.

    tensors, metadata = optim.flatten_state_dict(optimizer.state_dict())
    mg.save(tensors, "out/optimizer.safetensors", metadata=metadata)
    ...
    tensors = mg.load("out/optimizer.safetensors")
    metadata = mg.load_metadata("out/optimizer.safetensors")
    optimizer.load_state_dict(optim.unflatten_state_dict(tensors, metadata))

Read next: ../serialization.py (`mg.save` / `mg.load`), which writes the file.
"""

from __future__ import annotations

import json
from typing import Any

from minigrad.optim.optimizer import _is_array
from minigrad.tensor import Tensor

PREFIX = "state."


def flatten_state_dict(state_dict: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """(tensors named 'state.{index}.{name}', string metadata) from an optimizer's state_dict."""
    tensors: dict[str, Any] = {}
    numbers: dict[str, dict[str, Any]] = {}
    for index, param_state in state_dict["state"].items():
        for name, value in param_state.items():
            if isinstance(value, Tensor) or _is_array(value):
                tensors[f"{PREFIX}{index}.{name}"] = value
            else:
                numbers.setdefault(str(index), {})[name] = value
    metadata = {
        "optimizer.param_groups": json.dumps(state_dict["param_groups"]),
        "optimizer.state": json.dumps(numbers),
    }
    return tensors, metadata


def unflatten_state_dict(tensors: dict[str, Any], metadata: dict[str, str]) -> dict[str, Any]:
    """The inverse of `flatten_state_dict`; keys of `tensors` not starting with 'state.' are ignored."""
    state: dict[int, dict[str, Any]] = {
        int(index): dict(numbers) for index, numbers in json.loads(metadata["optimizer.state"]).items()
    }
    for key, value in tensors.items():
        if key.startswith(PREFIX):
            index, name = key[len(PREFIX):].split(".", 1)
            state.setdefault(int(index), {})[name] = value
    return {"state": dict(sorted(state.items())), "param_groups": json.loads(metadata["optimizer.param_groups"])}
