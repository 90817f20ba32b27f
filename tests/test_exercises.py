"""The course's exercises: every checker passes its reference solution, and fails the blank exercise and a
typical wrong answer with the one-line hint meant for that mistake (so no checker is vacuous).

The wrong answers below are the mistakes a learner makes: a forgotten transpose, a missing 1/sqrt(d), the
wrong axis, a forgotten gradient term... Each is paired with a piece of the hint its checker must give.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from course_helpers import own_copy

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig
from minigpt.model import Block, CausalSelfAttention
from tutorials import exercises
from tutorials.exercises import LECTURES, check, find, grade_lecture
from tutorials.exercises.__main__ import main
from tutorials.exercises.checks.lecture05 import block_np, mha
from tutorials.exercises.grading import grade
from tutorials.yardstick import Score

ALL = [exercise for exercises_of_lecture in LECTURES.values() for exercise in exercises_of_lecture]
# the reference solutions as the tests' own helpers: the grader refuses the reference's code to an answer
sol00 = own_copy("00")
sol02 = own_copy("02")
sol03 = own_copy("03")
sol05 = own_copy("05")
sol06 = own_copy("06")
sol08 = own_copy("08")
sol09 = own_copy("09")
eng = own_copy("engine")
# The engine answers below are functions of this file: the checker finds their helpers in its namespace.
Tensor, apply, no_grad, sum_to, topological_order = (eng.Tensor, eng.apply, eng.no_grad, eng.sum_to,
                                                    eng.topological_order)


# --------------------------------------------------------------------------------------------------
# Wrong answers, lecture by lecture: (exercise number, answer, a fragment of the expected hint)


def forward_difference(f, x, h=1e-5):
    return (f(x + h) - f(x)) / h


def central_without_2(f, x, h=1e-5):
    return (f(x + h) - f(x - h)) / h


class MulSwapped(mg.Function):
    def forward(self, a, b):
        self.a, self.b = a, b
        return a * b

    def backward(self, gy):
        return gy * self.a, gy * self.b  # each input times itself


class MulOneGradient(MulSwapped):
    def backward(self, gy):
        return gy * self.b  # a single gradient for two inputs


class TanhOneMinusY(mg.Function):
    def forward(self, x):
        self.y = np.tanh(x)
        return self.y

    def backward(self, gy):
        return gy * (1 - self.y)


class TanhNoUpstream(TanhOneMinusY):
    def backward(self, gy):
        return 1 - self.y**2


def sum_to_leading_only(g, shape):
    return g.sum(axis=tuple(range(g.ndim - len(shape))))


def sum_to_in_place(g, shape):
    g[...] = g.sum()  # writes into the caller's array
    return sum_to_leading_only(g, shape)


class DivWrongSign(sol00.Div):
    def backward(self, gy):
        return gy / self.b, gy * self.a / self.b**2


def nth_derivative_without_create_graph(f, x, n):
    y = f(x)
    for _ in range(n):
        (y,) = mg.grad(y.sum(), x)  # the derivative comes back without a graph: the next round fails
    return y


def nth_derivative_one_too_many(f, x, n):
    return sol00.nth_derivative(f, x, n + 1)


def bigram_counts_fancy_index(ids, V):
    counts = np.zeros((V, V))
    counts[ids[:-1], ids[1:]] += 1  # repeated pairs are counted once
    return counts


def bigram_counts_transposed(ids, V):
    counts = np.zeros((V, V))
    np.add.at(counts, (ids[1:], ids[:-1]), 1)
    return counts


def bigram_probs_by_column(counts, alpha):
    smoothed = counts + alpha
    return smoothed / smoothed.sum(axis=0, keepdims=True)


def average_nll_sum(P, ids):
    return float(-np.log(P[ids[:-1], ids[1:]]).sum())


def entropy_with_nan(p):
    with np.errstate(divide="ignore", invalid="ignore"):
        return -(p * np.log2(p)).sum(axis=-1)


def entropy_in_nats(p):
    return -(p * np.log(np.where(p > 0, p, 1.0))).sum(axis=-1)


def rnn_step_without_tanh(x, h, W_xh, W_hh, b):
    return x @ W_xh + h @ W_hh + b


def rnn_step_transposed(x, h, W_xh, W_hh, b):
    return (x @ W_xh + h @ W_hh.T + b).tanh()


def rnn_step_numpy(x, h, W_xh, W_hh, b):
    return np.tanh(x.numpy() @ W_xh.numpy() + h.numpy() @ W_hh.numpy() + b.numpy())


def gru_step_swapped(x, h, W_x, W_h, b_x, b_h):
    H = h.shape[-1]
    a, c = x @ W_x + b_x, h @ W_h + b_h
    r = (a[:, :H] + c[:, :H]).sigmoid()
    z = (a[:, H:2 * H] + c[:, H:2 * H]).sigmoid()
    n = (a[:, 2 * H:] + r * c[:, 2 * H:]).tanh()
    return z * n + (1 - z) * h


def attention_context_wrong_axis(s, enc, W_a):
    scores = (enc @ (s @ W_a)[:, :, None])[:, :, 0]
    weights = scores.softmax(axis=0)
    return (weights[:, None, :] @ enc)[:, 0], weights


def step_jacobian_untransposed(h_new, W_hh):
    return (1 - h_new**2)[:, None] * W_hh


def step_jacobian_no_tanh(h_new, W_hh):
    return W_hh.T


def gradient_norms_transposed(jacobians, g_last):
    g, norms = g_last, [float(np.linalg.norm(g_last))]
    for J in reversed(jacobians):
        g = J @ g
        norms.append(float(np.linalg.norm(g)))
    return norms


def softmax_unstable(x):
    e = x.exp()
    return e / e.sum(axis=-1, keepdims=True)


def softmax_wrong_axis(x):
    x = x - x.max(dim=0, keepdim=True).values
    e = x.exp()
    return e / e.sum(axis=0, keepdims=True)


def attention_unscaled(q, k, v):
    return (q @ k.swapaxes(-1, -2)).softmax(axis=-1) @ v


def attention_no_transpose(q, k, v):
    return (q @ k / math.sqrt(q.shape[-1])).softmax(axis=-1) @ v


def attention_wrong_axis(q, k, v):
    return (q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])).softmax(axis=-2) @ v


def causal_masking_the_diagonal(q, k, v):
    T = q.shape[-2]
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])
    return sol03.softmax(scores.masked_fill(np.triu(np.ones((T, T), dtype=bool), k=0), -np.inf)) @ v


def causal_masking_the_past(q, k, v):
    T = q.shape[-2]
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])
    return sol03.softmax(scores.masked_fill(np.tril(np.ones((T, T), dtype=bool), k=-1), -np.inf)) @ v


def causal_without_a_mask(q, k, v):
    return sol03.softmax(q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])) @ v


def causal_mask_after_softmax(q, k, v):
    T = q.shape[-2]
    p = sol03.softmax(q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1]))
    return (p * mg.tensor(np.tril(np.ones((T, T))), dtype="float64")) @ v


def score_std_variance(d_k, scaled):
    return 1.0 if scaled else float(d_k)


class SoftmaxDiagonalOnly(sol03.Softmax):
    def backward(self, gy):
        return gy * self.y * (1 - self.y)


def table_in_halves(n, dim):
    angles = np.arange(n)[:, None] * 10000.0 ** (-np.arange(0, dim, 2) / dim)
    return np.concatenate([np.sin(angles), np.cos(angles)], axis=1)


def table_wrong_exponent(n, dim):
    angles = np.arange(n)[:, None] * 10000.0 ** (-np.arange(dim // 2) / dim)
    pe = np.zeros((n, dim))
    pe[:, 0::2], pe[:, 1::2] = np.sin(angles), np.cos(angles)
    return pe


def pe_dot_doubled(k, dim):
    return 2 * float(np.cos(k * 10000.0 ** (-np.arange(0, dim, 2) / dim)).sum())


def rope_interleaved(x, position, base=10000.0):
    half = x.shape[-1] // 2
    angle = position * base ** (-np.arange(half) / half)
    out = np.empty_like(x)
    out[0::2] = x[0::2] * np.cos(angle) - x[1::2] * np.sin(angle)
    out[1::2] = x[1::2] * np.cos(angle) + x[0::2] * np.sin(angle)
    return out


def offset_matrix_transposed(k, dim):
    M = np.zeros((dim, dim))
    for i, theta in enumerate(k * 10000.0 ** (-np.arange(0, dim, 2) / dim)):
        M[2 * i:2 * i + 2, 2 * i:2 * i + 2] = [[np.cos(theta), np.sin(theta)], [-np.sin(theta), np.cos(theta)]]
    return M


def block_parameters_matrices_only(n_embd):
    return 12 * n_embd * n_embd


def layer_norm_unbiased(x, weight, bias, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).sum(axis=-1, keepdims=True) / (x.shape[-1] - 1)
    return centred / (variance + eps).sqrt() * weight + bias


def layer_norm_over_batch(x, weight, bias, eps=1e-5):
    centred = x - x.mean(axis=0, keepdims=True)
    variance = (centred * centred).mean(axis=0, keepdims=True)
    return centred / (variance + eps).sqrt() * weight + bias


def layer_norm_eps_outside(x, weight, bias, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / ((centred * centred).mean(axis=-1, keepdims=True).sqrt() + eps) * weight + bias


def split_heads_by_reshape(x, n_head):
    B, T, C = x.shape
    return x.reshape(B, n_head, T, C // n_head)


def attention_without_mask(x, w_attn, b_attn, w_proj, b_proj, n_head):
    B, T, C = x.shape
    qkv = F.linear(x, w_attn, b_attn)
    q, k, v = (sol05.split_heads(qkv[:, :, i * C:(i + 1) * C], n_head) for i in range(3))
    y = (q @ k.swapaxes(-1, -2) / math.sqrt(C // n_head)).softmax(axis=-1) @ v
    return F.linear(y.swapaxes(1, 2).reshape(B, T, C), w_proj, b_proj)


def attention_scaled_by_width(x, w_attn, b_attn, w_proj, b_proj, n_head):
    B, T, C = x.shape
    qkv = F.linear(x, w_attn, b_attn)
    q, k, v = (sol05.split_heads(qkv[:, :, i * C:(i + 1) * C], n_head) for i in range(3))
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(C)
    y = scores.masked_fill(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf).softmax(axis=-1) @ v
    return F.linear(y.swapaxes(1, 2).reshape(B, T, C), w_proj, b_proj)


class LayerNormOnlyRstd(sol05.LayerNorm):
    def backward(self, gy):
        return gy * self.rstd


class LayerNormWithoutXhatTerm(sol05.LayerNorm):
    def backward(self, gy):
        return self.rstd * (gy - gy.mean(axis=-1, keepdims=True))


def post_ln_block_written_pre_ln(x, w, n_head):
    def mlp(h):
        return F.linear(F.gelu(F.linear(h, w["mlp.c_fc.weight"], w["mlp.c_fc.bias"])),
                        w["mlp.c_proj.weight"], w["mlp.c_proj.bias"])

    C = x.shape[-1]
    h = F.layer_norm(x, C, w["ln_1.weight"], w["ln_1.bias"])
    x = x + sol05.causal_self_attention(h, w["attn.c_attn.weight"], w["attn.c_attn.bias"], w["attn.c_proj.weight"],
                                        w["attn.c_proj.bias"], n_head)
    return x + mlp(F.layer_norm(x, C, w["ln_2.weight"], w["ln_2.bias"]))


def post_ln_block_tanh_gelu(x, w, n_head):
    C = x.shape[-1]
    x = F.layer_norm(x + sol05.causal_self_attention(x, w["attn.c_attn.weight"], w["attn.c_attn.bias"],
                                                     w["attn.c_proj.weight"], w["attn.c_proj.bias"], n_head),
                     C, w["ln_1.weight"], w["ln_1.bias"])
    hidden = F.gelu(F.linear(x, w["mlp.c_fc.weight"], w["mlp.c_fc.bias"]), approximate="tanh")
    return F.layer_norm(x + F.linear(hidden, w["mlp.c_proj.weight"], w["mlp.c_proj.bias"]), C,
                        w["ln_2.weight"], w["ln_2.bias"])


def batch_not_shifted(data, starts, block_size):
    x = np.stack([data[s:s + block_size] for s in starts])
    return x, x.copy()


def decrease_with_norm(lr, grads):
    return lr * math.sqrt(sum(float((g**2).sum()) for g in grads))


def top_k_not_renormalised(logits, k):
    probs = sol06.softmax(logits)
    out = np.zeros_like(probs)
    keep = np.argsort(-logits)[:k]
    out[keep] = probs[keep]
    return out


def top_p_dropping_the_crossing_token(logits, p):
    probs = sol06.softmax(logits)
    order = np.argsort(-probs)
    kept = order[np.cumsum(probs[order]) <= p]
    out = np.zeros_like(probs)
    out[kept] = probs[kept] / probs[kept].sum()
    return out


def sample_multiplying_temperature(logits, rng, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0:
        return int(np.argmax(logits))
    return sol06.sample_next(logits * temperature * temperature, rng, temperature, top_k, top_p)  # = logits * T


def sample_always_argmax(logits, rng, temperature=1.0, top_k=None, top_p=None):
    return int(np.argmax(logits))


def sample_ignoring_filters(logits, rng, temperature=1.0, top_k=None, top_p=None):
    return sol06.sample_next(logits, rng, temperature)


def cache_step_attending_before_appending(q, k, v, cache):
    keys, values = np.stack(cache["k"]), np.stack(cache["v"])
    out = sol06.softmax(keys @ q / math.sqrt(q.shape[-1])) @ values
    cache["k"].append(k)
    cache["v"].append(v)
    return out


def cache_step_unscaled(q, k, v, cache):
    cache["k"].append(k)
    cache["v"].append(v)
    return sol06.softmax(np.stack(cache["k"]) @ q) @ np.stack(cache["v"])


MATCH_ONE_WRONG = {
    "tanh RNN 的梯度每往回传一步就缩小一截": "门控（GRU）",
    "维度一大，softmax 变成非 0 即 1，梯度传不回去": "除以 √d_k",
    "“狗咬人”和“人咬狗”经过自注意力得到同一组向量": "位置编码",
    "一套注意力只学得出一种匹配方式": "多头注意力",
    "叠了 20 层之后，梯度传不到第一层": "LayerNorm",
    "残差流的数值随深度越滚越大": "残差连接",
    "整句并行训练时，前面的位置偷看了后面的字": "因果遮罩",
    "逐字生成时，每一步都把整段前文重算一遍": "KV 缓存",
}


@mg.no_grad()
def greedy_without_crop(model, ids, n):
    for _ in range(n):
        logits, _ = model(ids)
        ids = np.concatenate([ids, logits.numpy()[:, -1, :].argmax(-1)[:, None]], axis=1)
    return ids


@mg.no_grad()
def greedy_first_position(model, ids, n):
    for _ in range(n):
        logits, _ = model(ids[:, -model.config.block_size:])
        ids = np.concatenate([ids, logits.numpy()[:, 0, :].argmax(-1)[:, None]], axis=1)
    return ids


def kv_floats_without_2(n_layer, n_embd, T, batch=1):
    return n_layer * n_embd * T * batch


def gpt_parameters_untied(vocab_size, block_size, n_layer, n_embd):
    C = n_embd
    return 2 * vocab_size * C + block_size * C + n_layer * (12 * C * C + 13 * C) + 2 * C


def paired_gap_unpaired(losses_a, losses_b):
    gap = float((losses_a - losses_b).mean())
    n = len(losses_a)
    return gap, float(np.sqrt(losses_a.mean(axis=1).var(ddof=1) / n + losses_b.mean(axis=1).var(ddof=1) / n))


def paired_gap_per_character(losses_a, losses_b):
    diff = losses_a - losses_b
    return float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(diff.size))


# The six gaps a review found, and the four library shortcuts: each must be rejected.


def gru_step_cut_from_h(x, h, W_x, W_h, b_x, b_h):
    return sol02.gru_step(x, h.detach(), W_x, W_h, b_x, b_h)  # right values, no gradient to the previous state


def attention_context_cut_from_enc(s, enc, W_a):
    return sol02.attention_context(s, mg.tensor(enc.numpy(), dtype="float64"), W_a)


def softmax_global_max(x):
    x = x - x.max()  # one maximum for the whole array, not each row's
    e = x.exp()
    return e / e.sum(axis=-1, keepdims=True)


def softmax_max_as_a_tensor(x):
    x = x - x.max(dim=-1, keepdim=True)  # PyTorch's max(dim) is (values, indices), not a tensor
    e = x.exp()
    return e / e.sum(axis=-1, keepdims=True)


def softmax_from_the_library(x):
    return x.softmax(axis=-1)


def softmax_from_functional(x):
    return F.softmax(x, dim=-1)


def top_p_keeping_the_boundary(logits, p):
    probs = sol06.softmax(logits.astype(np.float64))
    order = np.argsort(-probs, kind="stable")
    kept = order[np.cumsum(probs[order]) - probs[order] <= p]  # <= where < is right
    out = np.zeros_like(probs)
    out[kept] = probs[kept] / probs[kept].sum()
    return out


def _sample(logits, rng, steps):
    with np.errstate(divide="ignore"):
        for keep, value in steps:
            if value is not None:
                logits = np.log(keep(logits, value))
    probs = sol06.softmax(logits)
    return int(rng.choice(len(probs), p=probs))


def sample_top_p_first(logits, rng, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0:
        return int(np.argmax(logits))
    return _sample(logits / temperature, rng, [(sol06.top_p_probs, top_p), (sol06.top_k_probs, top_k)])


def sample_temperature_last(logits, rng, temperature=1.0, top_k=None, top_p=None):
    if temperature == 0:
        return int(np.argmax(logits))
    with np.errstate(divide="ignore"):
        filtered = np.log(sol06.softmax(logits) if top_k is None else sol06.top_k_probs(logits, top_k))
        filtered = filtered if top_p is None else np.log(sol06.top_p_probs(filtered, top_p))
    return _sample(filtered / temperature, rng, [])


def attention_from_minigpt(x, w_attn, b_attn, w_proj, b_proj, n_head):
    C = x.shape[-1]
    config = GPTConfig(vocab_size=5, block_size=8, n_layer=1, n_head=n_head, n_embd=C)
    attention = CausalSelfAttention(config, layer=0).to(dtype=np.float64)
    attention.load_state_dict({"c_attn.weight": w_attn, "c_attn.bias": b_attn, "c_proj.weight": w_proj,
                               "c_proj.bias": b_proj})
    return attention(x)


def attention_from_sdpa(x, w_attn, b_attn, w_proj, b_proj, n_head):
    B, T, C = x.shape
    qkv = F.linear(x, w_attn, b_attn)
    q, k, v = (sol05.split_heads(qkv[:, :, i * C:(i + 1) * C], n_head) for i in range(3))
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    return F.linear(y.swapaxes(1, 2).reshape(B, T, C), w_proj, b_proj)


def greedy_by_generate(model, ids, n):
    return model.generate(ids, n, temperature=0.0)


def paired_gap_by_the_scorer(losses_a, losses_b):
    return Score(losses_a).gap(Score(losses_b))


def paired_gap_by_the_scorers_stderr(losses_a, losses_b):
    score = Score(losses_a - losses_b)
    return score.nats, score.stderr


GAPS = [
    ("2.2", gru_step_cut_from_h, "没有得到梯度"),
    ("2.3", attention_context_cut_from_enc, "没有得到梯度"),
    ("3.1", softmax_global_max, "每一行自己的最大值"),
    ("3.1", softmax_max_as_a_tensor, "具名元组 (values, indices)"),
    ("6.4", top_p_keeping_the_boundary, "不是 ≤ p"),
    ("6.5", sample_top_p_first, "先做 top-k，再在留下的候选里做 top-p"),
    ("6.5", sample_temperature_last, "要先除以温度"),
]
SHORTCUTS = [
    ("3.1", softmax_from_the_library, "不能调用 Tensor.softmax"),
    ("3.1", softmax_from_functional, "不能调用 F.softmax"),
    ("5.4", attention_from_minigpt, "不能调用 minigpt 的 CausalSelfAttention"),
    ("5.4", attention_from_sdpa, "不能调用 F.scaled_dot_product_attention"),
    ("7.2", greedy_by_generate, "不能调用 model.generate"),
    ("7.5", paired_gap_by_the_scorer, "不能调用 tutorials.yardstick 的 Score.gap"),
    ("7.5", paired_gap_by_the_scorers_stderr, "不能调用 tutorials.yardstick 的 Score.stderr"),
]


def mlp_with_relu(x, c_fc_weight, c_fc_bias, c_proj_weight, c_proj_bias):
    return (x @ c_fc_weight.swapaxes(-1, -2) + c_fc_bias).relu() @ c_proj_weight.swapaxes(-1, -2) + c_proj_bias


def adamw_without_bias_correction(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    sol09.adamw_update(p, g, m, v, 10**9, lr, betas, eps, weight_decay)  # t huge: 1 - beta**t is 1


def train_step_without_clipping(model, x, y, state, lr, grad_clip=1.0, weight_decay=0.1):
    return sol09.train_step(model, x, y, state, lr, grad_clip=1e9, weight_decay=weight_decay)


def roofline_by_min(n, nbytes, flops, bandwidth, rate):
    return min(n * nbytes / bandwidth, n * flops / rate)


def in_blocks_flat(f, x, block):
    flat = x.reshape(-1)
    parts = [f(flat[start:start + block]) for start in range(0, flat.size, block)]
    return tuple(np.concatenate(results) for results in zip(*parts))  # never reshaped back


def horner_new_arrays(coefficients, s):
    y = s * coefficients[-1] + coefficients[-2]
    for c in reversed(coefficients[:-2]):
        y = y * s + c  # a new array at every step
    return y


def horner_backwards(coefficients, s):
    return sol08.horner(coefficients[::-1], s)


# The learner's engine (tutorials/exercises/engine.py): each part wrong in the way a learner gets it wrong. A part
# is checked with the others of its own file (its namespace): this module imports them, as the learner's file has them.


class TensorCopying(eng.Tensor):
    def __init__(self, array, requires_grad=False):
        super().__init__(np.array(array, dtype=np.float64), requires_grad)  # a float64 copy of everything


def apply_ignoring_no_grad(op, *inputs):
    y = eng.Tensor(op.forward(*[x.array for x in inputs]))
    if any(x.requires_grad for x in inputs):
        y.requires_grad, y.op, op.inputs = True, op, inputs
    return y


def order_by_recursion(root):
    order, seen = [], set()

    def visit(t):
        if id(t) in seen:
            return
        seen.add(id(t))
        for x in t.op.inputs if t.op is not None else ():
            if x.requires_grad:
                visit(x)
        order.append(t)

    visit(root)
    return order


def order_without_visited(root):
    order, stack = [], [(root, False)]
    while stack:
        t, done = stack.pop()
        if done:
            order.append(t)
            continue
        stack.append((t, True))
        stack += [(x, False) for x in reversed(t.op.inputs) if x.requires_grad] if t.op is not None else []
    return order


def walk_overwriting(root, grad):
    grads = {id(root): grad}
    for t in reversed(eng.topological_order(root)):
        g = grads.pop(id(t), None)
        if g is None:
            continue
        if t.op is None:
            t.grad = eng.Tensor(np.array(g)) if t.grad is None else eng.Tensor(t.grad.array + g)
            continue
        gxs = t.op.backward(g)
        for x, gx in zip(t.op.inputs, gxs if isinstance(gxs, tuple) else (gxs,)):
            if x.requires_grad:
                grads[id(x)] = eng.sum_to(gx, x.shape)  # a second use overwrites the first


def walk_replacing_leaf_grads(root, grad):
    eng.backward(root, grad)  # stands in for the walk, then forgets what the leaves had before
    for t in eng.topological_order(root):
        if t.op is None and t.grad is not None:
            t.grad = eng.Tensor(t.grad.array - getattr(t, "_before", 0))
        t._before = t.grad.array.copy() if t.op is None and t.grad is not None else 0


class AddOneGradient(eng.Add):
    def backward(self, gy):
        return (gy,)


class SubSameSign(eng.Sub):
    def backward(self, gy):
        return gy, gy


class MulSwappedEngine(eng.Mul):
    def backward(self, gy):
        return gy * self.a, gy * self.b


class DivWrongSignEngine(eng.Div):
    def backward(self, gy):
        return gy / self.b, gy * self.a / self.b**2


class PowWithoutP(eng.Pow):
    def backward(self, gy):
        return gy * self.x ** (self.exponent - 1)


class ExpWithoutGy(eng.Exp):
    def backward(self, gy):
        return self.y + 0 * gy


class LogTimesX(eng.Log):
    def backward(self, gy):
        return gy * self.x


class ErfInFloat64(eng.Erf):
    def backward(self, gy):
        return gy * (2 / np.sqrt(np.pi)) * np.exp(-self.x * self.x)


class SumWithoutItsAxes(eng.Sum):
    def backward(self, gy):
        return np.broadcast_to(gy, self.shape)


class MaxToEveryElement(eng.Max):
    def backward(self, gy):
        if not self.keepdims and self.axis is not None:
            gy = np.expand_dims(gy, self.axis)
        return np.broadcast_to(gy, self.x.shape) + 0


class ReshapeForgotten(eng.Reshape):
    def backward(self, gy):
        return gy


class SwapOnlyLastTwo(eng.SwapAxes):
    def backward(self, gy):
        return gy.swapaxes(-1, -2)


class GatherByAssignment(eng.GetItem):
    def backward(self, gy):
        gx = np.zeros(self.shape, dtype=gy.dtype)
        gx[self.index] += gy
        return gx


class MaskPassingGradient(eng.MaskedFill):
    def backward(self, gy):
        return gy


class MatMulUntransposed(eng.MatMul):
    def backward(self, gy):
        return gy @ self.b, self.a @ gy


ENGINE_WRONG = [
    ("0.8", TensorCopying, "float32 的数组进去"),
    ("0.9", apply_ignoring_no_grad, "no_grad"),
    ("0.10", order_by_recursion, "递归"),
    ("0.10", order_without_visited, "出现了"),
    ("0.11", walk_overwriting, "只有应有值的 1/3"),
    ("0.12", AddOneGradient, "2 个梯度"),
    ("0.13", SubSameSign, "符号反了"),
    ("0.14", MulSwappedEngine, "另一个输入的梯度"),
    ("0.15", DivWrongSignEngine, "符号反了"),
    ("0.16", PowWithoutP, "少了因子 p"),
    ("0.17", ExpWithoutGy, "忘了乘上游梯度 gy"),
    ("0.18", LogTimesX, "应除以 x"),
    ("0.19", ErfInFloat64, "dtype"),
    ("0.20", SumWithoutItsAxes, "对一对形状"),
    ("0.21", MaxToEveryElement, "只该给最大的那个元素"),
    ("0.22", ReshapeForgotten, "形状"),
    ("0.23", SwapOnlyLastTwo, "形状"),
    ("0.24", GatherByAssignment, "np.add.at"),
    ("0.25", MaskPassingGradient, "梯度应是 0"),
    ("0.26", MatMulUntransposed, "忘了转置"),
]


WRONG = GAPS + SHORTCUTS + ENGINE_WRONG + [
    ("0.1", forward_difference, "前向差分"),
    ("0.1", central_without_2, "分母应是 2h"),
    ("0.2", MulSwapped, "乘上的是“另一个”输入"),
    ("0.2", MulOneGradient, "每个输入一个梯度"),
    ("0.3", TanhOneMinusY, "1 − y²（y 的平方）"),
    ("0.3", TanhNoUpstream, "忘了乘上游梯度 gy"),
    ("0.4", sum_to_leading_only, "大小为 1 的轴也被广播过"),
    ("0.4", sum_to_in_place, "不要原地修改 g"),
    ("0.5", DivWrongSign, "符号反了"),
    ("0.6", nth_derivative_without_create_graph, "create_graph=True"),
    ("0.6", nth_derivative_one_too_many, "n + 1 阶导数"),
    ("1.1", lambda V: math.log2(V), "以 2 为底"),
    ("1.2", bigram_counts_fancy_index, "np.add.at"),
    ("1.2", bigram_counts_transposed, "行列反了"),
    ("1.3", bigram_probs_by_column, "按列归一化"),
    ("1.4", average_nll_sum, "这是总和"),
    ("1.5", entropy_with_nan, "0·log 0 = 0"),
    ("1.5", entropy_in_nats, "单位应是比特"),
    ("2.1", rnn_step_without_tanh, "忘了 tanh"),
    ("2.1", rnn_step_transposed, "转置"),
    ("2.1", rnn_step_numpy, "应是 mg.Tensor"),
    ("2.2", gru_step_swapped, "z 和 1 − z 对调了"),
    ("2.3", attention_context_wrong_axis, "softmax 应沿源序列位置 j"),
    ("2.4", step_jacobian_untransposed, "少了一次转置"),
    ("2.4", step_jacobian_no_tanh, "忘了 tanh 的导数"),
    ("2.5", gradient_norms_transposed, "乘反了"),
    ("3.1", softmax_unstable, "先减去每行的最大值"),
    ("3.1", softmax_wrong_axis, "应沿最后一维"),
    ("3.2", attention_unscaled, "少了除以 √d"),
    ("3.2", attention_no_transpose, "k.swapaxes(-1, -2)"),
    ("3.2", attention_wrong_axis, "softmax 应沿 key 那一维"),
    ("3.3", causal_masking_the_diagonal, "每个位置要能看见自己"),
    ("3.3", causal_masking_the_past, "遮反了"),
    ("3.3", causal_mask_after_softmax, "要先遮再 softmax"),
    ("3.3", causal_without_a_mask, "没有遮住未来"),
    ("3.4", score_std_variance, "是方差"),
    ("3.5", SoftmaxDiagonalOnly, "只用了雅可比的对角线"),
    ("4.1", table_in_halves, "sin 和 cos 应交替排列"),
    ("4.1", table_wrong_exponent, "频率应是 10000^(−2i/d)"),
    ("4.2", pe_dot_doubled, "2 倍"),
    ("4.3", rope_interleaved, "不是相邻两维"),
    ("4.4", offset_matrix_transposed, "方向反了"),
    ("5.1", block_parameters_matrices_only, "只数了矩阵"),
    ("5.2", layer_norm_unbiased, "n − 1"),
    ("5.2", layer_norm_over_batch, "BatchNorm"),
    ("5.2", layer_norm_eps_outside, "eps 应加在方差上"),
    ("5.3", split_heads_by_reshape, "元素分错了头"),
    ("5.4", attention_without_mask, "没有因果遮罩"),
    ("5.4", attention_scaled_by_width, "√hs"),
    ("5.5", LayerNormOnlyRstd, "只算了“除以 σ”这一条路"),
    ("5.5", LayerNormWithoutXhatTerm, "−x̂·mean(gy·x̂)"),
    ("5.6", post_ln_block_written_pre_ln, "Pre-LN 的写法"),
    ("5.6", post_ln_block_tanh_gelu, "不是 tanh 近似"),
    ("6.1", batch_not_shifted, "往后错一位"),
    ("6.2", decrease_with_norm, "范数的平方"),
    ("6.3", top_k_not_renormalised, "重新归一化"),
    ("6.4", top_p_dropping_the_crossing_token, "跨过 p 的那个候选也要留下"),
    ("6.5", sample_multiplying_temperature, "logits 应除以温度"),
    ("6.5", sample_always_argmax, "要按概率随机抽"),
    ("6.5", sample_ignoring_filters, "没有起作用"),
    ("6.6", cache_step_attending_before_appending, "先把新的 k、v 追加进缓存"),
    ("6.6", cache_step_unscaled, "少了除以 √d"),
    ("7.1", MATCH_ONE_WRONG, "回看第 05 讲 §3"),
    ("7.2", greedy_without_crop, "block_size"),
    ("7.2", greedy_first_position, "最后一个位置"),
    ("7.3", kv_floats_without_2, "K 和 V 各存一份"),
    ("7.4", gpt_parameters_untied, "tie_weights"),
    ("7.5", paired_gap_unpaired, "先逐窗口相减"),
    ("7.5", paired_gap_per_character, "同一个窗口里的字符不是独立的"),
    ("8.1", roofline_by_min, "应取 max"),
    ("8.2", in_blocks_flat, "reshape 回去"),
    ("8.3", horner_new_arrays, "应只有 1 个"),
    ("8.3", horner_backwards, "顺序反了"),
    # The open tasks: their wrong answers are experiments done wrong (more in tests/test_open_tasks.py).
    ("0.7", lambda steps_with: 0.01, "还能再大一些"),
    ("1.6", lambda train_ids, vocab_size: (6, 0.5), "像是在训练文本本身上挑的"),
    ("2.6", lambda ratio_at, target: 1.0, "偏置还不够大"),
    ("3.6", lambda vocab_size, seq, d: None, "应返回一个 nn.Module"),
    ("4.5", lambda n_head, train_length: None, "应返回一个 nn.Module"),
    ("5.7", lambda depth, width: mg.nn.Sequential(
        *[m for _ in range(depth) for m in (mg.nn.Linear(width, width), mg.nn.Tanh())], mg.nn.Linear(width, 1)),
     "直通车道"),
    ("6.7", lambda step, total_steps: -1e-3, "0 到 0.1 之间的数"),
    ("7.6", lambda train_ids, vocab_size, gpt_probs: 0.0, "λ 几乎是 0"),
    ("8.4", lambda x: (x * 0.5, x * 0.5), "精确 GELU 的值"),
    ("9.1", lambda idx, wte, wpe: wte[idx], "忘了加位置嵌入"),
    ("9.2", mlp_with_relu, "ReLU"),
    ("9.3", lambda x, ln_1, attn, ln_2, mlp: ln_2((lambda h: h + mlp(h))(ln_1(x + attn(x)))), "Post-LN"),
    ("9.4", lambda logits, targets: sol09.lm_loss(logits, targets) * (logits.shape[0] * logits.shape[1]), "求的是和"),
    ("9.5", lambda step, max_lr, warmup, decay, min_lr: sol09.lr_at(step, max_lr, warmup, decay, 0.0)
     if step >= warmup else sol09.lr_at(step, max_lr, warmup, decay, min_lr), "不是 0"),
    ("9.6", adamw_without_bias_correction, "偏差修正"),
    ("9.7", train_step_without_clipping, "更新用的是没裁剪的梯度"),
]


ENGINE_NEEDS = {"0.9": "0.8", "0.11": "0.10"}  # the blank stubs: what each engine part asks for first


@pytest.mark.parametrize("exercise", ALL, ids=[e.number for e in ALL])
def test_the_reference_solution_passes(exercise):
    result = grade(exercise, getattr(exercises.answer_module(exercise, solutions=True), exercise.name))
    assert result.status == "pass", result.message


@pytest.mark.parametrize("exercise", ALL, ids=[e.number for e in ALL])
def test_the_blank_exercise_is_reported_as_not_done(exercise):
    result = grade(exercise, getattr(exercises.answer_module(exercise), exercise.name))
    assert result.status == "blank", (result.status, result.message)
    if exercise.number in ENGINE_NEEDS:  # an engine part that uses an earlier one says to write that one first
        assert f"练习 {ENGINE_NEEDS[exercise.number]}" in result.message, result.message
        return
    assert result.message.startswith("还没")


@pytest.mark.parametrize(("number", "answer", "hint"), WRONG, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(WRONG)])
def test_a_typical_mistake_gets_its_own_one_line_hint(number, answer, hint):
    result = grade(find(number), answer)
    assert result.status == "wrong", (result.status, result.message)
    assert hint in result.message, result.message
    assert "\n" not in result.message and len(result.message) < 200


def test_the_forbidden_library_functions_are_restored_even_after_an_error():
    originals = [(owner, name, owner.__dict__.get(name)) for e in ALL for owner, name, _ in e.forbids]
    assert len(originals) >= 10

    def crashes_inside(x):
        raise RuntimeError("boom")

    for number in ("3.1", "5.4", "7.2", "7.5"):
        assert grade(find(number), crashes_inside).status in ("error", "wrong")
    assert all(owner.__dict__.get(name) is original for owner, name, original in originals)
    # Inherited attributes stay inherited: Tensor.softmax lives on a base class, not on Tensor itself.
    assert "softmax" not in mg.Tensor.__dict__ and mg.tensor([1.0, 2.0]).softmax(-1).shape == (2,)
    assert GPT.generate is not None and F.softmax(mg.tensor([0.0, 0.0]), dim=-1).numpy().tolist() == [0.5, 0.5]


def test_every_exercise_is_tested_with_a_wrong_answer():
    assert {e.number for e in ALL} == {number for number, _, _ in WRONG}


def test_every_lecture_has_three_to_seven_exercises():
    assert list(LECTURES) == [f"{n:02d}" for n in range(10)]
    assert all(3 <= len([e for e in exercises_of_lecture if not e.file]) <= 7
               for exercises_of_lecture in LECTURES.values())
    engine = [e.number for e in ALL if e.file == "engine"]  # and lecture 00's own engine, a file of its own
    assert engine == ["0.4"] + [f"0.{n}" for n in range(8, 27)]


def test_the_tutorials_readme_lists_every_exercise():
    readme = (Path(__file__).resolve().parent.parent / "tutorials" / "README.md").read_text(encoding="utf-8")
    for exercise in ALL:
        assert f"{exercise.number} {exercise.title}（`{exercise.name}`" in readme, exercise.number


def test_the_tutorials_readme_counts_the_exercises_right():
    readme = (Path(__file__).resolve().parent.parent / "tutorials" / "README.md").read_text(encoding="utf-8")
    sizes = [len([e for e in lecture if not e.file]) for lecture in LECTURES.values()]
    by_level = [sum(e.level == level for e in ALL) for level in (1, 2, 3)]
    engine = [e for e in ALL if e.file]
    assert f"每讲最后有 {min(sizes)}–{max(sizes)} 道练习，十讲（00–{len(sizes) - 1:02d}）一共 {sum(sizes)} 道" in readme
    assert f"还有 {len(engine)} 道合起来是你自己的张量引擎" in readme and f"这 {len(ALL)} 道里" in readme
    assert "（★）{} 道、“自己动手写”（★★）{} 道、\n“先推导、再实现”（★★★）{} 道".format(*by_level) in readme
    assert f"一共 {sum(e.open for e in ALL)} 道" in readme


def test_a_wrong_value_names_the_element_and_both_values():
    def off_by_one_element(x):
        y = sol03.softmax(x).numpy()
        y[1, 2, 3] += 0.5
        return mg.tensor(y)

    message = grade(find("3.1"), off_by_one_element).message
    assert "第 (1, 2, 3) 个元素应为" in message and "你的是" in message


def test_an_answer_that_crashes_is_reported_not_raised():
    def crashes(x):
        return x.no_such_method()

    result = grade(find("3.1"), crashes)
    assert result.status == "error" and "AttributeError" in result.message


def test_the_checkers_multi_head_attention_is_minigpts():
    rng = np.random.default_rng(0)
    attention = CausalSelfAttention(GPTConfig(vocab_size=5, block_size=8, n_layer=1, n_head=2, n_embd=8), layer=0)
    attention.eval()
    arrays = [rng.standard_normal(p.shape) * 0.5 for p in (attention.c_attn.weight, attention.c_attn.bias,
                                                           attention.c_proj.weight, attention.c_proj.bias)]
    for p, a in zip((attention.c_attn.weight, attention.c_attn.bias, attention.c_proj.weight, attention.c_proj.bias),
                    arrays):
        p.data[...] = a
    x = rng.standard_normal((2, 5, 8))
    with mg.no_grad():
        expected = attention(mg.tensor(x, dtype="float32")).numpy()
    np.testing.assert_allclose(mha(x, *arrays, n_head=2), expected, atol=1e-5)


@pytest.mark.parametrize("norm_position", ["pre", "post"])
def test_the_checkers_block_is_minigpts(norm_position):
    rng = np.random.default_rng(1)
    block = Block(GPTConfig(vocab_size=5, block_size=8, n_layer=1, n_head=2, n_embd=8, norm_position=norm_position),
                  layer=0).to(dtype=np.float64)
    w = {name: rng.standard_normal(p.shape) * 0.5 for name, p in block.state_dict().items()}
    block.load_state_dict(w)
    x = rng.standard_normal((2, 5, 8))
    with mg.no_grad():
        expected = block(mg.tensor(x, dtype="float64")).numpy()
    np.testing.assert_allclose(block_np(x, w, n_head=2, post=norm_position == "post"), expected, atol=1e-10)


def test_check_grades_an_answer_given_in_a_notebook_cell(capsys):
    check("3.2", sol03.attention)
    assert "1/1 通过" in capsys.readouterr().out
    check("3.2", attention_unscaled)
    out = capsys.readouterr().out
    assert "0/1 通过" in out and "少了除以 √d" in out


def test_check_reports_progress_for_a_lecture(capsys):
    check("05", solutions=True)
    assert "7/7 通过" in capsys.readouterr().out
    check("5")
    assert "0/7 通过" in capsys.readouterr().out
    assert [r.status for r in grade_lecture(5, solutions=True)] == ["pass"] * 7


def test_the_command_line_exit_status(capsys):
    assert main(["check", "06", "--solutions"]) == 0
    assert main(["check", "6.3"]) == 1  # the blank exercise
    assert main(["check", "12"]) == 2
    assert "没有第 12 讲" in capsys.readouterr().err  # in Chinese, as every message a learner reads
    assert main(["list"]) == 0
    assert "7.4" in capsys.readouterr().out
