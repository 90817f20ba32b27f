"""How `minigpt train` measures its model: the mean loss over a fixed set of batches of each split, and the curve.

The evaluation batches come from their own generator, rebuilt from the seed each time, so every evaluation of a
run reads the same batches and never shifts the training stream (train.py).
Read next: train.py.
"""

from __future__ import annotations

import importlib.util
from contextlib import closing
from pathlib import Path
from typing import Any

import numpy as np

import minigrad as mg
from minigpt.checkpoint import METRICS
from minigpt.config import TrainConfig
from minigpt.data import Dataset, get_batch
from minigpt.model import GPT
from minigpt.progress import Progress


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


def loss_curve_problem() -> str | None:
    """Why no loss curve can be drawn, or None: matplotlib is missing, or its settings break it (MPLBACKEND=x)."""
    if importlib.util.find_spec("matplotlib") is None:
        return "matplotlib is not installed: pip install matplotlib"
    try:
        import matplotlib  # noqa: F401  (reads MPLBACKEND and matplotlibrc: a bad value raises here)
    except (ImportError, ValueError) as error:
        return f"matplotlib cannot be imported: {error}"
    return None


def plot_losses(metrics: list[dict[str, Any]], path: Path) -> None:
    """Draw the batch loss, the evaluated train/val losses and the learning rate to `path` (a PNG).

    Does nothing when matplotlib cannot draw (train() has said why, once).
    """
    if loss_curve_problem() is not None:
        return
    mg.viz.plot_loss_curves(metrics, path=path, title=None)


def read_metrics(out_dir: str | Path) -> list[dict[str, Any]]:
    """The metrics log of the run in `out_dir` (for notebooks and benchmarks)."""
    return mg.viz.plots.read_metrics(Path(out_dir) / METRICS)
