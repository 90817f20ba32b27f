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
