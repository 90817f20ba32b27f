"""Train the small GPT that ships with the course, `tutorials/pretrained/shakespeare/` (lecture 07's top rung).

This is a maintainer's script: learners never run it (its result is in the repository), but anyone can, and
the same command on the same machine gives the same weights (every random draw is seeded):

    OPENBLAS_NUM_THREADS=1 python -m tutorials.builders.train_pretrained            # about 40 minutes on 2 busy cores

It is `minigpt train` with the settings below, on the built-in Shakespeare corpus and its 90/10 split, so
the model never sees the held-out text that tutorials/yardstick.py scores it on. The settings were chosen to
fit a tutorial's CPU budget and the repository's size limit (the checkpoint, AdamW's two moments included,
stays under 10 MB):

- 4 layers, 4 heads, 112 channels, a context of 64 characters: about 0.6 M parameters;
- 20 windows of 64 characters a step, 3,600 steps (about 4.6 M characters, about one pass over the training text);
- a peak learning rate of 3e-3, warmed up over 200 steps, then cosine-decayed to a tenth; no dropout.

Besides the checkpoint (model.safetensors, optimizer.safetensors, tokenizer.json, config.json, state.json,
metrics.jsonl, manifest.json) and its loss curve (loss_curve.png), it writes `training.json`: the command, the
wall time, the CPU (the "model name" of /proc/cpuinfo) and the final validation loss, which lecture 07 quotes.
Read next: tutorials/07_summary.py, which loads the checkpoint and scores it on the yardstick.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")  # before NumPy loads: one BLAS thread, repeatable results
os.environ.setdefault("OMP_NUM_THREADS", "1")

from minigpt.evaluation import read_metrics  # noqa: E402
from minigpt.train import TrainConfig, train  # noqa: E402 (after the thread settings)
from minigrad.tools.files import write_file  # noqa: E402
from tutorials.machine import cpu_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]  # the repository
OUT_DIR = ROOT / "tutorials" / "pretrained" / "shakespeare"
SETTINGS = dict(n_layer=4, n_head=4, n_embd=112, block_size=64, batch_size=20, max_iters=3600, lr=3e-3,
                warmup_iters=200, eval_interval=500, eval_iters=20, dropout=0.0, seed=1337)
MAX_BYTES = 10 * 10**6  # what the repository accepts for the whole folder



def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", default=str(OUT_DIR), help=f"where to write the checkpoint (default {OUT_DIR})")
    parser.add_argument("--max-iters", type=int, default=SETTINGS["max_iters"], help="training steps")
    args = parser.parse_args(argv)
    # The checkpoint records its folder: relative to the repository, so that it names no path of this machine.
    out_dir = Path(os.path.relpath(Path(args.out_dir).resolve(), ROOT))
    os.chdir(ROOT)
    config = TrainConfig(out_dir=str(out_dir), overwrite=True, **{**SETTINGS, "max_iters": args.max_iters})
    start = time.time()
    result = train(config)
    wall_s = time.time() - start
    evaluations = [m for m in read_metrics(out_dir) if "val_loss" in m]
    record = {
        "command": "OPENBLAS_NUM_THREADS=1 python -m tutorials.builders.train_pretrained"
                   + (f" --max-iters {args.max_iters}" if args.max_iters != SETTINGS["max_iters"] else ""),
        "settings": {**SETTINGS, "max_iters": args.max_iters},
        "wall_seconds": round(wall_s),
        "cpu": cpu_model(),
        "cpu_count": os.cpu_count(),
        "blas_threads": os.environ["OPENBLAS_NUM_THREADS"],
        "python": platform.python_version(),
        "final_val_loss": round(evaluations[-1]["val_loss"], 4),
        "iterations": result.iter_num,
    }
    write_file(out_dir / "training.json", json.dumps(record, indent=2, ensure_ascii=False) + "\n")
    size = sum(path.stat().st_size for path in out_dir.iterdir() if path.is_file())
    print(json.dumps(record, indent=2, ensure_ascii=False))
    print(f"{out_dir}: {size / 1e6:.2f} MB in all")
    if size > MAX_BYTES:
        print(f"error: {out_dir} holds {size:,} bytes, more than the {MAX_BYTES:,} the repository accepts",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
