"""minigrad.distributed: real two-rank jobs under `mpiexec -n 2`, and the one-rank parts in this process.

The two-rank tests start tests/distributed_worker.py with mpiexec, each bounded by a timeout, so a deadlock fails
the test instead of hanging the suite. They are skipped, with the reason, when mpi4py or mpiexec is missing
(pip install -e '.[mpi]').
"""

from __future__ import annotations

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
import minigrad.distributed as dist
import minigrad.functional as F
from minigrad.core import backend
from minigrad.distributed.ddp import make_buckets
from minigrad.distributed.mpi import MISSING_MPI

try:
    import mpi4py  # noqa: F401  (only whether it is installed; MPI itself starts in init_process_group)

    HAVE_MPI4PY = True
except ImportError:
    HAVE_MPI4PY = False

needs_mpi4py = pytest.mark.skipif(not HAVE_MPI4PY, reason="needs mpi4py: pip install -e '.[mpi]'")
needs_mpiexec = pytest.mark.skipif(not HAVE_MPI4PY or shutil.which("mpiexec") is None,
                                   reason="needs mpi4py and mpiexec: pip install -e '.[mpi]'")
WORKER = Path(__file__).with_name("distributed_worker.py")
ROOT = Path(mg.__file__).resolve().parent.parent  # the checkout under test, for the ranks' imports
TIMEOUT = 60  # seconds: a job that deadlocks is killed and fails its test

# One process on the whole batch against two ranks on its halves, after 10 steps, float32 weights of size up to
# 0.4. The gradients differ only in how the batch's mean is summed (two half-sums, then their mean): float32
# rounding. Measured: at most 3.0e-8 for both optimizers (one float32 ulp at 0.36). AdamW divides by sqrt(v),
# which can magnify such differences in its first steps (1.4e-5 was seen with a GPT), hence its wider bound.
SGD_ATOL, ADAMW_ATOL = 1e-7, 1e-6


def run_job(*args: str, ranks: int = 2) -> subprocess.CompletedProcess:
    """`mpiexec -n ranks python distributed_worker.py args...`, one BLAS thread per rank, within TIMEOUT."""
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    command = ["mpiexec", "-n", str(ranks), sys.executable, str(WORKER), *args]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=TIMEOUT)


def reference_weights(optimizer_name: str) -> dict[str, np.ndarray]:
    """One process, the whole batch every step, starting from rank 0's weights."""
    import distributed_worker as worker

    model = worker.make_model(seed=100)
    optimizer = worker.make_optimizer(optimizer_name, list(model.parameters()))
    for step in range(worker.STEPS):
        x, y = worker.global_batch(step)
        loss = F.cross_entropy(model(mg.tensor(x)), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return {k: v.numpy() for k, v in model.state_dict().items()}


def load_ranks(out: Path, ranks: int = 2) -> list[dict[str, np.ndarray]]:
    result = []
    for r in range(ranks):
        with np.load(out / f"rank{r}.npz", allow_pickle=False) as f:
            result.append({k: f[k] for k in f.files})
    return result


@needs_mpiexec
@pytest.mark.parametrize("optimizer_name, atol", [("sgd", SGD_ATOL), ("adamw", ADAMW_ATOL)])
def test_two_ranks_equal_one_process_on_the_whole_batch(tmp_path, optimizer_name, atol):
    job = run_job("train", optimizer_name, str(tmp_path))
    assert job.returncode == 0, job.stderr
    rank0, rank1 = load_ranks(tmp_path)
    for name in rank0:  # the same bits on both ranks (they started from different seeds: the broadcast worked)
        np.testing.assert_array_equal(rank0[name], rank1[name], err_msg=name)
    reference = reference_weights(optimizer_name)
    assert rank0.keys() == reference.keys()
    for name, expected in reference.items():
        np.testing.assert_allclose(rank0[name], expected, rtol=0, atol=atol, err_msg=name)
    start = __import__("distributed_worker").make_model(seed=100).state_dict()
    assert any(not np.allclose(rank0[k], start[k].numpy()) for k in rank0), "the weights moved"


@needs_mpiexec
@pytest.mark.gpu
@pytest.mark.skipif(not mg.cuda.is_available(), reason="needs CuPy and an NVIDIA GPU")
def test_the_nccl_backend_trains_as_one_process(tmp_path):
    # One rank on one GPU (NCCL refuses two ranks on one GPU): it runs the NCCL calls, the unique id over MPI, the
    # buckets on CuPy arrays and the broadcast, against the CPU process on the whole batch (float32 on two devices).
    job = run_job("train", "sgd", str(tmp_path), "nccl", ranks=1)
    assert job.returncode == 0, job.stderr
    (weights,) = load_ranks(tmp_path, ranks=1)
    for name, expected in reference_weights("sgd").items():
        np.testing.assert_allclose(weights[name], expected, rtol=0, atol=1e-5, err_msg=name)


@needs_mpiexec
def test_a_parameter_only_one_rank_uses_is_averaged_with_zeros(tmp_path):
    job = run_job("unused", str(tmp_path))
    assert job.returncode == 0, job.stderr
    rank0, rank1 = load_ranks(tmp_path)
    assert "own_extra" not in rank0 and "own_extra" in rank1
    for name in rank0:
        np.testing.assert_array_equal(rank0[name], rank1[name], err_msg=name)
    np.testing.assert_allclose(rank0["extra.weight"], rank1["own_extra"] / 2, rtol=1e-6)


@needs_mpiexec
def test_ranks_with_different_models_get_a_clear_error_not_a_hang():
    job = run_job("mismatch")
    assert job.returncode == 0, job.stderr
    for rank in (0, 1):
        assert (f"rank {rank} caught: DistributedDataParallel: the ranks hold different models: tensor #0 is "
                "0.weight (32, 8) float32 on cpu on rank 0 but 0.weight (48, 8) float32 on cpu on rank 1") in job.stdout


@needs_mpiexec
@pytest.mark.parametrize("how, code", [("exit", 3), ("kill", 9), ("raise", 1), ("term", 128 + 15)])
def test_a_rank_that_dies_ends_the_job(how, code):
    # Rank 0 is waiting in an all-reduce when rank 1 goes: without MPI's clean-up (a process that ended without
    # MPI_Finalize, or MPI_Abort from abort_on_failure) this would hang until the timeout fails the test.
    job = run_job(how)
    assert job.returncode == code, (job.returncode, job.stderr)
    if how == "raise":
        assert "rank 1: ValueError: a bad batch on rank 1; ending every rank of the job" in job.stderr
    if how == "term":  # a signal is a clean stop: both ranks leave after the same step
        assert "rank 0 stopped after step 3 (SIGTERM on another rank)" in job.stdout
        assert "rank 1 stopped after step 3 (SIGTERM)" in job.stdout


@needs_mpiexec
def test_ctrl_c_ends_every_rank_after_rank_0_saves(tmp_path):
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    job = subprocess.Popen(["mpiexec", "-n", "2", sys.executable, str(WORKER), "interrupt", str(tmp_path)], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + TIMEOUT
        while not all((tmp_path / f"started{r}").exists() for r in (0, 1)) and time.monotonic() < deadline:
            time.sleep(0.1)
        job.send_signal(signal.SIGINT)  # what Ctrl-C does: mpiexec passes it on to every rank
        _, stderr = job.communicate(timeout=TIMEOUT)
    finally:
        if job.poll() is None:
            job.kill()
            job.wait()
    assert job.returncode == 128 + signal.SIGINT, stderr
    stopped = [(tmp_path / f"stopped{r}").read_text() for r in (0, 1)]
    assert stopped[0] == stopped[1], "both ranks stopped after the same step"
    assert (tmp_path / "saved").read_text() == f"SIGINT after {stopped[0]} steps"


@needs_mpi4py
def test_a_second_ctrl_c_or_an_error_in_one_rank_jobs_behave_as_without_mpi(one_rank):
    from minigpt.distributed_training import RankGuard

    with RankGuard(one_rank) as guard:
        assert not guard.stop_agreed()
        signal.raise_signal(signal.SIGINT)  # the first Ctrl-C only asks the loop to stop
        assert guard.stop_agreed() and guard.stop_reason == "SIGINT" and guard.exit_code == 130
    with pytest.raises(ValueError, match="one rank: re-raised"):
        with RankGuard(one_rank):
            raise ValueError("one rank: re-raised")
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler, "the handlers are put back"


def test_a_missing_mpi4py_is_one_clear_line(tmp_path):
    # A child process where importing mpi4py fails, as it does when the extra is not installed.
    code = ("import sys; sys.modules['mpi4py'] = None\n"
            "import minigrad.distributed as dist\n"
            "try:\n    dist.init_process_group('mpi')\nexcept RuntimeError as e:\n    print(e)\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=TIMEOUT,
                         cwd=tmp_path)
    assert out.stdout.strip() == MISSING_MPI == "minigrad.distributed needs mpi4py and an MPI library: pip install " \
                                                "-e '.[mpi]'"


def test_calls_before_init_raise_as_in_pytorch():
    assert not dist.is_initialized()
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.get_rank()
    with pytest.raises(ValueError, match="unknown backend 'gloo'"):
        dist.init_process_group("gloo")


def test_buckets_hold_one_dtype_in_reverse_order_within_the_cap():
    params = [mg.zeros(100, requires_grad=True), mg.zeros(100, requires_grad=True),
              mg.zeros(100, dtype="float64", requires_grad=True), mg.zeros(1000, requires_grad=True)]
    buckets = make_buckets(params, cap_bytes=1000)
    assert [[id(p) for p in b] for b in buckets] == [[id(params[3])], [id(params[2])], [id(params[1]), id(params[0])]]


@needs_mpiexec
def test_all_reduce_and_broadcast_on_the_host_and_on_a_device(tmp_path):
    job = run_job("collectives", str(tmp_path))
    assert job.returncode == 0, job.stderr
    base = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = {"SUM": base * 3, "MAX": base * 2, "AVG": base * 1.5, "transposed": (base * 3).T,
                "broadcast": np.full(4, 20.0, dtype=np.float32)}
    for rank, rank_results in enumerate(load_ranks(tmp_path)):
        assert tuple(rank_results["on_this_machine"]) == (rank, 2), "two ranks on this one machine"
        for device in ("cpu", "strict"):
            for name, value in expected.items():
                np.testing.assert_array_equal(rank_results[f"{device}_{name}"], value, err_msg=f"{device} {name}")


# --- One rank in this process (MPI starts as a singleton): what runs without a second rank or a GPU ---------------

@pytest.fixture
def one_rank():
    dist.init_process_group("mpi")
    yield dist.process_group.group()
    dist.destroy_process_group()


@needs_mpi4py
def test_ddp_on_the_strict_device_keeps_gradients_on_the_device(one_rank):
    import distributed_worker as worker

    model = worker.Branchy().to("strict")
    ddp = dist.DistributedDataParallel(model)
    x, _ = worker.global_batch(0)
    ddp(mg.tensor(x, device="strict"), use_extra=False).backward()
    before = {k: backend.as_numpy(p.grad.array) for k, p in model.named_parameters() if p.grad is not None}
    ddp.sync_gradients()  # a HostLeakError here would mean a silent copy to the host
    assert model.extra.weight.grad is None, "no rank had a gradient: it stays None, as without DDP"
    for name, p in model.named_parameters():
        if name in before:
            assert type(p.grad.array).__name__ == "StrictArray"
            np.testing.assert_array_equal(backend.as_numpy(p.grad.array), before[name])  # the mean over 1 rank
    assert list(ddp.state_dict()) == ["module." + k for k in model.state_dict()]


@needs_mpi4py
def test_a_forgotten_sync_is_an_error_at_the_next_forward(one_rank):
    import distributed_worker as worker

    ddp = dist.DistributedDataParallel(worker.make_model())
    x = mg.tensor(worker.global_batch(0)[0])
    with ddp.no_sync():  # gradient accumulation: no sync between these two
        ddp(x).sum().backward()
        ddp(x).sum().backward()
    ddp(x).sum().backward()
    with pytest.raises(RuntimeError, match="never averaged: call model.sync_gradients"):
        ddp(x)
    ddp.sync_gradients()
    with mg.no_grad():  # evaluation makes no gradients to average
        ddp(x)
        ddp(x)


class FakeNccl:
    """The part of cupy.cuda.nccl that NcclCommunicator's set-up touches, recording what it was given."""

    NCCL_FLOAT16, NCCL_FLOAT32, NCCL_FLOAT64, NCCL_INT8, NCCL_UINT8, NCCL_INT32, NCCL_INT64 = 6, 7, 8, 0, 1, 2, 4
    NCCL_SUM, NCCL_PROD, NCCL_MAX, NCCL_MIN = 0, 1, 2, 3

    @staticmethod
    def get_unique_id() -> tuple[int, ...]:
        return tuple(range(-64, 64))

    class NcclCommunicator:
        def __init__(self, size: int, uid: tuple[int, ...], rank: int) -> None:
            self.made_with = (size, uid, rank)
            self.destroyed = False

        def destroy(self) -> None:
            self.destroyed = True


@needs_mpi4py
def test_nccl_set_up_shares_rank_0s_id_and_leaves_host_arrays_to_mpi(one_rank):
    from minigrad.distributed.nccl import NcclCommunicator, nccl_dtype

    comm = NcclCommunicator(one_rank, nccl=FakeNccl())
    assert comm.comm.made_with == (1, tuple(range(-64, 64)), 0)
    assert nccl_dtype(FakeNccl, np.float32) == FakeNccl.NCCL_FLOAT32
    with pytest.raises(TypeError, match="cannot reduce bool arrays"):
        nccl_dtype(FakeNccl, np.bool_)
    strict = mg.tensor([1.0, 2.0], device="strict").array
    comm.all_reduce_(strict, dist.ReduceOp.AVG)  # not a CuPy array: through MPI, staying a StrictArray
    assert type(strict).__name__ == "StrictArray"
    comm.close()
    assert comm.comm.destroyed


# --- minigpt.distributed_training: the rules a training loop follows under mpiexec ----------------------------------

def test_each_rank_draws_its_own_batches_and_rank_0_draws_the_single_process_ones():
    from minigpt.distributed_training import batch_rng

    one = batch_rng(1337, 0, 1).integers(0, 10**9, 8)
    np.testing.assert_array_equal(one, np.random.default_rng(1337).integers(0, 10**9, 8))
    r0, r1, r2 = (batch_rng(1337, r, 3).integers(0, 10**9, 8) for r in (0, 1, 2))
    np.testing.assert_array_equal(r0, one)
    assert not np.array_equal(r0, r1) and not np.array_equal(r1, r2)
    np.testing.assert_array_equal(r1, batch_rng(1337, 1, 3).integers(0, 10**9, 8))  # seeded: repeatable
    with pytest.raises(ValueError, match="rank 2 outside 0..1"):
        batch_rng(1337, 2, 2)


def test_grad_accum_is_divided_among_the_ranks_as_nanogpt_does():
    from minigpt.distributed_training import micro_steps_per_rank

    assert micro_steps_per_rank(8, 2) == 4 and micro_steps_per_rank(2, 2) == 1 and micro_steps_per_rank(5, 1) == 5
    with pytest.raises(ValueError, match="--grad-accum 3 must be a multiple of the number of ranks"):
        micro_steps_per_rank(3, 2)


def test_ranks_times_threads_stays_within_the_cores(monkeypatch):
    from minigpt.distributed_training import THREAD_VARIABLES, is_writer, threads_per_rank

    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert threads_per_rank(2, cores=8) == (4, "BLAS threads per rank: 4 (2 ranks on 8 cores)")
    assert threads_per_rank(3, cores=8)[0] == 2
    threads, line = threads_per_rank(4, cores=2)
    assert threads == 1 and "more ranks than cores" in line
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "3")
    assert threads_per_rank(2, cores=8) == (3, "BLAS threads per rank: 3 (from OPENBLAS_NUM_THREADS)")
    assert is_writer(0) and not is_writer(1)


@needs_mpi4py
@pytest.mark.skipif(mg.cuda.is_available(), reason="checks the error a machine without CuPy gives")
def test_nccl_without_cupy_is_one_clear_line():
    expected = r"backend 'nccl' needs CuPy and an NVIDIA GPU: pip install -e '\.\[cuda12\]'"
    with pytest.raises(RuntimeError, match=expected):
        dist.init_process_group("nccl")
    assert not dist.is_initialized()
