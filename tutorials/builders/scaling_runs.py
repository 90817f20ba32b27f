"""Make lecture 07 §5's scaling records: GPTs of a few sizes, validation loss against training tokens and FLOPs.

This is a maintainer's script (its result, tutorials/records/scaling.json, is in the repository):

    OPENBLAS_NUM_THREADS=1 python -m tutorials.builders.scaling_runs                   # every size, one after another
    OPENBLAS_NUM_THREADS=1 python -m tutorials.builders.scaling_runs --sizes 3x96      # one size (replaces its record)

Every run is `minigpt train` (in-process, `minigpt.train.train`) on a **development split carved from the training
text**, never on the held-out text the yardstick scores: the script writes minigpt's own training split (the first
90% of the built-in Shakespeare corpus) to a file and trains on it with `--data`, so the run learns from its first
90% and validates on its last 10%. The Kneser-Ney model is tuned and scored on the same development text
(kneser_ney.tune_order), which gives the target that the curves must cross, measured the same way.

Each size runs the same recipe (batch 32 x 64 characters, AdamW at 3e-3 after 100 warmup steps, one BLAS thread)
with the learning rate held near its peak (the cosine decay is stretched over 20 times the run), so that every
point of a curve is a loss the model has at that compute, not one its schedule has rushed to. Each evaluation
reads the same 8 batches of 32 x 64 validation characters. The record holds, per size: the settings, N, the FLOPs
per token (tutorials/scaling.py), and at each evaluation the iteration, tokens, FLOPs, losses and wall seconds.
Read next: tutorials/scaling.py (the fit), then tutorials/07_summary.py §5.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads: one BLAS thread, repeatable results
os.environ.setdefault("OMP_NUM_THREADS", "1")

from minigpt.data import load_dataset  # noqa: E402 (after the thread settings)
from minigpt.evaluation import read_metrics  # noqa: E402
from minigpt.train import TrainConfig, train  # noqa: E402
from minigrad.tools.files import write_file  # noqa: E402
from tutorials import kneser_ney  # noqa: E402
from tutorials.machine import cpu_model  # noqa: E402
from tutorials.scaling import SCALING, flops_per_token, matmul_weights  # noqa: E402

# name -> (n_layer, n_embd, max_iters): heads of 32 channels each; longer runs for the cheaper sizes
SIZES = {"2x64": (2, 64, 2000), "3x96": (3, 96, 1500), "4x128": (4, 128, 1200), "4x192": (4, 192, 800)}
RECIPE = dict(batch_size=32, block_size=64, lr=3e-3, warmup_iters=100, eval_interval=100, eval_iters=20,
              dropout=0.0, seed=1337, threads=1)



def dev_target(train_ids, vocab_size: int) -> dict:
    """Kneser-Ney tuned and scored on the development split: the loss a GPT must beat there."""
    tuning = kneser_ney.tune_order(train_ids, vocab_size)
    return {"kneser_ney_dev": round(tuning.dev_nats[tuning.order, tuning.scale], 4), "kneser_ney_order": tuning.order,
            "kneser_ney_scale": tuning.scale}


def run_size(name: str, data_path: Path, vocab_size: int, work: Path) -> dict:
    """Train one size on the development split and return its record."""
    n_layer, n_embd, max_iters = SIZES[name]
    settings = {**RECIPE, "n_layer": n_layer, "n_embd": n_embd, "n_head": n_embd // 32, "max_iters": max_iters,
                "lr_decay_iters": 20 * max_iters}
    config = TrainConfig(data=str(data_path), out_dir=str(work / name), overwrite=True, **settings)
    start = time.time()
    result = train(config)
    wall = time.time() - start
    if result.interrupted:  # a stopped run is not a curve to ship
        raise SystemExit(f"{name}: stopped at iteration {result.iter_num}; nothing recorded")
    per_token = flops_per_token(n_layer, n_embd, config.block_size, vocab_size)
    tokens_per_iter = config.batch_size * config.block_size
    points = [{"iter": m["iter"], "tokens": m["iter"] * tokens_per_iter,
               "flops": m["iter"] * tokens_per_iter * per_token, "val_loss": round(m["val_loss"], 4),
               "train_loss": round(m["train_loss"], 4), "elapsed_s": m["elapsed_s"]}
              for m in read_metrics(work / name) if "val_loss" in m and m["iter"] > 0]
    return {"name": name, "settings": settings, "matmul_weights": matmul_weights(n_layer, n_embd, vocab_size),
            "flops_per_token": per_token, "wall_seconds": round(wall), "points": points}


def main(argv: list[str]) -> int:
    """Train the sizes asked for, one after another, and update the record after each."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default=",".join(SIZES), help=f"comma-separated, of {', '.join(SIZES)}")
    parser.add_argument("--out", default=str(SCALING), help=f"the record to update (default {SCALING})")
    args = parser.parse_args(argv)
    names = [s for s in args.sizes.split(",") if s]
    unknown = [s for s in names if s not in SIZES]
    if unknown:
        parser.error(f"unknown sizes {unknown}; known: {', '.join(SIZES)}")
    out = Path(args.out)
    record = json.loads(out.read_text(encoding="utf-8")) if out.exists() else {"runs": []}
    data = load_dataset(None, block_size=RECIPE["block_size"])  # minigpt's split: its train part is our whole text
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        data_path = work / "train_split.txt"
        write_file(data_path, data.tokenizer.decode(data.train))
        vocab_size = load_dataset(str(data_path), block_size=RECIPE["block_size"]).tokenizer.vocab_size
        if "target" not in record:
            record["target"] = dev_target(data.train, data.tokenizer.vocab_size)
        record.update({"command": "OPENBLAS_NUM_THREADS=1 python -m tutorials.builders.scaling_runs",
                       "cpu": cpu_model(), "blas_threads": 1,
                       "data": "minigpt's training split (first 90% of the built-in corpus), "
                       "trained on its first 90%, validated on its last 10%",
                       "flops": "C_token = 6 N + 6 n_layer T d, N = 12 n_layer d^2 + d V (tutorials/scaling.py)"})
        for name in names:
            run = run_size(name, data_path, vocab_size, work)
            record["runs"] = [r for r in record["runs"] if r["name"] != name] + [run]
            record["runs"].sort(key=lambda r: r["flops_per_token"])
            out.parent.mkdir(parents=True, exist_ok=True)
            write_file(out, json.dumps(record, indent=1) + "\n")
            print(f"{name}: {run['wall_seconds']} s, final val loss {run['points'][-1]['val_loss']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
