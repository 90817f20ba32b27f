"""`mpiexec -n 2 python -m minigpt train`: data-parallel training of a tiny GPT, end to end.

Each test starts a real two-rank job on a small text, bounded by a timeout (a hang fails the test), and is skipped
with the reason when mpi4py or mpiexec is missing (pip install -e '.[mpi]'). The ranks import this checkout
(PYTHONPATH), one BLAS thread each.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
from minigpt import checkpoint
from minigpt.data import get_batch, load_dataset

try:
    import mpi4py  # noqa: F401  (only whether it is installed)

    HAVE_MPI4PY = True
except ImportError:
    HAVE_MPI4PY = False

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not HAVE_MPI4PY or shutil.which("mpiexec") is None,
                                                   reason="needs mpi4py and mpiexec: pip install -e '.[mpi]'")]

ROOT = Path(mg.__file__).resolve().parent.parent  # the checkout under test
TIMEOUT = 120  # seconds for a whole job (the machine may be busy); a deadlock is killed and fails its test
TEXT = "".join(f"{i} To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer.\n"
               for i in range(60))
TINY = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16", "--batch-size", "4",
        "--eval-iters", "2", "--dropout", "0.1", "--seed", "7"]


def job_env(tmp_path: Path) -> dict[str, str]:
    """One BLAS thread per rank, this checkout, and a marker that tells this test's ranks from any other process."""
    return {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT),
            "MINIGPT_TEST_JOB": str(tmp_path)}


def train_argv(tmp_path: Path, *flags: str, ranks: int = 2) -> list[str]:
    data = tmp_path / "input.txt"
    if not data.exists():
        data.write_text(TEXT, encoding="utf-8")
    command = ["mpiexec", "-n", str(ranks)] if ranks > 1 else []
    return [*command, sys.executable, "-u", "-m", "minigpt", "train", "--data", str(data), *TINY, *flags]


def train(tmp_path: Path, *flags: str, ranks: int = 2) -> subprocess.CompletedProcess:
    return subprocess.run(train_argv(tmp_path, *flags, ranks=ranks), env=job_env(tmp_path), capture_output=True,
                          text=True, timeout=TIMEOUT)


def as_array(value: object) -> object:
    return value.numpy() if isinstance(value, mg.Tensor) else value


def files(out: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(out.iterdir()) if p.is_file()}


def test_two_ranks_train_one_model_and_only_rank_0_writes(tmp_path):
    out = tmp_path / "out"
    job = train(tmp_path, "--out-dir", str(out), "--max-iters", "12", "--eval-interval", "6")
    assert job.returncode == 0, job.stderr
    # rank 0 speaks for the job: each line once (rank 1's stdout goes nowhere)
    assert job.stdout.count("done: 12 iterations") == 1 and job.stdout.count("iter 6:") == 1, job.stdout
    assert "BLAS threads per rank: 1 (from OPENBLAS_NUM_THREADS)" in job.stdout
    assert "each step: 2 micro-batches of 4, 1 on each of 2 ranks" in job.stdout
    assert sorted(p.name for p in out.iterdir()) == sorted([*checkpoint.FILES, checkpoint.MANIFEST, "loss_curve.png"])
    ckpt = checkpoint.load_checkpoint(out)  # one checkpoint, in the one-process format: sample loads it
    assert ckpt.iter_num == 12 and ckpt.config["train"]["grad_accum"] == 2
    state = ckpt.state
    assert state["world_size"] == 2 and state["rank_rngs"][0]["batch_rng"] == state["batch_rng"]
    # Rank 1 took the same 12 steps on its own stream: its generator is where 12 batches from batch_rng(seed, 1, 2)
    # leave it, and its dropout masks came from its own seed (seed + rank).
    rank1, train_ids = np.random.default_rng([7, 1]), load_dataset(tmp_path / "input.txt", 16).train
    for _ in range(12):
        get_batch(train_ids, 4, 16, rank1)
    assert state["rank_rngs"][1]["batch_rng"] == rank1.bit_generator.state
    assert state["rank_rngs"][1]["batch_rng"] != state["batch_rng"]
    assert state["rank_rngs"][1]["minigrad_rng"]["seed"] == 8
    sample = subprocess.run([sys.executable, "-m", "minigpt", "sample", "--out-dir", str(out), "--max-new-tokens",
                             "20"], env=job_env(tmp_path), capture_output=True, text=True, timeout=TIMEOUT)
    assert sample.returncode == 0 and len(sample.stdout) > 20, sample.stderr


def test_a_resumed_two_rank_run_continues_exactly(tmp_path):
    whole, halves = tmp_path / "whole", tmp_path / "halves"
    job = train(tmp_path, "--out-dir", str(whole), "--max-iters", "12", "--eval-interval", "6")
    assert job.returncode == 0, job.stderr
    # the same schedule (it decays over 12 iterations), stopped at 6 and resumed
    job = train(tmp_path, "--out-dir", str(halves), "--max-iters", "6", "--lr-decay-iters", "12", "--eval-interval",
                "6")
    assert job.returncode == 0, job.stderr
    job = train(tmp_path, "--out-dir", str(halves), "--resume", "--max-iters", "12")
    assert job.returncode == 0, job.stderr
    assert files(halves)[checkpoint.MODEL] == files(whole)[checkpoint.MODEL]  # the same bytes
    resumed, uninterrupted = checkpoint.load_checkpoint(halves), checkpoint.load_checkpoint(whole)
    assert json.dumps(resumed.optimizer_state["param_groups"]) == json.dumps(uninterrupted.optimizer_state[
        "param_groups"])
    for key, moments in uninterrupted.optimizer_state["state"].items():
        for name, value in moments.items():
            theirs = resumed.optimizer_state["state"][key][name]
            np.testing.assert_array_equal(as_array(theirs), as_array(value), err_msg=f"{key}.{name}")
    assert json.loads(files(halves)[checkpoint.STATE]) == json.loads(files(whole)[checkpoint.STATE])

    # another number of ranks cannot continue the ranks' streams: one line, exit 2, the checkpoint untouched
    before = files(halves)
    job = train(tmp_path, "--out-dir", str(halves), "--resume", "--max-iters", "18", ranks=1)
    assert job.returncode == 2
    assert job.stderr == (f"minigpt train: error: cannot resume {halves} on 1 rank: it was trained on 2, and each "
                          "rank's batches and dropout masks continue only there; resume it with `mpiexec -n 2 "
                          f"minigpt train --resume --out-dir {halves}`\n")
    assert files(halves) == before


def test_grad_accum_must_be_shared_evenly_among_the_ranks(tmp_path):
    job = train(tmp_path, "--out-dir", str(tmp_path / "out"), "--max-iters", "2", "--grad-accum", "3")
    assert job.returncode == 2
    assert ("minigpt train: error: --grad-accum 3 must be a multiple of the number of ranks (2): each rank runs an "
            "equal share of the micro-steps") in job.stderr
    assert not (tmp_path / "out").exists()


def rank_pids(tmp_path: Path, rank: int) -> list[int]:
    """The processes of this test's job that mpiexec started as `rank` (MPICH's PMI_RANK in their environment)."""
    marker, wanted = f"MINIGPT_TEST_JOB={tmp_path}".encode(), f"PMI_RANK={rank}".encode()
    pids = []
    for entry in Path("/proc").iterdir():
        try:
            variables = (entry / "environ").read_bytes().split(b"\0") if entry.name.isdigit() else []
        except OSError:  # gone, or not ours
            continue
        if marker in variables and wanted in variables:
            pids.append(int(entry.name))
    return pids


def start_long_job(tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    """A two-rank run that would go on for a long time, once its first checkpoint (iteration 4) is written."""
    out = tmp_path / "out"
    job = subprocess.Popen(train_argv(tmp_path, "--out-dir", str(out), "--max-iters", "1000000", "--eval-interval",
                                      "4"),
                           env=job_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + TIMEOUT
    while checkpoint.iteration(out) is None and time.monotonic() < deadline and job.poll() is None:
        time.sleep(0.2)
    assert checkpoint.iteration(out) is not None, "the job never saved"
    return job, out


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds the ranks through /proc")
def test_a_rank_killed_mid_run_ends_the_job_without_a_hang(tmp_path):
    job, out = start_long_job(tmp_path)
    try:
        (pid,) = rank_pids(tmp_path, 1)
        os.kill(pid, signal.SIGKILL)
        started = time.monotonic()
        _, stderr = job.communicate(timeout=TIMEOUT)
        ended_in = time.monotonic() - started
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    assert job.returncode != 0 and ended_in < 30, (job.returncode, ended_in, stderr)
    assert checkpoint.load_checkpoint(out).iter_num % 4 == 0  # the last complete checkpoint, intact
    assert rank_pids(tmp_path, 0) == [], "rank 0 ended too"


def test_ctrl_c_saves_once_and_every_rank_exits_130(tmp_path):
    job, out = start_long_job(tmp_path)
    try:
        job.send_signal(signal.SIGINT)  # Ctrl-C in the terminal: mpiexec passes it on to every rank
        stdout, stderr = job.communicate(timeout=TIMEOUT)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    assert job.returncode == 130, (job.returncode, stderr)
    (line,) = [line for line in stdout.splitlines() if line.startswith("interrupted")]
    at = int(line.split()[3].rstrip(":"))
    assert line == (f"interrupted at iteration {at}: checkpoint saved in {out}; continue with `mpiexec -n 2 minigpt "
                    f"train --resume --out-dir {out}`")
    ckpt = checkpoint.load_checkpoint(out)
    assert ckpt.iter_num == at and len(ckpt.state["rank_rngs"]) == 2
