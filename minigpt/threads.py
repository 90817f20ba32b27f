"""How many threads `minigpt train` uses: measured while it trains, so a busy machine does not collapse a run.

The choice, in one place:

- **You said so**: `--threads N`, or OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / MKL_NUM_THREADS in the
  environment: that is used, and nothing is measured.
- **On a GPU**: the products run on the device; the host's threads are left as they are.
- **Otherwise (the default)**: measure. Matrix products split over one thread per core are fastest on a quiet
  machine, but on a machine whose cores are busy with other work the same split can make each step several
  times slower than one thread (a product waits for its slowest thread, and a descheduled one stalls the
  rest). Which case holds can change during a run, when other work starts or stops. So every `every` steps the
  run tries each candidate (all cores, half of them, ..., one) for a few steps, keeps the fastest, and trains
  on with it; and sooner, when a step of the chosen count takes three times as long as it did in its trial. A
  trial costs a handful of steps, some of them slower; this is a few percent of a run at most.
- **One more candidate in training** (`plans`): the batch cut into one part per core, each part's forward and
  backward on its own thread with one BLAS thread (batch_threads.py): every op on every core, as two processes
  under `mpiexec -n 2` use them, where BLAS threads speed up the products alone. It is measured like the others.

The thread count never changes what is computed beyond float rounding of the products, so a resumed run and an
uninterrupted one still agree to float32 rounding; bit-for-bit repeatability needs a fixed count (--threads 1).
Read next: train.py, which calls `before_step` and `after_step` around each training step.
"""

from __future__ import annotations

import os
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import minigrad as mg

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def candidates(cores: int) -> list[int]:
    """The thread counts worth trying on a machine with `cores` cores: cores, cores / 2, ..., 1."""
    counts = [cores]
    while counts[-1] > 1:
        counts.append(counts[-1] // 2)
    return counts


@dataclass(frozen=True)
class Plan:
    """How a training step uses the cores: the batch cut into `shards` parts on as many threads (batch_threads.py),
    each part's matrix products on `blas` BLAS threads."""

    shards: int
    blas: int

    def __str__(self) -> str:
        return f"{self.blas} BLAS" if self.shards == 1 else f"{self.shards} batch threads x {self.blas} BLAS"


def plans(cores: int) -> list[Plan]:
    """The ways a training step may use `cores` cores: the batch split over every core (one BLAS thread each),
    then each BLAS thread count of `candidates` on the whole batch."""
    split = [Plan(cores, 1)] if cores > 1 else []
    return split + [Plan(1, n) for n in candidates(cores)]


def fixed_by_user(threads: int) -> str | None:
    """Why the thread count is not measured (the user set it), or None when it is ours to choose."""
    if threads > 0:
        return f"--threads {threads}"
    for variable in THREAD_VARIABLES:
        if os.environ.get(variable):
            return f"{variable}={os.environ[variable]}"
    return None


class ThreadChooser:
    """Tries the candidate thread counts every `every` steps of training, and keeps the one whose median step was
    fastest. A trial takes the candidates in turn, round after round (A B C A B C ...), so that a change in the
    machine's speed while it lasts falls on each alike (tried one after another, a candidate caught in a slow moment
    lost to a slower one tried in a fast one, and the run kept that for `every` steps). The first round settles
    (a candidate's first step is slower: memory, caches) and is not counted; `trial_steps` rounds are timed.
    A step of the chosen count that takes SLOWDOWN times its median in the trial means the machine has changed
    (other work started): the next step begins a new trial, rather than the run going on many times slower until
    `every` comes round.

    The candidates are BLAS thread counts, or training's `Plan`s; `use` puts one in force (by default
    mg.set_num_threads; a plan's BLAS threads for a plan), and `current` is the one in force for this step."""

    SLOWDOWN = 3.0

    def __init__(self, counts: list[Any], every: int = 250, trial_steps: int = 3,
                 use: Callable[[Any], None] | None = None) -> None:
        self.counts, self.every, self.trial_steps = counts, every, trial_steps
        self.use = use or use_blas_threads
        self.chosen = counts[0]
        self.plan: list[Any] = []  # the candidate of each coming trial step
        self.times: dict[Any, list[float]] = {}
        self.due = True  # a trial is due: before the first step, and when the chosen count has turned slow
        self.steps_since_trial = 0
        self.expected: float | None = None  # the chosen count's median step in the last trial
        self.trying: Any = None  # the candidate of this trial step; None outside a trial

    def before_step(self) -> None:
        """Set the thread count for the step about to run."""
        if not self.plan and (self.due or self.steps_since_trial >= self.every) and len(self.counts) > 1:
            self.plan = [n for _ in range(self.trial_steps + 1) for n in self.counts]  # round after round
            self.times = {n: [] for n in self.counts}
            self.due = False
        if self.plan:
            self.trying = self.plan.pop(0)
            self.use(self.trying)
        else:
            self.trying = None

    @property
    def current(self) -> Any:
        """The candidate in force for the step about to run (after `before_step`)."""
        return self.chosen if self.trying is None else self.trying

    def after_step(self, seconds: float) -> None:
        """Record how long the step took; at the end of a trial, keep the fastest count."""
        if self.trying is None:
            self.steps_since_trial += 1
            if self.expected is not None and seconds > self.SLOWDOWN * self.expected:
                self.due = True
            return
        self.times[self.trying].append(seconds)
        if not self.plan:  # the trial is over
            medians = {n: statistics.median(t[1:]) for n, t in self.times.items()}  # t[0]: the settling step
            self.chosen = min(medians, key=medians.__getitem__)
            self.expected = medians[self.chosen]
            self.use(self.chosen)
            self.steps_since_trial = 0


def thread_chooser(threads: int, device: str, every: int = 250, trial_steps: int = 3) -> tuple[ThreadChooser, str]:
    """The chooser a run uses, and a line saying how its thread count is decided.

    threads: `--threads` (0: measure, a trial of `trial_steps` steps per count every `every` steps). A chooser
    with a single candidate never tries another."""
    if threads > 0:
        mg.set_num_threads(threads)
    reason = fixed_by_user(threads)
    if reason is not None:
        return ThreadChooser([mg.get_num_threads()]), f"BLAS threads: {mg.get_num_threads()} ({reason})"
    if device != "cpu":
        return ThreadChooser([mg.get_num_threads()]), "BLAS threads: as they are (the products run on the device)"
    chooser = ThreadChooser(candidates(os.cpu_count() or 1), every, trial_steps)
    return chooser, (f"BLAS threads: measured every {chooser.every} steps among {chooser.counts}, the fastest kept "
                     "(--threads N to fix it)")


def use_blas_threads(count: int) -> None:
    mg.set_num_threads(count)


def use_plan(plan: Plan) -> None:
    mg.set_num_threads(plan.blas)  # (the loop reads plan.shards from the chooser's `current`)


def training_chooser(threads: int, device: str, can_split: bool, every: int = 250,
                     trial_steps: int = 3) -> tuple[ThreadChooser, str]:
    """`thread_chooser` for `minigpt train`, over `Plan`s: when the count is measured and the step `can_split` (one
    process on the CPU, no dropout: batch_threads.py), the batch split over the cores is one more candidate."""
    chooser, how = thread_chooser(threads, device, every, trial_steps)
    if len(chooser.counts) == 1 or not can_split:
        return as_plans(chooser), how
    measured = ThreadChooser(plans(os.cpu_count() or 1), every, trial_steps, use_plan)
    return measured, (f"threads: measured every {every} steps among {', '.join(map(str, measured.counts))}, the "
                      "fastest kept (--threads N fixes N BLAS threads, the batch on one thread)")


def as_plans(chooser: ThreadChooser) -> ThreadChooser:
    """The same chooser over BLAS thread counts, as `Plan`s of the whole batch on one thread."""
    return ThreadChooser([Plan(1, n) for n in chooser.counts], chooser.every, chooser.trial_steps, use_plan)
