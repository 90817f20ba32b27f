"""Score the run that tests lecture 07 §5's prediction, and record it: tutorials/records/kneser_ney_run.json.

A maintainer's script. Lecture 07 §5 fits one law to the scaling curves and predicts the cheapest GPT that passes
Kneser-Ney; the run that tests it is far longer than a lecture (about an hour on a quiet 2-core CPU), so it is made
once, with the command the lecture prints, and then scored here:

    python -m minigpt train --out-dir out/kneser-ney --n-layer 4 --n-embd 160 --n-head 5 --block-size 64 \\
        --batch-size 32 --lr 0.003 --warmup-iters 100 --max-iters 15700 --eval-interval 1000 --threads 2
    python -m tutorials.builders.kneser_ney_run out/kneser-ney

(An interrupted run continues with `--resume`; add `--device cuda` on a GPU.) The script refuses a run whose
settings are not `tutorials.scaling.long_run_flags` for its width and length, or that has not finished. It scores
the trained GPT on the yardstick and compares it window by window with Kneser-Ney (tutorials/kneser_ney.py, its
order tuned on the training text alone) and the add-β 5-gram; the record holds the command, the run's settings,
the machine (this one: run the script where the training ran), the training time its metrics log measured, the
tokens per second, every evaluation, the weights file's SHA-256 and the scores with their paired gaps. The trained
weights go to tutorials/pretrained/kneser_ney/ (model.safetensors, config.json with the model's settings,
tokenizer.json; not the optimizer's state, which only a resumed run needs), so lectures 07 and 09 load the GPT
and score it themselves (`scaling.load_long_run_gpt`).
Read next: tutorials/scaling.py (`long_run_flags`, `load_long_run_gpt`), 07_summary.py §5.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

from minigpt.checkpoint import CONFIG, MODEL, TOKENIZER, iteration, load_checkpoint, load_model, read_train_settings
from minigpt.evaluation import read_metrics
from minigrad.tools.files import write_file
from tutorials import crossing, kneser_ney, scaling, yardstick
from tutorials.machine import cpu_model


def training_seconds(evaluations: list[dict]) -> float:
    """The training loop's time: its clock restarts when a run resumes, so each stretch's last reading counts."""
    total, last = 0.0, 0.0
    for record in evaluations:
        if record["elapsed_s"] < last:  # a resumed stretch began
            total += last
        last = record["elapsed_s"]
    return total + last


def export_weights(run_dir: Path, folder: Path) -> None:
    """Copy the run's weights and tokenizer into `folder`, with the model's settings as config.json (GPTConfig's
    fields): what `scaling.load_long_run_gpt` reads. The checkpoint is verified against its manifest first."""
    checkpoint = load_checkpoint(run_dir, with_optimizer=False)
    folder.mkdir(parents=True, exist_ok=True)
    write_file(folder / MODEL, (run_dir / MODEL).read_bytes())
    write_file(folder / TOKENIZER, (run_dir / TOKENIZER).read_bytes())
    write_file(folder / CONFIG, json.dumps(checkpoint.config["model"], indent=1) + "\n")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run_dir", help="the finished run's --out-dir")
    args = parser.parse_args(argv)
    run_dir = Path(args.run_dir)
    settings, _ = read_train_settings(run_dir)
    width, iters = settings["n_embd"], settings["max_iters"]
    flags = scaling.long_run_flags(width, iters)
    differ = {flag: (settings[flag.replace("-", "_")], value) for flag, value in flags.items()
              if settings[flag.replace("-", "_")] != value}
    if differ:
        print(f"error: {run_dir} was not trained with long_run_flags({width}, {iters}): (run, expected) {differ}",
              file=sys.stderr)
        return 1
    if iteration(run_dir) != iters:
        print(f"error: {run_dir} stopped at iteration {iteration(run_dir)} of {iters}; continue it with "
              f"`python -m minigpt train --out-dir {run_dir} --resume`", file=sys.stderr)
        return 1

    ys = yardstick.load()
    model, _ = load_model(run_dir)
    score = ys.score_logits(model)
    ngram = crossing.add_beta_ngram(ys)
    kn, tuning = kneser_ney.for_yardstick(ys)
    kn_score = kn.score(ys)
    metrics = read_metrics(run_dir)
    evaluations = crossing.evaluations(metrics)
    steps = [m for m in metrics if "tokens_per_s" in m]
    gap, err = score.gap(kn_score)
    ngram_gap, ngram_err = score.gap(ngram)
    record = {
        "command": scaling.long_run_command(width, iters) + f" --threads {settings['threads']}",
        "settings": {k: v for k, v in settings.items() if k not in ("out_dir", "overwrite", "resume")},
        "cpu": cpu_model(), "cpu_count": os.cpu_count(),
        "blas_threads": sorted({m["threads"] for m in steps if m.get("threads")}),
        "training_seconds": round(training_seconds(evaluations), 1), "parameters": model.num_parameters(),
        "tokens": iters * settings["batch_size"] * settings["block_size"],
        "tokens_per_s": round(float(np.median([m["tokens_per_s"] for m in steps])), 0),
        "model_sha256": hashlib.sha256((run_dir / "model.safetensors").read_bytes()).hexdigest(),
        "evaluations": [{k: m[k] for k in ("iter", "train_loss", "val_loss", "elapsed_s")} for m in evaluations],
        "yardstick": {"fingerprint": ys.fingerprint, "nats": round(score.nats, 4), "stderr": round(score.stderr, 4),
                      "kneser_ney_nats": round(kn_score.nats, 4), "kneser_ney_order": tuning.order,
                      "gap_vs_kneser_ney": round(gap, 4), "gap_vs_kneser_ney_err": round(err, 4),
                      "ngram_nats": round(ngram.nats, 4), "gap_vs_ngram": round(ngram_gap, 4),
                      "gap_vs_ngram_err": round(ngram_err, 4)},
    }
    write_file(scaling.LONG_RUN, json.dumps(record, indent=1, ensure_ascii=False) + "\n")
    export_weights(run_dir, scaling.LONG_RUN_GPT)
    if not np.array_equal(ys.score_logits(scaling.load_long_run_gpt()).losses, score.losses):
        print(f"error: the weights exported to {scaling.LONG_RUN_GPT} score differently from {run_dir}",
              file=sys.stderr)
        return 1
    print(json.dumps({k: v for k, v in record.items() if k != "evaluations"}, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
