"""Checkpoints: everything a training run needs to continue exactly where it stopped, in one folder.

    DIR/model.safetensors      the weights, named as model.state_dict()
    DIR/optimizer.safetensors  AdamW's moment arrays; its step counts and parameter groups as JSON metadata
    DIR/tokenizer.json         the character vocabulary
    DIR/config.json            {"model": GPTConfig fields, "train": training settings, "data": name and sha256}
    DIR/state.json             iteration, best val loss, and the two random generators' states
    DIR/metrics.jsonl          the metrics log up to this iteration (one JSON object a line)
    DIR/manifest.json          written last: each file above with its SHA-256

Nothing is pickled: arrays go to safetensors, everything else to JSON.

Why a manifest: a checkpoint is seven files, and no file system can replace seven files at once. So every
file is first written in full under a temporary name (and flushed to disk); only then is the old manifest
removed, the files renamed into place (fast: renames only) and the new manifest written. A folder without
a manifest, or whose files do not match their recorded hashes, is an interrupted or damaged checkpoint, and
`load_checkpoint` refuses it with a message that says so, instead of resuming from a mix of two iterations.
train.py calls `save_checkpoint` after each evaluation and on Ctrl-C.
Read next: cli.py, the command that trains and samples.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import minigrad as mg
from minigpt.config import GPTConfig
from minigpt.model import GPT
from minigpt.tokenizer import CharTokenizer
from minigrad import optim
from minigrad.serialization import CheckpointError as SafetensorsError
from minigrad.serialization import fsync_directory, load_metadata

MODEL, OPTIMIZER, TOKENIZER = "model.safetensors", "optimizer.safetensors", "tokenizer.json"
CONFIG, STATE, METRICS, MANIFEST = "config.json", "state.json", "metrics.jsonl", "manifest.json"
FILES = (MODEL, OPTIMIZER, TOKENIZER, CONFIG, STATE, METRICS)  # in the order they are written
FORMAT = 1  # bump when the layout changes, so an old checkpoint is refused with a clear message


class CheckpointError(ValueError):
    """A checkpoint folder that is missing, incomplete, damaged, or from another configuration."""


@dataclass
class Checkpoint:
    """A checkpoint read back from its folder (tensors on the host until the caller moves them)."""

    config: dict[str, Any]  # config.json: "model", "train", "data"
    state: dict[str, Any]  # state.json: "iter_num", "best_val_loss", "batch_rng", "minigrad_rng"
    tokenizer: CharTokenizer
    model_state: dict[str, mg.Tensor]
    optimizer_state: dict[str, Any] | None  # None for a sampling-only load
    metrics: list[dict[str, Any]]

    @property
    def model_config(self) -> GPTConfig:
        return GPTConfig.from_dict(self.config["model"])


def exists(out_dir: str | Path) -> bool:
    """True when `out_dir` holds a checkpoint, complete or not."""
    return any((Path(out_dir) / name).exists() for name in (*FILES, MANIFEST))


def save_checkpoint(out_dir: str | Path, model: GPT, optimizer: optim.Optimizer, tokenizer: CharTokenizer,
                    config: dict[str, Any], state: dict[str, Any], metrics: list[dict[str, Any]]) -> None:
    """Write a complete checkpoint to `out_dir`, replacing the one there only once the new one is on disk."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    # 1. Every file in full under a temporary name. A failure here leaves the old checkpoint untouched.
    temp = {name: out_dir / f".{name}.partial" for name in FILES}
    try:
        mg.save(model.state_dict(), temp[MODEL], metadata={"format": str(FORMAT)})
        tensors, metadata = optim.flatten_state_dict(optimizer.state_dict())
        mg.save(tensors, temp[OPTIMIZER], metadata=metadata)
        _write_text(temp[TOKENIZER], tokenizer.to_json())
        _write_text(temp[CONFIG], json.dumps({"format": FORMAT, **config}, indent=2))
        _write_text(temp[STATE], json.dumps(state, indent=2))
        _write_text(temp[METRICS], "".join(json.dumps(record) + "\n" for record in metrics))
        hashes = {name: _sha256(temp[name]) for name in FILES}
    except BaseException:  # also Ctrl-C: leave no temporary files behind
        for path in temp.values():
            path.unlink(missing_ok=True)
        raise
    # 2. The switch: renames only. Without its manifest the folder reads as incomplete until step 3.
    (out_dir / MANIFEST).unlink(missing_ok=True)
    for name in FILES:
        os.replace(temp[name], out_dir / name)
    # 3. The manifest, last: its presence says "complete".
    manifest = {"format": FORMAT, "iter_num": state["iter_num"], "files": hashes}
    partial = out_dir / f".{MANIFEST}.partial"
    _write_text(partial, json.dumps(manifest, indent=2))
    os.replace(partial, out_dir / MANIFEST)
    fsync_directory(out_dir)  # make the renames themselves durable


def load_checkpoint(out_dir: str | Path, with_optimizer: bool = True) -> Checkpoint:
    """Read and verify the checkpoint in `out_dir`; a CheckpointError names what is missing or damaged."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise CheckpointError(f"{out_dir}: no such folder, so no checkpoint to load")
    manifest_path = out_dir / MANIFEST
    if not manifest_path.exists():
        if exists(out_dir):
            raise CheckpointError(f"{out_dir}: incomplete checkpoint ({MANIFEST} is missing: was a save interrupted?)")
        raise CheckpointError(f"{out_dir}: no checkpoint here (no {MANIFEST}); train one with: minigpt train "
                              f"--out-dir {out_dir}")
    manifest = _read_json(manifest_path)
    if manifest.get("format") != FORMAT:
        raise CheckpointError(f"{out_dir}: checkpoint format {manifest.get('format')!r}, this minigpt reads {FORMAT}")
    for name in FILES:
        path = out_dir / name
        if not path.exists():
            raise CheckpointError(f"{out_dir}: damaged checkpoint: {name} is missing")
        if _sha256(path) != manifest["files"].get(name):
            raise CheckpointError(f"{out_dir}: damaged checkpoint: {name} does not match its hash in {MANIFEST}")
    try:
        tokenizer = CharTokenizer.from_json((out_dir / TOKENIZER).read_text(encoding="utf-8"))
        config, state = _read_json(out_dir / CONFIG), _read_json(out_dir / STATE)
        model_state = mg.load(out_dir / MODEL)
        optimizer_state = None
        if with_optimizer:
            tensors = mg.load(out_dir / OPTIMIZER)
            optimizer_state = optim.unflatten_state_dict(tensors, load_metadata(out_dir / OPTIMIZER))
        lines = (out_dir / METRICS).read_text(encoding="utf-8").splitlines()
        metrics = [json.loads(line) for line in lines if line.strip()]
        checkpoint = Checkpoint(config, state, tokenizer, model_state, optimizer_state, metrics)
        checkpoint.model_config  # noqa: B018 -- check now that config.json describes a model
    except (SafetensorsError, ValueError, KeyError, TypeError) as error:
        raise CheckpointError(f"{out_dir}: damaged checkpoint: {error}") from None
    return checkpoint


def load_model(out_dir: str | Path, device: str = "cpu") -> tuple[GPT, CharTokenizer]:
    """The trained model (in eval mode, on `device`) and its tokenizer, for sampling."""
    checkpoint = load_checkpoint(out_dir, with_optimizer=False)
    model = GPT(checkpoint.model_config)
    model.load_state_dict(checkpoint.model_state)
    model.to(device)
    model.eval()
    return model, checkpoint.tokenizer


def _write_text(path: Path, text: str) -> None:
    """Write `text` to `path` (a temporary name: the callers rename it into place) and flush it to disk."""
    with open(path, "w", encoding="utf-8") as file:
        file.write(text)
        file.flush()
        os.fsync(file.fileno())  # the bytes are on disk before a rename makes them the checkpoint


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{path}: damaged checkpoint file: {error}") from None
