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
# # 09 总结项目：你的 GPT，从头到尾
#
# 前面几讲，你一道题一道题地写过 GPT 的零件：第 00 讲的张量引擎（`Tensor`、拓扑序、反向传播和每个运算的梯度），
# 第 03 讲的 softmax 和因果注意力，第 05 讲的 LayerNorm（前向和反向）和切头，第 06 讲的一批数据和采样，
# 第 07 讲的配对差距；
# 这一讲的练习（`tutorials/exercises/lecture09.py`）再补上词元嵌入、MLP、Block 的残差接法、损失、学习率、
# AdamW 和训练的一步。
# 这一讲把它们装成**你自己的 GPT**：参数名和 GPT-2、`minigpt` 一样，训练它的循环是你写的，它跑在**你自己的引擎**上——
# 除了 NumPy（和 erf 的值、零件之间的几行接线），从矩阵乘法的梯度到 AdamW 的每一步，都出自你的答案。
#
# 实验清单：
#
# 1. 谁写了什么：一张表列出每个零件（引擎的每一部分也在内）、出自哪道练习、谁写的、检查过没有；
# 2. 同样的权重，同样的输出：把 `minigpt` 的权重装进你的 GPT，在 float64 里比较 logits 和每一个参数的梯度；
# 3. 同一颗种子，同一条曲线：你的训练循环和 `minigpt` 的，逐步比较损失；AdamW 和梯度裁剪为什么这样写；
# 4. 三道关：检查器、模型形状上的比对、整个 GPT 和 minigrad 的引擎上的比对——一个错的零件在哪一关被拦下；
# 5. 训练你的 GPT：你的引擎比 minigrad 的慢多少，慢在哪里（量出来）；
# 6. 上梯子：完整版断言它越过加 β 的 5 元模型；
# 7. 让它写一段。
#
# 运行：`python tutorials/09_capstone.py`（完整版）；`TUTORIAL_QUICK=1 python tutorials/09_capstone.py`（快速版）。
# 图片写到 `figures/`（在当前目录下）。

# %% [markdown]
# **学完这一讲，你能**：说出一个 GPT、它的训练循环和它下面的自动求导引擎由哪些函数组成，并且每一个都亲手写过；
# 把 `minigpt` 的权重装进自己的模块，验证输出和梯度在 float64 里相同到 1e-10；
# 说出 AdamW 的每一项和梯度裁剪为什么这样写；
# 量出一个只用 NumPy 组合出来的引擎慢在哪里；把自己训练的模型放上梯子，用逐窗口的差距说清它比谁好。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（在 2 核 CPU 上实测）。完整版的大部分时间在第 5 节的训练上。

# %%
import tutorials
from tutorials.course import FIGURES, QUICK, T_START, label, show_figure  # 最先导入：它先限定 BLAS 线程数

# isort: split
import json
import math
import re
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigpt import GPT, GPTConfig
from minigpt.checkpoint import load_model
from tutorials import crossing, ladder, scaling, yardstick
from tutorials.capstone import (
    YOUR_RECIPE,
    Parts,
    YourGPT,
    at_model_shapes,
    fall_back_if,
    load_parts,
    train,
    train_minigpt,
)
from tutorials.engines import MINIGRAD
from tutorials.exercises import find
from tutorials.exercises.grading import grade
from tutorials.predictions import Predictions
from tutorials.solutions import lecture03, lecture05

my_guesses = Predictions("09", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_09.json）
ys = yardstick.load()  # 课程的尺子：验证集里固定的 512 个窗口，每个 64 个字符
print(f"词表大小 V = {ys.vocab_size}，尺子上有 {ys.y.size:,} 个要猜的字符")

# %% [markdown]
# ## 1. 谁写了什么
#
# `load_parts()`（`tutorials/capstone.py`）从你的答案文件里读出每一个零件，先交给它那道练习的检查器
# （和 `python -m tutorials.exercises check` 同一个），再在模型的真实形状上——四维的 (B, nh, T, hs)、float32——
# 和参考答案比较输出与梯度。两关都过，零件才算你的；哪一个没过（还没写、写错了、文件导入出错、只在模型形状上才露馅、
# 算出了 NaN），这一讲不会停下：它用一行话点名那道练习和检查它的命令，**只把这一个零件**换成参考答案。
#
# 引擎也一样（`tutorials/your_engine.py`）：第 00 讲的 20 道引擎练习各过它自己的检查器。一个运算没过，
# 你的引擎里只有这一个
# 运算换成参考答案的；骨架（`sum_to`、`Tensor`、`apply`、拓扑序、反向传播）有一处没过，
# 整个 GPT 改在 minigrad 的引擎上跑——
# 骨架错了，哪个运算都靠不住。最后还有一道关：把零件装在你的引擎上，和装在 minigrad 的引擎上的同一个小 GPT 比一比
# （float64），对不上也改用 minigrad 的引擎。每一种情况都是一行话，从不报错停下。
# 把练习写好再运行这一讲，下面训练、打分、上梯子的，就是你自己的 GPT，跑在你自己的引擎上。

# %%
parts = load_parts("answers")
print(parts.table())
for note in parts.notes:
    print("！！", note)
print(f"\n{parts.count()} 个零件（引擎的 20 个，模型和训练的 15 个）里，{parts.mine()} 个是你写的；"
      f"你的 GPT 跑在{parts.engine.name}上")

# %% [markdown]
# ## 2. 同样的权重，同样的输出
#
# 你的 GPT（`YourGPT`）的参数名和 `minigpt` 的一模一样：`transformer.wte.weight`、`transformer.h.0.attn.c_attn.weight`……
# 所以一行 `load_state_dict` 就能把 `minigpt` 的 GPT 的权重装进来。装好之后，两个模型应当是同一个函数：
# 同一批输入，logits 相同，损失相同，每一个参数的梯度也相同——哪怕一个用的是 `minigpt` 融合过的零件和 minigrad 的引擎，
# 另一个是你的零件，跑在你的引擎上。
#
# “相同”要说清楚精度。先在 float64 里比：两边只是按不同的顺序做同样的算术，舍入误差在 1e-16 上下，链式法则一路乘下来
# 也远不到 1e-10。这里断言 logits 和每个参数的梯度，相对之差都不超过 1e-10——一个错的梯度（少一项、转置、少加一次）
# 差的是百分之几到几倍。再在训练用的 float32 里比：float32 只有约 7 位有效数字，两边会在第 7 位上差一点，
# 断言 logits 之差不超过 1e-5、梯度的相对之差不超过 1e-4。
#
# **先猜一猜**：在 float32 里，你的 GPT 和 `minigpt` 的 GPT，logits 会一位不差吗？

# %%
my_guesses.guess("bitwise_equal", "还没猜", "装了同样权重的两个 GPT，logits 会一位不差吗",
                 options=["会", "不会"])  # 换成你的猜测

# %%
SMALL = GPTConfig(vocab_size=ys.vocab_size, block_size=yardstick.WINDOW, n_layer=2, n_head=4, n_embd=64)
SEED = 7
x, y = ys.x[:8], ys.y[:8]


def logits_and_grads(model_parts: Parts, dtype) -> tuple:
    """minigpt's GPT and yours, the same weights, in `dtype`: (their logits, yours, {参数名: (它的梯度, 你的)})."""
    mg.manual_seed(SEED)
    theirs = GPT(SMALL).to(dtype=dtype)
    mine = YourGPT(SMALL, model_parts, dtype=dtype)  # 在 model_parts.engine 上：你的引擎（它过了检查的话）
    mine.load_state_dict(theirs.state_dict())
    assert [n for n, _ in mine.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    (their_logits, their_loss), (my_logits, my_loss) = theirs(x, y), mine(x, y)
    their_loss.backward()
    my_loss.backward()
    mine_by_name = dict(mine.named_parameters())
    grads = {name: (p.grad.numpy(), mine_by_name[name].grad.numpy()) for name, p in theirs.named_parameters()}
    return their_logits.numpy(), my_logits.numpy(), grads


def relative_gaps(grads: dict) -> dict:
    return {name: float(np.abs(g - h).max() / (np.abs(g).max() + 1e-30)) for name, (g, h) in grads.items()}


def model_differs(model_parts: Parts) -> str | None:
    """差得太多时说差多少（float32，训练用的精度；下面的断言不点名练习，差了就让 fall_back_if 找出是哪个零件）"""
    their_logits, my_logits, grads = logits_and_grads(model_parts, np.float32)
    gap, worst = float(np.abs(their_logits - my_logits).max()), max(relative_gaps(grads).values())
    return None if gap <= 1e-5 and worst <= 1e-4 else f"同样的权重，logits 差 {gap:.1e}、梯度的相对之差最大 {worst:.1e}"


note = fall_back_if(parts, ("embed", "layer_norm_function", "layer_norm", "split_heads", "softmax",
                            "causal_attention", "mlp", "block", "lm_loss"), model_differs)
if note:
    print("！！", note)
for dtype in (np.float64, np.float32):
    their_logits, my_logits, grads = logits_and_grads(parts, dtype)
    logit_gap = float(np.abs(their_logits - my_logits).max() / np.abs(their_logits).max())
    grad_gaps = relative_gaps(grads)
    worst = max(grad_gaps, key=grad_gaps.get)
    print(f"{np.dtype(dtype).name}：logits 相对之差最大 {logit_gap:.1e}；{len(grad_gaps)} 个参数的梯度里，"
          f"相对之差最大的是 {worst}：{grad_gaps[worst]:.1e}")
    if dtype == np.float64:
        assert logit_gap <= 1e-10, "装了同样权重，你的 GPT 应和 minigpt 的 GPT 算出同样的 logits（float64）"
        assert max(grad_gaps.values()) <= 1e-10, "每一个参数的梯度都应相同（float64 里到 1e-10）"
    else:
        assert np.abs(their_logits - my_logits).max() <= 1e-5 and max(grad_gaps.values()) <= 1e-4  # float32 的舍入
        my_guesses.reveal("bitwise_equal", "会" if np.array_equal(their_logits, my_logits) else "不会")

# %% [markdown]
# ## 3. 同一颗种子，同一条曲线
#
# 输出和梯度一样还不够：训练循环也是你写的——一批数据（6.1）、学习率（9.5）、前向、反向、裁剪、AdamW（9.7、9.6）。
# 练习 9.6 和 9.7 只说了要做什么；它们为什么这样写，在这里推一遍。
#
# **AdamW 的一步（9.6）。** 梯度 $g$ 每一步都有噪声（每批只有 32 段）。Adam 记两个指数滑动平均：
# $m \leftarrow \beta_1 m + (1-\beta_1) g$ 是梯度的平均方向（动量），
# $v \leftarrow \beta_2 v + (1-\beta_2) g^2$ 是每个元素梯度平方的平均，
# 即它的典型大小。每个元素按自己的大小走一步：$\Delta p = -\mathrm{lr}\cdot \hat m / (\sqrt{\hat v} + \epsilon)$，
# 梯度一直很小的参数和一直很大的参数，走的步子差不多大。
#
# - **偏差修正。** $m$ 和 $v$ 从 0 开始。若每一步的 $g$ 的期望都是 $\bar g$，展开 $t$ 步之后
#   $\mathbb E[m_t] = (1-\beta_1)\sum_{s=1}^{t}\beta_1^{t-s}\bar g = (1-\beta_1^t)\,\bar g$：前几步它偏向 0，
#   偏了一个因子
#   $1-\beta_1^t$。除回去就是无偏的：$\hat m = m/(1-\beta_1^t)$，$\hat v = v/(1-\beta_2^t)$。$\beta_2 = 0.99$ 时，
#   不修正的话
#   第一步的 $v$ 只有应有值的百分之一，步子大了十倍。
# - **解耦的权重衰减。** 把 $\lambda p$ 加进梯度（L2 正则）再交给 Adam，它也会被除以 $\sqrt{\hat v}$：
#   梯度大的参数几乎不衰减，
#   梯度小的衰减得过头。AdamW 把衰减从梯度里拿出来，直接乘在参数上：$p \leftarrow p\,(1 - \mathrm{lr}\cdot\lambda)$，
#   每个参数按同样的比例缩小（Loshchilov 和 Hutter）。$\epsilon$ 加在 $\sqrt{\hat v}$ 之外，只防止除以 0。
#
# **训练的一步（9.7）。** 先前向算出损失；再清掉上一步的梯度——你的引擎（第 00 讲的 0.11）和 minigrad 一样，
# 梯度在多次 `backward` 之间是**累加**的——然后反向传播。偶尔一批数据的梯度特别大（比如训练刚开始），一步就能把参数推远：
# 裁剪把**所有参数的梯度当成一个长向量**，它的长度（范数）超过 `grad_clip` 时，整体缩短到 `grad_clip`。
# 整体缩放不改方向；
# 逐个参数各自裁剪会改变方向。没超过时不动——缩放系数是 $\min(1, \mathrm{clip}/\lVert g\rVert)$，
# 不是总把长度拉到 `clip`。
# 最后对每个参数调用 AdamW，只有矩阵衰减（偏置和 LayerNorm 的 $\gamma$、$\beta$ 不衰减，和 `minigpt train` 一样）。
#
# 下面把同样的初始权重分别交给你的循环（在你的引擎上）和 `minigpt` 的零件（它的 `AdamW`、`clip_grad_norm_`、
# `cosine_with_warmup`），用同样的批训练几十步，逐步比较损失。每一步都在上一步的权重上继续，舍入误差会被带下去，
# 但几十步之内仍是百万分之几纳特：断言每一步之差不超过 1e-4 纳特。

# %%
TOLERANCE = 1e-4
COMPARE_STEPS = 30 if QUICK else 60
LR = 3e-3


def fresh_gpt() -> GPT:
    mg.manual_seed(SEED)  # 同一颗种子：同样的初始权重
    return GPT(SMALL)


def my_curve(model_parts: Parts) -> np.ndarray:
    mine = YourGPT(SMALL, model_parts)
    mine.load_state_dict(fresh_gpt().state_dict())
    return np.array(train(mine, model_parts, ys.train, COMPARE_STEPS, 12, LR, warmup=10, seed=0))


theirs = fresh_gpt()
own = np.array(train_minigpt(theirs, ys.train, COMPARE_STEPS, 12, LR, warmup=10, seed=0))
curves = {}


def loop_differs(model_parts: Parts) -> str | None:
    """两条曲线差得太多时说差多少（这一格的断言不点名练习；差了就让 fall_back_if 找出是哪个零件）"""
    curves[id(model_parts)] = my_curve(model_parts)
    gap = float(np.abs(own - curves[id(model_parts)]).max())
    return None if gap <= TOLERANCE else f"{COMPARE_STEPS} 步里和 minigpt 的损失最多差 {gap:.1e} 纳特"


note = fall_back_if(parts, ("make_batch", "lr_at", "train_step"), loop_differs)
if note:
    print("！！", note)
yours = curves[id(parts)] if note is None else my_curve(parts)
difference = np.abs(own - yours)
print(f"{COMPARE_STEPS} 步：损失从 {own[0]:.4f} 降到 {own[-1]:.4f}；每一步之差最大 {difference.max():.2e} 纳特")
assert own[-1] < own[0] - 0.5, "这几十步应当学到东西：不然比较的只是两条平线"
assert difference.max() <= TOLERANCE, f"你的训练循环应和 minigpt 的每步损失相差不超过 {TOLERANCE}"

fig, (ax, ax_diff) = plt.subplots(1, 2, figsize=(11, 4))
steps = np.arange(1, COMPARE_STEPS + 1)
ax.plot(steps, own, "-", lw=2, label=label("minigpt 的零件", "minigpt's pieces"))
ax.plot(steps, yours, "--", lw=2, label=label("你的 GPT 和你的循环", "your GPT, your loop"))
ax.set_xlabel(label("训练步数", "step"))
ax.set_ylabel(label("这一批上的损失（纳特/字符）", "batch loss (nats per character)"))
ax.set_title(label("同样的权重、同样的批：两条曲线重合", "Same weights, same batches: the curves coincide"))
ax.legend()
ax_diff.semilogy(steps, np.maximum(difference, 1e-9), "o", ms=3)
ax_diff.axhline(TOLERANCE, color="crimson", ls="--", label=label(f"断言的上限 {TOLERANCE:g}", f"bound {TOLERANCE:g}"))
ax_diff.set_xlabel(label("训练步数", "step"))
ax_diff.set_ylabel(label("两条曲线之差（纳特，0 画在 1e-9）", "|difference| (nats; 0 drawn at 1e-9)"))
ax_diff.set_title(label("差别只在 float32 的舍入里", "The difference is float32 rounding"))
ax_diff.legend()
fig.tight_layout()
show_figure(fig, "09_same_curve.png")

# %% [markdown]
# ## 4. 三道关
#
# 一个零件要过两道关。第一关是它那道练习的检查器；第二关是在模型的真实形状上和参考答案比较（`at_model_shapes`）。
# 引擎的零件另有第三道关（第 1 节）：整个 GPT 装在你的引擎上，和装在 minigrad 的引擎上的比（float64）——
# 一个每道题都过了、却改坏了写好给你的那部分（比如 `Tensor.mean` 除错了个数）的引擎，就在这里被拦下。
# 模型零件的三个常见错误：
#
# - **LayerNorm 沿 `axis=1` 归一化**：二维输入 (4, 6) 上，`axis=1` 恰好就是最后一维；可在 GPT 里残差流是 (B, T, C)，
#   `axis=1` 是时间那一维——它在跨位置求平均。练习 5.2 的检查器现在也用三维、四维的输入试，第一关就拦下了它。
# - **注意力的缩放读成了 `q.shape[2]`**：三维 (B, T, hs) 时它是 hs，是对的；在 GPT 的四维 (B, nh, T, hs) 上它是 T。
#   练习 3.3 的检查器用 T ≠ hs 的四维输入试，第一关拦下；就算第一关漏了，第二关在模型形状上也拦得住。
# - **注意力忘了遮罩**：位置 i 看见了它后面的字——训练时等于偷看答案。两关都拦得住。

# %%
def layer_norm_on_axis_1(x, weight, bias, eps=1e-5):
    centred = x - x.mean(axis=1, keepdims=True)  # 二维时是最后一维；三维 (B, T, C) 时是时间那一维
    return centred / ((centred * centred).mean(axis=1, keepdims=True) + eps).sqrt() * weight + bias


def attention_scaled_by_shape_2(q, k, v):
    T = q.shape[-2]
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[2])  # 三维时 shape[2] 是 hs；四维时是 T
    return lecture03.softmax(scores.masked_fill(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf)) @ v


def attention_without_mask(q, k, v):
    return lecture03.softmax(q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])) @ v  # 没有遮住未来


broken = [("layer_norm", layer_norm_on_axis_1, lecture05.layer_norm, "5.2"),
          ("causal_attention", attention_scaled_by_shape_2, lecture03.causal_attention, "3.3"),
          ("causal_attention", attention_without_mask, lecture03.causal_attention, "3.3")]
for key, wrong, right, number in broken:
    first = grade(find(number), wrong)
    second = at_model_shapes(key, wrong, right)
    print(f"{wrong.__name__}（练习 {number}）\n  第一关（检查器）：{'放过了' if first.passed else first.message}"
          f"\n  第二关（模型形状）：{'放过了' if second is None else second}")
    assert not first.passed and second is not None, f"{wrong.__name__} 两关都应拦下"
assert not grade(find("5.2"), layer_norm_on_axis_1).passed  # 检查器不再被 axis=1 骗过

# %% [markdown]
# 如果不拦下来，会怎样？把“没有遮罩”的注意力绕过两道关直接装进你的 GPT，只改动窗口里第 40 个字符，
# 看前面各位置的 logits 变不变。有遮罩时，位置 0–39 的输出一点都不会变；没有遮罩时，前面的位置全变了：
# 每个位置都看得见后面的字，而后面的字恰恰是它要猜的答案。这样的模型训练时损失好看，生成时却没有答案可抄。

# %%
unmasked_parts = Parts({**parts.functions, "causal_attention": attention_without_mask}, parts.writer, parts.status,
                       engine_parts=parts.engine_parts)
window = ys.x[:1].copy()
changed = window.copy()
changed[0, 40] = (changed[0, 40] + 1) % ys.vocab_size  # 只改第 40 个字符
moved = {}
for name, model_parts in (("有遮罩", parts), ("没有遮罩", unmasked_parts)):
    model = YourGPT(SMALL, model_parts)
    model.load_state_dict(theirs.state_dict())
    with model.engine.no_grad():
        moved[name] = float(np.abs(model(changed)[0].numpy() - model(window)[0].numpy())[0, :40].max())
print(f"改动第 40 个字符后，位置 0–39 的 logits 最多变了：有遮罩 {moved['有遮罩']:.2e}，"
      f"没有遮罩 {moved['没有遮罩']:.2e}")
assert moved["有遮罩"] == 0 and moved["没有遮罩"] > 1e-4, "没有遮罩时，前面的位置看得见后面的字"

# %% [markdown]
# ## 5. 训练你的 GPT
#
# 第 07 讲 §2 用 `minigpt train` 跑过一套越过加 β 的 5 元模型的设置（`tutorials/crossing.py`）：4 层、128 维、4 个头，
# 每步 32 段 64 个字符，学习率 3e-3，预热 100 步，2000 步里余弦退火到十分之一。这里训练的是你的 GPT，用你的循环，
# 在你的引擎上。它和 `minigpt` 是同一个模型、同一种训练（第 2、3 节刚验证过），区别只在速度：你的零件是一串基本运算，
# 你的引擎的每个运算都是最直接的 NumPy 写法。设置（`capstone.YOUR_RECIPE`）是在训练文本切出的开发集上挑的，没看尺子：
# 在时间够用的几套里（2000 步 × 每步 32 段或 24 段，1500 步、1200 步 × 32 段），2000 × 32 段在开发集上离 5 元模型最远
# （好 0.103 ± 0.011），一步也只要零点几秒——就是第 07 讲那一套。先在尺子上试过的 2000 × 24 段只好 0.024 ± 0.010，
# 离两个标准误的线太近：开发集上的差距（0.070）比尺子上的大三倍左右，挑的时候要留出余量。
# 快速版只跑开头 120 步，和随课程附带的那次 `minigpt` 完整运行（`tutorials/records/crossing.json`）画在一起；
# 完整版跑完 2000 步。
#
# 先量一量：同一台机器、同一个时刻，三种组合各走几步——`minigpt`（融合过的零件，minigrad 的引擎），
# 你的零件在 minigrad 的引擎上，你的零件在你的引擎上。
#
# **先猜一猜**：你的 GPT 在你的引擎上，每一步比在 minigrad 的引擎上慢几倍？

# %%
my_guesses.guess("slowdown", "还没猜", "你的 GPT 在你的引擎上，每一步比在 minigrad 的引擎上慢几倍")  # 换成你的猜测

# %%
RECIPE = YOUR_RECIPE
BIG = GPTConfig(vocab_size=ys.vocab_size, block_size=RECIPE["block-size"], n_layer=RECIPE["n-layer"],
                n_head=RECIPE["n-head"], n_embd=RECIPE["n-embd"])
STEPS = 120 if QUICK else RECIPE["max-iters"]
BATCH = RECIPE["batch-size"]
mg.manual_seed(SEED)
reference_model = GPT(BIG)
my_gpt = YourGPT(BIG, parts)
my_gpt.load_state_dict(reference_model.state_dict())  # minigpt 的初始化：你的 GPT 没有自己的初始化代码
TIMING_STEPS, REPEATS = 3, 3


def cpu_seconds_per_step(make, run) -> float:
    """The fewest CPU seconds a step took, over REPEATS runs of TIMING_STEPS steps (other programs add, never take)."""
    times = []
    for _ in range(REPEATS):
        model = make()
        start = time.process_time()
        run(model)
        times.append((time.process_time() - start) / TIMING_STEPS)
    return min(times)


def yours_on(engine):
    def make():
        model = YourGPT(BIG, parts, engine=engine)
        model.load_state_dict(reference_model.state_dict())
        return model
    return make


def your_loop(model):
    train(model, parts, ys.train, TIMING_STEPS, BATCH, RECIPE["lr"], RECIPE["warmup-iters"], seed=2)


fused_step = cpu_seconds_per_step(lambda: GPT(BIG), lambda model: train_minigpt(
    model, ys.train, TIMING_STEPS, BATCH, RECIPE["lr"], RECIPE["warmup-iters"], seed=2))
minigrad_step = cpu_seconds_per_step(yours_on(MINIGRAD), your_loop)
my_step = cpu_seconds_per_step(yours_on(parts.engine), your_loop)
print(f"每一步的 CPU 时间：minigpt {fused_step:.2f} 秒；你的零件，minigrad 的引擎 {minigrad_step:.2f} 秒；"
      f"你的零件，{parts.engine.name} {my_step:.2f} 秒")
slowdown = my_step / minigrad_step
print(f"你的引擎比 minigrad 的慢 {slowdown:.1f} 倍，比 minigpt 慢 {my_step / fused_step:.1f} 倍")
my_guesses.reveal("slowdown", round(slowdown, 1))
assert my_step > fused_step, "融合过的零件、编译过的内核，应当比一串基本运算快"

# %% [markdown]
# **慢在哪里。** 两边做的是同样的算术，矩阵乘法用的是同一个 BLAS。差别在 minigrad 的引擎多做的几件事，
# 下面一样一样量（同样的形状，一步里各做几次就量几次）：
#
# 1. **把批量折进一个矩阵乘法。** 每个 `Linear` 是 `(B, T, C) @ (C, D)`。你的 `MatMul` 交给 NumPy 的批量乘法：前向、
#    反向里 $g\,W^\top$ 都按 B 段逐段算，权重的梯度 $\sum_b x_b^\top g_b$ 先得到 B 个 $(C, D)$ 的乘积，
#   再由 `sum_to` 加起来。
#    minigrad 的 `MatMul` 把 $(B, T)$ 摊平成 $BT$ 行：每一步都是一个大的二维乘积，权重的梯度直接就是和——
#    乘法次数一样，少一个 B 倍大的中间数组，BLAS 也更擅长一个大乘积。
# 2. **切片的梯度不用 `np.add.at`。** 切开 q、k、v（和 `wpe[:T]`）的梯度，你的 `GetItem` 用 `np.add.at` 逐个元素加回去
#    （它要照顾重复的下标）；切片不会重复，minigrad 直接把 `gy` 放进一块零数组的那一段。
#
# 此外，minigrad 把梯度尽量原地累加、少建新数组（缓冲区复用），装了 `[fast]` 时 erf 等是编译过的内核；
# 这些没有单独量（erf 在这里两边差不多快）。`minigpt` 还要快一截：它的 LayerNorm、softmax、GELU、交叉熵是融合过的
# （一个运算、手推的反向传播），注意力是一个内核——你的零件在两个引擎上都是一串基本运算。

# %%
rng_t = np.random.default_rng(0)
C, T = BIG.n_embd, BIG.block_size


def best_ms(run, repeats=5) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        run()
        times.append(time.process_time() - start)
    return 1000 * min(times)


def batched_linear(x, w, g):  # 你的引擎的做法：NumPy 的批量乘积，再沿 B 做 sum_to
    return x @ w, g @ w.T, (x.swapaxes(-1, -2) @ g).sum(axis=0)


def folded_linear(x, w, g):  # minigrad 的 MatMul 的做法：折成 (B·T, C) 行，各只做一次乘积
    x2, g2 = x.reshape(-1, x.shape[-1]), g.reshape(-1, g.shape[-1])
    return x2 @ w, g2 @ w.T, x2.T @ g2


widths = [(C, 3 * C), (C, C), (C, 4 * C), (4 * C, C)] * BIG.n_layer + [(C, ys.vocab_size)]  # every Linear, lm_head
batched = folded = 0.0
for d_in, d_out in widths:
    xs = rng_t.standard_normal((BATCH, T, d_in)).astype(np.float32)
    ws = rng_t.standard_normal((d_in, d_out)).astype(np.float32)
    gs = rng_t.standard_normal((BATCH, T, d_out)).astype(np.float32)
    batched += best_ms(lambda xs=xs, ws=ws, gs=gs: batched_linear(xs, ws, gs))
    folded += best_ms(lambda xs=xs, ws=ws, gs=gs: folded_linear(xs, ws, gs))
q_grad = rng_t.standard_normal((BATCH, T, C)).astype(np.float32)
qkv_grad = np.zeros((BATCH, T, 3 * C), dtype=np.float32)
one_slice = (slice(None), slice(None), slice(0, C))
slices = 3 * BIG.n_layer + 1  # 每个块的 q、k、v，再加 wpe[:T]
scatter = slices * best_ms(lambda: np.add.at(qkv_grad, one_slice, q_grad))
assign = slices * best_ms(lambda: qkv_grad.__setitem__(one_slice, q_grad))
explained = (batched - folded) + (scatter - assign)
print(f"一步里（CPU 毫秒）：{len(widths)} 个 Linear 的前向和反向 {batched:.0f}（逐段，再求和）对 {folded:.0f}"
      f"（折成二维）；{slices} 个切片的梯度 {scatter:.0f}（np.add.at）对 {assign:.0f}（放进那一段）")
print(f"这两样合计 {explained:.0f} 毫秒；两个引擎一步实测差 {1000 * (my_step - minigrad_step):.0f} 毫秒")

# %% [markdown]
# 现在训练你的 GPT。完整版要十来分钟（`tutorials/README.md` 里有实测的时间），每 250 步报一次进度。

# %%
elapsed = []


def progress(step: int, loss: float) -> None:
    elapsed.append(time.perf_counter())
    if (step + 1) % 250 == 0:  # 训练很长：每 250 步说一声走到了哪里
        print(f"  第 {step + 1} 步：损失 {loss:.3f}，已用 {(elapsed[-1] - start) / 60:.1f} 分钟", flush=True)


start = time.perf_counter()
train_curve = train(my_gpt, parts, ys.train, STEPS, BATCH, RECIPE["lr"], RECIPE["warmup-iters"], seed=1,
                    decay_iters=RECIPE["max-iters"], on_step=progress)
my_seconds = time.perf_counter() - start
print(f"{STEPS} 步、每批 {BATCH} 段，用时 {my_seconds / 60:.1f} 分钟（在{parts.engine.name}上）；"
      f"{my_gpt.num_parameters():,} 个参数")
assert np.mean(train_curve[-10:]) < np.mean(train_curve[:10]) - 1.0, "训练应当让损失明显下降"

# %%
record = crossing.load_record()
fig, ax = plt.subplots(figsize=(8, 4.5))
minutes = (np.array(elapsed) - start) / 60
ax.plot(minutes, train_curve, lw=0.8, color="crimson", label=label("你的 GPT：每批的损失", "your GPT: batch loss"))
record_minutes = np.array([e["elapsed_s"] for e in record["evaluations"]]) / 60
ax.plot(record_minutes, [e["val_loss"] for e in record["evaluations"]], "o-", ms=3, color="steelblue",
        label=label("minigpt 的记录：验证损失", "minigpt's record: validation loss"))
ax.set_xlim(0, max(minutes[-1], 1.0) * (1.05 if not QUICK else 1.5))
ax.set_ylim(1.3, 4.5)
ax.set_xlabel(label("训练时间（分钟）", "wall-clock minutes"))
ax.set_ylabel(label("纳特/字符", "nats per character"))
ax.set_title(label("你的 GPT（你的引擎）和 minigpt 的记录", "Your GPT on your engine, and minigpt's record"))
ax.legend()
fig.tight_layout()
show_figure(fig, "09_training.png")

# %% [markdown]
# ## 6. 上梯子
#
# 梯子上的其他几级来自第 01 讲的记录（瞎猜、一元、二元、加 β 的 5 元模型、Kneser-Ney；单独打开这一讲时，
# 下面会先把第 01 讲运行一遍），随课程附带的 GPT，和第 07 讲 §5 那次长训练的 GPT。它们读的是尺子上同一批窗口，
# 所以可以逐窗口比较：差距用的是你在练习 7.5 写的 `paired_gap`（没写好时是参考答案，第 1 节的表里写着）。
# 完整版断言：你的 GPT 比加 β 的 5 元模型好，差距超过两个标准误。

# %%
def my_logits(x):
    with my_gpt.engine.no_grad():  # 你的引擎的 no_grad：打分时什么都不记录
        return my_gpt(x)[0].numpy()


my_score = ys.score_logits(my_logits)
rungs = ladder.ensure("01", ys)
PRETRAINED = Path(tutorials.__file__).parent / "pretrained" / "shakespeare"
shipped_model, shipped_tokenizer = load_model(PRETRAINED)
assert shipped_tokenizer.chars == ys.tokenizer.chars  # 同样的字符，同样的编号
about = json.loads((PRETRAINED / "training.json").read_text(encoding="utf-8"))
rungs.append(ladder.Rung(key="pretrained_gpt", name="GPT（随课程附带）", lecture="07",
                         size=shipped_model.num_parameters(), size_kind="parameters",
                         train_seconds=about["wall_seconds"], score=ys.score_logits(shipped_model)))
long_record, long_model = scaling.load_long_run(), scaling.load_long_run_gpt()  # 它附带的权重
rungs.append(ladder.Rung(key="long_run_gpt", name="GPT（第 07 讲的长训练）", lecture="07",
                         size=long_model.num_parameters(), size_kind="parameters",
                         train_seconds=long_record["training_seconds"], score=ys.score_logits(long_model)))
rungs.append(ladder.Rung(key="my_gpt", name=f"你的 GPT（{parts.mine()}/{parts.count()} 个零件是你的）",
                         lecture="09", size=my_gpt.num_parameters(), size_kind="parameters",
                         train_seconds=my_seconds, score=my_score))
rungs.sort(key=lambda r: -r.score.nats)
for rung in rungs:
    gap, err = parts.paired_gap(my_score.losses, rung.score.losses)
    versus = "" if rung.key == "my_gpt" else f"你的 GPT 比它 {gap:+.3f} ± {err:.3f}"
    print(f"{rung.name:28s}\t{rung.score}\t{versus}")
by_key = {r.key: r for r in rungs}
ngram_gap, ngram_err = parts.paired_gap(my_score.losses, by_key["ngram"].score.losses)
if QUICK:
    assert my_score.nats < by_key["unigram"].score.nats, f"{STEPS} 步之后，它应当比只数单个字符的一元模型好"
else:
    assert ngram_gap < -2 * ngram_err, f"完整版：你的 GPT 应越过加 β 的 5 元模型（{ngram_gap:+.3f} ± {ngram_err:.3f}）"
    print(f"你的 GPT 越过了加 β 的 5 元模型：{ngram_gap:+.3f} ± {ngram_err:.3f} 纳特/字符，"
          f"用时 {my_seconds / 60:.1f} 分钟")

# %%
ENGLISH = {"uniform": "uniform guess", "unigram": "unigram", "bigram": "bigram", "kneser_ney": "Kneser-Ney",
           "pretrained_gpt": "GPT shipped with the course", "long_run_gpt": "GPT of lecture 07's long run",
           "my_gpt": "your GPT"}
fig, ax = plt.subplots(figsize=(9, 5))
positions = np.arange(len(rungs))
colors = ["crimson" if r.key == "my_gpt" else "gray" if r.size_kind == "counts" else "steelblue" for r in rungs]
ax.barh(positions, [r.score.nats for r in rungs], color=colors, xerr=[2 * r.score.stderr for r in rungs])
ax.set_yticks(positions, [label(r.name, ENGLISH.get(r.key, f"{r.extra.get('order', 0) + 1}-gram")) for r in rungs])
for position, rung in zip(positions, rungs):
    ax.text(rung.score.nats + 0.05, position, f"{rung.score.nats:.2f}", va="center")
ax.set_xlim(0, max(r.score.nats for r in rungs) * 1.12)
ax.invert_yaxis()
ax.set_xlabel(label("尺子上的交叉熵（纳特/字符，越低越好）", "held-out cross-entropy (nats per character)"))
ax.set_title(label("梯子（灰：数出来的；蓝：附带的；红：你的）",
                   "The ladder (gray: counted; blue: shipped; red: yours)"))
fig.tight_layout()
show_figure(fig, "09_ladder.png")

# %% [markdown]
# ## 7. 让它写一段
#
# 最后让你的 GPT 续写。抽下一个字用的是你在练习 6.5 写的 `sample_next`：每一步把最后 64 个字符送进模型，
# 取最后一个位置的 logits，交给它。

# %%
def write(model, sample_next, n: int) -> str:
    rng = np.random.default_rng(0)
    ids = ys.tokenizer.encode("ROMEO:\n")
    with model.engine.no_grad():
        for _ in range(n):
            logits, _ = model(np.array([ids[-BIG.block_size:]]))
            token = sample_next(logits.numpy()[0, -1].astype(np.float64), rng, temperature=0.8, top_k=20)
            if isinstance(token, bool) or not isinstance(token, (int, np.integer)) or not 0 <= token < ys.vocab_size:
                raise ValueError(f"抽出的应是 0 到 {ys.vocab_size - 1} 的整数，你的是 {token!r}")
            ids.append(int(token))
    return ys.tokenizer.decode(ids)


def sampling_fails(model_parts: Parts) -> str | None:
    try:
        write(my_gpt, model_parts.sample_next, 20)
    except Exception as error:  # 你的 6.5 在这里出的任何错，都换成参考答案，并点名它
        return f"续写时出错：{type(error).__name__}: {' '.join(str(error).split())[:80]}"
    return None


note = fall_back_if(parts, ("sample_next",), sampling_fails)
if note:
    print("！！", note)
text = write(my_gpt, parts.sample_next, 120 if QUICK else 300)
print(text)
# 训练过的模型写出的“词”里，训练文本里真有的比没训练过的模型多（三个字母以上的词）
known = set(re.findall(r"[a-z]{3,}", ys.tokenizer.decode(list(ys.train)).lower()))
untrained = YourGPT(BIG, parts)
untrained.load_state_dict(GPT(BIG).state_dict())


def real_words(sample: str) -> float:
    words = re.findall(r"[a-z]{3,}", sample[len("ROMEO:\n"):].lower())
    return sum(word in known for word in words) / max(len(words), 1)


trained_share, untrained_share = real_words(text), real_words(write(untrained, parts.sample_next, len(text) - 7))
print(f"真单词的比例：训练过的 {trained_share:.0%}，没训练过的 {untrained_share:.0%}")
assert trained_share > untrained_share + (0.2 if not QUICK else 0.0), "训练过的 GPT 写出的真单词应比没训练过的多"

# %% [markdown]
# ## 小结
#
# - 一个 GPT 和它的训练循环，拆开是十几个小函数：词元嵌入、LayerNorm、切头、softmax、因果注意力、MLP、残差、损失，
#   一批数据、学习率、AdamW、裁剪、训练一步，再加上打分用的配对差距和续写用的采样；它们下面是一个二十来个零件的引擎：
#   张量、记录运算、拓扑序、反向传播，和十五个运算的梯度。它们都可以是你写的，只有 NumPy 不是。
# - 装了 `minigpt` 的权重，你的 GPT 在你的引擎上，logits 和每个梯度都和它一样（float64 里到 1e-10），
#   你的循环走出同一条损失曲线。
# - 零件要过关：检查器（也在 GPT 的形状上试）、模型形状上的比对，引擎还要整个装起来和 minigrad 的比；
#   报错点名是哪道练习、用什么命令检查，没过的零件换成参考答案（引擎的骨架没过时，换成 minigrad 的引擎）。
# - 你的 GPT 在你的引擎上能越过加 β 的 5 元模型，只是慢一些：把批量折进一个矩阵乘法、切片的梯度不走 `np.add.at`、
#   编译的 erf——第 5 节量出来的这几样，加上融合的运算，就是 minigrad 和 `minigpt` 省下的时间。

# %%
my_guesses.calibration()
print(f"本讲用时 {time.time() - T_START:.1f} 秒")

# %% [markdown]
# ## 练习
#
# 这一讲有 7 道练习，在 `tutorials/exercises/lecture09.py` 里：词元嵌入加位置嵌入（9.1）、MLP（9.2）、
# Pre-LN 的 Block 和残差（9.3）、语言模型的损失（9.4）、预热加余弦的学习率（9.5）、AdamW 的一步（9.6，推导在第 3 节）、
# 训练的一步（9.7，同上）。写好一道，重新运行这一讲，第 1 节的表里那一行就会变成“你”；引擎的那 20 行在第 00 讲
# （`tutorials/exercises/engine.py`，`python -m tutorials.exercises check 00`）。
# 在终端里检查：`python -m tutorials.exercises check 09`；`python -m tutorials.exercises check` 检查全部十讲。

# %%
from tutorials.exercises import check

check("09")
