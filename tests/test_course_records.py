"""What lectures 06 §10 and 07 §5 read off the shipped records, held here instead of in the lectures.

A lecture that only reads a record cannot find it false by running; it prints what the record says, and these
tests hold the record to the sentences the lectures write about it (tutorials/records/ablation_full.json,
tutorials/records/scaling.json).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tutorials import crossing, scaling, yardstick

RECORDS = Path(__file__).resolve().parent.parent / "tutorials" / "records"
SKIP_TOKENS = 4e5  # lecture 07 §5: the first two hundred steps are warmup, left out of the fit
V = 75  # the characters of the built-in corpus (yardstick.load().vocab_size)


def test_the_shipped_ablation_record_says_what_lecture_06_says_of_it():
    record = json.loads((RECORDS / "ablation_full.json").read_text(encoding="utf-8"))
    shipped = {v["variant"]: v for v in record["variants"] if v["variant"] != "full"}
    for variant in ("no_positions", "no_residual", "no_layernorm", "no_mlp"):  # "这四块拆掉都明显更差"
        assert shipped[variant]["gap"] > 10 * shipped[variant]["gap_stderr"], variant
    assert shipped["no_scale"]["gap"] < 0  # "拆掉 1/√d 缩放反而略好"
    assert abs(shipped["one_head"]["gap"]) < 3 * shipped["one_head"]["gap_stderr"]  # "单头追平了多头"


def joint_fit(runs: list[dict]) -> scaling.JointLaw:
    points = [(r["matmul_weights"], p["tokens"], p["val_loss"]) for r in runs for p in r["points"]
              if p["tokens"] > SKIP_TOKENS]
    return scaling.fit_joint(*map(np.array, zip(*points)))


def test_the_shipped_scaling_record_says_what_lecture_07_says_of_it():
    runs = scaling.load_records()["runs"]
    kn_dev = scaling.load_records()["target"]["kneser_ney_dev"]
    common = min(r["points"][-1]["tokens"] for r in runs)
    at_common = [np.interp(common, [p["tokens"] for p in r["points"]], [p["val_loss"] for p in r["points"]])
                 for r in runs]
    assert all(b < a for a, b in zip(at_common, at_common[1:]))  # the same data: more weights, lower loss
    joint = joint_fit(runs)
    largest = runs[-1]
    held_out = joint_fit(runs[:-1]).for_size(largest["matmul_weights"], largest["flops_per_token"])
    error = np.sqrt(np.mean([(held_out(p["flops"]) - p["val_loss"]) ** 2 for p in largest["points"]
                             if p["tokens"] > SKIP_TOKENS]))
    assert joint.rmse < 0.03 and error < 0.05  # one law fits every size, and predicts the one left out
    recipe = crossing.RECIPE
    recipe_flops = scaling.flops_per_token(recipe["n-layer"], recipe["n-embd"], yardstick.WINDOW, V)
    recipe_flops *= recipe["max-iters"] * recipe["batch-size"] * yardstick.WINDOW
    cheapest, _ = scaling.cheapest_crossing(joint, kn_dev, 4, range(64, 1025, 32), yardstick.WINDOW, V)
    assert cheapest > 3 * recipe_flops  # passing Kneser-Ney costs far more than passing the 5-gram
