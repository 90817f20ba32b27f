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
# # 07 一张表串起全文，一架梯子量出全程
#
# 七讲走下来，每一步都是同一个节奏：先撞上一个具体的毛病，再想出一个补法，补法最后才得到一个名字。
# 这一讲把这些“毛病 → 补法 → 名字”排成一张表。表里每一行都指向两处：
#
# - **哪个实验让你亲眼看到了这个毛病**（教程文件和小节）；
# - **补法在代码里的哪个文件、哪个函数或类**。
#
# 这张表不是写死的文字：它是一段数据，下面的代码会逐行检查——引用的模块和函数必须能 import 到，
# 引用的教程小节必须真的存在。哪天有人改了名字或删了一节，这份教程就会报错，表就不会悄悄过时。
#
# 然后用一条 `minigpt train` 命令从头训练一个 GPT，看着它在几分钟里越过第 01 讲加 β 的计数模型；再把整门课的
# 每个模型放到同一把尺子上，排成一架“损失的梯子”——从瞎猜到 GPT，每一级是哪一讲的模型、有多少参数、训练了多久。
# 最后看两件事：数数的模型强在哪里、弱在哪里；一个 GPT 要多大、练多久，才能越过最强的计数模型 Kneser-Ney。
#
# 实验清单：
#
# 1. 表：毛病 → 补法 → 名字，逐行检查它引用的代码和小节都存在；
# 2. 一条 `minigpt train` 命令：从零训练一个 GPT，看它在第几分钟越过加 β 的 5 元模型，再让它写一段莎士比亚；
# 3. 损失的梯子：第 01–03 讲的模型、这次训练的 GPT 和随课程附带的 GPT，在同一把尺子上打分；
# 4. 记住还是学会：计数模型和 GPT 各强在哪里，两段生成的文字并排看；
# 5. 规模：几种大小的 GPT，损失随训练计算量下降的曲线，预测的越过 Kneser-Ney 的计算量，和检验这个预测的一次长训练。
#
# 运行：`python tutorials/07_summary.py`（完整版）；`TUTORIAL_QUICK=1 python tutorials/07_summary.py`（快速版）。
# 图片写到 `figures/`，检查点写到 `out/tutorial07/`（都在当前目录下）。

# %% [markdown]
# **学完这一讲，你能**：把七讲的每个机制放回“毛病 → 补法 → 名字”的位置上，并在代码里找到它；
# 用一条 `minigpt train` 命令从零训练一个 GPT、读回、续写，并在尺子上和计数模型逐窗口比较；
# 读懂损失的梯子，说出计数模型“记住”和 GPT“学会”的区别，以及怎样从几条幂律曲线预测越过一个对手要多少计算。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（在 2 核 CPU 上实测；单独运行时，还要先把第 01–03 讲运行一遍）；
# 最后有 6 道练习。

# %%
import tutorials
from tutorials.course import FIGURES, QUICK, T_START, label, show_figure, show_image  # 最先导入：它先限定 BLAS 线程数

# isort: split
import importlib
import inspect
import itertools
import json
import re
import textwrap
import time
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigpt import GPT
from minigpt.checkpoint import load_model
from minigrad.tools.files import write_file
from tutorials import crossing, ladder, scaling, yardstick
from tutorials.ladder import Rung

# %% [markdown]
# ## 1. 表
#
# 每一行：第几讲、遇到的问题、补法、名字、在哪个教程的哪一节看到问题（或补法起作用）、代码在哪里。
# 代码位置写成 `模块:名字`，比如 `minigpt.model:CausalSelfAttention`；有些补法只在教程里手写过
# （比如 RNN 和 GRU，它们不属于 GPT），那一格就只指向教程。

# %%
TABLE = [
    # 第 1 讲：语言模型就是猜下一个词
    dict(lecture=1, problem="计算机不认识字", fix="给每个字一个编号", name="tokenizer（分词）", seen="01 §0",
         code=["minigpt.tokenizer:CharTokenizer"]),
    dict(lecture=1, problem="怎样衡量“猜得准不准”", fix="看模型给正确答案的概率，取负对数",
         name="交叉熵损失", seen="01 §2", code=["minigrad.functional:cross_entropy"]),
    dict(lecture=1, problem="只看上一个字，常常猜不准", fix="让模型看更多的前文", name="上下文（n 元模型）",
         seen="01 §3", code=[]),
    dict(lecture=1, problem="编号之间没有远近，相似的字无从相似", fix="每个编号查表得到一串可学习的坐标",
         name="嵌入（embedding）", seen="01 §5", code=["minigrad.nn:Embedding"]),
    dict(lecture=1, problem="参数成千上万，怎么知道每个该往哪调", fix="从损失出发，沿计算图逆序用链式法则",
         name="反向传播（自动求导）", seen="00 §3", code=["minigrad.tensor:Tensor.backward",
                                                       "minigrad.core.autograd:topological_order"]),
    # 第 2 讲：RNN 和注意力的诞生
    dict(lecture=2, problem="前文可以无限长，存不下", fix="把前文压成一张固定大小的摘要，逐字改写着往后传",
         name="RNN（隐藏状态）", seen="02 §1", code=[]),
    dict(lecture=2, problem="传得越远，早先的信息和梯度越淡", fix="用门控决定纸条上留什么、忘什么",
         name="梯度消失 → LSTM / GRU", seen="02 §2", code=[]),
    dict(lecture=2, problem="一个固定向量装不下整句话", fix="每输出一个词，都按相关程度回看原句的每个位置",
         name="Attention", seen="02 §5", code=["minigrad.functional:scaled_dot_product_attention"]),
    # 第 3 讲：注意力独立
    dict(lecture=3, problem="逐词传递又慢又丢信息", fix="同一批词通过三个矩阵变出 Q、K、V，两两匹配、一次算完",
         name="自注意力（QKV）", seen="03 §2", code=["minigpt.model:CausalSelfAttention"]),
    dict(lecture=3, problem="维度一大，分数太大，softmax 变成非 0 即 1", fix="分数除以 √d_k",
         name="缩放点积注意力", seen="03 §3", code=["minigrad.fused.attention:ScaledDotProductAttention"]),
    # 第 4 讲：位置
    dict(lecture=4, problem="注意力不看顺序：“狗咬人”“人咬狗”得到同一组向量",
         fix="给每个位置一个信号，加到字向量上", name="位置编码", seen="04 §1",
         code=["minigpt.model:sinusoidal_table", "minigpt.config:POS_ENCODINGS"]),
    dict(lecture=4, problem="可学习的位置表没有训练长度之外的行", fix="让注意力只看相对距离：按位置旋转 q、k",
         name="RoPE（旋转位置编码）", seen="04 §4", code=["minigpt.model:Rotary"]),
    # 第 5 讲：block
    dict(lecture=5, problem="一套注意力只学得出一种匹配方式", fix="把维度切成几份，各做一遍注意力再拼回来",
         name="多头注意力", seen="05 §2", code=["minigpt.model:CausalSelfAttention"]),
    dict(lecture=5, problem="叠 20 层，梯度传不到第一层", fix="每层的输出加回它的输入",
         name="残差连接", seen="05 §3", code=["minigpt.model:Block.forward"]),
    dict(lecture=5, problem="数值随深度越滚越大；BatchNorm 又依赖 batch", fix="每个位置自己归一化",
         name="LayerNorm", seen="05 §4", code=["minigrad.nn:LayerNorm", "minigrad.functional:layer_norm"]),
    dict(lecture=5, problem="线性层叠多少层都等于一个矩阵", fix="两个线性层中间夹一个非线性",
         name="MLP（GELU）", seen="05 §6", code=["minigpt.model:MLP", "minigrad.functional:gelu"]),
    dict(lecture=5, problem="深层 Post-LN 不加预热就训不动", fix="把 LayerNorm 挪到子层之前",
         name="Pre-LN（GPT-2）", seen="05 §7", code=["minigpt.config:GPTConfig", "minigpt.config:NORM_POSITIONS"]),
    # 第 6 讲：训练和 GPT
    dict(lecture=6, problem="权重随机，只会瞎猜", fix="损失 → 梯度 → 沿反方向走一小步，重复成千上万次",
         name="训练（AdamW）", seen="06 §1", code=["minigrad.optim:AdamW", "minigpt.train:train"]),
    dict(lecture=6, problem="一句话只练一道题太浪费", fix="每个位置都预测下一个字",
         name="自回归训练", seen="06 §2", code=["minigpt.model:GPT.forward", "minigpt.data:get_batch"]),
    dict(lecture=6, problem="整句并行训练会偷看后面的字", fix="把未来位置的分数设为 -∞",
         name="因果遮罩（mask）", seen="06 §3",
         code=["minigrad.kernels.causal_rows:mask_causal_", "minigpt.model:KVCache.causal_mask"]),
    dict(lecture=6, problem="不翻译，只续写，编码器和交叉注意力用不上", fix="只留带遮罩的自注意力 + MLP",
         name="GPT（decoder-only）", seen="06 §4", code=["minigpt:GPT", "minigpt.model:GPT.generate"]),
    dict(lecture=6, problem="总选最可能的字太死板，全凭概率又太乱", fix="抽样前先调整分布",
         name="temperature / top-k / top-p", seen="06 §5",
         code=["minigpt.sampling:top_k_filter", "minigpt.sampling:top_p_filter", "minigpt.sampling:next_token"]),
    dict(lecture=6, problem="每生成一个字都把整段前文重算一遍", fix="把算过的 K、V 存起来复用",
         name="KV Cache", seen="06 §6", code=["minigpt.model:KVCache"]),
]

# %% [markdown]
# ### 检查：代码里真有这些名字

# %%
def resolve(reference: str) -> object:
    """'包.模块:名字.属性' → 它指的那个对象（不存在时抛出 ImportError / AttributeError）。"""
    module_name, _, path = reference.partition(":")
    obj = importlib.import_module(module_name)
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def source_file(reference: str) -> str:
    """定义 `reference` 所指对象的文件，相对于包的根目录（写进表里）。"""
    module_name = reference.partition(":")[0]
    obj = resolve(reference)
    try:
        path = Path(inspect.getsourcefile(inspect.unwrap(obj)))    # 类或函数：定义它的文件
    except TypeError:                                             # 常量：放着它的模块
        path = Path(importlib.import_module(module_name).__file__)
    package_root = Path(importlib.import_module(module_name.split(".")[0]).__file__).parent.parent
    return path.relative_to(package_root).as_posix()


for row in TABLE:
    for reference in row["code"]:
        resolve(reference)                       # 名字不在了就会抛出异常
print(f"表里引用的 {sum(len(r['code']) for r in TABLE)} 处代码都找得到")

# %% [markdown]
# ### 检查：教程里真有这些小节
#
# 要找到 `tutorials/` 目录：装好仓库后，它就是 `tutorials` 包所在的目录；直接运行本文件时它就在本文件旁边；
# 在 Jupyter 里打开时，通常是当前目录或它的 `tutorials/` 子目录。
# 找不到时（比如只复制了这一个文件），就跳过这项检查并说明一声。

# %%
def find_tutorials_dir() -> Path | None:
    candidates = [Path(tutorials.__file__).parent]  # 包所在的目录，不管从哪里运行
    if "__file__" in globals():
        candidates.append(Path(__file__).resolve().parent)
    candidates += [Path.cwd(), Path.cwd() / "tutorials"]
    for folder in candidates:
        if (folder / "07_summary.py").exists():
            return folder
    return None


def section_exists(folder: Path, seen: str) -> tuple[str, bool]:
    """'04 §1' → (教程的文件名, 它是否有 '## 1.' 这个标题)。"""
    number, _, section = seen.partition(" §")
    files = sorted(folder.glob(f"{number}_*.py"))
    if not files:
        return f"{number}_?.py", False
    text = files[0].read_text(encoding="utf-8")
    if not section:
        return files[0].name, True
    return files[0].name, re.search(rf"^# ## {section}\.", text, flags=re.MULTILINE) is not None


tutorials_dir = find_tutorials_dir()
if tutorials_dir is None:
    print("没有在本文件旁边找到 tutorials/：跳过对教程小节的检查")
else:
    for row in TABLE:
        name, ok = section_exists(tutorials_dir, row["seen"])
        row["seen_file"] = name
        assert ok, f"总表引用了 {row['seen']}（{name}），它不存在"
    print(f"表里引用的 {len(TABLE)} 个教程小节都在 {tutorials_dir} 里")

# %% [markdown]
# ### 表本身
#
# **先猜一猜**：往下看之前，先凭记忆说一说：第 2 到第 6 讲，每一讲补上的是哪个缺口？（练习 7.1 会考这个。）

# %%
lines = ["| 讲 | 问题 | 补法 | 名字 | 实验 | 代码 |", "|---|---|---|---|---|---|"]
for row in TABLE:
    number, _, section = row["seen"].partition(" §")
    where = row.get("seen_file", number) + (f" §{section}" if section else "")
    code = "；".join(f"`{source_file(ref)}` `{ref.partition(':')[2]}`" for ref in row["code"]) or "（教程中手写）"
    lines.append(f"| {row['lecture']} | {row['problem']} | {row['fix']} | **{row['name']}** | {where} | {code} |")
summary_table = "\n".join(lines)
if "get_ipython" in globals():                       # 在 Jupyter 里：把表渲染出来，而不是打印
    from IPython.display import Markdown, display

    display(Markdown(summary_table))
else:
    print(summary_table)
write_file(FIGURES / "07_summary_table.md", summary_table + "\n")

# %% [markdown]
# 把整张表从上往下读一遍，会发现它其实只回答了三个问题：
#
# 1. **怎么在需要的时候回看前文？** 第 2、3 讲：从“压成一张纸条”走到“按相关程度直接回看每一个位置”（attention、QKV）。
# 2. **怎么让模型知道顺序？** 第 4 讲：注意力天生不看座位，只好把座位号编进向量里（位置编码、RoPE）。
# 3. **怎么把它稳稳地叠高？** 第 5 讲：多头、残差、LayerNorm、MLP，各管一种“叠深了会出的事”。
#
# 第 6 讲则把这座楼变成 GPT：只保留带遮罩的解码器，做的还是第 1 讲那件事——看着前文，猜下一个字。
# ## 2. 最后一跑：看着一个 GPT 越过数数的模型
#
# 这次不再手写训练循环，而是直接运行一条命令行 `minigpt train`（背后是 `minigpt.train.train`）：
# 读入自带的莎士比亚语料、按 90/10 切分（和尺子的切法一样）、AdamW + 预热 + 余弦退火、梯度裁剪、定期评估并保存检查点。
# 这条命令的设置（宽度、层数、批大小、学习率、步数）是专门挑过的：在**训练文本里切出的开发集**上比较了几种大小的 GPT
# （`tutorials/builders/scaling_runs.py`，尺子的窗口一个也没看），挑出越过加 β 的 5 元模型最快的一种，
# 再让学习率在最后一步退火到十分之一。整套设置在 `tutorials/crossing.py` 里：
#
# ```bash
# python -m minigpt train --out-dir out/crossing --n-layer 4 --n-embd 128 --n-head 4 --block-size 64 \
#     --batch-size 32 --lr 0.003 --warmup-iters 100 --max-iters 2000 --eval-interval 100 --eval-iters 5
# ```
#
# 完整版把这条命令完整地跑一遍，画出验证集损失随**墙钟时间**（分钟）的变化，旁边用横线标出数数的模型在尺子上的分数：
# 你能看到它在第几分钟越过了哪一级。快速版只跑同一条命令的前几百步（学习率的安排不变），看曲线往哪里走。
#
# **先猜一猜**：第 01 讲最好的计数模型在尺子上是多少纳特/字符？这次训练几分钟的 GPT，能比它好吗？
# 它要训练几分钟，才能越过加 β 的 5 元模型（1.70 左右）？
#
# 下一格记下你的猜测：先把其中的“还没猜”换成你自己的猜测，再往下运行（不猜也能运行，但不计分）；
# 揭晓时实测值会印在它旁边，讲末给出校准得分。

# %%
from tutorials.predictions import Predictions

my_guesses = Predictions("07", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_07.json）
my_guesses.guess("best_count_nats", "还没猜", "第 01 讲最好的计数模型在尺子上（纳特/字符）")  # 换成你的猜测
my_guesses.guess("small_gpt_beats_counts", "还没猜", "训练几分钟的 GPT 能比它好吗",
                 options=["能", "不能"])
my_guesses.guess("crossing_minutes", "还没猜", "要训练几分钟才越过加 β 的 5 元模型（这台机器，一个 BLAS 线程）")

# %%
OUT_DIR = Path("out") / "tutorial07"
# 快速版：同一条命令的前 QUICK_ITERS 步（学习率仍按完整的步数退火），每 40 步评估一次
QUICK_ITERS = 120
print("完整的命令：", crossing.shell_command())
if QUICK:
    changes = dict(max_iters=QUICK_ITERS, eval_interval=40, lr_decay_iters=crossing.RECIPE["max-iters"])
else:
    changes = {}
print("本讲运行：", " ".join(crossing.command(OUT_DIR, **changes)[1:]))
start = time.perf_counter()
metrics = crossing.run(OUT_DIR, **changes)  # 一个子进程，一个 BLAS 线程：和 CI 运行本讲时一样
small_seconds = time.perf_counter() - start
evaluations = crossing.evaluations(metrics)
first_val, last_val = evaluations[0]["val_loss"], evaluations[-1]["val_loss"]
print(f"验证损失：第 {evaluations[0]['iter']} 步 {first_val:.3f} → 第 {evaluations[-1]['iter']} 步 {last_val:.3f}；"
      f"训练用时 {small_seconds:.0f} 秒")

# %% [markdown]
# 验证集损失是 `minigpt train` 自己估的（验证集里随机取的几批窗口）；尺子是验证集里固定的 512 个窗口。
# 两者读的是同一段没见过的文本，只是窗口不同。训练结束后，把检查点读回来，在尺子上正式打分，
# 再和第 01 讲的计数模型逐窗口比较（第 01 讲的记录不在时，这里会先运行第 01 讲）。

# %%
ys = yardstick.load()
small_model, tokenizer = load_model(OUT_DIR)
small_score = ys.score_logits(small_model)
counts = {r.key: r for r in ladder.ensure("01", ys)}
PRETRAINED = Path(tutorials.__file__).parent / "pretrained" / "shakespeare"
big_model, big_tokenizer = load_model(PRETRAINED)
big_score = ys.score_logits(big_model)
lines = [("uniform", "瞎猜", "uniform", counts["uniform"].score.nats, "gray"),
         ("bigram", "二元", "bigram", counts["bigram"].score.nats, "tab:brown"),
         ("ngram", "加 β 的 5 元", "add-β 5-gram", counts["ngram"].score.nats, "crimson"),
         ("kneser_ney", "Kneser-Ney", "Kneser-Ney", counts["kneser_ney"].score.nats, "purple"),
         ("pretrained", "附带的 GPT（82 分钟）", "shipped GPT", big_score.nats, "steelblue")]
minutes = np.array([m["elapsed_s"] for m in evaluations]) / 60
vals = np.array([m["val_loss"] for m in evaluations])
fig, ax = plt.subplots(figsize=(8, 4.5))
recorded = crossing.load_record()["evaluations"]  # 随课程附带的那次完整运行（tutorials/records/crossing.json）
ax.plot([m["elapsed_s"] / 60 for m in recorded], [m["val_loss"] for m in recorded], "-", color="silver", lw=3,
        label=label("附带的记录：整条命令（另一次运行）", "the shipped record of the whole command"))
ax.plot(minutes, vals, "o-", color="black", label=label("这次训练：验证集损失", "this run: validation loss"))
ax.plot(minutes[-1], small_score.nats, "*", color="gold", markersize=14, markeredgecolor="black",
        label=label(f"训练结束：尺子上 {small_score.nats:.3f}", f"end of run: yardstick {small_score.nats:.3f}"))
for _, zh, en, nats, color in lines:
    ax.axhline(nats, color=color, ls="--", lw=1, label=label(f"{zh}（{nats:.3f}）", f"{en} ({nats:.3f})"))
ax.set_ylim(1.3, 4.5)
ax.set_xlabel(label("墙钟时间（分钟，本机，一个 BLAS 线程）", "wall-clock minutes (this machine, one BLAS thread)"))
ax.set_ylabel(label("交叉熵（纳特/字符）", "cross-entropy (nats per character)"))
ax.set_title(label("一条 minigpt train 命令：GPT 越过数数的模型", "One minigpt train command: a GPT passes counting"))
ax.grid(True, alpha=0.3)
ax.legend(fontsize=8, loc="upper right")
fig.tight_layout()
show_figure(fig, "07_final_run.png")

ngram_gap, ngram_err = small_score.gap(counts["ngram"].score)
print(f"尺子上：这次训练的 GPT {small_score}，加 β 的 5 元模型 {counts['ngram'].score}；"
      f"逐窗口比较 {ngram_gap:+.3f} ± {ngram_err:.3f} 纳特/字符")
passed = [m for m in evaluations if m["val_loss"] < counts["ngram"].score.nats]
# 快速版的几个点一路下降；完整版到了最后几百步，每次评估只读几批窗口，估计的起伏会盖过那一点点下降
assert all(b < a for a, b in zip(vals, vals[1:])) if QUICK else last_val < min(vals) + 0.01, "验证集损失应当一路下降"
# 快速版没跑完：揭晓的是随课程附带的那次完整运行（tutorials/records/crossing.json）越过它的时间
if QUICK:
    crossing_minutes = crossing.load_record()["crossing_minutes_one_thread"]
else:
    crossing_minutes = passed[0]["elapsed_s"] / 60 if passed else small_seconds / 60
my_guesses.reveal("crossing_minutes", crossing_minutes)
if QUICK:
    assert last_val < 2.6, "快速版的前几百步：损失应当已经降到 2.6 纳特以下，正朝着计数模型走"
else:
    # 差值超过两个标准误差：在同一批窗口上，它比 5 元模型好，这个结论有 95% 以上的把握
    assert ngram_gap < -2 * ngram_err, "完整版：这条命令训练的 GPT 应当在尺子上越过加 β 的 5 元模型"

# %% [markdown]
# 图上看得见整个过程：开头几十秒，损失从瞎猜（ln 75 ≈ 4.3）一路掉过二元模型；之后越降越慢，
# 完整版在最后退火的几百步里越过加 β 的 5 元模型。随课程附带的记录（`tutorials/records/crossing.json`）里，
# 这条命令在尺子上得 1.643，逐窗口比 5 元模型低 0.056 ± 0.010 纳特/字符。在一台空闲的 2 核 Intel Xeon 上，两个 BLAS
# 线程、装了 `[fast]` 的编译内核，它跑了 4.9 分钟（验证集的估计在第 3.7 分钟越过 1.70）；不装约 7.7 分钟；
# 只用一个线程、机器同时还在忙别的任务时，是 10 分钟左右。两个核还可以分给两个进程：装上 `[mpi]`，
# `mpiexec -n 2 python -m minigpt train …` 把 `--batch-size` 改成 16（两个进程各算 16 条，一步合起来还是 32 条），
# 同一台机器上 3.7–3.9 分钟跑完（验证集的估计在第 3 分钟前后越过 1.70），尺子上 1.637：批次的抽法不同，分数差一点点。
# 可离 Kneser-Ney 还差得远（0.16 纳特/字符）：第 5 节量一量，越过它要多少计算。
#
# 训练好的模型和分词表都存进了检查点目录。把它读回来，写一段；再让一个同样大小、**没训练过**的模型也写一段。
# 怎么判断哪段“更像英语”？用第 01 讲的办法在训练文本上数一张二元表，看写出来的每一对相邻字符在英文里常不常见：
# 平均每个字符的 $-\ln P(\text{后一个} \mid \text{前一个})$，离真的英文越近越像（太低也不对：只会重复几个
# 常见字符对的文字分数最低，却一点也不像英文，所以还要看它重复得多不多）。
# 作为参照，也给一段真的莎士比亚（验证集的开头）打分。

# %%
pair_counts = np.zeros((ys.vocab_size, ys.vocab_size))
np.add.at(pair_counts, (ys.train[:-1], ys.train[1:]), 1)
P_pair = (pair_counts + 1) / (pair_counts + 1).sum(axis=1, keepdims=True)


def pair_nats(text: str) -> float:
    """按训练文本的二元表，这段文字平均每个字符的 −ln P(后一个 | 前一个)：越低，相邻的字符越像英文。"""
    ids = np.array(ys.tokenizer.encode(text))
    return float(-np.log(P_pair[ids[:-1], ids[1:]]).mean())


untrained = GPT(small_model.config)  # 同样的结构，随机的权重
prompt = "ROMEO:\n"
n_new = 200 if QUICK else 500
stories = {}
for name, model in [("trained", small_model), ("untrained", untrained)]:
    mg.manual_seed(0)
    out = model.generate(np.array([tokenizer.encode(prompt)]), n_new, temperature=0.8, top_k=20)
    stories[name] = tokenizer.decode(np.asarray(out)[0])
print(stories["trained"])
print("\n没训练过的模型写的：", stories["untrained"][len(prompt):len(prompt) + 120].replace("\n", "↵"), "……")


def variety(text: str) -> float:
    """不同的三字符片段占全部三字符片段的比例：一段不停重复自己的文字，这个比例很低。"""
    grams = [text[i:i + 3] for i in range(len(text) - 2)]
    return len(set(grams)) / len(grams)


englishness = {name: pair_nats(story[len(prompt):]) for name, story in stories.items()}
real_text = ys.tokenizer.decode(ys.val[:n_new])
real = pair_nats(real_text)
print(f"\n相邻字符像不像英文（纳特/字符，离真的莎士比亚越近越像）：训练过的 {englishness['trained']:.2f}，"
      f"没训练过的 {englishness['untrained']:.2f}，真的莎士比亚 {real:.2f}")
print(f"三字符片段有多少不重样：训练过的 {variety(stories['trained'][len(prompt):]):.2f}，"
      f"真的莎士比亚 {variety(real_text):.2f}")
assert englishness["trained"] < englishness["untrained"] - 1.0  # 训练让它写出了像英文的字符搭配……
# ……离真的英文已经不远：两边都不远。比真的还“像”并不更好——一段反复写 "the the the" 的文字，
# 二元表给它的分数比真的莎士比亚低得多；所以也要求它不比真的文字重复得多。
assert real - 0.4 < englishness["trained"] < real + (0.5 if QUICK else 0.3)
assert variety(stories["trained"][len(prompt):]) > 0.7 * variety(real_text)

# %% [markdown]
# 同样的事也可以在命令行里做：
#
# ```bash
# minigpt sample --out-dir out/tutorial07 --prompt "ROMEO:" --max-new-tokens 300 --temperature 0.8 --top-k 20
# ```
#
# ## 3. 损失的梯子：整门课的模型，同一把尺子
#
# 第 01 讲起，每个模型都在同一把尺子上打过分（`tutorials/yardstick.py`：验证集里同一批窗口，纳特/字符）。
# 现在把它们排成一架梯子，从上往下：瞎猜、一元、二元、加 β 最好的计数模型、Kneser-Ney（第 01 讲），
# RNN、GRU（第 02 讲），
# 只用注意力的模型（第 03 讲），刚才训练的 GPT，和随课程附带的 GPT。
#
# 前几讲运行时把自己的分数记在了 `figures/ladder/` 里（每个字符的损失都在，不只是平均数）。
# 如果你是直接打开这一讲的，那些记录还不存在——下面会先把第 01–03 讲按同样的模式（快速版或完整版）运行一遍，
# 用的就是那几讲的代码，再读回它们的记录。
#
# 最后一级是 `tutorials/pretrained/shakespeare/` 里的检查点：一个 `minigpt train` 训练出的 GPT，
# 由 `tutorials/builders/train_pretrained.py` 在一台普通的 2 核 CPU 上训练而成（它写下的训练时间和 CPU 型号在下面打印；
# 训练时那台机器同时还在跑别人的任务，空闲的机器会快一些）。它不参与本讲的训练——在 CPU 上训练它要比一堂课长得多——
# 但和其他模型一样，在尺子上当场打分。它的训练曲线在 `tutorials/pretrained/shakespeare/loss_curve.png`，下面也显示出来。
#
# **先猜一猜**：梯子会一路往下走吗？RNN 会比最好的计数模型好吗？

# %%
my_guesses.guess("ladder_monotone", "还没猜", "梯子会一路往下走吗", options=["会", "不会"])  # 换成你的猜测
my_guesses.guess("rnn_beats_counts", "还没猜", "RNN 会比最好的计数模型好吗", options=["会", "不会"])

# %%
rungs = ladder.ensure("01", ys) + ladder.ensure("02", ys) + ladder.ensure("03", ys)
rungs.append(Rung(key="small_gpt", name="GPT（本讲训练）", lecture="07", size=small_model.num_parameters(),
                  size_kind="parameters", train_seconds=small_seconds, score=small_score))

assert big_tokenizer.chars == ys.tokenizer.chars  # 同样的字符，同样的编号
about = json.loads((PRETRAINED / "training.json").read_text(encoding="utf-8"))
rungs.append(Rung(key="pretrained_gpt", name="GPT（随课程附带）", lecture="07", size=big_model.num_parameters(),
                  size_kind="parameters", train_seconds=about["wall_seconds"], score=big_score))
show_image(PRETRAINED / "loss_curve.png")
print(f"附带的 GPT：{about['settings']['n_layer']} 层、{about['settings']['n_embd']} 维，"
      f"{big_model.num_parameters():,} 个参数；训练 {about['iterations']} 步，"
      f"用时 {about['wall_seconds'] / 60:.0f} 分钟，"
      f"CPU：{about['cpu']}（{about['cpu_count']} 核，每个进程 {about['blas_threads']} 个 BLAS 线程），"
      f"命令：{about['command']}")


def describe(rung: Rung, english: bool = False) -> str:
    """讲次 · 参数（或计数）个数 · 训练用时；english=True 给没有中文字体时的图注。"""
    if english:
        size = "—" if rung.size == 0 else f"{rung.size:,} " + rung.size_kind
        return f"lecture {rung.lecture} · {size} · {format_seconds(rung.train_seconds, english)}"
    size = "—" if rung.size == 0 else f"{rung.size:,} " + ("个参数" if rung.size_kind == "parameters" else "个计数")
    return f"第 {rung.lecture} 讲 · {size} · {format_seconds(rung.train_seconds)}"


def format_seconds(seconds: float, english: bool = False) -> str:
    if seconds < 1:
        if english:
            return "no training" if seconds == 0 else "under 1 s"
        return "不用训练" if seconds == 0 else "不到 1 秒"
    if english:
        return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} 秒" if seconds < 120 else f"{seconds / 60:.0f} 分钟"


# 图上的名字走 label()：没有中文字体时换成英文，而不是一排方框。记录里只存中文名，英文名按 key 在这里查。
ENGLISH_NAMES = {"uniform": "uniform guess", "unigram": "unigram (letter frequencies)",
                 "bigram": "bigram (1 character back)", "rnn": "RNN", "gru": "GRU", "attention": "attention only",
                 "small_gpt": "GPT (this lecture)", "pretrained_gpt": "GPT (shipped with the course)"}


def rung_label(rung: Rung, one_line: bool = False) -> str:
    """梯子上一级在图上的名字；不是 one_line 时，括号另起一行。"""
    if rung.key == "ngram":
        english = f"{rung.extra['order'] + 1}-gram ({rung.extra['order']} characters back)"
    else:
        english = ENGLISH_NAMES.get(rung.key, rung.key.replace("_", " "))
    if one_line:
        return label(rung.name, english)
    return label(rung.name.replace("（", "\n（"), english.replace(" (", "\n("))


print(f"\n{'':24s}尺子上（纳特/字符）")
for rung in rungs:
    print(f"{rung.name:20s}\t{rung.score}\t{describe(rung)}")

# %%
fig, ax = plt.subplots(figsize=(12, 7))
xs = np.arange(len(rungs))
nats = np.array([r.score.nats for r in rungs])
counting = [r for r in rungs if r.size_kind == "counts"]
best_count = min(counting, key=lambda r: r.score.nats)
my_guesses.reveal("best_count_nats", best_count.score.nats)
my_guesses.reveal("small_gpt_beats_counts", "能" if small_score.nats < best_count.score.nats else "不能")
colors = ["gray" if r.size_kind == "counts" else "steelblue" for r in rungs]
ax.bar(xs, nats, color=colors, width=0.6)
ax.errorbar(xs, nats, yerr=[2 * r.score.stderr for r in rungs], fmt="none", color="black", capsize=3)
ax.axhline(best_count.score.nats, color="crimson", ls="--", lw=1,
           label=label(f"最好的计数模型（{best_count.score.nats:.3f}）",
                       f"best counting model ({best_count.score.nats:.3f})"))
for x, rung in zip(xs, rungs):
    ax.text(x, rung.score.nats + 0.06, f"{rung.score.nats:.2f}", ha="center", fontsize=10)
ax.set_xticks(xs, [f"{rung_label(r)}\n{label(describe(r), describe(r, english=True)).replace(' · ', chr(10))}"
                  for r in rungs], fontsize=8)
ax.set_ylabel(label("尺子上的交叉熵（纳特/字符，越低越好）", "held-out cross-entropy (nats per character)"))
ax.set_title(label("损失的梯子：整门课的模型，同一段没见过的文本（灰：数出来的；蓝：训练出来的）",
                   "The loss ladder: every model of the course on the same held-out text"))
ax.set_ylim(0, nats.max() * 1.12)
my_guesses.reveal("ladder_monotone", "会" if all(b <= a for a, b in zip(nats, nats[1:])) else "不会")
rnn_rung = next(r for r in rungs if r.key == "rnn")
my_guesses.reveal("rnn_beats_counts", "会" if rnn_rung.score.nats < best_count.score.nats else "不会")
ax.legend(loc="upper right")
fig.tight_layout()
show_figure(fig, "07_loss_ladder.png")

# %%
kn_rung = next(r for r in rungs if r.key == "kneser_ney")
for rung in counting:  # 附带的 GPT 和每一个计数模型，逐窗口比较
    gap, err = big_score.gap(rung.score)
    print(f"附带的 GPT 比 {rung.name}：{gap:+.3f} ± {err:.3f} 纳特/字符")
    if rung is not kn_rung:
        assert gap < -3 * err and gap < -0.03  # 加 β 的计数模型，它都赢……
kn_gap, kn_err = big_score.gap(kn_rung.score)
assert kn_gap > 5 * kn_err and kn_gap > 0.05  # ……Kneser-Ney 它（还）没赢
assert big_score.nats < small_score.nats  # 大的 GPT 更好

# %% [markdown]
# 梯子并不是一路往下的，这正是它值得看的地方：
#
# - 前五级（灰色）是数出来的。只看前一个字符已经省下一大截；看前几个字符的计数模型是一个很难打败的对手——
#   它的表里存了几十万个计数（上面打印了），比 RNN、GRU 的参数多得多。
# - RNN 和 GRU 只有一两万个参数，训练几分钟，分数落在二元和加 β 最好的计数模型之间；
#   只用注意力的模型也在那附近（第 03 讲量过它和 RNN 的胜负）。
# - 本讲训练的 GPT 只练了几分钟：完整版里它越过了加 β 的计数模型（第 2 节逐窗口比较过）；
#   快速版只跑了开头几百步，还在半路。
# - 附带的 GPT 比每一个**加 β** 的计数模型都好（上面逐窗口比较，差值远大于它的标准误差）。
# - 可红色虚线是 Kneser-Ney：第 01 讲换了一种平滑、看前九个字符的计数模型，它比附带的 GPT 还低一截——
#   差值同样远大于标准误差。这架梯子上最低的一级，是数出来的。
#
# 梯子说明的不是“神经网络天生比数数强”。数数的办法很快就用完了数据（加 β 时，看 5、6 个字符反而更差；
# 平滑得好，也止步于九、十个字符），而一个足够大、训练足够久的网络还能接着往下走——只是附带的这个 GPT
# 还不够大、训练得还不够久。下一节先看 GPT 赢加 β 的计数模型赢在哪里，再看它输给 Kneser-Ney 输在哪里。
#
# ## 4. 计数模型强在哪：记住，还是学会
#
# 计数模型把训练文本里见过的组合**记**在表里。一个前文见过几十上千次，它记下的就是那个前文后面真实出现过什么——
# 很难比这更好；可一个前文从没出现过，它只能退回更短的前文；而它看的前文只有几个字符，再往前的一概不知。
# GPT 没有表，它把所有前文都压进同一组参数，相似的前文共用相似的表示（第 01 讲第 5 节：用法相似的字符，向量也相近），
# 没见过的前文它也能猜个大概；它还看得见整个窗口。它**学会**的是规律。
#
# 三个实验来检验这个说法：
#
# 1. 在**见过的**文本（训练文本里的窗口）和**没见过的**文本（尺子）上各打一次分：记住的东西只在见过的文本上有用，
#    所以“记性好”的模型两者差得多；
# 2. 把尺子上的每个字符，按它前面那几个字符（加 β 最好的计数模型看的那几个）在训练文本里出现过多少次分组，
#    看两个模型各在哪一组上强；
# 3. 按字符在窗口里的位置（前面已经读过几个字符）比较两个模型：计数模型只看最近几个字符，GPT 看得见整个窗口。

# %%
ngram_rung = next(r for r in rungs if r.key == "ngram")
order = ngram_rung.extra["order"]
big_seen = ys.training_windows().score_logits(big_model)
memory = {"count": ngram_rung.score.nats - ngram_rung.extra["train_nats"], "gpt": big_score.nats - big_seen.nats}
print(f"{ngram_rung.name}：见过的文本 {ngram_rung.extra['train_nats']:.3f}，没见过的 {ngram_rung.score.nats:.3f}，"
      f"差 {memory['count']:.3f} 纳特/字符")
print(f"附带的 GPT：见过的文本 {big_seen.nats:.3f}，没见过的 {big_score.nats:.3f}，"
      f"差 {memory['gpt']:.3f} 纳特/字符")
assert memory["count"] > memory["gpt"] + 0.1  # 计数模型靠记性的地方比 GPT 多得多


def context_counts(x: np.ndarray, k: int) -> np.ndarray:
    """尺子上每个位置前面 k 个字符（同一窗口里）在训练文本里出现过几次；窗口开头不够 k 个字符的记作 -1。"""
    def keys(ids: np.ndarray) -> np.ndarray:  # ids (N, T) → 每个位置结尾的 k 个字符，写成一个 V 进制整数
        key = np.zeros(ids.shape, dtype=np.int64)
        for j in range(k):
            key = key * ys.vocab_size + np.roll(ids, j, axis=1)
        return key

    train_keys, train_counts = np.unique(keys(ys.train[None, :])[:, k - 1:], return_counts=True)
    wanted = keys(x)
    i = np.clip(np.searchsorted(train_keys, wanted), 0, len(train_keys) - 1)
    found = np.where(train_keys[i] == wanted, train_counts[i], 0)
    return np.where(np.arange(x.shape[1]) >= k - 1, found, -1)


seen_count = context_counts(ys.x, order)
groups = [(0, 1, "0"), (1, 10, "1–9"), (10, 100, "10–99"), (100, 1000, "100–999"), (1000, None, "≥ 1000")]
by_group = []  # (名字, 占尺子的比例, 计数模型的平均损失, GPT 的平均损失)
for lo, hi, name in groups:
    mask = (seen_count >= lo) & ((seen_count < hi) if hi is not None else True)
    by_group.append((name, float(mask.mean()), float(ngram_rung.score.losses[mask].mean()),
                     float(big_score.losses[mask].mean())))
    print(f"前 {order} 个字符在训练文本里出现 {name:>7s} 次：占尺子的 {by_group[-1][1]:5.1%}，"
          f"计数模型 {by_group[-1][2]:.3f}，GPT {by_group[-1][3]:.3f} 纳特/字符")
lead = [g[2] - g[3] for g in by_group]  # GPT 在每一组上领先多少

by_position = ngram_rung.score.per_position - big_score.per_position  # 每个位置上 GPT 领先多少
near, far = float(by_position[order:2 * order].mean()), float(by_position[16:].mean())
print(f"GPT 领先多少：窗口里读过 {order + 1}–{2 * order} 个字符的位置 {near:+.3f}，"
      f"读过 17 个以上的位置 {far:+.3f} 纳特/字符")

fig, axes = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1.1, 1]})
ax = axes[0]
gx = np.arange(len(by_group))
ax.bar(gx - 0.2, [g[2] for g in by_group], 0.4, color="gray", label=rung_label(ngram_rung, one_line=True))
ax.bar(gx + 0.2, [g[3] for g in by_group], 0.4, color="steelblue", label=label("附带的 GPT", "the shipped GPT"))
ax.set_xticks(gx, [f"{label('没见过', 'never') if g[0] == '0' else g[0]}\n({g[1]:.0%})" for g in by_group])
ax.set_xlabel(label(f"前 {order} 个字符在训练文本里出现过几次（括号里：占尺子的比例）",
                    f"times the {order} characters before it occur in training (share of the yardstick)"))
ax.set_ylabel(label("平均损失（纳特/字符）", "mean loss (nats per character)"))
ax.set_title(label("见过的前文上旗鼓相当，没见过的前文上计数模型掉队",
                   "Even on seen contexts; counting fails on unseen"))
ax.legend()
ax = axes[1]
read = np.arange(1, len(by_position) + 1)
ax.plot(read, by_position, color="steelblue", lw=0.8, alpha=0.5, label=label("每个位置", "each position"))
ax.plot(read[2:-2], np.convolve(by_position, np.ones(5) / 5, mode="valid"), color="steelblue", lw=2,
        label=label("相邻 5 个位置的平均", "mean of 5 neighbouring positions"))
ax.axhline(0, color="gray", lw=0.8)
ax.axvline(order + 0.5, color="crimson", ls="--", lw=1,
           label=label(f"计数模型只看最近 {order} 个字符", f"the counting model sees {order} characters"))
ax.set_xscale("log")
ax.set_xticks([1, 2, 4, 8, 16, 32, 64], ["1", "2", "4", "8", "16", "32", "64"])
ax.set_xlabel(label("窗口里已经读过的字符数", "characters read so far in the window"))
ax.set_ylabel(label("GPT 领先多少（纳特/字符）", "GPT's lead (nats per character)"))
ax.set_title(label("读过的前文越长，GPT 领先越多", "The longer the context read, the larger the GPT's lead"))
ax.legend()
fig.tight_layout()
show_figure(fig, "07_memorise_or_generalise.png")

# %%
assert lead[0] > 0.5 and lead[0] > max(lead[1:]) + 0.5  # 没见过的前文上，计数模型掉队最多……
assert all(abs(x) < 0.15 for x in lead[1:])  # ……见过的前文上，两者相差不大
assert far > near + 0.05  # GPT 的领先主要来自计数模型看不见的远处前文

# %% [markdown]
# 三个实验说的是同一件事：
#
# - 计数模型在见过的文本上比没见过的好得多（它“背过”），GPT 两边差得少得多（它学的是规律）。
# - 只要前文在训练文本里出现过，哪怕只有几次，计数模型都和 GPT 不相上下——记下的真实统计本来就是好答案。
#   它的软肋是从没见过的前文：只好退回更短的前文，每个字符一下子多花一个纳特上下；这样的字符在尺子上不多，
#   但足以拉开差距。
# - 在窗口开头几个字符，两个模型看到的差不多，GPT 几乎不占便宜；读过十几个字符以后，GPT 稳定领先——
#   它用上了计数模型根本看不见的更远的前文（人名、句子的走向）。计数模型想看得更远，就得记更长的前文，
#   而第 01 讲已经看到，那只会让它背得更多、猜得更差。
#
# 最后，让两个模型从同一个开头各写一段。计数模型的那段是第 01 讲写下的（看前几个字符、按概率抽样）；
# GPT 也按概率抽样（温度 1，不截断候选），这样比的是两个模型本身：

# %%
mg.manual_seed(0)
gpt_story = big_tokenizer.decode(np.asarray(big_model.generate(np.array([big_tokenizer.encode(prompt)]),
                                                               len(ngram_rung.extra["sample"]) - len(prompt)))[0])
columns = [ngram_rung.extra["sample"].splitlines(), gpt_story.splitlines()]
width = 58
print(f"{ngram_rung.name:<{width - 8}}│ 附带的 GPT")
print("─" * width + "┼" + "─" * width)
for left, right in itertools.zip_longest(*columns, fillvalue=""):
    for a, b in itertools.zip_longest(textwrap.wrap(left, width) or [""], textwrap.wrap(right, width) or [""],
                                      fillvalue=""):
        print(f"{a:<{width}}│ {b}")
known_words = set(re.findall(r"[a-z]{3,}", ys.tokenizer.decode(ys.train).lower()))


def real_word_fraction(text: str) -> float:
    """写出来的词（三个字母以上）里，训练文本中出现过的占多少。"""
    words = re.findall(r"[a-z]{3,}", text.lower())
    return sum(w in known_words for w in words) / max(len(words), 1)


print(f"\n三个字母以上的词里，真词的比例：计数模型 {real_word_fraction(ngram_rung.extra['sample']):.0%}，"
      f"GPT {real_word_fraction(gpt_story):.0%}")

# %% [markdown]
# 两段都有剧本的样子（人名、冒号、换行），真词都不少，也都读不通：尺子上零点几纳特/字符的差距（上面打印了），
# 落到一段按概率抽出来的文字上并不显眼。要写出通顺的句子，模型要大得多、训练要长得多——这正是下一节要量的事。
#
# ### 附带的 GPT 还没越过的一级：Kneser-Ney
#
# 上面三个实验说的是 GPT 赢加 β 的计数模型赢在哪里。可梯子上还有一级它没越过：Kneser-Ney。用同样的两种量法再量一遍：
# 按前文（这回是 Kneser-Ney 看的那几个字符）在训练文本里出现过几次分组，和按窗口里的位置分段。

# %%
kn_order = kn_rung.extra["order"]  # Kneser-Ney 看的字符数（第 01 讲在训练文本末尾的开发集上挑的）
kn_seen_count = context_counts(ys.x, kn_order)


def against_kn_by_group(gpt_score: yardstick.Score, gpt_name: str) -> list[tuple[str, float, float, float]]:
    """按 Kneser-Ney 看的那几个字符在训练文本里出现过几次分组。
    每组：(名字, 占尺子的比例, Kneser-Ney 的平均损失, 这个 GPT 的平均损失)。"""
    rows = []
    for lo, hi, name in groups:
        mask = (kn_seen_count >= lo) & ((kn_seen_count < hi) if hi is not None else True)
        if mask.mean() > 0.01:  # 太小的组略过：几百个字符的平均数说明不了什么
            rows.append((name, float(mask.mean()), float(kn_rung.score.losses[mask].mean()),
                         float(gpt_score.losses[mask].mean())))
            print(f"前 {kn_order} 个字符在训练文本里出现 {name:>7s} 次：占尺子的 {rows[-1][1]:5.1%}，"
                  f"Kneser-Ney {rows[-1][2]:.3f}，{gpt_name} {rows[-1][3]:.3f} 纳特/字符")
    return rows


kn_by_group = against_kn_by_group(big_score, "GPT")
kn_behind = big_score.per_position - kn_rung.score.per_position  # 每个位置上 GPT 落后多少
kn_near, kn_far = float(kn_behind[:kn_order].mean()), float(kn_behind[16:].mean())
print(f"GPT 落后 Kneser-Ney 多少：窗口里读过 1–{kn_order} 个字符的位置 {kn_near:+.3f}，"
      f"读过 17 个以上的位置 {kn_far:+.3f}；一共 {kn_gap:+.3f} ± {kn_err:.3f} 纳特/字符")
print(f"Kneser-Ney：见过的文本 {kn_rung.extra['train_nats']:.3f}，没见过的 {kn_rung.score.nats:.3f}；"
      f"数数和挑选用了 {format_seconds(kn_rung.train_seconds)}，"
      f"附带的 GPT 训练了 {format_seconds(about['wall_seconds'])}")
assert all(g[3] > g[2] for g in kn_by_group)  # 每一组上 Kneser-Ney 都赢，连它没见过的长前文也赢
assert kn_near > 0.05 and kn_far > 0.05  # 近处、远处都赢：GPT 看得远，在这个规模上还没换来好处
assert kn_rung.score.nats - kn_rung.extra["train_nats"] > memory["gpt"] + 0.2  # 它靠的仍然是记性

# %% [markdown]
# 在这个规模上，Kneser-Ney 处处都赢：前文见过多少次的每一组，窗口里近处和远处的每一段。
# 连它看的九个字符在训练文本里从没出现过的那些字符也赢——它退回八个、七个、六个……字符，每一级都是数出来的精确统计，
# 再用折扣和接续计数把它们拼得恰到好处；而加 β 的 5 元模型输给 GPT 最多的，正是它的前文没见过的那些字符。
#
# GPT 的赢面由三样东西组成，上面都量过：
#
# 1. **看得远**：整个窗口它都看得见，计数模型只看最近几个字符（对 5 元模型，读过十几个字符以后 GPT 领先得更多）；
# 2. **相似的前文互相借力**：所有前文压进同一组参数，没见过的前文也能从相似的前文那里借来规律
#    （前文没见过的那一组，GPT 比 5 元模型好得多）；
# 3. **计算**：前两样都要靠训练一点点学会，训练越多、模型越大，损失越低（下一节）；而计数模型数一遍就定了，
#    多给它算力也不会更好，只有更多的数据才行。
#
# 计数模型仍然赢在它最擅长的地方：训练文本里反复出现的东西——人名、套话、常见的词和词组——它记下的是精确的频率，
# 而且数一遍只要几十秒；它见过的文本上的分数比没见过的好得多，说明这份“精确”有一大块是背下来的。
# 附带的 GPT 只训练了一个多小时的 CPU，看得远、会借力这两样都还没学够，所以远处的位置上它也没追回差距。
#
# 一个 GPT 要多大、训练多少计算，才能越过 Kneser-Ney？这要量，不能猜：下一节在几种大小的 GPT 上
# 量出损失随训练计算量下降的曲线，从曲线预测它越过 Kneser-Ney 的地方。

# %% [markdown]
# ## 5. 规模：GPT 要多少计算，才能越过 Kneser-Ney
#
# 梯子的最后几级都是 GPT，只是大小和训练量不同。这一节把“多大、练多久”量成曲线：`tutorials/builders/scaling_runs.py`
# 在一台 2 核 CPU 上（一个 BLAS 线程）训练了几种大小的 GPT，层数和宽度一起变，别的设置全都一样，
# 训练途中每 100 步记一次验证集损失。它们用的是**训练文本里切出的开发集**：在 `minigpt train` 训练集的前 90% 上训练，
# 在它的后 10% 上验证；同一段开发集上，Kneser-Ney 也重新挑了阶数、打了分，就是图上的那条横线。
# 尺子一眼也没看——这一节要**预测**，预测就不能先偷看答案。记录随课程附带（`tutorials/records/scaling.json`），
# 这里只读回来、拟合、画图，几秒钟。
#
# 横轴用训练的**计算量**（浮点运算次数，FLOPs）。每个词元前向一次，每个权重做一次乘法一次加法，
# 反向再花两倍，所以训练一个词元大约是 $C_\text{token} = 6N + 6\,n_\text{layer} T d$：
# $N = 12\,n_\text{layer} d^2 + dV$ 是矩阵乘法里的权重个数，后一项是注意力打分和加权求和（`tutorials/scaling.py`）。
# 每种大小的曲线拟合成
#
# $$L(C) = L_\infty + A\,C^{-\alpha}$$
#
# $L_\infty$ 是这个大小训练无穷久能到的损失，后一项随计算量按幂律缩小。$L_\infty$ 低于 Kneser-Ney 的大小，
# 解出 $L(C) = $ Kneser-Ney 的 $C$，就是预测它越过的计算量。
#
# **先猜一猜**：宽度和层数都不变，只把宽度翻一倍，参数大约变成几倍？要越过 Kneser-Ney，
# 需要的计算量是第 2 节那次训练的几倍？

# %%
my_guesses.guess("params_ratio", "还没猜", "宽度翻一倍，参数变成几倍")  # 换成你的猜测
my_guesses.guess("kn_compute_ratio", "还没猜", "越过 Kneser-Ney 要第 2 节那次训练的几倍计算量")

# %%
runs = scaling.load_records()
kn_dev = runs["target"]["kneser_ney_dev"]
SKIP_TOKENS = 4e5  # 头两百步还在预热，不按幂律走：不参与拟合
V = ys.vocab_size


def joint_fit(chosen: list[dict]) -> scaling.JointLaw:
    """用 `chosen` 这几种大小的全部点，一起拟合 L(N, D) = E + A N^-α + B D^-β。"""
    points = [(r["matmul_weights"], p["tokens"], p["val_loss"]) for r in chosen for p in r["points"]
              if p["tokens"] > SKIP_TOKENS]
    return scaling.fit_joint(*map(np.array, zip(*points)))


joint = joint_fit(runs["runs"])
recipe_flops = scaling.flops_per_token(crossing.RECIPE["n-layer"], crossing.RECIPE["n-embd"], yardstick.WINDOW, V)
recipe_flops *= crossing.RECIPE["max-iters"] * crossing.RECIPE["batch-size"] * yardstick.WINDOW  # 第 2 节那次训练
laws = {r["name"]: joint.for_size(r["matmul_weights"], r["flops_per_token"]) for r in runs["runs"]}
crossings = {name: scaling.crossing(law, kn_dev) for name, law in laws.items()}
print(f"开发集上的 Kneser-Ney（看前 {runs['target']['kneser_ney_order'] - 1} 个字符）：{kn_dev:.3f} 纳特/字符")
print(f"一起拟合：L(N, D) = {joint.E:.3f} + {joint.A:.3g}·N^-{joint.alpha:.2f} + {joint.B:.3g}·D^-{joint.beta:.2f}，"
      f"均方根误差 {joint.rmse:.4f} 纳特\n")
print(f"{'大小':6s}{'权重 N':>10s}{'每字符 FLOPs':>14s}{'最后的损失':>10s}{'L∞':>8s}{'越过 Kneser-Ney 的计算量':>24s}"
      f"{'第 2 节那点计算上':>14s}")
for r in runs["runs"]:
    c = crossings[r["name"]]
    print(f"{r['name']:8s}{r['matmul_weights']:>10,}{r['flops_per_token'] / 1e6:>12.1f} M"
          f"{r['points'][-1]['val_loss']:>12.3f}{laws[r['name']].floor:>10.3f}"
          f"{'不会越过' if c is None else f'{c:.1e} FLOPs':>24s}{float(laws[r['name']](recipe_flops)):>16.3f}")
# 检验外推：不看最大的那种大小，只用其余几种拟合，预测最大的那条曲线，和它实测的点比
largest = runs["runs"][-1]
held_out = joint_fit(runs["runs"][:-1]).for_size(largest["matmul_weights"], largest["flops_per_token"])
held_out_points = [p for p in largest["points"] if p["tokens"] > SKIP_TOKENS]
held_out_error = float(np.sqrt(np.mean([(held_out(p["flops"]) - p["val_loss"]) ** 2 for p in held_out_points])))
print(f"\n只用较小的几种拟合，预测 {largest['name']} 的曲线：均方根误差 {held_out_error:.3f} 纳特")

fig, axes = plt.subplots(1, 2, figsize=(12, 4.5))
far_compute = np.geomspace(1e11, 3e15, 200)
for run, color in zip(runs["runs"], plt.cm.viridis(np.linspace(0, 0.85, len(runs["runs"])))):
    points = run["points"]
    tokens = np.array([p["tokens"] for p in points])
    flops = np.array([p["flops"] for p in points])
    loss = np.array([p["val_loss"] for p in points])
    name = label(f"{run['name']}（{run['matmul_weights'] / 1e6:.2f} M 个权重）",
                 f"{run['name']} ({run['matmul_weights'] / 1e6:.2f} M weights)")
    axes[0].plot(tokens, loss, "o-", ms=3, color=color, label=name)
    axes[1].plot(flops, loss, "o", ms=3, color=color)
    axes[1].plot(far_compute, laws[run["name"]](far_compute), "-", lw=1, color=color, label=name)
    if crossings[run["name"]] is not None and crossings[run["name"]] < far_compute[-1]:
        axes[1].plot(crossings[run["name"]], kn_dev, "x", ms=10, mew=2, color=color)
for ax in axes:
    ax.axhline(kn_dev, color="purple", ls="--", lw=1,
               label=label(f"Kneser-Ney（开发集，{kn_dev:.3f}）", f"Kneser-Ney (dev, {kn_dev:.3f})"))
    ax.set_xscale("log")
    ax.set_ylim(1.3, 2.6)
    ax.set_ylabel(label("开发集上的交叉熵（纳特/字符）", "dev cross-entropy (nats per character)"))
    ax.grid(True, alpha=0.3)
axes[0].set_xlabel(label("训练看过的字符数", "training characters seen"))
axes[0].set_title(label("同样的数据：参数越多，损失越低", "Same data: more parameters, lower loss"))
axes[1].set_xlabel(label("训练的计算量（FLOPs）", "training compute (FLOPs)"))
axes[1].set_title(label("拟合的幂律，延长到越过 Kneser-Ney（×）", "Fitted power laws, extended to Kneser-Ney (x)"))
axes[0].legend(fontsize=8)
axes[1].legend(fontsize=7, loc="lower left")
fig.tight_layout()
show_figure(fig, "07_scale.png")

# %%
# 最便宜的越过：4 层、宽度从 64 到 1024 的 GPT 里，按拟合的规律，谁花最少的计算到达开发集上的 Kneser-Ney
cheapest_flops, cheapest_width = scaling.cheapest_crossing(joint, kn_dev, 4, range(64, 1025, 32), yardstick.WINDOW, V)
per_token = scaling.flops_per_token(4, cheapest_width, yardstick.WINDOW, V)
cross_tokens = cheapest_flops / per_token
cross_iters = int(np.ceil(cross_tokens / (32 * yardstick.WINDOW) / 100) * 100)
flops_per_second = largest["points"][-1]["flops"] / largest["points"][-1]["elapsed_s"]  # 最大的那种，那台 CPU，一个线程
# 去掉任何一种大小再拟合，预测的计算量变多少：外推有多不准的一个量法
spread = [scaling.cheapest_crossing(joint_fit([r for r in runs["runs"] if r is not gone]), kn_dev, 4,
                                    range(64, 1025, 32), yardstick.WINDOW, V) for gone in runs["runs"]]
spread = [c for c, _ in filter(None, spread)]
print(f"最便宜的越过：4 层、宽 {cheapest_width}（{scaling.matmul_weights(4, cheapest_width, V) / 1e6:.1f} M 个权重），"
      f"约 {cheapest_flops:.1e} FLOPs，即 {cross_tokens / 1e6:.0f} M 个字符的训练"
      f"（训练文本一共 {len(ys.train) / 1e6:.1f} M 个字符）；按 {largest['name']} 在那台 CPU 上一个线程的速度"
      f"（{flops_per_second / 1e9:.0f} GFLOP/s）要 {cheapest_flops / flops_per_second / 3600:.1f} 小时")
print(f"去掉任何一种大小再拟合：{min(spread):.1e} 到 {max(spread):.1e} FLOPs（{len(spread)} 次拟合）")
print(f"第 2 节那次训练：{recipe_flops:.1e} FLOPs；越过 Kneser-Ney 要它的 {cheapest_flops / recipe_flops:.0f} 倍")
long_run = scaling.long_run_command(cheapest_width, cross_iters)
print(f"验证它的一次长训练（CPU）：{long_run}\n有 GPU 时：{long_run} --device cuda")
wider, narrower = scaling.matmul_weights(4, 128, V), scaling.matmul_weights(4, 64, V)
my_guesses.reveal("params_ratio", wider / narrower)
my_guesses.reveal("kn_compute_ratio", cheapest_flops / recipe_flops)
# 这一节的曲线都是记录里的，不是这里现量的：下面几行只把记录里写着的事实印出来
# （tests/test_scaling.py 和 tests/test_course_records.py 核对记录里确实如此）。
common = min(r["points"][-1]["tokens"] for r in runs["runs"])  # 每个大小都练到了的字符数
at_common = [np.interp(common, [p["tokens"] for p in r["points"]], [p["val_loss"] for p in r["points"]])
             for r in runs["runs"]]
print(f"记录里写着：都练到 {common / 1e6:.1f} M 个字符时，从小到大的损失是 "
      + " → ".join(f"{loss:.3f}" for loss in at_common) + "（同样的数据：参数越多，损失越低）")
print(f"记录里写着：一起拟合的均方根误差 {joint.rmse:.3f}，预测没参与拟合的那种 {held_out_error:.3f} 纳特；"
      f"越过 Kneser-Ney 要第 2 节那次训练的 {cheapest_flops / recipe_flops:.0f} 倍计算")

# %% [markdown]
# 几条曲线说了四件事：
#
# - **同样的数据，参数越多，损失越低**（左图）；可**同样的计算**，小模型起步快：每个字符便宜，同样的 FLOPs 看的字符多
#   （右图里小模型的曲线先低后高）。计算越多，最合算的模型越大——这就是“规模定律”在这个最小尺度上的样子。
#   第 2 节的命令是在只量了两种大小时挑的；四种大小一起拟合的规律说，在那点计算上更小的模型还要低一些
#   （上面打印的最后一列）。可以自己试：`--n-layer 2 --n-embd 64 --n-head 2`，读两倍多的字符。
# - **一条规律拟合所有大小**：$L(N, D) = E + A N^{-\alpha} + B D^{-\beta}$ 的误差和验证集的噪声差不多；
#   只用较小的几种拟合，也能预测出最大那种的曲线（上面打印了误差）。一种大小单独拟合做不到这一点：
#   一条短曲线分不清“地板低、降得慢”和“地板高、降得快”；几种大小共用一个 $E$ 和两个指数，地板才有了着落
#   （也只是有了着落：大小只差十几倍，$N$ 的指数定得很松）。
# - **越过 Kneser-Ney 贵得多**：按这条规律，最便宜的是一个比第 2 节略宽的 GPT，计算量是第 2 节那次训练的十几倍，
#   在一个 CPU 线程上要两三个小时（上面打印了命令和估计的时间；有 GPU 时加 `--device cuda`）。
#   这个预测要打折扣读。一是外推：曲线只量到了 10^13 FLOPs 上下，预测落在十几倍远的地方；去掉任何一种大小再拟合，
#   预测的计算量会变（上面打印了范围）。二是数据：曲线只量到了不到一遍训练文本，而越过 Kneser-Ney
#   要把训练文本读七八遍；同一段文本读到第几遍，学到的就不如新文本多，还会开始背书（那时要加 dropout），
#   所以真实需要的计算多半更多。
#   反过来，这些记录的学习率几乎没有退火，退火又能省下一些。两个折扣谁大谁小，算不出来，只能跑一遍看（下一小节）。
# - **计数模型的天花板是数据，GPT 的是计算**：Kneser-Ney 数一遍训练文本就到顶了，多给它算力不会更低，
#   只有更多的文本才行；GPT 的曲线随计算一直往下走。
# %% [markdown]
# ### 预测对不对：那次长训练
#
# 预测要被检验过才算数。上面打印的那条长训练命令真的跑过一遍：在一台空闲的 2 核 Intel Xeon 上，两个 BLAS 线程，
# 装了 `[fast]`，训练循环用了不到一个小时（时间和速度记在记录里，下面打印）。
# 训练完，`tutorials/builders/kneser_ney_run.py` 在尺子上给它打了分。两样东西随课程附带：
# `tutorials/records/kneser_ney_run.json` 存着命令、机器、时间、每次评估和权重文件的 SHA-256；
# `tutorials/pretrained/kneser_ney/` 存着训练好的权重（5 MB，不带优化器的状态：只有接着训练才用得上它）。
# 有了权重，就不必相信记录里写好的分数：像在 PyTorch 里那样，先按配置搭好模型，再 `load_state_dict`
# （`scaling.load_long_run_gpt`），在尺子上当场重新打分，再用本讲自己的 Kneser-Ney 逐窗口比较。
#
# 读回来先核对几件事：它跑的正是上面从曲线预测出的那条命令；权重正是那次训练写下的（SHA-256 对得上）；
# 当场打出的分和记录里的一样。
#
# **先猜一猜**：这个 GPT 会在尺子上越过 Kneser-Ney 吗？想想上面说的两个折扣：外推了十几倍，还要把训练文本读七八遍。

# %%
my_guesses.guess("long_run_beats_kn", "还没猜", "预测的那次长训练会在尺子上越过 Kneser-Ney 吗",
                 options=["会", "不会"])  # 换成你的猜测

# %%
long_record = scaling.load_long_run()
assert long_record["command"].split()[:len(long_run.split())] == long_run.split()  # 正是上面预测出的那条命令
long_model = scaling.load_long_run_gpt()  # 核对权重的 SHA-256，按 config.json 搭好 GPT，再 load_state_dict
long_score = ys.score_logits(long_model)  # 当场打分：尺子上每个字符的损失
assert abs(long_score.nats - long_record["yardstick"]["nats"]) < 1e-4  # 和记录里的分数一样
long_gap, long_err = long_score.gap(kn_rung.score)  # 逐窗口：它减 Kneser-Ney
long_settings = long_record["settings"]
long_weights = scaling.matmul_weights(long_settings["n_layer"], long_settings["n_embd"], V)
long_evals = long_record["evaluations"]
long_tokens = np.array([e["iter"] for e in long_evals]) * long_settings["batch_size"] * long_settings["block_size"]
predicted_end = float(joint(long_weights, long_tokens[-1]))
print(f"那次长训练：{long_record['command']}")
long_threads = "、".join(map(str, long_record["blas_threads"]))
print(f"机器：{long_record['cpu']}，{long_record['cpu_count']} 核，BLAS 线程 {long_threads}；"
      f"训练 {long_record['training_seconds'] / 60:.0f} 分钟，每秒约 {long_record['tokens_per_s']:,.0f} 个字符，"
      f"一共读了 {long_tokens[-1] / 1e6:.0f} M 个字符（训练文本的 {long_tokens[-1] / len(ys.train):.1f} 遍）")
print(f"规律预测的终点：开发集上 {predicted_end:.3f}（开发集上的 Kneser-Ney {kn_dev:.3f}）")
print(f"实测：尺子上 {long_score}，Kneser-Ney {kn_rung.score}；逐窗口比较 {long_gap:+.3f} ± {long_err:.3f} 纳特/字符")
print(f"附带的 GPT（第 3 节梯子上的那一级）比它差 {big_score.gap(long_score)[0]:+.3f} 纳特/字符")

fig, ax = plt.subplots(figsize=(8, 4.5))
shown = long_tokens > 0
ax.plot(long_tokens[shown], [e["val_loss"] for e in long_evals if e["iter"] > 0], "o-", ms=4, color="tab:blue",
        label=label("这次训练：验证集上的估计（每 1000 步）", "this run: validation estimate (every 1000 steps)"))
far_tokens = np.geomspace(long_tokens[1], long_tokens[-1], 100)
ax.plot(far_tokens, joint(long_weights, far_tokens), "--", color="tab:blue", alpha=0.6,
        label=label("规律的预测（开发集）", "the law's prediction (dev split)"))
ax.errorbar([long_tokens[-1]], [long_score.nats], yerr=[2 * long_score.stderr], fmt="*", ms=12, color="tab:red",
            label=label(f"训练完，尺子上 {long_score.nats:.3f}", f"finished, on the yardstick {long_score.nats:.3f}"))
ax.axhline(kn_dev, color="purple", ls=":", lw=1,
           label=label(f"Kneser-Ney（开发集，{kn_dev:.3f}）", f"Kneser-Ney (dev, {kn_dev:.3f})"))
ax.axhline(kn_rung.score.nats, color="purple", lw=1,
           label=label(f"Kneser-Ney（尺子，{kn_rung.score.nats:.3f}）",
                       f"Kneser-Ney (yardstick, {kn_rung.score.nats:.3f})"))
ax.set_xscale("log")
ax.set_ylim(1.35, 2.0)
ax.set_xlabel(label("训练看过的字符数", "training characters seen"))
ax.set_ylabel(label("交叉熵（纳特/字符）", "cross-entropy (nats per character)"))
ax.set_title(label("预测的那次长训练：越过 Kneser-Ney 了吗", "The predicted long run: did it pass Kneser-Ney?"))
ax.grid(True, alpha=0.3)
ax.legend(fontsize=8)
fig.tight_layout()
show_figure(fig, "07_long_run.png")
my_guesses.reveal("long_run_beats_kn", "会" if long_gap < 0 else "不会")
assert long_gap < -2 * long_err  # 越过了：同一批窗口上比 Kneser-Ney 好，超过两个标准误差

# %% [markdown]
# 越过了。这个 GPT 在尺子上得 1.44 左右，逐窗口比 Kneser-Ney 低 0.045 纳特/字符，差距是它标准误差的七倍多
# （上面打印了准确的数）；比加 β 的 5 元模型低 0.26，比附带的 GPT 低将近 0.2。预测算是经住了检验，但要看清楚它对在哪里：
#
# - **计算量大致对**：验证集上的估计到一万一千步前后（预测的计算量的七成）才落到 Kneser-Ney 那条线附近，
#   最后几千步学习率降下来时又往下走了一截：越过了，但没有大把富余。
# - **终点比规律说的好**：规律预测它练完刚好碰到 Kneser-Ney（都在开发集上），实际在尺子上比 Kneser-Ney 低 0.045。
#   退火省下的，比把训练文本读七遍半亏掉的多；拟合用的曲线几乎没有退火，图里的虚线于是偏高。
# - **背书开始了，但还不要紧**：练完时训练集上的损失比验证集低 0.22，只读一遍的附带 GPT 是 0.16。
#   差距在变大，可验证集的损失一直在降；再读下去，就该加 dropout 了。
# - **只有一次、一个随机种子**：逐窗口的误差量的是窗口之间的起伏，不是换一个种子重练会差多少。
#   差距有七个标准误差，换种子翻盘的可能很小，但这个数没有量过。

# %% [markdown]
# 越过了，可是处处都赢吗？用第 4 节量附带的 GPT 的两种量法再量一遍：按前文在训练文本里出现过几次分组，
# 和按窗口里读过几个字符分段。这回每一段都按窗口配对，算出标准误差。

# %%
long_by_group = against_kn_by_group(long_score, "这个 GPT")  # 第 4 节的分组，换成这个 GPT


def stretch_gap(start: int, stop: int) -> tuple[float, float]:
    """窗口里第 start 到 stop - 1 个位置上，这个 GPT 减 Kneser-Ney：按窗口配对的平均差和它的标准误差。"""
    per_window = (long_score.losses - kn_rung.score.losses)[:, start:stop].mean(axis=1)
    return float(per_window.mean()), float(per_window.std(ddof=1) / np.sqrt(len(per_window)))


(long_near, near_err), (long_far, far_err) = stretch_gap(0, kn_order), stretch_gap(16, ys.x.shape[1])
print(f"这个 GPT 减 Kneser-Ney：窗口里读过 1–{kn_order} 个字符的位置 {long_near:+.3f} ± {near_err:.3f}，"
      f"读过 17 个以上的位置 {long_far:+.3f} ± {far_err:.3f} 纳特/字符")
assert all(g[3] < g[2] for g in long_by_group)  # 前文见过多少次的每一组，它都赢了
assert long_far < -3 * far_err  # 远处的前文：GPT 稳稳领先
assert long_near > 2 * near_err  # 窗口开头，两个模型看到的一样多：Kneser-Ney 还赢

# %% [markdown]
# 前文见过几次的每一组，它都赢了 Kneser-Ney，连前文见过几十、几百次、计数模型记得最准的那些也赢——
# 附带的 GPT 在每一组上都输。
# 可窗口开头的九个字符上，Kneser-Ney 还赢：那里两个模型看到的前文一样短，GPT 看得远的本事用不上，
# 剩下的是谁把最近几个字符的统计记得更准，这一点数数的还占上风。它的赢面全在读过十个字符以后。
#
# 把第 4 节和这一节合起来，GPT 的赢面由三样东西组成：**看得远**（整个窗口都看得见，计数模型只看最近几个字符）、
# **相似的前文互相借力**（所有前文压进同一组参数，没见过的前文也能借来规律）和**计算**（前两样都要一点点学会，
# 学会它们要的计算，上面量出来了）。计数模型仍然赢在两处：前文只有几个字符的时候（窗口开头，上面量过），
# 和花费——数一遍只要几十秒，这个 GPT 练了 40 分钟。在这份四百多万字符的语料上，要胜过最好的计数，
# GPT 要花的计算比胜过加 β 的 5 元模型多十几倍。

# %% [markdown]
# 权重就在手边，也可以让它写一段：和第 4 节一样的开头、一样的抽样（温度 1，不截断候选），和附带的 GPT 比一比。

# %%
mg.manual_seed(0)
long_story = ys.tokenizer.decode(np.asarray(long_model.generate(np.array([ys.tokenizer.encode(prompt)]),
                                                                len(gpt_story) - len(prompt)))[0])
print(long_story)
print(f"\n三个字母以上的词里，真词的比例：附带的 GPT {real_word_fraction(gpt_story):.0%}，"
      f"这次长训练的 GPT {real_word_fraction(long_story):.0%}")

# %%
my_guesses.calibration()  # 本讲的先猜一猜：数值猜测差几倍，选择题猜对几个

# %% [markdown]
# ## 6. 再往前走
#
# - **更大的模型，用 GPU**：装上 CuPy（`pip install -e ".[cuda12]"`）后，同一份代码在 GPU 上运行，例如
#
#   ```bash
#   minigpt train --device cuda --n-layer 6 --n-head 6 --n-embd 384 --block-size 256 --batch-size 64 \
#       --max-iters 5000
#   ```
#
#   模型变大、上下文变长，续写会从“像英语”变成“像莎士比亚”。
# - **换一份语料**：`minigpt train --data 你的文本.txt`，任何 UTF-8 文本都行——唐诗、代码、你自己的日记。
#   中文按字切分正合适，每个汉字就是一个词元。
# - **换一种分词**：字符级分词表小、每个词元信息少；GPT-2 用的是 BPE（字节对编码），把常见的字符串合并成一个词元，
#   同样长的上下文能装下多得多的内容。可以试着用 `tiktoken` 之类的 BPE 分词器替换 `CharTokenizer`。
# - **对照真正的 GPT-2**：`minigpt.interop.from_nanogpt` / `to_nanogpt` 按 GPT-2 的参数名搬运权重，
#   可以把 nanoGPT / PyTorch 训练的权重装进来，逐层比较输出。
# - **改一个零件，看看会怎样**：`--pos-encoding rope`、`--norm-position post`、去掉残差、换掉 GELU……
#   前面六讲的每个实验都是一个可以改动的起点；用 `tutorials/yardstick.py` 打分，就能把你的模型放上梯子。
#
# 从第一讲的二元表到这里，模型换了好几次模样，可它做的始终是同一件事：看着已经出现的字，猜下一个字。

# %%
print(f"本讲用时 {time.time() - T_START:.1f} 秒")

# %% [markdown]
# ## 练习
#
# 6 道练习在 `tutorials/exercises/lecture07.py` 里：把毛病和补法配对（7.1）、自己写贪心生成（7.2）、
# 算出 KV 缓存要存多少个数（7.3）、推导整个 GPT 的参数个数（7.4）、两个模型在同一把尺子上的差距和它的误差（7.5），
# 以及一道开放题（7.6）：梯子上附带的 GPT 和 Kneser-Ney 各有所长，把两者的概率按权重 λ 混起来，
# λ 只许在训练文本切出的开发集上挑，要在尺子上比两者中更好的那个逐窗口好 0.015 纳特以上。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 07`；
# `python -m tutorials.exercises check` 检查全部十讲。
#
# **接下来：第 09 讲（`tutorials/09_capstone.py`）。** 你在 3.1、3.3、5.2、5.3、5.5、6.1、6.5、7.5 写的答案，
# 加上第 09 讲的七道练习（`tutorials/exercises/lecture09.py`：词元嵌入、MLP、残差、损失、学习率、AdamW、训练一步），
# 会被装成你自己的 GPT：参数名和 `minigpt` 一样，用你的循环训练，放上这把尺子的梯子。

# %%
from tutorials.exercises import check

check("07")
