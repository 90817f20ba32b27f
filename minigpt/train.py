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

Under `mpiexec -n N` the same loop runs as N ranks (distributed_training.py): each draws its own batches and runs
its share of --grad-accum's micro-batches, the gradients are averaged once per step (one all-reduce), so every
rank takes the same step with the same weights; rank 0 alone evaluates, logs and writes the checkpoint, which
holds every rank's generators, so that a run resumed on as many ranks ends as an uninterrupted one.
Read next: preflight.py (the checks before a run), signals.py (how a run stops), progress.py, checkpoint.py
(what is saved), cli.py.
"""

from __future__ import annotations

import contextlib
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
import minigrad.distributed as dist
from minigpt import batch_threads, checkpoint, preflight
from minigpt import distributed_training as ddp
from minigpt.config import GPTConfig, TrainConfig
from minigpt.data import Dataset, get_batch, load_dataset
from minigpt.errors import ConfigError, TrainingError
from minigpt.evaluation import estimate_loss, evaluation_batches, loss_curve_problem, plot_losses
from minigpt.model import GPT
from minigpt.progress import Progress, write
from minigpt.signals import StopOnSignals
from minigpt.threads import Plan, ThreadChooser, training_chooser
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

    cfg: TrainConfig  # with lr_decay_iters and grad_accum fixed
    device: str
    data: Dataset
    model: GPT
    optimizer: optim.Optimizer
    resumed: checkpoint.Checkpoint | None
    run_config: dict[str, Any]  # config.json
    batch_rng: np.random.Generator  # where each training batch is cut from the text (this rank's own stream)
    trained: GPT | dist.DistributedDataParallel  # what the loop calls: the model, or under mpiexec its wrapper
    rank: int = 0  # under `mpiexec -n world`: this process's rank; one process is rank 0 of 1
    world: int = 1
    micro_steps: int = 1  # forward-backward passes per step on this rank (--grad-accum / world)
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
    run = _prepare(cfg)  # 1. data, 2. model, 3. optimizer, 4. resume (under mpiexec: on every rank)
    cfg, model, optimizer = run.cfg, run.trained, run.optimizer
    with (preflight.only_run_in(run.out_dir, run.rank), ddp.quiet_unless_writer(run.rank), _stopper(run) as stop,
          closing(Progress(cfg.max_iters, "train", initial=run.start_iter)) as bar, _no_float_warnings()):
        _announce(run)  # (from here on, a closed stdout stops the run: see signals.py)
        threads, how = _thread_chooser(run)
        write(how)

        # 5. loop --------------------------------------------------------------------------------
        iter_num, t_start = run.start_iter, time.perf_counter()
        t_log = t_start  # tokens/s is measured over each log interval, evaluation excluded
        resumed_at = run.start_iter if run.resumed is not None else None
        while True:
            stop.agree()  # (under mpiexec: whether any rank was asked to stop, the same answer on every rank)
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
            threads.before_step()
            t_step = time.perf_counter()
            optimizer.zero_grad()
            loss = _accumulate(run, stop, threads.current)  # forward and backward over --grad-accum's micro-batches
            if loss is None:  # a signal came between micro-steps: the half-made step is dropped, the run saved
                continue
            ddp.sync_gradients(model)  # under mpiexec: the mean over every rank's micro-batches too
            if cfg.grad_clip > 0:
                nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            # update
            optimizer.step()
            threads.after_step(time.perf_counter() - t_step)

            # Keep only the loss value: its graph holds every activation, freed here before the next forward.
            loss = loss.detach()
            iter_num += 1
            if iter_num % cfg.log_interval == 0:
                t_log = _log_step(run, bar, iter_num, loss, lr, threads.current, t_log)
            bar.update(1)
        _say_done(run, iter_num, time.perf_counter() - t_start)
    return TrainResult(iter_num, run.best_val_loss, interrupted=False)


def _accumulate(run: _Run, stop: StopOnSignals | ddp.AgreedStop, plan: Plan) -> mg.Tensor | None:
    """The step's gradient, the mean over its micro-batches (at least one), and the last one's loss; None when a
    signal came between two (in one process: under mpiexec the ranks agree on a stop once a step, and finish it)."""
    for micro_step in range(run.micro_steps):
        if micro_step and stop.requested and run.world == 1:
            return None
        x, y = _next_batch(run)
        if plan.shards > 1:  # forward and backward, a part of the batch on each thread (threads.py's plans)
            loss = batch_threads.split(plan.shards).forward_backward(run.trained, x, y, scale=1 / run.micro_steps)
            continue
        with ddp.no_sync_unless(run.trained, last=micro_step == run.micro_steps - 1):
            # forward
            _, loss = run.trained(x, y)
            # backward
            (loss / run.micro_steps).backward()
    return loss


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
    rank, world = ddp.launched_rank_and_size()  # (0, 1) unless mpiexec started this process as one of several
    device = preflight.check_device(cfg.device)
    preflight.check_out_dir(cfg)
    if world > 1 and device != "cpu":
        raise ConfigError(f"under mpiexec, minigpt train runs on the CPU (each rank a share of its cores); --device "
                          f"{device} is for one process")

    # 1. data (and, with --resume, the checkpoint) -----------------------------------------------
    if cfg.data is not None and cfg.corpus != "shakespeare":
        raise ConfigError(f"--corpus {cfg.corpus} and --data {cfg.data}: give one text to train on, not both")
    resumed = checkpoint.load_checkpoint(out_dir) if cfg.resume else None
    if resumed is not None:
        preflight.check_resumable(cfg, resumed.config["train"])
        ddp.check_same_world(resumed, world, cfg.out_dir)
    data = load_dataset(cfg.data, cfg.block_size, cfg.corpus)
    if resumed is not None:
        preflight.check_same_data(data, resumed)
    decay_from = "--lr-decay-iters" if cfg.lr_decay_iters is not None else "--max-iters"
    lr_decay_iters = cfg.lr_decay_iters if cfg.lr_decay_iters is not None else cfg.max_iters
    # fixed now, so that a resumed run keeps this schedule, and the number of examples in a step
    saved_accum = resumed.config["train"].get("grad_accum") if resumed is not None else None  # (None: older runs)
    grad_accum = cfg.grad_accum or saved_accum or (1 if resumed is not None else world)
    cfg = replace(cfg, lr_decay_iters=lr_decay_iters, grad_accum=grad_accum)
    try:
        micro_steps = ddp.micro_steps_per_rank(cfg.grad_accum, world)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    schedule = resumed.config["schedule"] if resumed is not None else preflight.schedule_record(cfg, decay_from)

    # 2. model, 3. optimizer ---------------------------------------------------------------------
    model = _build_model(cfg, data, device, resumed)
    trained = ddp.join_job(model, cfg.seed, rank) if world > 1 else model
    # weight decay pulls weight matrices towards 0; biases and LayerNorm gains keep their scale
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    optimizer = optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))

    # 4. resume ----------------------------------------------------------------------------------
    data_path = str(Path(cfg.data).resolve()) if cfg.data is not None else None  # resumable from anywhere
    run_config = {"model": model.config.to_dict(), "train": asdict(replace(cfg, data=data_path)),
                  "data": {"name": data.name, "sha256": data.sha256}, "schedule": schedule}
    run = _Run(cfg, device, data, model, optimizer, resumed, run_config, ddp.batch_rng(cfg.seed, rank, world),
               trained, rank, world, micro_steps, keep_old=cfg.overwrite and checkpoint.exists(out_dir))
    if resumed is not None:
        _resume(run, resumed)
    if ddp.is_writer(rank):
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
    """The optimizer's moments, the iteration, the metrics and both generators exactly as they were saved
    (under mpiexec: this rank's generators)."""
    checkpoint.load_optimizer(run.optimizer, resumed)
    generators = resumed.state["rank_rngs"][run.rank] if run.world > 1 else resumed.state
    run.batch_rng.bit_generator.state = generators["batch_rng"]
    mg.random.set_rng_state(generators["minigrad_rng"])
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
    problem = loss_curve_problem()
    if problem is not None:
        write(f"note: no loss curve ({problem})")
    n_params, eval_batches = run.model.num_parameters(), evaluation_batches(cfg)
    write(f"training on {run.data.name}: {len(run.data.train):,} train / {len(run.data.val):,} val characters, "
          f"vocabulary {run.data.tokenizer.vocab_size}; {n_params / 1e6:.2f}M parameters on {run.device}; "
          f"iterations {run.start_iter} -> {cfg.max_iters}; each evaluation: {eval_batches} batch"
          f"{'es' if eval_batches > 1 else ''} of {cfg.batch_size} x {cfg.block_size} per split")
    if cfg.grad_accum > 1:
        ranks = f", {run.micro_steps} on each of {run.world} ranks" if run.world > 1 else ""
        write(f"each step: {cfg.grad_accum} micro-batches of {cfg.batch_size}{ranks}, their gradients averaged "
              f"({cfg.grad_accum * cfg.batch_size} sequences a step)")
    if run.resumed is not None:
        preflight.explain_schedule(cfg, run.run_config["schedule"], run.start_iter)


def _stopper(run: _Run) -> StopOnSignals | ddp.AgreedStop:
    """How the loop learns that it must stop: in one process a signal sets a flag; under mpiexec the ranks agree
    once per step (a failing rank ends them all: RankGuard)."""
    if run.world == 1:
        return StopOnSignals(saves=lambda: not run.keep_old)
    return ddp.AgreedStop(ddp.RankGuard(dist.process_group.group()))


def _thread_chooser(run: _Run) -> tuple[ThreadChooser, str]:
    """Threads: measured as the run goes (threads.py) in one process, batch threads too without dropout; under
    mpiexec, the cores shared among the ranks on this machine (unless --threads or the environment says otherwise)."""
    if run.world == 1 or run.cfg.threads > 0:
        return training_chooser(run.cfg.threads, run.device, can_split=run.world == 1 and run.cfg.dropout == 0)
    return ddp.rank_thread_chooser()


def _next_batch(run: _Run) -> tuple[mg.Tensor, mg.Tensor]:
    """The next training batch from this rank's stream, as tensors on the device (one copy)."""
    x, y = get_batch(run.data.train, run.cfg.batch_size, run.cfg.block_size, run.batch_rng)
    return mg.tensor(x, device=run.device), mg.tensor(y, device=run.device)


def _learning_rate(cfg: TrainConfig, iter_num: int) -> float:
    """Linear warmup, then cosine decay from cfg.lr to lr / 10 at cfg.lr_decay_iters."""
    return optim.cosine_with_warmup(iter_num, cfg.lr, cfg.warmup_iters, cfg.lr_decay_iters, cfg.lr / 10)


def _evaluate(run: _Run, iter_num: int, t_start: float, save: bool) -> bool:
    """Estimate both losses, log them, and (if `save`) checkpoint; returns whether it saved.
    Under mpiexec rank 0 evaluates its copy of the model (every rank's is the same) while the others wait."""
    if ddp.is_writer(run.rank):
        _record_losses(run, iter_num, t_start)
    if save:  # (the fresh weights are not worth a file, nor a curve of one point)
        _save(run, iter_num)
    return save


def _record_losses(run: _Run, iter_num: int, t_start: float) -> None:
    """Estimate both losses, check them, and log them."""
    losses = estimate_loss(run.model, run.data, run.cfg, run.device)
    preflight.check_finite(losses["train"], iter_num, run.cfg)
    preflight.check_finite(losses["val"], iter_num, run.cfg)
    run.best_val_loss = min(run.best_val_loss, losses["val"])
    # Every record's lr is the one the last step used, as in the per-step records.
    run.metrics.append({"iter": iter_num, "train_loss": losses["train"], "val_loss": losses["val"],
                        "lr": _learning_rate(run.cfg, max(iter_num - 1, 0)),
                        "elapsed_s": round(time.perf_counter() - t_start, 2)})
    write(f"iter {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")


def _save(run: _Run, iter_num: int) -> None:
    """Checkpoint the run at `iter_num` (model, optimizer, generators, metrics), then redraw the loss curve.
    Under mpiexec every rank calls it (each sends its generators to rank 0), and rank 0 writes."""
    generators = {"batch_rng": run.batch_rng.bit_generator.state, "minigrad_rng": mg.random.get_rng_state()}
    state = {"iter_num": iter_num, "best_val_loss": run.best_val_loss, **generators}
    if run.world > 1:
        state["world_size"] = run.world
        state["rank_rngs"] = ddp.gather_rank_states(dist.process_group.group(), generators)
    if not ddp.is_writer(run.rank):
        return
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
    command = "minigpt train" if run.world == 1 else f"mpiexec -n {run.world} minigpt train"
    write(f"interrupted at iteration {iter_num}: checkpoint saved in {run.out_dir}; continue with "
          f"`{command} --resume --out-dir {run.out_dir}`")
    return TrainResult(iter_num, run.best_val_loss, interrupted=True, signum=signum)


def _log_step(run: _Run, bar: Progress, iter_num: int, loss: mg.Tensor, lr: float, threads: Plan,
              t_log: float) -> float:
    """Read the training loss back (the only device sync between evaluations), check it, and record it with the
    tokens per second since the last log; returns the time of this log."""
    cfg = run.cfg
    loss_value = loss.item()
    preflight.check_finite(loss_value, iter_num, run.cfg)
    now = time.perf_counter()
    tokens_per_s = cfg.log_interval * cfg.grad_accum * cfg.batch_size * cfg.block_size / (now - t_log)  # every rank's
    run.metrics.append({"iter": iter_num, "loss": loss_value, "lr": lr, "tokens_per_s": round(tokens_per_s, 1),
                        "threads": threads.blas, "batch_threads": threads.shards})
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

