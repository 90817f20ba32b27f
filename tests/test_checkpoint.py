"""Saving a checkpoint is atomic as a whole: at every instant, whatever fails and whenever the process dies, the
folder holds one complete checkpoint, the old or the new. Also: a save never goes back to an earlier iteration,
never writes non-finite weights, and the debris of an interrupted save is cleared by the next one."""

import builtins
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from checkpoint_helpers import TEXT, rewrite, snapshot, write_checkpoint

import minigrad as mg
from minigpt import checkpoint
from minigpt.checkpoint import CheckpointError, load_checkpoint, load_model
from minigrad.tools import serialization

OLD, NEW = 10, 20  # the iterations of the checkpoint in the folder, and of the one being saved
ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(autouse=True)
def _fresh_cwd(tmp_path, monkeypatch):
    """Each test in its own folder: a run's default out/ never comes from, or goes to, the checkout."""
    monkeypatch.chdir(tmp_path)


def wte(out_dir):
    """The token embedding, which tells the two checkpoints apart (their weights come from other seeds)."""
    return load_checkpoint(out_dir).model_state["transformer.wte.weight"].numpy()


class Faults:
    """Wraps every call a save makes that changes the disk (or opens a file), so a test can make the k-th fail.

    With `persistent`, every later call fails too: a disk that went away, or a process that died there (nothing
    after the fault happens, not even the clean-up). Before each call, `check` may look at the folder.
    """

    CALLS = ("mkdir", "open", "replace", "fsync", "rmdir", "unlink", "rename")

    def __init__(self, monkeypatch, fail_at=None, persistent=False, check=None):
        self.count, self.fail_at, self.persistent, self.check, self.busy = 0, fail_at, persistent, check, False
        for name in self.CALLS:
            monkeypatch.setattr(os, name, self._wrap(getattr(os, name)))
        monkeypatch.setattr(checkpoint, "open", self._wrap(builtins.open), raising=False)

    def _wrap(self, function):
        def call(*args, **kwargs):
            if self.busy:  # the check itself reads the folder: not counted
                return function(*args, **kwargs)
            if self.check is not None:
                self.busy = True
                try:
                    self.check()
                finally:
                    self.busy = False
            self.count += 1
            if self.fail_at is not None and (self.count == self.fail_at or self.persistent and self.count > self.fail_at):  # noqa: E501
                raise OSError(28, "No space left on device (injected)")
            return function(*args, **kwargs)

        return call


def test_the_folder_holds_the_old_or_the_new_checkpoint_at_every_file_operation(tmp_path, monkeypatch):
    out = tmp_path / "out"
    write_checkpoint(out, OLD, seed=1)
    write_checkpoint(tmp_path / "new", NEW, seed=2)
    old_wte, new_wte = wte(out), wte(tmp_path / "new")
    pristine = snapshot(out)
    seen = set()

    def whole():  # run before every single operation of the save
        loaded = load_checkpoint(out)
        assert loaded.iter_num in (OLD, NEW)
        expected = old_wte if loaded.iter_num == OLD else new_wte
        np.testing.assert_array_equal(loaded.model_state["transformer.wte.weight"].numpy(), expected)
        seen.add(loaded.iter_num)

    # fsync is counted (and made to fail) below, but does not wait for the disk here: this test is about which
    # files are where after each step, not about the disk's cache (the kill -9 test below syncs for real).
    monkeypatch.setattr(os, "fsync", lambda fd: None)
    with monkeypatch.context() as patch:
        faults = Faults(patch, check=whole)
        write_checkpoint(out, NEW, seed=2)
    n_operations = faults.count
    assert n_operations >= 30 and seen == {OLD, NEW}  # the check saw the folder switch, at one operation
    whole()

    # Now make each operation fail in turn, once (a full disk) or for good (a crash at that instant).
    failures = 0
    for persistent in (False, True):
        for fail_at in range(1, n_operations + 1):
            _reset(out, pristine)
            with monkeypatch.context() as patch:
                Faults(patch, fail_at=fail_at, persistent=persistent)
                try:
                    write_checkpoint(out, NEW, seed=2)
                    failed = False  # (creating a folder that exists may fail harmlessly)
                except (OSError, CheckpointError) as error:
                    assert "injected" in str(error)
                    failed = True
            whole()
            assert failed or load_checkpoint(out).iter_num == NEW
            failures += failed
            # The next save starts by clearing what the failed one left (finishing its move if it committed).
            checkpoint.recover(out)
            assert sorted(p.name for p in out.iterdir()) == sorted((*checkpoint.FILES, checkpoint.MANIFEST))
            whole()
    assert failures >= 2 * (n_operations - 1)
    write_checkpoint(out, NEW + 1, seed=3)  # and then saves as always
    assert load_checkpoint(out).iter_num == NEW + 1


def _reset(out, files):
    """Put the folder back to exactly `files` (a snapshot)."""
    for path in sorted(out.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    for name, data in files.items():
        (out / name).write_bytes(data)


# The child process: reload the checkpoint, then save it again and again with a growing iteration, as fast
# as it can, until it is killed.
SAVER = """
import sys
from minigpt import checkpoint, GPT
from minigrad import optim
out = sys.argv[1]
ckpt = checkpoint.load_checkpoint(out)
model = GPT(ckpt.model_config)
checkpoint.load_weights(model, ckpt)
decay = [p for p in model.parameters() if p.ndim >= 2]
no_decay = [p for p in model.parameters() if p.ndim < 2]
optimizer = optim.AdamW([{"params": decay}, {"params": no_decay}], lr=1e-3)
checkpoint.load_optimizer(optimizer, ckpt)
for iter_num in range(ckpt.iter_num + 1, 10**9):
    checkpoint.save_checkpoint(out, model, optimizer, ckpt.tokenizer, ckpt.config, {**ckpt.state, "iter_num": iter_num},
                               ckpt.metrics)
    print("saved", flush=True)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs kill -9 (POSIX)")
def test_kill_minus_9_during_saves_leaves_a_checkpoint_that_loads(tmp_path):
    out = tmp_path / "out"
    write_checkpoint(out, 1)
    rng, last = random.Random(0), 1
    for _ in range(4):
        saver = subprocess.Popen([sys.executable, "-c", SAVER, str(out)], stdout=subprocess.PIPE, text=True,
                                 env={**os.environ, "PYTHONPATH": str(ROOT)})  # this checkout's minigpt
        try:
            assert saver.stdout.readline() == "saved\n"
            time.sleep(rng.uniform(0, 0.2))  # a save takes about 0.1 s (fsync): the kill comes in one
        finally:
            saver.send_signal(signal.SIGKILL)
            saver.wait()
        loaded = load_checkpoint(out)  # complete and verified, whatever instant the kill came at
        assert loaded.iter_num >= last
        last = loaded.iter_num
    assert last > 4  # it did save, in each round
    write_checkpoint(out, last + 1)  # and the next save clears whatever the kill left behind
    assert sorted(p.name for p in out.iterdir()) == sorted((*checkpoint.FILES, checkpoint.MANIFEST))


def test_a_load_during_the_move_sees_the_new_checkpoint_whole(tmp_path):
    out = tmp_path / "out"
    write_checkpoint(out, OLD, seed=1)
    write_checkpoint(tmp_path / "next", NEW, seed=2)
    new_wte = wte(tmp_path / "next")
    # As a save that died after its commit, having moved two of its files into place:
    (tmp_path / "next").rename(out / checkpoint.COMMITTED)
    for name in (checkpoint.MODEL, checkpoint.CONFIG):
        os.replace(out / checkpoint.COMMITTED / name, out / name)
    loaded = load_checkpoint(out)
    assert loaded.iter_num == NEW
    np.testing.assert_array_equal(loaded.model_state["transformer.wte.weight"].numpy(), new_wte)
    checkpoint.recover(out)  # finishes the move
    assert not (out / checkpoint.COMMITTED).exists() and load_checkpoint(out).iter_num == NEW


def test_recover_removes_the_debris_of_uncommitted_saves(tmp_path):
    out = tmp_path / "out"
    write_checkpoint(out, OLD)
    before = snapshot(out)
    (out / checkpoint.PENDING).mkdir()
    (out / checkpoint.PENDING / checkpoint.MODEL).write_bytes(b"half a file")
    (out / ".model.safetensors.partial").write_bytes(b"format 1")  # what older versions left
    (out / ".optimizer.safetensors.1234.abcd.tmp").write_bytes(b"mg.save")
    assert load_checkpoint(out).iter_num == OLD  # debris never confuses a load
    checkpoint.recover(out)
    assert snapshot(out) == before


def test_a_checkpoint_is_never_replaced_by_one_of_an_earlier_iteration(tmp_path):
    out = tmp_path / "out"
    write_checkpoint(out, NEW)
    before = snapshot(out)
    with pytest.raises(CheckpointError, match=f"holds the checkpoint of iteration {NEW}; not replacing it with "
                                              f"one of iteration {OLD}"):
        checkpoint.save_checkpoint(out, *_parts(out, OLD))
    assert snapshot(out) == before
    checkpoint.save_checkpoint(out, *_parts(out, OLD), allow_earlier=True)  # what --overwrite allows
    assert load_checkpoint(out).iter_num == OLD


def _parts(out, iter_num):
    """The arguments of save_checkpoint after out_dir, from the checkpoint in `out`, as iteration `iter_num`."""
    ckpt = load_checkpoint(out)
    model = checkpoint.GPT(ckpt.model_config)
    checkpoint.load_weights(model, ckpt)
    optimizer = mg.optim.AdamW([{"params": [p for p in model.parameters() if p.ndim >= 2]},
                                {"params": [p for p in model.parameters() if p.ndim < 2]}], lr=1e-3)
    checkpoint.load_optimizer(optimizer, ckpt)
    return model, optimizer, ckpt.tokenizer, ckpt.config, {**ckpt.state, "iter_num": iter_num}, ckpt.metrics


def test_non_finite_weights_are_neither_saved_nor_loaded(tmp_path):
    out = tmp_path / "out"
    write_checkpoint(out, OLD)
    model, *rest = _parts(out, NEW)
    model.transformer.h[0].attn.c_proj.weight.data[0, 0] = np.nan
    with pytest.raises(CheckpointError, match="transformer.h.0.attn.c_proj.weight holds non-finite values"):
        checkpoint.save_checkpoint(out, model, *rest)
    assert load_checkpoint(out).iter_num == OLD
    # A file with a NaN in it (however it got there) is refused by name, also for sampling.
    weights = mg.load(out / checkpoint.MODEL)
    weights["transformer.wpe.weight"].data[3, 1] = np.inf
    rewrite(out, checkpoint.MODEL, serialization.to_bytes(weights))
    with pytest.raises(CheckpointError, match=r"model.safetensors: transformer.wpe.weight holds non-finite"):
        load_model(out)


def test_a_checkpoint_of_this_text_trains_on(tmp_path):
    """The helper's checkpoints are real ones: `train --resume` continues them (the hostile-file tests rely on it)."""
    data = tmp_path / "input.txt"
    data.write_text(TEXT, encoding="utf-8")
    write_checkpoint(tmp_path / "out", 2, data_path=data)
    from minigpt.cli import main

    assert main(["train", "--resume", "--out-dir", str(tmp_path / "out"), "--max-iters", "3"]) == 0
    assert load_checkpoint(tmp_path / "out").iter_num == 3
