"""Checkers for lecture 02's exercises (tutorials/exercises/lecture02.py): RNN and GRU steps, their gradients.

Read next: lecture03.py.
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
from tutorials.exercises.grading import (
    Exercise,
    Wrong,
    as_array,
    compare,
    compare_grads,
    expect_tensor,
    numeric_grads,
    softmax,
)


def _sigmoid(x):
    return 1 / (1 + np.exp(-x))


def _tensors(*arrays):
    return [mg.tensor(a, requires_grad=True, dtype="float64") for a in arrays]


def _grads(tensors):
    return [t.grad.numpy() if t.grad is not None else np.zeros(t.shape) for t in tensors]


def check_rnn_step(rnn_step) -> str:
    rng = np.random.default_rng(0)
    B, E, H = 3, 5, 4
    x, h, W_xh, W_hh, b = (rng.standard_normal(s) for s in ((B, E), (B, H), (E, H), (H, H), (H,)))
    pre = x @ W_xh + h @ W_hh + b
    inputs = _tensors(x, h, W_xh, W_hh, b)
    y = expect_tensor(rnn_step(*inputs), "rnn_step 的结果")
    compare(y, np.tanh(pre), "h_new", suspects=[
        (pre, "忘了 tanh：新状态要过一次 tanh，压到 (−1, 1) 之间"),
        (np.tanh(x @ W_xh + h @ W_hh.T + b), "h 应乘 W_hh 本身（h @ W_hh），你的像是乘了它的转置"),
        (np.tanh(x @ W_xh + h @ W_hh), "漏了偏置 b"),
        (_sigmoid(pre), "本讲的 RNN 用 tanh，不是 sigmoid"),
    ])
    upstream = rng.standard_normal((B, H))
    y.backward(upstream)
    g_pre = upstream * (1 - np.tanh(pre) ** 2)
    names = ["x", "h", "W_xh", "W_hh", "b"]
    for name, got, expected in zip(names, _grads(inputs), [g_pre @ W_xh.T, g_pre @ W_hh.T, x.T @ g_pre, h.T @ g_pre,
                                                           g_pre.sum(0)]):
        compare(got, expected, f"{name} 的梯度")
    return "通过：梯度也能传回 W_hh 和上一步的 h"


def _gru(x, h, W_x, W_h, b_x, b_h):
    H = h.shape[-1]
    a, c = x @ W_x + b_x, h @ W_h + b_h
    r, z = _sigmoid(a[:, :H] + c[:, :H]), _sigmoid(a[:, H:2 * H] + c[:, H:2 * H])
    n = np.tanh(a[:, 2 * H:] + r * c[:, 2 * H:])
    return ((1 - z) * n + z * h,)


def check_gru_step(gru_step) -> str:
    rng = np.random.default_rng(1)
    B, E, H = 3, 5, 4
    x, h, W_x, W_h, b_x, b_h = (rng.standard_normal(s) for s in ((B, E), (B, H), (E, 3 * H), (H, 3 * H), (3 * H,),
                                                                  (3 * H,)))
    a, c = x @ W_x + b_x, h @ W_h + b_h
    r, z = _sigmoid(a[:, :H] + c[:, :H]), _sigmoid(a[:, H:2 * H] + c[:, H:2 * H])
    n = np.tanh(a[:, 2 * H:] + r * c[:, 2 * H:])
    z_first = _sigmoid(a[:, :H] + c[:, :H])
    r_second = _sigmoid(a[:, H:2 * H] + c[:, H:2 * H])
    n_swapped = np.tanh(a[:, 2 * H:] + r_second * c[:, 2 * H:])
    inputs = _tensors(x, h, W_x, W_h, b_x, b_h)
    y = expect_tensor(gru_step(*inputs), "gru_step 的结果")
    compare(y, (1 - z) * n + z * h, "h_new", suspects=[
        (z * n + (1 - z) * h, "z 和 1 − z 对调了：本讲约定 h_new = (1 − z)·n + z·h（z 是保留旧状态的比例）"),
        ((1 - z) * np.tanh(r * (a[:, 2 * H:] + c[:, 2 * H:])) + z * h,
         "重置门 r 只乘在来自 h 的那一段上：n = tanh(a_n + r·c_n)"),
        ((1 - z) * np.tanh(a[:, 2 * H:] + c[:, 2 * H:]) + z * h, "候选状态 n 里漏了重置门 r：n = tanh(a_n + r·c_n)"),
        ((1 - z_first) * n_swapped + z_first * h, "r 和 z 的位置反了：三段的顺序是 [r | z | n]，r 在最前面"),
    ])
    # The forward values alone would pass an answer whose graph is cut (a .detach(), .data, a NumPy detour).
    upstream = rng.standard_normal(y.shape)
    y.backward(upstream)
    arrays = (x, h, W_x, W_h, b_x, b_h)
    compare_grads(inputs, ["x", "h", "W_x", "W_h", "b_x", "b_h"], numeric_grads(_gru, arrays, [upstream]))
    return "通过：当 z 接近 1 时，h_new ≈ h，旧状态（和它的梯度）几乎原样通过"


def check_attention_context(attention_context) -> str:
    rng = np.random.default_rng(2)
    B, L, H = 3, 6, 4
    s, enc, W_a = rng.standard_normal((B, H)), rng.standard_normal((B, L, H)), rng.standard_normal((H, H))
    scores = np.einsum("blh,bh->bl", enc, s @ W_a)
    weights = softmax(scores, axis=-1)
    inputs = _tensors(s, enc, W_a)
    result = attention_context(*inputs)
    if not isinstance(result, tuple) or len(result) != 2:
        raise Wrong("应返回两个结果组成的元组 (context, weights)")
    context, got_weights = (expect_tensor(t, name) for t, name in zip(result, ("context", "weights")))
    compare(got_weights, weights, "weights", suspects=[
        (softmax(scores, axis=0), "softmax 应沿源序列位置 j（最后一维）：每个样本的权重加起来等于 1"),
        (softmax(np.einsum("blh,bh->bl", enc, s @ W_a.T), axis=-1), "query 应是 s @ W_a，你的像是乘了 W_a 的转置"),
        (scores, "忘了 softmax：分数要先变成和为 1 的权重"),
    ])
    compare(context, np.einsum("bl,blh->bh", weights, enc), "context", suspects=[
        (enc.sum(axis=1), "上下文是按权重的加权和 Σ_j 权重[b, j]·enc[b, j]，不是直接相加"),
        (enc.mean(axis=1), "上下文是按权重的加权和 Σ_j 权重[b, j]·enc[b, j]，不是平均"),
    ])

    def formula(s, enc, W_a):
        weights = softmax(np.einsum("blh,bh->bl", enc, s @ W_a), axis=-1)
        return np.einsum("bl,blh->bh", weights, enc), weights

    upstream = [rng.standard_normal(context.shape), rng.standard_normal(got_weights.shape)]
    u_context, u_weights = (mg.tensor(u, dtype="float64") for u in upstream)
    ((context * u_context).sum() + (got_weights * u_weights).sum()).backward()
    compare_grads(inputs, ["s", "enc", "W_a"], numeric_grads(formula, (s, enc, W_a), upstream))
    return "通过：这就是第三讲 QKV 的前身（query = s W_a，key = value = enc）"


def _step(h, x_part, W_hh):
    return np.tanh(x_part + h @ W_hh)


def check_step_jacobian(step_jacobian) -> str:
    rng = np.random.default_rng(3)
    H = 5
    W_hh, h, x_part = rng.standard_normal((H, H)), rng.standard_normal(H), rng.standard_normal(H)
    h_new = _step(h, x_part, W_hh)
    # The expected Jacobian by central differences on the step itself: it does not rely on the formula.
    eps = 1e-6
    numeric = np.stack([(_step(h + eps * e, x_part, W_hh) - _step(h - eps * e, x_part, W_hh)) / (2 * eps)
                        for e in np.eye(H)], axis=1)
    compare(step_jacobian(h_new, W_hh), numeric, "J", atol=1e-6, suspects=[
        ((1 - h_new**2)[:, None] * W_hh,
         "少了一次转置：(h @ W_hh)[i] = Σ_j h[j]·W_hh[j, i]，所以 J[i, j] 用的是 W_hh[j, i]"),
        (W_hh.T, "忘了 tanh 的导数：每一行 i 还要乘上 1 − h_new[i]²"),
        ((1 - h_new**2)[None, :] * W_hh.T, "1 − h_new² 应乘在第 i 行（输出那一维），你乘在了列上"),
        (np.diag(1 - h_new**2), "W_hh 不见了：h 经过 h @ W_hh 才进入 tanh"),
    ])
    return "通过：J = diag(1 − h_new²) · W_hhᵀ"


def _jacobian(h_new, W_hh):
    return (1 - h_new**2)[:, None] * W_hh.T


def check_gradient_norms(gradient_norms) -> str:
    rng = np.random.default_rng(4)
    T, H = 6, 4
    jacobians = [rng.standard_normal((H, H)) for _ in range(T)]
    g_last = rng.standard_normal(H)
    g, expected = g_last, [np.linalg.norm(g_last)]
    for J in reversed(jacobians):
        g = g @ J
        expected.append(np.linalg.norm(g))
    g_t, transposed = g_last, [np.linalg.norm(g_last)]
    g_f, forward_order = g_last, [np.linalg.norm(g_last)]
    for J, J_f in zip(reversed(jacobians), jacobians):
        g_t, g_f = J @ g_t, g_f @ J_f
        transposed.append(np.linalg.norm(g_t))
        forward_order.append(np.linalg.norm(g_f))
    got = as_array(gradient_norms(jacobians, g_last), "gradient_norms 的结果")
    compare(got, np.array(expected), "范数列表", suspects=[
        (np.array(transposed), "乘反了：∂L/∂h_t = (∂L/∂h_{t+1}) · J_t，行向量在左边（g @ J），不是 J @ g"),
        (np.array(forward_order), "顺序反了：要从最后一步往回乘，先乘 jacobians[-1]，再乘 jacobians[-2] ……"),
        (np.array(expected[::-1]), "列表顺序反了：第 0 个应是 ‖g_last‖，第 k 个是 k 步之前的"),
    ])
    # The remark: the same recursion on a real tanh RNN, with the Jacobians of its own states.
    H, steps = 32, 40
    W_hh = rng.standard_normal((H, H)) / np.sqrt(H)
    h, jacobians = np.zeros(H), []
    for _ in range(steps):
        h = _step(h, rng.standard_normal(H), W_hh)
        jacobians.append(_jacobian(h, W_hh))
    norms = as_array(gradient_norms(jacobians, rng.standard_normal(H)), "gradient_norms 的结果")
    return f"通过：在一个随机的 tanh RNN 上，30 步之前的梯度只剩最后一步的 {norms[30] / norms[0]:.0e} 倍"


# --------------------------------------------------------------------------------------------------
# 2.6, an open task: the smallest update-gate bias at which a 30-step gradient survives

GATE_STEPS = 30
GATE_TOLERANCE = 0.25  # the bias found may overshoot the smallest one by this much
GATE_BUDGET = 40  # measurements allowed per cell: enough for a search, not for a fine scan
GATE_CELLS = [(0, 1.0, 0.1), (1, 2.0, 0.01)]  # (seed, weight scale, the fraction of the gradient that must survive)


def _gru_ratio(seed: int, scale: float, E: int = 8, H: int = 32, B: int = 8):
    """ratio(bias): ||d(u·h_T)/dx_{T-30}|| / ||d(u·h_T)/dx_T|| for an untrained GRU whose update gate has that bias."""
    rng = np.random.default_rng(seed)
    W_x = rng.standard_normal((E, 3 * H)) * scale / np.sqrt(E)
    W_h = rng.standard_normal((H, 3 * H)) * scale / np.sqrt(H)
    xs, u = rng.standard_normal((B, GATE_STEPS + 1, E)), rng.standard_normal((B, H))

    def ratio(bias: float) -> float:
        b_x = np.zeros(3 * H)
        b_x[H:2 * H] = float(bias)  # the update gate z's bias: z = sigmoid(... + bias)
        x = mg.tensor(xs, requires_grad=True, dtype="float64")
        h = mg.tensor(np.zeros((B, H)), dtype="float64")
        weights = [mg.tensor(a, dtype="float64") for a in (W_x, W_h, b_x, np.zeros(3 * H))]
        for t in range(GATE_STEPS + 1):
            h = _gru_step(x[:, t], h, *weights)
        (h * mg.tensor(u, dtype="float64")).sum().backward()
        norms = np.linalg.norm(x.grad.numpy(), axis=-1).mean(axis=0)  # (T,): the first input is 30 steps back
        return float(norms[0] / norms[-1])

    return ratio


def _gru_step(x, h, W_x, W_h, b_x, b_h):
    H = h.shape[-1]
    a, c = x @ W_x + b_x, h @ W_h + b_h
    r = (a[:, :H] + c[:, :H]).sigmoid()
    z = (a[:, H:2 * H] + c[:, H:2 * H]).sigmoid()
    return (1 - z) * (a[:, 2 * H:] + r * c[:, 2 * H:]).tanh() + z * h


def check_surviving_bias(surviving_bias) -> str:
    found = []
    for seed, scale, target in GATE_CELLS:
        ratio, calls = _gru_ratio(seed, scale), []

        def measured(bias: float, ratio=ratio, calls=calls) -> float:
            if len(calls) >= GATE_BUDGET:
                raise Wrong(f"量了 {GATE_BUDGET} 次还没找到：逐个试太慢，用二分法（比值随偏置单调上升）")
            calls.append(bias)
            return ratio(bias)

        bias = surviving_bias(measured, target)
        if isinstance(bias, bool) or not isinstance(bias, (int, float, np.floating)):
            raise Wrong(f"应返回一个数（更新门的偏置），你的是 {type(bias).__name__}")
        bias = float(bias)
        if ratio(bias) < target:
            raise Wrong(f"偏置 {bias:.2f} 时 30 步处只剩 {ratio(bias):.1e}，目标是 {target:g}：偏置还不够大"
                        + ("（讲义里的 +1 对这个单元不够）" if abs(bias - 1.0) < 1e-9 else ""))
        if ratio(bias - GATE_TOLERANCE) >= target:
            raise Wrong(f"偏置 {bias:.2f} 能让梯度活过 30 步，但 {bias - GATE_TOLERANCE:.2f} 也行：要找的是最小的那个"
                        "（门开得越大，纸条上越难写进新东西）")
        found.append(f"{bias:.2f}（{len(calls)} 次测量）")
    return "通过：两个单元的最小偏置是 " + "、".join(found)


EXERCISES = [
    Exercise("2.1", "rnn_step", "RNN 的一步", 1, check_rnn_step),
    Exercise("2.2", "gru_step", "GRU 的一步", 2, check_gru_step),
    Exercise("2.3", "attention_context", "解码器的注意力", 2, check_attention_context),
    Exercise("2.4", "step_jacobian", "一步的雅可比矩阵", 3, check_step_jacobian),
    Exercise("2.5", "gradient_norms", "梯度往回传：几何衰减", 3, check_gradient_norms),
    Exercise("2.6", "surviving_bias", "开放题：让梯度活过 30 步的最小门偏置", 3, check_surviving_bias, open=True),
]
