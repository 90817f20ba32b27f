"""What each file of a checkpoint must hold, checked field by field before anything is built from it.

A checkpoint may be damaged (a disk error, a half-copied folder) or hostile (a file from a stranger). Either
way, loading it must end in one line that names the file and the field at fault, in a moment: never a
traceback, a loop that never ends, or an allocation of terabytes. So every value read from a checkpoint
passes through here: its type, its range, and its agreement with the others (the tokenizer's size is the
model's vocab_size, the state's iteration is the manifest's, each optimizer moment has its parameter's shape).
The same type rules check the settings of TrainConfig and GPTConfig (`type_problem`), wherever they come from.
Read next: sizing.py.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import fields
from typing import Any

import numpy as np

import minigrad as mg

# What a field may hold: a test, and the words for it in an error message.
KINDS = {
    "object": (lambda v: isinstance(v, dict), "a JSON object"),
    "list": (lambda v: isinstance(v, list), "a list"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "count": (lambda v: type(v) is int and v >= 0, "an integer >= 0"),
    "number": (lambda v: type(v) in (int, float) and math.isfinite(v), "a finite number"),
    "sha256": (lambda v: isinstance(v, str) and re.fullmatch("[0-9a-f]{64}", v) is not None, "a hex SHA-256"),
}
# The annotations of TrainConfig and GPTConfig fields, as the same tests.
ANNOTATIONS = {
    "int": (lambda v: type(v) is int, "an integer"),
    "int | None": (lambda v: v is None or type(v) is int, "an integer or null"),
    "float": (lambda v: type(v) in (int, float) and math.isfinite(v), "a finite number"),
    "str": (lambda v: isinstance(v, str), "a string"),
    "str | None": (lambda v: v is None or isinstance(v, str), "a string or null"),
    "bool": (lambda v: isinstance(v, bool), "true or false"),
}
ADAMW_STATE = {"step": "count", "exp_avg": "array", "exp_avg_sq": "array"}  # per parameter


class CheckpointError(mg.CheckpointError):
    """A checkpoint folder that is missing, incomplete, damaged, or from another configuration."""


def show(value: Any) -> str:
    """A value as an error message quotes it: its repr, cut short."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def get(record: Any, key: str, kind: str, where: str) -> Any:
    """record[key] when it is of `kind` (see KINDS); otherwise a CheckpointError naming `where` and the key.

    `where` reads "FILE: " or "FILE: section." so that messages come out as "out/state.json: iter_num must be...".
    """
    if not isinstance(record, dict):
        raise CheckpointError(_not_an_object(record, where))
    if key not in record:
        raise CheckpointError(f"{where}{key} is missing")
    test, words = KINDS[kind]
    if not test(record[key]):
        raise CheckpointError(f"{where}{key} must be {words}, got {show(record[key])}")
    return record[key]


def _not_an_object(value: Any, where: str) -> str:
    """'FILE: expected a JSON object, got [1]' or 'FILE: model must be a JSON object, got [1]'."""
    if where.endswith(": "):
        return f"{where}expected a JSON object, got {show(value)}"
    return f"{where.rstrip('.')} must be a JSON object, got {show(value)}"


def type_problem(annotation: str, value: Any) -> str | None:
    """What is wrong with `value` for a dataclass field annotated `annotation` (None: nothing)."""
    test, words = ANNOTATIONS.get(annotation, (lambda v: True, ""))
    return None if test(value) else f"must be {words}, got {show(value)}"


def check_fields(values: Any, cls: type, where: str) -> dict[str, Any]:
    """`values` (a dict from JSON) as the fields of dataclass `cls`: each present, known, and of its type."""
    if not isinstance(values, dict):
        raise CheckpointError(_not_an_object(values, where))
    known = {field.name: field.type for field in fields(cls)}
    for name in values:
        if name not in known:
            raise CheckpointError(f"{where}{name} is not a setting of {cls.__name__}")
    for name, annotation in known.items():
        if name not in values:
            raise CheckpointError(f"{where}{name} is missing")
        problem = type_problem(str(annotation), values[name])
        if problem:
            raise CheckpointError(f"{where}{name} {problem}")
    return values


# ------------------------------------------------------------------------------------------------------
# The files, one function each
def parse_json(data: bytes, path: Any) -> Any:
    """The JSON document in `data`, or one line naming the file. Infinity and NaN are not JSON, and refused."""
    try:
        return json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError as error:
        raise CheckpointError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except ValueError as error:
        raise CheckpointError(f"{path}: not valid JSON ({error})") from None
    except RecursionError:  # [[[[...: Python's parser gives up past its recursion limit
        raise CheckpointError(f"{path}: not valid JSON (nested too deeply)") from None


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def manifest(record: Any, path: Any, fmt: int, names: tuple[str, ...]) -> dict[str, Any]:
    """manifest.json: {"format", "iter_num", "files": {name: {"bytes", "sha256"}}} for each of `names`."""
    found = get(record, "format", "count", f"{path}: ")
    if found != fmt:
        raise CheckpointError(f"{path}: checkpoint format {found}, this minigpt reads format {fmt} (train it again)")
    get(record, "iter_num", "count", f"{path}: ")
    files = get(record, "files", "object", f"{path}: ")
    for name in files:
        if name not in names:
            raise CheckpointError(f"{path}: files.{name} is not a file of a checkpoint")
    for name in names:
        entry = get(files, name, "object", f"{path}: files.")
        get(entry, "bytes", "count", f"{path}: files.{name}.")
        get(entry, "sha256", "sha256", f"{path}: files.{name}.")
    return record


def run_config(record: Any, path: Any, fmt: int, gpt_config: type) -> Any:
    """config.json: {"format", "model": GPTConfig fields, "train": {...}, "schedule": {...}, "data": {"name",
    "sha256"}}; returns the GPTConfig. ("train" is checked where it is used: train.config_for_resume.)"""
    if get(record, "format", "count", f"{path}: ") != fmt:
        raise CheckpointError(f"{path}: format {record['format']}, this minigpt reads format {fmt}")
    get(record, "train", "object", f"{path}: ")
    schedule = get(record, "schedule", "object", f"{path}: ")
    for key in ("lr", "min_lr"):
        get(schedule, key, "number", f"{path}: schedule.")
    for key in ("warmup_iters", "lr_decay_iters"):
        get(schedule, key, "count", f"{path}: schedule.")
    if get(schedule, "lr_decay_iters_from", "str", f"{path}: schedule.") not in ("--max-iters", "--lr-decay-iters"):
        raise CheckpointError(f"{path}: schedule.lr_decay_iters_from must be --max-iters or --lr-decay-iters")
    data = get(record, "data", "object", f"{path}: ")
    get(data, "name", "str", f"{path}: data.")
    get(data, "sha256", "sha256", f"{path}: data.")
    model = check_fields(get(record, "model", "object", f"{path}: "), gpt_config, f"{path}: model.")
    try:
        return gpt_config(**model)
    except ValueError as error:  # a value out of range: GPTConfig's message names it
        raise CheckpointError(f"{path}: model: {error}") from None


def state(record: Any, path: Any, iter_num: int) -> dict[str, Any]:
    """state.json: the iteration (the manifest's), the best val loss, and the two generators' states."""
    found = get(record, "iter_num", "count", f"{path}: ")
    if found != iter_num:
        raise CheckpointError(f"{path}: iter_num is {found}, the manifest's is {iter_num}")
    get(record, "best_val_loss", "number", f"{path}: ")
    rng_state(get(record, "batch_rng", "object", f"{path}: "), f"{path}: batch_rng")
    minigrad_rng = get(record, "minigrad_rng", "object", f"{path}: ")
    if "seed" not in minigrad_rng or not (minigrad_rng["seed"] is None or type(minigrad_rng["seed"]) is int):
        raise CheckpointError(f"{path}: minigrad_rng.seed must be an integer or null")
    rng_state(get(minigrad_rng, "host", "object", f"{path}: minigrad_rng."), f"{path}: minigrad_rng.host")
    return record


def rng_state(value: dict[str, Any], where: str) -> None:
    """A NumPy PCG64 generator state: tried on a generator of our own, which says if anything is wrong."""
    try:
        np.random.PCG64().state = value
    except (TypeError, ValueError, KeyError, OverflowError) as error:
        raise CheckpointError(f"{where} is not a PCG64 generator state ({error})") from None


def metrics(data: bytes, path: Any) -> list[dict[str, Any]]:
    """metrics.jsonl: one JSON object a line, each with an "iter", and numbers as its values."""
    records = []
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        record = parse_json(line, where)
        get(record, "iter", "count", f"{where}: ")
        for key in record:
            get(record, key, "number", f"{where}: ")
        records.append(record)
    return records


def finite(tensors: dict[str, mg.Tensor], path: Any) -> None:
    """Every float tensor holds finite numbers only: a NaN weight would sample newlines, and train on NaN."""
    for name, tensor in tensors.items():
        data = tensor.numpy()
        if data.dtype.kind == "f" and not np.isfinite(data).all():
            raise CheckpointError(f"{path}: {name} holds non-finite values (NaN or infinity)")


def weights(tensors: dict[str, mg.Tensor], model: Any, path: Any) -> None:
    """The saved tensors are exactly the model's: the same names, shapes and float32."""
    own = model.state_dict()
    missing = [name for name in own if name not in tensors]
    unexpected = [name for name in tensors if name not in own]
    if missing or unexpected:
        words = ([f"missing {', '.join(missing[:3])}"] if missing else []) + (
            [f"unexpected {', '.join(unexpected[:3])}"] if unexpected else [])
        raise CheckpointError(f"{path}: the tensors do not match the model of config.json: {'; '.join(words)}")
    for name, tensor in tensors.items():
        if tensor.shape != own[name].shape or tensor.dtype != own[name].dtype:
            raise CheckpointError(f"{path}: {name} is {tensor.dtype} {tensor.shape}, the model's is "
                                  f"{own[name].dtype} {own[name].shape}")


def adamw_state(saved: dict[str, Any], optimizer: Any, path: Any) -> None:
    """An AdamW state_dict as read back: groups and hyperparameters as this optimizer's, each parameter's
    step a count and its two moments of the parameter's shape, finite (and the second one >= 0)."""
    ours = optimizer.state_dict()["param_groups"]
    groups = saved["param_groups"]
    if len(groups) != len(ours):
        raise CheckpointError(f"{path}: {len(groups)} parameter groups, the model needs {len(ours)}")
    for i, (group, own) in enumerate(zip(groups, ours)):
        where = f"{path}: param_groups.{i}."
        for key, value in own.items():
            found = group.get(key) if isinstance(group, dict) else None
            if key == "params" and found != value:
                raise CheckpointError(f"{where}params must be {show(value)}, got {show(found)}")
            if key == "betas" and not (isinstance(found, list) and len(found) == 2
                                       and all(KINDS["number"][0](b) and 0 <= b < 1 for b in found)):
                raise CheckpointError(f"{where}betas must be two numbers in [0, 1), got {show(found)}")
            if key not in ("params", "betas") and get(group, key, "number", where) < 0:
                raise CheckpointError(f"{where}{key} must be >= 0, got {show(group[key])}")
    params = [p for group in optimizer.param_groups for p in group["params"]]
    for index, values in saved["state"].items():
        where = f"{path}: state.{index}."
        if index >= len(params):
            raise CheckpointError(f"{where[:-1]}: there are only {len(params)} parameters")
        for name, kind in ADAMW_STATE.items():
            if kind == "count":
                get(values, name, "count", where)
                continue
            moment = values.get(name)
            if not isinstance(moment, mg.Tensor) or moment.shape != params[index].shape:
                shape = moment.shape if isinstance(moment, mg.Tensor) else "missing"
                raise CheckpointError(f"{where}{name} is {shape}, its parameter is {params[index].shape}")
            data = moment.numpy()
            if data.dtype.kind != "f" or not np.isfinite(data).all() or (name == "exp_avg_sq" and data.min() < 0):
                raise CheckpointError(f"{where}{name} holds values an AdamW moment cannot have (non-finite, or "
                                      "a negative second moment)")
