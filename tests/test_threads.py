"""Thread settings: mg.set_num_threads / get_num_threads, and how `minigpt train` chooses its thread count."""

import pytest

import minigrad as mg
from minigpt import threads
from minigpt.threads import ThreadChooser, candidates, thread_chooser


@pytest.fixture
def restore_threads():
    before = mg.get_num_threads()
    yield
    mg.set_num_threads(before)


def test_set_num_threads_changes_the_blas_pool(restore_threads):
    mg.set_num_threads(1)
    assert mg.get_num_threads() == 1
    mg.set_num_threads(3)
    assert mg.get_num_threads() == 3


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, "2"])
def test_set_num_threads_refuses_what_is_not_a_count(bad):
    with pytest.raises(ValueError, match=r"set_num_threads: .*integer >= 1, got"):
        mg.set_num_threads(bad)


def test_candidates_halve_down_to_one():
    assert candidates(1) == [1]
    assert candidates(2) == [2, 1]
    assert candidates(8) == [8, 4, 2, 1]
    assert candidates(6) == [6, 3, 1]


def run(chooser: ThreadChooser, step_seconds: dict[int, float], steps: int) -> list[int]:
    """Drive a chooser as train.py does, each step taking step_seconds[thread count]; the counts used."""
    used = []
    for _ in range(steps):
        chooser.before_step()
        used.append(mg.get_num_threads())
        chooser.after_step(step_seconds[used[-1]])
    return used


def test_the_chooser_keeps_the_faster_count_and_tries_again_later(restore_threads):
    chooser = ThreadChooser([2, 1], every=10, trial_steps=3)
    used = run(chooser, {2: 0.5, 1: 0.1}, 8 + 10)  # a busy machine: one thread is faster
    assert used[:8] == [2, 1, 2, 1, 2, 1, 2, 1]  # a trial: the counts in turn, a settling round, three timed
    assert chooser.chosen == 1 and used[8:] == [1] * 10
    used = run(chooser, {2: 0.1, 1: 0.3}, 8 + 1)  # the machine is quiet again: the next trial finds it
    assert used[:8] == [2, 1, 2, 1, 2, 1, 2, 1]
    assert chooser.chosen == 2 and used[8] == 2


def test_the_settling_step_is_not_counted(restore_threads):
    chooser = ThreadChooser([2, 1], every=100, trial_steps=3)
    times = iter([9.0, 0.2,  # the settling round: 2 threads' first step is slow (memory, caches)
                  0.1, 0.2, 0.1, 0.2, 0.1, 0.2])  # then 2 threads fast, 1 thread slower
    for _ in range(8):
        chooser.before_step()
        chooser.after_step(next(times))
    assert chooser.chosen == 2


def test_a_count_the_user_gave_is_kept(monkeypatch, restore_threads):
    for variable in threads.THREAD_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    chooser, how = thread_chooser(1, "cpu")
    assert chooser.counts == [1] and "--threads 1" in how
    assert run(chooser, {1: 0.1}, 5) == [1] * 5
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "1")
    chooser, how = thread_chooser(0, "cpu")
    assert len(chooser.counts) == 1 and "OPENBLAS_NUM_THREADS=1" in how


def test_by_default_the_count_is_measured(monkeypatch, restore_threads):
    for variable in threads.THREAD_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 4)
    chooser, how = thread_chooser(0, "cpu")
    assert chooser.counts == [4, 2, 1] and "measured" in how
    chooser, how = thread_chooser(0, "cuda")
    assert len(chooser.counts) == 1 and "device" in how


def test_a_rare_trial_still_comes_first(restore_threads):
    """`minigpt sample` tries again only every 1,000 chunks; its first chunks are still a trial (they once were not:
    the trial was due after `every` steps counted from the constructor's default, 250, which never reached 1,000)."""
    chooser = ThreadChooser([2, 1], every=1_000, trial_steps=1)
    used = run(chooser, {2: 0.5, 1: 0.1}, 4 + 3)
    assert used == [2, 1, 2, 1, 1, 1, 1] and chooser.chosen == 1


def test_a_chosen_count_that_turns_slow_is_measured_again(restore_threads):
    """A trial that caught two threads in a quiet moment must not leave the rest of a run ten times slower."""
    chooser = ThreadChooser([2, 1], every=1_000, trial_steps=1)
    assert run(chooser, {2: 0.1, 1: 0.3}, 4 + 2) == [2, 1, 2, 1, 2, 2] and chooser.chosen == 2
    assert run(chooser, {2: 0.25, 1: 0.3}, 3) == [2, 2, 2]  # slower, but within SLOWDOWN of its trial: kept
    used = run(chooser, {2: 1.0, 1: 0.3}, 1 + 4 + 2)  # busy now: one slow step, then a trial, then one thread
    assert used == [2, 2, 1, 2, 1, 1, 1] and chooser.chosen == 1


def test_minigpt_sample_measures_its_thread_count(tmp_path, monkeypatch, capsys, restore_threads):
    from checkpoint_helpers import write_checkpoint

    from minigpt.cli import main

    for variable in threads.THREAD_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(threads.os, "cpu_count", lambda: 4)
    tried = []
    monkeypatch.setattr(threads.mg, "set_num_threads", tried.append)
    write_checkpoint(tmp_path / "out", 2)
    argv = ["sample", "--out-dir", str(tmp_path / "out"), "--max-new-tokens", "60", "--seed", "3"]
    assert main(argv) == 0
    measured = capsys.readouterr().out
    # a trial (each count: a chunk to settle, one timed), then the fastest count (measured again if it turns slow)
    assert tried[:6] == [4, 2, 1, 4, 2, 1] and tried[6] in (4, 2, 1)
    tried.clear()
    assert main([*argv, "--threads", "1"]) == 0
    assert tried == [1] and capsys.readouterr().out == measured  # nothing measured; the same text, in other chunks


def test_in_chunks_splits_a_large_elementwise_computation_over_the_threads(restore_threads):
    import threading

    import numpy as np

    from minigrad.kernels.threads import BLOCK_SIZE, MIN_PARALLEL_SIZE, in_chunks

    seen = []  # (the size of each block the kernel was given, the thread that computed it)

    def kernel(a, b):
        seen.append((a.size, threading.current_thread().name))
        return a * b + 1, np.exp(a)

    rng = np.random.default_rng(0)
    a = rng.standard_normal((MIN_PARALLEL_SIZE // 128 + 7, 130)).astype(np.float32)  # the last block is short
    b = rng.standard_normal((130, MIN_PARALLEL_SIZE // 128 + 7)).astype(np.float32).T  # not contiguous
    blocks = -(-a.size // BLOCK_SIZE)
    mg.set_num_threads(3)
    y, e = in_chunks(kernel, a, b)
    sizes = [size for size, _ in seen]
    assert max(sizes) == BLOCK_SIZE and sum(sizes) == a.size and len(sizes) == blocks
    caller = threading.current_thread().name
    names = [name for _, name in seen]
    assert names.count(caller) == blocks // 3  # the caller computes the first third of the blocks ...
    assert all(name.startswith("minigrad") for name in names if name != caller)  # ... the pool's threads the rest
    assert y.shape == e.shape == a.shape and y.dtype == np.float32
    np.testing.assert_array_equal(y, a * b + 1)
    np.testing.assert_array_equal(e, np.exp(a))
    seen.clear()
    in_chunks(kernel, a[:2], b[:2])
    assert [size for size, _ in seen] == [a[:2].size]  # small: one call, no split
    seen.clear()
    half = a.shape[0] // 4  # below MIN_PARALLEL_SIZE: in blocks, but all on the caller's thread
    in_chunks(kernel, a[:half], b[:half])
    assert len(seen) > 1 and {name for _, name in seen} == {caller}
    seen.clear()
    mg.set_num_threads(1)
    in_chunks(kernel, a, b)
    assert {name for _, name in seen} == {threading.current_thread().name}  # one thread: the caller's
