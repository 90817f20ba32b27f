"""Checkers for lecture 05's exercises (tutorials/exercises/lecture05.py): the parts of a Transformer block.

`mha` and `block_np` are the checkers' own multi-head causal self-attention and Transformer block in NumPy;
tests/test_exercises.py holds them against minigpt's CausalSelfAttention and Block on the same weights.
Read next: lecture06.py.
"""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt import GPTConfig
from minigpt.model import Block, CausalSelfAttention
from minigrad import nn, optim
from tutorials.exercises.grading import (
    Exercise,
    Wrong,
    compare,
    compare_grads,
    compare_number,
    expect_gradcheck,
    expect_tensor,
    function_backward,
    numeric_grads,
    softmax,
)


def check_block_parameters(block_parameters) -> str:
    for C in (8, 48, 96):
        block = Block(GPTConfig(vocab_size=8, block_size=8, n_layer=1, n_head=4, n_embd=C), 0)
        actual = sum(p.numel() for p in block.parameters())
        compare_number(block_parameters(C), actual, f"n_embd = {C} 时一个 block 的参数个数", suspects=[
            (12 * C * C, "只数了矩阵：还有 Linear 的偏置（9·C 个）和两个 LayerNorm 的 γ、β（4·C 个）"),
            (12 * C * C + 9 * C, "漏了两个 LayerNorm 的 γ、β（共 4·C 个）"),
            (12 * C * C + 4 * C, "漏了 Linear 的偏置：c_attn 3C、c_proj C、c_fc 4C、mlp.c_proj C，共 9·C 个"),
            (4 * C * C + 4 * C, "只数了注意力：MLP 还有 C×4C 和 4C×C 两个矩阵"),
            (8 * C * C + 5 * C, "只数了 MLP：注意力还有 c_attn（C×3C）和 c_proj（C×C）"),
        ])
    return f"通过：GPT-2 small（C = 768）每个 block 有 {12 * 768**2 + 13 * 768:,} 个参数，几乎全在 12C² 里"


def _layer_norm(x, w, b, eps=1e-5, ddof=0, axis=-1, eps_inside=True):
    mu = x.mean(axis=axis, keepdims=True)
    var = x.var(axis=axis, keepdims=True, ddof=ddof)
    scale = np.sqrt(var + eps) if eps_inside else np.sqrt(var) + eps
    return (x - mu) / scale * w + b


def check_layer_norm(layer_norm) -> str:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)) * 3 + 1
    x[2] = 5 + 1e-3 * rng.standard_normal(6)  # a row of tiny variance: there eps matters
    w, b = rng.standard_normal(6), rng.standard_normal(6)
    tensors = [mg.tensor(a, dtype="float64") for a in (x, w, b)]
    got = expect_tensor(layer_norm(*tensors), "layer_norm 的结果")
    compare(got, _layer_norm(x, w, b), "输出", suspects=[
        (_layer_norm(x, w, b, ddof=1), "方差应除以 n（有偏：mean((x − μ)²)），你的像是除以 n − 1"),
        (_layer_norm(x, w, b, axis=0), "应在每个位置自己的特征上（最后一维）归一化；沿批这一维归一化的是 BatchNorm"),
        (_layer_norm(x, w, b, eps_inside=False), "eps 应加在方差上再开方：√(σ² + eps)，不是 √σ² + eps"),
        (_layer_norm(x, 1.0, 0.0), "忘了乘 weight、加 bias"),
        (_layer_norm(x, w, 0.0), "忘了加 bias"),
    ])
    expect_gradcheck(lambda x, w, b: layer_norm(x, w, b), [x[:2, :4], w[:4], b[:4]], "layer_norm")
    # At a GPT's shapes: the residual stream (B, T, C) and a 4-D batch, with every axis a different length
    for shape in ((2, 5, 7), (2, 3, 5, 7)):
        x = rng.standard_normal(shape) * 2 + 0.5
        w, b = rng.standard_normal(shape[-1]), rng.standard_normal(shape[-1])
        got = expect_tensor(layer_norm(*[mg.tensor(a, dtype="float64") for a in (x, w, b)]), "layer_norm 的结果")
        compare(got, _layer_norm(x, w, b), f"形状 {shape} 的输入的输出", suspects=[
            (_layer_norm(x, w, b, axis=1), f"应沿最后一维（axis=-1）归一化：二维时 axis=1 恰好是最后一维，"
                                           f"可在 GPT 的 {shape} 上 axis=1 是时间那一维，你在跨位置求平均"),
            (_layer_norm(x, w, b, axis=0), "应在每个位置自己的特征上（最后一维）归一化，你沿的是第 0 维"),
        ])
    return "通过：和 F.layer_norm 算的一样"


def check_split_heads(split_heads) -> str:
    B, T, C, nh = 2, 3, 8, 4
    x = np.arange(B * T * C, dtype=np.float64).reshape(B, T, C)
    expected = x.reshape(B, T, nh, C // nh).transpose(0, 2, 1, 3)
    x_tensor = mg.tensor(x, dtype="float64", requires_grad=True)
    got = expect_tensor(split_heads(x_tensor, nh), "split_heads 的结果")
    compare(got, expected, "切开后的张量", suspects=[
        (x.reshape(B, nh, T, C // nh), "元素分错了头：直接 reshape 成 (B, nh, T, hs) 会把不同位置的通道混在一起；"
                                       "先 reshape 成 (B, T, nh, hs)，再交换第 1、2 维"),
        (x.reshape(B, T, nh, C // nh), "形状应为 (B, nh, T, hs)：reshape 成 (B, T, nh, hs) 之后还要交换第 1、2 维"),
    ])
    upstream = np.random.default_rng(4).standard_normal(expected.shape)
    got.backward(upstream)
    compare_grads([x_tensor], ["x"], [upstream.transpose(0, 2, 1, 3).reshape(B, T, C)])  # moved back, unchanged
    return "通过：头成了一个批量维度，所有头可以一次矩阵乘法算完"


def mha(x, w_attn, b_attn, w_proj, b_proj, n_head, causal=True, scale="hs", heads="split", project=True):
    """Multi-head causal self-attention in NumPy; the keywords give the typical mistakes' results."""
    B, T, C = x.shape
    nh = 1 if heads == "one" else n_head
    hs = C // nh
    qkv = x @ w_attn.T + b_attn  # (B, T, 3C)

    def split(a):  # (B, T, C) -> (B, nh, T, hs)
        return a.reshape(B, nh, T, hs) if heads == "reshape" else a.reshape(B, T, nh, hs).transpose(0, 2, 1, 3)

    q, k, v = (split(qkv[..., i * C:(i + 1) * C]) for i in range(3))
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(hs if scale == "hs" else C)
    if causal:
        scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf, scores)
    y = softmax(scores) @ v  # (B, nh, T, hs)
    y = y.reshape(B, T, C) if heads == "reshape" else y.transpose(0, 2, 1, 3).reshape(B, T, C)
    return y @ w_proj.T + b_proj if project else y


def check_causal_self_attention(causal_self_attention) -> str:
    rng = np.random.default_rng(1)
    B, T, C, nh = 2, 5, 8, 2
    arrays = [rng.standard_normal(s) * 0.5 for s in ((B, T, C), (3 * C, C), (3 * C,), (C, C), (C,))]
    tensors = [mg.tensor(a, dtype="float64", requires_grad=True) for a in arrays]
    got = expect_tensor(causal_self_attention(*tensors, nh), "结果")
    compare(got, mha(*arrays, nh), "输出", suspects=[
        (mha(*arrays, nh, causal=False), "没有因果遮罩：位置 i 不应看见 j > i 的位置"),
        (mha(*arrays, nh, heads="one"), f"看起来只用了一个头：把 C = {C} 个通道切成 n_head = {nh} 份，各做一遍注意力"),
        (mha(*arrays, nh, scale="C"), f"缩放应除以 √hs（每个头的维度，这里 {C // nh}），你的像是除以 √C"),
        (mha(*arrays, nh, project=False), "忘了最后的输出投影 c_proj"),
        (mha(*arrays, nh, heads="reshape"),
         "切头的方法不对：先 reshape 成 (B, T, nh, hs) 再交换第 1、2 维（拼回时反过来）"),
    ])
    upstream = rng.standard_normal((B, T, C))
    got.backward(upstream)
    compare_grads(tensors, ["x", "c_attn_weight", "c_attn_bias", "c_proj_weight", "c_proj_bias"],
                  numeric_grads(lambda *a: (mha(*a, nh),), arrays, [upstream]))
    return "通过：和 minigpt 的 CausalSelfAttention 在同样的权重上算出的完全一样"


def check_layer_norm_backward(LayerNorm) -> str:
    rng = np.random.default_rng(2)
    x, gy = rng.standard_normal((3, 6)) * 2 + 1, rng.standard_normal((3, 6))
    x[1] = 3 + 1e-3 * rng.standard_normal(6)  # a row of tiny variance: there the eps in √(σ² + eps) matters
    centred = x - x.mean(axis=-1, keepdims=True)
    rstd = 1 / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-5)
    xhat = centred * rstd
    mean_gy, mean_gy_xhat = gy.mean(axis=-1, keepdims=True), (gy * xhat).mean(axis=-1, keepdims=True)
    (gx,) = function_backward(LayerNorm, [x], gy)
    compare(gx, rstd * (gy - mean_gy - xhat * mean_gy_xhat), "x 的梯度", suspects=[
        (gy * rstd, "只算了“除以 σ”这一条路：μ 和 σ 也依赖 x，还要减去 mean(gy) 和 x̂·mean(gy·x̂)"),
        (rstd * (gy - mean_gy), "漏了 σ 依赖 x 的那一项：−x̂·mean(gy·x̂)"),
        (rstd * (gy - xhat * mean_gy_xhat), "漏了 μ 依赖 x 的那一项：−mean(gy)"),
        (rstd * (gy - gy.sum(-1, keepdims=True) - xhat * (gy * xhat).sum(-1, keepdims=True)),
         "两项应是平均（mean），不是求和：μ 和 σ² 都是对 C 个元素取平均"),
    ])
    expect_gradcheck(lambda x: LayerNorm.apply(x), [x], "LayerNorm")
    # At a GPT's shapes: the residual stream (B, T, C), T != C, where axis=1 is time and not the channels
    x, gy = rng.standard_normal((2, 5, 7)) * 2 + 1, rng.standard_normal((2, 5, 7))
    xhat = (x - x.mean(axis=-1, keepdims=True)) / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
    rstd = 1 / np.sqrt(x.var(axis=-1, keepdims=True) + 1e-5)
    (gx,) = function_backward(LayerNorm, [x], gy)
    compare(gx, rstd * (gy - gy.mean(axis=-1, keepdims=True) - xhat * (gy * xhat).mean(axis=-1, keepdims=True)),
            "三维输入 (B, T, C) 上 x 的梯度", suspects=[
                (rstd * (gy - gy.mean(axis=1, keepdims=True) - xhat * (gy * xhat).mean(axis=1, keepdims=True)),
                 "平均应沿最后一维（axis=-1）：二维时 axis=1 恰好是它，在 GPT 的 (B, T, C) 上却是时间那一维")])
    return "通过：gx 的每一行加起来是 0，和 x̂ 的点积也是 0——归一化把这两个方向“抹掉”了"


def _gelu(x, approximate=False):
    if approximate:
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    return 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))


def block_np(x, w, n_head, post=True, residual=True, causal=True, approximate=False):
    """A Transformer block in NumPy (w: Block.state_dict() as arrays); the keywords give typical mistakes."""
    def ln(h, name):
        return _layer_norm(h, w[f"{name}.weight"], w[f"{name}.bias"])

    def attention(h):
        return mha(h, w["attn.c_attn.weight"], w["attn.c_attn.bias"], w["attn.c_proj.weight"],
                   w["attn.c_proj.bias"], n_head, causal=causal)

    def mlp(h):
        hidden = _gelu(h @ w["mlp.c_fc.weight"].T + w["mlp.c_fc.bias"], approximate)
        return hidden @ w["mlp.c_proj.weight"].T + w["mlp.c_proj.bias"]

    keep = 1.0 if residual else 0.0
    if post:
        x = ln(keep * x + attention(x), "ln_1")
        return ln(keep * x + mlp(x), "ln_2")
    x = keep * x + attention(ln(x, "ln_1"))
    return keep * x + mlp(ln(x, "ln_2"))


def check_post_ln_block(post_ln_block) -> str:
    rng = np.random.default_rng(3)
    block = Block(GPTConfig(vocab_size=8, block_size=8, n_layer=1, n_head=4, n_embd=16, norm_position="post"), 0)
    w = {name: rng.standard_normal(p.shape) * (0.3 if p.ndim == 2 else 0.5) + (1.0 if name.endswith("ln_1.weight")
         or name.endswith("ln_2.weight") else 0.0) for name, p in block.state_dict().items()}
    x = rng.standard_normal((2, 6, 16))
    x_tensor = mg.tensor(x, dtype="float64", requires_grad=True)
    w_tensors = {name: mg.tensor(a, dtype="float64", requires_grad=True) for name, a in w.items()}
    got = expect_tensor(post_ln_block(x_tensor, w_tensors, 4), "结果")
    compare(got, block_np(x, w, 4), "输出", suspects=[
        (block_np(x, w, 4, post=False),
         "这是 Pre-LN 的写法：Post-LN 先把子层的输出加回 x，再做 LayerNorm，x = LN(x + f(x))"),
        (block_np(x, w, 4, residual=False), "忘了残差连接：LayerNorm 里面应是 x + f(x)，不只是 f(x)"),
        (block_np(x, w, 4, causal=False), "注意力没有因果遮罩：位置 i 不应看见 j > i 的位置"),
        (block_np(x, w, 4, approximate=True), "GELU 应是精确式 x·Φ(x)（F.gelu 的默认值），不是 tanh 近似"),
    ])
    # The gradients, against minigpt's own Post-LN Block on the same weights (tests hold it equal to block_np).
    block = block.to(dtype=np.float64)
    block.load_state_dict(w)
    x_expected = mg.tensor(x, dtype="float64", requires_grad=True)
    upstream = rng.standard_normal(x.shape)
    block(x_expected).backward(upstream)
    got.backward(upstream)
    names = ["x", *w]
    expected = [x_expected.grad.numpy(), *(dict(block.named_parameters())[name].grad.numpy() for name in w)]
    compare_grads([x_tensor, *w_tensors.values()], names, expected)
    return "通过：和 minigpt 的 Post-LN Block 在同样的权重上算出的完全一样"


# --------------------------------------------------------------------------------------------------
# 5.7, an open task: make a 20-layer network learn

DEPTH, WIDTH = 20, 16
DEEP_STEPS, DEEP_BATCH, DEEP_LR = 400, 64, 3e-3  # the grader's training: Adam, the learner cannot change it
DEEP_SEEDS = (0, 1, 2)
DEEP_TARGET = 0.5  # mean test MSE over the seeds; predicting the mean (learning nothing) scores about 1
# Parameters allowed: the plain stack's (DEPTH Linear(W, W) layers and a Linear(W, 1) readout), plus one
# LayerNorm (2W numbers) per layer; no room for a wide shallow network on the side.
DEEP_MAX_PARAMS = DEPTH * (WIDTH * WIDTH + WIDTH) + WIDTH + 1 + DEPTH * 2 * WIDTH


def _teacher(seed: int):
    """y = Σ_k b_k cos(a_k · x), scaled to variance 1: an even function, so no straight line fits it at all."""
    rng = np.random.default_rng(1000 + seed)
    a, b = rng.standard_normal((WIDTH, 32)) / math.sqrt(WIDTH), rng.standard_normal((32, 1))
    scale = (np.cos(rng.standard_normal((4096, WIDTH)) @ a) @ b).std()
    return lambda x: np.cos(x @ a) @ b / scale


def _deep_layers_used(model, rng) -> None:
    """Wrong unless `model` has DEPTH Linear(W, W) layers, all used, within the parameter budget."""
    layers = [m for m in model.modules() if isinstance(m, nn.Linear) and m.weight.shape == (WIDTH, WIDTH)]
    if len(layers) < DEPTH:
        raise Wrong(f"网络里只有 {len(layers)} 个 nn.Linear({WIDTH}, {WIDTH})：题目要的是 {DEPTH} 层深的网络")
    n_params = sum(p.numel() for p in model.parameters())
    if n_params > DEEP_MAX_PARAMS:
        raise Wrong(f"参数有 {n_params} 个，上限是 {DEEP_MAX_PARAMS}（{DEPTH} 层 {WIDTH}×{WIDTH} 的 Linear、"
                    "读出层，再加每层一个 LayerNorm）：要让深网络学得动，不是换一个更宽的网络")
    out = model(mg.tensor(rng.standard_normal((DEEP_BATCH, WIDTH)), dtype="float32"))
    if not isinstance(out, mg.Tensor) or out.shape != (DEEP_BATCH, 1):
        raise Wrong(f"输入 ({DEEP_BATCH}, {WIDTH}) 时输出应是形状 ({DEEP_BATCH}, 1) 的 mg.Tensor，"
                    f"你的是 {getattr(out, 'shape', type(out).__name__)}")
    out.sum().backward()
    unused = sum(layer.weight.grad is None or not np.any(layer.weight.grad.numpy()) for layer in layers[:DEPTH])
    if unused:
        raise Wrong(f"有 {unused} 层 Linear 没有得到梯度：{DEPTH} 层都要用在前向里，不能只摆着")


def _deep_test_mse(deep_net, seed: int) -> float:
    """Build the learner's network under `seed`, train it as the grader does, and return its test MSE."""
    teacher, rng = _teacher(seed), np.random.default_rng(seed)
    mg.manual_seed(seed)
    model = deep_net(DEPTH, WIDTH)
    if not isinstance(model, nn.Module):
        raise Wrong(f"deep_net 应返回一个 nn.Module，你的是 {type(model).__name__}")
    _deep_layers_used(model, rng)
    optimizer = optim.Adam(model.parameters(), lr=DEEP_LR)
    for _ in range(DEEP_STEPS):
        x = rng.standard_normal((DEEP_BATCH, WIDTH))
        loss = ((model(mg.tensor(x, dtype="float32")) - mg.tensor(teacher(x), dtype="float32")) ** 2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    x = np.random.default_rng(99).standard_normal((1024, WIDTH))
    with mg.no_grad():
        return float(((model(mg.tensor(x, dtype="float32")).numpy() - teacher(x)) ** 2).mean())


def check_deep_net(deep_net) -> str:
    errors = []
    for seed in DEEP_SEEDS:
        errors.append(_deep_test_mse(deep_net, seed))
        if not np.isfinite(errors[-1]):
            raise Wrong(f"第 {seed} 个种子上训练发散了（测试误差 {errors[-1]}）：残差流越加越大？")
        if errors[-1] > 0.9:  # nothing learned: no need to train the other seeds to know
            break
    shown = "、".join(f"{e:.2f}" for e in errors)
    if np.mean(errors) > DEEP_TARGET:
        hint = ("几乎什么都没学到（误差 ≈ 1 就是只会猜平均数）：梯度穿不过 20 层——想想第 5 节的直通车道"
                if min(errors) > 0.8 else "学到了一些，还不够：看看残差和 LayerNorm 放在哪里（第 9 节）")
        raise Wrong(f"测试误差 {shown}（每个种子一个），平均要 ≤ {DEEP_TARGET}：{hint}")
    return f"通过：{DEPTH} 层的网络学得动了，{len(errors)} 个种子上的测试误差 {shown}（一条直线约为 1）"


# Counting a model's parameters with the library is the shortcut: the formula is the exercise.
COUNTERS = tuple((mg.nn.Module, name, f"Module.{name}（参数个数要你自己用公式数出来）")
                 for name in ("parameters", "named_parameters", "num_parameters", "state_dict"))

EXERCISES = [
    Exercise("5.1", "block_parameters", "一个 block 的参数个数", 2, check_block_parameters, forbids=COUNTERS),
    Exercise("5.2", "layer_norm", "LayerNorm 的前向", 1, check_layer_norm),
    Exercise("5.3", "split_heads", "把通道切成几个头", 2, check_split_heads),
    Exercise("5.4", "causal_self_attention", "合上讲义重写多头因果自注意力", 2, check_causal_self_attention, forbids=(
        (CausalSelfAttention, "forward", "minigpt 的 CausalSelfAttention"),
        (F, "scaled_dot_product_attention", "F.scaled_dot_product_attention"),
        (F, "attention_probs", "F.attention_probs"))),
    Exercise("5.5", "LayerNorm", "LayerNorm 的反向传播", 3, check_layer_norm_backward),
    Exercise("5.6", "post_ln_block", "亲手拼一个 Post-LN 的 Block", 3, check_post_ln_block),
    Exercise("5.7", "deep_net", "开放题：让 20 层的网络学得动", 3, check_deep_net, open=True),
]
