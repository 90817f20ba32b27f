"""The course's yardstick (tutorials/yardstick.py) and the ladder's records (tutorials/ladder.py).

The yardstick must be fixed (the same windows on every load, in quick and full mode), held out (cut from the
text `minigpt train` never trains on), and fair: guessing uniformly scores ln V exactly, a model that knows
every answer scores 0, and a model that is wrong scores worse than one that is right.
"""

from __future__ import annotations

import importlib
import json
import math

import numpy as np
import pytest

import minigrad as mg
from minigpt.data import load_dataset
from tutorials import yardstick
from tutorials.yardstick import WINDOW, WINDOWS, Score


@pytest.fixture(scope="module")
def ys() -> yardstick.Yardstick:
    return yardstick.load()


def knowing_model(ys: yardstick.Yardstick, confidence: float = 50.0, shift: int = 0):
    """Logits that put `confidence` on the true next character (shifted by `shift` ids: 0 is right), batch by batch."""
    batches = iter(range(0, WINDOWS, 64))

    def logits_of(x: np.ndarray) -> mg.Tensor:
        start = next(batches)
        y = ys.y[start:start + len(x)]
        logits = np.zeros((*x.shape, ys.vocab_size), dtype=np.float32)
        np.put_along_axis(logits, ((y + shift) % ys.vocab_size)[..., None], confidence, axis=-1)
        return mg.tensor(logits)

    return logits_of


def test_windows_are_fixed_and_held_out(ys, monkeypatch):
    assert ys.x.shape == ys.y.shape == (WINDOWS, WINDOW)
    assert np.array_equal(ys.x[:, 1:], ys.y[:, :-1])  # y is x shifted by one character
    data = load_dataset(None, block_size=WINDOW)
    assert np.array_equal(ys.val, data.val) and np.array_equal(ys.train, data.train)  # minigpt train's split
    text = ys.tokenizer.decode(ys.val)
    for row in (0, WINDOWS // 2, WINDOWS - 1):  # every window is a piece of the held-out text
        assert ys.tokenizer.decode(ys.x[row]) in text
    monkeypatch.setenv("TUTORIAL_QUICK", "1")  # quick mode reads the very same windows
    assert yardstick.load().fingerprint == ys.fingerprint


def test_uniform_scores_ln_v_exactly(ys):
    score = ys.uniform()
    assert score.nats == pytest.approx(math.log(ys.vocab_size), abs=1e-12)
    assert score.stderr < 1e-12  # every window scores the same
    # the same through the probability interface
    assert ys.score_probs(np.full(ys.y.shape, 1 / ys.vocab_size)).nats == pytest.approx(math.log(ys.vocab_size))


def test_a_model_that_knows_the_answer_scores_zero(ys):
    assert ys.score_probs(np.ones(ys.y.shape)).nats == 0.0
    assert ys.score_logits(knowing_model(ys)).nats < 1e-6


def test_a_wrong_model_scores_higher(ys):
    right = ys.score_logits(knowing_model(ys, confidence=3.0))
    wrong = ys.score_logits(knowing_model(ys, confidence=3.0, shift=1))  # confident about the wrong character
    assert right.nats < math.log(ys.vocab_size) < wrong.nats
    rng = np.random.default_rng(0)
    noisy = ys.score_logits(lambda x: 2 * rng.standard_normal((*x.shape, ys.vocab_size)))  # sure of random things
    assert noisy.nats > math.log(ys.vocab_size)
    gap, err = noisy.gap(right)  # window by window on the same text
    assert gap == pytest.approx(noisy.nats - right.nats) and gap > 10 * err > 0


def test_counts_and_logits_agree(ys):
    """A bigram counted on the training text scores the same as probabilities and as logits (their log)."""
    V = ys.vocab_size
    counts = np.zeros((V, V))
    np.add.at(counts, (ys.train[:-1], ys.train[1:]), 1)
    P = (counts + 1) / (counts + 1).sum(axis=1, keepdims=True)
    by_probs = ys.score_probs(P[ys.x, ys.y])
    by_logits = ys.score_logits(lambda x: (mg.tensor(np.log(P[x])), None))  # a (logits, loss) pair works too
    assert by_logits.nats == pytest.approx(by_probs.nats, rel=1e-6)
    assert 2.3 < by_probs.nats < 2.7  # one character of context: far below uniform, far above a good model
    seen = ys.training_windows()
    assert seen.fingerprint != ys.fingerprint
    assert seen.score_probs(P[seen.x, seen.y]).nats < by_probs.nats + 0.1


def test_per_position_and_stderr():
    losses = np.tile(np.arange(4.0), (3, 1)) + np.array([[0.0], [1.0], [2.0]])  # window means 1.5, 2.5, 3.5
    score = Score(losses)
    assert score.nats == pytest.approx(2.5)
    assert np.allclose(score.per_position, [1, 2, 3, 4])
    assert score.stderr == pytest.approx(1.0 / math.sqrt(3))
    assert "2.500 ± 0.577" == str(score)


def test_bad_input_is_refused_with_a_clear_message(ys):
    with pytest.raises(ValueError, match="score_probs: probabilities of shape"):
        ys.score_probs(np.ones((3, 3)))
    with pytest.raises(ValueError, match=r"must lie in \(0, 1\]"):
        ys.score_probs(np.zeros(ys.y.shape))
    with pytest.raises(ValueError, match="score_logits: logits of shape"):
        ys.score_logits(lambda x: np.zeros((*x.shape, ys.vocab_size + 1)))
    with pytest.raises(ValueError, match="not measured on the same windows"):
        Score(np.ones((2, 3))).gap(Score(np.ones((3, 3))))


# --------------------------------------------------------------------------------------------------
# The ladder's records: written beside a lecture's figures, read back only in the same mode and windows


@pytest.fixture()
def ladder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # records go to ./figures/ladder/, as the lectures' figures do
    return importlib.import_module("tutorials.ladder")


def test_records_round_trip(ys, ladder):
    rung = ladder.Rung(key="bigram", name="二元模型", lecture="01", size=5625, size_kind="counts", train_seconds=0.5,
                       score=ys.uniform(), extra={"sample": "ROMEO:\n"})
    path = ladder.record("01", [rung], ys)
    assert json.loads(path.read_text(encoding="utf-8"))["rungs"][0]["name"] == "二元模型"
    (back,) = ladder.recorded("01", ys)
    assert (back.key, back.name, back.size, back.extra) == ("bigram", "二元模型", 5625, {"sample": "ROMEO:\n"})
    assert np.array_equal(back.score.losses, rung.score.losses)
    assert ladder.recorded("02", ys) is None  # never recorded


def test_records_of_the_other_mode_or_windows_are_not_used(ys, ladder, monkeypatch):
    rung = ladder.Rung(key="u", name="瞎猜", lecture="01", size=0, size_kind="counts", train_seconds=0.0,
                       score=ys.uniform())
    ladder.record("01", [rung], ys)
    assert ladder.recorded("01", ys.training_windows()) is None  # other windows
    monkeypatch.setattr(ladder, "QUICK", not ladder.QUICK)
    assert ladder.recorded("01", ys) is None  # the other mode


def test_ensure_runs_the_lecture_when_its_record_is_missing(ys, ladder, tmp_path, monkeypatch):
    lectures = tmp_path / "lectures"
    lectures.mkdir()
    (lectures / "98_fake.py").write_text(
        "from tutorials import ladder, yardstick\n"
        "ys = yardstick.load()\n"
        "ladder.record('98', [ladder.Rung('u', 'u', '98', 0, 'counts', 0.0, ys.uniform())], ys)\n")
    (lectures / "99_broken.py").write_text("raise SystemExit('this lecture fails')\n")
    monkeypatch.setattr(ladder, "LECTURES", lectures)
    (rung,) = ladder.ensure("98", ys)  # not recorded yet: runs 98_fake.py, then reads its record
    assert rung.score.nats == pytest.approx(math.log(ys.vocab_size))
    with pytest.raises(RuntimeError, match="99_broken.py，它出错退出了"):
        ladder.ensure("99", ys)


def test_score_a_run_of_ones_own_on_the_yardstick(tmp_path, capsys):
    """`python -m tutorials.yardstick score OUT_DIR`: the number lecture 07's ladder compares, for one's own run."""
    from minigpt.train import TrainConfig, train

    out = tmp_path / "out"
    train(TrainConfig(out_dir=str(out), max_iters=1, eval_interval=1, eval_iters=1, n_layer=1, n_head=2, n_embd=16,
                      block_size=WINDOW, batch_size=2, threads=1))
    capsys.readouterr()  # (the training's lines)
    assert yardstick.main(["score", str(out)]) == 0
    said = capsys.readouterr().out
    model, _ = __import__("minigpt.checkpoint", fromlist=["load_model"]).load_model(str(out))
    expected = yardstick.load().score_logits(model)
    assert said.startswith(f"{out}: {expected} 纳特/字符")
    short = tmp_path / "short"
    train(TrainConfig(out_dir=str(short), max_iters=1, eval_interval=1, n_layer=1, n_head=2, n_embd=16, block_size=8,
                      eval_iters=1, batch_size=2,
                      threads=1))
    assert yardstick.main(["score", str(short)]) == 2
    assert "--block-size 64" in capsys.readouterr().err
