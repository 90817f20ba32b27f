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

Read next: ../tools/serialization.py (`mg.save` / `mg.load`), which writes the file.
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
    """The inverse of `flatten_state_dict`; keys of `tensors` not starting with 'state.' are ignored.

    Metadata that is not what `flatten_state_dict` writes raises a ValueError naming the key at fault.
    """
    numbers = _json_field(metadata, "optimizer.state", dict)
    groups = _json_field(metadata, "optimizer.param_groups", list)
    state: dict[int, dict[str, Any]] = {}
    for index, values in numbers.items():
        if not isinstance(values, dict):
            raise ValueError(f"optimizer.state: the entry of parameter {index} is not a JSON object")
        state[_index(index, "optimizer.state")] = dict(values)
    for key, value in tensors.items():
        if key.startswith(PREFIX):
            index, _, name = key[len(PREFIX):].partition(".")
            state.setdefault(_index(index, key), {})[name] = value
    return {"state": dict(sorted(state.items())), "param_groups": groups}


def _json_field(metadata: dict[str, str], key: str, kind: type) -> Any:
    if key not in metadata:
        raise ValueError(f"the metadata has no {key!r}")
    try:
        value = json.loads(metadata[key])
    except json.JSONDecodeError as error:
        raise ValueError(f"metadata {key!r} is not JSON ({error})") from None
    if not isinstance(value, kind):
        raise ValueError(f"metadata {key!r} must be a JSON {'object' if kind is dict else 'list'}")
    return value


def _index(text: str, where: str) -> int:
    """A parameter index as written in a name ('3' of 'state.3.exp_avg')."""
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"{where}: {text!r} is not a parameter index")
    return int(text)
