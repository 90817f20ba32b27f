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
# # 07 一张表串起全文
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
# 最后，我们用 `minigpt` 自带的训练流程，从头训练一个小 GPT，让它写一段莎士比亚。
#
# 运行：`python tutorials/07_summary.py`（完整训练）；
# `TUTORIAL_QUICK=1 python tutorials/07_summary.py`（很小的模型、很少的步数）。
# 图片写到 `figures/`，检查点写到 `out/tutorial07/`（都在当前目录下）。

# %% [markdown]
# **学完这一讲，你能**：把七讲的每个机制放回“毛病 → 补法 → 名字”的位置上，并在代码里找到它；
# 用 `minigpt.train.train`（命令行 `minigpt train` 背后的函数）从零训练一个 GPT、保存、读回、续写。
#
# **用时**（在 2 核 CPU 上实测的 CPU 时间；机器忙时墙钟时间更长）：
# 运行本讲，快速版约 30 秒，完整版约 8 分钟（几乎全是最后的训练）；最后有 4 道练习。

# %%
import tutorials
from tutorials.course import FIGURES, QUICK, T_START, show_image  # first: it limits BLAS threads before NumPy loads

# isort: split
import importlib
import inspect
import re
import time
from pathlib import Path

import numpy as np

import minigrad as mg
from minigpt.checkpoint import load_model
from minigpt.train import TrainConfig, read_metrics, train

# %% [markdown]
# ## 1. 表
#
# 每一行：第几讲、遇到的问题、补法、名字、在哪个教程的哪一节看到问题（或补法起作用）、代码在哪里。
# 代码位置写成 `模块:名字`，比如 `minigpt.model:CausalSelfAttention`；有些补法只在教程里手写过
# （比如 RNN 和 GRU，它们不属于 GPT），那一格就只指向教程。

# %%
TABLE = [
    # lecture 1: a language model guesses the next token
    dict(lecture=1, problem="计算机不认识字", fix="给每个字一个编号", name="tokenizer（分词）", seen="01 §0",
         code=["minigpt.tokenizer:CharTokenizer"]),
    dict(lecture=1, problem="怎样衡量“猜得准不准”", fix="看模型给正确答案的概率，取负对数",
         name="交叉熵损失", seen="01 §2", code=["minigrad.functional:cross_entropy"]),
    dict(lecture=1, problem="只看上一个字，常常猜不准", fix="让模型看更多的前文", name="上下文（n 元模型）",
         seen="01 §3", code=[]),
    dict(lecture=1, problem="编号之间没有远近，相似的字无从相似", fix="每个编号查表得到一串可学习的坐标",
         name="词向量（embedding）", seen="01 §5", code=["minigrad.nn:Embedding"]),
    dict(lecture=1, problem="参数成千上万，怎么知道每个该往哪调", fix="从损失出发，沿计算图逆序用链式法则",
         name="反向传播（自动求导）", seen="00 §3", code=["minigrad.tensor:Tensor.backward",
                                                       "minigrad.autograd:topological_order"]),
    # lecture 2: RNN and the birth of attention
    dict(lecture=2, problem="前文可以无限长，存不下", fix="把前文压成一张固定大小的摘要，逐字改写着往后传",
         name="RNN（隐藏状态）", seen="02 §1", code=[]),
    dict(lecture=2, problem="传得越远，早先的信息和梯度越淡", fix="用门控决定纸条上留什么、忘什么",
         name="梯度消失 → LSTM / GRU", seen="02 §2", code=[]),
    dict(lecture=2, problem="一个固定向量装不下整句话", fix="每输出一个词，都按相关程度回看原句的每个位置",
         name="Attention", seen="02 §5", code=["minigrad.functional:scaled_dot_product_attention"]),
    # lecture 3: attention on its own
    dict(lecture=3, problem="逐词传递又慢又丢信息", fix="同一批词通过三个矩阵变出 Q、K、V，两两匹配、一次算完",
         name="Self-Attention（QKV）", seen="03 §2", code=["minigpt.model:CausalSelfAttention"]),
    dict(lecture=3, problem="维度一大，分数太大，softmax 变成非 0 即 1", fix="分数除以 √d_k",
         name="缩放点积注意力", seen="03 §3", code=["minigrad.ops.nn:ScaledDotProductAttention"]),
    # lecture 4: positions
    dict(lecture=4, problem="注意力不看顺序：“狗咬人”“人咬狗”得到同一组向量",
         fix="给每个位置一个信号，加到字向量上", name="位置编码", seen="04 §1",
         code=["minigpt.model:sinusoidal_table", "minigpt.config:POS_ENCODINGS"]),
    dict(lecture=4, problem="可学习的位置表没有训练长度之外的行", fix="让注意力只看相对距离：按位置旋转 q、k",
         name="RoPE（旋转位置编码）", seen="04 §4", code=["minigpt.model:Rotary"]),
    # lecture 5: the block
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
    # lecture 6: training and GPT
    dict(lecture=6, problem="权重随机，只会瞎猜", fix="损失 → 梯度 → 沿反方向走一小步，重复成千上万次",
         name="训练（AdamW）", seen="06 §1", code=["minigrad.optim:AdamW", "minigpt.train:train"]),
    dict(lecture=6, problem="一句话只练一道题太浪费", fix="每个位置都预测下一个字",
         name="自回归训练", seen="06 §2", code=["minigpt.model:GPT.forward", "minigpt.data:get_batch"]),
    dict(lecture=6, problem="整句并行训练会偷看后面的字", fix="把未来位置的分数设为 -∞",
         name="因果 Mask", seen="06 §3", code=["minigrad.ops.nn:causal_bias", "minigpt.model:KVCache.causal_mask"]),
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
    """'package.module:Name.attr' -> the object it names (ImportError / AttributeError if it does not exist)."""
    module_name, _, path = reference.partition(":")
    obj = importlib.import_module(module_name)
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def source_file(reference: str) -> str:
    """The file that defines the object named by `reference`, relative to the package root (for the table)."""
    module_name = reference.partition(":")[0]
    obj = resolve(reference)
    try:
        path = Path(inspect.getsourcefile(inspect.unwrap(obj)))    # where a class or function is defined
    except TypeError:                                             # a constant: the module that holds it
        path = Path(importlib.import_module(module_name).__file__)
    package_root = Path(importlib.import_module(module_name.split(".")[0]).__file__).parent.parent
    return path.relative_to(package_root).as_posix()


for row in TABLE:
    for reference in row["code"]:
        resolve(reference)                       # raises if the name has gone
print(f"all {sum(len(r['code']) for r in TABLE)} code references resolve")

# %% [markdown]
# ### 检查：教程里真有这些小节
#
# 要找到 `tutorials/` 目录：装好仓库后，它就是 `tutorials` 包所在的目录；直接运行本文件时它就在本文件旁边；
# 在 Jupyter 里打开时，通常是当前目录或它的 `tutorials/` 子目录。
# 找不到时（比如只复制了这一个文件），就跳过这项检查并说明一声。

# %%
def find_tutorials_dir() -> Path | None:
    candidates = [Path(tutorials.__file__).parent]  # the package, wherever this runs from
    if "__file__" in globals():
        candidates.append(Path(__file__).resolve().parent)
    candidates += [Path.cwd(), Path.cwd() / "tutorials"]
    for folder in candidates:
        if (folder / "07_summary.py").exists():
            return folder
    return None


def section_exists(folder: Path, seen: str) -> tuple[str, bool]:
    """'04 §1' -> (the tutorial file name, whether it has a '## 1.' heading)."""
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
    print("tutorials/ not found next to this file: skipping the check of the tutorial sections")
else:
    for row in TABLE:
        name, ok = section_exists(tutorials_dir, row["seen"])
        row["seen_file"] = name
        assert ok, f"the table points at {row['seen']} ({name}), which does not exist"
    print(f"all {len(TABLE)} tutorial references exist in {tutorials_dir}")

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
if "get_ipython" in globals():                       # in Jupyter: render the table instead of printing it
    from IPython.display import Markdown, display

    display(Markdown(summary_table))
else:
    print(summary_table)
(FIGURES / "07_summary_table.md").write_text(summary_table + "\n", encoding="utf-8")

# %% [markdown]
# 把整张表从上往下读一遍，会发现它其实只回答了三个问题：
#
# 1. **怎么在需要的时候回看前文？** 第 2、3 讲：从“压成一张纸条”走到“按相关程度直接回看每一个位置”（attention、QKV）。
# 2. **怎么让模型知道顺序？** 第 4 讲：注意力天生不看座位，只好把座位号编进向量里（位置编码、RoPE）。
# 3. **怎么把它稳稳地叠高？** 第 5 讲：多头、残差、LayerNorm、MLP，各管一种“叠深了会出的事”。
#
# 第 6 讲则把这座楼变成 GPT：只保留带遮罩的解码器，做的还是第 1 讲那件事——看着前文，猜下一个字。
#
# ## 2. 最后一跑：从零训练一个 GPT，让它写莎士比亚
#
# 这次不再手写训练循环，而是直接调用 `minigpt.train.train`——它就是命令行 `minigpt train` 背后的那个函数：
# 读入自带的莎士比亚语料、按 90/10 切分、AdamW + 预热 + 余弦退火、梯度裁剪、定期评估并保存检查点。
# 完整模式用它的默认设置（4 层、4 个头、128 维，约 80 万参数，2000 步）；快速模式把一切缩小。
#
# **先猜一猜**：第六讲手写的训练循环把验证损失降到了多少？这次模型更大、步数更多，能再降多少？

# %%
OUT_DIR = Path("out") / "tutorial07"
# overwrite=True：再次运行本课时，新的训练替换上一次留下的检查点（不加它，train 会拒绝覆盖）。
if QUICK:
    config = TrainConfig(out_dir=str(OUT_DIR), max_iters=400, eval_interval=100, eval_iters=4, n_layer=2,
                         n_head=4, n_embd=64, block_size=64, batch_size=12, lr=3e-3, warmup_iters=20, seed=7,
                         overwrite=True)
else:
    config = TrainConfig(out_dir=str(OUT_DIR), seed=7, overwrite=True)
print(config)
result = train(config)
print(result)

metrics = read_metrics(OUT_DIR)
evaluations = [m for m in metrics if "val_loss" in m]
first_val, last_val = evaluations[0]["val_loss"], evaluations[-1]["val_loss"]
print(f"validation loss: {first_val:.3f} at iteration {evaluations[0]['iter']} -> {last_val:.3f} "
      f"at iteration {evaluations[-1]['iter']}")
mg.viz.plots.plot_loss_curves(metrics, path=FIGURES / "07_final_run.png", title="minigpt train")
show_image(FIGURES / "07_final_run.png")
assert not result.interrupted and result.iter_num == config.max_iters
assert last_val < first_val - 1.0, "the run should learn: the validation loss falls by more than a nat"
if not QUICK:
    assert last_val < 2.05

# %% [markdown]
# 训练好的模型和分词表都存进了检查点目录。把它读回来，写一段：

# %%
model, tokenizer = load_model(OUT_DIR)
prompt = "ROMEO:\n"
mg.manual_seed(0)
out = model.generate(np.array([tokenizer.encode(prompt)]), 200 if QUICK else 500, temperature=0.8, top_k=20)
ids = np.asarray(out.numpy() if hasattr(out, "numpy") else out)[0]
story = tokenizer.decode(ids)
print(story)
assert story.startswith(prompt) and len(ids) == len(prompt) + (200 if QUICK else 500)

# %% [markdown]
# 同样的事也可以在命令行里做：
#
# ```bash
# minigpt sample --out-dir out/tutorial07 --prompt "ROMEO:" --max-new-tokens 300 --temperature 0.8 --top-k 20
# ```
#
# ## 3. 再往前走
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
#   中文按字切分正合适，每个汉字就是一个 token。
# - **换一种分词**：字符级分词表小、每个 token 信息少；GPT-2 用的是 BPE（字节对编码），把常见的字符串合并成一个 token，
#   同样长的上下文能装下多得多的内容。可以试着用 `tiktoken` 之类的 BPE 分词器替换 `CharTokenizer`。
# - **对照真正的 GPT-2**：`minigpt.interop.from_nanogpt` / `to_nanogpt` 按 GPT-2 的参数名搬运权重，
#   可以把 nanoGPT / PyTorch 训练的权重装进来，逐层比较输出。
# - **改一个零件，看看会怎样**：`--pos-encoding rope`、`--norm-position post`、去掉残差、换掉 GELU……
#   前面六讲的每个实验都是一个可以改动的起点。
#
# 从第一讲的二元语法表到这里，模型换了好几次模样，可它做的始终是同一件事：看着已经出现的字，猜下一个字。

# %%
print(f"done in {time.time() - T_START:.1f} s")

# %% [markdown]
# ## 练习
#
# 4 道练习在 `tutorials/exercises/lecture07.py` 里：把毛病和补法配对（7.1）、自己写贪心生成（7.2）、
# 算出 KV cache 要存多少个数（7.3）、推导整个 GPT 的参数个数（7.4）。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 07`；
# `python -m tutorials.exercises check` 检查全部八讲。

# %%
from tutorials.exercises import check

check("07")
