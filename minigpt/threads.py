"""How many BLAS threads `minigpt train` uses: measured while it trains, so a busy machine does not collapse a run.

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

The thread count never changes what is computed beyond float rounding of the products, so a resumed run and an
uninterrupted one still agree to float32 rounding; bit-for-bit repeatability needs a fixed count (--threads 1).
Read next: train.py, which calls `before_step` and `after_step` around each training step.
"""

from __future__ import annotations

import os
import statistics

import minigrad as mg

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")


def candidates(cores: int) -> list[int]:
    """The thread counts worth trying on a machine with `cores` cores: cores, cores / 2, ..., 1."""
    counts = [cores]
    while counts[-1] > 1:
        counts.append(counts[-1] // 2)
    return counts


def fixed_by_user(threads: int) -> str | None:
    """Why the thread count is not measured (the user set it), or None when it is ours to choose."""
    if threads > 0:
        return f"--threads {threads}"
    for variable in THREAD_VARIABLES:
        if os.environ.get(variable):
            return f"{variable}={os.environ[variable]}"
    return None


class ThreadChooser:
    """Tries each candidate thread count for `trial_steps` steps (after one step to settle) every `every`
    steps of training, and keeps the one whose median step was fastest. A step of the chosen count that takes
    SLOWDOWN times its median in the trial means the machine has changed (other work started): the next step
    begins a new trial, rather than the run going on many times slower until `every` comes round."""

    SLOWDOWN = 3.0

    def __init__(self, counts: list[int], every: int = 250, trial_steps: int = 3) -> None:
        self.counts, self.every, self.trial_steps = counts, every, trial_steps
        self.chosen = counts[0]
        self.plan: list[int] = []  # the thread count of each coming trial step
        self.times: dict[int, list[float]] = {}
        self.due = True  # a trial is due: before the first step, and when the chosen count has turned slow
        self.steps_since_trial = 0
        self.expected: float | None = None  # the chosen count's median step in the last trial
        self.trying: int | None = None

    def before_step(self) -> None:
        """Set the thread count for the step about to run."""
        if not self.plan and (self.due or self.steps_since_trial >= self.every) and len(self.counts) > 1:
            self.plan = [n for n in self.counts for _ in range(self.trial_steps + 1)]
            self.times = {n: [] for n in self.counts}
            self.due = False
        if self.plan:
            self.trying = self.plan.pop(0)
            mg.set_num_threads(self.trying)
        else:
            self.trying = None

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
            mg.set_num_threads(self.chosen)
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
