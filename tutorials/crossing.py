"""The crossing recipe: one `minigpt train` command that takes a GPT below the course's 5-gram on the yardstick.

Lecture 07 §2 runs it live (full mode) or its first steps (quick mode) and draws the validation loss against
wall-clock minutes beside the counting models. The settings were chosen on a development split carved from the
training text (tutorials/builders/scaling_runs.py trains on minigpt's training split alone, validating on its last 10%),
never on the yardstick's windows, and then confirmed once on the yardstick (tutorials/records/crossing.json):

- width and depth: the size whose development curve passed the add-β 5-gram's development loss soonest in
  compute, among those tutorials/builders/scaling_runs.py measured;
- the context stays at the yardstick's 64 characters (a GPT with a shorter one cannot score its windows);
- a large batch and a high learning rate, warmed up briefly and cosine-decayed to a tenth at the last step, which
  buys most of the last stretch of loss in the final few hundred steps;
- few, small evaluations (they count in the wall time too).

`command()` is the whole recipe as the argument list of `python -m minigpt train`; `run()` starts it as a
subprocess with one BLAS thread (as CI runs the lectures) and returns its metrics. `add_beta_ngram` rebuilds the
model it passes, lecture 01 §3's add-β 5-gram, for the maintainer's scripts that score a run on the yardstick.
Read next: 07_summary.py §2.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from minigpt.evaluation import read_metrics
from tutorials.yardstick import Score, Yardstick

RECORD = Path(__file__).resolve().parent / "records" / "crossing.json"

# The recipe, flag by flag (`python -m minigpt train --help` explains each).
RECIPE: dict[str, int | float] = {
    "n-layer": 4, "n-embd": 128, "n-head": 4, "block-size": 64, "batch-size": 32,
    "lr": 3e-3, "warmup-iters": 100, "max-iters": 2000, "eval-interval": 100, "eval-iters": 5,
}


def command(out_dir: str | Path, threads: int = 1, **changes: int | float) -> list[str]:
    """`python -m minigpt train` with the recipe (and `changes`, e.g. max_iters=50) writing to `out_dir`."""
    flags = {**RECIPE, **{key.replace("_", "-"): value for key, value in changes.items()}}
    argv = [sys.executable, "-m", "minigpt", "train", "--out-dir", str(out_dir), "--overwrite",
            "--threads", str(threads)]
    for flag, value in flags.items():
        argv += [f"--{flag}", str(value)]
    return argv


def shell_command(**changes: int | float) -> str:
    """The recipe as one line to type (python -m minigpt train ..., default BLAS threads)."""
    flags = {**RECIPE, **{key.replace("_", "-"): value for key, value in changes.items()}}
    return "python -m minigpt train --out-dir out/crossing " + " ".join(f"--{k} {v}" for k, v in flags.items())


def run(out_dir: str | Path, threads: int = 1, **changes: int | float) -> list[dict[str, Any]]:
    """Run the recipe (with `changes`) in a subprocess; returns its metrics (read_metrics). Raises on failure."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": str(threads), "OMP_NUM_THREADS": str(threads)}
    done = subprocess.run(command(out_dir, threads, **changes), env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"minigpt train failed (exit status {done.returncode}):\n{done.stderr[-3000:]}")
    return read_metrics(out_dir)


def evaluations(metrics: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The evaluation records (iteration, train and val loss, seconds since the loop started)."""
    return [m for m in metrics if "val_loss" in m]


def load_record(path: Path = RECORD) -> dict[str, Any]:
    """The shipped record of the recipe's confirming run: command, machine, wall time, yardstick score."""
    return json.loads(Path(path).read_text(encoding="utf-8"))


# The 5-gram the recipe passes, as lecture 01 §3 builds it (the scripts that make the records score it here).
NGRAM_K, NGRAM_BETA = 4, 2.0  # lecture 01 §3's best add-β model: 4 characters back (a 5-gram), β = 2


def add_beta_ngram(ys: Yardstick, k: int = NGRAM_K, beta: float = NGRAM_BETA) -> Score:
    """Lecture 01 §3's model: P_j(c | h_j) = (N(h_j c) + β P_{j-1}(c | h_{j-1})) / (N(h_j) + β), j = 0..k,
    below j = 0 the uniform 1/V; a window shorter than j characters so far keeps P_{j-1}."""
    V = ys.vocab_size

    def contexts(x: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
        ids = np.zeros(x.shape, dtype=np.int64)
        for j in range(order):
            ids = ids * V + np.roll(x, j, axis=1)  # x[:, t - j] (wrapped positions are masked below)
        return ids, np.arange(x.shape[1]) >= order - 1

    def lookup(keys: np.ndarray, table: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
        i = np.clip(np.searchsorted(table[0], keys), 0, len(table[0]) - 1)
        return np.where(table[0][i] == keys, table[1][i], 0)

    text_x, text_y = ys.train[None, :-1], ys.train[None, 1:]
    p = np.full(ys.y.shape, 1.0 / V)
    for order in range(k + 1):
        ctx, seen = contexts(text_x, order)
        pairs = np.unique(ctx[:, seen] * V + text_y[:, seen], return_counts=True)
        totals = np.unique(ctx[:, seen], return_counts=True)
        wctx, wseen = contexts(ys.x, order)
        p = np.where(wseen, (lookup(wctx * V + ys.y, pairs) + beta * p) / (lookup(wctx, totals) + beta), p)
    return ys.score_probs(p)
