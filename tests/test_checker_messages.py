"""Every classic mistake is refused with a Chinese message that names it, and the engine's errors that reach an
answer are explained in Chinese, with the engine's own English beneath.

The classic mistakes of the issue that asked for them: clipping without min(1, ·), per-parameter clipping, clipping
after the step, L2 instead of decoupled decay, no bias correction, decay on every parameter, post-LN, tanh GELU,
warmup from zero, decaying to zero, targets shifted twice, sum instead of mean, softmax over time. Each answer here
is a learner's with that one mistake (built on the tests' own copy of the reference, tests/course_helpers.py).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from course_helpers import own_copy

import minigrad as mg
from tutorials.exercises import find
from tutorials.exercises.grading import Wrong, better_by, compare, grade

sol03, sol09 = own_copy("03"), own_copy("09")


def train_step_with(mistake: str):
    """Exercise 9.7 as a learner writes it, with one classic mistake."""
    def train_step(model, x, y, state, lr, grad_clip=1.0, weight_decay=0.1):
        _, loss = model(x, y)
        params = list(model.named_parameters())
        for _, p in params:
            p.grad = None
        loss.backward()
        params = [(name, p) for name, p in params if p.grad is not None]
        grads = [p.grad.numpy() for _, p in params]
        norm = math.sqrt(sum(float((g * g).sum()) for g in grads))
        scale = grad_clip / (norm + 1e-6) if mistake == "no min" else min(1.0, grad_clip / (norm + 1e-6))
        state["t"] = state.get("t", 0) + 1
        for (name, p), g in zip(params, grads):
            m = state.setdefault("m", {}).setdefault(name, np.zeros_like(p.array))
            v = state.setdefault("v", {}).setdefault(name, np.zeros_like(p.array))
            decay = weight_decay if p.ndim >= 2 or mistake == "decay everything" else 0.0
            own = min(1.0, grad_clip / (math.sqrt(float((g * g).sum())) + 1e-6))
            g = g * {"per parameter": own, "after the step": 1.0}.get(mistake, scale)
            if mistake == "L2":
                g, decay = g + decay * p.array, 0.0
            sol09.adamw_update(p.array, g.astype(p.array.dtype), m, v, state["t"], lr, weight_decay=decay)
        if mistake == "after the step":
            for (_, p), g in zip(params, grads):
                p.grad = mg.tensor(g * scale)  # clipped, once the step has used the unclipped gradient
        return loss.item()

    return train_step


def adamw_l2(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    sol09.adamw_update(p, g + weight_decay * p, m, v, t, lr, betas, eps, 0.0)


def adamw_no_bias_correction(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    sol09.adamw_update(p, g, m, v, 10**9, lr, betas, eps, weight_decay)


def mlp_tanh_gelu(x, w1, b1, w2, b2):
    h = x @ w1.swapaxes(-1, -2) + b1
    h = 0.5 * h * (1 + (math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)).tanh())
    return h @ w2.swapaxes(-1, -2) + b2


def lm_loss_over_time(logits, targets):
    z = logits - logits.max(dim=1, keepdim=True).values.detach()
    log_probs = z - z.exp().sum(axis=1, keepdims=True).log()  # normalised over T, not over V
    B, T, _ = logits.shape
    return -log_probs[np.arange(B)[:, None], np.arange(T), np.asarray(targets)].mean()


def lm_loss_shifted_again(logits, targets):
    return sol09.lm_loss(logits[:, :-1], np.asarray(targets)[:, 1:])


MISTAKES = [
    ("9.7", train_step_with("no min"), "少了 min(1, ·)"),
    ("9.7", train_step_with("per parameter"), "每个参数各自裁剪了"),
    ("9.7", train_step_with("after the step"), "把裁剪放在了更新之后"),
    ("9.7", train_step_with("L2"), "L2 正则"),
    ("9.7", train_step_with("decay everything"), "偏置和 LayerNorm 的 γ、β 不衰减"),
    ("9.6", adamw_l2, "L2 正则"),
    ("9.6", adamw_no_bias_correction, "少了偏差修正"),
    ("9.3", lambda x, ln_1, attn, ln_2, mlp: ln_2((lambda h: h + mlp(h))(ln_1(x + attn(x)))), "Post-LN"),
    ("9.2", mlp_tanh_gelu, "tanh 近似的 GELU"),
    ("9.5", lambda step, max_lr, warmup, decay, min_lr: max_lr * step / warmup if step < warmup
     else sol09.lr_at(step, max_lr, warmup, decay, min_lr), "第 0 步学习率是 0"),
    ("9.5", lambda step, max_lr, warmup, decay, min_lr: sol09.lr_at(step, max_lr, warmup, decay, 0.0)
     if step >= warmup else sol09.lr_at(step, max_lr, warmup, decay, min_lr), "余弦应降到 min_lr，不是 0"),
    ("9.4", lm_loss_shifted_again, "答案又错了一位"),
    ("6.1", lambda data, starts, T: (np.stack([data[s:s + T] for s in starts]),
                                     np.stack([data[s + 2:s + T + 2] for s in starts])), "错了两位"),
    ("9.4", lambda logits, targets: sol09.lm_loss(logits, targets) * logits.shape[0] * logits.shape[1], "求的是和"),
    ("9.4", lm_loss_over_time, "softmax 沿了时间那一维"),
    ("3.2", lambda q, k, v: sol03.softmax((q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])).swapaxes(-1, -2))
     .swapaxes(-1, -2) @ v, "softmax 应沿 key 那一维"),
]


@pytest.mark.parametrize(("number", "answer", "named"), MISTAKES, ids=[f"{n}-{w[:8]}" for n, _, w in MISTAKES])
def test_each_classic_mistake_is_refused_and_named_in_chinese(number, answer, named):
    result = grade(find(number), answer)
    assert result.status == "wrong" and named in result.message, (result.status, result.message)
    assert "\n" not in result.message


def softmax_max_as_a_tensor(x):
    e = (x - x.max(dim=-1, keepdim=True)).exp()  # PyTorch's max(dim) is (values, indices), not a tensor
    return e / e.sum(axis=-1, keepdims=True)


def causal_with_max_as_a_tensor(q, k, v):
    T = q.shape[-2]
    scores = (q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])).masked_fill(
        np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf)
    return softmax_max_as_a_tensor(scores) @ v


def lm_loss_with_max_as_a_tensor(logits, targets):
    B, T, V = logits.shape
    z = logits.reshape(B * T, V)
    z = z - z.max(dim=-1, keepdim=True)
    log_probs = z - z.exp().sum(axis=-1, keepdims=True).log()
    return -log_probs[np.arange(B * T), np.asarray(targets).ravel()].mean()


@pytest.mark.parametrize(("number", "answer", "explained"), [
    ("3.3", causal_with_max_as_a_tensor, "具名元组 (values, indices)"),
    ("9.4", lm_loss_with_max_as_a_tensor, "具名元组 (values, indices)"),
    ("9.1", lambda idx, wte, wpe: wte[idx] + wpe, "不能广播"),  # all of wpe, not its first T rows
    ("9.2", lambda x, w1, b1, w2, b2: (x @ w1 + b1) @ w2 + b2, "矩阵乘法的形状对不上"),
])
def test_the_engines_errors_are_explained_in_chinese_with_its_own_words_beneath(number, answer, explained):
    result = grade(find(number), answer)
    assert result.status == "error" and explained in result.message and "引擎的原话" in result.message, result.message


@pytest.mark.parametrize(("got", "named"), [
    (lambda e: -e, "正好差一个负号"),
    (lambda e: 2 * e, "应有值的 2 倍"),
    (lambda e: e + 0.5, "都差同一个常数 +0.5"),
    (lambda e: np.swapaxes(e, -1, -2), "最后两维转置了"),
    (lambda e: np.roll(e, 1, axis=0), "沿第 0 维错了一位"),
    (lambda e: np.zeros_like(e), "全是 0"),
])
def test_a_wrong_array_no_checker_foresaw_still_gets_its_mistake_named(got, named):
    expected = np.random.default_rng(0).standard_normal((4, 4)) + 3
    with pytest.raises(Wrong, match=re.escape(named)):
        compare(got(expected), expected, "结果")


def test_a_loss_worse_than_the_baseline_reads_worse_not_better_by_a_negative_amount():
    assert better_by(0.0123, 0.004) == "好 0.012 ± 0.004" and better_by(-0.446, 0.01) == "差 0.446 ± 0.010"
    result = grade(find("1.6"), lambda train_ids, vocab_size: (6, 0.5))
    assert "好 -" not in result.message and "差 " in result.message, result.message
