"""The run that tests lecture 07 §5's predicted crossing of Kneser-Ney: its command (tutorials/scaling.py), the
builder that scores it and exports its weights (tutorials/builders/kneser_ney_run.py), its shipped record
(tutorials/records/kneser_ney_run.json) and its shipped weights (tutorials/pretrained/kneser_ney/).
Read next: test_scaling.py, which checks the prediction this run tests.
"""

import hashlib
import shutil
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigpt.checkpoint import load_model
from minigpt.cli import build_parser
from tutorials import scaling, yardstick
from tutorials.builders import kneser_ney_run

ROOT = Path(__file__).resolve().parent.parent


def predicted_run() -> tuple[float, int, int]:
    """(FLOPs, width, iterations) of the cheapest crossing, derived from the shipped curves as lecture 07 §5 does."""
    record = scaling.load_records()
    points = [(r["matmul_weights"], p["tokens"], p["val_loss"]) for r in record["runs"] for p in r["points"]
              if p["tokens"] > 4e5]
    law = scaling.fit_joint(*map(np.array, zip(*points)))
    flops, width = scaling.cheapest_crossing(law, record["target"]["kneser_ney_dev"], 4, range(64, 1025, 32), 64, 75)
    iters = int(np.ceil(flops / scaling.flops_per_token(4, width, 64, 75) / (32 * 64) / 100) * 100)
    return flops, width, iters


def test_the_long_run_command_parses_as_its_flags():
    command = scaling.long_run_command(160, 15700).split()
    assert command[:4] == ["python", "-m", "minigpt", "train"]
    args = build_parser().parse_args(command[3:])
    assert (args.n_layer, args.n_embd, args.n_head, args.max_iters) == (4, 160, 5, 15700)
    assert args.block_size == 64  # the yardstick's windows
    assert (args.batch_size, args.lr, args.warmup_iters, args.eval_interval) == (32, 0.003, 100, 1000)
    assert scaling.long_run_flags(96, 10)["n-head"] == 3  # 32 channels a head at any width


def test_training_seconds_add_the_stretches_of_a_resumed_run():
    evaluations = [{"elapsed_s": s} for s in (0.0, 10.0, 20.0, 0.5, 7.0, 0.2, 3.0)]  # resumed twice
    assert kneser_ney_run.training_seconds(evaluations) == pytest.approx(20.0 + 7.0 + 3.0)
    assert kneser_ney_run.training_seconds([{"elapsed_s": 0.0}, {"elapsed_s": 5.0}]) == 5.0


def test_the_script_refuses_a_run_with_other_settings(tmp_path, capsys):
    """Only the predicted command's run may be recorded as it: a run with another learning rate is refused."""
    from minigpt.train import TrainConfig, train

    flags = scaling.long_run_flags(32, 2)
    config = {flag.replace("-", "_"): value for flag, value in flags.items()}
    train(TrainConfig(out_dir=str(tmp_path / "run"), **{**config, "lr": 1e-3, "eval_iters": 1}))
    assert kneser_ney_run.main([str(tmp_path / "run")]) == 1
    assert "'lr': (0.001, 0.003)" in capsys.readouterr().err


def test_the_script_refuses_an_unfinished_run(tmp_path, capsys, monkeypatch):
    """A run stopped before --max-iters is not the predicted run yet: the script says how to continue it."""
    from minigpt.train import TrainConfig, train

    config = {flag.replace("-", "_"): value for flag, value in scaling.long_run_flags(32, 2).items()}
    train(TrainConfig(out_dir=str(tmp_path / "run"), **{**config, "eval_iters": 1}))
    monkeypatch.setattr(kneser_ney_run, "iteration", lambda run_dir: 1)  # as if stopped at step 1
    assert kneser_ney_run.main([str(tmp_path / "run")]) == 1
    err = capsys.readouterr().err
    assert "stopped at iteration 1 of 2" in err and "--resume" in err


def test_the_readme_and_lecture_07_show_the_predicted_long_run():
    """README's Kneser-Ney run and its compute are the ones lecture 07 §5 derives from the shipped curves."""
    flops, width, iters = predicted_run()
    command = scaling.long_run_command(width, iters)
    readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8").replace(" \\\n    ", " ")
    assert command in readme
    assert f"about {flops:.1e} FLOPs".replace("e+", "e") in readme
    lecture = (ROOT / "tutorials" / "07_summary.py").read_text(encoding="utf-8")
    assert "scaling.long_run_command(cheapest_width, cross_iters)" in lecture


def test_exported_weights_load_as_the_run_they_came_from(tmp_path, monkeypatch):
    """export_weights writes what load_long_run_gpt reads: the same GPT as the run's own checkpoint, logit for logit."""
    from minigpt.train import TrainConfig, train

    config = {flag.replace("-", "_"): value for flag, value in scaling.long_run_flags(32, 2).items()}
    train(TrainConfig(out_dir=str(tmp_path / "run"), **{**config, "eval_iters": 1}))
    kneser_ney_run.export_weights(tmp_path / "run", tmp_path / "shipped")
    assert sorted(p.name for p in (tmp_path / "shipped").iterdir()) == ["config.json", "model.safetensors",
                                                                         "tokenizer.json"]  # no optimizer state
    sha = hashlib.sha256((tmp_path / "shipped" / "model.safetensors").read_bytes()).hexdigest()
    monkeypatch.setattr(scaling, "load_long_run", lambda: {"model_sha256": sha})  # as if the record named this run
    shipped = scaling.load_long_run_gpt(tmp_path / "shipped")
    original, _ = load_model(tmp_path / "run")
    x = np.arange(2 * 64).reshape(2, 64) % 75
    assert not shipped.training
    np.testing.assert_array_equal(shipped(x)[0].numpy(), original(x)[0].numpy())


@pytest.mark.skipif(not scaling.LONG_RUN_GPT.exists(), reason="no long-run weights shipped")
def test_weights_other_than_the_recorded_runs_are_refused(tmp_path):
    folder = tmp_path / "kneser_ney"
    shutil.copytree(scaling.LONG_RUN_GPT, folder)
    assert scaling.load_long_run_gpt(folder).num_parameters() == scaling.load_long_run()["parameters"]
    weights = folder / "model.safetensors"
    state = mg.load(weights)
    name = sorted(state)[0]
    state[name] = state[name] * 1.001  # a slightly different model, saved properly
    mg.save(state, weights)
    with pytest.raises(ValueError, match="SHA-256.*not that run's weights"):
        scaling.load_long_run_gpt(folder)


@pytest.mark.skipif(not scaling.LONG_RUN_GPT.exists(), reason="no long-run weights shipped")
def test_the_record_is_of_the_predicted_run_and_passes_kneser_ney():
    record = scaling.load_long_run()
    _, width, iters = predicted_run()
    assert record["command"].startswith(scaling.long_run_command(width, iters) + " ")  # the very run predicted
    assert (record["settings"]["n_embd"], record["settings"]["max_iters"]) == (width, iters)
    assert record["evaluations"][-1]["iter"] == iters and record["tokens"] == iters * 32 * 64
    ys = yardstick.load()
    y = record["yardstick"]
    assert y["fingerprint"] == ys.fingerprint  # scored on these windows
    score = ys.score_logits(scaling.load_long_run_gpt())  # the shipped weights, scored now, give the recorded score
    assert score.nats == pytest.approx(y["nats"], abs=1e-4) and score.stderr == pytest.approx(y["stderr"], abs=1e-4)
    assert y["gap_vs_kneser_ney"] < -2 * y["gap_vs_kneser_ney_err"]  # below Kneser-Ney, as lecture 07 §5 asserts
    assert y["nats"] < y["kneser_ney_nats"] < y["ngram_nats"]


@pytest.mark.skipif(not scaling.LONG_RUN.exists(), reason="no long-run record shipped")
def test_the_readme_reports_the_recorded_long_run():
    record = scaling.load_long_run()
    y = record["yardstick"]
    readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    assert f"**{y['nats']:.3f}**" in readme
    assert f"{y['gap_vs_kneser_ney']:+.3f} ± {y['gap_vs_kneser_ney_err']:.3f}".replace("-", "−") in readme
    assert f"({record['training_seconds']:,.0f} s of training" in readme
