"""Checkers for lecture 03's exercises (tutorials/exercises/lecture03.py): softmax and attention.

Expected values are computed in NumPy here, so no checker depends on the details of a minigrad op.
Read next: lecture04.py.
"""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim
from tutorials.exercises.grading import (
    Exercise,
    Wrong,
    compare,
    compare_number,
    expect_gradcheck,
    expect_tensor,
    function_backward,
    softmax,
)

TRANSPOSE_HINT = "分数是每个 query 与每个 key 的点积 q @ kᵀ（用 k.swapaxes(-1, -2) 交换 k 的最后两维）"


def _tensor(a, requires_grad=False):
    return mg.tensor(a, requires_grad=requires_grad, dtype="float64")


def check_softmax(answer) -> str:
    try:
        return _check_softmax(answer)
    except TypeError as error:  # minigrad's own words, in English: say it in one Chinese line
        if "named tuple" not in str(error):
            raise
        raise Wrong("x.max(dim=...) 和 PyTorch 一样返回具名元组 (values, indices)，不能直接拿来相减："
                    "用 x.max(dim=-1, keepdim=True).values，或 x.amax(dim=-1, keepdim=True)") from error


def _check_softmax(answer) -> str:
    x = np.random.default_rng(0).standard_normal((2, 3, 5)) * 3
    compare(expect_tensor(answer(_tensor(x)), "softmax 的结果"), softmax(x), "softmax(x)", suspects=[
        (softmax(x, axis=0), "应沿最后一维（每一行）归一化，你的是沿第 0 维"),
        (softmax(x, axis=1), "应沿最后一维（每一行）归一化，你的是沿第 1 维"),
        (np.exp(x), "忘了除以每行的和：softmax 的每一行加起来应等于 1"),
    ])
    big = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    with np.errstate(over="ignore", invalid="ignore"):
        naive = np.exp(big) / np.exp(big).sum(axis=-1, keepdims=True)  # what the unshifted formula gives
    compare(answer(_tensor(big)), softmax(big), "输入含 ±1000 时的 softmax", suspects=[
        (naive, "输入很大时出现了 nan：exp(1000) 溢出成 inf；先减去每行的最大值（softmax(x − c) = softmax(x)）"),
    ])
    apart = np.array([[0.0, 1.0, 2.0], [2000.0, 2001.0, 2002.0]])  # two rows 2000 apart
    global_max = np.full_like(apart, np.nan)
    global_max[1] = softmax(apart[1])  # x − max(x) over the whole array: row 0 underflows to 0/0
    compare(answer(_tensor(apart)), softmax(apart), "两行相差 2000 时的 softmax", suspects=[
        (global_max, "要减去的是每一行自己的最大值（max(dim=-1, keepdim=True)），不是整个数组的最大值："
                     "另一行的数小了 2000，exp 下溢成 0，得 0/0 = nan"),
    ])
    expect_gradcheck(answer, [x[0, :2]], "softmax")
    return "通过：减去最大值不改变结果，却让 exp 永远不会溢出"


def check_softmax_backward(Softmax) -> str:
    rng = np.random.default_rng(1)
    x, gy = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    y = softmax(x)
    (gx,) = function_backward(Softmax, [x], gy)
    big = np.array([[1000.0, 1001.0, 1002.0], [-1000.0, 0.0, 1000.0]])
    compare(Softmax().forward(big.copy()), softmax(big), "forward 在输入含 ±1000 时的输出", suspects=[
        (np.full_like(big, np.nan), "forward 在输入很大时出现了 nan：先减去每行的最大值，exp 才不会溢出"),
    ])
    compare(gx, y * (gy - (gy * y).sum(axis=-1, keepdims=True)), "x 的梯度", suspects=[
        (gy * y * (1 - y),
         "只用了雅可比的对角线 y_i(1 − y_i)：每个输出都依赖整行输入，还要减去 y·Σ(gy·y) 里的非对角项"),
        (y * (gy - (gy * y).sum(axis=0, keepdims=True)), "Σ gy·y 应沿 softmax 的那一维（最后一维）求和"),
        (y * (gy - gy.sum(axis=-1, keepdims=True)), "求和的那一项是 Σ gy_i·y_i（加权和），不是 Σ gy_i"),
        (gy * y, "只剩 gy·y：还要减去 y·Σ(gy·y)，因为 y 的分母里有所有的 x"),
    ])
    expect_gradcheck(lambda x: Softmax.apply(x), [x], "Softmax")
    x, gy = rng.standard_normal((2, 3, 5)), rng.standard_normal((2, 3, 5))  # attention's scores: more than 2-D
    y = softmax(x)
    (gx,) = function_backward(Softmax, [x], gy)
    compare(gx, y * (gy - (gy * y).sum(axis=-1, keepdims=True)), "三维输入上 x 的梯度", suspects=[
        (softmax(x, axis=1), "forward 应沿最后一维（axis=-1）：二维时 axis=1 恰好是它，三维时不是"),
        (y * (gy - (gy * y).sum(axis=1, keepdims=True)),
         "Σ gy·y 应沿最后一维（axis=-1）：二维时 axis=1 恰好是它，三维时不是"),
    ])
    return "通过：dx = y ⊙ (gy − Σ gy⊙y)，不需要构造 V×V 的雅可比矩阵"


def _attention(q, k, v, scale=None, axis=-1, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / (math.sqrt(q.shape[-1]) if scale is None else scale)
    if mask is not None:
        scores = np.where(mask, -np.inf, scores)
    return softmax(scores, axis=axis) @ v


def _call(fn, q, k, v):
    try:
        return expect_tensor(fn(_tensor(q), _tensor(k), _tensor(v)), "结果")
    except ValueError as error:  # minigrad's ShapeError: typically q @ k without the transpose
        raise Wrong(f"矩阵乘法的形状对不上（{str(error).splitlines()[0]}）：{TRANSPOSE_HINT}") from error


def check_attention(attention) -> str:
    rng = np.random.default_rng(2)
    for Tq, Tk, d, dv in ((5, 5, 8, 8), (3, 6, 8, 4)):
        q, k, v = rng.standard_normal((2, Tq, d)), rng.standard_normal((2, Tk, d)), rng.standard_normal((2, Tk, dv))
        compare(_call(attention, q, k, v), _attention(q, k, v), f"Tq = {Tq}、Tk = {Tk} 时的输出", suspects=[
            (_attention(q, k, v, scale=1.0), f"少了除以 √d（这里 d = {d}）：不缩放，分数的尺度随维度增长"),
            (_attention(q, k, v, scale=d), f"应除以 √d（= {math.sqrt(d):.3g}），你的像是除以了 d"),
            (_attention(q, k, v, axis=-2), "softmax 应沿 key 那一维（最后一维）：每个 query 的权重加起来等于 1"),
        ])
    q, k, v = (rng.standard_normal((2, 3, 4, 5)) for _ in range(3))  # heads: (B, nh, T, hs), T != hs
    compare(_call(attention, q, k, v), _attention(q, k, v), "四维 (B, nh, T, hs) 输入的输出", suspects=[
        (_attention(q, k, v, scale=2.0), "应除以 √hs（q.shape[-1] = 5），你的像是除以了 √T（q.shape[2] = 4）"),
    ])
    q, k, v = (rng.standard_normal((1, 3, 4)) for _ in range(3))
    expect_gradcheck(attention, [q, k, v], "attention")
    return "通过：和 F.scaled_dot_product_attention 算的是同一个东西"


def check_causal_attention(causal_attention) -> str:
    rng = np.random.default_rng(3)
    T, d = 6, 8
    q, k, v = (rng.standard_normal((2, T, d)) for _ in range(3))
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    scores = q @ np.swapaxes(k, -1, -2) / math.sqrt(d)
    after_softmax = (softmax(scores) * ~future) @ v
    diagonal_too = np.triu(np.ones((T, T), dtype=bool), k=0)
    compare(_call(causal_attention, q, k, v), _attention(q, k, v, mask=future), "输出", suspects=[
        (_attention(q, k, v, mask=diagonal_too),
         "第 0 行全被遮住了（softmax 得 nan）：每个位置要能看见自己，只遮对角线以上（k=1）"),
        (softmax(np.where(diagonal_too, -1e9, scores)) @ v,
         "对角线也被遮住了：每个位置要能看见自己，只遮对角线以上（k=1）"),
        (_attention(q, k, v, mask=np.tril(np.ones((T, T), dtype=bool), k=-1)),
         "遮反了：要遮的是未来（j > i，对角线以上），你遮的是过去"),
        (after_softmax, "要先遮再 softmax：在 softmax 之后清零，每行的权重加起来就不是 1 了"),
        (_attention(q, k, v, scale=1.0, mask=future), f"少了除以 √d（这里 d = {d}）"),
        (_attention(q, k, v), "没有遮住未来：位置 i 不应看见 j > i 的位置"),
    ])
    q, k, v = (rng.standard_normal((1, 4, 3)) for _ in range(3))
    expect_gradcheck(causal_attention, [q, k, v], "causal_attention")
    # At a GPT's shapes: (B, nh, T, hs) with T != hs, where shape[1], shape[2] and shape[-1] all differ
    B, nh, T, hs = 2, 3, 6, 4
    q, k, v = (rng.standard_normal((B, nh, T, hs)) for _ in range(3))
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    compare(_call(causal_attention, q, k, v), _attention(q, k, v, mask=future), "四维 (B, nh, T, hs) 输入的输出",
            suspects=[(_attention(q, k, v, scale=math.sqrt(T), mask=future),
                       f"应除以 √hs（q.shape[-1] = {hs}），你的像是除以了 √T"
                       f"（q.shape[2] = {T}：四维时它是时间那一维）"),
                      (_attention(q, k, v, scale=math.sqrt(nh), mask=future),
                       f"应除以 √hs（q.shape[-1] = {hs}），你的像是除以了 √{nh}（q.shape[1]：四维时它是头数）")])
    return "通过：改动后面的词元，前面位置的输出一点都不会变"


def check_score_std(score_std) -> str:
    for d_k in (4, 64, 1024):
        compare_number(score_std(d_k, scaled=False), math.sqrt(d_k), f"d_k = {d_k} 时 q·k 的标准差", suspects=[
            (float(d_k), f"你给的 {d_k} 是方差：d_k 个方差为 1 的独立项相加，方差是 d_k，标准差是它的平方根"),
            (1.0, "不缩放时，点积是 d_k 项之和，尺度随 d_k 增长"),
        ])
        compare_number(score_std(d_k, scaled=True), 1.0, f"d_k = {d_k} 时 q·k/√d_k 的标准差", suspects=[
            (1 / math.sqrt(d_k), "除以 √d_k 会把标准差 √d_k 除成 1"),
        ])
    rng = np.random.default_rng(4)
    q, k = rng.standard_normal((2, 20000, 64))
    measured = float((q * k).sum(axis=-1).std())
    return f"通过：抽样 20000 次，d_k = 64 时 q·k 的标准差是 {measured:.2f}（√64 = 8）"


# --------------------------------------------------------------------------------------------------
# 3.6, an open task: section 2's pronouns without the noun mask, and attention still on the right noun

PRONOUN_STEPS, PRONOUN_BATCH, PRONOUN_LR, PRONOUN_D = 300, 64, 3e-3, 32  # section 2's training, quick mode
PRONOUN_SEEDS = (0, 1, 2)
PRONOUN_ACCURACY, PRONOUN_WEIGHT = 0.95, 0.5  # targets for the means over the seeds, on unseen sentences
PRONOUN_POSITION, SENTENCE_LENGTH = 5, 9
_CATEGORIES = {"男": ["小明", "爸爸", "哥哥", "爷爷"], "女": ["小红", "妈妈", "姐姐", "奶奶"],
               "动物": ["猫", "狗", "小鸟", "马"], "物体": ["马路", "桌子", "小河", "大门"]}
_PRONOUNS = {"他": "男", "她": "女", "它": "动物"}
_VERBS = ["过", "追", "等", "理"]
_WORDS = [w for ws in _CATEGORIES.values() for w in ws] + list(_PRONOUNS) + _VERBS + ["没", "因为", "太", "累", "了"]


def _pronoun_sentences(seed: int) -> tuple[np.ndarray, ...]:
    """Section 2's little language, with the words numbered in an order of this seed's own (so that no answer can
    know which ids are nouns): ids, the referent's id and position, split 80/20 into train and test."""
    stoi = dict(zip(_WORDS, np.random.default_rng(100 + seed).permutation(len(_WORDS))))
    rows, refs, places = [], [], []
    for pronoun, kind in _PRONOUNS.items():
        for ref in _CATEGORIES[kind]:
            for other in (c for c in _CATEGORIES if c != kind):
                for distractor in _CATEGORIES[other]:
                    for verb in _VERBS:
                        for first, second in ((ref, distractor), (distractor, ref)):
                            rows.append([first, "没", verb, second, "因为", pronoun, "太", "累", "了"])
                            refs.append(stoi[ref])
                            places.append(0 if first == ref else 3)
    ids = np.array([[stoi[w] for w in row] for row in rows])
    order = np.random.default_rng(seed).permutation(len(ids))
    test, train = order[:len(ids) // 5], order[len(ids) // 5:]
    refs, places = np.array(refs), np.array(places)
    return ids[train], refs[train], ids[test], refs[test], places[test]


def _pronoun_run(pronoun_model, seed: int) -> tuple[float, float]:
    """Train the learner's model as section 2 trains its own; (accuracy, mean weight on the referent) on test."""
    train_ids, train_refs, test_ids, test_refs, test_places = _pronoun_sentences(seed)
    mg.manual_seed(seed)
    model = pronoun_model(len(_WORDS), SENTENCE_LENGTH, PRONOUN_D)
    if not isinstance(model, nn.Module):
        raise Wrong(f"pronoun_model 应返回一个 nn.Module，你的是 {type(model).__name__}")
    optimizer = optim.AdamW(model.parameters(), lr=PRONOUN_LR, weight_decay=0.0)
    rng = np.random.default_rng(seed + 1)
    for _ in range(PRONOUN_STEPS):
        batch = rng.integers(0, len(train_ids), PRONOUN_BATCH)
        logits, _ = _pronoun_outputs(model, train_ids[batch])
        loss = F.cross_entropy(logits, train_refs[batch])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    with mg.no_grad():
        logits, p = _pronoun_outputs(model, test_ids)
    accuracy = float((logits.numpy().argmax(-1) == test_refs).mean())
    weight = p.numpy()[np.arange(len(test_ids)), PRONOUN_POSITION, test_places]
    return accuracy, float(weight.mean())


def _pronoun_outputs(model, ids: np.ndarray) -> tuple[mg.Tensor, mg.Tensor]:
    out = model(ids)
    if not (isinstance(out, tuple) and len(out) == 2 and all(isinstance(t, mg.Tensor) for t in out)):
        raise Wrong("forward(ids) 应返回 (logits, p) 两个张量，像第 2 节的 PronounAttention 那样")
    logits, p = out
    B, T = ids.shape
    if logits.shape != (B, len(_WORDS)) or p.shape != (B, T, T):
        raise Wrong(f"ids 是 {ids.shape} 时，logits 应是 {(B, len(_WORDS))}、p 应是 {(B, T, T)}，"
                    f"你的是 {logits.shape} 和 {p.shape}")
    rows = p.numpy()[:, PRONOUN_POSITION]
    if not (np.all(rows >= -1e-6) and np.allclose(rows.sum(axis=-1), 1, atol=1e-4)):
        raise Wrong("p 应是注意力权重：每一行非负、加起来等于 1（softmax 之后的那个）")
    return logits, p


def check_pronoun_model(pronoun_model) -> str:
    runs = [_pronoun_run(pronoun_model, seed) for seed in PRONOUN_SEEDS]
    accuracy, weight = (float(np.mean(values)) for values in zip(*runs))
    shown = "、".join(f"{a:.0%}/{w:.2f}" for a, w in runs)
    verdict = (f"{len(runs)} 个种子上，没见过的句子的正确率/代词放在正确名词上的权重是 {shown}"
               f"（平均 {accuracy:.0%}、{weight:.2f}）")
    if accuracy < PRONOUN_ACCURACY:
        raise Wrong(f"{verdict}；正确率平均要 ≥ {PRONOUN_ACCURACY:.0%}：没有遮罩，输出是九个位置的值的加权和，"
                    "看向哪里都能凑出一点答案——想想怎样让答案只能从被看的那个词来")
    if weight < PRONOUN_WEIGHT:
        raise Wrong(f"{verdict}；权重平均要 ≥ {PRONOUN_WEIGHT}：答对了，注意力却没有集中在正确的名词上"
                    "（模型找了捷径，或者注意力太平）")
    return f"通过：{verdict}（目标 {PRONOUN_ACCURACY:.0%}、{PRONOUN_WEIGHT}）"


EXERCISES = [
    Exercise("3.1", "softmax", "数值稳定的 softmax", 1, check_softmax, forbids=tuple(
        (owner, name, f"{shown}.{name}") for owner, shown in ((mg.Tensor, "Tensor"), (F, "F"), (mg, "mg"))
        for name in ("softmax", "log_softmax"))),
    Exercise("3.2", "attention", "缩放点积注意力", 2, check_attention),
    Exercise("3.3", "causal_attention", "因果注意力", 2, check_causal_attention),
    Exercise("3.4", "score_std", "分数的标准差", 3, check_score_std),
    Exercise("3.5", "Softmax", "softmax 的反向传播", 3, check_softmax_backward),
    Exercise("3.6", "pronoun_model", "开放题：不用遮罩，代词也看向正确的名词", 3, check_pronoun_model, open=True),
]
