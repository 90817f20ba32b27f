"""Training a GPT on a text, on the CPU or a GPU, with checkpoints that resume exactly: `minigpt train`.

The settings come first, grouped as in nanoGPT's train.py; the defaults are nanoGPT's CPU configuration
for Shakespeare (a few minutes on a laptop). Then `train` runs in numbered phases:

    1. data         the text, its tokenizer, the 90/10 split
    2. model        a GPT, fresh or restored from a checkpoint
    3. optimizer    AdamW, decaying only the 2-D weights
    4. resume       the optimizer's state, the iteration, both random generators
    5. loop         # forward, # backward, # update; every eval_interval: evaluate, log, checkpoint

A resumed run ends with the very weights an uninterrupted one would: the learning rate is a function of
the iteration alone, the batch positions come from a generator whose state is in the checkpoint, and so does
minigrad's generator (dropout masks). Evaluation draws from a third generator, rebuilt from the seed each
time, so how often a run evaluates (or was stopped) never shifts the training batches.
Read next: checkpoint.py (what is saved), cli.py (the command line).
"""

from __future__ import annotations

import importlib.util
import json
import math
import signal
import threading
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

import minigrad as mg
from minigpt import checkpoint
from minigpt.config import GPTConfig
from minigpt.data import Dataset, get_batch, load_dataset
from minigpt.model import GPT
from minigrad import nn, optim


class ConfigError(ValueError):
    """Settings that cannot work (a bad value, a missing GPU, a checkpoint from another configuration)."""


@dataclass
class TrainConfig:
    """Every setting of a training run, with nanoGPT's CPU defaults for Shakespeare."""

    # I/O
    out_dir: str = "out"
    eval_interval: int = 250  # evaluate, log and checkpoint every this many iterations (and at the end)
    eval_iters: int = 20  # batches per split for each loss estimate
    log_interval: int = 10  # read the training loss back (a device sync) every this many iterations
    resume: bool = False  # continue from the checkpoint in out_dir
    # data
    data: str | None = None  # a UTF-8 text file; None: the built-in corpus below
    corpus: str = "shakespeare"  # the built-in corpus: "shakespeare" or "tang" (Tang poems; see corpus.py)
    batch_size: int = 12
    block_size: int = 64  # context length, in characters
    # model
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    pos_encoding: str = "learned"
    norm_position: str = "pre"
    # AdamW
    lr: float = 1e-3  # the peak learning rate
    max_iters: int = 2000
    weight_decay: float = 0.1  # on 2-D weights only
    beta1: float = 0.9
    beta2: float = 0.99  # nanoGPT's choice for small character models (few tokens per batch)
    grad_clip: float = 1.0  # clip the global gradient norm to this (0: off)
    # learning-rate schedule: linear warmup, then cosine decay to min_lr = lr / 10
    warmup_iters: int = 100
    lr_decay_iters: int | None = None  # None: max_iters (fixed when the run starts, kept on resume)
    # system
    device: str = "cpu"  # "cpu" or "cuda" ("strict": the CuPy-like test device)
    seed: int = 1337

    @classmethod
    def for_corpus(cls, corpus: str, **settings: Any) -> TrainConfig:
        """The settings for the built-in `corpus`: its defaults (CORPUS_DEFAULTS), with `settings` on top."""
        if corpus not in CORPUS_DEFAULTS:
            raise ConfigError(f"unknown corpus {corpus!r}: the built-in corpora are {', '.join(CORPUS_DEFAULTS)}")
        return cls(**{**CORPUS_DEFAULTS[corpus], **settings, "corpus": corpus})


# Each built-in corpus starts from these settings, on top of the ones above (a setting the user gives still wins).
# The Tang poems train well with the Shakespeare model as it is: its 2000 iterations write recognisable 五言 and
# 七言 lines (README.md shows a sample). Their 6,445-character vocabulary makes each evaluation batch twice as
# dear, so they evaluate half as often, which keeps evaluation to the same share of the run.
CORPUS_DEFAULTS: dict[str, dict[str, Any]] = {"shakespeare": {}, "tang": {"eval_interval": 500}}


# What may differ between a run and its resumption: nothing else, or the result would not be the same run.
RESUMABLE_CHANGES = ("out_dir", "eval_interval", "eval_iters", "log_interval", "resume", "data", "max_iters",
                     "device")


@dataclass
class TrainResult:
    iter_num: int
    best_val_loss: float
    interrupted: bool  # stopped by Ctrl-C (a checkpoint was written)


def train(cfg: TrainConfig) -> TrainResult:
    """Train (or, with cfg.resume, continue training) a GPT as `cfg` says; checkpoints go to cfg.out_dir."""
    out_dir = Path(cfg.out_dir)
    device = _check_device(cfg.device)

    # 1. data (and, with --resume, the checkpoint, whose settings and text this run must match) -----------
    if cfg.data is not None and cfg.corpus != "shakespeare":
        raise ConfigError(f"--corpus {cfg.corpus} and --data {cfg.data}: give one text to train on, not both")
    resumed = checkpoint.load_checkpoint(out_dir) if cfg.resume else None
    if resumed is not None:
        _check_resumable(cfg, resumed.config["train"])
    data = load_dataset(cfg.data, cfg.block_size, cfg.corpus)
    if resumed is not None:
        _check_same_data(data, resumed)
    lr_decay_iters = cfg.lr_decay_iters if cfg.lr_decay_iters is not None else cfg.max_iters
    cfg = replace(cfg, lr_decay_iters=lr_decay_iters)  # fixed now, so that a resumed run keeps this schedule
    min_lr = cfg.lr / 10

    # 2. model -----------------------------------------------------------------------------------
    mg.manual_seed(cfg.seed)  # the initial weights, then the dropout masks, come from this generator
    try:
        model_config = GPTConfig(vocab_size=data.tokenizer.vocab_size, block_size=cfg.block_size,
                                 n_layer=cfg.n_layer, n_head=cfg.n_head, n_embd=cfg.n_embd, dropout=cfg.dropout,
                                 pos_encoding=cfg.pos_encoding, norm_position=cfg.norm_position)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    model = GPT(model_config)
    if resumed is not None:
        model.load_state_dict(resumed.model_state)
    model.to(device)
    model.train()

    # 3. optimizer: weight decay pulls weight matrices towards 0; biases and LayerNorm gains keep their scale
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    optimizer = optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))

    # 4. resume: the optimizer's moments, the iteration, and both generators exactly as they were -----
    batch_rng = np.random.default_rng(cfg.seed)  # where each training batch is cut from the text
    start_iter, best_val_loss, metrics = 0, math.inf, []
    if resumed is not None:
        optimizer.load_state_dict(resumed.optimizer_state)
        batch_rng.bit_generator.state = resumed.state["batch_rng"]
        mg.random.set_rng_state(resumed.state["minigrad_rng"])
        start_iter, best_val_loss = resumed.state["iter_num"], resumed.state["best_val_loss"]
        metrics = [m for m in resumed.metrics if m["iter"] <= start_iter]
        if device != "cpu" and cfg.dropout > 0:
            tqdm.write("note: on a GPU, dropout masks restart from the seed after a resume (minigrad saves only the "
                       "host generator), so this run will not match an uninterrupted one bit for bit")
        if start_iter > cfg.max_iters:
            raise ConfigError(f"the checkpoint in {out_dir} is at iteration {start_iter}, past --max-iters "
                              f"{cfg.max_iters}")
    elif checkpoint.exists(out_dir):
        tqdm.write(f"note: {out_dir} holds a checkpoint; this new run replaces it at its first save "
                   "(use --resume to continue it instead)")
    data_path = str(Path(cfg.data).resolve()) if cfg.data is not None else None  # resumable from anywhere
    run_config = {"model": model_config.to_dict(), "train": asdict(replace(cfg, data=data_path)),
                  "data": {"name": data.name, "sha256": data.sha256}}

    def save(iter_num: int) -> None:
        state = {"iter_num": iter_num, "best_val_loss": best_val_loss, "batch_rng": batch_rng.bit_generator.state,
                 "minigrad_rng": mg.random.get_rng_state()}
        checkpoint.save_checkpoint(out_dir, model, optimizer, data.tokenizer, run_config, state, metrics)

    if importlib.util.find_spec("matplotlib") is None:
        tqdm.write("note: no loss curve (matplotlib is not installed: pip install matplotlib)")
    n_params = model.num_parameters()
    tqdm.write(f"training on {data.name}: {len(data.train):,} train / {len(data.val):,} val characters, "
               f"vocabulary {data.tokenizer.vocab_size}; {n_params / 1e6:.2f}M parameters on {device}; "
               f"iterations {start_iter} -> {cfg.max_iters}")

    # 5. loop ------------------------------------------------------------------------------------
    stop = _StopOnCtrlC()
    bar = tqdm(total=cfg.max_iters, initial=start_iter, desc="train", unit="it", dynamic_ncols=True, disable=None)
    iter_num, t_start = start_iter, time.perf_counter()
    t_log = t_start  # tokens/s is measured over each log interval, evaluation excluded
    with stop:
        while True:
            # evaluate, log and checkpoint every eval_interval iterations and at the end (not again right after
            # a resume: that checkpoint is the one we just loaded)
            at_end, saved = iter_num == cfg.max_iters, False
            if (iter_num % cfg.eval_interval == 0 or at_end) and not (resumed is not None and iter_num == start_iter):
                losses = estimate_loss(model, data, cfg, device)
                best_val_loss = min(best_val_loss, losses["val"])
                # Every record's lr is the one the last step used, as in the per-step records below.
                lr = optim.cosine_with_warmup(max(iter_num - 1, 0), cfg.lr, cfg.warmup_iters, lr_decay_iters, min_lr)
                metrics.append({"iter": iter_num, "train_loss": losses["train"], "val_loss": losses["val"],
                                "lr": lr, "elapsed_s": round(time.perf_counter() - t_start, 2)})
                tqdm.write(f"iter {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
                if iter_num > 0 or stop.requested:  # the fresh weights are not worth a file (or an overwrite)
                    save(iter_num)
                    saved = True
                plot_losses(metrics, out_dir / "loss_curve.png")
                t_log = time.perf_counter()
            if at_end:
                break
            if stop.requested:
                if not saved:
                    save(iter_num)
                bar.close()
                tqdm.write(f"interrupted at iteration {iter_num}: checkpoint saved in {out_dir}; continue with "
                           f"`minigpt train --resume --out-dir {out_dir}`")
                return TrainResult(iter_num, best_val_loss, interrupted=True)

            # the learning rate is a function of the iteration alone (so a resumed run follows the same curve)
            lr = optim.cosine_with_warmup(iter_num, cfg.lr, cfg.warmup_iters, lr_decay_iters, min_lr)
            optim.set_lr(optimizer, lr)
            x, y = get_batch(data.train, cfg.batch_size, cfg.block_size, batch_rng)
            x, y = mg.tensor(x, device=device), mg.tensor(y, device=device)  # one copy to the device per step

            # forward
            logits, loss = model(x, y)
            # backward
            optimizer.zero_grad()
            loss.backward()
            if cfg.grad_clip > 0:
                nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            # update
            optimizer.step()

            # Keep only the loss value: the loss tensor still points at the graph, which holds the logits
            # and every activation; dropping them here frees that memory before the next forward.
            loss = loss.detach()
            del logits
            iter_num += 1
            bar.update(1)
            if iter_num % cfg.log_interval == 0:
                loss_value = loss.item()  # the only read-back from the device between evaluations
                now = time.perf_counter()
                tokens_per_s = cfg.log_interval * cfg.batch_size * cfg.block_size / (now - t_log)
                t_log = now
                metrics.append({"iter": iter_num, "loss": loss_value, "lr": lr,
                                "tokens_per_s": round(tokens_per_s, 1)})
                bar.set_postfix(loss=f"{loss_value:.4f}", lr=f"{lr:.2e}", tok_s=f"{tokens_per_s:,.0f}")
    bar.close()
    plot_losses(metrics, out_dir / "loss_curve.png")
    tqdm.write(f"done: {iter_num} iterations in {time.perf_counter() - t_start:.1f} s, best val loss "
               f"{best_val_loss:.4f}; checkpoint in {out_dir}")
    return TrainResult(iter_num, best_val_loss, interrupted=False)


@mg.no_grad()
def estimate_loss(model: GPT, data: Dataset, cfg: TrainConfig, device: str) -> dict[str, float]:
    """The mean loss over cfg.eval_iters batches of each split, with dropout off and no graph."""
    model.eval()
    # The same evaluation batches every time, drawn apart from the training stream (which they never shift).
    rng = np.random.default_rng([cfg.seed, 1])
    out = {}
    for split, ids in (("train", data.train), ("val", data.val)):
        losses = []
        for _ in range(cfg.eval_iters):
            x, y = get_batch(ids, cfg.batch_size, cfg.block_size, rng)
            _, loss = model(mg.tensor(x, device=device), mg.tensor(y, device=device))
            losses.append(loss)
        out[split] = float(np.mean([loss.item() for loss in losses]))  # read back once all are queued
    model.train()
    return out


def plot_losses(metrics: list[dict[str, Any]], path: Path) -> None:
    """Draw the batch loss, the evaluated train/val losses and the learning rate to `path` (a PNG).

    Does nothing without matplotlib (train() has said so once).
    """
    if importlib.util.find_spec("matplotlib") is None:
        return
    mg.viz.plot_loss_curves(metrics, path=path, title=None)


def _check_device(device: str) -> str:
    """The canonical device name, or a ConfigError saying what to install."""
    try:
        device = mg.backend.canonical_device(device)
    except ValueError as error:
        raise ConfigError(f"--device: {error}") from None
    if device.startswith("cuda") and not mg.cuda.is_available():
        raise ConfigError("--device cuda needs CuPy and an NVIDIA GPU: pip install -e '.[cuda12]' "
                          "(or '.[cuda13]' for CUDA 13), or use --device cpu")
    return device


def config_for_resume(out_dir: str | Path, given: dict[str, Any]) -> TrainConfig:
    """The settings of the run saved in `out_dir`, with the settings in `given` (the flags a user typed) on top.

    `train` then refuses any given setting that would make the result differ from the uninterrupted run.
    """
    path = Path(out_dir) / checkpoint.CONFIG
    if not path.exists():
        raise checkpoint.CheckpointError(f"{out_dir}: no checkpoint to resume ({path.name} is missing)")
    try:
        saved = json.loads(path.read_text(encoding="utf-8"))["train"]
        return TrainConfig(**{**saved, **given, "out_dir": str(out_dir), "resume": True})
    except (ValueError, KeyError, TypeError) as error:
        raise checkpoint.CheckpointError(f"{out_dir}: damaged checkpoint: {path.name}: {error}") from None


def _check_resumable(cfg: TrainConfig, saved: dict[str, Any]) -> None:
    """A ConfigError naming every setting that differs from the checkpoint's (beyond RESUMABLE_CHANGES)."""
    problems = []
    for field in fields(TrainConfig):
        name = field.name
        ours, theirs = getattr(cfg, name), saved.get(name, field.default)  # (a setting newer than the checkpoint)
        if name in RESUMABLE_CHANGES or (name == "lr_decay_iters" and ours is None) or ours == theirs:
            continue
        flag = "--" + name.replace("_", "-")
        if name == "block_size" and theirs is not None and ours > theirs:
            problems.append(f"{flag} {ours} is larger than the checkpoint's block_size {theirs}")
        else:
            problems.append(f"{flag} is {ours}, the checkpoint's is {theirs}")
    if problems:
        raise ConfigError(f"cannot resume from {cfg.out_dir}, which was trained with other settings: "
                          + "; ".join(problems))


def _check_same_data(data: Dataset, resumed: checkpoint.Checkpoint) -> None:
    saved = resumed.config["data"]
    if data.sha256 != saved["sha256"]:
        raise ConfigError(f"cannot resume: the checkpoint was trained on {saved['name']}, and {data.name} is "
                          "a different text")
    if data.tokenizer != resumed.tokenizer:
        raise checkpoint.CheckpointError("damaged checkpoint: its tokenizer does not match its training text")


class _StopOnCtrlC:
    """While active, the first Ctrl-C (SIGINT) only sets `requested`: the loop finishes its step, saves, and
    returns. A second Ctrl-C stops at once (KeyboardInterrupt), without saving."""

    def __init__(self) -> None:
        self.requested = False
        self._installed = False
        self._previous: Any = None

    def _handle(self, signum: int, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = True
        tqdm.write("stopping: saving a checkpoint after this step (Ctrl-C again to quit without saving)")

    def __enter__(self) -> _StopOnCtrlC:
        if threading.current_thread() is threading.main_thread():  # signals can only be caught there
            self._previous = signal.signal(signal.SIGINT, self._handle)
            self._installed = True
        return self

    def __exit__(self, *exc_info: Any) -> None:
        if self._installed:  # (the previous handler may be None: one installed outside Python)
            signal.signal(signal.SIGINT, self._previous if self._previous is not None else signal.SIG_DFL)


def read_metrics(out_dir: str | Path) -> list[dict[str, Any]]:
    """The metrics log of the run in `out_dir` (for notebooks and benchmarks)."""
    return mg.viz.plots.read_metrics(Path(out_dir) / checkpoint.METRICS)
