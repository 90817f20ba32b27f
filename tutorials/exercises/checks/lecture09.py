"""Checkers for lecture 09's exercises (tutorials/exercises/lecture09.py): the parts of the learner's own GPT.

Every checker tries the answer at a GPT's shapes (B, T, C with T, C and the head size all different), computes
what is expected in NumPy or with minigpt's own modules (which the checker may call; the answer may not), and
compares values and gradients. Read next: ../../09_capstone.py, which builds the learner's GPT from them.
"""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
from minigpt import GPT, GPTConfig
from minigrad import nn
from tutorials.exercises.grading import (
    Exercise,
    Wrong,
    as_array,
    backward_grads,
    compare,
    compare_grads,
    expect_tensor,
    numeric_grads,
    softmax,
)

_erf = np.vectorize(math.erf)


def _tensor(a, requires_grad=True):
    return mg.tensor(a, requires_grad=requires_grad, dtype="float64")


def check_embed(embed) -> str:
    rng = np.random.default_rng(90)
    V, block_size, C = 7, 10, 5
    wte, wpe = rng.standard_normal((V, C)), rng.standard_normal((block_size, C))
    for B, T in ((2, 6), (3, block_size)):
        idx = rng.integers(0, V, (B, T))
        idx[0, :2] = 3  # a repeated token: its row of wte gets two gradients, added
        w, p = _tensor(wte), _tensor(wpe)
        y = expect_tensor(embed(idx, w, p), "结果")
        expected = wte[idx] + wpe[:T]
        compare(y, expected, f"(B, T) = {(B, T)} 时的结果", suspects=[
            (wte[idx], "忘了加位置嵌入：同一个字符在哪个位置都一样，模型分不出先后"),
            (wte[idx] + wpe[idx], "位置嵌入应按位置 0..T−1 查（wpe[:T]），你按词元编号查了"),
            (wpe[:T] + 0 * expected, "忘了词元嵌入：只剩位置"),
        ])
        upstream = rng.standard_normal(expected.shape)
        y.backward(mg.tensor(upstream, dtype="float64"))
        g_wte = np.zeros_like(wte)
        np.add.at(g_wte, idx, upstream)
        g_wpe = np.zeros_like(wpe)
        g_wpe[:T] = upstream.sum(axis=0)
        compare_grads([w, p], ["wte", "wpe"], [g_wte, g_wpe])
    return "通过：词元嵌入查表，加上位置嵌入；重复出现的字符，梯度加在同一行上"


def _gelu(h, approximate=False):
    if approximate:
        return 0.5 * h * (1 + np.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h**3)))
    return 0.5 * h * (1 + _erf(h / math.sqrt(2)))


def _mlp(x, w1, b1, w2, b2, act=_gelu):
    return act(x @ w1.T + b1) @ w2.T + b2


def check_mlp(mlp) -> str:
    rng = np.random.default_rng(91)
    B, T, C = 2, 3, 4
    x = rng.standard_normal((B, T, C)) * 2
    w1, b1 = rng.standard_normal((4 * C, C)), rng.standard_normal(4 * C)
    w2, b2 = rng.standard_normal((C, 4 * C)) * 0.5, rng.standard_normal(C)
    arrays = [x, w1, b1, w2, b2]
    y = expect_tensor(mlp(*[_tensor(a) for a in arrays]), "结果")
    compare(y, _mlp(*arrays), "结果", suspects=[
        (_mlp(*arrays, act=lambda h: _gelu(h, approximate=True)),
         "用的是 tanh 近似的 GELU；这里要精确的 x·Φ(x)（用 erf）"),
        (_mlp(*arrays, act=lambda h: np.maximum(h, 0)), "用的是 ReLU；GPT-2 用 GELU：0.5·x·(1 + erf(x/√2))"),
        (_mlp(*arrays, act=lambda h: h), "忘了非线性：两个线性层叠起来还是一个线性层"),
        (_mlp(x, w1, 0 * b1, w2, b2), "忘了 c_fc 的偏置"),
        (_mlp(x, w1, b1, w2, 0 * b2), "忘了 c_proj 的偏置"),
    ])
    upstream = rng.standard_normal((B, T, C))
    grads = backward_grads(mlp, arrays, upstream)
    expected = numeric_grads(lambda *a: (_mlp(*a),), arrays, [upstream])
    for name, g, e in zip(["x", "c_fc_weight", "c_fc_bias", "c_proj_weight", "c_proj_bias"], grads, expected):
        compare(g, e, f"{name} 的梯度", atol=1e-5, rtol=1e-4)
    return "通过：C → 4C，GELU，4C → C；Linear 的权重是 (out, in)，所以乘的是它的转置"


class _Sublayer:
    """A stand-in sublayer: y = tanh(x @ A + c), its own for each of ln_1, attn, ln_2, mlp (none commutes)."""

    def __init__(self, rng, C):
        self.A, self.c = rng.standard_normal((C, C)) * 0.7, rng.standard_normal(C) * 0.3

    def numpy(self, x):
        return np.tanh(x @ self.A + self.c)

    def __call__(self, x):
        return (x @ mg.tensor(self.A, dtype=x.dtype) + mg.tensor(self.c, dtype=x.dtype)).tanh()


def check_block(block) -> str:
    rng = np.random.default_rng(92)
    B, T, C = 2, 3, 4
    ln_1, attn, ln_2, mlp = (_Sublayer(rng, C) for _ in range(4))
    x = rng.standard_normal((B, T, C))

    def pre(x):
        x = x + attn.numpy(ln_1.numpy(x))
        return x + mlp.numpy(ln_2.numpy(x))

    def post(x):
        x = ln_1.numpy(x + attn.numpy(x))
        return ln_2.numpy(x + mlp.numpy(x))

    def normed_residual(x):
        h = ln_1.numpy(x)
        x = h + attn.numpy(h)
        h = ln_2.numpy(x)
        return h + mlp.numpy(h)

    y = expect_tensor(block(_tensor(x), ln_1, attn, ln_2, mlp), "结果")
    compare(y, pre(x), "结果", suspects=[
        (post(x), "这是 Post-LN（LN(x + 子层(x))）；GPT-2 是 Pre-LN：x + 子层(LN(x))"),
        (normed_residual(x), "残差加的应是没归一化的 x：x + attn(ln_1(x))，不是 ln_1(x) + attn(ln_1(x))"),
        (attn.numpy(ln_1.numpy(x)) + mlp.numpy(ln_2.numpy(attn.numpy(ln_1.numpy(x)))), "忘了残差连接：要 x + ..."),
        (x + attn.numpy(ln_1.numpy(x)) + mlp.numpy(ln_2.numpy(x)),
         "MLP 应接在注意力之后：它的输入是加上注意力输出之后的 x，不是原来的 x"),
        ((lambda h: h + attn.numpy(ln_1.numpy(h)))(x + mlp.numpy(ln_2.numpy(x))), "顺序反了：先注意力，再 MLP"),
    ])
    upstream = rng.standard_normal((B, T, C))
    (g,) = backward_grads(lambda x: block(x, ln_1, attn, ln_2, mlp), [x], upstream)
    (e,) = numeric_grads(lambda x: (pre(x),), [x], [upstream])
    compare(g, e, "x 的梯度", atol=1e-5, rtol=1e-4)
    return "通过：残差流 x 一路直通，每个子层只往上面加东西——梯度也一路直通回去"


def _lm_loss(logits, targets):
    z = logits.reshape(-1, logits.shape[-1])
    z = z - z.max(axis=-1, keepdims=True)
    log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return -log_probs[np.arange(len(z)), targets.reshape(-1)]


def check_lm_loss(lm_loss) -> str:
    rng = np.random.default_rng(93)
    B, T, V = 2, 5, 7
    logits, targets = rng.standard_normal((B, T, V)) * 3, rng.integers(0, V, (B, T))
    x = _tensor(logits)
    loss = expect_tensor(lm_loss(x, targets), "损失")
    losses = _lm_loss(logits, targets)
    over_time = -np.log(softmax(logits, axis=1))[np.arange(B)[:, None], np.arange(T), targets]  # softmax over T
    if loss.shape not in ((), (1,)):
        raise Wrong(f"损失应是一个数（形状 ()），你的形状是 {loss.shape}：对 B·T 个位置取平均")
    compare(loss, losses.mean().reshape(loss.shape), "损失", suspects=[
        (losses.sum().reshape(loss.shape), "应对 B·T 个位置取平均，你求的是和"),
        (-losses.mean().reshape(loss.shape), "符号反了：损失是 −log p(答案)，是正数"),
        (_lm_loss(logits, np.roll(targets, 1, axis=-1)).mean().reshape(loss.shape), "答案错位了"),
        (_lm_loss(logits[:, :-1], targets[:, 1:]).mean().reshape(loss.shape),
         "答案又错了一位：targets 已经是 idx 往后错一位的结果（6.1 做过了），logits[:, t] 直接对 targets[:, t]"),
        (over_time.mean().reshape(loss.shape), "softmax 沿了时间那一维（T）：每个位置要在词表（最后一维 V）上归一化"),
    ])
    loss.backward()
    probs = softmax(logits.reshape(-1, V))
    probs[np.arange(B * T), targets.reshape(-1)] -= 1
    compare_grads([x], ["logits"], [probs.reshape(B, T, V) / (B * T)])
    big = np.array([[[1000.0, 0.0, -1000.0], [0.0, 2000.0, 1.0]]])
    got = lm_loss(_tensor(big), np.array([[0, 2]]))
    compare(as_array(got, "损失"), _lm_loss(big, np.array([[0, 2]])).mean(), "logits 含 ±1000 时的损失", suspects=[
        (np.nan, "logits 很大时出现了 nan 或 inf：先减去每行的最大值再 exp（log-softmax 的稳定写法）"),
    ])
    return "通过：−log softmax(logits)[答案]，对所有位置取平均；梯度是 (softmax − one-hot) / (B·T)"


def _lr(step, max_lr, warmup, decay, min_lr, plus_one=True, floor=True, cosine=True):
    if step < warmup:
        return max_lr * (step + 1) / (warmup + 1) if plus_one else max_lr * step / warmup
    if step > decay:
        return min_lr if floor else 0.0
    ratio = (step - warmup) / (decay - warmup)
    if not cosine:
        return max_lr + ratio * (min_lr - max_lr)
    return (min_lr if floor else 0.0) + 0.5 * (1 + math.cos(math.pi * ratio)) * (max_lr - (min_lr if floor else 0.0))


def check_lr_at(lr_at) -> str:
    for max_lr, warmup, decay, min_lr in ((3e-3, 10, 100, 3e-4), (1e-3, 50, 2000, 1e-4)):
        steps = list(range(0, warmup + 3)) + list(range(warmup, decay + 20, max(1, decay // 37)))
        got = np.array([lr_at(s, max_lr, warmup, decay, min_lr) for s in steps], dtype=np.float64)

        def curve(steps=steps, max_lr=max_lr, warmup=warmup, decay=decay, min_lr=min_lr, **kw):
            return [_lr(s, max_lr, warmup, decay, min_lr, **kw) for s in steps]

        compare(got, curve(), f"warmup = {warmup}、decay = {decay} 时各步的学习率", atol=1e-12, rtol=1e-9, suspects=[
            (curve(plus_one=False),
             "预热用的是 step / warmup：第 0 步学习率是 0，这一步白走了；用 (step + 1) / (warmup + 1)"),
            (curve(floor=False), "余弦应降到 min_lr，不是 0：lr = min_lr + ½(1 + cos πr)(max_lr − min_lr)"),
            (curve(cosine=False), "这是直线下降；要的是余弦：lr = min_lr + ½(1 + cos πr)(max_lr − min_lr)"),
        ])
    return "通过：先线性预热，再余弦退火到 min_lr；学习率只取决于步数，断点续训也走同一条曲线"


def _adamw(p, g, m, v, t, lr, betas, eps, wd, correct=True, decoupled=True, eps_inside=False):
    b1, b2 = betas
    if decoupled:
        p = p * (1 - lr * wd)
    else:
        g = g + wd * p
    m = b1 * m + (1 - b1) * g
    v = b2 * v + (1 - b2) * g * g
    m_hat, v_hat = (m / (1 - b1**t), v / (1 - b2**t)) if correct else (m, v)
    step = m_hat / (np.sqrt(v_hat + eps) if eps_inside else np.sqrt(v_hat) + eps)
    return p - lr * step, m, v


def check_adamw_update(adamw_update) -> str:
    rng = np.random.default_rng(94)
    shape, lr, betas, eps, wd = (3, 4), 1e-2, (0.9, 0.99), 1e-8, 0.1
    p0 = rng.standard_normal(shape)
    arrays = {"p": p0.copy(), "m": np.zeros(shape), "v": np.zeros(shape)}
    mine = {"p": p0.copy(), "m": np.zeros(shape), "v": np.zeros(shape)}
    variants = {name: (p0.copy(), np.zeros(shape), np.zeros(shape)) for name in ("correct", "decoupled", "eps")}
    for t in (1, 2, 3):
        g = rng.standard_normal(shape)
        result = adamw_update(arrays["p"], g.copy(), arrays["m"], arrays["v"], t, lr, betas, eps, wd)
        mine["p"], mine["m"], mine["v"] = _adamw(mine["p"], g, mine["m"], mine["v"], t, lr, betas, eps, wd)
        for name, (p, m, v) in variants.items():
            variants[name] = _adamw(p, g, m, v, t, lr, betas, eps, wd, **{name if name != "eps" else "eps_inside":
                                                                          name == "eps"})
        if result is not None and np.allclose(as_array(result if not isinstance(result, tuple) else result[0], "p"),
                                              mine["p"]) and not np.allclose(arrays["p"], mine["p"]):
            raise Wrong("要就地更新 p、m、v（p -= ...、m *= ...），调用者手里的数组才会变；你返回了新数组")
        compare(arrays["p"], mine["p"], f"第 {t} 步之后的 p", atol=1e-10, rtol=1e-8, suspects=[
            (variants["correct"][0], "少了偏差修正：m、v 从 0 开始，要除以 1 − β₁ᵗ 和 1 − β₂ᵗ"),
            (variants["decoupled"][0], "这是 Adam 的 L2 正则（把 wd·p 加进梯度）；AdamW 是解耦的：p ← p·(1 − lr·wd)"),
            (variants["eps"][0], "eps 应加在 √v̂ 之外：m̂ / (√v̂ + eps)"),
        ])
        compare(arrays["m"], mine["m"], f"第 {t} 步之后的 m", atol=1e-12, rtol=1e-9)
        compare(arrays["v"], mine["v"], f"第 {t} 步之后的 v", atol=1e-12, rtol=1e-9)
    return "通过：和 PyTorch 的 AdamW 一样——解耦的权重衰减、两个动量、偏差修正"


def _tiny_gpt(seed=5) -> GPT:
    mg.manual_seed(seed)
    model = GPT(GPTConfig(vocab_size=11, block_size=8, n_layer=1, n_head=2, n_embd=12))
    model.unused = nn.Parameter(mg.ones(2, 3))  # takes no part in the loss: no gradient, and left alone
    return model


# The classic mistakes of a training step, each a variant of the checker's own loop (`_losses`): what it is called
# there, and how the learner is told.
STEP_MISTAKES = {
    "no_clip": "更新用的是没裁剪的梯度：先算所有梯度合起来的范数，超过 grad_clip 就整体缩小，再更新"
               "（没有裁剪，或者把裁剪放在了更新之后？）",
    "no_min": "裁剪少了 min(1, ·)：梯度范数小于 grad_clip 时不该动它，你的把小梯度也放大到了 grad_clip",
    "per_param": "每个参数各自裁剪了；要的是所有梯度合起来的一个范数、一个缩放系数：norm = √(Σ 所有 g²)",
    "l2": "权重衰减加进了梯度（L2 正则）：AdamW 的衰减是解耦的，由 adamw_update 直接 p ← p·(1 − lr·wd)，不经过 m、v",
    "decay_all": "只有矩阵（ndim ≥ 2）做权重衰减；偏置和 LayerNorm 的 γ、β 不衰减",
    "accumulate": "梯度会累加：backward 之前先把每个参数的 .grad 清掉（p.grad = None）",
    "t_fixed": "步数 t 没有往前走：每一步都要 t += 1（存在 state 里），偏差修正 1 − βᵗ 才会随步数变化",
}


def _losses(batches, lrs, clips, wd, mistake=None):
    """The checker's own loop on a fresh tiny GPT (minigpt's, whose forward and backward the checker may use):
    the loss of each step, and the model after the last. `mistake` (a key of STEP_MISTAKES) makes it a wrong one."""
    model = _tiny_gpt()
    named = list(model.named_parameters())
    moments: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    losses = []
    for t, ((x, y), lr, clip) in enumerate(zip(batches, lrs, clips), 1):
        _, loss = model(x, y)
        if mistake != "accumulate":
            for _, p in named:
                p.grad = None
        loss.backward()
        live = [(name, p, p.grad.numpy().astype(np.float64)) for name, p in named if p.grad is not None]
        norm = math.sqrt(sum(float((g * g).sum()) for _, _, g in live))
        for name, p, g in live:
            own = math.sqrt(float((g * g).sum()))
            scale = {"no_clip": 1.0, "no_min": clip / (norm + 1e-6),
                     "per_param": min(1.0, clip / (own + 1e-6))}.get(mistake, min(1.0, clip / (norm + 1e-6)))
            decay = wd if p.ndim >= 2 or mistake == "decay_all" else 0.0
            g = g * scale + (decay * p.numpy() if mistake == "l2" else 0.0)
            m, v = moments.get(name, (np.zeros(p.shape), np.zeros(p.shape)))
            new_p, m, v = _adamw(p.numpy().astype(np.float64), g, m, v, 1 if mistake == "t_fixed" else t, lr,
                                 (0.9, 0.99), 1e-8, 0.0 if mistake == "l2" else decay)
            moments[name] = (m, v)
            p.array[...] = new_p
        losses.append(loss.item())
    return losses, model


def check_train_step(train_step) -> str:
    rng = np.random.default_rng(95)
    batches = [(rng.integers(0, 11, (3, 8)), rng.integers(0, 11, (3, 8))) for _ in range(6)]
    # some steps clip (grad_clip below the gradients' norm), some do not (far above it): both halves of min(1, ·)
    lrs, clips, wd = [1e-2, 2e-2, 2e-2, 1e-2, 1e-2, 5e-3], [0.5, 0.5, 50.0, 0.5, 50.0, 50.0], 0.1
    expected, reference = _losses(batches, lrs, clips, wd)
    model, state = _tiny_gpt(), {}
    got = []
    for (x, y), lr, clip in zip(batches, lrs, clips):
        loss = train_step(model, x, y, state, lr, grad_clip=clip, weight_decay=wd)
        if isinstance(loss, mg.Tensor) or not isinstance(loss, (float, np.floating)):
            raise Wrong("train_step 应返回这一步的损失，一个 Python float（loss.item()），"
                        f"你的是 {type(loss).__name__}")
        got.append(float(loss))
    mistakes = {}  # the wrong loops, run only when the answer's numbers differ from the right one's

    def wrong_loops():
        if not mistakes:
            mistakes.update({name: _losses(batches, lrs, clips, wd, name) for name in STEP_MISTAKES})
        return mistakes

    if not np.allclose(got, expected, atol=1e-5, rtol=1e-4):
        compare(got, expected, "每一步的损失", atol=1e-5, rtol=1e-4,
                suspects=[(losses, STEP_MISTAKES[name]) for name, (losses, _) in wrong_loops().items()])
    if model.unused.grad is not None or not np.array_equal(model.unused.numpy(), np.ones((2, 3))):
        raise Wrong("没有梯度的参数（没参与算损失）应原样留着：跳过 .grad 是 None 的参数，也不对它做权重衰减")
    missing = [name for name, p in model.named_parameters() if p.grad is None and name != "unused"]
    if missing:
        raise Wrong(f"这一步之后 {missing[0]} 的 .grad 是 None：应在 backward 之前清梯度，之后留着这一步的梯度")
    for (name, p), q in zip(model.named_parameters(), reference.parameters()):
        # atol: lr/100. Where a gradient is ~0, Adam's m/√v is a ratio of two roundings (float32)
        if not np.allclose(p.numpy(), q.numpy(), atol=2e-4, rtol=1e-3):
            compare(p.numpy(), q.numpy(), f"{len(batches)} 步之后的参数 {name}", atol=2e-4, rtol=1e-3,
                    suspects=[(dict(m.named_parameters())[name].numpy(), STEP_MISTAKES[k])
                              for k, (_, m) in wrong_loops().items()])
    return "通过：前向、反向、裁剪、AdamW——和 minigpt 的训练循环一步一步走出同样的损失"


EXERCISES = [
    Exercise("9.1", "embed", "词元嵌入加位置嵌入", 1, check_embed),
    Exercise("9.2", "mlp", "MLP：C → 4C → C", 2, check_mlp),
    Exercise("9.3", "block", "Pre-LN 的 Block：残差连接", 2, check_block),
    Exercise("9.4", "lm_loss", "语言模型的损失", 2, check_lm_loss),
    Exercise("9.5", "lr_at", "预热加余弦的学习率", 1, check_lr_at),
    Exercise("9.6", "adamw_update", "AdamW 的一步", 3, check_adamw_update),
    Exercise("9.7", "train_step", "训练的一步：前向、反向、裁剪、更新", 3, check_train_step),
]
