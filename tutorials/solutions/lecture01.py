"""第 01 讲练习的参考答案（题目在 tutorials/exercises/lecture01.py）。先自己做，再来对照。"""

import math

import numpy as np


def uniform_loss(vocab_size: int) -> float:
    return math.log(vocab_size)  # -ln(1/V)


def bigram_counts(ids: np.ndarray, vocab_size: int) -> np.ndarray:
    counts = np.zeros((vocab_size, vocab_size), dtype=np.int64)
    np.add.at(counts, (ids[:-1], ids[1:]), 1)  # unlike counts[a, b] += 1, adds once per repeated pair
    return counts


def bigram_probs(counts: np.ndarray, alpha: float) -> np.ndarray:
    smoothed = counts + alpha
    return smoothed / smoothed.sum(axis=1, keepdims=True)  # each row: the distribution after one character


def average_nll(P: np.ndarray, ids: np.ndarray) -> float:
    return float(-np.log(P[ids[:-1], ids[1:]]).mean())


def entropy_bits(p: np.ndarray) -> np.ndarray:
    safe = np.where(p > 0, p, 1.0)  # log2(1) = 0, so zero-probability entries add nothing
    return -(p * np.log2(safe)).sum(axis=-1)


def choose_ngram(train_ids: np.ndarray, vocab_size: int) -> tuple[int, float]:
    from tutorials.exercises.tools import NGramCounts
    from tutorials.yardstick import cut_windows  # a pure function: it cuts windows from whatever text it is given

    cut = int(0.9 * len(train_ids))  # the dev split: the last 10% of the training text, never counted
    counts = NGramCounts(train_ids[:cut], vocab_size, k_max=6)
    x, y = cut_windows(train_ids[cut:])
    grid = [(k, beta) for k in range(7) for beta in (1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0, 128.0)]
    dev_loss = {choice: float(-np.log(counts.probs(x, y, *choice)).mean()) for choice in grid}
    return min(dev_loss, key=dev_loss.get)
