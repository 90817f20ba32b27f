"""What a training loop needs around minigrad.distributed when it runs as N ranks under `mpiexec -n N`.

Each function is one rule of data-parallel training, the way nanoGPT's train.py applies them:
- `batch_rng`: every rank cuts its batches from its own seeded stream (rank 0's is the one process's stream).
- `micro_steps_per_rank`: `--grad-accum` counts micro-batches over the whole job, so each rank runs 1/N of them
  and one step still sees the same number of examples (nanoGPT: gradient_accumulation_steps //= world size).
- `threads_per_rank`: ranks x BLAS threads <= cores; more threads than cores makes every product wait.
- `is_writer`: only rank 0 evaluates, logs and writes files; the other ranks would write the same bytes.
- `RankGuard`: Ctrl-C stops every rank after the same step (rank 0 saves); a rank that fails ends every rank
  (MPI_Abort) instead of leaving the others waiting for ever in their next all-reduce. `AgreedStop` is the view
  of it that train.py's loop reads, the same as the one-process StopOnSignals.
- `launched_rank_and_size`, `join_job`, `rank_thread_chooser`, `no_sync_unless`, `sync_gradients`,
  `gather_rank_states`, `check_same_world`, `quiet_unless_writer`: how train.py tells one process from a rank,
  joins the job, shares the cores, accumulates and averages gradients, saves every rank's generators (and
  resumes only on as many ranks), and keeps the other ranks' output out of the log.
Read next: minigpt/train.py, which calls these when it runs under mpiexec.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

import minigrad as mg
import minigrad.distributed as dist
from minigpt import checkpoint, schema
from minigpt.errors import ConfigError
from minigpt.threads import ThreadChooser, as_plans
from minigrad.distributed import DistributedDataParallel, ReduceOp

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
# What mpiexec tells each process it starts: MPICH's Hydra (the `mpich` wheel) sets PMI_RANK and PMI_SIZE, Open MPI
# its OMPI_COMM_WORLD_ variables. Reading them needs no mpi4py, so a plain run never imports MPI.
LAUNCHER_VARIABLES = (("PMI_RANK", "PMI_SIZE"), ("OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"))


def launched_rank_and_size() -> tuple[int, int]:
    """(this process's rank, the number of ranks) as mpiexec's environment says; (0, 1) outside mpiexec.

    A ValueError names a variable that is not a count of ranks or a rank among them (PMI_SIZE=abc, PMI_RANK=7 of 2).
    """
    for rank_name, size_name in LAUNCHER_VARIABLES:
        if os.environ.get(size_name):
            size, rank = os.environ[size_name].strip(), os.environ.get(rank_name, "0").strip()
            if not size.isdecimal() or int(size) < 1:
                raise ValueError(f"{size_name}={os.environ[size_name]!r} is not a number of processes (mpiexec "
                                 "sets it)")
            if not rank.isdecimal() or int(rank) >= int(size):
                raise ValueError(f"{rank_name}={os.environ.get(rank_name)!r} is not a rank of the {size} processes "
                                 f"that {size_name} says (0 to {int(size) - 1})")
            return int(rank), int(size)
    return 0, 1


def batch_rng(seed: int, rank: int, world_size: int) -> np.random.Generator:
    """Rank `rank`'s generator of batch positions: default_rng(seed) on rank 0, so rank 0 (and a one-rank job)
    cuts the same batches as a single process; default_rng([seed, rank]) on the others, streams that NumPy's
    SeedSequence makes independent of each other and of rank 0's."""
    if not 0 <= rank < world_size:
        raise ValueError(f"batch_rng: rank {rank} outside 0..{world_size - 1}")
    return np.random.default_rng(seed if rank == 0 else [seed, rank])


def rank_seed(seed: int, rank: int) -> int:
    """The seed of a rank's own randomness after the weights are shared (dropout masks): nanoGPT's seed + rank.
    The initial weights need no care: DistributedDataParallel copies rank 0's to every rank."""
    return seed + rank


def micro_steps_per_rank(grad_accum: int, world_size: int) -> int:
    """Micro-steps each rank runs per optimizer step: grad_accum / world_size (nanoGPT's mapping).

    Each rank divides its loss by this number, and the all-reduce averages over the ranks, so a step's
    gradient is the mean over all grad_accum micro-batches, as in one process.
    """
    if grad_accum < 1 or world_size < 1:
        raise ValueError(f"micro_steps_per_rank: grad_accum={grad_accum} and world_size={world_size} must be >= 1")
    if grad_accum % world_size:
        raise ValueError(f"--grad-accum {grad_accum} must be a multiple of the number of ranks ({world_size}): each "
                         f"rank runs an equal share of the micro-steps")
    return grad_accum // world_size


def threads_per_rank(ranks_on_machine: int, cores: int | None = None) -> tuple[int, str]:
    """BLAS threads for each rank so that ranks x threads <= cores, and the line that says so in the log.

    ranks_on_machine: `group().on_this_machine()[1]` (the MPI backend's count of ranks sharing this machine).

    A thread count set in the environment (OPENBLAS_NUM_THREADS, ...) is the user's and is kept.
    """
    cores = cores or os.cpu_count() or 1
    for name in THREAD_VARIABLES:
        if os.environ.get(name):
            return int(os.environ[name]), f"BLAS threads per rank: {os.environ[name]} (from {name})"
    threads = max(1, cores // ranks_on_machine)
    line = f"BLAS threads per rank: {threads} ({ranks_on_machine} ranks on {cores} cores)"
    if ranks_on_machine > cores:
        line += "; more ranks than cores: each rank gets less than a core and the job runs slower"
    return threads, line


def is_writer(rank: int) -> bool:
    """Whether this rank evaluates, logs, draws progress and writes checkpoints: rank 0 only."""
    return rank == 0


class RankGuard:
    """Ends a job of N ranks cleanly: a signal stops every rank at the same step; a failure aborts them all.

        with RankGuard(dist.process_group.group(), before_abort=save_if_rank_0) as guard:
            for step in ...:
                if guard.stop_agreed():      # every rank, once per step: a collective call
                    save_if_rank_0(guard.stop_reason); break
                ...
        sys.exit(guard.exit_code)

    Why not abort on Ctrl-C at once: mpiexec passes SIGINT to every rank, and a rank that aborts first kills rank 0
    while it writes its checkpoint. Why not stop on the spot either: a rank waiting in an all-reduce cannot run
    Python's signal handler until the call returns. So the first SIGINT or SIGTERM only raises a flag, and
    `stop_agreed()`, one tiny all-reduce (MAX) per step, tells every rank that some rank was asked to stop; they
    all stop after the same step, and rank 0 saves. A second signal aborts at once.

    An exception (SystemExit with a non-zero code too) on any rank aborts the job (MPI_Abort): without it the other
    ranks would wait in their next all-reduce for ever. before_abort(reason) runs first on that rank; one line
    goes to stderr. In a one-rank job the exception is re-raised instead: nothing else is waiting.
    """

    def __init__(self, communicator: Any, before_abort: Callable[[str], None] | None = None) -> None:
        self.communicator = communicator
        self.before_abort = before_abort
        self.stop_reason: str | None = None  # the signal's name once one came (here or, agreed, on another rank)
        self.exit_code = 0
        self._previous: dict[int, Any] = {}

    def _abort(self, reason: str, code: int) -> None:
        if self.before_abort is not None:
            self.before_abort(reason)
        print(f"rank {self.communicator.rank}: {reason}; ending every rank of the job", file=sys.stderr, flush=True)
        self.communicator.abort(code)
        os._exit(code)  # MPI_Abort does not return; should it ever, this rank still must not go on alone

    def _on_signal(self, signum: int, frame: Any) -> None:
        name = signal.Signals(signum).name
        if self.stop_reason is not None:  # the second signal: no more waiting for the end of the step
            self._abort(f"{name} again", 128 + signum)
        self.stop_reason, self.exit_code = name, 128 + signum

    def stop_agreed(self) -> bool:
        """Whether any rank was asked to stop (every rank must call it at the same point of each step)."""
        flag = np.array([self.exit_code], dtype=np.int64)
        if self.communicator.size > 1:
            self.communicator.all_reduce_(flag, ReduceOp.MAX)
        code = int(flag[0])
        if code and self.stop_reason is None:
            self.stop_reason, self.exit_code = f"{signal.Signals(code - 128).name} on another rank", code
        return code != 0

    def __enter__(self) -> RankGuard:
        self._previous = {s: signal.signal(s, self._on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
        return self

    def __exit__(self, kind: type | None, error: BaseException | None, traceback: Any) -> None:
        for s, handler in self._previous.items():
            signal.signal(s, handler)
        if error is None or self.communicator.size == 1:
            return
        if isinstance(error, SystemExit) and error.code in (0, None):
            return
        self._abort(f"{type(error).__name__}: {error}", 1)


class AgreedStop:
    """The loop's view of a stop under mpiexec, as StopOnSignals is in one process: `agree()` once per step (on
    every rank, at the same point) asks every rank whether one was stopped; `requested` and `signum` are then
    the same on every rank, so every rank saves, or steps, alike."""

    def __init__(self, guard: RankGuard) -> None:
        self.guard = guard
        self.signum = 0

    @property
    def requested(self) -> bool:
        return self.signum != 0

    def agree(self) -> None:
        """One all-reduce: from now on `requested` says whether any rank was asked to stop."""
        if self.guard.stop_agreed():
            self.signum = self.guard.exit_code - 128

    def __enter__(self) -> AgreedStop:
        self.guard.__enter__()
        return self

    def __exit__(self, kind: type | None, error: BaseException | None, traceback: Any) -> None:
        self.guard.__exit__(kind, error, traceback)


def no_sync_unless(model: Any, last: bool) -> contextlib.AbstractContextManager:
    """`model.no_sync()` for every micro-step of a step but the last, so the ranks average once per step; nothing
    for a model that one process trains."""
    if last or not isinstance(model, DistributedDataParallel):
        return contextlib.nullcontext()
    return model.no_sync()


def sync_gradients(model: Any) -> None:
    """Average the gradients over the ranks (a DistributedDataParallel model); in one process, nothing to do."""
    if isinstance(model, DistributedDataParallel):
        model.sync_gradients()


def gather_rank_states(communicator: Any, mine: dict[str, Any]) -> list[dict[str, Any]]:
    """Every rank's `mine` (JSON: its generators' states), in rank order, on every rank: a collective call.
    Rank 0 saves them all, so that a resumed job continues every rank's batches and dropout masks exactly."""
    return [json.loads(data) for data in communicator.allgather_bytes(json.dumps(mine).encode())]


@contextlib.contextmanager
def quiet_unless_writer(rank: int) -> Iterator[None]:
    """Send this rank's stdout (log lines, progress) to os.devnull unless it is the writer: rank 0 speaks for the
    job. Errors still go to stderr, from every rank."""
    if is_writer(rank):
        yield
        return
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        yield


def join_job(model: Any, seed: int, rank: int) -> DistributedDataParallel:
    """Join the job that mpiexec started, and wrap the model so that every rank starts from rank 0's weights and
    takes the same steps; then each rank's own dropout masks come from its own seed (rank_seed)."""
    try:
        dist.init_process_group("mpi")
    except RuntimeError as error:  # mpi4py is missing: one line that names the extra
        raise ConfigError(str(error)) from None
    trained = DistributedDataParallel(model)
    mg.manual_seed(rank_seed(seed, rank))
    return trained


def check_same_world(resumed: checkpoint.Checkpoint, world: int, out_dir: str) -> None:
    """A checkpoint of N ranks resumes on N ranks: each rank's batch stream and dropout masks go on where they
    stopped, and no other number of ranks can continue them (a ConfigError says how to resume)."""
    saved = resumed.state.get("world_size", 1)
    if saved != world:
        how = "minigpt train" if saved == 1 else f"mpiexec -n {saved} minigpt train"
        raise ConfigError(f"cannot resume {out_dir} on {world} rank{'s' if world > 1 else ''}: it was trained on "
                          f"{saved}, and each rank's batches and dropout masks continue only there; resume it with "
                          f"`{how} --resume --out-dir {out_dir}`")
    if world > 1:
        states = resumed.state.get("rank_rngs")
        where = resumed.folder / checkpoint.STATE
        if not isinstance(states, list) or len(states) != world or not all(isinstance(s, dict) for s in states):
            raise checkpoint.CheckpointError(f"{where}: rank_rngs must hold the generators of its {world} ranks")
        for state in states:
            schema.state({**resumed.state, **state}, where, resumed.iter_num)  # each rank's, checked as rank 0's


def rank_thread_chooser() -> tuple[ThreadChooser, str]:
    """BLAS threads for this rank (threads_per_rank: the cores shared among the ranks on this machine), fixed for
    the run, and the line that says so. A collective call."""
    threads, line = threads_per_rank(dist.process_group.group().on_this_machine()[1])
    mg.set_num_threads(threads)
    return as_plans(ThreadChooser([threads])), line
