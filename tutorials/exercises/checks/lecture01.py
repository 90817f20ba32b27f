"""Checkers for lecture 01's exercises (tutorials/exercises/lecture01.py): counting and scoring bigrams.

Read next: lecture02.py.
"""

from __future__ import annotations

import math
import types
from functools import cache

import numpy as np

import minigpt.data
import tutorials.yardstick
from tutorials.exercises.grading import (
    DEV_PLACE,
    FINAL_NOTE,
    Exercise,
    Wrong,
    as_array,
    better_by,
    compare,
    compare_number,
)
from tutorials.exercises.tools import NGramCounts
from tutorials.yardstick import Yardstick, load

NATS_HINT = "本课的损失用自然对数 ln（单位纳特）"


def check_uniform_loss(uniform_loss) -> str:
    for V in (65, 27, 1000):
        compare_number(uniform_loss(V), math.log(V), f"V = {V} 时瞎猜的损失", suspects=[
            (math.log2(V), f"这是以 2 为底的对数（比特）；{NATS_HINT}"),
            (math.log10(V), f"这是以 10 为底的对数；{NATS_HINT}"),
            (1 / V, "1/V 是每个字符的概率；损失是它的负对数 −ln(1/V)"),
            (-math.log(V), "符号反了：损失是 −ln(1/V)，是正数"),
        ])
    return f"通过：65 个字符瞎猜是 {math.log(65):.3f} 纳特，这是每个模型的起点"


def _text(seed=0, n=400, V=6):
    return np.random.default_rng(seed).integers(0, V, n), V


def check_bigram_counts(bigram_counts) -> str:
    ids, V = _text()
    expected = np.zeros((V, V))
    np.add.at(expected, (ids[:-1], ids[1:]), 1)
    got = as_array(bigram_counts(ids, V), "计数表")
    compare(got, expected, "计数表 counts", suspects=[
        (expected.T, "行列反了：counts[a, b] 应是“a 后面紧跟 b”的次数（第一个下标是前一个字符）"),
        ((expected > 0).astype(float),
         "重复的 (a, b) 只记了一次：`counts[a, b] += 1` 遇到重复下标不会累加，用 np.add.at"),
    ])
    if got.sum() != len(ids) - 1:
        raise Wrong(f"计数总和应是相邻对的个数 {len(ids) - 1}，你的是 {got.sum():g}")
    return "通过"


def check_bigram_probs(bigram_probs) -> str:
    counts = np.random.default_rng(1).integers(0, 5, (5, 5)).astype(float)
    counts[2] = 0  # a character never seen: smoothing must still give a distribution
    alpha = 0.5
    smoothed = counts + alpha
    expected = smoothed / smoothed.sum(axis=1, keepdims=True)
    got = as_array(bigram_probs(counts, alpha), "概率表")
    compare(got, expected, "P", suspects=[
        (smoothed / smoothed.sum(axis=0, keepdims=True), "按列归一化了：应让每一行（同一个前一字符 a）加起来等于 1"),
        (smoothed / counts.sum(axis=1, keepdims=True).clip(1), "分母也要加上平滑量：用 (counts + alpha) 的行和来除"),
        (counts / counts.sum(axis=1, keepdims=True).clip(1), "忘了先给每个格子加 alpha（平滑）"),
    ])
    return "通过"


def check_average_nll(average_nll) -> str:
    ids, V = _text(seed=2, n=300)
    P = np.random.default_rng(3).dirichlet(np.ones(V), size=V)  # an arbitrary, non-symmetric table
    losses = -np.log(P[ids[:-1], ids[1:]])
    expected = float(losses.mean())
    compare_number(average_nll(P, ids), expected, "平均损失", suspects=[
        (float(losses.sum()), f"这是总和；损失要取平均（除以 {len(losses)} 个位置）"),
        (-expected, "符号反了：损失是 −ln P，是正数"),
        (expected / math.log(2), f"这是以 2 为底的对数；{NATS_HINT}"),
        (float(-np.log(P[ids[1:], ids[:-1]]).mean()), "下标反了：应取 P[前一个, 后一个]，即 P[ids[:-1], ids[1:]]"),
    ])
    return "通过"


def check_entropy_bits(entropy_bits) -> str:
    p = np.array([[0.5, 0.5, 0.0, 0.0], [1.0, 0.0, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], [0.7, 0.2, 0.1, 0.0]])
    safe = np.where(p > 0, p, 1.0)
    expected = -(p * np.log2(safe)).sum(axis=-1)
    naive = -(p * np.log2(p, where=p > 0, out=np.full_like(p, np.nan))).sum(axis=-1)  # 0 * log 0 = nan
    compare(entropy_bits(p), expected, "熵", suspects=[
        (naive, "概率为 0 的候选让结果成了 nan：按约定 0·log 0 = 0，先把 p = 0 的项去掉（或把它们的 log 换成 0）"),
        (expected * math.log(2), "单位应是比特（log₂），你的像是纳特（ln）"),
        (-expected, "符号反了：熵是 −Σ p·log₂ p，是非负数"),
    ])
    batch = np.random.default_rng(4).dirichlet(np.ones(6), size=(2, 3))  # (2, 3, 6): any leading shape
    compare(entropy_bits(batch), -(batch * np.log2(batch)).sum(axis=-1), "形状为 (2, 3, 6) 的 p 的熵")
    return "通过：确定的分布熵为 0，均匀分布在 4 个候选上是 2 比特"


# --------------------------------------------------------------------------------------------------
# 1.6, an open task: choose the order and the smoothing on a dev split carved from the training text

TRAIN_CHARS = 1_000_000  # the learner gets the first million characters of the training text (fast to count)
K_MAX = 6
LECTURE_CHOICE = (4, 2.0)  # what §3 settled on: beta fixed at 2, then the best k
TARGET_GAP = 0.15  # nats per character better than LECTURE_CHOICE, window by window (dev split, and yardstick)
YARDSTICK_THINGS = (tutorials.yardstick, load, Yardstick, minigpt.data, minigpt.data.load_dataset)


@cache
def _yardstick_and_counts() -> tuple[Yardstick, NGramCounts]:
    """The yardstick and the counts of the learner's training text: made once, shared by every answer graded."""
    ys = load()
    return ys, NGramCounts(ys.train[:TRAIN_CHARS], ys.vocab_size, K_MAX)


def _reads_the_yardstick(fn, ys: Yardstick, seen=None) -> bool:
    """Whether `fn`, or a function of the learner's it calls, names the yardstick, its loaders or its windows."""
    seen = set() if seen is None else seen
    if id(fn) in seen or not isinstance(fn, types.FunctionType):
        return False
    if str(fn.__module__).split(".")[0] == "numpy":  # NumPy's own functions never read it (and reading theirs
        return False  # would touch deprecated NumPy attributes, with a FutureWarning)
    seen.add(id(fn))
    codes, names = [fn.__code__], set()
    while codes:  # names used by the function and by the functions and comprehensions defined inside it
        code = codes.pop()
        names |= set(code.co_names)
        codes += [c for c in code.co_consts if isinstance(c, types.CodeType)]
    values = [fn.__globals__[n] for n in names if n in fn.__globals__]
    values += [cell.cell_contents for cell in (fn.__closure__ or ()) if cell.cell_contents is not None]
    for _ in range(2):  # `tutorials.yardstick.load`: the attributes it names on the modules it uses, two deep
        values += [getattr(m, n) for m in values if isinstance(m, types.ModuleType) for n in names if hasattr(m, n)]
    for value in values:
        if any(value is thing for thing in YARDSTICK_THINGS) or isinstance(value, Yardstick):
            return True
        if isinstance(value, np.ndarray) and any(np.shares_memory(value, a) for a in (ys.val, ys.x, ys.y)):
            return True
        if isinstance(value, types.FunctionType) and _reads_the_yardstick(value, ys, seen):
            return True
    return False


def _ngram_choice(choose_ngram) -> tuple[int, float]:
    """Run the learner's choice on the first TRAIN_CHARS of the training text (never the dev split's tail)."""
    ys, _ = _yardstick_and_counts()
    if _reads_the_yardstick(choose_ngram, ys):
        raise Wrong("不许碰尺子：choose_ngram 用到了 tutorials.yardstick、load_dataset 或验证集的窗口。"
                    "挑选只许用传进来的训练文本（从里面切出开发集），尺子只在最后打一次分")
    train = ys.train[:TRAIN_CHARS].copy()
    train.flags.writeable = False  # the learner's split is a view or a copy; the text itself stays as it was
    choice = choose_ngram(train, ys.vocab_size)
    if not (isinstance(choice, tuple) and len(choice) == 2):
        raise Wrong(f"应返回 (k, beta) 两个数，你返回的是 {type(choice).__name__}")
    k, beta = choice
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 0 <= k <= K_MAX:
        raise Wrong(f"k 应是 0 到 {K_MAX} 的整数，你的是 {k!r}")
    if isinstance(beta, bool) or not isinstance(beta, (int, float, np.number)) or not float(beta) > 0:
        raise Wrong(f"beta 应是正数，你的是 {beta!r}")
    return int(k), float(beta)


def _score_ngram(k: int, beta: float, windows: Yardstick, where: str) -> str:
    """The verdict of (k, beta) against the lecture's choice on `windows`: a remark, or Wrong below the target."""
    _, counts = _yardstick_and_counts()
    losses = -np.log(counts.probs(windows.x, windows.y, k, beta))
    baseline = -np.log(counts.probs(windows.x, windows.y, *LECTURE_CHOICE))
    diff = (baseline - losses).mean(axis=1)  # how much better than the lecture's choice, window by window
    gain, err = float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff)))
    verdict = (f"(k={k}, β={beta:g}) 在{where}上是 {losses.mean():.3f} 纳特/字符，比讲义的 (k=4, β=2) "
               f"{better_by(gain, err)}")
    if gain < TARGET_GAP:
        hint = ("：k 大、β 小，在训练文本上最好，在没见过的文本上最差——像是在训练文本本身上挑的，"
                "要在切出来的开发集上挑" if k >= 5 and beta < 4 else "：在开发集上把 k 和 β 一起挑（β 试到几十）")
        raise Wrong(f"{verdict}；目标是好 {TARGET_GAP} 以上{hint}")
    return f"{verdict}（目标 {TARGET_GAP}）"


def check_choose_ngram(choose_ngram) -> str:
    """Graded on the development split (the training text's last tenth, which choose_ngram never receives)."""
    ys, _ = _yardstick_and_counts()
    remark = _score_ngram(*_ngram_choice(choose_ngram), ys.development(), DEV_PLACE)
    return f"通过：{remark}。{FINAL_NOTE.format(number='1.6')}"


def final_choose_ngram(choose_ngram) -> str:
    """Graded once on the yardstick (`check --final 1.6`)."""
    ys, _ = _yardstick_and_counts()
    return f"通过：{_score_ngram(*_ngram_choice(choose_ngram), ys, '尺子')}"


EXERCISES = [
    Exercise("1.1", "uniform_loss", "瞎猜的损失", 1, check_uniform_loss),
    Exercise("1.2", "bigram_counts", "数出二元组", 1, check_bigram_counts),
    Exercise("1.3", "bigram_probs", "平滑并归一化成概率", 2, check_bigram_probs),
    Exercise("1.4", "average_nll", "平均交叉熵损失", 2, check_average_nll),
    Exercise("1.5", "entropy_bits", "熵（比特）", 3, check_entropy_bits),
    Exercise("1.6", "choose_ngram", "开放题：在开发集上挑阶数和平滑", 3, check_choose_ngram, open=True,
             final=final_choose_ngram, forbids=(
        (tutorials.yardstick, "load", "tutorials.yardstick.load（尺子只用来打分，挑选只许用训练文本）"),
        (minigpt.data, "load_dataset", "minigpt.data.load_dataset（它会切出验证集：挑选只许用训练文本）"),
        (Yardstick, "score_probs", "Yardstick.score_probs（尺子只用来打分，挑选只许用训练文本）"))),
]
