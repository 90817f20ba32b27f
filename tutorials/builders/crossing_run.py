"""Run lecture 07's crossing recipe once and record it: tutorials/records/crossing.json.

A maintainer's script (its result is in the repository; lecture 07 §2 runs the recipe itself in full mode and
reads this record in quick mode):

    OPENBLAS_NUM_THREADS=1 python -m tutorials.builders.crossing_run

It runs `tutorials.crossing.command` (python -m minigpt train with the recipe, one BLAS thread) into a temporary
folder, scores the trained GPT on the yardstick, and compares it window by window with the add-β 5-gram of
lecture 01 §3 (rebuilt here with the same formula) and with Kneser-Ney (tutorials/kneser_ney.py, its order tuned on
the training text alone). The record holds the command, the machine, the wall time, the tokens per second, every
evaluation and the yardstick scores with their paired gaps.
Read next: tutorials/crossing.py.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402 (after the thread settings)

from minigpt.checkpoint import load_model  # noqa: E402
from minigrad.tools.files import write_file  # noqa: E402
from tutorials import crossing, kneser_ney, yardstick  # noqa: E402
from tutorials.machine import cpu_model  # noqa: E402


def main() -> int:
    """Run the recipe, score it on the yardstick beside the 5-gram and Kneser-Ney, and write the record."""
    ys = yardstick.load()
    with tempfile.TemporaryDirectory() as tmp:
        start = time.time()
        metrics = crossing.run(Path(tmp) / "run", threads=1)
        wall = time.time() - start
        model, _ = load_model(Path(tmp) / "run")
        score = ys.score_logits(model)
    ngram = crossing.add_beta_ngram(ys)
    kn, tuning = kneser_ney.for_yardstick(ys)
    kn_score = kn.score(ys)
    evaluations = crossing.evaluations(metrics)
    steps = [m for m in metrics if "tokens_per_s" in m]
    passed = [m for m in evaluations if m["val_loss"] < ngram.nats]
    gap, err = score.gap(ngram)
    kn_gap, kn_err = score.gap(kn_score)
    record = {
        "command": "OPENBLAS_NUM_THREADS=1 " + crossing.shell_command(),
        "settings": crossing.RECIPE, "cpu": cpu_model(), "cpu_count": os.cpu_count(), "blas_threads": 1,
        "wall_seconds": round(wall, 1), "parameters": model.num_parameters(),
        "tokens_per_s": round(float(np.median([m["tokens_per_s"] for m in steps])), 0),
        "crossing_minutes_one_thread": round(passed[0]["elapsed_s"] / 60, 2) if passed else None,
        "evaluations": [{k: m[k] for k in ("iter", "train_loss", "val_loss", "elapsed_s")} for m in evaluations],
        "yardstick": {"fingerprint": ys.fingerprint, "nats": round(score.nats, 4), "stderr": round(score.stderr, 4),
                      "ngram_nats": round(ngram.nats, 4), "gap_vs_ngram": round(gap, 4),
                      "gap_vs_ngram_err": round(err, 4), "kneser_ney_nats": round(kn_score.nats, 4),
                      "kneser_ney_order": tuning.order, "gap_vs_kneser_ney": round(kn_gap, 4),
                      "gap_vs_kneser_ney_err": round(kn_err, 4)},
    }
    crossing.RECORD.parent.mkdir(parents=True, exist_ok=True)
    write_file(crossing.RECORD, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    print(json.dumps({k: v for k, v in record.items() if k != "evaluations"}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
