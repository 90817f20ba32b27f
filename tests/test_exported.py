"""A model's exported weights (config.json with GPTConfig's fields, model.safetensors, tokenizer.json: what
tutorials/pretrained/kneser_ney/ ships) load as a model for `minigpt sample`, `minigpt draw` and the yardstick,
with every check a checkpoint's files get, and are refused in one line where a whole checkpoint is needed. Also:
under mpiexec only rank 0 samples, and the messages of round 5 (a --corpus on a resume, a full disk at the lock,
MINIGRAD_KERNELS=numba without numba) are one line that names what the user gave.
"""

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from checkpoint_helpers import TEXT, write_checkpoint

import minigrad as mg
from minigpt.checkpoint import CONFIG, LOCK, MODEL, TOKENIZER
from minigpt.cli import main
from minigrad.tools.serialization import to_bytes

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = ROOT / "tutorials" / "pretrained" / "kneser_ney"
ENV = {**os.environ, "PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1"}


@pytest.fixture(autouse=True)
def _fresh_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def exported(tmp_path):
    """A tiny model's exported weights, as tutorials/builders/kneser_ney_run.py exports the long run's."""
    model = write_checkpoint(tmp_path / "run", 2)
    folder = tmp_path / "exported"
    folder.mkdir()
    shutil.copy(tmp_path / "run" / MODEL, folder / MODEL)
    shutil.copy(tmp_path / "run" / TOKENIZER, folder / TOKENIZER)
    (folder / CONFIG).write_text(json.dumps(model.config.to_dict()))
    return folder


def one_line(capsys, status, expected_status=2):
    err = capsys.readouterr().err
    assert status == expected_status, err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_the_shipped_weights_sample(capsys):
    assert main(["sample", "--out-dir", str(SHIPPED), "--prompt", "ROMEO:", "--max-new-tokens", "30"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("ROMEO:") and len(out) == len("ROMEO:") + 30 + 1


@pytest.mark.slow
def test_the_yardstick_scores_the_shipped_weights():
    result = subprocess.run([sys.executable, "-m", "tutorials.yardstick", "score", str(SHIPPED)], env=ENV,
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr
    assert f"{SHIPPED}: 1.439 ± 0.0" in result.stdout  # the long run's score, as the README and its record say


def test_an_exported_folder_samples_and_draws_like_its_checkpoint(tmp_path, exported, capsys):
    argv = ["--max-new-tokens", "20", "--seed", "5", "--prompt", "All:"]
    assert main(["sample", "--out-dir", str(tmp_path / "run"), *argv]) == 0
    from_checkpoint = capsys.readouterr().out
    assert main(["sample", "--out-dir", str(exported), *argv]) == 0
    assert capsys.readouterr().out == from_checkpoint
    assert main(["draw", "--out-dir", str(exported), "--format", "dot", "--out", "g.dot"]) == 0
    assert (tmp_path / "g.dot").read_text().startswith("digraph")


def test_an_exported_folder_is_not_resumed_nor_trained_over(tmp_path, exported, capsys):
    (tmp_path / "input.txt").write_text(TEXT)
    status = main(["train", "--resume", "--out-dir", str(exported), "--max-iters", "3"])
    assert "a model's exported weights (config.json, model.safetensors, tokenizer.json), not a checkpoint a run can " \
           "continue" in one_line(capsys, status)
    status = main(["train", "--data", "input.txt", "--out-dir", str(exported), "--max-iters", "1"])
    assert "holds a model's exported weights: choose another --out-dir, or replace them" in one_line(capsys, status)


def rewrite_json(name, change):
    def damage(folder):
        record = json.loads((folder / name).read_text())
        change(record)
        (folder / name).write_text(json.dumps(record))
    return damage


def rewrite_weights(change):
    def damage(folder):
        tensors = {key: t.numpy() for key, t in mg.load(folder / MODEL).items()}
        change(tensors)
        (folder / MODEL).write_bytes(to_bytes(tensors))
    return damage


@pytest.mark.parametrize(("damage", "message"), [
    (rewrite_json(CONFIG, lambda c: c.pop("n_head")), "config.json: n_head is missing"),
    (rewrite_json(CONFIG, lambda c: c.update(n_embd="16")), "config.json: n_embd must be an integer, got '16'"),
    (rewrite_json(CONFIG, lambda c: c.update(n_head=3)), "config.json: GPTConfig: n_embd (16) must be divisible by"),
    (rewrite_json(CONFIG, lambda c: c.update(n_embd=2 * 10**7)), "config.json: 4,800,000,820,000,000 parameters"),
    (rewrite_json(CONFIG, lambda c: c.update(format=2)), "incomplete checkpoint (manifest.json is missing)"),
    (lambda f: (f / CONFIG).write_text("[" * 100_000), "config.json: not valid JSON"),
    (rewrite_json(TOKENIZER, lambda t: t["chars"].pop()), "tokenizer.json: 29 characters, the model's vocab_size"),
    (rewrite_weights(lambda t: t["transformer.wte.weight"].__setitem__((0, 0), np.nan)),
     "model.safetensors: transformer.wte.weight holds non-finite values"),
    (rewrite_weights(lambda t: t.pop("transformer.ln_f.weight")), "model.safetensors: the tensors do not match"),
    (lambda f: (f / MODEL).write_bytes(b"\x80\x04pickle"), "model.safetensors: this looks like a pickle"),
    pytest.param(lambda f: ((f / MODEL).unlink(), os.mkfifo(f / MODEL)), "model.safetensors: a FIFO",
                 marks=pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")),
], ids=["config without n_head", "config n_embd a string", "config n_head not dividing n_embd",
        "config n_embd huge", "a checkpoint's config without its manifest", "config nested 100,000 deep",
        "tokenizer of another size", "weights NaN", "weights a key missing", "weights a pickle", "weights a FIFO"])
def test_a_damaged_exported_folder_is_refused_in_one_line(exported, capsys, damage, message):
    damage(exported)
    for command in (["sample", "--max-new-tokens", "3"], ["draw", "--format", "dot"]):
        status = main([command[0], "--out-dir", str(exported), *command[1:]])
        assert message in one_line(capsys, status)


# ------------------------------------------------------------------------------------------------------
# mpiexec: one sample, from rank 0
def test_under_mpiexec_only_rank_0_samples(tmp_path, capsys, monkeypatch):
    write_checkpoint(tmp_path / "out", 2)
    argv = ["sample", "--out-dir", str(tmp_path / "out"), "--max-new-tokens", "10", "--prompt", "All:"]
    monkeypatch.setenv("PMI_SIZE", "2")
    monkeypatch.setenv("PMI_RANK", "1")
    assert main(argv) == 0 and capsys.readouterr() == ("", "")
    monkeypatch.setenv("PMI_RANK", "0")
    assert main(argv) == 0 and capsys.readouterr().out.startswith("All:")


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("mpiexec") is None, reason="needs mpiexec (pip install -e '.[mpi]')")
def test_mpiexec_n_2_minigpt_sample_prints_the_sample_once(tmp_path):
    write_checkpoint(tmp_path / "out", 2)
    result = subprocess.run(["mpiexec", "-n", "2", sys.executable, "-m", "minigpt", "sample", "--out-dir", "out",
                             "--max-new-tokens", "40", "--prompt", "All:"], cwd=tmp_path, env=ENV,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("All:") == 1 and len(result.stdout) == len("All:") + 40 + 1


# ------------------------------------------------------------------------------------------------------
# The messages
def test_a_corpus_on_the_resume_of_a_data_run_names_the_corpus(tmp_path, capsys):
    (tmp_path / "input.txt").write_text(TEXT)
    write_checkpoint(tmp_path / "out", 2, data_path=tmp_path / "input.txt")
    status = main(["train", "--resume", "--out-dir", str(tmp_path / "out"), "--corpus", "tang", "--max-iters", "3"])
    err = one_line(capsys, status)
    assert f"--corpus tang: the run in {tmp_path / 'out'} trained on {tmp_path / 'input.txt'} (its --data)" in err
    assert "give one text to train on, not both" not in err  # the user gave no --data


def test_a_lock_that_cannot_be_written_is_named_and_removed(tmp_path):
    """RLIMIT_FSIZE 0 makes the lock's PID the first write to fail, as a full disk does (Errno 28 said no file)."""
    pytest.importorskip("resource")
    (tmp_path / "input.txt").write_text(TEXT)
    write_checkpoint(tmp_path / "out", 2, data_path=tmp_path / "input.txt")
    code = ("import resource, sys; resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0)); "
            "from minigpt.cli import main; sys.exit(main(sys.argv[1:]))")
    result = subprocess.run([sys.executable, "-c", code, "train", "--resume", "--out-dir", "out", "--max-iters", "3",
                             "--threads", "1"], cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    assert result.returncode == 2 and result.stderr.count("\n") == 1, result.stderr
    assert f"{Path('out') / LOCK}: cannot write the run's lock (File too large); nothing was trained" in result.stderr
    assert not (tmp_path / "out" / LOCK).exists()


def test_minigrad_kernels_numba_without_numba_is_one_note(tmp_path, capsys, monkeypatch):
    from minigrad.kernels import select

    write_checkpoint(tmp_path / "out", 2)
    monkeypatch.setattr(select, "numba_installed", lambda: False)
    monkeypatch.setattr(select, "_chosen", [])  # read MINIGRAD_KERNELS again, as a new process does
    monkeypatch.setenv("MINIGRAD_KERNELS", "numba")
    assert main(["sample", "--out-dir", str(tmp_path / "out"), "--max-new-tokens", "3"]) == 0
    err = capsys.readouterr().err
    assert err == ("minigpt sample: note: minigrad: MINIGRAD_KERNELS=numba, but numba is not installed "
                   "(pip install -e '.[fast]'); using the NumPy ops\n")
