"""Training a GPT on a text, on the CPU or a GPU, with checkpoints that resume exactly: `minigpt train`.

The settings (`TrainConfig`, nanoGPT's CPU configuration for Shakespeare) are in config.py. `train` reads as
nanoGPT's loop: `_prepare` runs the first four phases, then the loop is the fifth, with its
`# forward`, `# backward`, `# update` in plain sight and evaluation, logging and checkpointing as named calls:

    1. data         the text, its tokenizer, the 90/10 split
    2. model        a GPT, fresh or restored from a checkpoint
    3. optimizer    AdamW, decaying only the 2-D weights
    4. resume       the optimizer's state, the iteration, both random generators
    5. loop         # forward, # backward, # update; every eval_interval: evaluate, log, checkpoint

Before any of it, the settings are checked against the folder and the machine (preflight.py): a new run never
writes over a trained one (that takes --resume or --overwrite), and a configuration whose training step would
not fit in memory is refused at once, with the figure (sizing.py). During the run, a loss that is no longer
finite stops it (TrainingError), and the last good checkpoint stays as it was.

With a fixed thread count (--threads N; threads.py), a resumed run ends with the very weights an uninterrupted
one would: the learning rate is a function of the iteration alone, the batch positions come from a generator
whose state is in the checkpoint, and so does minigrad's generator (dropout masks). Evaluation draws from a
third generator, rebuilt from the seed each time, so how often a run evaluates (or was stopped) never shifts
the training batches.
Read next: preflight.py (the checks before a run), signals.py (how a run stops), progress.py, checkpoint.py
(what is saved), cli.py.
"""

from __future__ import annotations

import contextlib
import importlib.util
import math
import time
import warnings
from collections.abc import Iterator
from contextlib import closing
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

import minigrad as mg
from minigpt import checkpoint, preflight, schema
from minigpt.config import GPTConfig, TrainConfig
from minigpt.data import Dataset, get_batch, load_dataset
from minigpt.errors import ConfigError, TrainingError
from minigpt.model import GPT
from minigpt.progress import Progress, write
from minigpt.signals import StopOnSignals
from minigpt.threads import thread_chooser
from minigrad import nn, optim


@dataclass
class TrainResult:
    iter_num: int
    best_val_loss: float
    interrupted: bool  # stopped by Ctrl-C, SIGTERM or a closed stdout (a checkpoint was written, or the old one kept)
    signum: int = 0  # the signal that stopped it (SIGINT, SIGTERM, SIGPIPE); 0: it ran to the end


@dataclass
class _Run:
    """What the loop works on, made by `_prepare` (phases 1-4): the settings, the text, the model and its optimizer,
    and the state a checkpoint saves (the batch generator, the best loss so far, the metrics log)."""

    cfg: TrainConfig  # with lr_decay_iters fixed
    device: str
    data: Dataset
    model: GPT
    optimizer: optim.Optimizer
    resumed: checkpoint.Checkpoint | None
    run_config: dict[str, Any]  # config.json
    batch_rng: np.random.Generator  # where each training batch is cut from the text
    start_iter: int = 0
    best_val_loss: float = math.inf
    metrics: list[dict[str, Any]] = field(default_factory=list)
    # --overwrite over a checkpoint: it stays as it was until this run's first evaluation saves (so that Ctrl-C,
    # the way to abort a mistaken --overwrite, never replaces a trained run with a barely started one)
    keep_old: bool = False

    @property
    def out_dir(self) -> Path:
        return Path(self.cfg.out_dir)


def train(cfg: TrainConfig) -> TrainResult:
    """Train (or, with cfg.resume, continue training) a GPT as `cfg` says; checkpoints go to cfg.out_dir."""
    run = _prepare(cfg)  # 1. data, 2. model, 3. optimizer, 4. resume
    cfg, model, optimizer = run.cfg, run.model, run.optimizer
    stop = StopOnSignals(saves=lambda: not run.keep_old)
    bar = Progress(cfg.max_iters, "train", initial=run.start_iter)
    with stop, closing(bar), _no_float_warnings():
        _announce(run)  # (from here on, a closed stdout stops the run: see signals.py)
        threads, how = thread_chooser(cfg.threads, run.device)
        write(how)

        # 5. loop --------------------------------------------------------------------------------
        iter_num, t_start = run.start_iter, time.perf_counter()
        t_log = t_start  # tokens/s is measured over each log interval, evaluation excluded
        resumed_at = run.start_iter if run.resumed is not None else None
        while True:
            # evaluate, log and checkpoint every eval_interval iterations and at the end (not again right after
            # a resume: that checkpoint is the one we just loaded)
            at_end, saved = iter_num == cfg.max_iters, False
            if (iter_num % cfg.eval_interval == 0 or at_end) and iter_num != resumed_at:
                saved = _evaluate(run, iter_num, t_start, save=iter_num > 0 or (stop.requested and not run.keep_old))
                t_log = time.perf_counter()
            if at_end:
                break
            if stop.requested:
                return _interrupted(run, iter_num, saved, stop.signum)

            # the learning rate is a function of the iteration alone (so a resumed run follows the same curve)
            lr = _learning_rate(cfg, iter_num)
            optim.set_lr(optimizer, lr)
            x, y = get_batch(run.data.train, cfg.batch_size, cfg.block_size, run.batch_rng)
            x, y = mg.tensor(x, device=run.device), mg.tensor(y, device=run.device)  # one copy to the device
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
                t_log = _log_step(run, bar, iter_num, loss, lr, threads.chosen, t_log)
            bar.update(1)
    _say_done(run, iter_num, time.perf_counter() - t_start)
    return TrainResult(iter_num, run.best_val_loss, interrupted=False)


@contextlib.contextmanager
def _no_float_warnings() -> Iterator[None]:
    """Silence NumPy's overflow and invalid-value warnings: a diverging run overflows long before its loss is read
    back, and check_finite then stops it with one line, which the warnings would only precede and repeat.
    (A warnings filter rather than np.errstate, which does not reach minigrad's worker threads.)"""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", r"(overflow|invalid value|divide by zero) encountered", RuntimeWarning)
        yield


def _prepare(cfg: TrainConfig) -> _Run:
    """Phases 1-4: check the settings against the folder and the machine, then read the text (and, with --resume,
    the checkpoint, whose settings and text this run must match), build the model and AdamW, and resume."""
    out_dir = Path(cfg.out_dir)
    device = preflight.check_device(cfg.device)
    preflight.check_out_dir(cfg)

    # 1. data (and, with --resume, the checkpoint) -----------------------------------------------
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

    # 2. model, 3. optimizer ---------------------------------------------------------------------
    model = _build_model(cfg, data, device, resumed)
    # weight decay pulls weight matrices towards 0; biases and LayerNorm gains keep their scale
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    optimizer = optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))

    # 4. resume ----------------------------------------------------------------------------------
    data_path = str(Path(cfg.data).resolve()) if cfg.data is not None else None  # resumable from anywhere
    run_config = {"model": model.config.to_dict(), "train": asdict(replace(cfg, data=data_path)),
                  "data": {"name": data.name, "sha256": data.sha256}, "schedule": schedule}
    run = _Run(cfg, device, data, model, optimizer, resumed, run_config, np.random.default_rng(cfg.seed),
               keep_old=cfg.overwrite and checkpoint.exists(out_dir))
    if resumed is not None:
        _resume(run, resumed)
    checkpoint.recover(out_dir)  # what an interrupted save left behind: finished, or removed
    return run


def _build_model(cfg: TrainConfig, data: Dataset, device: str, resumed: checkpoint.Checkpoint | None) -> GPT:
    """A GPT for the text's vocabulary (refused at once if its training step cannot fit), fresh or restored."""
    try:
        model_config = GPTConfig(vocab_size=data.tokenizer.vocab_size, block_size=cfg.block_size,
                                 n_layer=cfg.n_layer, n_head=cfg.n_head, n_embd=cfg.n_embd, dropout=cfg.dropout,
                                 bias=cfg.bias, pos_encoding=cfg.pos_encoding, norm_position=cfg.norm_position)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    preflight.check_memory(model_config, cfg.batch_size, device)
    preflight.make_out_dir(Path(cfg.out_dir))
    mg.manual_seed(cfg.seed)  # the initial weights, then the dropout masks, come from this generator
    model = GPT(model_config)
    if resumed is not None:
        checkpoint.load_weights(model, resumed)
    model.to(device)
    model.train()
    return model


def _resume(run: _Run, resumed: checkpoint.Checkpoint) -> None:
    """The optimizer's moments, the iteration, the metrics and both generators exactly as they were saved."""
    checkpoint.load_optimizer(run.optimizer, resumed)
    run.batch_rng.bit_generator.state = resumed.state["batch_rng"]
    mg.random.set_rng_state(resumed.state["minigrad_rng"])
    run.start_iter, run.best_val_loss = resumed.iter_num, resumed.state["best_val_loss"]
    run.metrics = [m for m in resumed.metrics if m["iter"] <= run.start_iter]
    if run.device != "cpu" and run.cfg.dropout > 0:
        write("note: on a GPU, dropout masks restart from the seed after a resume (minigrad saves only the "
              "host generator), so this run will not match an uninterrupted one bit for bit")
    if run.start_iter > run.cfg.max_iters:
        raise ConfigError(f"the checkpoint in {run.out_dir} is at iteration {run.start_iter}, past --max-iters "
                          f"{run.cfg.max_iters}")


def _announce(run: _Run) -> None:
    """Say what is about to be trained, on what, and for how long."""
    cfg = run.cfg
    if importlib.util.find_spec("matplotlib") is None:
        write("note: no loss curve (matplotlib is not installed: pip install matplotlib)")
    n_params, eval_batches = run.model.num_parameters(), evaluation_batches(cfg)
    write(f"training on {run.data.name}: {len(run.data.train):,} train / {len(run.data.val):,} val characters, "
          f"vocabulary {run.data.tokenizer.vocab_size}; {n_params / 1e6:.2f}M parameters on {run.device}; "
          f"iterations {run.start_iter} -> {cfg.max_iters}; each evaluation: {eval_batches} batch"
          f"{'es' if eval_batches > 1 else ''} of {cfg.batch_size} x {cfg.block_size} per split")
    if run.resumed is not None:
        preflight.explain_schedule(cfg, run.run_config["schedule"], run.start_iter)


def _learning_rate(cfg: TrainConfig, iter_num: int) -> float:
    """Linear warmup, then cosine decay from cfg.lr to lr / 10 at cfg.lr_decay_iters."""
    return optim.cosine_with_warmup(iter_num, cfg.lr, cfg.warmup_iters, cfg.lr_decay_iters, cfg.lr / 10)


def _evaluate(run: _Run, iter_num: int, t_start: float, save: bool) -> bool:
    """Estimate both losses, log them, and (if `save`) checkpoint; returns whether it saved."""
    losses = estimate_loss(run.model, run.data, run.cfg, run.device)
    preflight.check_finite(losses["train"], iter_num, run.cfg)
    preflight.check_finite(losses["val"], iter_num, run.cfg)
    run.best_val_loss = min(run.best_val_loss, losses["val"])
    # Every record's lr is the one the last step used, as in the per-step records.
    run.metrics.append({"iter": iter_num, "train_loss": losses["train"], "val_loss": losses["val"],
                        "lr": _learning_rate(run.cfg, max(iter_num - 1, 0)),
                        "elapsed_s": round(time.perf_counter() - t_start, 2)})
    write(f"iter {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
    if save:  # (the fresh weights are not worth a file, nor a curve of one point)
        _save(run, iter_num)
    return save


def _save(run: _Run, iter_num: int) -> None:
    """Checkpoint the run at `iter_num` (model, optimizer, generators, metrics), then redraw the loss curve."""
    state = {"iter_num": iter_num, "best_val_loss": run.best_val_loss,
             "batch_rng": run.batch_rng.bit_generator.state, "minigrad_rng": mg.random.get_rng_state()}
    try:
        checkpoint.save_checkpoint(run.out_dir, run.model, run.optimizer, run.data.tokenizer, run.run_config, state,
                                   run.metrics, allow_earlier=run.cfg.overwrite)
    except OSError as error:  # a full disk, a folder gone: the previous checkpoint is intact
        raise TrainingError(f"could not save the checkpoint of iteration {iter_num} in {run.out_dir} "
                            f"({error.strerror or error}); {preflight.kept(run.out_dir)}") from None
    run.keep_old = False
    plot_losses(run.metrics, run.out_dir / "loss_curve.png")


def _interrupted(run: _Run, iter_num: int, saved: bool, signum: int) -> TrainResult:
    """The end of a run stopped by a signal: save (unless this iteration was just saved, or --overwrite's old
    checkpoint is still to be kept), and say how to go on."""
    if run.keep_old:
        write(f"interrupted at iteration {iter_num}, before this run's first save: {preflight.kept(run.out_dir)} as "
              "it was (--overwrite replaces it at the new run's first evaluation)")
        return TrainResult(iter_num, run.best_val_loss, interrupted=True, signum=signum)
    if not saved:
        _save(run, iter_num)
    write(f"interrupted at iteration {iter_num}: checkpoint saved in {run.out_dir}; continue with "
          f"`minigpt train --resume --out-dir {run.out_dir}`")
    return TrainResult(iter_num, run.best_val_loss, interrupted=True, signum=signum)


def _log_step(run: _Run, bar: Progress, iter_num: int, loss: mg.Tensor, lr: float, threads: int | None,
              t_log: float) -> float:
    """Read the training loss back (the only device sync between evaluations), check it, and record it with the
    tokens per second since the last log; returns the time of this log."""
    cfg = run.cfg
    loss_value = loss.item()
    preflight.check_finite(loss_value, iter_num, run.cfg)
    now = time.perf_counter()
    tokens_per_s = cfg.log_interval * cfg.batch_size * cfg.block_size / (now - t_log)
    run.metrics.append({"iter": iter_num, "loss": loss_value, "lr": lr, "tokens_per_s": round(tokens_per_s, 1),
                        "threads": threads})
    bar.set_postfix(loss=f"{loss_value:.4f}", lr=f"{lr:.2e}", tok_s=f"{tokens_per_s:,.0f}")
    return now


def _say_done(run: _Run, iter_num: int, seconds: float) -> None:
    ran = iter_num - run.start_iter
    if ran == 0 and run.resumed is not None:
        write(f"nothing to do: the checkpoint in {run.out_dir} is already at iteration {iter_num} (--max-iters); "
              "give a larger --max-iters to train on")
    elif ran == 0:
        write("done: 0 iterations (--max-iters 0): the untrained model was evaluated; no checkpoint written")
    else:
        write(f"done: {ran} iterations ({run.start_iter} -> {iter_num}) in {seconds:.1f} s, best val loss "
              f"{run.best_val_loss:.4f}; checkpoint in {run.out_dir}")


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


def read_metrics(out_dir: str | Path) -> list[dict[str, Any]]:
    """The metrics log of the run in `out_dir` (for notebooks and benchmarks)."""
    return mg.viz.plots.read_metrics(Path(out_dir) / checkpoint.METRICS)
