"""Ready-made tools for the open tasks (the last ★★★ of each lecture): what an experiment needs but does not teach.

`NGramCounts` is lecture 01 §3's counting model with back-off, written once for exercise 1.6: count a text once,
then ask for the probabilities of any order k (0 .. k_max characters of context) and any smoothing strength beta.
Read next: checks/lecture01.py, whose last checker uses it.
"""

from __future__ import annotations

import numpy as np


def _contexts(x: np.ndarray, order: int, vocab_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Each position t of the windows x (N, T): x[:, t-order+1 .. t] as one base-V integer, and whether the window
    really has `order` characters up to t (its first positions do not)."""
    ids = np.zeros(x.shape, dtype=np.int64)
    for j in range(order):
        ids = ids * vocab_size + np.roll(x, j, axis=1)  # x[:, t - j] (wrapped at the start: those are not used)
    return ids, np.arange(x.shape[1]) >= order - 1


def _lookup(keys: np.ndarray, table: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    """The count of each key in a sorted (keys, counts) table; 0 for a key never seen."""
    table_keys, table_counts = table
    i = np.clip(np.searchsorted(table_keys, keys), 0, len(table_keys) - 1)
    return np.where(table_keys[i] == keys, table_counts[i], 0)


class NGramCounts:
    """Counts of every context of 0 .. k_max characters in `ids`, and of the character that followed it.

    `probs(x, y, k, beta)` is lecture 01's back-off model,
        P_k(c | h_k) = (N(h_k, c) + beta * P_{k-1}(c | h_{k-1})) / (N(h_k) + beta),   P_{-1} uniform,
    for the characters y[n, t] that follow x[n, :t+1] in windows (x, y) of shape (N, T).
    """

    def __init__(self, ids: np.ndarray, vocab_size: int, k_max: int) -> None:
        self.vocab_size, self.k_max = vocab_size, k_max
        x, y = np.asarray(ids)[None, :-1], np.asarray(ids)[None, 1:]  # the text as one long window
        self.tables = []
        for order in range(k_max + 1):
            ctx, seen = _contexts(x, order, vocab_size)
            pairs = np.unique(ctx[:, seen] * vocab_size + y[:, seen], return_counts=True)
            self.tables.append((pairs, np.unique(ctx[:, seen], return_counts=True)))

    def probs(self, x: np.ndarray, y: np.ndarray, k: int, beta: float) -> np.ndarray:
        """P_k(y[n, t] | x[n, :t+1]) with smoothing strength beta > 0, shape (N, T); every value is > 0."""
        if not 0 <= k <= self.k_max:
            raise ValueError(f"NGramCounts.probs: k = {k} is outside 0 .. {self.k_max} (the orders counted)")
        if not beta > 0:
            raise ValueError(f"NGramCounts.probs: beta must be positive, not {beta}")
        V = self.vocab_size
        p = np.full(y.shape, 1.0 / V)  # P_{-1}: uniform
        for order, (pairs, contexts) in enumerate(self.tables[:k + 1]):
            ctx, seen = _contexts(x, order, V)
            n_pair, n_ctx = _lookup(ctx * V + y, pairs), _lookup(ctx, contexts)
            p = np.where(seen, (n_pair + beta * p) / (n_ctx + beta), p)  # too early in the window: keep P_{order-1}
        return p
