# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 03 Attention 独立：QKV 与 Self-Attention
#
# 上一讲里，Attention 是 RNN 解码器的“助手”：解码器每写一个词，回头对编码器的状态加权求和。
# 这一讲把它单独拿出来，回答三个问题：
#
# > **Attention 本身到底算了什么？它能不能离开 RNN 独立工作？代价是什么？**
#
# 实验清单：
#
# 1. 只用 minigrad 的基本运算写出 attention，与库里的 `F.scaled_dot_product_attention` 逐位比对（前向和梯度）；
# 2. 让 Q、K、V 由可学习的线性变换产生，在一个“代词找名词”的小任务上训练一层 self-attention，
#    看“它”是不是学会了盯住“猫”；
# 3. 去掉 $1/\sqrt{d_k}$ 会怎样：softmax 饱和，梯度消失；
# 4. 代价：分数矩阵随长度平方增长；
# 5. 好处：整句一次矩阵乘法，而 RNN 必须一步一步走；
# 6. 预告第六讲：因果 mask 挡住“未来”。
#
# 运行：`python tutorials/03_self_attention.py`（`TUTORIAL_QUICK=1` 跑快速版）。图片写到当前目录的 `figures/`。

# %% [markdown]
# **学完这一讲，你能**：只用矩阵乘法和 softmax 写出缩放点积注意力，并证明它和库里的版本一致；
# 说清 Q、K、V 各自的角色；解释 $1/\sqrt{d_k}$ 和因果 mask 各防住了什么；
# 量出 attention 的代价（$T^2$）和好处（不必逐步计算）。
#
# **用时**（在 2 核 CPU 上实测的 CPU 时间；机器忙时墙钟时间更长）：
# 运行本讲，快速版约 5 秒，完整版约 10 秒；最后有 5 道练习。

# %%
from tutorials.course import CJK, QUICK, show_figure  # first: it limits BLAS threads before NumPy loads

# isort: split
import math
import time
import tracemalloc

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim

mg.manual_seed(0)
rng = np.random.default_rng(0)

# %% [markdown]
# ## 1. 用基本运算写出 attention
#
# 公式只有一行：
#
# $$\mathrm{Attention}(Q,K,V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V$$
#
# 拆开是三步：**匹配**（每个 query 和每个 key 做点积，得到分数）→ **归一化**（softmax 把一行分数变成和为 1 的权重）
# → **取回**（按权重把 value 混合起来）。下面只用 `@`、`transpose`、`exp`、`sum`、除法写出它；
# softmax 也是手写的：先减去每行最大值（不改变结果，但防止 `exp` 溢出）。

# %%
def softmax_by_hand(s):
    s = s - s.amax(dim=-1, keepdim=True).detach()  # shift for stability; softmax(s - c) == softmax(s)
    e = s.exp()
    return e / e.sum(dim=-1, keepdim=True)


def attention_by_hand(q, k, v, scale=True, causal=False):
    """softmax(q k^T / sqrt(d)) v from primitive ops. q, k, v: (B, T, d)."""
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1)  # (B, T, T): every query against every key (k^T: its last two dims swapped)
    if scale:
        scores = scores / math.sqrt(d)
    if causal:
        T = q.shape[-2]
        future = np.triu(np.ones((T, T), dtype=bool), k=1)  # True above the diagonal: keys after the query
        scores = scores.masked_fill(future, -np.inf)
    p = softmax_by_hand(scores)  # (B, T, T): each row sums to 1
    return p @ v  # (B, T, d)


B, T, d = 2, 5, 8
q0, k0, v0 = (rng.standard_normal((B, T, d)) for _ in range(3))
upstream = rng.standard_normal((B, T, d))

results = {}
for name, fn in [("by hand", attention_by_hand), ("F.sdpa", F.scaled_dot_product_attention)]:
    q, k, v = (mg.tensor(a, requires_grad=True, dtype="float64") for a in (q0, k0, v0))
    y = fn(q, k, v)
    y.backward(upstream)
    results[name] = [y.numpy(), q.grad.numpy(), k.grad.numpy(), v.grad.numpy()]

for label, a, b in zip(["output", "dq", "dk", "dv"], results["by hand"], results["F.sdpa"]):
    print(f"{label:6s} max |by hand - F.sdpa| = {np.abs(a - b).max():.2e}")
    assert np.allclose(a, b, atol=1e-12, rtol=1e-10), label

qs, ks, vs = (mg.tensor(a, requires_grad=True, dtype="float64") for a in (q0, k0, v0))
assert mg.gradcheck(attention_by_hand, [qs, ks, vs])
print("gradcheck passed for attention_by_hand")

# %% [markdown]
# 两者在 float64 下相差不到 $10^{-12}$。库里的版本把 softmax 的反向传播推导成一个公式（见
# `minigrad/ops/nn.py` 里 `ScaledDotProductAttention` 的文档字符串），我们手写的版本让引擎对每个基本运算
# 逐一用链式法则——殊途同归。
#
# ## 2. Q、K、V 从哪来：一个“代词找名词”的小任务
#
# Self-attention 里，Q、K、V 都来自同一句话的词向量 $X$，各乘一个可学习的矩阵：
# $Q = XW_q,\ K = XW_k,\ V = XW_v$。同一个词，可以凭 key 里的某个特征“被选中”，交出的却是 value 里的另一个特征。
#
# 我们造一个小语言。每句话有两个名词、一个代词，形如：
#
# > 猫 没 过 马路 因为 它 太 累 了
#
# 代词是 他（男性）、她（女性）或 它（动物）；两个名词来自不同类别（男性、女性、动物，或不会“累”的物体，如马路），
# 先后顺序随机。任务：读到代词时，说出它指的是**哪个名词**。在这个小语言里，“太 累 了”只说有生命的东西，
# 所以答案就是句中与代词类别相符的那个名词。
#
# 模型只有一层 attention，而且**没有残差连接**：代词位置的输出只能是各位置 value 的加权和，
# 再经过一个线性层给出“是哪个名词”。
#
# 还有一个细节，来自一次“失败”的实验：起初我们让代词可以看句中任何一个词，结果模型在不少句子里找到了捷径——
# 把大部分注意力放在“没”“因为”或代词自己身上（三个代词各挑一个不同的词，等于把“我是哪个代词”存了下来），
# 只给两个名词各留一丁点权重，再由最后的线性层按“代词类别 + 句中出现了哪些名词”猜答案。答案是对的，
# 注意力却没有“看向”正确的名词。为了让实验真正检验 attention 的选择能力，我们只允许代词看句中的名词
# （告诉模型哪些词是名词，就像给了它词性标注，但不告诉它哪个是答案）。这样输出只能是两个名词 value 的加权和：
# 权重一半一半，模型就分不清；想答对，代词的 query 必须学会和正确名词的 key 对上。
# 这种“只许看某些位置”的遮挡叫作 mask，第 6 节还会用到它。
#
# **先猜一猜**：只训练几百步，在没见过的句子上，代词放在正确名词上的注意力权重会有多大？0.6？0.9？接近 1？

# %%
MALE = ["小明", "爸爸", "哥哥", "爷爷"]
FEMALE = ["小红", "妈妈", "姐姐", "奶奶"]
ANIMAL = ["猫", "狗", "小鸟", "马"]
THING = ["马路", "桌子", "小河", "大门"]  # cannot be tired: never the answer
PRONOUN = {"他": MALE, "她": FEMALE, "它": ANIMAL}
VERBS = ["过", "追", "等", "理"]
CATEGORIES = [MALE, FEMALE, ANIMAL, THING]

words = MALE + FEMALE + ANIMAL + THING + list(PRONOUN) + VERBS + ["没", "因为", "太", "累", "了"]
stoi = {w: i for i, w in enumerate(words)}
NOUN_IDS = [stoi[w] for w in MALE + FEMALE + ANIMAL + THING]
SEQ = 9  # N1 没 V N2 因为 PRON 太 累 了
PRON_POS = 5

# Every sentence of the little language: (pronoun, referent, distractor, verb, referent first?).
all_sentences = []
for pron, cat in PRONOUN.items():
    for ref in cat:
        for other in CATEGORIES:
            if other is cat:
                continue
            for dis in other:
                for verb in VERBS:
                    for ref_first in (True, False):
                        n1, n2 = (ref, dis) if ref_first else (dis, ref)
                        all_sentences.append(([n1, "没", verb, n2, "因为", pron, "太", "累", "了"], ref))
order = rng.permutation(len(all_sentences))
n_test = len(all_sentences) // 5
test_set = [all_sentences[i] for i in order[:n_test]]
train_set = [all_sentences[i] for i in order[n_test:]]
print(f"{len(all_sentences)} sentences: {len(train_set)} to train on, {len(test_set)} held out")
print("for example:", " ".join(train_set[0][0]), "->", train_set[0][1])


def encode(batch):
    ids = np.array([[stoi[w] for w in sentence] for sentence, _ in batch])
    targets = np.array([stoi[ref] for _, ref in batch])
    return ids, targets


# %%
class PronounAttention(nn.Module):
    """Token + position embeddings -> one self-attention layer (no residual) -> read out at the pronoun."""

    def __init__(self, vocab, seq, d):
        super().__init__()
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(seq, d)
        self.query = nn.Linear(d, d)
        self.key = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        x = self.tok(ids) + self.pos(np.arange(ids.shape[1]))  # (B, T, d)
        q, k, v = self.query(x), self.key(x), self.value(x)  # (B, T, d) each
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T, T)
        not_noun = ~np.isin(ids, NOUN_IDS)[:, None, :]  # (B, 1, T): keys that may not be looked at
        scores = scores.masked_fill(not_noun, -np.inf)
        p = scores.softmax(axis=-1)  # (B, T, T)
        y = p @ v  # (B, T, d)
        logits = self.head(y[:, PRON_POS])  # (B, vocab): which word does the pronoun point to?
        return logits, p


mg.manual_seed(0)
model = PronounAttention(len(words), SEQ, d=32)
optimizer = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
steps = 300 if QUICK else 600
batch_rng = np.random.default_rng(1)
losses = []
for step in range(steps):
    batch = [train_set[i] for i in batch_rng.integers(0, len(train_set), 64)]
    ids, targets = encode(batch)
    # forward
    logits, _ = model(ids)
    loss = F.cross_entropy(logits, targets)
    # backward
    optimizer.zero_grad()
    loss.backward()
    # update
    optimizer.step()
    losses.append(loss.item())
    if step % 100 == 0 or step == steps - 1:
        print(f"step {step:4d}  loss {loss.item():.4f}")

# %%
with mg.no_grad():
    ids, targets = encode(test_set)
    logits, p = model(ids)
accuracy = float((logits.numpy().argmax(-1) == targets).mean())
pron_row = p.numpy()[:, PRON_POS, :]  # (N, T): where each pronoun looks
ref_pos = np.array([sentence.index(ref) for sentence, ref in test_set])
dis_pos = np.where(ref_pos == 0, 3, 0)
w_ref = pron_row[np.arange(len(test_set)), ref_pos]
w_dis = pron_row[np.arange(len(test_set)), dis_pos]
print(f"held-out accuracy: {accuracy:.3f}")
print(f"attention from the pronoun: on the right noun {w_ref.mean():.3f}, on the other noun {w_dis.mean():.3f}")
assert accuracy > (0.9 if QUICK else 0.97)
assert w_ref.mean() > (0.9 if QUICK else 0.95)  # the pronoun looks at the right noun ...
assert (w_ref > 0.5).mean() > (0.95 if QUICK else 0.98)  # ... in (almost) every held-out sentence

# %% [markdown]
# 模型从没被告知“它 = 动物”。它只看到“答对了”或“答错了”，反向传播就把 $W_q$、$W_k$ 调成了这样：
# “它”的 query 与动物名词的 key 点积大，“他”的 query 与男性名词的 key 点积大……
# 下面把 attention 画出来。要显示汉字，matplotlib 需要一个中文字体；没有的话，就用英文注释代替。

# %%
GLOSS = {"小明": "Xiaoming", "爸爸": "dad", "哥哥": "brother", "爷爷": "grandpa", "小红": "Xiaohong",
         "妈妈": "mum", "姐姐": "sister", "奶奶": "grandma", "猫": "cat", "狗": "dog", "小鸟": "bird",
         "马": "horse", "马路": "road", "桌子": "table", "小河": "river", "大门": "gate", "他": "he",
         "她": "she", "它": "it", "过": "cross", "追": "chase", "等": "wait", "理": "heed", "没": "not",
         "因为": "because", "太": "too", "累": "tired", "了": "(le)"}


if CJK:
    label = lambda w: w
else:
    print("note: no Chinese font found (try `apt-get install fonts-noto-cjk`); labels are English glosses")
    label = lambda w: GLOSS[w]


def attention_of(sentence):
    with mg.no_grad():
        _, p = model(np.array([[stoi[w] for w in sentence]]))
    return p.numpy()[0]


example = "猫 没 过 马路 因为 它 太 累 了".split()
P = attention_of(example)
print("attention of 它 over the sentence:", {w: round(float(x), 3) for w, x in zip(example, P[PRON_POS])})
assert P[PRON_POS, example.index("猫")] > 0.5

fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), gridspec_kw={"width_ratios": [1, 1.25]})
ax = axes[0]
im = ax.imshow(P, cmap="Blues", vmin=0, vmax=1)
ax.set_xticks(range(SEQ), [label(w) for w in example], rotation=45 if not CJK else 0)
ax.set_yticks(range(SEQ), [label(w) for w in example])
ax.set_xlabel("key (被看的词)" if CJK else "key")
ax.set_ylabel("query (在看的词)" if CJK else "query")
ax.set_title("整句的 attention（只有代词那一行被训练）" if CJK else "attention (only the pronoun row is trained)")
ax.add_patch(plt.Rectangle((-0.5, PRON_POS - 0.5), SEQ, 1, fill=False, ec="crimson", lw=2))
fig.colorbar(im, ax=ax, fraction=0.046)

examples = [example, "小红 没 等 爸爸 因为 他 太 累 了".split(), "小红 没 等 爸爸 因为 她 太 累 了".split(),
            "狗 没 过 小河 因为 它 太 累 了".split(), "马 没 追 奶奶 因为 她 太 累 了".split(),
            "马 没 追 奶奶 因为 它 太 累 了".split()]
rows = np.array([attention_of(s)[PRON_POS] for s in examples])
ax = axes[1]
ax.imshow(rows, cmap="Blues", vmin=0, vmax=1, aspect="auto")
for i, sentence in enumerate(examples):
    for j, w in enumerate(sentence):
        ax.text(j, i, f"{label(w)}\n{rows[i, j]:.2f}", ha="center", va="center", fontsize=9,
                color="white" if rows[i, j] > 0.6 else "black")
ax.set_xticks([])
ax.set_yticks(range(len(examples)), [f"{label(s[PRON_POS])}" for s in examples])
ax.set_ylabel("代词" if CJK else "pronoun", labelpad=10)
ax.set_title("六句话里代词那一行：它在看谁？" if CJK else "the pronoun's row in six sentences")
fig.tight_layout()
show_figure(fig, "03_pronoun_attention.png")

for s in examples:
    ref = next(w for w in (s[0], s[3]) if w in PRONOUN[s[PRON_POS]])
    assert attention_of(s)[PRON_POS, s.index(ref)] > 0.5, " ".join(s)

# %% [markdown]
# 右图每一行是一句话里代词那一行的权重。注意同一对名词（“小红”“爸爸”）换了代词（他→她），
# 视线就跟着换了目标：query 由代词决定，key 由名词决定，匹配分数决定看谁。
#
# 这个小语言故意简单：答案只取决于代词的类别。真实句子里，“猫没过马路因为**它太宽了**”中的“它”指马路——
# 要先读到“宽”，再回头找名词。只有一层 attention 时，“它”这个位置的 query 只由“它”自己算出，还读不到后面的“宽”；
# 这就需要把多层 attention 叠起来（第五讲）。
#
# ## 3. 为什么要除以 $\sqrt{d_k}$
#
# 如果 $q$ 和 $k$ 的每一维都是均值 0、方差 1 的随机数，点积 $q\cdot k = \sum_{i=1}^{d_k} q_ik_i$ 的方差是 $d_k$。
# 维度越高，分数的尺度越大；softmax 遇到很大的分数差，就会把几乎全部权重给最大的那一个——“非 0 即 1”。
# 这时 softmax 的导数几乎处处为 0，梯度传不回去。除以 $\sqrt{d_k}$ 把分数的方差拉回 1。
#
# 实验：16 个 key，随机的 q、k，测 softmax 分布的熵（越小越“尖”）和传到分数上的梯度大小。
#
# **先猜一猜**：$d_k = 1024$、不缩放时，16 个 key 上 softmax 的熵更接近均匀分布的 $\ln 16 \approx 2.77$，还是接近 0？

# %%
dims = [4, 16, 64, 256, 1024]
n_keys, n_queries = 16, 256
scale_stats = {True: {"entropy": [], "grad": []}, False: {"entropy": [], "grad": []}}
for d_k in dims:
    qd = rng.standard_normal((1, n_queries, d_k))
    kd = rng.standard_normal((1, n_keys, d_k))
    up = rng.standard_normal((1, n_queries, n_keys))  # a random dL/dp, the same size at every d_k
    for scaled in (True, False):
        scores = mg.tensor(qd @ kd.transpose(0, 2, 1) / (math.sqrt(d_k) if scaled else 1.0),
                           requires_grad=True, dtype="float64")
        p = scores.softmax(axis=-1)
        p.backward(up)
        pn = p.numpy()
        entropy = float(-(pn * np.log(np.clip(pn, 1e-300, None))).sum(-1).mean())
        scale_stats[scaled]["entropy"].append(entropy)
        scale_stats[scaled]["grad"].append(float(np.abs(scores.grad.numpy()).mean()))

print(f"{'d_k':>6s} {'entropy scaled':>15s} {'entropy raw':>12s} {'|grad| scaled':>14s} {'|grad| raw':>11s}")
for i, d_k in enumerate(dims):
    print(f"{d_k:6d} {scale_stats[True]['entropy'][i]:15.3f} {scale_stats[False]['entropy'][i]:12.3f} "
          f"{scale_stats[True]['grad'][i]:14.2e} {scale_stats[False]['grad'][i]:11.2e}")
print(f"(uniform over {n_keys} keys would have entropy ln {n_keys} = {math.log(n_keys):.3f})")

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for scaled, style, name in [(True, "o-", "scaled: QK^T / sqrt(d_k)"), (False, "s--", "unscaled: QK^T")]:
    axes[0].semilogx(dims, scale_stats[scaled]["entropy"], style, label=name, base=2)
    axes[1].loglog(dims, scale_stats[scaled]["grad"], style, label=name, base=2)
axes[0].axhline(math.log(n_keys), color="gray", lw=0.8, ls=":", label="uniform (ln 16)")
axes[0].set_title("softmax entropy (lower = more one-hot)")
axes[1].set_title("mean |dL/d score|")
for ax in axes:
    ax.set_xlabel("d_k")
    ax.grid(True, alpha=0.3)
    ax.legend()
fig.tight_layout()
show_figure(fig, "03_scale.png")

# %%
ent_s, ent_r = scale_stats[True]["entropy"], scale_stats[False]["entropy"]
grad_s, grad_r = scale_stats[True]["grad"], scale_stats[False]["grad"]
assert max(ent_s) - min(ent_s) < 0.5  # with the scale the distribution keeps its shape at every d_k
assert all(a > b for a, b in zip(ent_r, ent_r[1:]))  # without it, it sharpens as d_k grows ...
assert ent_r[-1] < 0.1 * ent_s[-1]  # ... until it is nearly one-hot
assert all(a > b for a, b in zip(grad_r, grad_r[1:]))  # and the gradient through softmax shrinks ...
assert grad_r[-1] < 0.1 * grad_s[-1]  # ... to less than a tenth of the scaled one

# %% [markdown]
# 有缩放时，熵在各个维度下几乎不变；没缩放时，$d_k = 1024$ 的分布几乎是 one-hot，
# 传到分数上的梯度也只剩有缩放时的十几分之一，而且维度越高越小——训练会越来越难推动这些分数。
#
# ## 4. 代价：长度的平方
#
# 每个 query 都要和每个 key 比一次，分数矩阵是 $T\times T$。长度翻倍，分数矩阵的元素数、乘法次数
# （约 $2\cdot 2T^2d$：一次 $QK^\top$，一次乘 $V$）和内存都变成 4 倍。
# 内存用 `tracemalloc` 测（NumPy 的数组分配会报告给它），时间只作参考——计时受机器负载影响，不作断言。
#
# **先猜一猜**：长度从 512 翻倍到 1024，一次 attention 的峰值内存变成原来的几倍？

# %%
lengths = [128, 256, 512, 1024] if QUICK else [128, 256, 512, 1024, 2048]
d_model = 64
peak_mib, seconds, flops = [], [], []
for n in lengths:
    qn, kn, vn = (mg.tensor(rng.standard_normal((1, n, d_model))) for _ in range(3))
    with mg.no_grad():
        tracemalloc.start()
        F.scaled_dot_product_attention(qn, kn, vn)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            F.scaled_dot_product_attention(qn, kn, vn)
            best = min(best, time.perf_counter() - t0)
    peak_mib.append(peak / 2**20)
    seconds.append(best)
    flops.append(4 * n * n * d_model)
    print(f"T={n:5d}  scores {f'{n}x{n}':>9s} = {n * n:>9,d} numbers   peak memory {peak / 2**20:6.2f} MiB   "
          f"~{4 * n * n * d_model / 1e6:8.1f} MFLOP   {best * 1e3:7.2f} ms")

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
ref = np.array(lengths, dtype=float)
axes[0].loglog(lengths, peak_mib, "o-", base=2, label="measured peak memory")
axes[0].loglog(lengths, peak_mib[-1] * (ref / ref[-1]) ** 2, ":", color="gray", base=2, label="∝ T²")
axes[0].set_ylabel("MiB")
axes[1].loglog(lengths, np.array(seconds) * 1e3, "o-", base=2, label="measured time (information only)")
axes[1].loglog(lengths, seconds[-1] * 1e3 * (ref / ref[-1]) ** 2, ":", color="gray", base=2, label="∝ T²")
axes[1].set_ylabel("ms")
for ax, title in zip(axes, ["attention forward: peak memory", "attention forward: time"]):
    ax.set_xlabel("sequence length T")
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
fig.tight_layout()
show_figure(fig, "03_quadratic_cost.png")

ratios = [b / a for a, b in zip(peak_mib, peak_mib[1:])]
print("memory ratio per doubling of T:", [f"{r:.2f}" for r in ratios])
assert 3.5 < ratios[-1] < 4.5  # doubling the length quadruples the memory
assert all(b / a == 4 for a, b in zip(flops, flops[1:]))

# %% [markdown]
# ## 5. 好处：不必一步一步来
#
# RNN 的第 $t$ 步要等第 $t-1$ 步算完，一句 $T$ 个词就是 $T$ 步**串行**计算。Self-attention 里所有 query 和所有 key
# 的匹配是**同一次**矩阵乘法，位置之间没有先后依赖。我们数一数计算图里从输入到输出最长的那条依赖链
# （必须一个接一个做的运算个数），再各计一次时。
#
# **先猜一猜**：句子从 8 个词加长到 128 个词，RNN 和 attention 的最长依赖链各会变成多长？

# %%
def longest_chain(y):
    """The number of ops on the longest path from a leaf to y: the steps that must run one after another."""
    depth = {}
    stack = [(y, False)]
    while stack:
        t, ready = stack.pop()
        fn = t.grad_fn
        if fn is None:
            depth[id(t)] = 0
        elif ready:
            depth[id(t)] = 1 + max(depth[id(p)] for p in fn.parents)
        elif id(t) not in depth:
            stack.append((t, True))
            stack.extend((p, False) for p in fn.parents if id(p) not in depth)
    return depth[id(y)]


H = 64
W_xh = mg.tensor(rng.standard_normal((H, H)) / math.sqrt(H), requires_grad=True)
W_hh = mg.tensor(rng.standard_normal((H, H)) / math.sqrt(H), requires_grad=True)
W_q, W_k, W_v = (mg.tensor(rng.standard_normal((H, H)) / math.sqrt(H), requires_grad=True) for _ in range(3))


def rnn(x):  # x: (1, T, H) -> the last hidden state, one step per token
    h = mg.zeros(1, H)
    for t in range(x.shape[1]):
        h = (x[:, t] @ W_xh + h @ W_hh).tanh()
    return h


def self_attention(x):  # x: (1, T, H) -> (1, T, H), all positions at once
    return F.scaled_dot_product_attention(x @ W_q, x @ W_k, x @ W_v)


chain = {"rnn": [], "attention": []}
seq_lengths = [8, 16, 32, 64, 128]
for n in seq_lengths:
    xn = mg.tensor(rng.standard_normal((1, n, H)), requires_grad=True)
    chain["rnn"].append(longest_chain(rnn(xn)))
    chain["attention"].append(longest_chain(self_attention(xn)))
print("T:                     ", seq_lengths)
print("longest chain, RNN:      ", chain["rnn"])
print("longest chain, attention:", chain["attention"])
assert len(set(chain["attention"])) == 1  # the same few ops, whatever the length
assert all(c >= n for c, n in zip(chain["rnn"], seq_lengths))  # at least one sequential op per token

n_time = 256
x_time = mg.tensor(rng.standard_normal((1, n_time, H)))
timing = {}
with mg.no_grad():
    for name, fn in [("rnn", rnn), ("attention", self_attention)]:
        best = math.inf
        for _ in range(3):
            t0 = time.perf_counter()
            fn(x_time)
            best = min(best, time.perf_counter() - t0)
        timing[name] = best
print(f"T={n_time}: RNN {timing['rnn'] * 1e3:.1f} ms, self-attention {timing['attention'] * 1e3:.1f} ms "
      f"({timing['rnn'] / timing['attention']:.0f}x)")
assert timing["attention"] < timing["rnn"] / 2  # loose on purpose (about 10x here): timings vary by machine

# %% [markdown]
# 即使在 CPU 上、即使 attention 做了 $T^2$ 次匹配，一次大矩阵乘法也比 $T$ 次小步骤快得多；
# 在 GPU 上差距更大，因为一次矩阵乘法能让成千上万个核心同时干活，而串行的步骤只能一个一个等。
#
# ## 6. 预告：因果 mask 挡住未来
#
# Self-attention 是全连接的：第 3 个词也能看到第 5 个词。做生成时，第 5 个词还没写出来，不能偷看。
# 办法是在 softmax 之前，把“未来位置”的分数设成 $-\infty$，它们的权重就变成 0。
# 验证方法很直接：改动第 6 个位置的输入，前 6 个位置的输出应该**一点都不变**。

# %%
T_mask = 10
x_a = rng.standard_normal((1, T_mask, H))
x_b = x_a.copy()
x_b[0, 6] = rng.standard_normal(H)  # change the token at position 6 only


def outputs(x, causal):
    xt = mg.tensor(x)
    with mg.no_grad():
        return attention_by_hand(xt @ W_q, xt @ W_k, xt @ W_v, causal=causal).numpy()[0]


for causal in (False, True):
    diff = np.abs(outputs(x_a, causal) - outputs(x_b, causal)).max(axis=-1)
    print(f"causal={causal!s:5s}  change at each position: " + " ".join(f"{v:.1e}" for v in diff))
    if causal:
        assert diff[:6].max() == 0.0  # the past does not move at all
        assert diff[6:].min() > 1e-3  # position 6 and later see the change
        lib = F.scaled_dot_product_attention(*(mg.tensor(x_a) @ W for W in (W_q, W_k, W_v)), is_causal=True)
        assert np.allclose(lib.numpy()[0], outputs(x_a, True), atol=1e-5)
    else:
        assert diff[:6].min() > 1e-3  # without the mask every position is affected

# %%
xt = mg.tensor(x_a)
with mg.no_grad():
    q_, k_ = xt @ W_q, xt @ W_k
    sc = q_ @ k_.transpose(-2, -1) / math.sqrt(H)
    p_full = sc.softmax(-1).numpy()[0]
    p_causal = sc.masked_fill(np.triu(np.ones((T_mask, T_mask), dtype=bool), k=1), -np.inf).softmax(-1).numpy()[0]
fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
for ax, pm, title in [(axes[0], p_full, "without mask: everyone sees everyone"),
                      (axes[1], p_causal, "causal mask: only the past and itself")]:
    im = ax.imshow(pm, cmap="Blues", vmin=0, vmax=max(p_full.max(), p_causal.max()))
    ax.set_title(title)
    ax.set_xlabel("key position")
    ax.set_ylabel("query position")
    ax.set_xticks(range(T_mask))
    ax.set_yticks(range(T_mask))
fig.colorbar(im, ax=axes, fraction=0.03)
show_figure(fig, "03_causal_mask.png", bbox_inches="tight")
assert np.allclose(np.triu(p_causal, k=1), 0)

# %% [markdown]
# ## 小结
#
# - Attention = 匹配（$QK^\top$）→ 归一化（softmax）→ 取回（乘 $V$），全是矩阵运算，不需要 RNN。
# - Q、K、V 是同一批词向量的三种线性变换；训练让“它”的 query 学会去找动物名词的 key。
# - $1/\sqrt{d_k}$ 让分数的尺度不随维度增长，softmax 不饱和，梯度不消失。
# - 代价是 $T^2$：长度翻倍，分数矩阵和内存都变成 4 倍。
# - 好处是并行：依赖链的长度与句子长短无关，而 RNN 每个词都要多走一步。
# - 因果 mask 让每个位置只看过去——第六讲 GPT 的核心。
#
# 但 attention 还有一个盲点：它对词的**顺序**毫不在意——把句子打乱，每个词得到的加权和不变。
# 第四讲的位置编码来补这个缺口。
#
# ## 练习
#
# 5 道练习在 `tutorials/exercises/lecture03.py` 里：数值稳定的 softmax（3.1）、缩放点积注意力（3.2）、
# 因果注意力（3.3）、推导分数的标准差（3.4）、推导 softmax 的反向传播（3.5）。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 03`。

# %%
from tutorials.exercises import check

check("03")
