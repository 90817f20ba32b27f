"""A batch split over threads (minigpt/batch_threads.py) computes the step one backward over the whole batch does,
and `minigpt train` offers it only where that holds (threads.py)."""

import json

import numpy as np
import pytest

import minigrad as mg
from minigpt import GPT, GPTConfig
from minigpt.batch_threads import BatchThreads
from minigpt.threads import Plan, plans, training_chooser

CONFIG = GPTConfig(vocab_size=19, block_size=12, n_layer=2, n_head=2, n_embd=16)


def batch(rows: int, seed: int = 0) -> tuple[mg.Tensor, mg.Tensor]:
    rng = np.random.default_rng(seed)
    return (mg.tensor(rng.integers(0, CONFIG.vocab_size, (rows, CONFIG.block_size))),
            mg.tensor(rng.integers(0, CONFIG.vocab_size, (rows, CONFIG.block_size))))


def gradients(model: GPT) -> dict[str, np.ndarray]:
    return {name: p.grad.numpy().copy() for name, p in model.named_parameters()}


@pytest.mark.parametrize(("dtype", "tolerance"), [(np.float64, 1e-12), (np.float32, 1e-5)])
@pytest.mark.parametrize(("rows", "shards"), [(8, 2), (7, 3), (5, 5), (3, 4)])  # even, uneven, one row, idle
def test_the_split_step_is_one_backward_over_the_whole_batch(dtype, tolerance, rows, shards):
    mg.manual_seed(3)
    model = GPT(CONFIG).to(dtype=dtype)
    x, y = batch(rows)
    _, loss = model(x, y)
    (loss * 0.5).backward()  # as a step of two micro-batches scales each
    whole, whole_loss = gradients(model), loss.item()
    model.zero_grad()
    split_loss = BatchThreads(shards).forward_backward(model, x, y, scale=0.5)
    assert split_loss.item() == pytest.approx(whole_loss, rel=tolerance)
    assert not split_loss.requires_grad  # no graph is kept past the step
    for name, g in gradients(model).items():
        scale = np.abs(whole[name]).max() + 1e-30
        assert np.abs(g - whole[name]).max() / scale < tolerance, name


def test_gradients_add_to_what_was_there_as_backward_does():
    mg.manual_seed(4)
    model = GPT(CONFIG).to(dtype=np.float64)
    first, second = batch(6, seed=1), batch(6, seed=2)
    for x, y in (first, second):
        model(x, y)[1].backward()
    expected = gradients(model)
    model.zero_grad()
    splitter = BatchThreads(2)
    for x, y in (first, second):
        splitter.forward_backward(model, x, y)
    for name, g in gradients(model).items():
        np.testing.assert_allclose(g, expected[name], rtol=1e-12, atol=1e-15, err_msg=name)


def test_shards_must_be_a_positive_count():
    with pytest.raises(ValueError, match="shards must be at least 1"):
        BatchThreads(0)


def test_the_split_is_a_candidate_only_where_it_is_the_same_step(monkeypatch, restore_threads):
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr("minigpt.threads.os.cpu_count", lambda: 2)
    assert plans(2) == [Plan(2, 1), Plan(1, 2), Plan(1, 1)] and plans(1) == [Plan(1, 1)]
    chooser, how = training_chooser(0, "cpu", can_split=True)
    assert chooser.counts == plans(2) and "2 batch threads x 1 BLAS" in how
    chooser, _ = training_chooser(0, "cpu", can_split=False)  # dropout, or several ranks
    assert chooser.counts == [Plan(1, 2), Plan(1, 1)]
    chooser, _ = training_chooser(1, "cpu", can_split=True)  # --threads 1: one thread everywhere
    assert chooser.counts == [Plan(1, 1)] and mg.get_num_threads() == 1
    chooser, _ = training_chooser(0, "cuda", can_split=True)
    assert all(plan.shards == 1 for plan in chooser.counts)


@pytest.fixture
def restore_threads():
    before = mg.get_num_threads()
    yield
    mg.set_num_threads(before)


def test_a_run_on_batch_threads_follows_the_one_thread_run(tmp_path, monkeypatch, restore_threads):
    from minigpt import threads, train

    text = tmp_path / "input.txt"
    text.write_text("".join(f"line {i % 7}: the quick brown fox\n" for i in range(300)), encoding="utf-8")
    settings = dict(data=str(text), n_layer=2, n_head=2, n_embd=32, block_size=16, batch_size=8, max_iters=12,
                    eval_interval=12, eval_iters=2, warmup_iters=2, log_interval=1, seed=5)
    train.train(train.TrainConfig(out_dir=str(tmp_path / "one"), threads=1, **settings))
    split = threads.ThreadChooser([Plan(2, 1)], use=threads.use_plan)
    monkeypatch.setattr(train, "training_chooser", lambda *args, **kwargs: (split, "2 batch threads"))
    train.train(train.TrainConfig(out_dir=str(tmp_path / "split"), **settings))

    def losses(name):
        rows = [json.loads(line) for line in (tmp_path / name / "metrics.jsonl").read_text().splitlines()]
        return [(r["loss"], r["batch_threads"]) for r in rows if "loss" in r]

    one, two = losses("one"), losses("split")
    assert [s for _, s in one] == [1] * 12 and [s for _, s in two] == [2] * 12
    np.testing.assert_allclose([v for v, _ in two], [v for v, _ in one], rtol=1e-5)  # float32 rounding, 12 steps
