# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 09 总结项目：你的 GPT 上梯子
#
# 前面八讲，你一个零件一个零件地写过 GPT 的每一部分：第 03 讲的因果注意力，第 05 讲的 LayerNorm 和“把通道切成几个头”。
# 可每道练习都只是“写一个函数，和参考答案对上”——这些函数从来没有真正组成过一个模型、被训练过。
# 这一讲把它们装进同一个 GPT：**用你自己写的零件**拼出模型，从零训练它，在课程的尺子上打分，
# 再把它放到梯子上，和第 01 讲数出来的计数模型、随课程附带的 GPT 站在一起。
#
# 装法和 PyTorch 里改模型一样：先用 `minigpt` 建好 GPT，再把其中的模块换成用你的函数算的模块
# （`tutorials/parts.py`），不用改 `minigpt` 的一行代码。
# 装之前，每个零件都要先过两关：它那道练习的检查器，以及在 GPT 真实形状上和 `minigpt` 自己的零件逐个元素比对。
# 哪一个没过，报错会直接说出是第几道练习。
#
# 实验清单：
#
# 1. 零件清单：一个 GPT 调用了哪些函数，默认的是哪些；
# 2. 用你的答案拼一个 GPT（答案还空着时，换成参考答案，并大声说出来）；
# 3. 同一颗种子，同一条曲线：用参考答案拼的 GPT 和 `minigpt` 自己的 GPT 逐步比较损失；再换上练习 5.5 手推的
#    LayerNorm 反向传播，比一次；
# 4. 一个错的零件：故意写错三个零件，看报错怎样点名；
# 5. 训练你的 GPT，在尺子上打分；
# 6. 上梯子：它和计数模型、附带的 GPT 比，逐窗口算差距；
# 7. 让它写一段：抽样用的也是你写的 `sample_next`（练习 6.5）。
#
# 运行：`python tutorials/09_capstone.py`（完整版）；`TUTORIAL_QUICK=1 python tutorials/09_capstone.py`（快速版）。
# 图片写到 `figures/`（在当前目录下）。

# %% [markdown]
# **学完这一讲，你能**：说出一个 GPT 由哪几个函数拼成，把自己写的函数装进去并验证它和标准实现一致；
# 读懂“浮点数下的相等”是什么意思；看懂一个零件错了时，损失曲线和报错各会怎样；把自己训练的模型放上梯子，
# 用逐窗口的差距说清它比谁好、比谁差。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（在 2 核 CPU 上实测；单独运行时，还要先把第 01 讲运行一遍）。
# 这一讲没有新的练习：它用的就是你在第 03、05、06 讲写的答案。

# %%
import tutorials
from tutorials.course import FIGURES, QUICK, T_START, label, show_figure  # 最先导入：它先限定 BLAS 线程数

# isort: split
import dataclasses
import json
import math
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigpt import GPTConfig
from minigpt.checkpoint import load_model
from tutorials import ladder, parts, scaling, yardstick
from tutorials.capstone import PART_EXERCISES, PartError, batches, learner_parts, parts_from, train_losses
from tutorials.exercises import answers, find
from tutorials.exercises.grading import grade
from tutorials.parts import gpt_from_parts
from tutorials.predictions import Predictions
from tutorials.solutions import lecture03, lecture05
from tutorials.yardstick import Score

my_guesses = Predictions("09", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_09.json）
ys = yardstick.load()  # 课程的尺子：验证集里固定的 512 个窗口，每个 64 个字符
print(f"词表大小 V = {ys.vocab_size}，尺子上有 {ys.y.size:,} 个要猜的字符")

# %% [markdown]
# ## 1. 零件清单
#
# 打开 `minigpt/model.py`，一个 GPT 的前向传播里，真正“算东西”的地方并不多：嵌入查表、线性层、
# 每个 Block 里的两个 LayerNorm、把通道切成几个头、因果注意力、MLP 里的 GELU，最后一个 LayerNorm 和输出层。
# 线性层和嵌入只是矩阵乘法和查表；剩下的这几个函数，正是前几讲练习里你亲手写过的。
#
# `tutorials/parts.py` 把它们列成一张清单 `Parts`：每一项是一个普通函数，输入输出都是 minigrad 的张量；
# 默认的一套就是 `minigpt` 自己算的（minigrad 里融合过的、带手推反向传播的快速版本）。
# `gpt_from_parts(config, parts)` 像 PyTorch 用户改模型那样装零件：先 `GPT(config)` 建好模型，再把换了的零件
# 装成模块，换到原来的位置上——`block.ln_1`、`block.ln_2` 和 `transformer.ln_f` 换成 `PartLayerNorm`，
# `block.attn` 换成 `PartAttention`。新模块用的还是原来那几个参数（同一个 weight、bias、`c_attn`、`c_proj`），
# 所以参数名和 `state_dict` 都不变；零件全是默认的，就是 `minigpt` 的 GPT 本身（`tests/test_capstone.py`
# 检查输出和梯度都一模一样）。它做的事，写出来就是：
#
# ```python
# model = GPT(config)
# for block in model.transformer.h:
#     block.ln_1 = PartLayerNorm(block.ln_1, parts.layer_norm)      # 同一个 weight、bias、eps
#     block.ln_2 = PartLayerNorm(block.ln_2, parts.layer_norm)
#     block.attn = PartAttention(block.attn, parts.split_heads, parts.causal_attention)  # 同一个 c_attn、c_proj
# model.transformer.ln_f = PartLayerNorm(model.transformer.ln_f, parts.layer_norm)
# ```
#
# （`gpt_from_parts` 换模块时还保住了子模块原来的先后次序：参数的次序不变，梯度范数相加的次序也就不变。）

# %%
for field in dataclasses.fields(parts.Parts):
    default = getattr(parts.DEFAULT, field.name)
    print(f"{field.name:18s} 默认：tutorials.parts.{default.__name__:18s} {default.__doc__.splitlines()[0][:70]}")
print()
for name, number, title in PART_EXERCISES:
    print(f"{name:18s} ← 练习 {number}（{title}）")
print("gelu               ← 没有对应的练习，用 minigpt 自己的")

# %% [markdown]
# ## 2. 用你的答案拼一个 GPT
#
# `learner_parts("answers")` 从 `tutorials/exercises/lecture03.py` 和 `lecture05.py` 里读出你的三个函数，
# 每一个先交给它那道练习的检查器（和 `python -m tutorials.exercises check` 用的是同一个），
# 再在 GPT 的真实形状上——(B, nh, T, hs) 的四维张量、float32——和默认零件比较输出和梯度。
# 全部通过，才把它们装进 `Parts`。
#
# 如果你的答案还空着（或者还没通过），这一讲不会停下：它会**大声说出来**，改用 `tutorials/solutions/` 里的参考答案，
# 让后面的实验照样能跑。把答案写好再运行这一讲，下面训练、打分、上梯子的就是你自己的 GPT。

# %%
try:
    my_parts = learner_parts("answers")
    source = "你的答案"
    print("✓ 三个零件都来自你的答案，都通过了检查：下面训练的是你自己的 GPT")
except PartError as why:
    print("!" * 100)
    print(f"！！ 没能用你的答案：{why}")
    print("！！ 这一讲改用参考答案（tutorials/solutions/）拼 GPT。写好、通过第 03、05 讲的练习后再运行这一讲，")
    print("！！ 下面的 GPT 就是用你自己的零件拼成的。")
    print("!" * 100)
    my_parts = learner_parts("solutions")
    source = "参考答案"
print(f"零件来自：{source}；和 minigpt 默认不同的零件：{my_parts.custom()}")

# %% [markdown]
# ## 3. 同一颗种子，同一条曲线
#
# 用参考答案拼的 GPT，和 `minigpt` 自己的 GPT，应当是同一个模型：同样的结构、同样的参数名，
# 同一颗随机种子给出同样的初始权重（零件里没有参数，换零件不改变初始化）。那么用同样的几批数据、同样的 AdamW
# 训练它们，每一步的损失也应当相同。
#
# 但“相同”在浮点数下要说清楚。参考答案的 LayerNorm 是一串基本运算拼成的（先减均值，再算方差，再除），
# minigrad 默认的 LayerNorm 是融合成一个运算、按另一种顺序算的；float32 只有大约 7 位有效数字，
# 两种顺序的舍入误差不同，结果会在第 7 位上差一点。训练每一步都在上一步的权重上继续，这点差别会被带下去，
# 但几十步之内仍只有百万分之几纳特。所以这里断言的是：**每一步损失之差不超过 1e-5 纳特**——
# 比舍入误差大一个数量级，又比任何真正的错误（下一节会看到，错的零件差在第一、二位上）小几千倍。
#
# **先猜一猜**：两条损失曲线会一位不差地完全相同吗？

# %%
my_guesses.guess("bitwise_equal", "会", "两条损失曲线会一位不差地相同吗", options=["会", "不会"],
                 default="会")  # 改成你的猜测

# %%
TOLERANCE = 1e-5  # 纳特：float32 舍入（约 1e-7 相对误差）带过几十步之后的余量
SMALL = GPTConfig(vocab_size=ys.vocab_size, block_size=yardstick.WINDOW, n_layer=2, n_head=4, n_embd=64)
SEED, LR = 7, 3e-3
COMPARE_STEPS = 30 if QUICK else 60

reference_parts = learner_parts("solutions")
curves = {}
for name, model_parts in (("minigpt 自己的 GPT", parts.Parts()), ("参考答案拼的 GPT", reference_parts)):
    mg.manual_seed(SEED)
    model = gpt_from_parts(SMALL, model_parts)  # 默认的零件一个也不换：就是 GPT(SMALL)
    curves[name] = np.array(train_losses(model, batches(ys.train, 12, SMALL.block_size, seed=0), COMPARE_STEPS, LR,
                                         warmup=10))
own, mine = curves.values()
difference = np.abs(own - mine)
print(f"{COMPARE_STEPS} 步：损失从 {own[0]:.4f} 降到 {own[-1]:.4f}；每一步之差最大 {difference.max():.2e} 纳特，"
      f"一位不差的步数 {int((difference == 0).sum())}/{COMPARE_STEPS}")
assert own[-1] < own[0] - 0.5, "这几十步应当学到东西：不然比较的只是两条平线"
assert difference.max() <= TOLERANCE, f"参考答案拼的 GPT 应和 minigpt 的 GPT 每步损失相差不超过 {TOLERANCE}"
my_guesses.reveal("bitwise_equal", "会" if difference.max() == 0 else "不会")

fig, (ax, ax_diff) = plt.subplots(1, 2, figsize=(11, 4))
for (name, curve), style in zip(curves.items(), ("-", "--")):
    english = "minigpt's own GPT" if name.startswith("minigpt") else "GPT from the reference answers"
    ax.plot(np.arange(1, COMPARE_STEPS + 1), curve, style, lw=2, label=label(name, english))
ax.set_xlabel(label("训练步数", "step"))
ax.set_ylabel(label("这一批上的损失（纳特/字符）", "batch loss (nats per character)"))
ax.set_title(label("同一颗种子：两条曲线重合", "Same seed: the two curves coincide"))
ax.legend()
ax_diff.semilogy(np.arange(1, COMPARE_STEPS + 1), np.maximum(difference, 1e-9), "o", ms=3)
ax_diff.axhline(TOLERANCE, color="crimson", ls="--",
                label=label(f"断言的上限 {TOLERANCE:g}", f"asserted bound {TOLERANCE:g}"))
ax_diff.set_xlabel(label("训练步数", "step"))
ax_diff.set_ylabel(label("两条曲线之差（纳特，0 画在 1e-9）", "|difference| (nats; 0 drawn at 1e-9)"))
ax_diff.set_title(label("差别只在 float32 的舍入里", "The difference is float32 rounding"))
ax_diff.legend()
fig.tight_layout()
show_figure(fig, "09_same_curve.png")

# %% [markdown]
# 上面的 LayerNorm 用的是练习 5.2 的前向：它的反向传播是 minigrad 顺着你写的每一步基本运算自动求出来的。
# 练习 5.5 里，你亲手推导过 LayerNorm 的反向传播，$g_x = r\,(g_y - \overline{g_y} - \hat{x}\,\overline{g_y\hat{x}})$。
# `learner_parts(..., derived_backward=True)` 把 LayerNorm 换成你在 5.5 写的那个 `mg.Function`（再乘 weight、加 bias）：
# 这样训练 GPT 的梯度里，每一层 LayerNorm 那一段都是用你推导的公式算的。它也应当走出同一条曲线。

# %%
try:
    derived_parts, derived_source = learner_parts("answers", derived_backward=True), "你的答案"
except PartError as why:
    print(f"！！ 没能用你的答案：{why}\n！！ 这里改用参考答案的 LayerNorm 反向传播（练习 5.5）")
    derived_parts, derived_source = learner_parts("solutions", derived_backward=True), "参考答案"
mg.manual_seed(SEED)
derived_gpt = gpt_from_parts(SMALL, derived_parts)
derived_curve = np.array(train_losses(derived_gpt, batches(ys.train, 12, SMALL.block_size, seed=0), COMPARE_STEPS, LR,
                                      warmup=10))
print(f"LayerNorm 的反向传播用{derived_source}（练习 5.5）：和 minigpt 的曲线每一步之差最大 "
      f"{np.abs(derived_curve - own).max():.2e} 纳特")
assert np.abs(derived_curve - own).max() <= TOLERANCE, "手推的反向传播应当训练出同一条曲线"

# %% [markdown]
# ## 4. 一个错的零件
#
# 现在故意写错。三个常见的错误：
#
# - **LayerNorm 忘了 eps**：方差几乎为 0 的那一行会除以一个极小的数。练习 5.2 的检查器专门放了这样一行。
# - **注意力忘了遮罩**：位置 i 看见了它后面的字——训练时等于偷看答案。练习 3.3 的检查器会认出来。
# - **LayerNorm 沿 `axis=1` 归一化**：这个错误更狡猾。检查器用的是二维输入 (4, 6)，`axis=1` 恰好就是最后一维，
#   检查器挑不出毛病；可在 GPT 里，残差流是三维的 (B, T, C)，`axis=1` 是时间那一维——它在跨位置求平均。
#   这种“过了检查器、到 GPT 的形状上才露馅”的错误，要靠第二关：在真实形状上和默认零件逐元素比较。

# %%
def layer_norm_without_eps(x, weight, bias, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / (centred * centred).mean(axis=-1, keepdims=True).sqrt() * weight + bias  # 少了 + eps


def attention_without_mask(q, k, v):
    return (q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])).softmax(axis=-1) @ v  # 没有遮住未来


def layer_norm_on_axis_1(x, weight, bias, eps=1e-5):
    centred = x - x.mean(axis=1, keepdims=True)  # 二维时是最后一维；三维 (B, T, C) 时是时间那一维
    return centred / ((centred * centred).mean(axis=1, keepdims=True) + eps).sqrt() * weight + bias


reference = {"causal_attention": lecture03.causal_attention, "layer_norm": lecture05.layer_norm,
             "split_heads": lecture05.split_heads}
broken = [("layer_norm", layer_norm_without_eps, "5.2"), ("causal_attention", attention_without_mask, "3.3"),
          ("layer_norm", layer_norm_on_axis_1, "5.2")]
for field, wrong, number in broken:
    verdict = "检查器放过了它" if grade(find(number), wrong).passed else "检查器拦下了它"
    print(f"{wrong.__name__}（当作 {field}）：{verdict}")
    try:
        parts_from({**reference, field: wrong})
    except PartError as refused:
        print(f"  → {refused}")
        assert refused.number == number  # 报错点名的是这个零件的练习
    else:
        raise AssertionError(f"{wrong.__name__} 应当被拒绝")
assert grade(find("5.2"), layer_norm_on_axis_1).passed  # 它确实骗过了检查器，是第二关拦下的

# %% [markdown]
# 如果不拦下来，会怎样？把“没有遮罩”的注意力绕过检查直接装进 GPT，做第 06 讲那个实验：只改动窗口里第 40 个字符，
# 看前面各位置的 logits 变不变。正确的 GPT 里，位置 0–39 的输出一点都不会变——它们看不见第 40 个字符；
# 没有遮罩的 GPT 里，前面的位置全变了：每个位置都看得见后面的字，而后面的字恰恰是它要猜的答案。
# 这样的模型训练久了会学会“抄答案”，损失好看，生成时却没有答案可抄。这就是为什么要先检查零件。

# %%
mg.manual_seed(SEED)
masked = gpt_from_parts(SMALL, reference_parts)
mg.manual_seed(SEED)
unmasked = gpt_from_parts(SMALL, dataclasses.replace(reference_parts, causal_attention=attention_without_mask))
window = ys.x[:1].copy()
changed = window.copy()
changed[0, 40] = (changed[0, 40] + 1) % ys.vocab_size  # 只改第 40 个字符
with mg.no_grad():
    moved = {name: np.abs(model(changed)[0].numpy() - model(window)[0].numpy())[0, :40].max()
             for name, model in (("有遮罩", masked), ("没有遮罩", unmasked))}
print(f"改动第 40 个字符后，位置 0–39 的 logits 最多变了：有遮罩 {moved['有遮罩']:.2e}，"
      f"没有遮罩 {moved['没有遮罩']:.2e}")
assert moved["有遮罩"] == 0 and moved["没有遮罩"] > 1e-4, "没有遮罩时，前面的位置看得见后面的字"

# %% [markdown]
# ## 5. 训练你的 GPT
#
# 现在训练第 2 节拼出的那个 GPT（用的是你的零件，或者参考答案）。和第 07 讲的小 GPT 一样大：2 层、4 个头、64 维，
# 上下文长度和尺子的窗口一样是 64 个字符。训练循环就是第 06 讲的那个：前向、反向、更新，AdamW，先预热再余弦退火。
# 你的零件是用基本运算拼的，比 minigrad 融合过的版本慢一些——这也是融合运算存在的理由。
# 快速版只训练几百步；完整版训练几分钟。
#
# **先猜一猜**：你的 GPT 训练完，在尺子上是多少纳特/字符？（参考：瞎猜是 $\ln V$，约 4.3；第 01 讲的二元模型约 2.5。）

# %%
my_guesses.guess("my_gpt_nats", 2.0, "你的 GPT 在尺子上（纳特/字符）", default=2.0)  # 改成你的猜测

# %%
STEPS, BATCH = (300, 12) if QUICK else (2000, 16)
mg.manual_seed(SEED)
my_gpt = gpt_from_parts(SMALL, my_parts)
start = time.perf_counter()
train_curve = train_losses(my_gpt, batches(ys.train, BATCH, SMALL.block_size, seed=1), STEPS, LR, warmup=50)
my_seconds = time.perf_counter() - start
my_score = ys.score_logits(my_gpt)
print(f"{STEPS} 步、每批 {BATCH} 个窗口，用时 {my_seconds:.0f} 秒；{my_gpt.num_parameters():,} 个参数")
print(f"你的 GPT（零件来自{source}）在尺子上：{my_score} 纳特/字符")
my_guesses.reveal("my_gpt_nats", my_score.nats)
assert my_score.nats < math.log(ys.vocab_size) - 1.5, "训练应当让它远好于瞎猜"

# %% [markdown]
# ## 6. 上梯子
#
# 梯子上的其他几级来自第 01 讲的记录（瞎猜、一元、二元、加 β 的 5 元模型、Kneser-Ney；单独打开这一讲时，
# 下面会先把第 01 讲运行一遍），随课程附带的 GPT（第 07 讲打过分的那个检查点：4 层、112 维，
# 在 CPU 上训练了一个多小时），和第 07 讲 §5 那次长训练的 GPT（只附带了它在尺子上每个字符的损失）。
# 它们读的是尺子上同一批窗口，所以可以逐窗口比较：差距的误差比各自分数的误差小得多。

# %%
rungs = ladder.ensure("01", ys)
PRETRAINED = Path(tutorials.__file__).parent / "pretrained" / "shakespeare"
shipped_model, shipped_tokenizer = load_model(PRETRAINED)
assert shipped_tokenizer.chars == ys.tokenizer.chars  # 同样的字符，同样的编号
about = json.loads((PRETRAINED / "training.json").read_text(encoding="utf-8"))
shipped_score = ys.score_logits(shipped_model)
rungs.append(ladder.Rung(key="pretrained_gpt", name="GPT（随课程附带）", lecture="07",
                         size=shipped_model.num_parameters(), size_kind="parameters",
                         train_seconds=about["wall_seconds"], score=shipped_score))
long_record, long_losses = scaling.load_long_run()  # 第 07 讲 §5 预测、又真跑过一遍的那次长训练（只附带了它的分数）
assert long_record["yardstick"]["fingerprint"] == ys.fingerprint
rungs.append(ladder.Rung(key="long_run_gpt", name="GPT（第 07 讲的长训练）", lecture="07",
                         size=long_record["parameters"], size_kind="parameters",
                         train_seconds=long_record["training_seconds"], score=Score(long_losses)))
rungs.append(ladder.Rung(key="my_gpt", name=f"你的 GPT（{source}）", lecture="09", size=my_gpt.num_parameters(),
                         size_kind="parameters", train_seconds=my_seconds, score=my_score))
rungs.sort(key=lambda r: -r.score.nats)
for rung in rungs:
    gap, err = my_score.gap(rung.score)
    versus = "" if rung.key == "my_gpt" else f"你的 GPT 比它 {gap:+.3f} ± {err:.3f}"
    print(f"{rung.name:24s}\t{rung.score}\t{versus}")
by_key = {r.key: r for r in rungs}
bigram_gap, bigram_err = my_score.gap(by_key["bigram"].score)
assert bigram_gap < -3 * bigram_err, "你的 GPT 应当比只看前一个字符的二元模型好"
for key in ("ngram", "kneser_ney"):  # 看前几个字符的计数模型，它（还）赢不了
    gap, err = my_score.gap(by_key[key].score)
    assert gap > 3 * err, f"训练几分钟的小 GPT 还赢不了{by_key[key].name}"
for gpt in ("pretrained_gpt", "long_run_gpt"):
    for key in ("ngram", "kneser_ney"):
        gap, err = by_key[gpt].score.gap(by_key[key].score)
        print(f"{by_key[gpt].name}比 {by_key[key].name}：{gap:+.3f} ± {err:.3f}"
              f"（{'赢了' if gap < -3 * err else '还没赢'}）")

# %%
ENGLISH = {"uniform": "uniform guess", "unigram": "unigram", "bigram": "bigram", "kneser_ney": "Kneser-Ney",
           "pretrained_gpt": "GPT shipped with the course", "long_run_gpt": "GPT of lecture 07's long run",
           "my_gpt": "your GPT"}
fig, (ax, ax_curve) = plt.subplots(1, 2, figsize=(13, 5), gridspec_kw={"width_ratios": [1.2, 1]})
ys_pos = np.arange(len(rungs))
colors = ["crimson" if r.key == "my_gpt" else "gray" if r.size_kind == "counts" else "steelblue" for r in rungs]
ax.barh(ys_pos, [r.score.nats for r in rungs], color=colors, xerr=[2 * r.score.stderr for r in rungs])
names = [label(r.name, ENGLISH.get(r.key, f"{r.extra.get('order', 0) + 1}-gram")) for r in rungs]
ax.set_yticks(ys_pos, names)
for y, rung in zip(ys_pos, rungs):
    ax.text(rung.score.nats + 0.05, y, f"{rung.score.nats:.2f}", va="center")
ax.set_xlim(0, max(r.score.nats for r in rungs) * 1.12)
ax.invert_yaxis()
ax.set_xlabel(label("尺子上的交叉熵（纳特/字符，越低越好）", "held-out cross-entropy (nats per character)"))
ax.set_title(label("梯子（灰：数出来的；蓝：附带的；红：你的）",
                   "The ladder (gray: counted; blue: shipped; red: yours)"))
ax_curve.plot(np.arange(1, STEPS + 1), train_curve, lw=0.8, color="crimson",
              label=label("你的 GPT：每批的损失", "your GPT: batch loss"))
for key, color in (("bigram", "gray"), ("ngram", "black"), ("kneser_ney", "purple")):
    rung = by_key[key]
    ax_curve.axhline(rung.score.nats, color=color, ls="--", lw=1,
                     label=label(f"{rung.name}（尺子上）", f"{ENGLISH.get(key, '5-gram')} (yardstick)"))
ax_curve.set_xlabel(label("训练步数", "step"))
ax_curve.set_ylabel(label("纳特/字符", "nats per character"))
ax_curve.set_title(label("你的 GPT 的训练曲线，和计数模型的分数", "Your GPT's training curve and the counting rungs"))
ax_curve.set_ylim(1.2, 4.5)
ax_curve.legend(fontsize=8)
fig.tight_layout()
show_figure(fig, "09_ladder.png")

# %% [markdown]
# 读这张图：你的 GPT 比只看前一个字符的二元模型好——它看得见前面 64 个字符。可它还在 5 元模型和 Kneser-Ney 之上：
# 这两个计数模型把训练文本里几十万到几百万种前文的计数都记了下来，而你的 GPT 只有十万个左右的参数、只训练了几分钟。
# 附带的 GPT 大好几倍、训练了一个多小时，越过了 5 元模型，还在 Kneser-Ney 之上。梯子最低的一级是第 07 讲 §5
# 从规模曲线预测、又真跑过一遍的那次长训练：4 层、160 维，读了训练文本七遍半，在两个 CPU 核上练了 49 分钟，
# 两个计数模型都越过了（差距上面打印了）。GPT 赢在能用更长的前文、能在相似的前文之间共享所学，
# 而这些都要靠计算量换来。从你的 GPT 到梯子最低处的距离，就是这笔账。

# %% [markdown]
# ## 7. 让它写一段
#
# 最后让你的 GPT 续写。抽下一个字用的是你在练习 6.5 写的 `sample_next`
# （先过它的检查器；没写好就换成参考答案，同样大声说出来）。
# 每一步把最后 64 个字符送进模型，取最后一个位置的 logits，交给 `sample_next`。

# %%
sample_next = answers("06").sample_next
if not grade(find("6.5"), sample_next).passed:
    print("！！ 练习 6.5（抽一个词元）还没通过：这里改用参考答案的 sample_next")
    sample_next = answers("06", solutions=True).sample_next
rng = np.random.default_rng(0)
ids = ys.tokenizer.encode("ROMEO:\n")
with mg.no_grad():
    for _ in range(120 if QUICK else 300):
        logits, _ = my_gpt(np.array([ids[-SMALL.block_size:]]))
        ids.append(sample_next(logits.numpy()[0, -1].astype(np.float64), rng, temperature=0.8, top_k=20))
text = ys.tokenizer.decode(ids)
print(text)
assert len(text) > 100

# %% [markdown]
# ## 小结
#
# - 一个 GPT 里“算东西”的函数只有几个：LayerNorm、切头、因果注意力、GELU。你写过其中三个；
#   先建好 `minigpt` 的 GPT，再像 PyTorch 里那样换上用它们算的模块（`tutorials/parts.py`），就装进去了。
# - 用参考答案拼的 GPT 和 `minigpt` 的 GPT 每一步损失之差在 float32 的舍入之内：它们是同一个模型。
# - 错的零件有两种：检查器认得出的，和只在 GPT 的形状上才露馅的。两关都过了才装进去，报错点名是哪道练习。
# - 你的 GPT 上了梯子：比看一个字符的计数模型好，还没赢过把训练文本记得更多的计数模型；要赢，靠的是规模。

# %%
my_guesses.calibration()
print(f"本讲用时 {time.time() - T_START:.1f} 秒")
