"""The Kneser-Ney rung (tutorials/kneser_ney.py): a probability model, the formulas it claims, and a fair tuning.

The model must be a distribution (every context's probabilities sum to 1 over the alphabet), compute exactly the
interpolated modified Kneser-Ney formulas (held against a dictionary-based version written straight from them,
and against numbers worked by hand), choose its order from the training text alone, and score reproducibly on
the course's yardstick.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections import Counter

import numpy as np
import pytest

from tutorials import yardstick
from tutorials.kneser_ney import KneserNey, dev_split, discounts_of, for_yardstick, group, tune_order


@pytest.fixture(scope="module")
def ys() -> yardstick.Yardstick:
    return yardstick.load()


@pytest.fixture(scope="module")
def small(ys) -> KneserNey:
    """Order 6 on the first 200,000 training characters: many unseen contexts, quick to fit."""
    return KneserNey(ys.train[:200_000], ys.vocab_size, 6)


def reference_kn(ids, V: int, order: int, scale: float = 1.0):
    """P(w | h) written straight from Chen & Goodman with dictionaries: raw counts at the top order,
    continuation counts N1+(• h w) below it, three discounts per order, the uniform 1/V at the bottom."""
    ids = [int(i) for i in ids]
    raw = {n: Counter(tuple(ids[i:i + n]) for i in range(len(ids) - n + 1)) for n in range(1, order + 2)}
    cont = {n: Counter(gram[1:] for gram in raw[n + 1]) for n in range(1, order + 1)}

    def p(w: int, h: tuple[int, ...], top: int) -> float:
        n = len(h) + 1
        lower = 1.0 / V if n == 1 else p(w, h[1:], top)
        counts = raw[n] if n == top else cont[n]
        d = np.clip(scale * discounts_of(np.array(list(counts.values()))), 0, [1, 2, 3])
        follow = [counts[h + (v,)] for v in range(V)]
        if sum(follow) == 0:  # an unseen context: the shorter one's guess as it is
            return lower
        discount = [0.0 if c == 0 else d[min(c, 3) - 1] for c in follow]
        return (max(follow[w] - discount[w], 0) + sum(discount) * lower) / sum(follow)

    return p


def test_probabilities_sum_to_one_over_the_alphabet(ys, small):
    rng = np.random.default_rng(0)
    for _ in range(30):
        start, length = rng.integers(0, len(ys.val) - 30), int(rng.integers(0, 20))
        context = ys.val[start:start + length]
        for order in (1, 2, 4, 6):
            for scale in (1.0, 1.3):
                small.scale = scale
                dist = small.distribution(context, order)
                assert dist.shape == (ys.vocab_size,)
                assert abs(dist.sum() - 1) < 1e-9 and dist.min() > 0, (length, order, scale)
    small.scale = 1.0
    random_context = rng.integers(0, ys.vocab_size, 12)  # mostly never seen: backs off to shorter contexts
    assert abs(small.distribution(random_context).sum() - 1) < 1e-9


def test_equals_the_formulas_written_out(ys):
    text = ys.train[:3000]
    model = KneserNey(text, ys.vocab_size, 5)
    x, y = ys.x[:5, :12], ys.y[:5, :12]
    for order, scale in [(1, 1.0), (2, 1.0), (3, 1.2), (5, 1.0), (5, 1.4)]:
        model.scale = scale
        p = reference_kn(text, ys.vocab_size, order, scale)
        want = [[p(int(y[i, t]), tuple(int(c) for c in x[i, max(0, t - order + 2):t + 1]), min(order, t + 2))
                 for t in range(x.shape[1])] for i in range(x.shape[0])]
        np.testing.assert_allclose(model.probs(x, y, order), want, rtol=1e-12, atol=1e-15)
    by_order = model.probs_by_order(x, y, 5)  # one pass gives each order's model
    assert all(np.array_equal(by_order[n - 1], model.probs(x, y, n)) for n in range(1, 6))


def test_discounts_from_count_of_counts():
    # n1 = n2 = n3 = n4 = 1: Y = 1/3, D1 = 1 - 2/3, D2 = 2 - 3 Y, D3+ = 3 - 4 Y
    np.testing.assert_allclose(discounts_of(np.array([1, 2, 3, 4])), [1 / 3, 1, 5 / 3])
    # n1 = 4, n2 = 2, n3 = 1, n4 = 1: Y = 1/2, D1 = 1 - 2 Y 2/4, D2 = 2 - 3 Y 1/2, D3+ = 3 - 4 Y 1/1
    np.testing.assert_allclose(discounts_of(np.array([1, 1, 1, 1, 2, 2, 3, 4, 9])), [0.5, 1.25, 1.0])
    assert np.all(discounts_of(np.array([5, 5])) == 0)  # no singletons: nothing to discount


def test_a_hand_worked_corpus():
    """'abbcccdddd' over the alphabet a b c d e (ids 0-4; e never occurs)."""
    model = KneserNey(np.array([0, 1, 1, 2, 2, 2, 3, 3, 3, 3]), 5, 2)
    unigrams, bigrams = model.levels
    assert unigrams.raw.count.tolist() == [1, 2, 3, 4]  # c(a), c(b), c(c), c(d)
    assert unigrams.continuation.count.tolist() == [0, 2, 2, 2]  # N1+(• w): a opens the text, b after a and b, ...
    np.testing.assert_allclose(unigrams.raw.discounts, [1 / 3, 1, 5 / 3])
    # order 1: (c(w) - D(c(w)) + γ/V) / 10, with γ = D1 N1 + D2 N2 + D3+ N3+ = 1/3 + 1 + 2 * 5/3 = 14/3
    gamma = 14 / 3
    want = np.array([1 - 1 / 3, 2 - 1, 3 - 5 / 3, 4 - 5 / 3, 0]) / 10 + gamma / 5 / 10
    np.testing.assert_allclose(model.distribution(np.array([3]), order=1), want)
    # bigrams ab bb bc cc cd dd: counts 1 1 1 2 1 3, so n1 = 4, n2 = n3 = 1: D1 = 2/3, D2 = 0, D3+ = 3
    np.testing.assert_allclose(bigrams.raw.discounts, [2 / 3, 0, 3])
    # P(d | c): c(cd) = 1, c(c •) = 3, γ(c) c(c •) = D1 N1(c •) + D2 N2(c •) = 2/3; the lower order is the
    # continuation unigram, whose counts 2 2 2 (n2 only: D2 = 2) give all their mass to the uniform 1/5
    assert model.distribution(np.array([2]), order=2)[3] == pytest.approx((1 - 2 / 3 + 2 / 3 * 1 / 5) / 3)


def test_order_one_is_the_discounted_unigram(ys, small):
    """The model of order 1 is the character frequencies, discounted and interpolated with the uniform 1/V."""
    c = np.bincount(ys.train[:200_000], minlength=ys.vocab_size).astype(float)
    d = discounts_of(c[c > 0].astype(np.int64))
    discount = np.where(c == 0, 0, d[np.clip(c, 1, 3).astype(int) - 1])
    unigram = (c - discount + discount.sum() / ys.vocab_size) / c.sum()
    np.testing.assert_allclose(small.probs(ys.x, ys.y, order=1), unigram[ys.y], rtol=1e-12)
    np.testing.assert_allclose(small.distribution(np.array([], dtype=np.int64)), unigram, rtol=1e-12)


def test_a_window_is_read_alone(ys, small):
    """A position with j characters before it in its window gets what the model of order j + 1 gives."""
    full = small.probs(ys.x[:20], ys.y[:20], order=6)
    for j in range(5):
        assert np.array_equal(full[:, j], small.probs(ys.x[:20], ys.y[:20], order=j + 2)[:, j])
    # from the fifth character on, the order-6 model reads five: a change further back changes nothing
    x = ys.x[:20].copy()
    x[:, :10] = (x[:, :10] + 1) % ys.vocab_size
    y = np.concatenate([x[:, 1:], ys.y[:20, -1:]], axis=1)
    assert np.array_equal(small.probs(x, y, 6)[:, 14:], small.probs(ys.x[:20], ys.y[:20], 6)[:, 14:])


def test_group_is_numpy_unique():
    rng = np.random.default_rng(0)
    for codes in (rng.integers(0, 50, 1000), rng.integers(0, 2**40, 5000), np.array([7]), np.array([2**61, 3])):
        keys, inverse, counts = group(codes)
        k, i, c = np.unique(codes, return_inverse=True, return_counts=True)
        assert np.array_equal(keys, k) and np.array_equal(inverse, i.reshape(-1)) and np.array_equal(counts, c)


def test_the_tuner_is_given_only_training_text(ys):
    assert list(inspect.signature(tune_order).parameters) == ["train", "vocab_size", "orders", "scales", "fraction"]
    fit, dev = dev_split(ys.train)
    assert np.array_equal(np.concatenate([fit, dev]), ys.train) and len(dev) == round(0.1 * len(ys.train))
    # the same choice whatever the held-out text and its windows hold
    small = dataclasses.replace(ys, train=ys.train[:300_000])
    rng = np.random.default_rng(0)
    scrambled = dataclasses.replace(small, val=rng.permutation(ys.val), x=rng.permutation(ys.x),
                                    y=rng.integers(0, ys.vocab_size, ys.y.shape))
    _, tuning = for_yardstick(small, orders=range(1, 8), scales=(1.0, 1.2))
    _, again = for_yardstick(scrambled, orders=range(1, 8), scales=(1.0, 1.2))
    assert (tuning.order, tuning.scale, tuning.dev_nats) == (again.order, again.scale, again.dev_nats)
    assert 3 <= tuning.order <= 7 and len(tuning.dev_nats) == 14
    dev_nats = [tuning.dev_nats[n, tuning.scale] for n in range(1, 8)]
    assert dev_nats[tuning.order - 1] == min(dev_nats) and dev_nats[0] > dev_nats[2] + 0.5  # a real choice


@pytest.mark.slow
def test_the_rung_on_the_course_yardstick(ys):
    """Tuned on the training text: order 10, discounts x 1.2; 1.484 on the yardstick, to the fourth decimal."""
    model, tuning = for_yardstick(ys)
    assert (tuning.order, tuning.scale) == (10, 1.2)
    score = model.score(ys)
    assert score.nats == pytest.approx(1.4837, abs=5e-4)
    assert np.array_equal(model.score(ys).losses, score.losses)  # scoring twice: the very same losses
    assert np.array_equal(KneserNey(ys.train, ys.vocab_size, 10, 1.2).score(ys).losses, score.losses)  # refitting
    chen_goodman = KneserNey(ys.train, ys.vocab_size, 10).score(ys)  # the discounts as estimated, unscaled
    gap, err = score.gap(chen_goodman)
    assert gap < -5 * err  # the scale chosen on the dev split helps on the yardstick too
    assert model.size(10) == sum(len(level.keys) for level in model.levels) > 5 * 10**6  # n-grams of orders 1-10
