"""The checks `minigpt train` makes before it trains: the device, the output folder, the machine's memory, and
whether a checkpoint can be resumed with the settings given.

Each failure is a ConfigError whose one line names the setting and says what to do instead. train.py calls
these in its first phases, before it allocates a model or writes a byte; two of them also serve the loop
(`check_finite`, and `kept`, which says what a stopped run leaves behind). `config_for_resume` (for cli.py) reads
the settings a resumed run starts from.
Read next: signals.py.
"""

from __future__ import annotations

import contextlib
import errno
import math
import os
import stat
from collections.abc import Iterator
from dataclasses import fields
from pathlib import Path
from typing import Any, BinaryIO

import minigrad as mg
from minigpt import checkpoint, schema, sizing
from minigpt.config import GPTConfig, TrainConfig
from minigpt.data import Dataset
from minigpt.errors import ConfigError, TrainingError
from minigpt.progress import write
from minigrad.core import backend
from minigrad.tools.files import NO_FOLLOW, kind

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

# What may differ between a run and its resumption: nothing else, or the result would not be the same run.
RESUMABLE_CHANGES = ("out_dir", "eval_interval", "eval_iters", "log_interval", "resume", "overwrite", "data", "threads",
                     "max_iters", "device")


def check_device(device: str) -> str:
    """The canonical device name, or a ConfigError saying what to install."""
    try:
        device = backend.canonical_device(device)
    except ValueError as error:
        raise ConfigError(f"--device: {error}") from None
    if device.startswith("cuda") and not mg.cuda.is_available():
        raise ConfigError("--device cuda needs CuPy and an NVIDIA GPU: pip install -e '.[cuda12]' "
                          "(or '.[cuda13]' for CUDA 13), or use --device cpu")
    return device


def check_out_dir(cfg: TrainConfig) -> None:
    """--out-dir must be a folder (or not exist yet) whose files are files of their own (check_folder); a new run
    never replaces a checkpoint it was not told to."""
    out_dir = Path(cfg.out_dir)
    if out_dir.exists() and not out_dir.is_dir():
        raise ConfigError(f"--out-dir {out_dir} is a file, not a folder")
    if out_dir.is_dir():
        checkpoint.check_folder(out_dir)  # no link, FIFO or device where the run will write, before it writes
    if cfg.resume and cfg.overwrite:
        raise ConfigError("--resume continues the checkpoint in --out-dir, --overwrite replaces it: give only one")
    if not cfg.resume and not cfg.overwrite and checkpoint.is_exported(out_dir):
        raise ConfigError(f"{out_dir} holds a model's exported weights: choose another --out-dir, or replace them "
                          "with --overwrite")
    if not cfg.resume and not cfg.overwrite and checkpoint.exists(out_dir):
        at = checkpoint.iteration(out_dir)
        raise ConfigError(f"{out_dir} already holds a checkpoint{f' (iteration {at})' if at is not None else ''}: "
                          "continue it with --resume, replace it with --overwrite, or choose another --out-dir")


@contextlib.contextmanager
def only_run_in(out_dir: Path, rank: int = 0) -> Iterator[None]:
    """Hold --out-dir's lock for the run (rank 0's), so that a second run into the same folder is refused at once
    rather than both saving there and one result silently lost. The operating system releases the lock when the
    process ends, however it ends, so a crashed run never leaves a stale one (at most its .lock file, which the
    next run takes). (Where there is no fcntl, Windows, nothing is locked.)"""
    if rank != 0 or fcntl is None:
        yield
        return
    with _open_lock(out_dir / checkpoint.LOCK) as lock:
        try:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            lock.seek(0)
            pid = lock.read(64).decode("ascii", "replace").strip() or "?"
            raise ConfigError(f"--out-dir {out_dir} is in use by another run (process {pid}): wait for it to "
                              "finish, or choose another --out-dir") from None
        try:
            lock.seek(0)
            lock.truncate()
            lock.write(f"{os.getpid()}\n".encode("ascii"))  # (unbuffered: a failed write is said here, once)
        except OSError as error:  # a full disk, before a step is taken: say which file, and leave none behind
            (out_dir / checkpoint.LOCK).unlink(missing_ok=True)
            raise ConfigError(f"{out_dir / checkpoint.LOCK}: cannot write the run's lock ({error.strerror}); "
                              "nothing was trained") from None
        try:
            yield
        finally:
            (out_dir / checkpoint.LOCK).unlink(missing_ok=True)  # still held: no run can have taken it in between


def _open_lock(path: Path) -> BinaryIO:
    """The lock file, opened for reading and writing: never through a link (O_NOFOLLOW), and refused unless it
    is a regular file with no other name (a hard link's other name would see the PID written over it)."""
    flags = os.O_RDWR | os.O_CREAT | NO_FOLLOW | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as error:  # (make_out_dir refused the links there were when it looked: one came since)
        what = "a symbolic link" if error.errno == errno.ELOOP else error.strerror
        raise ConfigError(f"{path}: cannot be the run's lock ({what}): remove it, or choose another --out-dir") \
            from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or info.st_nlink != 1:
        os.close(fd)
        what = kind(info.st_mode) if not stat.S_ISREG(info.st_mode) else f"a file with {info.st_nlink} names"
        raise ConfigError(f"{path}: {what}, not the run's lock file: remove it, or choose another --out-dir")
    return os.fdopen(fd, "r+b", buffering=0)


def make_out_dir(out_dir: Path) -> None:
    """Create --out-dir now, so that a folder we cannot write fails at once rather than at the first save."""
    if out_dir.is_symlink() and not out_dir.exists():  # (mkdir would say "File exists")
        raise ConfigError(f"--out-dir {out_dir} is a symbolic link to {os.readlink(out_dir)}, which leads to no folder")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ConfigError(f"--out-dir {out_dir}: cannot create it ({error.strerror})") from None
    if not os.access(out_dir, os.W_OK):
        raise ConfigError(f"--out-dir {out_dir}: this user cannot write there")


def check_memory(config: GPTConfig, batch_size: int, device: str) -> None:
    """Refuse, before allocating anything, a configuration whose training step cannot fit in memory."""
    needed, largest = sizing.training_bytes(config, batch_size)
    available = sizing.available_memory(device)
    if available is not None and needed > available:
        where = "on the GPU" if device.startswith("cuda") else "on this machine"
        raise ConfigError(f"this configuration needs about {sizing.format_bytes(needed)} of memory to train (most "
                          f"of it {largest}), more than the {sizing.format_bytes(available)} available {where}; "
                          "use a smaller --block-size, --batch-size, --n-embd or --n-layer")


def check_finite(loss: float, iter_num: int, cfg: TrainConfig) -> None:
    """A TrainingError when the loss is no longer finite, with a hint that applies to this run's settings."""
    if not math.isfinite(loss):
        clip = ", or clip the gradient norm with --grad-clip 1" if cfg.grad_clip == 0 else ""
        raise TrainingError(f"the loss is {loss} at iteration {iter_num}: training diverged; lower --lr "
                            f"({cfg.lr:g} here){clip}; {kept(Path(cfg.out_dir))}")


def kept(out_dir: Path) -> str:
    at = checkpoint.iteration(out_dir)
    return f"the checkpoint of iteration {at} in {out_dir} is kept" if at is not None else "no checkpoint was written"


def schedule_record(cfg: TrainConfig, decay_from: str) -> dict[str, Any]:
    """The learning-rate schedule, as config.json records it (fixed when a run starts, kept when it resumes)."""
    return {"lr": cfg.lr, "min_lr": cfg.lr / 10, "warmup_iters": cfg.warmup_iters,
            "lr_decay_iters": cfg.lr_decay_iters, "lr_decay_iters_from": decay_from}


def explain_schedule(cfg: TrainConfig, schedule: dict[str, Any], start_iter: int) -> None:
    """Say so when a resumed run goes past the end of its learning-rate decay, and why it keeps that schedule."""
    end = schedule["lr_decay_iters"]
    if cfg.max_iters <= max(end, start_iter):
        return
    how = "the --max-iters it started with" if schedule["lr_decay_iters_from"] == "--max-iters" else "--lr-decay-iters"
    write(f"note: this run's learning rate reaches its floor, {schedule['min_lr']:.1e}, at iteration {end} ({how}) "
          f"and stays there: iterations {max(end, start_iter)} -> {cfg.max_iters} train at {schedule['min_lr']:.1e}. "
          "A resumed run keeps the schedule it started with, so that it ends as a run never stopped would; for a "
          f"schedule over {cfg.max_iters} iterations, start a new run with --max-iters {cfg.max_iters}")


def check_resumable(cfg: TrainConfig, saved: dict[str, Any]) -> None:
    """A ConfigError naming every setting that differs from the checkpoint's (beyond RESUMABLE_CHANGES)."""
    problems = []
    for field in fields(cfg):
        name = field.name
        ours, theirs = getattr(cfg, name), saved.get(name)
        if name == "grad_accum":
            theirs = theirs or 1  # a run saved before --grad-accum existed took one batch a step
        if name in RESUMABLE_CHANGES or (name in ("lr_decay_iters", "grad_accum") and ours is None) or ours == theirs:
            continue
        flag = "--" + name.replace("_", "-")
        if name == "block_size" and theirs is not None and ours > theirs:
            problems.append(f"{flag} {ours} is larger than the checkpoint's block_size {theirs}")
        else:
            problems.append(f"{flag} is {ours}, the checkpoint's is {theirs}")
    if problems:
        raise ConfigError(f"cannot resume from {cfg.out_dir}, which was trained with other settings: "
                          + "; ".join(problems))


def check_same_data(data: Dataset, resumed: checkpoint.Checkpoint) -> None:
    saved = resumed.config["data"]
    if data.sha256 != saved["sha256"]:
        raise ConfigError(f"cannot resume: the checkpoint was trained on {saved['name']}, and {data.name} is "
                          "a different text")
    if data.tokenizer != resumed.tokenizer:
        raise checkpoint.CheckpointError("damaged checkpoint: its tokenizer does not match its training text")


def config_for_resume(out_dir: str | Path, given: dict[str, Any]) -> TrainConfig:
    """The settings of the run saved in `out_dir`, with the settings in `given` (the flags a user typed) on top.

    `train` then refuses any given setting that would make the result differ from the uninterrupted run.
    """
    if not checkpoint.exists(out_dir):
        raise checkpoint.CheckpointError(f"{out_dir}: no checkpoint to resume; start one with: minigpt train "
                                         f"--out-dir {out_dir}")
    saved, path = checkpoint.read_train_settings(out_dir)
    # Settings added since checkpoint format 2 began: a run saved before `bias` was one built its model with
    # biases (GPTConfig's default); one saved before `threads` measured nothing (BLAS's default); one saved before
    # `grad_accum` took one batch a step.
    saved.setdefault("bias", True)
    saved.setdefault("threads", 0)
    if saved.get("grad_accum") is None:
        saved["grad_accum"] = 1
    schema.check_fields(saved, TrainConfig, f"{path}: train.")
    try:
        TrainConfig(**saved)  # each value in range, before any is used
    except ConfigError as error:
        raise checkpoint.CheckpointError(f"{path}: train.{error}") from None
    if "corpus" in given and saved.get("data") is not None and "data" not in given:
        raise ConfigError(f"--corpus {given['corpus']}: the run in {out_dir} trained on {saved['data']} (its --data), "
                          "and a resumed run goes on with its own text: leave out --corpus")
    return TrainConfig(**{**saved, **given, "out_dir": str(out_dir), "resume": True, "overwrite": False})
