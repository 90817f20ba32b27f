"""The `minigpt` command: sampling, one-line errors with exit status 2, and Ctrl-C during training."""

import os
import signal
import subprocess
import sys

import pytest

import minigrad as mg
from minigpt import checkpoint
from minigpt.cli import main
from minigpt.train import TrainConfig, train

TINY = dict(n_layer=2, n_head=2, n_embd=32, block_size=16, batch_size=8, eval_iters=2, warmup_iters=5)
TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n" * 30


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A checkpoint folder of a tiny model trained for a few iterations."""
    folder = tmp_path_factory.mktemp("cli")
    (folder / "input.txt").write_text(TEXT, encoding="utf-8")
    train(TrainConfig(data=str(folder / "input.txt"), out_dir=str(folder / "out"), max_iters=20, lr=3e-3, **TINY))
    return folder


def test_sample_prints_the_prompt_and_its_continuation(trained, capsys):
    out_dir = str(trained / "out")
    assert main(["sample", "--out-dir", out_dir, "--prompt", "All:", "--max-new-tokens", "40", "--seed", "1"]) == 0
    text = capsys.readouterr().out
    assert text.startswith("All:") and len(text) == len("All:") + 40 + 1  # and print's newline
    # the same seed, the same text; top-k and top-p are accepted
    assert main(["sample", "--out-dir", out_dir, "--prompt", "All:", "--max-new-tokens", "40", "--seed", "1"]) == 0
    assert capsys.readouterr().out == text
    assert main(["sample", "--out-dir", out_dir, "--prompt", "Be", "--max-new-tokens", "5", "--top-k", "3",
                 "--top-p", "0.9", "--temperature", "0"]) == 0
    assert capsys.readouterr().out.startswith("Be")


def test_an_empty_prompt_starts_from_a_new_line(trained, capsys):
    assert main(["sample", "--out-dir", str(trained / "out"), "--max-new-tokens", "30"]) == 0
    assert len(capsys.readouterr().out) == 30 + 1


def run(argv):
    """main(argv)'s exit status, also when argparse exits by itself."""
    try:
        return main(argv)
    except SystemExit as exit:
        return exit.code


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ("train --data {dir}/missing.txt", "missing.txt: no such file"),
        ("train --data {dir}/empty.txt", "empty.txt: the file is empty"),
        ("sample --out-dir {dir}/out --prompt Zebra", "character 'Z' at position 0 is not in the tokenizer's"),
        ("train --resume --out-dir {dir}/out --block-size 32",
         "--block-size 32 is larger than the checkpoint's block_size 16"),
        ("train --resume --out-dir {dir}/nowhere", "no checkpoint to resume"),
        ("sample --out-dir {dir}/nowhere", "no such folder"),
        ("train --n-layer zero", "argument --n-layer: invalid positive integer value: 'zero'"),
        ("train --dropout 1.5", "argument --dropout: must be in [0, 1)"),
        ("sample --out-dir {dir}/out --top-p 0", "argument --top-p: must be in (0, 1]"),
    ],
)
def test_bad_input_is_one_line_and_exit_status_2(trained, capsys, argv, message):
    (trained / "empty.txt").write_text("")
    before = {p.name: p.read_bytes() for p in (trained / "out").iterdir()}
    assert run(argv.format(dir=trained).split()) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert {p.name: p.read_bytes() for p in (trained / "out").iterdir()} == before  # nothing was overwritten


@pytest.mark.skipif(mg.cuda.is_available(), reason="a GPU is there")
def test_cuda_without_a_gpu_says_what_to_install(trained, capsys):
    assert main(["train", "--device", "cuda", "--data", str(trained / "input.txt")]) == 2
    assert "pip install -e '.[cuda12]'" in capsys.readouterr().err


def test_ctrl_c_saves_a_checkpoint_and_exits_without_a_traceback(tmp_path):
    data = tmp_path / "input.txt"
    data.write_text(TEXT, encoding="utf-8")
    out = tmp_path / "out"
    argv = [sys.executable, "-u", "-m", "minigpt", "train", "--data", str(data), "--out-dir", str(out),
            "--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "8", "--batch-size", "4",
            "--max-iters", "1000000", "--eval-interval", "1000000"]
    # One BLAS thread: small matrices gain nothing from more, and this machine may be busy.
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1"}
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        for line in process.stdout:  # wait until it is iterating: the first evaluation comes just before
            if line.startswith("iter 0:"):
                break
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert "interrupted at iteration" in stdout and "--resume" in stdout
    ckpt = checkpoint.load_checkpoint(out)  # complete and verified
    assert ckpt.state["iter_num"] >= 0 and ckpt.model_config.n_embd == 16


def test_python_dash_m_minigpt_shows_help():
    result = subprocess.run([sys.executable, "-m", "minigpt", "train", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    for flag in ("--data", "--device", "--out-dir", "--resume", "--max-iters", "--eval-interval", "--batch-size",
                 "--block-size", "--n-layer", "--n-head", "--n-embd", "--dropout", "--lr", "--warmup-iters",
                 "--lr-decay-iters", "--grad-clip", "--weight-decay", "--seed", "--pos-encoding", "--norm-position"):
        assert flag in result.stdout
