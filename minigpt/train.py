"""Training a GPT on a text, on the CPU or a GPU, with checkpoints that resume exactly: `minigpt train`.

The settings come first, grouped as in nanoGPT's train.py; the defaults are nanoGPT's CPU configuration
for Shakespeare (a few minutes on a laptop). Then `train` runs in numbered phases:

    1. data         the text, its tokenizer, the 90/10 split
    2. model        a GPT, fresh or restored from a checkpoint
    3. optimizer    AdamW, decaying only the 2-D weights
    4. resume       the optimizer's state, the iteration, both random generators
    5. loop         # forward, # backward, # update; every eval_interval: evaluate, log, checkpoint

Before any of it, the settings are checked against the folder and the machine: a new run never writes over
a trained one (that takes --resume or --overwrite), and a configuration whose training step would not fit in
memory is refused at once, with the figure (sizing.py). During the run, a loss that is no longer finite stops
it (TrainingError), and the last good checkpoint stays as it was.

With a fixed thread count (--threads N; threads.py), a resumed run ends with the very weights an uninterrupted
one would: the learning rate is a function of the iteration alone, the batch positions come from a generator
whose state is in the checkpoint, and so does minigrad's generator (dropout masks). Evaluation draws from a
third generator, rebuilt from the seed each time, so how often a run evaluates (or was stopped) never shifts
the training batches.
Read next: preflight.py (the checks before a run), progress.py, checkpoint.py (what is saved), cli.py.
"""

from __future__ import annotations

import importlib.util
import math
import signal
import threading
import time
from contextlib import closing
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

import minigrad as mg
from minigpt import checkpoint, preflight, schema
from minigpt.config import GPTConfig
from minigpt.data import Dataset, get_batch, load_dataset
from minigpt.model import GPT
from minigpt.preflight import ConfigError, TrainingError
from minigpt.progress import Progress, write
from minigpt.threads import thread_chooser
from minigrad import nn, optim


@dataclass
class TrainConfig:
    """Every setting of a training run, with nanoGPT's CPU defaults for Shakespeare."""

    # I/O
    out_dir: str = "out"
    overwrite: bool = False  # a new run may replace the checkpoint in out_dir (else it is refused)
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
    bias: bool = False  # biases in the Linear and LayerNorm layers: nanoGPT's train.py has none (as good, faster)
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
    threads: int = 0  # BLAS threads on the CPU; 0: measured as the run goes (threads.py)

    def __post_init__(self) -> None:
        """Refuse a setting of the wrong type or out of range, naming it (from Python, the flags or a checkpoint)."""
        for field in fields(self):
            value = getattr(self, field.name)
            problem = schema.type_problem(str(field.type), value)
            if problem is None and type(value) in (int, float):
                if field.name in _AT_LEAST_ONE and value < 1:
                    problem = f"must be at least 1, got {value!r}"
                elif field.name in _FRACTIONS and not 0 <= value < 1:
                    problem = f"must be in [0, 1), got {value!r}"
                elif value < 0:
                    problem = f"must be 0 or more, got {value!r}"
            if problem:
                raise ConfigError(f"{field.name} {problem}")

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


_AT_LEAST_ONE = ("eval_interval", "eval_iters", "log_interval", "batch_size", "block_size", "n_layer", "n_head",
                 "n_embd")
_FRACTIONS = ("dropout", "beta1", "beta2")  # in [0, 1); every other number must be 0 or more


@dataclass
class TrainResult:
    iter_num: int
    best_val_loss: float
    interrupted: bool  # stopped by Ctrl-C (a checkpoint was written)


def train(cfg: TrainConfig) -> TrainResult:
    """Train (or, with cfg.resume, continue training) a GPT as `cfg` says; checkpoints go to cfg.out_dir."""
    out_dir = Path(cfg.out_dir)
    device = preflight.check_device(cfg.device)
    preflight.check_out_dir(cfg)

    # 1. data (and, with --resume, the checkpoint, whose settings and text this run must match) -----------
    if cfg.data is not None and cfg.corpus != "shakespeare":
        raise ConfigError(f"--corpus {cfg.corpus} and --data {cfg.data}: give one text to train on, not both")
    resumed = checkpoint.load_checkpoint(out_dir) if cfg.resume else None
    if resumed is not None:
        preflight.check_resumable(cfg, resumed.config["train"])
    data = load_dataset(cfg.data, cfg.block_size, cfg.corpus)
    if resumed is not None:
        preflight.check_same_data(data, resumed)
    decay_from = "--lr-decay-iters" if cfg.lr_decay_iters is not None else "--max-iters"
    lr_decay_iters = cfg.lr_decay_iters if cfg.lr_decay_iters is not None else cfg.max_iters
    cfg = replace(cfg, lr_decay_iters=lr_decay_iters)  # fixed now, so that a resumed run keeps this schedule
    schedule = resumed.config["schedule"] if resumed is not None else preflight.schedule_record(cfg, decay_from)
    min_lr = cfg.lr / 10

    # 2. model -----------------------------------------------------------------------------------
    try:
        model_config = GPTConfig(vocab_size=data.tokenizer.vocab_size, block_size=cfg.block_size,
                                 n_layer=cfg.n_layer, n_head=cfg.n_head, n_embd=cfg.n_embd, dropout=cfg.dropout,
                                 bias=cfg.bias, pos_encoding=cfg.pos_encoding, norm_position=cfg.norm_position)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    preflight.check_memory(model_config, cfg.batch_size, device)
    preflight.make_out_dir(out_dir)
    mg.manual_seed(cfg.seed)  # the initial weights, then the dropout masks, come from this generator
    model = GPT(model_config)
    if resumed is not None:
        checkpoint.load_weights(model, resumed)
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
        checkpoint.load_optimizer(optimizer, resumed)
        batch_rng.bit_generator.state = resumed.state["batch_rng"]
        mg.random.set_rng_state(resumed.state["minigrad_rng"])
        start_iter, best_val_loss = resumed.iter_num, resumed.state["best_val_loss"]
        metrics = [m for m in resumed.metrics if m["iter"] <= start_iter]
        if device != "cpu" and cfg.dropout > 0:
            write("note: on a GPU, dropout masks restart from the seed after a resume (minigrad saves only the "
                  "host generator), so this run will not match an uninterrupted one bit for bit")
        if start_iter > cfg.max_iters:
            raise ConfigError(f"the checkpoint in {out_dir} is at iteration {start_iter}, past --max-iters "
                              f"{cfg.max_iters}")
    checkpoint.recover(out_dir)  # what an interrupted save left behind: finished, or removed
    data_path = str(Path(cfg.data).resolve()) if cfg.data is not None else None  # resumable from anywhere
    run_config = {"model": model_config.to_dict(), "train": asdict(replace(cfg, data=data_path)),
                  "data": {"name": data.name, "sha256": data.sha256},
                  "schedule": schedule}

    def save(iter_num: int) -> None:
        state = {"iter_num": iter_num, "best_val_loss": best_val_loss, "batch_rng": batch_rng.bit_generator.state,
                 "minigrad_rng": mg.random.get_rng_state()}
        try:
            checkpoint.save_checkpoint(out_dir, model, optimizer, data.tokenizer, run_config, state, metrics,
                                       allow_earlier=cfg.overwrite)
        except OSError as error:  # a full disk, a folder gone: the previous checkpoint is intact
            raise TrainingError(f"could not save the checkpoint of iteration {iter_num} in {out_dir} "
                                f"({error.strerror or error}); {preflight.kept(out_dir)}") from None

    if importlib.util.find_spec("matplotlib") is None:
        write("note: no loss curve (matplotlib is not installed: pip install matplotlib)")
    n_params, eval_batches = model.num_parameters(), evaluation_batches(cfg)
    write(f"training on {data.name}: {len(data.train):,} train / {len(data.val):,} val characters, "
          f"vocabulary {data.tokenizer.vocab_size}; {n_params / 1e6:.2f}M parameters on {device}; "
          f"iterations {start_iter} -> {cfg.max_iters}; each evaluation: {eval_batches} batch"
          f"{'es' if eval_batches > 1 else ''} of {cfg.batch_size} x {cfg.block_size} per split")
    if resumed is not None:
        preflight.explain_schedule(cfg, schedule, start_iter)
    threads, how = thread_chooser(cfg.threads, device)
    write(how)

    # 5. loop ------------------------------------------------------------------------------------
    stop = _StopOnCtrlC()
    bar = Progress(cfg.max_iters, "train", initial=start_iter)
    iter_num, t_start = start_iter, time.perf_counter()
    t_log = t_start  # tokens/s is measured over each log interval, evaluation excluded
    with stop, closing(bar):
        while True:
            # evaluate, log and checkpoint every eval_interval iterations and at the end (not again right after
            # a resume: that checkpoint is the one we just loaded)
            at_end, saved = iter_num == cfg.max_iters, False
            if (iter_num % cfg.eval_interval == 0 or at_end) and not (resumed is not None and iter_num == start_iter):
                losses = estimate_loss(model, data, cfg, device)
                preflight.check_finite(losses["train"], iter_num, out_dir)
                preflight.check_finite(losses["val"], iter_num, out_dir)
                best_val_loss = min(best_val_loss, losses["val"])
                # Every record's lr is the one the last step used, as in the per-step records below.
                lr = optim.cosine_with_warmup(max(iter_num - 1, 0), cfg.lr, cfg.warmup_iters, lr_decay_iters, min_lr)
                metrics.append({"iter": iter_num, "train_loss": losses["train"], "val_loss": losses["val"],
                                "lr": lr, "elapsed_s": round(time.perf_counter() - t_start, 2)})
                write(f"iter {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
                if iter_num > 0 or stop.requested:  # the fresh weights are not worth a file (or an overwrite)
                    save(iter_num)
                    saved = True
                    plot_losses(metrics, out_dir / "loss_curve.png")  # (a curve of one point is not worth one)
                t_log = time.perf_counter()
            if at_end:
                break
            if stop.requested:
                if not saved:
                    save(iter_num)
                    plot_losses(metrics, out_dir / "loss_curve.png")
                write(f"interrupted at iteration {iter_num}: checkpoint saved in {out_dir}; continue with "
                      f"`minigpt train --resume --out-dir {out_dir}`")
                return TrainResult(iter_num, best_val_loss, interrupted=True)

            # the learning rate is a function of the iteration alone (so a resumed run follows the same curve)
            lr = optim.cosine_with_warmup(iter_num, cfg.lr, cfg.warmup_iters, lr_decay_iters, min_lr)
            optim.set_lr(optimizer, lr)
            x, y = get_batch(data.train, cfg.batch_size, cfg.block_size, batch_rng)
            x, y = mg.tensor(x, device=device), mg.tensor(y, device=device)  # one copy to the device per step
            threads.before_step()
            t_step = time.perf_counter()

            # forward
            logits, loss = model(x, y)
            # backward
            optimizer.zero_grad()
            loss.backward()
            if cfg.grad_clip > 0:
                nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            # update
            optimizer.step()
            threads.after_step(time.perf_counter() - t_step)

            # Keep only the loss value: the loss tensor still points at the graph, which holds the logits
            # and every activation; dropping them here frees that memory before the next forward.
            loss = loss.detach()
            del logits
            iter_num += 1
            if iter_num % cfg.log_interval == 0:
                loss_value = loss.item()  # the only read-back from the device between evaluations
                preflight.check_finite(loss_value, iter_num, out_dir)
                now = time.perf_counter()
                tokens_per_s = cfg.log_interval * cfg.batch_size * cfg.block_size / (now - t_log)
                t_log = now
                metrics.append({"iter": iter_num, "loss": loss_value, "lr": lr,
                                "tokens_per_s": round(tokens_per_s, 1), "threads": threads.chosen})
                bar.set_postfix(loss=f"{loss_value:.4f}", lr=f"{lr:.2e}", tok_s=f"{tokens_per_s:,.0f}")
            bar.update(1)
    ran, seconds = iter_num - start_iter, time.perf_counter() - t_start
    if ran == 0 and resumed is not None:
        write(f"nothing to do: the checkpoint in {out_dir} is already at iteration {iter_num} (--max-iters); "
              "give a larger --max-iters to train on")
    elif ran == 0:
        write("done: 0 iterations (--max-iters 0): the untrained model was evaluated; no checkpoint written")
    else:
        write(f"done: {ran} iterations ({start_iter} -> {iter_num}) in {seconds:.1f} s, best val loss "
              f"{best_val_loss:.4f}; checkpoint in {out_dir}")
    return TrainResult(iter_num, best_val_loss, interrupted=False)


def evaluation_batches(cfg: TrainConfig) -> int:
    """Batches per split in each evaluation: cfg.eval_iters, counted in batches of the default size.

    Larger batches (a longer --block-size, a larger --batch-size) read as many tokens in fewer of them, so an
    evaluation costs what the defaults' does rather than growing with the configuration (at least one batch).
    """
    default_tokens = TrainConfig.batch_size * TrainConfig.block_size
    tokens = cfg.batch_size * cfg.block_size
    return max(1, min(cfg.eval_iters, round(cfg.eval_iters * default_tokens / tokens)))


@mg.no_grad()
def estimate_loss(model: GPT, data: Dataset, cfg: TrainConfig, device: str) -> dict[str, float]:
    """The mean loss over `evaluation_batches(cfg)` batches of each split, with dropout off and no graph."""
    model.eval()
    # The same evaluation batches every time, drawn apart from the training stream (which they never shift).
    rng = np.random.default_rng([cfg.seed, 1])
    n_batches = evaluation_batches(cfg)
    out = {}
    with closing(Progress(2 * n_batches, "evaluating", unit="batch", leave=False)) as bar:
        for split, ids in (("train", data.train), ("val", data.val)):
            losses = []
            for _ in range(n_batches):
                x, y = get_batch(ids, cfg.batch_size, cfg.block_size, rng)
                _, loss = model(mg.tensor(x, device=device), mg.tensor(y, device=device))
                losses.append(loss)
                bar.update(1)
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


def config_for_resume(out_dir: str | Path, given: dict[str, Any]) -> TrainConfig:
    """The settings of the run saved in `out_dir`, with the settings in `given` (the flags a user typed) on top.

    `train` then refuses any given setting that would make the result differ from the uninterrupted run.
    """
    if not checkpoint.exists(out_dir):
        raise checkpoint.CheckpointError(f"{out_dir}: no checkpoint to resume; start one with: minigpt train "
                                         f"--out-dir {out_dir}")
    saved, path = checkpoint.read_train_settings(out_dir)
    # Settings added since checkpoint format 2 began: a run saved before `bias` was one built its model with
    # biases (GPTConfig's default); one saved before `threads` measured nothing (BLAS's default).
    saved.setdefault("bias", True)
    saved.setdefault("threads", 0)
    schema.check_fields(saved, TrainConfig, f"{path}: train.")
    try:
        TrainConfig(**saved)  # each value in range, before any is used
    except ConfigError as error:
        raise checkpoint.CheckpointError(f"{path}: train.{error}") from None
    return TrainConfig(**{**saved, **given, "out_dir": str(out_dir), "resume": True, "overwrite": False})


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
        write("stopping: saving a checkpoint after this step (Ctrl-C again to quit without saving)")

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
