"""Interpolated modified Kneser-Ney: the strongest way the course knows to guess the next character by counting.

Lecture 01's counting models add β pseudo-counts of the shorter context's guess to every context. Kneser-Ney
(Chen & Goodman, "An empirical study of smoothing techniques for language modeling", 1998) does two things
better, and this file is the whole model, in NumPy:

1. **Discounting.** Instead of adding mass, it takes a fixed amount D away from every count seen in a context
   and hands exactly that mass to the shorter context's guess. Modified KN takes one of three discounts, by how
   often the pair was seen: D1 (once), D2 (twice), D3+ (three times or more), each order its own, read off the
   count-of-counts n_r (how many n-grams were seen exactly r times):

       Y = n1 / (n1 + 2 n2),   D1 = 1 - 2 Y n2 / n1,   D2 = 2 - 3 Y n3 / n2,   D3+ = 3 - 4 Y n4 / n3.

2. **Continuation counts.** A shorter context's guess is used only when the longer context is rare or unseen,
   so it should answer "which character is likely *in a new context*", not "which is frequent". Every order
   below the top counts, instead of c(h w), the number of different characters seen before h w:
   N1+(• h w). ("Francisco" is frequent, but only ever after "San": a poor guess after an unseen context.)

With c(h w) the count at the top order and N1+(• h w) below it, and h' the context h without its first character:

    P(w | h) = max(c(h w) - D(c(h w)), 0) / c(h •)  +  γ(h) P(w | h'),
    γ(h)     = (D1 N1(h •) + D2 N2(h •) + D3+ N3+(h •)) / c(h •),

where c(h •) = Σ_w c(h w), and N_r(h •) is how many characters followed h exactly r times (N3+: at least 3).
The subtracted mass is exactly γ(h) c(h •), so P(• | h) sums to 1 whenever the shorter guess does. A context
never seen gets the shorter guess as it is (γ = 1), and below the one-character order (the empty context) lies
the uniform distribution 1 / V, so no character ever has probability 0.

The n-grams are stored as sorted NumPy integer keys, one array per order, no dictionaries: an n-gram's key is
(the index of its first n - 1 characters among the (n-1)-grams) * V + its last character, so the keys of any
order fit in an int64, and looking a context up is a `searchsorted`. Fitting order 10 on lecture 01's 4.3 M
characters takes seconds; scoring the yardstick's 512 x 64 windows a fraction of a second.

The order, and one multiple of every discount (the formulas above are estimates; held-out text may prefer the
discounts a little larger: `scale`), are chosen by `tune_order`, which is given only the training text: it holds
out the end of it as a development split, fits every order on the rest, and scores each on windows cut from the
development split as the yardstick cuts them. The yardstick's own windows are never read while choosing.
Read next: 01_next_token.py §3, where this model joins the ladder.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tutorials.yardstick import Score, Yardstick, cut_windows


@dataclass(frozen=True)
class Counts:
    """One order's counts, raw (c(h w), the top order) or continuation (N1+(• h w), the orders below it).

    `count` has one entry per n-gram of this order (aligned with `Level.keys`); `total` and `types` one per
    context h, the (n-1)-gram it extends (aligned with the lower level's keys).
    """

    count: np.ndarray  # (G_n,) int32: c(h w) or N1+(• h w)
    total: np.ndarray  # (G_{n-1},) int32: c(h •) = Σ_w count(h w)
    types: np.ndarray  # (G_{n-1}, 3) uint8 (at most V < 256 each) or int32: N1(h •), N2(h •), N3+(h •)
    discounts: np.ndarray  # (3,) float64: D1, D2, D3+


@dataclass(frozen=True)
class Level:
    """The n-grams of one order n seen in the training text, as sorted keys: prefix index * V + last character."""

    keys: np.ndarray  # (G_n,) int64, sorted
    raw: Counts
    continuation: Counts | None  # None for the highest order fitted (it needs the order above to count)


def discounts_of(count: np.ndarray) -> np.ndarray:
    """Chen & Goodman's D1, D2, D3+ from count-of-counts n_r = #{n-grams counted exactly r times}:

    Y = n1 / (n1 + 2 n2);  D_r = r - (r + 1) Y n_{r+1} / n_r for r = 1, 2, 3.

    Each is clipped into [0, r] (only a tiny corpus lacks some n_r), which keeps every probability a
    probability: a count r loses at most itself.
    """
    n = np.bincount(np.minimum(count, 5), minlength=6)[1:5].astype(np.float64)  # n1, n2, n3, n4
    y = n[0] / (n[0] + 2 * n[1]) if n[0] + 2 * n[1] > 0 else 0.0
    d = np.zeros(3)
    for r in (1, 2, 3):
        d[r - 1] = r - (r + 1) * y * n[r] / n[r - 1] if n[r - 1] > 0 else 0.0
    return np.clip(d, 0.0, [1.0, 2.0, 3.0])


def _counts(keys: np.ndarray, count: np.ndarray, n_contexts: int, vocab_size: int) -> Counts:
    """Group one order's counts by context (the key's prefix index): totals, N1/N2/N3+, and the discounts."""
    context = keys // vocab_size
    total = np.bincount(context, weights=count, minlength=n_contexts).astype(np.int32)
    kind = np.minimum(count, 3)  # 0 (a continuation count can be 0: seen only at the text's start), 1, 2, 3+
    types = np.bincount(context * 4 + kind, minlength=4 * n_contexts).reshape(n_contexts, 4)[:, 1:]
    small = np.uint8 if vocab_size < 256 else np.int32  # N_r(h •) counts characters: at most V
    return Counts(count.astype(np.int32), total, types.astype(small), discounts_of(count))


def group(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """np.unique(codes, return_inverse=True, return_counts=True) for non-negative int64 codes, about 5x faster.

    Why: argsort is the slow part of np.unique, while np.sort of plain integers is vectorised. Each code is
    packed with its position (code * 2^b + position) so one np.sort orders the codes and carries the positions.
    """
    bits = max(int(len(codes)).bit_length(), 1)
    if len(codes) == 0 or int(codes.max()).bit_length() + bits > 62:  # does not pack into an int64: the slow way
        keys, inverse, counts = np.unique(codes, return_inverse=True, return_counts=True)
        return keys, inverse.reshape(-1), counts
    packed = codes << bits  # in place from here on: these arrays are as long as the text
    packed |= np.arange(len(codes), dtype=np.int64)
    packed.sort()
    position = packed & ((1 << bits) - 1)
    ordered = packed
    ordered >>= bits
    new = np.empty(len(codes), dtype=bool)  # where a new code starts in the sorted order
    new[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=new[1:])
    inverse = np.empty(len(codes), dtype=np.int64)
    inverse[position] = np.cumsum(new, dtype=np.int32) - 1  # int32: 4x faster than summing bools to int64
    starts = np.flatnonzero(new)
    return ordered[starts], inverse, np.diff(np.append(starts, len(codes)))


def lookup(keys: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """The index of each code in the sorted `keys`, or -1 where it is absent (negative codes are absent too)."""
    i = np.clip(np.searchsorted(keys, codes), 0, len(keys) - 1)
    return np.where((codes >= 0) & (keys[i] == codes), i, -1)


class KneserNey:
    """An interpolated modified Kneser-Ney character model: every order 1 .. `max_order` fitted at once.

    The model of order n (n - 1 characters of context) uses raw counts at order n and continuation counts at
    the orders below, so one fit holds the models of every order up to `max_order`: `probs(..., order=n)`.
    """

    def __init__(self, ids: np.ndarray, vocab_size: int, max_order: int, scale: float = 1.0):
        """Count every n-gram of `ids` (a 1-D array of character ids), n = 1 .. max_order.

        `scale` multiplies every discount (1: Chen & Goodman's estimates as they are); it can be changed after
        fitting, since the discounts are applied only when probabilities are asked for.
        """
        if max_order < 1:
            raise ValueError(f"KneserNey: max_order must be at least 1, got {max_order}")
        ids = np.asarray(ids, dtype=np.int64)
        if ids.ndim != 1 or not max_order < len(ids) < 2**31:  # int32 counts (half the memory of int64)
            raise ValueError(f"KneserNey: need a 1-D text longer than max_order ({max_order}), got {ids.shape}")
        self.vocab_size, self.max_order, self.scale = vocab_size, max_order, scale
        V = vocab_size
        self.levels: list[Level] = []
        # prev[i]: the index of the (n-1)-gram ending at position i + n - 2 (for n = 1: the empty context, 0)
        prev = np.zeros(len(ids) + 1, dtype=np.int64)
        pending: tuple[np.ndarray, np.ndarray] | None = None  # the previous order's keys and raw counts
        for n in range(1, max_order + 1):
            keys, grams, raw = group(prev[:-1] * V + ids[n - 1:])  # the n-gram ending at each position n-1 .. L-1
            if pending is not None:  # the previous order's continuation counts need this order's n-grams
                suffix = np.empty(len(keys), dtype=np.int64)
                suffix[grams] = prev[1:]  # the (n-1)-gram ending where each n-gram ends: its last n-1 characters
                self._add_level(*pending, continuation=np.bincount(suffix, minlength=len(pending[0])))
            pending, prev = (keys, raw), grams
        self._add_level(*pending, continuation=None)

    def _add_level(self, keys: np.ndarray, raw: np.ndarray, continuation: np.ndarray | None) -> None:
        n_contexts = 1 if not self.levels else len(self.levels[-1].keys)
        self.levels.append(Level(keys, _counts(keys, raw, n_contexts, self.vocab_size),
                                 None if continuation is None else
                                 _counts(keys, continuation, n_contexts, self.vocab_size)))

    def size(self, order: int) -> int:
        """How many n-grams the model of order `order` keeps counts for (orders 1 .. order)."""
        return sum(len(level.keys) for level in self.levels[:order])

    def probs(self, x: np.ndarray, y: np.ndarray, order: int | None = None) -> np.ndarray:
        """P(y[n, t] | x[n, :t+1]) under the model of order `order` (default: max_order), shape (N, T).

        Each window is read alone, as the yardstick asks: a position with only j characters before it in its
        window gets what the model of order j + 1 gives (raw counts at order j + 1).
        """
        order = self.max_order if order is None else order
        if not 1 <= order <= self.max_order:
            raise ValueError(f"KneserNey.probs: order {order} outside 1 .. {self.max_order} (the orders fitted)")
        return self.probs_by_order(x, y, order)[-1]

    def probs_by_order(self, x: np.ndarray, y: np.ndarray, max_order: int) -> list[np.ndarray]:
        """[probs(x, y, order=n) for n = 1 .. max_order], in one pass from the bottom up.

        Why one pass: below its top, every order's model is the same chain of continuation-count estimates
        (uniform, then orders 1, 2, ... interpolated one on top of the other); the model of order n only adds
        its raw counts on top of the chain's first n - 1 links.
        """
        x, y = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
        V, T = self.vocab_size, x.shape[1]
        chain = np.full(y.shape, 1.0 / V)  # P_cont below the current order: the uniform 1/V to begin with
        tops = []  # tops[n - 1]: the order-n model where n - 1 characters of context are there to read
        context = np.zeros(x.shape, dtype=np.int64)  # the (n-1)-gram ending at each position; -1: unseen/too short
        for n, level in enumerate(self.levels[:max_order], start=1):
            gram = lookup(level.keys, np.where(context >= 0, context * V + y, -1))  # the n-gram h w
            tops.append(self._interpolate(level.raw, context, gram, chain))
            if n == max_order:
                break
            chain = self._interpolate(level.continuation, context, gram, chain)
            # the n-gram ending at each position t: the (n-1)-gram ending at t - 1, then x[t]
            prefix = np.full(x.shape, -1, dtype=np.int64)  # -1: unseen, or the window starts too late
            prefix[:, 1:] = context[:, :-1]
            if n == 1:
                prefix[:] = 0  # a single character extends the empty context, wherever it stands
            context = lookup(level.keys, np.where(prefix >= 0, prefix * V + x, -1))
        out = []
        for n in range(1, max_order + 1):
            p = tops[n - 1].copy()
            for t in range(min(n - 2, T)):  # position t has only t + 1 characters before it in its window
                p[:, t] = tops[t + 1][:, t]
            out.append(p)
        return out

    def _interpolate(self, counts: Counts, context: np.ndarray, gram: np.ndarray, lower: np.ndarray) -> np.ndarray:
        """max(c(h w) - D, 0) / c(h •) + γ(h) P_lower(w); P_lower itself where h was never seen."""
        d = np.clip(self.scale * counts.discounts, 0.0, [1.0, 2.0, 3.0])  # D1, D2, D3+ (scaled: see tune)
        h = np.maximum(context, 0)
        c = np.where(gram >= 0, counts.count[np.maximum(gram, 0)], 0)
        total = np.where(context >= 0, counts.total[h], 0)
        discount = np.where(c == 0, 0.0, d[np.clip(c, 1, 3) - 1])
        gamma_mass = counts.types[h] @ d  # γ(h) c(h •) = D1 N1(h •) + D2 N2(h •) + D3+ N3+(h •)
        return np.where(total > 0, (np.maximum(c - discount, 0) + gamma_mass * lower) / np.maximum(total, 1), lower)

    def distribution(self, context: np.ndarray, order: int | None = None) -> np.ndarray:
        """P(• | context) over the whole alphabet, shape (V,): the context is the characters read so far."""
        context = np.asarray(context, dtype=np.int64)
        if len(context) == 0:  # nothing read yet: the model of order 1, which reads no context, on any character
            return self.distribution(np.zeros(1, dtype=np.int64), order=1)
        V = self.vocab_size
        x = np.tile(context, (V, 1))  # the same context once per candidate character
        y = np.tile(context[1:], (V, 1))
        y = np.concatenate([y, np.arange(V)[:, None]], axis=1)  # ... and the candidate after its last character
        return self.probs(x, y, order)[:, -1]

    def score(self, yardstick: Yardstick, order: int | None = None) -> Score:
        """The model on the yardstick's windows, through the yardstick's own `score_probs`: the same metric."""
        return yardstick.score_probs(self.probs(yardstick.x, yardstick.y, order))


def dev_split(train: np.ndarray, fraction: float = 0.1) -> tuple[np.ndarray, np.ndarray]:
    """(fit, dev): the training text with its last `fraction` held out for choosing the order."""
    cut = int(round(len(train) * (1 - fraction)))
    return train[:cut], train[cut:]


@dataclass(frozen=True)
class Tuning:
    """What `tune_order` chose, and the development loss (nats per character) of every (order, scale) it tried."""

    order: int
    scale: float
    dev_nats: dict[tuple[int, float], float]


SCALES = (0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5)  # multiples of Chen & Goodman's discounts tried by tune_order


def tune_order(train: np.ndarray, vocab_size: int, orders: range = range(1, 13), scales: tuple[float, ...] = SCALES,
               fraction: float = 0.1) -> Tuning:
    """Choose the order, and a multiple of the discounts, on a development split carved from the END of `train`.

    It fits the models of every order in `orders` on the first 1 - `fraction` of the training text, cuts windows
    from the rest exactly as the yardstick cuts its own (as many, as long, each read alone), and returns the
    (order, scale) with the lowest loss there. Chen & Goodman's discounts are estimates (from leave-one-out
    counting), and held-out text may prefer them a little larger or smaller: the scale 1.0 keeps them as they are.
    It is given only training text: the held-out text, and the yardstick's windows cut from it, cannot
    influence the choice.
    """
    fit, dev = dev_split(np.asarray(train), fraction)
    model = KneserNey(fit, vocab_size, max(orders))
    x, y = cut_windows(dev)
    dev_nats = {}
    for scale in scales:
        model.scale = scale
        for n, p in enumerate(model.probs_by_order(x, y, max(orders)), start=1):
            if n in orders:
                dev_nats[n, scale] = float(-np.log(p).mean())
    order, scale = min(dev_nats, key=dev_nats.get)
    return Tuning(order, scale, dev_nats)


def for_yardstick(yardstick: Yardstick, orders: range = range(1, 13),
                  scales: tuple[float, ...] = SCALES) -> tuple[KneserNey, Tuning]:
    """The Kneser-Ney rung of the ladder: the order and scale tuned on the training text alone, then the model of
    that order fitted on the whole training text. Only `yardstick.train` is read; score it with `.score`."""
    tuning = tune_order(yardstick.train, yardstick.vocab_size, orders, scales)
    return KneserNey(yardstick.train, yardstick.vocab_size, tuning.order, tuning.scale), tuning
