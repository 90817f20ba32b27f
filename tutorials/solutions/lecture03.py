"""第 03 讲练习的参考答案（题目在 tutorials/exercises/lecture03.py）。先自己做，再来对照。"""

import math

import numpy as np

import minigrad as mg


def softmax(x: mg.Tensor) -> mg.Tensor:
    x = x - x.max(dim=-1, keepdim=True).values  # the largest becomes 0: exp never overflows
    e = x.exp()
    return e / e.sum(axis=-1, keepdims=True)


def attention(q: mg.Tensor, k: mg.Tensor, v: mg.Tensor) -> mg.Tensor:
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])  # (B, Tq, Tk)
    return scores.softmax(axis=-1) @ v  # (B, Tq, dv)


def causal_attention(q: mg.Tensor, k: mg.Tensor, v: mg.Tensor) -> mg.Tensor:
    T = q.shape[-2]
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])  # (B, T, T)
    future = np.triu(np.ones((T, T), dtype=bool), k=1)  # True where key j comes after query i
    return scores.masked_fill(future, -np.inf).softmax(axis=-1) @ v


def score_std(d_k: int, scaled: bool) -> float:
    # q.k is a sum of d_k independent products q_i k_i, each of mean 0 and variance 1: variance d_k.
    return 1.0 if scaled else math.sqrt(d_k)


class Softmax(mg.Function):
    """y = softmax(x) along the last axis; dx = y * (gy - sum(gy * y))."""

    def forward(self, x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        self.y = e / e.sum(axis=-1, keepdims=True)
        return self.y

    def backward(self, gy):
        # dx_j = sum_i gy_i * y_i * (delta_ij - y_j) = y_j * (gy_j - sum_i gy_i * y_i)
        y = self.y
        return y * (gy - (gy * y).sum(axis=-1, keepdims=True))
