"""The training loop and its checkpoints: it learns, it resumes bit for bit, it refuses what it cannot resume."""

import json

import numpy as np
import pytest
import safetensors.numpy

from minigpt import checkpoint, progress
from minigpt.checkpoint import CheckpointError, load_checkpoint, load_model
from minigpt.cli import main
from minigpt.train import ConfigError, TrainConfig, evaluation_batches, train
from minigrad import optim


@pytest.fixture(autouse=True)
def _fresh_cwd(tmp_path, monkeypatch):
    """Each test in its own folder: a run's default out/ never comes from, or goes to, the checkout."""
    monkeypatch.chdir(tmp_path)

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


def test_the_defaults_are_nanogpts_cpu_recipe():
    """`minigpt train` with no flags trains as nanoGPT's README CPU command does (config/train_shakespeare_char.py
    with --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128 --max_iters=2000 --lr_decay_iters=2000
    --dropout=0.0 --eval_iters=20), with train.py's bias=False: no biases in Linear and LayerNorm layers."""
    nanogpt = dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=12, dropout=0.0, bias=False,
                   lr=1e-3, max_iters=2000, weight_decay=0.1, beta1=0.9, beta2=0.99, grad_clip=1.0,
                   warmup_iters=100, eval_interval=250, eval_iters=20, pos_encoding="learned", norm_position="pre")
    assert {name: getattr(TrainConfig(), name, None) for name in nanogpt} == nanogpt


def test_a_model_has_biases_only_when_asked_for(tmp_path):
    data = str(write_text(tmp_path))
    for flags, has_biases in (([], False), (["--bias"], True)):
        out = tmp_path / f"out{len(flags)}"
        assert main(["train", "--data", data, *TINY_FLAGS, "--out-dir", str(out), "--max-iters", "1", *flags]) == 0
        assert any(name.endswith(".bias") for name in weights(out)) == has_biases
        assert json.loads((out / checkpoint.CONFIG).read_text())["model"]["bias"] == has_biases


def test_resume_ends_with_the_same_weights_as_a_run_never_stopped(tmp_path):
    data = str(write_text(tmp_path))
    straight, stopped = tmp_path / "straight", tmp_path / "stopped"
    # dropout, so that the masks (minigrad's generator) must continue exactly too; a fixed thread count, since
    # products split over another number of threads may round differently (threads.py)
    settings = dict(TINY, data=data, dropout=0.1, lr_decay_iters=25, seed=7, threads=1)
    train(TrainConfig(out_dir=str(straight), max_iters=25, **settings))
    train(TrainConfig(out_dir=str(stopped), max_iters=13, **settings))  # stop between two evaluations
    train(TrainConfig(out_dir=str(stopped), max_iters=25, resume=True, **settings))
    for name in (checkpoint.MODEL, checkpoint.OPTIMIZER):
        a, b = weights(straight, name), weights(stopped, name)
        assert a.keys() == b.keys()
        for key in a:
            assert np.array_equal(a[key], b[key]), f"{name}: {key}"
    assert load_checkpoint(stopped).state == load_checkpoint(straight).state


def test_resume_from_the_command_line_takes_the_settings_from_the_checkpoint(tmp_path, capsys):
    data, out = str(write_text(tmp_path)), tmp_path / "out"
    flags = ["train", "--data", data, *TINY_FLAGS, "--eval-interval", "100", "--out-dir", str(out)]
    assert main([*flags, "--max-iters", "6", "--lr-decay-iters", "10"]) == 0
    capsys.readouterr()
    assert main(["train", "--resume", "--out-dir", str(out), "--max-iters", "12"]) == 0  # no other flag needed
    said = capsys.readouterr().out
    assert "done: 6 iterations (6 -> 12)" in said  # what this run did, not where it ended
    assert ("learning rate reaches its floor, 1.0e-04, at iteration 10 (--lr-decay-iters) and stays there: "
            "iterations 10 -> 12 train at 1.0e-04") in said
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


def test_a_resumed_run_past_its_decay_says_the_schedule_came_from_its_first_max_iters(capsys):
    from minigpt.preflight import explain_schedule

    schedule = {"lr": 1e-3, "min_lr": 1e-4, "warmup_iters": 100, "lr_decay_iters": 2000,
                "lr_decay_iters_from": "--max-iters"}
    explain_schedule(TrainConfig(max_iters=4000), schedule, 2000)
    said = capsys.readouterr().out
    assert "at iteration 2000 (the --max-iters it started with)" in said and "iterations 2000 -> 4000" in said
    assert "start a new run with --max-iters 4000" in said
    explain_schedule(TrainConfig(max_iters=1500), schedule, 1000)  # still within the decay: nothing to say
    assert capsys.readouterr().out == ""


def test_evaluation_reads_the_tokens_of_the_default_batches_in_fewer_larger_ones():
    assert evaluation_batches(TrainConfig()) == TrainConfig().eval_iters == 20  # the defaults: as nanoGPT
    assert evaluation_batches(TrainConfig(block_size=1024)) == 1  # 12 x 1024 holds 16 default batches' tokens
    assert evaluation_batches(TrainConfig(block_size=256)) == 5
    assert evaluation_batches(TrainConfig(batch_size=4, block_size=16)) == 20  # smaller batches: as many
    assert evaluation_batches(TrainConfig(block_size=1024, eval_iters=200)) == 12


TINY_RUN = dict(n_layer=1, n_head=2, n_embd=16, block_size=8, batch_size=4, eval_interval=2, eval_iters=1,
                warmup_iters=0, max_iters=6)


@pytest.mark.parametrize("fault", ["the loss diverges", "the disk fills up"])
def test_a_run_that_must_stop_says_why_in_one_line_and_keeps_its_last_good_checkpoint(tmp_path, monkeypatch, capsys,
                                                                                     fault):
    if fault == "the loss diverges":  # from the step of iteration 3 on, a learning rate that makes every weight NaN
        schedule = optim.cosine_with_warmup
        monkeypatch.setattr(optim, "cosine_with_warmup", lambda it, *args: schedule(it, *args) if it < 3 else np.nan)
        expected = "stopped: the loss is nan at iteration 4: training diverged"
    else:  # the second save fails as on a full disk
        save, calls = checkpoint.save_checkpoint, []

        def save_once(*args, **kwargs):
            calls.append(1)
            if len(calls) > 1:
                raise OSError(28, "No space left on device")
            save(*args, **kwargs)

        monkeypatch.setattr(checkpoint, "save_checkpoint", save_once)
        expected = "stopped: could not save the checkpoint of iteration 4 in {out} (No space left on device)"
    monkeypatch.setattr(progress, "PLAIN_INTERVAL_S", 0)  # a progress line at every step (output is not a terminal)
    out = tmp_path / "out"
    flags = [f"--{k.replace('_', '-')}={v}" for k, v in TINY_RUN.items()]
    assert main(["train", "--data", str(write_text(tmp_path)), "--out-dir", str(out), *flags]) == 1
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and "Traceback" not in captured.err
    assert expected.format(out=out) in captured.err
    assert f"the checkpoint of iteration 2 in {out} is kept" in captured.err
    assert load_checkpoint(out).iter_num == 2  # and it loads: complete, finite
    assert "evaluating 1/2" in captured.out and "train 1/6" in captured.out  # progress, though not on a terminal


def test_grad_accum_steps_on_the_mean_of_its_micro_batches(tmp_path):
    # Two micro-batches of 4 draw the positions one batch of 8 would (the same generator calls), and their averaged
    # gradients equal the batch's to float32 rounding. Measured after 6 AdamW steps: 1.6e-8 apart; summing the
    # micro-batches' gradients instead of averaging them puts the weights 6.7e-5 apart (AdamW undoes most of a
    # scale, the gradient clipping does not).
    data = str(write_text(tmp_path))
    settings = {**TINY, "max_iters": 6, "eval_interval": 6, "threads": 1}
    train(TrainConfig(data=data, out_dir=str(tmp_path / "batch"), **{**settings, "batch_size": 8}))
    train(TrainConfig(data=data, out_dir=str(tmp_path / "micro"), grad_accum=2, **{**settings, "batch_size": 4}))
    batch, micro = weights(tmp_path / "batch"), weights(tmp_path / "micro")
    for name, expected in batch.items():
        np.testing.assert_allclose(micro[name], expected, rtol=0, atol=1e-6, err_msg=name)
    assert json.loads((tmp_path / "micro" / checkpoint.CONFIG).read_text())["train"]["grad_accum"] == 2
    with pytest.raises(ConfigError, match="grad_accum must be at least 1"):
        TrainConfig(grad_accum=0)
