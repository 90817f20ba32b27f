"""Checkpoints: everything a training run needs to continue exactly where it stopped, in one folder.

    DIR/model.safetensors      the weights, named as model.state_dict()
    DIR/optimizer.safetensors  AdamW's moment arrays; its step counts and parameter groups as JSON metadata
    DIR/tokenizer.json         the character vocabulary
    DIR/config.json            {"model": GPTConfig fields, "train": training settings, "data": name and sha256,
                                "schedule": the learning-rate schedule, fixed when the run started}
    DIR/state.json             iteration, best val loss, and the two random generators' states
    DIR/metrics.jsonl          the metrics log up to this iteration (one JSON object a line)
    DIR/manifest.json          the iteration, and each file above with its size and SHA-256

Nothing is pickled: arrays go to safetensors, everything else to JSON.

A save is atomic as a whole. No file system replaces seven files at once, so a save is a small transaction,
and at every instant the folder holds one complete checkpoint, the old one or the new one:

    1. write   every file, the manifest last, into DIR/.pending/, each flushed to disk (fsync).
               A crash here leaves the old checkpoint as it was, and a .pending/ that the next save removes.
    2. commit  rename DIR/.pending/ to DIR/.committed/: a single rename, which is atomic. From this instant
               the new checkpoint is the checkpoint: a load takes each file from .committed/ while it is there.
    3. move    each file from .committed/ into DIR (a rename each, the manifest last), then remove
               .committed/. A crash here leaves some files moved and some not; a load still sees the new
               checkpoint whole, and the next save (or `recover`) finishes the move.

Reading is as careful. Every file goes through minigrad's `open_regular_file` (no FIFO, device or directory,
and no more bytes than the manifest declares and the model's size allows), must match its size and hash,
and is checked field by field (schema.py) before anything is built from it. A damaged or hostile file is
refused in one line that names the file and the field, and so are non-finite weights.
train.py calls `save_checkpoint` after each evaluation and on Ctrl-C or SIGTERM.
Read next: schema.py (what each file must hold), then sizing.py.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import minigrad as mg
from minigpt import schema, sizing
from minigpt.config import GPTConfig
from minigpt.model import GPT
from minigpt.schema import CheckpointError
from minigpt.tokenizer import MAX_JSON_BYTES as MAX_TOKENIZER_BYTES
from minigpt.tokenizer import CharTokenizer
from minigrad import optim
from minigrad.tools import serialization
from minigrad.tools.files import NO_FOLLOW, fsync_directory, not_regular

MODEL, OPTIMIZER, TOKENIZER = "model.safetensors", "optimizer.safetensors", "tokenizer.json"
CONFIG, STATE, METRICS, MANIFEST = "config.json", "state.json", "metrics.jsonl", "manifest.json"
FILES = (MODEL, OPTIMIZER, TOKENIZER, CONFIG, STATE, METRICS)  # the manifest lists these
PENDING, COMMITTED = ".pending", ".committed"  # a save's folders: being written, and committed
LOCK, LOSS_CURVE = ".lock", "loss_curve.png"  # what a training run also writes into the folder
FORMAT = 2  # bump when the layout changes, so an old checkpoint is refused with a clear message
# The most a file may hold before it is read: small JSON files; the tokenizer (a vocabulary of every Unicode
# character is under 16 MiB); the metrics log; and for arrays, 4 float32 numbers per parameter (the weights,
# twice when tied; or AdamW's two moments) and a header.
MAX_JSON_BYTES = {MANIFEST: 2**20, CONFIG: 2**20, STATE: 2**20, TOKENIZER: MAX_TOKENIZER_BYTES, METRICS: 2**28}
HEADER_BYTES = 2**20


@dataclass
class Checkpoint:
    """A checkpoint read back and verified (tensors on the host until the caller moves them)."""

    iter_num: int
    config: dict[str, Any]  # config.json: "model", "train", "data", "schedule"
    model_config: GPTConfig
    state: dict[str, Any]  # state.json: "iter_num", "best_val_loss", "batch_rng", "minigrad_rng"
    tokenizer: CharTokenizer
    model_state: dict[str, mg.Tensor]
    optimizer_state: dict[str, Any] | None  # None for a sampling-only load
    metrics: list[dict[str, Any]]
    folder: Path


# ------------------------------------------------------------------------------------------------------
# Saving
def save_checkpoint(out_dir: str | Path, model: GPT, optimizer: optim.Optimizer, tokenizer: CharTokenizer,
                    config: dict[str, Any], state: dict[str, Any], metrics: list[dict[str, Any]],
                    allow_earlier: bool = False) -> None:
    """Write a complete checkpoint to `out_dir`, atomically (see the module docstring).

    Refuses (CheckpointError) to write non-finite weights, and to replace a checkpoint of a later iteration
    unless `allow_earlier` (a new run that was told to --overwrite).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    check_folder(out_dir)
    recover(out_dir)  # a save interrupted earlier is finished (or cleaned away) before this one starts
    if not allow_earlier and exists(out_dir):  # (a checkpoint whose iteration cannot be read is not replaced)
        current = _Folder(out_dir).iter_num
        if state["iter_num"] < current:
            raise CheckpointError(f"{out_dir} holds the checkpoint of iteration {current}; not replacing it with "
                                  f"one of iteration {state['iter_num']}")
    weights = model.state_dict()
    schema.finite(weights, "the weights to save")
    tensors, metadata = optim.flatten_state_dict(optimizer.state_dict())
    contents = {
        MODEL: serialization.to_bytes(weights, metadata={"format": str(FORMAT)}),
        OPTIMIZER: serialization.to_bytes(tensors, metadata=metadata),
        TOKENIZER: tokenizer.to_json().encode("utf-8"),
        CONFIG: _json({"format": FORMAT, **config}),
        STATE: _json(state),
        METRICS: "".join(json.dumps(record) + "\n" for record in metrics).encode("utf-8"),
    }
    files = {name: {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()} for name, data in contents.items()}
    contents[MANIFEST] = _json({"format": FORMAT, "iter_num": state["iter_num"], "files": files})

    pending = out_dir / PENDING
    try:  # 1. write
        pending.mkdir()
        for name, data in contents.items():
            _write_file(pending / name, data)
        fsync_directory(pending)
        # 2. commit: one atomic rename
        os.replace(pending, out_dir / COMMITTED)
    except BaseException:  # also Ctrl-C: the old checkpoint stands; leave no half-written folder
        shutil.rmtree(pending, ignore_errors=True)
        raise
    fsync_directory(out_dir)
    _move_into_place(out_dir)  # 3. move


def check_folder(out_dir: str | Path) -> None:
    """Refuse, before anything is written, a folder where .pending/ or .committed/ is not a folder of its own, or
    a file of the checkpoint (or the run's lock or loss curve) is a symbolic link, a FIFO, a device or a folder:
    a CheckpointError naming the first one. A checkpoint shared as an archive must not be able to make a run
    write elsewhere (`loss_curve.png -> ~/.bashrc`) or wait forever (a FIFO)."""
    out_dir = Path(out_dir)
    for name in (PENDING, COMMITTED):
        what = not_regular(out_dir / name) or ("a file" if (out_dir / name).exists() else None)
        if what is not None and what != "a directory":
            raise CheckpointError(f"{out_dir / name}: {what}, where a save keeps a folder of its own: remove it, "
                                  "or use another --out-dir")
    for name in (*FILES, MANIFEST, LOCK, LOSS_CURVE):
        for path in (out_dir / name, out_dir / COMMITTED / name):
            what = not_regular(path)
            if what is not None:
                raise CheckpointError(f"{path}: {what}, not a regular file; minigpt writes a checkpoint's files "
                                      "only as files of their own, never through a link: remove it, or use "
                                      "another --out-dir")


def recover(out_dir: str | Path) -> None:
    """Finish a save that was interrupted after its commit; remove what an uncommitted one left behind."""
    out_dir = Path(out_dir)
    committed, pending = out_dir / COMMITTED, out_dir / PENDING
    if committed.is_dir() and not committed.is_symlink():  # (never move files in from somewhere else)
        _move_into_place(out_dir)
    if pending.is_dir() and not pending.is_symlink():
        shutil.rmtree(pending)
    # Format 1 wrote .NAME.partial files; write_file writes .NAME.PID.HEX.tmp files: both are debris of a crash
    # (only of the checkpoint's own files: a user's .notes.tmp stays).
    for name in (*FILES, MANIFEST, LOSS_CURVE):
        for debris in (*out_dir.glob(f".{name}.partial"), *out_dir.glob(f".{name}.[0-9]*.*.tmp")):
            if debris.is_file() and not debris.is_symlink():
                debris.unlink()


def exists(out_dir: str | Path) -> bool:
    """True when `out_dir` holds a checkpoint, complete or not (any of its files)."""
    out_dir = Path(out_dir)
    return any((folder / name).exists() for folder in (out_dir, out_dir / COMMITTED) for name in (*FILES, MANIFEST))


def _move_into_place(out_dir: Path) -> None:
    committed = out_dir / COMMITTED
    for name in (*FILES, MANIFEST):  # the manifest last: until it moves, loads read from .committed/
        if (committed / name).exists():
            os.replace(committed / name, out_dir / name)
    fsync_directory(out_dir)
    committed.rmdir()


def _write_file(path: Path, data: bytes) -> None:
    """Write `data` to a new file (never through a link) and flush it to disk, so that a rename can make it
    part of the checkpoint."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | NO_FOLLOW | getattr(os, "O_BINARY", 0), 0o666)
    with os.fdopen(fd, "wb") as file:
        file.write(data)
        file.flush()
        os.fsync(file.fileno())


def _json(value: Any) -> bytes:
    return json.dumps(value, indent=2, allow_nan=False).encode("utf-8")


def iteration(out_dir: str | Path) -> int | None:
    """The iteration of the checkpoint in `out_dir` as its manifest says, or None when there is none to read."""
    try:
        return _Folder(Path(out_dir)).iter_num
    except (CheckpointError, OSError):
        return None


# ------------------------------------------------------------------------------------------------------
# Loading
class _Folder:
    """A checkpoint folder being read: its manifest, and each file checked against it before it is used."""

    def __init__(self, out_dir: Path) -> None:
        if not out_dir.exists():
            raise CheckpointError(f"{out_dir}: no such folder, so no checkpoint to load")
        if not out_dir.is_dir():
            raise CheckpointError(f"{out_dir}: a file, not a checkpoint folder")
        self.out_dir = out_dir
        # While a save is being moved into place, .committed/ holds the new checkpoint's files not yet moved.
        committed = out_dir / COMMITTED
        self.paths = {name: committed / name if (committed / name).exists() else out_dir / name
                      for name in (*FILES, MANIFEST)}
        if not self.paths[MANIFEST].exists():
            if is_exported(out_dir):
                raise CheckpointError(f"{out_dir}: a model's exported weights ({CONFIG}, {MODEL}, {TOKENIZER}), not a "
                                      "checkpoint a run can continue (it has no optimizer state): sample from it "
                                      f"with minigpt sample --out-dir {out_dir}, or train a new run")
            if exists(out_dir):
                raise CheckpointError(f"{out_dir}: incomplete checkpoint ({MANIFEST} is missing)")
            raise CheckpointError(f"{out_dir}: no checkpoint here (no {MANIFEST}); train one with: minigpt train "
                                  f"--out-dir {out_dir}")
        path = self.paths[MANIFEST]
        self.manifest = schema.manifest(schema.parse_json(_read(path, MAX_JSON_BYTES[MANIFEST]), path), path,
                                        FORMAT, FILES)
        self.iter_num = self.manifest["iter_num"]

    def bytes(self, name: str, max_bytes: int) -> bytes:
        """The file `name`, once its size (read no further than the manifest says) and hash check out."""
        path, expected = self.paths[name], self.manifest["files"][name]
        if expected["bytes"] > max_bytes:
            raise CheckpointError(f"{self.paths[MANIFEST]}: files.{name}.bytes is {expected['bytes']:,}, more than "
                                  f"the {max_bytes:,} such a file may have here")
        data = _read(path, expected["bytes"])
        if len(data) != expected["bytes"] or hashlib.sha256(data).hexdigest() != expected["sha256"]:
            raise CheckpointError(f"{path}: damaged: it does not match its size and hash in {MANIFEST}")
        return data

    def json(self, name: str) -> Any:
        return schema.parse_json(self.bytes(name, MAX_JSON_BYTES[name]), self.paths[name])


def _read(path: Path, max_bytes: int) -> bytes:
    try:
        return serialization.read_bytes(path, max_bytes)
    except FileNotFoundError:
        raise CheckpointError(f"{path.parent}: damaged checkpoint: {path.name} is missing") from None
    except mg.CheckpointError as error:  # not a regular file, or larger than allowed: the message names it
        raise CheckpointError(str(error)) from None
    except OSError as error:
        raise CheckpointError(f"{path}: cannot be read ({error.strerror})") from None


def load_checkpoint(out_dir: str | Path, with_optimizer: bool = True) -> Checkpoint:
    """Read and verify the checkpoint in `out_dir`; a CheckpointError names the file and field at fault."""
    folder = _Folder(Path(out_dir))
    paths = folder.paths
    config = folder.json(CONFIG)
    model_config = schema.run_config(config, paths[CONFIG], FORMAT, GPTConfig)
    # The model's size bounds every array file, and must fit in memory before anything of that size is read.
    n_params = sizing.parameter_count(model_config)
    # the model, and its weights twice more: as read from the file, and as arrays (then AdamW's moments)
    needed = sizing.model_bytes(model_config) + 2 * sizing.FLOAT_BYTES * n_params
    _check_memory(needed, f"{paths[CONFIG]}: model: {n_params:,} parameters")
    max_array_bytes = 4 * sizing.FLOAT_BYTES * n_params + HEADER_BYTES
    with _nested_too_deeply(paths[MODEL]):
        model_state = serialization.from_bytes(folder.bytes(MODEL, max_array_bytes), str(paths[MODEL]))
    schema.finite(model_state, paths[MODEL])
    tokenizer = _tokenizer(folder.bytes(TOKENIZER, MAX_JSON_BYTES[TOKENIZER]), paths[TOKENIZER], model_config)
    state = schema.state(folder.json(STATE), paths[STATE], folder.iter_num)
    optimizer_state = None
    if with_optimizer:
        data = folder.bytes(OPTIMIZER, max_array_bytes)
        with _nested_too_deeply(paths[OPTIMIZER]):
            tensors = serialization.from_bytes(data, str(paths[OPTIMIZER]))
            try:
                metadata = serialization.metadata_from_bytes(data, str(paths[OPTIMIZER]))
                optimizer_state = optim.unflatten_state_dict(tensors, metadata)
            except ValueError as error:
                raise CheckpointError(f"{paths[OPTIMIZER]}: {error}") from None
    metrics = schema.metrics(folder.bytes(METRICS, MAX_JSON_BYTES[METRICS]), paths[METRICS])
    return Checkpoint(folder.iter_num, config, model_config, state, tokenizer, model_state, optimizer_state, metrics,
                      folder.out_dir)


def _tokenizer(data: bytes, path: Path, model_config: GPTConfig) -> CharTokenizer:
    try:
        tokenizer = CharTokenizer.from_json(data.decode("utf-8"))
    except (ValueError, TypeError) as error:  # also a UnicodeDecodeError
        raise CheckpointError(f"{path}: {error}") from None
    except RecursionError:
        raise CheckpointError(f"{path}: not valid JSON (nested too deeply)") from None
    if tokenizer.vocab_size != model_config.vocab_size:
        raise CheckpointError(f"{path}: {tokenizer.vocab_size} characters, the model's vocab_size is "
                              f"{model_config.vocab_size}")
    return tokenizer


def is_exported(out_dir: str | Path) -> bool:
    """True for a model's exported weights, as tutorials/pretrained/kneser_ney/ ships them: config.json (GPTConfig's
    fields), model.safetensors and tokenizer.json, and none of a checkpoint's other files."""
    out_dir = Path(out_dir)
    return (all((out_dir / name).exists() for name in (CONFIG, MODEL, TOKENIZER))
            and not any((folder / name).exists() for folder in (out_dir, out_dir / COMMITTED)
                        for name in (OPTIMIZER, STATE, MANIFEST)))


def _load_exported(out_dir: Path) -> tuple[GPTConfig, dict[str, mg.Tensor], CharTokenizer]:
    """An exported folder's model settings, weights and tokenizer, each read and checked as a checkpoint's are."""
    config_path, model_path = out_dir / CONFIG, out_dir / MODEL
    record = schema.parse_json(_read(config_path, MAX_JSON_BYTES[CONFIG]), config_path)
    if isinstance(record, dict) and "format" in record:  # a checkpoint's config.json: the rest of it is missing
        raise CheckpointError(f"{out_dir}: incomplete checkpoint ({MANIFEST} is missing)")
    try:
        model_config = GPTConfig(**schema.check_fields(record, GPTConfig, f"{config_path}: "))
    except ValueError as error:  # a value out of range: GPTConfig's message names it
        raise CheckpointError(f"{config_path}: {error}") from None
    n_params = sizing.parameter_count(model_config)
    _check_memory(sizing.model_bytes(model_config) + 2 * sizing.FLOAT_BYTES * n_params,
                  f"{config_path}: {n_params:,} parameters")
    with _nested_too_deeply(model_path):
        data = _read(model_path, 2 * sizing.FLOAT_BYTES * n_params + HEADER_BYTES)
        model_state = serialization.from_bytes(data, str(model_path))
    schema.finite(model_state, model_path)
    tokenizer = _tokenizer(_read(out_dir / TOKENIZER, MAX_JSON_BYTES[TOKENIZER]), out_dir / TOKENIZER, model_config)
    return model_config, model_state, tokenizer


def read_train_settings(out_dir: str | Path) -> tuple[dict[str, Any], Path]:
    """The "train" section of the checkpoint's config.json (verified against the manifest), and that file's path."""
    folder = _Folder(Path(out_dir))
    config = folder.json(CONFIG)
    schema.run_config(config, folder.paths[CONFIG], FORMAT, GPTConfig)
    return config["train"], folder.paths[CONFIG]


def load_weights(model: GPT, checkpoint: Checkpoint) -> None:
    """Copy the checkpoint's weights into `model`, once their names, shapes and dtypes are the model's."""
    schema.weights(checkpoint.model_state, model, checkpoint.folder / MODEL)
    model.load_state_dict(checkpoint.model_state)


def load_optimizer(optimizer: optim.Optimizer, checkpoint: Checkpoint) -> None:
    """Restore AdamW's state from the checkpoint, once it is checked against this optimizer's parameters."""
    schema.adamw_state(checkpoint.optimizer_state, optimizer, checkpoint.folder / OPTIMIZER)
    optimizer.load_state_dict(checkpoint.optimizer_state)


def load_model(out_dir: str | Path, device: str = "cpu") -> tuple[GPT, CharTokenizer]:
    """The trained model (in eval mode, on `device`) and its tokenizer, for sampling: from a checkpoint, or from a
    model's exported weights (`is_exported`)."""
    if is_exported(out_dir):
        model_config, model_state, tokenizer = _load_exported(Path(out_dir))
        model = GPT(model_config)
        schema.weights(model_state, model, Path(out_dir) / MODEL)
        model.load_state_dict(model_state)
    else:
        checkpoint = load_checkpoint(out_dir, with_optimizer=False)
        model, tokenizer = GPT(checkpoint.model_config), checkpoint.tokenizer
        load_weights(model, checkpoint)
    model.to(device)
    model.eval()
    return model, tokenizer


@contextlib.contextmanager
def _nested_too_deeply(path: Path) -> Iterator[None]:
    """A safetensors header is JSON too: one nested [[[[... deep stops Python's parser with a RecursionError."""
    try:
        yield
    except RecursionError:
        raise CheckpointError(f"{path}: not a valid safetensors file: its header is nested too deeply") from None


def _check_memory(needed: int, what: str) -> None:
    available = sizing.available_memory()
    if available is not None and needed > available:
        raise CheckpointError(f"{what} need about {sizing.format_bytes(needed)} of memory to load, more than the "
                              f"{sizing.format_bytes(available)} this machine has available")
