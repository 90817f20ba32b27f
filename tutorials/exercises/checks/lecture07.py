"""Checkers for lecture 07's exercises (tutorials/exercises/lecture07.py): the whole model, end to end.

Read next: ../grading.py, or the tests that hold every checker to its solution (tests/test_exercises.py).
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import numpy as np

import minigpt.data
import minigrad as mg
import tutorials
import tutorials.yardstick
from minigpt import GPT, GPTConfig
from minigpt.checkpoint import load_model
from tutorials.exercises.checks.lecture01 import _reads_the_yardstick
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
from tutorials.kneser_ney import KneserNey
from tutorials.yardstick import Score, Yardstick, load

MATCH = {
    "tanh RNN 的梯度每往回传一步就缩小一截": ("门控（GRU）", "02 讲 §3"),
    "维度一大，softmax 变成非 0 即 1，梯度传不回去": ("除以 √d_k", "03 讲 §3"),
    "“狗咬人”和“人咬狗”经过自注意力得到同一组向量": ("位置编码", "04 讲 §1–2"),
    "一套注意力只学得出一种匹配方式": ("多头注意力", "05 讲 §1–2"),
    "叠了 20 层之后，梯度传不到第一层": ("残差连接", "05 讲 §3"),
    "残差流的数值随深度越滚越大": ("LayerNorm", "05 讲 §4"),
    "整句并行训练时，前面的位置偷看了后面的字": ("因果遮罩", "06 讲 §3"),
    "逐字生成时，每一步都把整段前文重算一遍": ("KV 缓存", "06 讲 §6"),
}


def check_match(match) -> str:
    if not isinstance(match, dict):
        raise Wrong(f"答案应是一个字典（问题 → 补法），你的是 {type(match).__name__}")
    choices = {name for name, _ in MATCH.values()}
    if all(match.get(problem) is None for problem in MATCH):
        raise NotImplementedError("还没填：把 MATCH 里的每个 None 换成 CHOICES 里的一个名字")
    for problem, (name, where) in MATCH.items():
        given = match.get(problem)
        if given is None:
            raise Wrong(f"“{problem}”还没填")
        if given not in choices:
            raise Wrong(f"“{given}”不在 CHOICES 里：请照抄其中一个名字")
        if given != name:
            raise Wrong(f"“{problem}”：不是“{given}”——回看第 {where}")
    return "通过：每一行都是“先撞上毛病，再有补法，最后才有名字”"


def _tiny_gpt(block_size=8):
    model = GPT(GPTConfig(vocab_size=11, block_size=block_size, n_layer=1, n_head=2, n_embd=16))
    rng = np.random.default_rng(0)  # large random weights (not the global seed): varied, decisive argmaxes
    for p in model.parameters():
        p.array[...] = rng.standard_normal(p.shape) * 0.5
    return model


@mg.no_grad()
def _greedy(model, ids, n, position):
    for _ in range(n):
        logits, _ = model(ids[:, -model.config.block_size:])
        ids = np.concatenate([ids, logits.numpy()[:, position, :].argmax(-1)[:, None]], axis=1)
    return ids


def _last_position(model, ids, n):  # greedy decoding (model.generate is forbidden while 7.2 is graded)
    return _greedy(model, ids, n, -1)


def _first_position(model, ids, n):  # the mistake of reading the first position's logits
    return _greedy(model, ids, n, 0)


def check_greedy_generate(greedy_generate) -> str:
    model = _tiny_gpt()
    prompt = np.array([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10]])
    n = 10  # 5 + 10 > block_size 8: the context must be cropped
    expected = _last_position(model, prompt, n)  # what model.generate(prompt, n, temperature=0) gives
    try:
        got = greedy_generate(model, prompt.copy(), n)
    except ValueError as error:
        if "block_size" in str(error):
            hint = "上下文超过 block_size 时，只能喂给模型最后 block_size 个词元：ids[:, -block_size:]"
            raise Wrong(hint) from error
        raise
    got = as_array(got, "结果")
    compare(got, expected, "生成的 id", suspects=[
        (expected[:, prompt.shape[1]:], "应返回提示加上新词元（形状 (B, T0 + n)），你只返回了新词元"),
        (_first_position(model, prompt, n), "要用最后一个位置的 logits 猜下一个词元：logits[:, -1, :]"),
    ])
    return "通过：和 model.generate(ids, n, temperature=0) 生成的一模一样"


def check_kv_cache_floats(kv_cache_floats) -> str:
    for L, C, T, B in ((2, 64, 100, 1), (12, 768, 1024, 4)):
        expected = 2 * L * C * T * B
        what = f"{L} 层、n_embd = {C}、T = {T}、batch = {B} 时"
        compare_number(kv_cache_floats(L, C, T, B), expected, what, suspects=[
            (L * C * T * B, "K 和 V 各存一份：要乘 2"),
            (2 * C * T * B, "每一层都有自己的 K 和 V：要乘层数"),
            (2 * L * C * T, "batch 里每条序列各有一份：要乘 batch"),
        ])
    compare_number(kv_cache_floats(2, 64, 100), 2 * 2 * 64 * 100, "不给 batch 时（默认 batch = 1）", suspects=[
        (0.0, "batch 的默认值应是 1（一条序列）")])
    mib = 2 * 12 * 768 * 1024 * 4 / 2**20
    return f"通过：GPT-2 small 的 1024 个词元，用 float32 存要 {mib:.0f} MiB，每条序列一份"


def check_gpt_parameters(gpt_parameters) -> str:
    for V, block, L, C in ((65, 64, 2, 32), (11, 8, 3, 16)):
        actual = sum(p.numel() for p in GPT(GPTConfig(vocab_size=V, block_size=block, n_layer=L, n_head=4,
                                                      n_embd=C)).parameters())
        compare_number(gpt_parameters(V, block, L, C), actual, f"V = {V}、block_size = {block}、{L} 层、C = {C} 的 GPT",
                       suspects=[
                           (actual + V * C,
                            "多算了 V·C：输出层 lm_head 和嵌入表 wte 是同一个矩阵（tie_weights），只算一次"),
                           (actual - block * C, "漏了可学习的位置表 wpe（block_size × C）"),
                           (actual - 2 * C, "漏了最后的 LayerNorm ln_f（2·C）"),
                       ])
    gpt2 = 50257 * 768 + 1024 * 768 + 12 * (12 * 768**2 + 13 * 768) + 2 * 768
    return f"通过：GPT-2 small（V = 50257、12 层、C = 768）按这个公式是 {gpt2:,} 个参数"


def _ladder_losses(seed=0, N=40, W=16):
    """Two models' per-character losses on the same windows: each window is easier or harder for both alike."""
    rng = np.random.default_rng(seed)
    window = rng.gamma(4.0, 0.5, (N, 1))  # how hard each window is
    a = window + rng.normal(0.0, 0.8, (N, W)) + 0.15
    b = window + rng.normal(0.0, 0.8, (N, W))
    return a, b


def check_paired_gap(paired_gap) -> str:
    a, b = _ladder_losses()
    N, W = a.shape
    diff = (a - b).mean(axis=1)
    gap, se = float(diff.mean()), float(diff.std(ddof=1) / np.sqrt(N))
    answer = paired_gap(a.copy(), b.copy())
    if not (isinstance(answer, tuple) and len(answer) == 2):
        raise Wrong(f"应返回两个数 (gap, stderr)，你的是 {type(answer).__name__}")
    got_gap, got_se = answer
    compare_number(got_gap, gap, "gap", suspects=[(-gap, "符号反了：gap 是 a − b，a 比 b 多多少")])
    unpaired = float(np.sqrt(a.mean(axis=1).var(ddof=1) / N + b.mean(axis=1).var(ddof=1) / N))
    compare_number(got_se, se, "stderr", suspects=[
        (unpaired, "两个模型读的是同一批窗口：先逐窗口相减，再算这 N 个差值的标准误差（分开算再合起来会大得多）"),
        (float((a - b).std(ddof=1) / np.sqrt(N * W)),
         "同一个窗口里的字符不是独立的：先对每个窗口求平均，再算这 N 个数的标准误差"),
        (float(diff.std(ddof=0) / np.sqrt(N)), "样本标准差要除以 N − 1（ddof=1）"),
        (float(diff.std(ddof=1)), "标准误差是标准差再除以 √N"),
    ])
    return (f"通过：这组数据里 gap = {gap:.3f} ± {se:.3f}；若不逐窗口配对，误差会是 ±{unpaired:.3f}——"
            "同一把尺子让比较精确得多")


# --------------------------------------------------------------------------------------------------
# 7.6, an open task: mix the shipped GPT with Kneser-Ney, the weight chosen on a dev split carved from train

PRETRAINED = Path(tutorials.__file__).parent / "pretrained" / "shakespeare"
KN_ORDER, KN_SCALE = 10, 1.2  # what kneser_ney.tune_order chose in lecture 01, on the training text alone
MIX_TARGET = 0.015  # nats per character better than the better of the two, window by window (dev split, yardstick)


@cache
def _yardstick() -> Yardstick:
    return load()


@cache
def _shipped_gpt() -> GPT:
    model, _ = load_model(PRETRAINED)
    model.eval()
    return model


@cache
def _kneser_ney() -> KneserNey:
    """Kneser-Ney counted on the text choose_mix receives: the training text less the development split (about
    20 s, once per process)."""
    ys = _yardstick()
    return KneserNey(ys.development().train, ys.vocab_size, KN_ORDER, KN_SCALE)


@cache
def _mixing_probs(final: bool) -> tuple[np.ndarray, np.ndarray]:
    """Both models' probabilities of the true characters of the development split (or, final, of the yardstick)."""
    windows = _yardstick() if final else _yardstick().development()
    kn = _kneser_ney().probs(windows.x, windows.y, KN_ORDER)
    return _gpt_probs(_shipped_gpt(), windows.x, windows.y), kn


def _gpt_probs(model: GPT, x: np.ndarray, y: np.ndarray, batch_size: int = 64) -> np.ndarray:
    """P(y[n, t] | x[n, :t+1]) under the GPT, for windows x, y of shape (N, T) with T <= its block_size."""
    x, y = np.asarray(x, dtype=np.int64), np.asarray(y, dtype=np.int64)
    if x.ndim != 2 or x.shape != y.shape or x.shape[1] > model.config.block_size:
        raise Wrong(f"gpt_probs(x, y)：x、y 应是形状相同的 (N, T) 整数数组，T 不超过 {model.config.block_size}，"
                    f"你给的是 {x.shape} 和 {y.shape}")
    out = []
    with mg.no_grad():
        for start in range(0, len(x), batch_size):
            logits = model(x[start:start + batch_size])[0].numpy().astype(np.float64)
            logits -= logits.max(axis=-1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=-1, keepdims=True)
            out.append(np.take_along_axis(p, y[start:start + batch_size, :, None], axis=-1)[..., 0])
    return np.concatenate(out)


def _mix_weight(choose_mix) -> float:
    """Run the learner's choice on the training text less the development split."""
    ys = _yardstick()
    if _reads_the_yardstick(choose_mix, ys):
        raise Wrong("不许碰尺子：choose_mix 用到了 tutorials.yardstick、load_dataset 或验证集的窗口。"
                    "权重只许在训练文本切出的开发集上挑，尺子只在最后打一次分")
    train = ys.development().train.copy()
    train.flags.writeable = False
    weight = choose_mix(train, ys.vocab_size, lambda x, y: _gpt_probs(_shipped_gpt(), x, y))
    if isinstance(weight, bool) or not isinstance(weight, (int, float, np.floating)) or not 0 <= weight <= 1:
        raise Wrong(f"应返回 GPT 的权重 λ，一个 0 到 1 之间的数，你的是 {weight!r}")
    return float(weight)


def _score_mix(weight: float, final: bool) -> str:
    """The verdict of the mix with GPT weight `weight` on the development split (or the yardstick)."""
    gpt, kn = _mixing_probs(final)
    mixed = -np.log(weight * gpt + (1 - weight) * kn)
    gains = {}
    for name, other in (("Kneser-Ney", kn), ("GPT", gpt)):
        diff = (-np.log(other) - mixed).mean(axis=1)  # how much better the mix is, window by window
        gains[name] = (float(diff.mean()), float(diff.std(ddof=1) / math.sqrt(len(diff))))
    verdict = (f"λ = {weight:.2f} 的混合在{'尺子' if final else DEV_PLACE}上是 {mixed.mean():.3f} 纳特/字符，"
               f"比 Kneser-Ney {better_by(*gains['Kneser-Ney'])}，比 GPT {better_by(*gains['GPT'])}")
    if min(gains[name][0] for name in gains) < MIX_TARGET:
        if weight < 0.1:
            hint = ("λ 几乎是 0：像是在 Kneser-Ney 数过的文本上挑的——它在自己数过的文本上几乎背了下来，"
                    "显得比 GPT 好得多；要在没数过的开发集上挑")
        elif weight > 0.9:
            hint = "GPT 占得太多：在没见过的文本上，单独的 GPT 比 Kneser-Ney 还差，混合要两边都取"
        else:
            hint = "在开发集上把 λ 从 0 到 1 细细扫一遍，挑开发集损失最小的那个"
        raise Wrong(f"{verdict}；目标是比两者都好 {MIX_TARGET} 以上：{hint}")
    return f"{verdict}（目标 {MIX_TARGET}）"


def check_choose_mix(choose_mix) -> str:
    """Graded on the development split (the training text's last tenth, which choose_mix never receives)."""
    return (f"通过：{_score_mix(_mix_weight(choose_mix), final=False)}。附带的 GPT 训练时见过这段开发集，"
            f"这里的分数偏袒它；尺子上的才算数。{FINAL_NOTE.format(number='7.6')}")


def final_choose_mix(choose_mix) -> str:
    """Graded once on the yardstick (`check --final 7.6`)."""
    return f"通过：{_score_mix(_mix_weight(choose_mix), final=True)}"


# Counting a model's parameters with the library is the shortcut: the formula is the exercise.
COUNTERS = tuple((mg.nn.Module, name, f"Module.{name}（参数个数要你自己用公式数出来）")
                 for name in ("parameters", "named_parameters", "num_parameters", "state_dict"))

EXERCISES = [
    Exercise("7.1", "MATCH", "配对：毛病 → 补法", 1, check_match),
    Exercise("7.2", "greedy_generate", "贪心生成", 2, check_greedy_generate, forbids=(
        (GPT, "generate", "model.generate"),)),
    Exercise("7.3", "kv_cache_floats", "KV 缓存有多大", 2, check_kv_cache_floats),
    Exercise("7.4", "gpt_parameters", "整个 GPT 有多少参数", 3, check_gpt_parameters, forbids=COUNTERS),
    Exercise("7.5", "paired_gap", "两个模型在同一把尺子上差多少", 2, check_paired_gap, forbids=(
        (Score, "gap", "tutorials.yardstick 的 Score.gap"), (Score, "stderr", "tutorials.yardstick 的 Score.stderr"))),
    Exercise("7.6", "choose_mix", "开放题：把 GPT 和 Kneser-Ney 混起来", 3, check_choose_mix, open=True,
             final=final_choose_mix, forbids=(
        (tutorials.yardstick, "load", "tutorials.yardstick.load（尺子只用来打分，挑选只许用训练文本）"),
        (minigpt.data, "load_dataset", "minigpt.data.load_dataset（它会切出验证集：挑选只许用训练文本）"))),
]
