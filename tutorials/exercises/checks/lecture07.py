"""Checkers for lecture 07's exercises (tutorials/exercises/lecture07.py): the whole model, end to end.

Read next: ../grading.py, or the tests that hold every checker to its solution (tests/test_exercises.py).
"""

from __future__ import annotations

import numpy as np

import minigrad as mg
from minigpt import GPT, GPTConfig
from tutorials.exercises.grading import Exercise, Wrong, as_array, compare, compare_number
from tutorials.yardstick import Score

MATCH = {
    "tanh RNN 的梯度每往回传一步就缩小一截": ("门控（GRU）", "02 讲 §3"),
    "维度一大，softmax 变成非 0 即 1，梯度传不回去": ("除以 √d_k", "03 讲 §3"),
    "“狗咬人”和“人咬狗”经过自注意力得到同一组向量": ("位置编码", "04 讲 §1–2"),
    "一套注意力只学得出一种匹配方式": ("多头注意力", "05 讲 §1–2"),
    "叠了 20 层之后，梯度传不到第一层": ("残差连接", "05 讲 §3"),
    "残差流的数值随深度越滚越大": ("LayerNorm", "05 讲 §4"),
    "整句并行训练时，前面的位置偷看了后面的字": ("因果遮罩", "06 讲 §3"),
    "逐字生成时，每一步都把整段前文重算一遍": ("KV cache", "06 讲 §6"),
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
        p.data[...] = rng.standard_normal(p.shape) * 0.5
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
            hint = "上下文超过 block_size 时，只能喂给模型最后 block_size 个 token：ids[:, -block_size:]"
            raise Wrong(hint) from error
        raise
    got = as_array(got, "结果")
    compare(got, expected, "生成的 id", suspects=[
        (expected[:, prompt.shape[1]:], "应返回提示加上新 token（形状 (B, T0 + n)），你只返回了新 token"),
        (_first_position(model, prompt, n), "要用最后一个位置的 logits 猜下一个 token：logits[:, -1, :]"),
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
    return f"通过：GPT-2 small 的 1024 个 token，用 float32 存要 {mib:.0f} MiB，每条序列一份"


def check_gpt_parameters(gpt_parameters) -> str:
    for V, block, L, C in ((65, 64, 2, 32), (11, 8, 3, 16)):
        actual = sum(p.numel() for p in GPT(GPTConfig(vocab_size=V, block_size=block, n_layer=L, n_head=4,
                                                      n_embd=C)).parameters())
        compare_number(gpt_parameters(V, block, L, C), actual, f"V = {V}、block_size = {block}、{L} 层、C = {C} 的 GPT",
                       suspects=[
                           (actual + V * C,
                            "多算了 V·C：输出层 lm_head 和词向量表 wte 是同一个矩阵（tie_weights），只算一次"),
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


EXERCISES = [
    Exercise("7.1", "MATCH", "配对：毛病 → 补法", 1, check_match),
    Exercise("7.2", "greedy_generate", "贪心生成", 2, check_greedy_generate, forbids=(
        (GPT, "generate", "model.generate"),)),
    Exercise("7.3", "kv_cache_floats", "KV cache 有多大", 2, check_kv_cache_floats),
    Exercise("7.4", "gpt_parameters", "整个 GPT 有多少参数", 3, check_gpt_parameters),
    Exercise("7.5", "paired_gap", "两个模型在同一把尺子上差多少", 2, check_paired_gap, forbids=(
        (Score, "gap", "tutorials.yardstick 的 Score.gap"), (Score, "stderr", "tutorials.yardstick 的 Score.stderr"))),
]
