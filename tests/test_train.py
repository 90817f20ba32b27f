"""The training loop and its checkpoints: it learns, it resumes bit for bit, it refuses what it cannot resume."""

import json

import numpy as np
import pytest
import safetensors.numpy

from minigpt import checkpoint
from minigpt.checkpoint import CheckpointError, load_checkpoint, load_model
from minigpt.cli import main
from minigpt.train import ConfigError, TrainConfig, train

# Tiny settings, and few evaluation batches: evaluation would otherwise cost more than training here.
TINY = dict(n_layer=2, n_head=2, n_embd=32, block_size=16, batch_size=8, eval_interval=10, eval_iters=2,
            warmup_iters=5)
TINY_FLAGS = ["--n-layer", "2", "--n-head", "2", "--n-embd", "32", "--block-size", "16", "--batch-size", "8",
              "--eval-interval", "10", "--warmup-iters", "5"]


def write_text(tmp_path):
    """A small text with some structure to learn: speakers and repeated lines, in a seeded order."""
    lines = ["First Citizen:\nBefore we proceed any further, hear me speak.\n",
             "All:\nSpeak, speak.\n", "First Citizen:\nYou are all resolved rather to die than to famish?\n",
             "All:\nResolved. resolved.\n", "Second Citizen:\nWould you proceed especially against Caius Marcius?\n"]
    order = np.random.default_rng(0).integers(0, len(lines), 120)
    path = tmp_path / "input.txt"
    path.write_text("\n".join(lines[i] for i in order), encoding="utf-8")
    return path


def weights(out_dir, name=checkpoint.MODEL):
    return safetensors.numpy.load_file(str(out_dir / name))


def test_training_lowers_the_val_loss_and_writes_a_checkpoint(tmp_path):
    out = tmp_path / "out"
    result = train(TrainConfig(data=str(write_text(tmp_path)), out_dir=str(out), max_iters=60, lr=3e-3,
                               **{**TINY, "eval_interval": 30}))
    assert not result.interrupted and result.iter_num == 60
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    evals = [m for m in metrics if "val_loss" in m]
    assert [m["iter"] for m in evals] == [0, 30, 60]
    assert evals[-1]["val_loss"] < evals[0]["val_loss"] - 0.5
    assert [m["iter"] for m in metrics if "loss" in m] == list(range(10, 61, 10))
    for name in (*checkpoint.FILES, checkpoint.MANIFEST, "loss_curve.png"):
        assert (out / name).exists(), name
    assert not list(out.glob(".*"))  # no temporary file left behind

    # The weights are named as model.state_dict(), and the folder loads back into a working model.
    model, tokenizer = load_model(out)
    assert set(weights(out)) == set(model.state_dict())
    state = json.loads((out / checkpoint.STATE).read_text())
    assert state["iter_num"] == 60 and state["best_val_loss"] == pytest.approx(evals[-1]["val_loss"])
    assert json.loads((out / checkpoint.CONFIG).read_text())["model"]["n_layer"] == 2


def test_resume_ends_with_the_same_weights_as_a_run_never_stopped(tmp_path):
    data = str(write_text(tmp_path))
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    # dropout, so that the masks (minigrad's generator) must continue exactly too
    settings = dict(TINY, data=data, dropout=0.1, lr_decay_iters=25, seed=7)
    train(TrainConfig(out_dir=str(straight), max_iters=25, **settings))
    train(TrainConfig(out_dir=str(stopped), max_iters=13, **settings))  # stop between two evaluations
    train(TrainConfig(out_dir=str(stopped), max_iters=25, resume=True, **settings))
    for name in (checkpoint.MODEL, checkpoint.OPTIMIZER):
        a, b = weights(straight, name), weights(stopped, name)
        assert a.keys() == b.keys()
        for key in a:
            assert np.array_equal(a[key], b[key]), f"{name}: {key}"
    assert load_checkpoint(stopped).state == load_checkpoint(straight).state


def test_resume_from_the_command_line_takes_the_settings_from_the_checkpoint(tmp_path):
    data, out = str(write_text(tmp_path)), tmp_path / "out"
    flags = ["train", "--data", data, *TINY_FLAGS, "--eval-interval", "100", "--out-dir", str(out)]
    assert main([*flags, "--max-iters", "6", "--lr-decay-iters", "10"]) == 0
    assert main(["train", "--resume", "--out-dir", str(out), "--max-iters", "12"]) == 0  # no other flag needed
    config = json.loads((out / checkpoint.CONFIG).read_text())["train"]
    assert config["n_layer"] == 2 and config["lr_decay_iters"] == 10 and config["max_iters"] == 12
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [m["iter"] for m in metrics if "val_loss" in m] == [0, 6, 12]
    assert metrics[-1]["lr"] == pytest.approx(1e-4)  # past lr_decay_iters: the floor, lr / 10


def test_a_checkpoint_from_other_settings_is_refused_and_left_as_it_was(tmp_path, capsys):
    data, out = str(write_text(tmp_path)), tmp_path / "out"
    assert main(["train", "--data", data, *TINY_FLAGS, "--out-dir", str(out), "--max-iters", "4"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    assert main(["train", "--resume", "--out-dir", str(out), "--n-layer", "3", "--max-iters", "20"]) == 2
    assert "--n-layer is 3, the checkpoint's is 2" in capsys.readouterr().err
    other = tmp_path / "other.txt"
    other.write_text("A different text altogether. " * 40, encoding="utf-8")
    assert main(["train", "--resume", "--out-dir", str(out), "--data", str(other), "--max-iters", "20"]) == 2
    assert "different text" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before


def test_a_damaged_or_incomplete_checkpoint_is_refused(tmp_path):
    out = tmp_path / "out"
    train(TrainConfig(data=str(write_text(tmp_path)), out_dir=str(out), max_iters=3, **TINY))
    model_file = out / checkpoint.MODEL
    model_file.write_bytes(model_file.read_bytes()[:-100])  # a truncated file
    with pytest.raises(CheckpointError, match="model.safetensors: damaged: it does not match its size and hash"):
        load_checkpoint(out)
    (out / checkpoint.MANIFEST).unlink()  # as if a save was interrupted before its last step
    with pytest.raises(CheckpointError, match="incomplete checkpoint"):
        train(TrainConfig(data=None, out_dir=str(out), resume=True, max_iters=20, **TINY))


def test_training_on_the_strict_device_never_copies_to_the_host_silently(tmp_path):
    result = train(TrainConfig(data=str(write_text(tmp_path)), out_dir=str(tmp_path / "out"), max_iters=5,
                               device="strict", **TINY))
    assert result.iter_num == 5


def test_a_fresh_run_checks_its_settings_before_writing(tmp_path):
    with pytest.raises(ConfigError, match="divisible"):
        settings = dict(TINY, n_embd=30, n_head=4)
        train(TrainConfig(data=str(write_text(tmp_path)), out_dir=str(tmp_path / "out"), **settings))
    assert not (tmp_path / "out").exists()
