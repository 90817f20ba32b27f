"""Checkers for lecture 04's exercises (tutorials/exercises/lecture04.py): sinusoidal positions and RoPE.

Read next: lecture05.py.
"""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim
from tutorials.exercises.grading import Exercise, Wrong, as_array, compare, compare_number


def _omega(dim, exponent=2):
    return 10000.0 ** (-exponent * np.arange(dim // 2) / dim)


def _table(n, dim, omega=None):
    angles = np.arange(n)[:, None] * (_omega(dim) if omega is None else omega)
    pe = np.zeros((n, dim))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


def check_sinusoidal_table(sinusoidal_table) -> str:
    for n, dim in ((50, 16), (7, 8)):
        angles = np.arange(n)[:, None] * _omega(dim)
        expected = _table(n, dim)
        swapped = np.zeros_like(expected)
        swapped[:, 0::2], swapped[:, 1::2] = np.cos(angles), np.sin(angles)
        compare(sinusoidal_table(n, dim), expected, f"{n} 个位置 × {dim} 维的表", atol=1e-6, suspects=[
            (np.concatenate([np.sin(angles), np.cos(angles)], axis=1),
             "sin 和 cos 应交替排列（第 2i 维 sin、第 2i+1 维 cos），你的是前一半 sin、后一半 cos"),
            (swapped, "sin 和 cos 反了：第 2i 维是 sin，第 2i+1 维是 cos"),
            (_table(n, dim, _omega(dim, exponent=1)),
             "频率应是 10000^(−2i/d)（i 是第几对维度），你的像是 10000^(−i/d)"),
            (_table(n + 1, dim)[1:], "位置应从 0 数起：第 0 行是 sin(0) = 0、cos(0) = 1"),
        ])
    return "通过：每一对维度是一只以 ω_i 转动的钟"


def check_pe_dot(pe_dot) -> str:
    dim = 32
    table = _table(80, dim)
    for k in (0, 1, 5, 13):
        expected = float(table[20] @ table[20 + k])
        compare_number(pe_dot(k, dim), expected, f"d = {dim}、距离 k = {k} 时的点积", rtol=1e-6, suspects=[
            (2 * expected, "恰好是正确值的 2 倍：每个频率只有一对 (sin, cos)，共 d/2 项，不是 d 项"),
            (float(np.sin(k * _omega(dim)).sum()), "sin·sin + cos·cos = cos(a − b)：每项是 cos(k·ω_i)，不是 sin"),
        ])
    same = [float(table[p] @ table[p + 7]) for p in (0, 11, 40)]
    return f"通过：PE(p)·PE(p + 7) 在 p = 0、11、40 处都是 {same[0]:.4f}，只看距离，不看位置"


def _rope(x, position, base=10000.0, direction=1.0, interleaved=False, exponent_over=None):
    hs = x.shape[-1]
    half = hs // 2
    angle = direction * position * base ** (-np.arange(half) / (exponent_over or half))
    cos, sin = np.cos(angle), np.sin(angle)
    if interleaved:
        out = np.empty_like(x)
        out[0::2] = x[0::2] * cos - x[1::2] * sin
        out[1::2] = x[1::2] * cos + x[0::2] * sin
        return out
    return np.concatenate([x[:half] * cos - x[half:] * sin, x[half:] * cos + x[:half] * sin])


def check_rope(rope) -> str:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(16)
    for position in (0, 3, 37):
        compare(rope(x.copy(), position), _rope(x, position), f"位置 {position} 上旋转后的向量", suspects=[
            (_rope(x, position, interleaved=True),
             "本题（和 minigpt 的 Rotary）把第 i 维与第 i + hs/2 维配成一对，不是相邻两维"),
            (_rope(x, position, direction=-1.0), "旋转方向反了：out[i] = x[i]·cos − x[i + half]·sin"),
            (_rope(x, position, exponent_over=16), "频率应是 base^(−i/half)（half = hs/2），你的像是 base^(−i/hs)"),
        ])
    q, k = rng.standard_normal(16), rng.standard_normal(16)
    pairs = ((3, 0), (13, 10), (50, 47))
    dots = [float(as_array(rope(q, m), "rope(q)") @ as_array(rope(k, n), "rope(k)")) for m, n in pairs]
    compare(np.array(dots), np.full(3, dots[0]), "rope(q, m)·rope(k, n) 在 m − n = 3 的三组位置上")
    return f"通过：m − n = 3 时，rope(q, m)·rope(k, n) 在 (3, 0)、(13, 10)、(50, 47) 处都是 {dots[0]:.4f}"


def check_offset_matrix(offset_matrix) -> str:
    dim = 16
    table = _table(80, dim)
    for k in (1, 5, 13):
        M = np.zeros((dim, dim))
        for i, theta in enumerate(k * _omega(dim)):
            M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]
        got = as_array(offset_matrix(k, dim), f"offset_matrix({k}, {dim})")
        shown = table[:40] @ got if got.shape == (dim, dim) else got
        compare(shown, table[k:k + 40], f"k = {k} 时 PE(p) @ M（p = 0..39）", atol=1e-6, suspects=[
            (table[:40] @ M.T, "方向反了：你的矩阵把位置 p 挪到了 p − k（每个 2×2 旋转块需要转置）"),
            (table[:40] * np.repeat(np.cos(k * _omega(dim)), 2),
             "只有对角线的 cos θ 还不够：sin(a + θ) 里还有 cos a·sin θ 这一交叉项"),
        ])
    return "通过：同一个 M_k 对所有位置都成立——相对位移是一个旋转，模型用一次矩阵乘法就能“往回数 k 个”"


# --------------------------------------------------------------------------------------------------
# 4.5, an open task: a position bias on the attention scores that still works past the trained length

BIAS_VOCAB, BIAS_HEADS, BIAS_DIM = 12, 4, 32
BIAS_TRAIN_LEN, BIAS_TEST_LEN = 16, 48  # section 4's lengths
BIAS_STEPS, BIAS_BATCH, BIAS_LR = 400, 32, 1e-2
BIAS_TASKS = ((2, 0), (5, 1))  # (answer = the token this many back, seed): one bias design must do both
BIAS_TARGET = 0.9  # accuracy on the positions never seen in training (16-47), each task


class _BiasedAttention(nn.Module):
    """Token embeddings, one layer of causal multi-head attention whose scores get the learner's bias, a readout.
    No positional encoding anywhere else: where a token sits, the model learns only through the bias."""

    def __init__(self, bias: nn.Module):
        super().__init__()
        self.tok = nn.Embedding(BIAS_VOCAB, BIAS_DIM)
        self.qkv = nn.Linear(BIAS_DIM, 3 * BIAS_DIM)
        self.out = nn.Linear(BIAS_DIM, BIAS_VOCAB)
        self.bias = bias

    def forward(self, ids: np.ndarray) -> mg.Tensor:
        B, T = ids.shape
        hs = BIAS_DIM // BIAS_HEADS
        q, k, v = self.qkv(self.tok(ids)).reshape(B, T, 3, BIAS_HEADS, hs).permute(2, 0, 3, 1, 4)  # (B, H, T, hs)
        bias = self.bias(T)
        bias = bias if isinstance(bias, mg.Tensor) else mg.tensor(np.asarray(bias, dtype=np.float32))
        if bias.shape != (BIAS_HEADS, T, T):
            short = "：只为训练长度造的表，更长时没有那几行" if len(bias.shape) == 3 and bias.shape[-1] < T else ""
            raise Wrong(f"偏置的形状应为 {(BIAS_HEADS, T, T)}（每个头一张 T×T 的表），你的是 {bias.shape}{short}")
        scores = (q @ k.swapaxes(-1, -2) / math.sqrt(hs) + bias).masked_fill(np.triu(np.ones((T, T), bool), 1),
                                                                              -np.inf)
        return self.out((scores.softmax(axis=-1) @ v).swapaxes(1, 2).reshape(B, T, BIAS_DIM))


def _shift_batch(rng: np.random.Generator, batch: int, length: int, shift: int) -> tuple[np.ndarray, np.ndarray]:
    x = rng.integers(0, BIAS_VOCAB, (batch, length))
    y = np.full((batch, length), -1)
    y[:, shift:] = x[:, :-shift]
    return x, y


def _bias_accuracy(position_bias, shift: int, seed: int) -> tuple[float, float]:
    """Train on length 16, test on length 48: accuracy on the positions seen in training, and on those not."""
    mg.manual_seed(seed)
    model = _BiasedAttention(position_bias(BIAS_HEADS, BIAS_TRAIN_LEN))
    if not isinstance(model.bias, nn.Module):
        raise Wrong(f"position_bias 应返回一个 nn.Module，你的是 {type(model.bias).__name__}")
    optimizer = optim.AdamW(model.parameters(), lr=BIAS_LR, weight_decay=0.0)
    rng = np.random.default_rng(seed)
    for _ in range(BIAS_STEPS):
        x, y = _shift_batch(rng, BIAS_BATCH, BIAS_TRAIN_LEN, shift)
        loss = F.cross_entropy(model(x).reshape(-1, BIAS_VOCAB), y.reshape(-1), ignore_index=-1)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    x, y = _shift_batch(np.random.default_rng(123), 256, BIAS_TEST_LEN, shift)
    try:
        with mg.no_grad():
            correct = (model(x).numpy().argmax(-1) == y)[:, shift:]
    except Wrong:
        raise
    # A bias made for 16 positions may fail in any way on 48 (an index, a shape): say so in one line.
    except Exception as error:
        raise Wrong(f"在 {BIAS_TEST_LEN} 个位置上前向出错（{type(error).__name__}: {error}）：只为训练长度 "
                    f"{BIAS_TRAIN_LEN} 造的表，更长时没有那几行") from error
    return float(correct[:, :BIAS_TRAIN_LEN - shift].mean()), float(correct[:, BIAS_TRAIN_LEN - shift:].mean())


def check_position_bias(position_bias) -> str:
    found = []
    for shift, seed in BIAS_TASKS:
        seen, unseen = _bias_accuracy(position_bias, shift, seed)
        task = f"“输出前面第 {shift} 个词元”"
        if seen < BIAS_TARGET:
            raise Wrong(f"{task}在训练长度上只答对 {seen:.0%}：偏置得让某个头能盯住前面固定距离的那个位置"
                        "（全 0 的偏置等于没有位置信息）")
        if unseen < BIAS_TARGET:
            raise Wrong(f"{task}在训练长度上答对 {seen:.0%}，在没见过的位置 {BIAS_TRAIN_LEN}–{BIAS_TEST_LEN - 1} 上"
                        f"只有 {unseen:.0%}（目标 {BIAS_TARGET:.0%}）：偏置要只看相对距离 i − j；训练时没见过的距离"
                        f"（{BIAS_TRAIN_LEN} 以上）也得有个说法")
        found.append(f"前面第 {shift} 个：见过的位置 {seen:.0%}，没见过的 {unseen:.0%}")
    return "通过：" + "；".join(found)


EXERCISES = [
    Exercise("4.1", "sinusoidal_table", "正弦余弦位置编码表", 1, check_sinusoidal_table),
    Exercise("4.2", "pe_dot", "两个位置编码的点积", 2, check_pe_dot),
    Exercise("4.3", "rope", "旋转位置编码 RoPE", 2, check_rope),
    Exercise("4.4", "offset_matrix", "相对位移是一个线性变换", 3, check_offset_matrix),
    Exercise("4.5", "position_bias", "开放题：训练长度之外也管用的位置偏置", 3, check_position_bias, open=True),
]
