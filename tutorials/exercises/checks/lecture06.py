"""Checkers for lecture 06's exercises (tutorials/exercises/lecture06.py): batches, sampling, the KV cache.

The sampling checkers draw a few thousand tokens and compare the frequencies with the distribution that
minigpt.sampling would draw from. Read next: lecture07.py.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np

import minigrad as mg
from minigpt import GPT, GPTConfig
from minigpt.sampling import top_k_filter, top_p_filter
from minigrad import optim
from tutorials.exercises.grading import (
    DEV_PLACE,
    FINAL_NOTE,
    Exercise,
    Wrong,
    as_array,
    better_by,
    compare,
    compare_number,
    number,
    softmax,
)
from tutorials.yardstick import Score, Yardstick, load

LOGITS = np.array([0.5, 2.0, -1.5, 1.0, 0.0, -0.5])  # not sorted: the learner's code must sort
STABLE_HINT = "出现了 nan：exp 溢出了；softmax 之前先减去最大的 logit（softmax(x − c) = softmax(x)）"


def check_make_batch(make_batch) -> str:
    data = np.arange(100, 140)
    starts, T = np.array([0, 7, 30]), 5
    result = make_batch(data, starts, T)
    if not isinstance(result, tuple) or len(result) != 2:
        raise Wrong("应返回两个数组组成的元组 (x, y)")
    x, y = result
    expected_x = np.stack([data[s : s + T] for s in starts])
    expected_y = expected_x + 1  # data[i] = 100 + i, so the next token is one more
    compare(x, expected_x, "x", suspects=[(expected_y, "x 和 y 反了：x 从 data[s] 开始，y 从 data[s + 1] 开始")])
    compare(y, expected_y, "y", suspects=[
        (expected_x, "y 应比 x 往后错一位：y[t] 是 x[t] 之后的那个词元"),
        (expected_x - 1, "错位的方向反了：y 从 data[s + 1] 开始，不是 data[s − 1]"),
        (expected_x + 2, "错了两位：y 从 data[s + 1] 开始，只往后错一位（模型里的损失不会再错一次）"),
    ])
    return f"通过：一批 {len(starts)} 段、每段 {T} 个词元，就是 {len(starts) * T} 道“猜下一个”的题"


def check_first_order_decrease(first_order_decrease) -> str:
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal((3, 4)), rng.standard_normal(5), rng.standard_normal((2, 2, 2))]
    lr = 0.01
    squared = sum(float((g**2).sum()) for g in grads)
    compare_number(first_order_decrease(lr, [g.copy() for g in grads]), lr * squared, "预计的下降量", suspects=[
        (lr * math.sqrt(squared), "应是梯度范数的平方：ΔL ≈ g·Δθ = g·(lr·g) = lr·‖g‖²"),
        (squared, "漏了学习率：每个参数只走了 lr·g 那么远"),
        (lr * sum(float(np.sqrt((g**2).sum())) for g in grads),
         "要先把所有参数的梯度平方加起来：lr·Σ‖g‖²，不是各个范数之和"),
        (-lr * squared, "问的是下降量（正数）：损失变化是 −lr·‖g‖²，下降了 lr·‖g‖²"),
    ])
    return "通过：学习率小时，这个直线估计和真实的下降量对得上（讲义第 1 节）"


def _top_k(logits, k):
    return softmax(top_k_filter(logits[None].astype(np.float64), k))[0]


def _top_p(logits, p):
    return softmax(top_p_filter(logits[None].astype(np.float64), p))[0]


def check_top_k_probs(top_k_probs) -> str:
    for k in (3, 1, 10):
        expected = _top_k(LOGITS, k)
        kept = expected > 0
        smallest = np.zeros_like(expected)
        smallest[np.argsort(LOGITS)[:k]] = softmax(LOGITS[np.argsort(LOGITS)[:k]])
        compare(top_k_probs(LOGITS.copy(), k), expected, f"k = {k} 时的概率", suspects=[
            (softmax(LOGITS) * kept, "留下的 k 个概率要重新归一化，让它们加起来等于 1"),
            (smallest, "留下的应是 logits 最大的 k 个，你的是最小的 k 个"),
            (_top_k(LOGITS, k + 1), f"应留下 k = {k} 个候选，你留下了 {k + 1} 个"),
            (_top_k(LOGITS, max(k - 1, 1)), f"应留下 k = {k} 个候选，你少留了一个"),
        ])
    big = LOGITS * 400  # logits in the hundreds: exp overflows unless the largest is taken out first
    compare(top_k_probs(big.copy(), 3), _top_k(big, 3), "logits 上百时 k = 3 的概率", suspects=[
        (np.full(len(big), np.nan), STABLE_HINT)])
    return "通过：不管分布尖还是平，top-k 总留 k 个"


def check_top_p_probs(top_p_probs) -> str:
    probs = np.array([0.2, 0.4, 0.1, 0.3])  # sorted: 0.4, 0.3, 0.2, 0.1
    logits = np.log(probs)
    for p, kept in ((0.6, [1, 3]), (0.75, [1, 3, 0]), (0.05, [1]), (1.0, [0, 1, 2, 3])):
        expected = _top_p(logits, p)
        mask = np.zeros(4, dtype=bool)
        mask[kept] = True
        order = np.argsort(-probs)
        inside = order[np.cumsum(probs[order]) <= p + 1e-12]
        strict = np.zeros(4)
        strict[inside] = probs[inside] / probs[inside].sum() if len(inside) else 0
        first_ones = np.zeros(4)
        head = np.cumsum(probs) - probs < p  # in vocabulary order, without sorting
        first_ones[head] = probs[head] / probs[head].sum()
        compare(top_p_probs(logits.copy(), p), expected, f"p = {p} 时的概率", suspects=[
            (strict, "跨过 p 的那个候选也要留下：保留到累计概率第一次 ≥ p 为止（最可能的那个总会留下）"),
            (probs * mask, "留下的概率要重新归一化，让它们加起来等于 1"),
            (first_ones, "要先按概率从大到小排序，再累加"),
        ])
    # Exactly on the boundary: probabilities 1/2, 1/4, 1/8, 1/8 add up without rounding, and the mass before
    # the third candidate is exactly p = 0.75. The nucleus is already full: the third one must go.
    boundary = np.log(np.array([0.125, 0.5, 0.125, 0.25]))
    compare(top_p_probs(boundary.copy(), 0.75), _top_p(boundary, 0.75), "概率 1/2、1/4、1/8、1/8、p = 0.75 时",
            suspects=[(np.array([1 / 7, 4 / 7, 0, 2 / 7]), "前面累计的概率恰好等于 p 时，核已经够了："
                                                           "保留条件是“前面的累计 < p”，不是 ≤ p"),
                      (np.array([0, 4 / 7, 1 / 7, 2 / 7]), "前面累计的概率恰好等于 p 时，核已经够了："
                                                           "保留条件是“前面的累计 < p”，不是 ≤ p")])
    big = LOGITS * 400
    compare(top_p_probs(big.copy(), 0.9), _top_p(big, 0.9), "logits 上百时 p = 0.9 的概率", suspects=[
        (np.full(len(big), np.nan), STABLE_HINT)])
    return "通过：分布尖时 top-p 只留一两个，分布平时留一大把"


def _frequencies(sample_next, logits, settings, draws, seed):
    rng = np.random.default_rng(seed)
    counts = np.zeros(len(logits))
    for _ in range(draws):
        token = sample_next(logits.copy(), rng, **settings)
        is_index = isinstance(token, (int, np.integer)) and not isinstance(token, (bool, np.bool_))
        if not is_index or not 0 <= token < len(logits):
            raise Wrong(f"应返回一个候选的下标（0 到 {len(logits) - 1} 的整数），你返回的是 {token!r}")
        counts[token] += 1
    return counts / draws


def _filtered(settings, top_p_first=False, temperature_last=False):
    """The distribution sample_next must draw from; the keywords give two typical mistakes' distributions."""
    t = settings.get("temperature", 1.0)
    logits = LOGITS[None] if temperature_last else LOGITS[None] / t
    steps = [(top_k_filter, settings.get("top_k")), (top_p_filter, settings.get("top_p"))]
    for keep, value in steps[::-1] if top_p_first else steps:
        if value is not None:
            logits = keep(logits, value)
    return softmax(logits / t if temperature_last else logits)[0]


def check_sample_next(sample_next) -> str:
    for logits in (LOGITS, LOGITS[::-1].copy()):
        got = sample_next(logits.copy(), np.random.default_rng(0), temperature=0.0)
        if got != int(np.argmax(logits)):
            raise Wrong(f"temperature = 0 时应直接返回最大的那个（第 {int(np.argmax(logits))} 个），你的是 {got}")
    draws, tolerance = 1500, 0.06  # the standard error of a frequency is at most 0.013 here: 4.6 of them
    # The last two tell the order apart: top-k, then top-p on what is left, and temperature before both.
    settings_list = [dict(temperature=1.0), dict(temperature=0.5), dict(temperature=2.0), dict(top_k=3),
                     dict(top_p=0.8), dict(temperature=0.7, top_k=4, top_p=0.9), dict(top_k=3, top_p=0.75),
                     dict(temperature=2.0, top_p=0.7)]
    for seed, settings in enumerate(settings_list):
        t = settings.get("temperature", 1.0)
        expected = _filtered(settings)
        freq = _frequencies(sample_next, LOGITS, settings, draws, seed)
        shown = ", ".join(f"{k}={v}" for k, v in settings.items())
        banned = np.flatnonzero((expected == 0) & (freq > 0))
        if not len(banned) and np.abs(freq - expected).max() <= tolerance:
            continue
        mistakes = [(softmax(LOGITS * t) if t != 1 else expected, "logits 应除以温度，不是乘以温度"),
                    (np.eye(len(LOGITS))[np.argmax(LOGITS)],
                     "每次都选了最可能的那个：要按概率随机抽（例如 rng.choice(V, p=probs)）"),
                    (softmax(LOGITS), "温度 / top-k / top-p 没有起作用：采样前要先调整分布"),
                    (np.full(len(LOGITS), 1 / len(LOGITS)), "每个候选抽到的次数差不多：要按概率抽，而不是均匀地抽"),
                    (_filtered(settings, top_p_first=True), "先做 top-k，再在留下的候选里做 top-p（顺序反了）"),
                    (_filtered(settings, temperature_last=True), "要先除以温度，再做 top-k / top-p 筛选")]
        for alternative, hint in mistakes:  # a mistake that draws from the same distribution here is not named
            if np.abs(alternative - expected).max() > tolerance >= np.abs(freq - alternative).max():
                raise Wrong(f"{shown}：{hint}")
        if len(banned):
            raise Wrong(f"{shown}：抽到了第 {banned[0]} 个候选，它已被筛掉，概率应为 0")
        worst = int(np.argmax(np.abs(freq - expected)))
        raise Wrong(f"{shown}：第 {worst} 个候选的频率应约为 {number(expected[worst], 3)}，你抽了 {draws} 次，"
                    f"频率是 {number(freq[worst], 3)}")
    cold = sample_next(LOGITS.copy(), np.random.default_rng(0), temperature=0.002)  # logits / T in the hundreds
    if cold != int(np.argmax(LOGITS)):
        raise Wrong(f"temperature = 0.002 时几乎只会抽到最大的那个（第 {int(np.argmax(LOGITS))} 个），你的是 {cold}")
    return f"通过：{len(settings_list)} 种设置下各抽 {draws} 次，频率都符合应有的分布"


def check_cached_attention_step(cached_attention_step) -> str:
    rng = np.random.default_rng(1)
    T, d, prefix = 7, 4, 2
    q, k, v = (rng.standard_normal((T, d)) for _ in range(3))

    def causal_rows(scale=None, see_self=True, only_self=False):
        scores = q @ k.T / (math.sqrt(d) if scale is None else scale)
        scores = np.where(np.triu(np.ones((T, T), dtype=bool), k=0 if not see_self else 1), -np.inf, scores)
        if only_self:
            return v[prefix:]
        return (softmax(scores) @ v)[prefix:]

    cache = {"k": list(k[:prefix]), "v": list(v[:prefix])}  # as if the prompt had been run already
    outputs = []
    for t in range(prefix, T):
        outputs.append(as_array(cached_attention_step(q[t], k[t], v[t], cache), f"第 {t} 步的输出"))
    stale = np.stack([softmax(np.concatenate([k[:prefix], k[t:t + 1]]) @ q[t] / math.sqrt(d))
                      @ np.concatenate([v[:prefix], v[t:t + 1]]) for t in range(prefix, T)])
    compare(np.stack(outputs), causal_rows(), f"第 {prefix}..{T - 1} 步的输出", suspects=[
        (causal_rows(see_self=False), "新词元的 query 也要看见自己：先把新的 k、v 追加进缓存，再算注意力"),
        (causal_rows(scale=1.0), f"少了除以 √d（这里 d = {d}）"),
        (causal_rows(only_self=True), "只看了新词元自己：要对缓存里所有的 key 做注意力"),
        (stale, "新的 k、v 没有留在缓存里：下一步的词元要能看见这一步的词元"),
    ])
    if len(cache["k"]) != T or len(cache["v"]) != T:
        raise Wrong(f"{T} 步之后缓存里应有 {T} 个 key 和 value，你的是 {len(cache['k'])} 个和 {len(cache['v'])} 个")
    sharp = q[prefix] * 2000  # scores in the thousands: exp overflows unless the largest score is taken out first
    cache = {"k": list(k[:prefix]), "v": list(v[:prefix])}
    weights = softmax(np.stack(list(k[:prefix + 1])) @ sharp / math.sqrt(d))
    compare(cached_attention_step(sharp, k[prefix], v[prefix], cache), weights @ v[:prefix + 1],
            "query 很大（分数上千）时的输出", suspects=[(np.full(d, np.nan), STABLE_HINT)])
    return "通过：逐个词元用缓存算出的输出，和每步重算整段完全一样，而每步只算一个新位置"


# --------------------------------------------------------------------------------------------------
# 6.7, an open task: a learning-rate schedule for a budget of 200 steps

SCHEDULE_STEPS, SCHEDULE_SEEDS = 200, (0, 1)
SCHEDULE_BATCH, SCHEDULE_SEQ = 16, 64
SCHEDULE_TARGET = 0.06  # nats per character better than the lecture's schedule, mean of the seeds (dev, yardstick)
SCHEDULE_MAX_LR = 0.1


def lecture_schedule(step: int, total_steps: int) -> float:
    """Section 4's schedule, made for 400-800 steps: 50 steps of warmup to 2e-3, then a cosine down to 2e-4."""
    return optim.cosine_with_warmup(step, 2e-3, 50, total_steps, 2e-4)


@cache
def _schedule_run(lrs: tuple[float, ...], seed: int) -> tuple[Score, Score]:
    """Train the small GPT with these learning rates (one per step) on the training text less the development
    split, and score it there and on the yardstick: (development, yardstick). Cached, so that the lecture's
    schedule is trained once per process, and an answer equal to it costs nothing."""
    ys = _yardstick()
    dev = ys.development()
    mg.manual_seed(seed)
    model = GPT(GPTConfig(vocab_size=ys.vocab_size, block_size=SCHEDULE_SEQ, n_layer=2, n_head=4, n_embd=32))
    optimizer = optim.AdamW(model.parameters(), lr=lrs[0], betas=(0.9, 0.99), weight_decay=0.0)
    rng = np.random.default_rng(seed)  # the same batches for every schedule: only the learning rates differ
    offsets = np.arange(SCHEDULE_SEQ)
    for lr in lrs:
        optim.set_lr(optimizer, lr)
        starts = rng.integers(0, len(dev.train) - SCHEDULE_SEQ - 1, SCHEDULE_BATCH)
        _, loss = model(dev.train[starts[:, None] + offsets], dev.train[starts[:, None] + offsets + 1])
        optimizer.zero_grad()
        loss.backward()
        mg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
    model.eval()
    return dev.score_logits(model), ys.score_logits(model)


@cache
def _yardstick() -> Yardstick:
    return load()


def _schedule_verdict(lr_schedule, final: bool) -> str:
    """Train with the learner's schedule and the lecture's on each seed; compare on the dev split or the yardstick."""
    lrs = []
    for step in range(SCHEDULE_STEPS):
        lr = lr_schedule(step, SCHEDULE_STEPS)
        if isinstance(lr, bool) or not isinstance(lr, (int, float, np.floating)) or not 0 <= lr <= SCHEDULE_MAX_LR:
            raise Wrong(f"第 {step} 步的学习率应是 0 到 {SCHEDULE_MAX_LR} 之间的数，你的是 {lr!r}")
        lrs.append(float(lr))
    baseline = tuple(lecture_schedule(step, SCHEDULE_STEPS) for step in range(SCHEDULE_STEPS))
    gains = []
    for seed in SCHEDULE_SEEDS:
        gain, _ = _schedule_run(baseline, seed)[final].gap(_schedule_run(tuple(lrs), seed)[final])
        gains.append(gain)
        if not np.isfinite(gain):
            raise Wrong(f"第 {seed} 个种子上训练发散了：学习率最大到 {max(lrs):.3g}，太大了")
        if gain <= 0:  # already worse than the lecture's on one seed: no need to train the other to know
            break
    shown = "、".join(better_by(g) for g in gains)
    verdict = (f"{len(gains)} 个种子上，{'尺子' if final else DEV_PLACE}上比讲义的学习率表逐窗口{shown} "
               f"纳特/字符（平均{better_by(float(np.mean(gains)))}）")
    if np.mean(gains) < SCHEDULE_TARGET or min(gains) <= 0:
        if max(lrs) > 0.01:
            hint = f"学习率最大到 {max(lrs):.3g}：这个小模型受不了这么大的步子，训练不稳"
        elif np.mean(lrs) < 2.5e-3:
            hint = (f"整个预算里的平均学习率只有 {np.mean(lrs):.2g}：只有 {SCHEDULE_STEPS} 步，长长的预热和"
                    "早早开始的衰减占掉了大半预算")
        else:
            hint = "预热短一些、衰减晚一些，或者峰值换一个试试"
        raise Wrong(f"{verdict}；目标是平均好 {SCHEDULE_TARGET} 以上：{hint}")
    return f"{verdict}（目标 {SCHEDULE_TARGET}）"


def check_lr_schedule(lr_schedule) -> str:
    """Graded on the development split (the training text's last tenth, never trained on)."""
    return f"通过：{_schedule_verdict(lr_schedule, final=False)}。{FINAL_NOTE.format(number='6.7')}"


def final_lr_schedule(lr_schedule) -> str:
    """Graded once on the yardstick (`check --final 6.7`), with the same trained models."""
    return f"通过：{_schedule_verdict(lr_schedule, final=True)}"


EXERCISES = [
    Exercise("6.1", "make_batch", "一批训练数据", 1, check_make_batch),
    Exercise("6.2", "first_order_decrease", "一步梯度下降的一阶估计", 2, check_first_order_decrease),
    Exercise("6.3", "top_k_probs", "top-k", 2, check_top_k_probs),
    Exercise("6.4", "top_p_probs", "top-p（nucleus）", 2, check_top_p_probs),
    Exercise("6.5", "sample_next", "按温度、top-k、top-p 采样", 2, check_sample_next),
    Exercise("6.6", "cached_attention_step", "KV 缓存的一步", 3, check_cached_attention_step),
    Exercise("6.7", "lr_schedule", "开放题：200 步的学习率表", 3, check_lr_schedule, open=True,
             final=final_lr_schedule),
]
