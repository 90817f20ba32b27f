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
    return softmax(scores.masked_fill(future, -np.inf)) @ v  # 3.1's softmax: the one in your GPT


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


class PointerAttention(mg.nn.Module):
    """Section 2's attention without the noun mask, whose answer is a copy of what the pronoun looks at.

    The value of a word is its own embedding, and the logits compare the pronoun's output with every embedding
    (the same table): attending to 没 or to the pronoun itself can only give the answer 没 or 它, so the only way
    to answer right is to look at the referent. Without dividing by √d the softmax is sharp enough to look at it
    almost alone within 300 steps.
    """

    def __init__(self, vocab_size: int, seq: int, d: int):
        super().__init__()
        self.tok = mg.nn.Embedding(vocab_size, d)
        self.pos = mg.nn.Embedding(seq, d)
        self.query = mg.nn.Linear(d, d)
        self.key = mg.nn.Linear(d, d)

    def forward(self, ids: np.ndarray) -> tuple[mg.Tensor, mg.Tensor]:
        e = self.tok(ids)  # (B, T, d)
        x = e + self.pos(np.arange(ids.shape[1]))
        p = (self.query(x) @ self.key(x).swapaxes(-1, -2)).softmax(axis=-1)  # (B, T, T)
        copied = (p @ e)[:, 5]  # (B, d): a weighted sum of the words' own embeddings, at the pronoun
        return copied @ self.tok.weight.T, p  # (B, vocab): which word was copied


def pronoun_model(vocab_size: int, seq: int, d: int) -> mg.nn.Module:
    return PointerAttention(vocab_size, seq, d)
