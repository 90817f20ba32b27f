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
# # 03 注意力独立：QKV 与自注意力（self-attention）
#
# 上一讲里，注意力（attention）是 RNN 解码器的“助手”：解码器每写一个词，回头对编码器的状态加权求和。
# 这一讲把它单独拿出来，回答三个问题：
#
# > **注意力本身到底算了什么？它能不能离开 RNN 独立工作？代价是什么？**
#
# 实验清单：
#
# 1. 只用 minigrad 的基本运算写出注意力，与库里的 `F.scaled_dot_product_attention` 比对（前向和梯度，差在 1e-12 以内）；
# 2. 让 Q、K、V 由可学习的线性变换产生，在一个“代词找名词”的小任务上训练一层自注意力，
#    看“它”是不是学会了盯住“猫”；
# 3. 去掉 $1/\sqrt{d_k}$ 会怎样：softmax 饱和，梯度消失；
# 4. 代价：分数矩阵随长度平方增长；
# 5. 好处：整句一次矩阵乘法，而 RNN 必须一步一步走——量一量训练一步的时间随长度怎么变；
# 6. 预告第六讲：因果遮罩挡住“未来”；
# 7. 只用注意力的语言模型和第 02 讲的 RNN 比一比：参数一样多、训练一样久，谁在尺子上猜得更准？
# 8. 交叉注意力：查询来自一句、键和值来自另一句；在唐诗上由上句写下句，编码器-解码器和只有解码器的模型比一比。
#
# 运行：`python tutorials/03_self_attention.py`（`TUTORIAL_QUICK=1` 跑快速版）。图片写到当前目录的 `figures/`。

# %% [markdown]
# **学完这一讲，你能**：只用矩阵乘法和 softmax 写出缩放点积注意力，并证明它和库里的版本一致；
# 说清 Q、K、V 各自的角色；解释 $1/\sqrt{d_k}$ 和因果遮罩各防住了什么；
# 量出注意力的代价（$T^2$）和好处（不必逐步计算），并说出“只用注意力”在小尺度上的短处。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（在 2 核 CPU 上实测；单独运行时，还要先把第 02 讲运行一遍）；
# 最后有 6 道练习。

# %%
from tutorials.course import CJK, QUICK, label, show_figure  # 最先导入：它要在 NumPy 载入前限定 BLAS 线程数

# isort: split
import math
import time
import tracemalloc

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt.data import get_batch
from minigrad import nn, optim
from tutorials import ladder, yardstick
from tutorials.ladder import Rung

mg.manual_seed(0)
rng = np.random.default_rng(0)

# %% [markdown]
# ## 1. 用基本运算写出注意力
#
# 公式只有一行：
#
# $$\mathrm{Attention}(Q,K,V) = \mathrm{softmax}\!\left(\frac{QK^\top}{\sqrt{d_k}}\right)V$$
#
# 拆开是三步：**匹配**（每个查询和每个键做点积，得到分数）→ **归一化**（softmax 把一行分数变成和为 1 的权重）
# → **取回**（按权重把值混合起来）。查询、键、值（query、key、value）是注意力的三个角色，记作 Q、K、V。
# 下面只用 `@`、`transpose`、`exp`、`sum`、除法写出它；
# softmax 也是手写的：先减去每行最大值（不改变结果，但防止 `exp` 溢出）。

# %%
def softmax_by_hand(s):
    s = s - s.amax(dim=-1, keepdim=True).detach()  # 为了数值稳定先平移；softmax(s - c) == softmax(s)
    e = s.exp()
    return e / e.sum(dim=-1, keepdim=True)


def attention_by_hand(q, k, v, scale=True, causal=False):
    """只用基本运算算 softmax(q k^T / sqrt(d)) v。q、k、v：(B, T, d)。"""
    d = q.shape[-1]
    scores = q @ k.transpose(-2, -1)  # (B, T, T)：每个 query 对每个 key（k^T：交换最后两维）
    if scale:
        scores = scores / math.sqrt(d)
    if causal:
        T = q.shape[-2]
        future = np.triu(np.ones((T, T), dtype=bool), k=1)  # 对角线以上为 True：在 query 之后的 key
        scores = scores.masked_fill(future, -np.inf)
    p = softmax_by_hand(scores)  # (B, T, T)：每行和为 1
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

for name, a, b in zip(["输出", "dq", "dk", "dv"], results["by hand"], results["F.sdpa"]):
    print(f"{name:4s} max |手写 - F.sdpa| = {np.abs(a - b).max():.2e}")
    assert np.allclose(a, b, atol=1e-12, rtol=1e-10), name

qs, ks, vs = (mg.tensor(a, requires_grad=True, dtype="float64") for a in (q0, k0, v0))
assert mg.gradcheck(attention_by_hand, [qs, ks, vs])
print("attention_by_hand 通过了 gradcheck")

# %% [markdown]
# 两者在 float64 下相差不到 $10^{-12}$。库里的版本把 softmax 的反向传播推导成一个公式（见
# `minigrad/fused/attention.py` 里 `ScaledDotProductAttention` 的文档字符串），我们手写的版本让引擎对每个基本运算
# 逐一用链式法则——殊途同归。
#
# ## 2. Q、K、V 从哪来：一个“代词找名词”的小任务
#
# 自注意力（self-attention）里，Q、K、V 都来自同一句话的嵌入 $X$，各乘一个可学习的矩阵：
# $Q = XW_q,\ K = XW_k,\ V = XW_v$。同一个词，可以凭键里的某个特征“被选中”，交出的却是值里的另一个特征。
#
# 我们造一个小语言。每句话有两个名词、一个代词，形如：
#
# > 猫 没 过 马路 因为 它 太 累 了
#
# 代词是 他（男性）、她（女性）或 它（动物）；两个名词来自不同类别（男性、女性、动物，或不会“累”的物体，如马路），
# 先后顺序随机。任务：读到代词时，说出它指的是**哪个名词**。在这个小语言里，“太 累 了”只说有生命的东西，
# 所以答案就是句中与代词类别相符的那个名词。
#
# 模型只有一层注意力，而且**没有残差连接**：代词位置的输出只能是各位置值的加权和，
# 再经过一个线性层给出“是哪个名词”。
#
# 还有一个细节，来自一次“失败”的实验：起初我们让代词可以看句中任何一个词，结果模型在不少句子里找到了捷径——
# 把大部分注意力放在“没”“因为”或代词自己身上（三个代词各挑一个不同的词，等于把“我是哪个代词”存了下来），
# 只给两个名词各留一丁点权重，再由最后的线性层按“代词类别 + 句中出现了哪些名词”猜答案。答案是对的，
# 注意力却没有“看向”正确的名词。为了让实验真正检验注意力的选择能力，我们只允许代词看句中的名词
# （告诉模型哪些词是名词，就像给了它词性标注，但不告诉它哪个是答案）。这样输出只能是两个名词值的加权和：
# 权重一半一半，模型就分不清；想答对，代词的查询必须学会和正确名词的键对上。
# 这种“只许看某些位置”的遮挡叫作遮罩（mask），第 6 节还会用到它。
#
# **先猜一猜**：只训练几百步，在没见过的句子上，代词放在正确名词上的注意力权重会有多大？0.6？0.9？接近 1？
#
# 下一格记下你的猜测：先把其中的“还没猜”换成你自己的猜测，再往下运行（不猜也能运行，但不计分）；
# 揭晓时实测值会印在它旁边，讲末给出校准得分。

# %%
from tutorials.course import FIGURES
from tutorials.predictions import Predictions

my_guesses = Predictions("03", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_03.json）
my_guesses.guess("pronoun_weight", "还没猜", "没见过的句子上，代词放在正确名词上的注意力权重")  # 换成你的猜测

# %%
MALE = ["小明", "爸爸", "哥哥", "爷爷"]
FEMALE = ["小红", "妈妈", "姐姐", "奶奶"]
ANIMAL = ["猫", "狗", "小鸟", "马"]
THING = ["马路", "桌子", "小河", "大门"]  # 不会“累”：永远不是答案
PRONOUN = {"他": MALE, "她": FEMALE, "它": ANIMAL}
VERBS = ["过", "追", "等", "理"]
CATEGORIES = [MALE, FEMALE, ANIMAL, THING]

words = MALE + FEMALE + ANIMAL + THING + list(PRONOUN) + VERBS + ["没", "因为", "太", "累", "了"]
stoi = {w: i for i, w in enumerate(words)}
NOUN_IDS = [stoi[w] for w in MALE + FEMALE + ANIMAL + THING]
SEQ = 9  # 名词1 没 动词 名词2 因为 代词 太 累 了
PRON_POS = 5

# 小语言里的每一句话：（代词，所指，干扰名词，动词，所指在前吗？）。
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
print(f"共 {len(all_sentences)} 句：{len(train_set)} 句训练，{len(test_set)} 句做验证")
print("例如：", " ".join(train_set[0][0]), "→", train_set[0][1])


def encode(batch):
    ids = np.array([[stoi[w] for w in sentence] for sentence, _ in batch])
    targets = np.array([stoi[ref] for _, ref in batch])
    return ids, targets


# %%
class PronounAttention(nn.Module):
    """嵌入 + 位置向量 → 一层自注意力（没有残差）→ 在代词的位置读出答案。"""

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
        q, k, v = self.query(x), self.key(x), self.value(x)  # 各 (B, T, d)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, T, T)
        not_noun = ~np.isin(ids, NOUN_IDS)[:, None, :]  # (B, 1, T)：不许看的 key
        scores = scores.masked_fill(not_noun, -np.inf)
        p = scores.softmax(axis=-1)  # (B, T, T)
        y = p @ v  # (B, T, d)
        logits = self.head(y[:, PRON_POS])  # (B, vocab)：代词指的是哪个词？
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
    # 前向（forward）
    logits, _ = model(ids)
    loss = F.cross_entropy(logits, targets)
    # 反向传播（backward）
    optimizer.zero_grad()
    loss.backward()
    # 更新（update）
    optimizer.step()
    losses.append(loss.item())
    if step % 100 == 0 or step == steps - 1:
        print(f"第 {step:4d} 步  损失 {loss.item():.4f}")

# %%
with mg.no_grad():
    ids, targets = encode(test_set)
    logits, p = model(ids)
accuracy = float((logits.numpy().argmax(-1) == targets).mean())
pron_row = p.numpy()[:, PRON_POS, :]  # (N, T)：每个代词在看哪里
ref_pos = np.array([sentence.index(ref) for sentence, ref in test_set])
dis_pos = np.where(ref_pos == 0, 3, 0)
w_ref = pron_row[np.arange(len(test_set)), ref_pos]
w_dis = pron_row[np.arange(len(test_set)), dis_pos]
print(f"验证句子上的正确率：{accuracy:.3f}")
print(f"代词的注意力：在正确的名词上 {w_ref.mean():.3f}，在另一个名词上 {w_dis.mean():.3f}")
my_guesses.reveal("pronoun_weight", w_ref.mean())
assert accuracy > (0.9 if QUICK else 0.97)
assert w_ref.mean() > (0.9 if QUICK else 0.95)  # 代词看着正确的名词……
assert (w_ref > 0.5).mean() > (0.95 if QUICK else 0.98)  # ……几乎每一句验证句子都是

# %% [markdown]
# 模型从没被告知“它 = 动物”。它只看到“答对了”或“答错了”，反向传播就把 $W_q$、$W_k$ 调成了这样：
# “它”的查询与动物名词的键点积大，“他”的查询与男性名词的键点积大……
# 下面把注意力画出来。要显示汉字，matplotlib 需要一个中文字体；没有的话，就用英文注释代替。

# %%
GLOSS = {"小明": "Xiaoming", "爸爸": "dad", "哥哥": "brother", "爷爷": "grandpa", "小红": "Xiaohong",
         "妈妈": "mum", "姐姐": "sister", "奶奶": "grandma", "猫": "cat", "狗": "dog", "小鸟": "bird",
         "马": "horse", "马路": "road", "桌子": "table", "小河": "river", "大门": "gate", "他": "he",
         "她": "she", "它": "it", "过": "cross", "追": "chase", "等": "wait", "理": "heed", "没": "not",
         "因为": "because", "太": "too", "累": "tired", "了": "(le)"}


def word(w):
    """图上的词：有中文字体时写汉字，没有时写英文释义。"""
    return w if CJK else GLOSS[w]


if not CJK:
    print("提示：没有找到中文字体（试试 `apt-get install fonts-noto-cjk`），图上的词用英文释义")


def attention_of(sentence):
    with mg.no_grad():
        _, p = model(np.array([[stoi[w] for w in sentence]]))
    return p.numpy()[0]


example = "猫 没 过 马路 因为 它 太 累 了".split()
P = attention_of(example)
print("“它”对整句的注意力：", {w: round(float(x), 3) for w, x in zip(example, P[PRON_POS])})
assert P[PRON_POS, example.index("猫")] > 0.5

fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), gridspec_kw={"width_ratios": [1, 1.25]})
ax = axes[0]
im = ax.imshow(P, cmap="Blues", vmin=0, vmax=1)
ax.set_xticks(range(SEQ), [word(w) for w in example], rotation=45 if not CJK else 0)
ax.set_yticks(range(SEQ), [word(w) for w in example])
ax.set_xlabel(label("key（被看的词）", "key"))
ax.set_ylabel(label("query（在看的词）", "query"))
ax.set_title(label("整句的注意力（只有代词那一行被训练）", "attention (only the pronoun row is trained)"))
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
        ax.text(j, i, f"{word(w)}\n{rows[i, j]:.2f}", ha="center", va="center", fontsize=9,
                color="white" if rows[i, j] > 0.6 else "black")
ax.set_xticks([])
ax.set_yticks(range(len(examples)), [f"{word(s[PRON_POS])}" for s in examples])
ax.set_ylabel(label("代词", "pronoun"), labelpad=10)
ax.set_title(label("六句话里代词那一行：它在看谁？", "the pronoun's row in six sentences"))
fig.tight_layout()
show_figure(fig, "03_pronoun_attention.png")

for s in examples:
    ref = next(w for w in (s[0], s[3]) if w in PRONOUN[s[PRON_POS]])
    assert attention_of(s)[PRON_POS, s.index(ref)] > 0.5, " ".join(s)

# %% [markdown]
# 右图每一行是一句话里代词那一行的权重。注意同一对名词（“小红”“爸爸”）换了代词（他→她），
# 视线就跟着换了目标：查询由代词决定，键由名词决定，匹配分数决定看谁。
#
# 这个小语言故意简单：答案只取决于代词的类别。真实句子里，“猫没过马路因为**它太宽了**”中的“它”指马路——
# 要先读到“宽”，再回头找名词。只有一层注意力时，“它”这个位置的查询只由“它”自己算出，还读不到后面的“宽”；
# 这就需要把多层注意力叠起来（第五讲）。
#
# ## 3. 为什么要除以 $\sqrt{d_k}$
#
# 如果 $q$ 和 $k$ 的每一维都是均值 0、方差 1 的随机数，点积 $q\cdot k = \sum_{i=1}^{d_k} q_ik_i$ 的方差是 $d_k$。
# 维度越高，分数的尺度越大；softmax 遇到很大的分数差，就会把几乎全部权重给最大的那一个——“非 0 即 1”。
# 这时 softmax 的导数几乎处处为 0，梯度传不回去。除以 $\sqrt{d_k}$ 把分数的方差拉回 1。
#
# 实验：16 个键，随机的 q、k，测 softmax 分布的熵（越小越“尖”）和传到分数上的梯度大小。
#
# **先猜一猜**：$d_k = 1024$、不缩放时，16 个键上 softmax 的熵更接近均匀分布的 $\ln 16 \approx 2.77$，还是接近 0？

# %%
my_guesses.guess("unscaled_entropy", "还没猜", "d_k = 1024、不缩放时 softmax 的熵（纳特）")  # 换成你的猜测

# %%
dims = [4, 16, 64, 256, 1024]
n_keys, n_queries = 16, 256
scale_stats = {True: {"entropy": [], "grad": []}, False: {"entropy": [], "grad": []}}
for d_k in dims:
    qd = rng.standard_normal((1, n_queries, d_k))
    kd = rng.standard_normal((1, n_keys, d_k))
    up = rng.standard_normal((1, n_queries, n_keys))  # 随机的 dL/dp，每个 d_k 下大小都一样
    for scaled in (True, False):
        scores = mg.tensor(qd @ kd.transpose(0, 2, 1) / (math.sqrt(d_k) if scaled else 1.0),
                           requires_grad=True, dtype="float64")
        p = scores.softmax(axis=-1)
        p.backward(up)
        pn = p.numpy()
        entropy = float(-(pn * np.log(np.clip(pn, 1e-300, None))).sum(-1).mean())
        scale_stats[scaled]["entropy"].append(entropy)
        scale_stats[scaled]["grad"].append(float(np.abs(scores.grad.numpy()).mean()))

print(f"{'d_k':>6s} {'熵（缩放）':>10s} {'熵（不缩放）':>9s} {'|梯度|（缩放）':>11s} {'|梯度|（不缩放）':>10s}")
for i, d_k in enumerate(dims):
    print(f"{d_k:6d} {scale_stats[True]['entropy'][i]:15.3f} {scale_stats[False]['entropy'][i]:12.3f} "
          f"{scale_stats[True]['grad'][i]:14.2e} {scale_stats[False]['grad'][i]:11.2e}")
print(f"（{n_keys} 个 key 上的均匀分布，熵是 ln {n_keys} = {math.log(n_keys):.3f}）")
my_guesses.reveal("unscaled_entropy", scale_stats[False]["entropy"][dims.index(1024)])

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for scaled, style, name in [(True, "o-", label("缩放：QK^T / √d_k", "scaled: QK^T / sqrt(d_k)")),
                            (False, "s--", label("不缩放：QK^T", "unscaled: QK^T"))]:
    axes[0].semilogx(dims, scale_stats[scaled]["entropy"], style, label=name, base=2)
    axes[1].loglog(dims, scale_stats[scaled]["grad"], style, label=name, base=2)
axes[0].axhline(math.log(n_keys), color="gray", lw=0.8, ls=":", label=label("均匀分布（ln 16）", "uniform (ln 16)"))
axes[0].set_title(label("softmax 的熵（越低越接近 one-hot）", "softmax entropy (lower = more one-hot)"))
axes[1].set_title(label("|dL/d 分数| 的平均", "mean |dL/d score|"))
for ax in axes:
    ax.set_xlabel("d_k")
    ax.grid(True, alpha=0.3)
    ax.legend()
fig.tight_layout()
show_figure(fig, "03_scale.png")

# %%
ent_s, ent_r = scale_stats[True]["entropy"], scale_stats[False]["entropy"]
grad_s, grad_r = scale_stats[True]["grad"], scale_stats[False]["grad"]
assert max(ent_s) - min(ent_s) < 0.5  # 有缩放时，各个 d_k 下分布的形状不变
assert all(a > b for a, b in zip(ent_r, ent_r[1:]))  # 没有缩放，d_k 越大分布越尖……
assert ent_r[-1] < 0.1 * ent_s[-1]  # ……直到几乎是 one-hot
assert all(a > b for a, b in zip(grad_r, grad_r[1:]))  # 穿过 softmax 的梯度也越来越小……
assert grad_r[-1] < 0.1 * grad_s[-1]  # ……不到有缩放时的十分之一

# %% [markdown]
# 有缩放时，熵在各个维度下几乎不变；没缩放时，$d_k = 1024$ 的分布几乎是 one-hot，
# 传到分数上的梯度也只剩有缩放时的十几分之一，而且维度越高越小——训练会越来越难推动这些分数。
#
# ## 4. 代价：长度的平方
#
# 每个查询都要和每个键比一次，分数矩阵是 $T\times T$。长度翻倍，分数矩阵的元素数、乘法次数
# （约 $2\cdot 2T^2d$：一次 $QK^\top$，一次乘 $V$）和内存都变成 4 倍。
# 内存用 `tracemalloc` 测（NumPy 的数组分配会报告给它），拟合出“内存 ∝ $T^{\,p}$”里的指数 $p$；
# 时间只作参考——计时受机器负载影响，不作断言。
#
# **先猜一猜**：长度从 512 翻倍到 1024，一次注意力计算的峰值内存变成原来的几倍？

# %%
my_guesses.guess("memory_ratio", "还没猜", "长度 512 → 1024，峰值内存变成几倍")  # 换成你的猜测

# %%
lengths = [128, 256, 512, 1024] if QUICK else [128, 256, 512, 1024, 2048]
d_model = 64
peak_mib, seconds = [], []
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
    print(f"T={n:5d}  分数矩阵 {f'{n}x{n}':>9s} = {n * n:>9,d} 个数   峰值内存 {peak / 2**20:6.2f} MiB   "
          f"约 {4 * n * n * d_model / 1e6:8.1f} MFLOP   {best * 1e3:7.2f} ms")

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
ref = np.array(lengths, dtype=float)
axes[0].loglog(lengths, peak_mib, "o-", base=2, label=label("实测峰值内存", "measured peak memory"))
axes[0].loglog(lengths, peak_mib[-1] * (ref / ref[-1]) ** 2, ":", color="gray", base=2, label="∝ T²")
axes[0].set_ylabel("MiB")
axes[1].loglog(lengths, np.array(seconds) * 1e3, "o-", base=2,
               label=label("实测时间（仅供参考）", "measured time (information only)"))
axes[1].loglog(lengths, seconds[-1] * 1e3 * (ref / ref[-1]) ** 2, ":", color="gray", base=2, label="∝ T²")
axes[1].set_ylabel("ms")
for ax, title in zip(axes, [label("注意力前向：峰值内存", "attention forward: peak memory"),
                            label("注意力前向：时间", "attention forward: time")]):
    ax.set_xlabel(label("序列长度 T", "sequence length T"))
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend()
fig.tight_layout()
show_figure(fig, "03_quadratic_cost.png")

ratios = [b / a for a, b in zip(peak_mib, peak_mib[1:])]
exponent = float(np.polyfit(np.log(lengths[1:]), np.log(peak_mib[1:]), 1)[0])  # 内存 ∝ T^exponent
print("长度每翻一倍，内存变成原来的：", [f"{r:.2f}" for r in ratios], f"；拟合的指数 p = {exponent:.2f}")
my_guesses.reveal("memory_ratio", ratios[lengths.index(1024) - 1])
assert 3.5 < ratios[-1] < 4.5  # 长度翻倍，内存变成 4 倍
assert 1.8 < exponent < 2.2  # 整条曲线都是 T²：不是 T（那是 RNN 的样子），也不是 T³

# %% [markdown]
# ## 5. 好处：不必一步一步来
#
# RNN 的第 $t$ 步要等第 $t-1$ 步算完，一句 $T$ 个词就是 $T$ 步**串行**计算。自注意力里所有查询和所有键
# 的匹配是**同一次**矩阵乘法，位置之间没有先后依赖。我们数一数计算图里从输入到输出最长的那条依赖链
# （必须一个接一个做的运算个数），再量一量训练一步（前向 + 反向传播）的时间随长度怎么变。
#
# **先猜一猜**：句子从 8 个词加长到 128 个词，RNN 和注意力的最长依赖链各会变成多长？

# %%
my_guesses.guess("rnn_chain_128", "还没猜", "128 个词时 RNN 的最长依赖链（运算个数）")  # 换成你的猜测
my_guesses.guess("attention_chain_128", "还没猜", "128 个词时注意力的最长依赖链")

# %%
def longest_chain(y):
    """从任何一个叶子到 y 的最长路径上有几个运算：必须一个接一个做的步数。"""
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


def rnn(x):  # x：(B, T, H) → 最后的隐藏状态，每个词元走一步
    h = mg.zeros(x.shape[0], H)
    for t in range(x.shape[1]):
        h = (x[:, t] @ W_xh + h @ W_hh).tanh()
    return h


def self_attention(x):  # x：(B, T, H) → (B, T, H)，所有位置一次算完
    # 用第 1 节手写的那个组合（矩阵乘、缩放、遮罩、softmax、矩阵乘），不用融合好的 F.scaled_dot_product_attention：
    # 融合算子在计算图里只算一个节点，数出来的链短得不公平；这里数的是你看得见的每一步。
    return attention_by_hand(x @ W_q, x @ W_k, x @ W_v, causal=True)


chain = {"rnn": [], "attention": []}
seq_lengths = [8, 16, 32, 64, 128]
for n in seq_lengths:
    xn = mg.tensor(rng.standard_normal((1, n, H)), requires_grad=True)
    chain["rnn"].append(longest_chain(rnn(xn)))
    chain["attention"].append(longest_chain(self_attention(xn)))
per_token = np.diff(chain["rnn"]) / np.diff(seq_lengths)  # 每多一个词元，RNN 的链长几步
print("T：                  ", seq_lengths)
print("最长依赖链，RNN：      ", chain["rnn"])
print("最长依赖链，注意力：", chain["attention"])
my_guesses.reveal("rnn_chain_128", chain["rnn"][-1])
my_guesses.reveal("attention_chain_128", chain["attention"][-1])
assert len(set(chain["attention"])) == 1  # 不管多长，都是那几个运算
assert len(set(per_token)) == 1 and per_token[0] >= 1  # RNN：每个词元都在链上多加同样的几步，没有例外

# %% [markdown]
# 依赖链说的是“最少要等几步”。GPU 上成千上万个核心可以同时算同一个矩阵乘法，链越短，越能并行；
# 一台 CPU 上我们能直接量的是时间。下面对同一批 8 段文本做一次前向 + 反向传播（训练一步的计算），长度从短到长。

# %%
step_lengths = [16, 32, 64, 128, 256] if QUICK else [16, 32, 64, 128, 256, 512]
step_ms = {"rnn": [], "attention": []}
for n in step_lengths:
    xn = mg.tensor(rng.standard_normal((8, n, H)), requires_grad=True)
    for name, fn in [("rnn", rnn), ("attention", self_attention)]:
        best = math.inf
        for _ in range(3):  # 取三次里最快的一次：机器忙时，慢的那几次量的是别人
            start = time.perf_counter()
            fn(xn).sum().backward()
            best = min(best, time.perf_counter() - start)
        step_ms[name].append(best * 1e3)
lead = np.array(step_ms["rnn"]) / np.array(step_ms["attention"])
for n, r, a, x in zip(step_lengths, step_ms["rnn"], step_ms["attention"], lead):
    print(f"T={n:4d}  训练一步：RNN {r:8.1f} ms，注意力 {a:7.1f} ms，注意力快 {x:4.1f} 倍")
growth = {name: float(np.polyfit(np.log(step_lengths), np.log(ms), 1)[0]) for name, ms in step_ms.items()}
print(f"时间 ∝ T^p：RNN 的 p ≈ {growth['rnn']:.2f}，注意力的 p ≈ {growth['attention']:.2f}")

fig, ax = plt.subplots(figsize=(7, 4.2))
ax.loglog(step_lengths, step_ms["rnn"], "o-", base=2, label=label("RNN（T 步一个接一个）", "RNN (T steps, one by one)"))
ax.loglog(step_lengths, step_ms["attention"], "s-", base=2,
          label=label("自注意力（一次矩阵乘法）", "self-attention (one matrix product)"))
ax.set_xlabel(label("序列长度 T", "sequence length T"))
ax.set_ylabel(label("训练一步的时间（毫秒，越低越好）", "time of one training step (ms)"))
ax.set_title(label("训练一步的时间随长度的变化（8 段文本，宽 64）", "Time of one training step against length"))
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "03_step_time.png")
short = np.array(step_lengths) <= 128
assert lead[short].min() > 1.5  # 短序列上注意力训练一步快得多（计时有波动，阈值故意放宽）
assert lead[-1] < 0.75 * lead.max()  # 但越长领先越少：注意力的计算量按 T² 涨，RNN 只按 T 涨

# %% [markdown]
# 短序列上注意力快得多：RNN 的 $T$ 个小步骤每一步都要付一次调度的开销，注意力只付几次。
# 但也要看清另一面：注意力的计算量按 $T^2$ 涨（第 4 节），RNN 只按 $T$ 涨（上面拟合的指数 $p$），
# 所以在一台 CPU 上，长度越长，注意力领先得越少；到几百个词元，两条线在图上相遇，CPU 上的注意力甚至会落后。
# GPU 上情形反过来：$T^2$ 的计算分给成千上万个核心同时做，
# 而 RNN 的 $T$ 步仍然只能一步一步等——依赖链的长度才是决定性的。这就是 2017 年的论文敢把 RNN 拆掉的底气。
#
# ## 6. 预告：因果遮罩挡住未来
#
# 自注意力是全连接的：第 3 个词也能看到第 5 个词。做生成时，第 5 个词还没写出来，不能偷看。
# 办法是在 softmax 之前，把“未来位置”的分数设成 $-\infty$，它们的权重就变成 0。
# 验证方法很直接：改动第 6 个位置的输入，前 6 个位置的输出应该**一点都不变**。

# %%
T_mask = 10
x_a = rng.standard_normal((1, T_mask, H))
x_b = x_a.copy()
x_b[0, 6] = rng.standard_normal(H)  # 只改第 6 个位置


def outputs(x, causal):
    xt = mg.tensor(x)
    with mg.no_grad():
        return attention_by_hand(xt @ W_q, xt @ W_k, xt @ W_v, causal=causal).numpy()[0]


for causal in (False, True):
    diff = np.abs(outputs(x_a, causal) - outputs(x_b, causal)).max(axis=-1)
    print(f"{'有遮罩' if causal else '无遮罩'}：每个位置的输出变了多少：" + " ".join(f"{v:.1e}" for v in diff))
    if causal:
        assert diff[:6].max() == 0.0  # 过去一点都不动
        assert diff[6:].min() > 1e-3  # 第 6 个位置和之后的位置看得到改动
        lib = F.scaled_dot_product_attention(*(mg.tensor(x_a) @ W for W in (W_q, W_k, W_v)), is_causal=True)
        assert np.allclose(lib.numpy()[0], outputs(x_a, True), atol=1e-5)
    else:
        assert diff[:6].min() > 1e-3  # 没有遮罩，每个位置都受影响

# %%
xt = mg.tensor(x_a)
with mg.no_grad():
    q_, k_ = xt @ W_q, xt @ W_k
    sc = q_ @ k_.transpose(-2, -1) / math.sqrt(H)
    p_full = sc.softmax(-1).numpy()[0]
    p_causal = sc.masked_fill(np.triu(np.ones((T_mask, T_mask), dtype=bool), k=1), -np.inf).softmax(-1).numpy()[0]
fig, axes = plt.subplots(1, 2, figsize=(10, 4.4))
for ax, pm, title in [(axes[0], p_full, label("无遮罩：人人看得见人人", "without mask: everyone sees everyone")),
                      (axes[1], p_causal, label("因果遮罩：只看过去和自己", "causal mask: only the past and itself"))]:
    im = ax.imshow(pm, cmap="Blues", vmin=0, vmax=max(p_full.max(), p_causal.max()))
    ax.set_title(title)
    ax.set_xlabel(label("key 的位置", "key position"))
    ax.set_ylabel(label("query 的位置", "query position"))
    ax.set_xticks(range(T_mask))
    ax.set_yticks(range(T_mask))
fig.colorbar(im, ax=axes, fraction=0.03)
show_figure(fig, "03_causal_mask.png", bbox_inches="tight")

# 遮罩只是拿掉未来的 key，再把剩下的权重重新归一化：看得见的 key 之间，谁多谁少的比例一点不变。
for i in range(T_mask):
    visible = p_full[i, : i + 1] / p_full[i, : i + 1].sum()
    assert np.allclose(p_causal[i, : i + 1], visible, atol=1e-6), i
assert np.allclose(p_causal[-1], p_full[-1], atol=1e-6)  # 最后一个 query 本来就看得见所有 key：它那一行不变
assert p_causal[0, 0] == 1.0  # 第一个 query 只看得见自己

# %% [markdown]
# ## 7. 只用注意力，能比 RNN 猜得准吗？
#
# 讲义说，2017 年那篇论文去掉了 RNN、只靠注意力，结果比 RNN 既好又快。“快”我们在第 5 节量过了。
# “好”呢？在第 01 讲的尺子上比一比：一个**只用注意力**的字符语言模型（没有 RNN），和第 02 讲训练好的 RNN，
# **参数一样多**（都是一万一千个左右），**训练时间差不多**。第 5 节量过，长度 64 时注意力这一层训练一步比 RNN
# 快得多；整个模型一步里还有嵌入、输出层和优化器这些两者共有的开销，算下来 RNN 训练 $N$ 步的时间，
# 大约够注意力模型训练 $2N$ 步。我们就给它 $2N$ 步（每批数据一样大；两者实际用的时间都打印出来，可以对一对）。
#
# 模型很简单：每个字符的向量加上它位置的向量，经过一层带因果遮罩的自注意力（4 个头，每个头各自算一套 Q、K、V，
# 第 05 讲细说），结果加回输入（残差，也是第 05 讲的主角，这里先借来用），再给出下一个字符的 logits。
# 学习率各用各合适的：RNN 沿用第 02 讲的 3e-3；注意力模型用 1e-2（用 3e-3 它学得更慢）。
#
# 第 02 讲的 RNN 分数记在 `figures/ladder/02.json` 里；如果你是直接打开这一讲的，下面会先把第 02 讲运行一遍。
#
# **先猜一猜**：参数一样多、步数一样多，谁在尺子上更好？

# %%
my_guesses.guess("attention_or_rnn", "还没猜", "尺子上谁更好", options=["只用注意力", "RNN"])  # 换成你的猜测

# %%
ys = yardstick.load()
rnn_rung = next(r for r in ladder.ensure("02", ys) if r.key == "rnn")
V = ys.vocab_size


class AttentionLM(nn.Module):
    """嵌入 + 位置向量 → 一层因果自注意力（多头、带残差）→ 每个位置猜下一个字符。没有 RNN，也没有 MLP。"""

    def __init__(self, vocab, d, n_head, block):
        super().__init__()
        self.n_head = n_head
        self.tok = nn.Embedding(vocab, d)
        self.pos = nn.Embedding(block, d)
        self.ln = nn.LayerNorm(d)
        self.qkv = nn.Linear(d, 3 * d)  # Q、K、V 三个线性变换并成一个
        self.proj = nn.Linear(d, d)
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab)

    def forward(self, ids):
        B, T = ids.shape
        C, nh = self.tok.weight.shape[1], self.n_head
        x = self.tok(ids) + self.pos(np.arange(T))  # (B, T, C)
        q, k, v = self.qkv(self.ln(x)).reshape(B, T, 3, nh, C // nh).permute(2, 0, 3, 1, 4)  # 各 (B, nh, T, hs)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)  # (B, nh, T, hs)
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))  # (B, T, C)：注意力的结果加回输入
        return self.head(self.ln_f(x))  # (B, T, vocab)


mg.manual_seed(0)
attn_lm = AttentionLM(V, d=32, n_head=4, block=yardstick.WINDOW)
n_attn = attn_lm.num_parameters()
steps, batch, seq = 2 * rnn_rung.extra["steps"], rnn_rung.extra["batch"], rnn_rung.extra["seq"]  # 两倍的步数
optimizer = optim.AdamW(attn_lm.parameters(), lr=1e-2, weight_decay=0.0)
batch_rng = np.random.default_rng(0)
start = time.perf_counter()
for _ in range(steps):
    x, y = get_batch(ys.train, batch, seq, batch_rng)
    # 前向（forward）
    logits = attn_lm(x)
    loss = F.cross_entropy(logits.reshape(-1, V), y.reshape(-1))
    # 反向传播（backward）
    optimizer.zero_grad()
    loss.backward()
    nn.utils.clip_grad_norm_(attn_lm.parameters(), 1.0)
    # 更新（update）
    optimizer.step()
attn_seconds = time.perf_counter() - start
attn_score = ys.score_logits(attn_lm)
gap, gap_err = attn_score.gap(rnn_rung.score)
print(f"只用注意力：{n_attn:,} 个参数，{steps} 步用时 {attn_seconds:.0f} 秒；尺子上 {attn_score} 纳特/字符")
print(f"第 02 讲的 RNN：{rnn_rung.size:,} 个参数，{rnn_rung.extra['steps']} 步用时 {rnn_rung.train_seconds:.0f} 秒；"
      f"尺子上 {rnn_rung.score} 纳特/字符")
print(f"只用注意力 比 RNN：{gap:+.3f} ± {gap_err:.3f} 纳特/字符（同一批窗口上逐窗口相减）")
my_guesses.reveal("attention_or_rnn", "RNN" if gap > 0 else "只用注意力")

behind = attn_score.per_position - rnn_rung.score.per_position  # 每个位置上，注意力模型比 RNN 多花多少
fig, ax = plt.subplots(figsize=(8, 4.2))
ax.bar(np.arange(1, len(behind) + 1), behind, color=np.where(behind > 0, "darkorange", "steelblue"))
ax.axhline(gap, color="black", ls="--", lw=1, label=label(f"平均 {gap:+.3f}", f"mean {gap:+.3f}"))
ax.set_xlabel(label("窗口里已经读过的字符数", "characters read so far in the window"))
ax.set_ylabel(label("只用注意力 − RNN（纳特/字符）", "attention only - RNN (nats per character)"))
ax.set_title(label("逐位置比较：高于 0 的地方 RNN 猜得更准", "Position by position: above 0, the RNN guesses better"))
ax.legend()
fig.tight_layout()
show_figure(fig, "03_attention_vs_rnn.png")

# %%
assert abs(n_attn - rnn_rung.size) < 0.05 * rnn_rung.size  # 参数预算相同（相差不到 5%）
assert gap > 3 * gap_err  # 在这个尺度上，RNN 赢了：步数加倍，只用注意力的模型在尺子上仍然更差

# %% [markdown]
# **更正**：在这个尺度上，讲义的说法不成立。参数一样多，训练时间差不多（步数是 RNN 的两倍），
# 只用注意力的模型在尺子上输给了 RNN。原因在于它们各自能做什么运算：注意力层给每个位置的，
# 是前面各位置的值的**加权平均**——对值来说是线性的混合；RNN 每读一个字符，都要把纸条过一次 tanh，
# 一万来个参数全都花在“非线性地揉”上。看字符猜字符，主要靠最近几个字符组合起来的样子（第 01 讲的计数模型就是证据），
# 这恰恰是 RNN 擅长、而一层线性混合不擅长的。
#
# 2017 年的论文并没有只留注意力：它的每一层都还有一个逐位置的 MLP（第 05 讲），模型大、数据多、用 GPU 训练——
# 那时“快”换来的是同样时间里多得多的训练，“好”才随之而来。第 06、07 讲的 GPT 把注意力、MLP、残差、LayerNorm
# 合在一起，第 07 讲的梯子会告诉你它们走到了哪一级。
#
# 把这个只用注意力的模型也放上梯子：

# %%
ladder.record("03", [
    Rung(key="attention", name="只用注意力", lecture="03", size=n_attn, size_kind="parameters",
         train_seconds=attn_seconds, score=attn_score, extra={"steps": steps, "lr": 1e-2}),
], ys)
print("记下了第 03 讲的一级：只用注意力")

# %% [markdown]
# ## 8. 交叉注意力：查询来自一句，键和值来自另一句
#
# 讲义在讲 Q、K、V 从哪来时提过一句：翻译时三者不来自同一份——**查询**来自正在写译文的解码器，**键和值**来自读过原文的
# 编码器。这种注意力叫**交叉注意力**（cross-attention）；第 02 讲末尾，解码器回头看编码器各状态的那一步就是它
# （那时还架在 RNN 上）。最初的 Transformer 是“编码器-解码器”：编码器用自注意力读原文，解码器每层先用带因果遮罩的
# 自注意力看自己写过的字，再用交叉注意力去看原文。GPT 把交叉注意力整个去掉，只剩解码器。
#
# 在唐诗上做一个小小的“翻译”：给出一联的上句，写出下句（只用常用的 1500 个字写成的五言联，见 `tutorials/couplets.py`）。
# 比两个参数差不多、训练步数相同的模型：
#
# - **编码器-解码器**：编码器一层（不带遮罩的自注意力，每个字都看整句上句）；
#   解码器一层（因果自注意力 → 交叉注意力 → MLP）。
# - **只有解码器**：把“上句，下句”接成一串，两层因果自注意力的小 GPT，只在下句的字上算损失。
#
# 两者都要从上句里取信息。量三件事：下句每个字的损失；把上句换成另一联的上句，损失涨多少（模型真用上了上句吗）；
# 交叉注意力的图——解码器写下句第 $i$ 个字时，看的是上句哪个字？
#
# **先猜一猜**：少了交叉注意力，只有解码器的模型会吃亏吗？交叉注意力的图会是什么样子？

# %%
my_guesses.guess("decoder_only_loses", "还没猜", "同样的参数和步数，只有解码器的模型比编码器-解码器",
                 options=["会吃亏", "不吃亏"])  # 换成你的猜测

# %%
from minigpt import GPT, GPTConfig
from minigpt.model import MLP, Block, CausalSelfAttention
from minigrad.nn import init
from tutorials.couplets import load_couplets

tang = load_couplets()
TV = tang.vocab_size
print(f"五言的联：训练 {len(tang.train):,} 联，验证 {len(tang.val):,} 联；词表 {TV} 个字")
print("例如：", tang.decode(tang.val[0]))


class CrossAttention(nn.Module):
    """多头交叉注意力：查询来自解码器的 x (B, T, C)，键和值来自编码器的输出 memory (B, S, C)。

    不要遮罩：原文整句都可看。
    """

    def __init__(self, d, n_head):
        super().__init__()
        self.n_head = n_head
        self.q = nn.Linear(d, d)
        self.kv = nn.Linear(d, 2 * d)
        self.proj = nn.Linear(d, d)
        self.probs = None  # 最近一次的注意力权重 (B, nh, T, S)，画图用

    def forward(self, x, memory):
        B, T, C = x.shape
        S, nh = memory.shape[1], self.n_head
        q = self.q(x).reshape(B, T, nh, C // nh).transpose(1, 2)  # (B, nh, T, hs)
        k, v = self.kv(memory).reshape(B, S, 2, nh, C // nh).permute(2, 0, 3, 1, 4)  # 各 (B, nh, S, hs)
        self.probs = F.attention_probs(q, k).numpy()  # (B, nh, T, S)
        y = F.scaled_dot_product_attention(q, k, v)  # (B, nh, T, hs)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))  # (B, T, C)


class DecoderBlock(nn.Module):
    """解码器的一层：因果自注意力看自己写过的字 → 交叉注意力看原文 → MLP，每步前 LayerNorm、后加回残差。"""

    def __init__(self, config):
        super().__init__()
        self.ln_1, self.attn = nn.LayerNorm(config.n_embd), CausalSelfAttention(config, 0)
        self.ln_2, self.cross = nn.LayerNorm(config.n_embd), CrossAttention(config.n_embd, config.n_head)
        self.ln_3, self.mlp = nn.LayerNorm(config.n_embd), MLP(config)

    def forward(self, y, memory):
        y = y + self.attn(self.ln_1(y))
        y = y + self.cross(self.ln_2(y), memory)
        return y + self.mlp(self.ln_3(y))


class EncoderDecoder(nn.Module):
    """上句 (B, 5) → 编码器 → memory；解码器读“，”和下句前 4 个字 (B, 5)，逐位置猜下句的 5 个字。"""

    def __init__(self, vocab, d, n_head):
        super().__init__()
        config = GPTConfig(vocab_size=vocab, block_size=5, n_layer=1, n_head=n_head, n_embd=d)
        self.wte = nn.Embedding(vocab, d)  # 编码器、解码器和输出层共用一张嵌入表
        self.wpe_enc, self.wpe_dec = nn.Embedding(5, d), nn.Embedding(5, d)
        self.encoder, self.ln_enc = Block(config, 0), nn.LayerNorm(d)
        self.encoder.attn.causal = False  # 编码器：每个字都看整句上句
        self.decoder, self.ln_f = DecoderBlock(config), nn.LayerNorm(d)
        for module in self.modules():  # 和 GPT 一样的初始化：N(0, 0.02)，偏置为 0
            if isinstance(module, (nn.Linear, nn.Embedding)):
                init.normal_(module.weight, 0.0, 0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                init.zeros_(module.bias)

    def forward(self, src, tgt_in):
        memory = self.ln_enc(self.encoder(self.wte(src) + self.wpe_enc.weight))  # (B, 5, C)
        y = self.decoder(self.wte(tgt_in) + self.wpe_dec.weight, memory)  # (B, 5, C)
        return self.ln_f(y) @ self.wte.weight.T  # (B, 5, V)


def line2_logits(model, batch):
    """两种模型在下句 5 个字上的 logits (B, 5, V)；batch 是 (B, 12) 的联。"""
    if isinstance(model, EncoderDecoder):
        return model(batch[:, :5], batch[:, 5:10])  # 上句；“，”和下句前 4 个字
    return model(batch[:, :10])[0][:, 5:10]  # 从“，”起的 5 个位置猜下句的 5 个字


mg.manual_seed(0)
encdec = EncoderDecoder(TV, 64, 4)
mg.manual_seed(0)
deconly = GPT(GPTConfig(vocab_size=TV, block_size=10, n_layer=2, n_head=4, n_embd=64))
SEQ_STEPS = 600 if QUICK else 1000
for model in (encdec, deconly):
    optimizer = optim.AdamW(model.parameters(), lr=3e-3)
    batch_rng = np.random.default_rng(0)
    start = time.perf_counter()
    for _ in range(SEQ_STEPS):
        batch = tang.train[batch_rng.integers(0, len(tang.train), 64)]
        # 前向（forward）：只在下句的 5 个字上算损失
        loss = F.cross_entropy(line2_logits(model, batch).reshape(-1, TV), batch[:, 6:11].reshape(-1))
        # 反向传播（backward）
        optimizer.zero_grad()
        loss.backward()
        # 更新（update）
        optimizer.step()
    print(f"{type(model).__name__}：{model.num_parameters():,} 个参数，{SEQ_STEPS} 步用时 "
          f"{time.perf_counter() - start:.0f} 秒，训练损失 {loss.item():.2f}")

# %%
val = tang.val[:2000]
swapped = val.copy()
swapped[:, :5] = val[np.random.default_rng(1).permutation(len(val)), :5]  # 每个下句配上别的联的上句


@mg.no_grad()
def line2_nll(model, batch):
    """下句每个字的交叉熵（纳特），形状 (B, 5)。"""
    logp = line2_logits(model, batch).log_softmax(-1).numpy()
    return -np.take_along_axis(logp, batch[:, 6:11, None], -1)[..., 0]


seq_loss = {}
for name, model in (("编码器-解码器", encdec), ("只有解码器", deconly)):
    right, wrong = line2_nll(model, val).mean(1), line2_nll(model, swapped).mean(1)
    seq_loss[name] = (right.mean(), right.std() / np.sqrt(len(right)), (wrong - right).mean())
    print(f"{name}：下句 {right.mean():.3f} ± {seq_loss[name][1]:.3f} 纳特/字；换掉上句后涨 {seq_loss[name][2]:+.3f}")

line2_nll(encdec, val)  # 再跑一遍真上句，让 encdec.decoder.cross.probs 存下它们的注意力
cross = encdec.decoder.cross.probs  # (B, nh, 5, 5)
diagonal = np.array([[cross[:, h, i, i].mean() for i in range(5)] for h in range(cross.shape[1])])  # (nh, 5)
print("交叉注意力落在上句同一座位上的份额（每行一个头；均匀是 0.2）：")
print(diagonal.round(2))

# %%
example = tang.val[:1]
line2_nll(encdec, example)
fig, axes = plt.subplots(1, 2, figsize=(10, 4.2))
seats = [label(f"第{i + 1}字", f"seat {i + 1}") for i in range(5)]
fig.colorbar(axes[0].imshow(cross.mean(axis=(0, 1)), cmap="Blues", vmin=0), ax=axes[0], fraction=0.046)  # 均匀是 0.2
axes[0].set_title(label("验证集上平均（4 个头）", "mean over the validation couplets (4 heads)"))
axes[0].set_xticks(range(5), seats)
axes[0].set_yticks(range(5), [label(f"写第{i + 1}字", f"writing {i + 1}") for i in range(5)])
head = int(diagonal.mean(axis=1).argmax())
axes[1].imshow(encdec.decoder.cross.probs[0, head], cmap="Blues", vmin=0)
first, second = tang.decode(example[0, :5]), tang.decode(example[0, 6:11])
axes[1].set_title(label(f"“{first}”→“{second}”，头 {head}", f"one couplet, head {head}"))
axes[1].set_xticks(range(5), list(first) if CJK else seats)
axes[1].set_yticks(range(5), list(second) if CJK else [f"{i + 1}" for i in range(5)])
for ax in axes:
    ax.set_xlabel(label("上句（编码器给出键和值）", "line 1 (encoder: keys and values)"))
    ax.set_ylabel(label("下句（解码器给出查询）", "line 2 (decoder: queries)"))
fig.tight_layout()
show_figure(fig, "03_cross_attention.png")

# %%
assert np.allclose(cross.sum(-1), 1.0, atol=1e-5)  # 每个查询的交叉注意力只分给上句的 5 个字，和为 1
for name, (_, _, rise) in seq_loss.items():
    assert rise > 0.08, name  # 两个模型都真用上了上句：换成别的联的上句，损失就涨
enc_right, dec_right = line2_nll(encdec, val).mean(1), line2_nll(deconly, val).mean(1)
gap = enc_right - dec_right  # 每一联上，编码器-解码器比只有解码器多花多少纳特
gap_err = gap.std() / np.sqrt(len(gap))
print(f"编码器-解码器 − 只有解码器：{gap.mean():+.3f} ± {gap_err:.3f} 纳特/字（同一批验证联上逐联相减）")
assert abs(encdec.num_parameters() - deconly.num_parameters()) < 0.15 * deconly.num_parameters()  # 参数差不多
my_guesses.reveal("decoder_only_loses", "会吃亏" if gap.mean() < 0 else "不吃亏")
assert gap.mean() > 3 * gap_err  # 去掉交叉注意力没有吃亏：这个尺度上，只有解码器的模型反而更好

# %% [markdown]
# 交叉注意力和自注意力用的是同一个公式，只是查询和键、值来自两个序列：解码器的每个位置拿自己的查询，
# 去和上句 5 个字的键比匹配度，按权重取回它们的值。上面的图就是这张 $5 \times 5$ 的权重表：每一行是写下句某个字时，
# 注意力怎样分给上句的 5 个字（每行和为 1）。它并不均匀，有的座位被看得明显多些；上面打印的“同一座位上的份额”
# 也有高过均匀的 0.2 的，但在这样小的模型和训练量下，并没有长出整齐的对角线，而且哪个座位被看得多随训练步数和种子而变，
# 所以这里不作断言。
# 第 05 讲会在只有解码器的模型里找到一个专看上句同一座位的头。
#
# 两个模型都用上了上句：换成别的联的上句，下句的损失都会上涨。而去掉交叉注意力、把上句和下句接成一串交给自注意力，
# 并没有让模型变差——参数差不多、步数相同，只有解码器的模型在下句上的损失反而更低：它的两层注意力都能同时看上句和
# 自己已经写出的字，在同一个 softmax 里权衡两边。这就是 GPT 敢把交叉注意力整个砍掉的底气：有原文的任务，
# 把原文写在前文里就行；没有原文的任务（续写、聊天、写代码）本来就用不上它。

# %%
my_guesses.calibration()  # 本讲的先猜一猜：数值猜测差几倍，选择题猜对几个

# %% [markdown]
# ## 小结
#
# - 注意力 = 匹配（$QK^\top$）→ 归一化（softmax）→ 取回（乘 $V$），全是矩阵运算，不需要 RNN。
# - Q、K、V 是同一批嵌入的三种线性变换；训练让“它”的查询学会去找动物名词的键。
# - $1/\sqrt{d_k}$ 让分数的尺度不随维度增长，softmax 不饱和，梯度不消失。
# - 代价是 $T^2$：长度翻倍，分数矩阵和内存都变成 4 倍。
# - 好处是并行：依赖链的长度与句子长短无关，而 RNN 每个词都要多走一步；训练一步的时间，注意力在每个长度上都更短。
# - 因果遮罩让每个位置只看过去——第六讲 GPT 的核心。
# - 但“只用注意力”在小尺度上并不比 RNN 猜得准：一层注意力只是值的线性混合。要更好，还得配上 MLP、残差，
#   叠成更深更大的模型（第 05–07 讲）。
# - 查询来自解码器、键和值来自编码器，就是交叉注意力；把原文接在前文里交给自注意力，也能做同样的事（GPT 的做法）。
#
# 但注意力还有一个盲点：它对词的**顺序**毫不在意——把句子打乱，每个词得到的加权和不变。
# 第四讲的位置编码来补这个缺口。
#
# ## 练习
#
# 6 道练习在 `tutorials/exercises/lecture03.py` 里：数值稳定的 softmax（3.1）、缩放点积注意力（3.2）、
# 因果注意力（3.3）、推导分数的标准差（3.4）、推导 softmax 的反向传播（3.5），以及一道开放题（3.6）：
# 第 2 节的代词拿掉名词遮罩之后，模型会找捷径；不用遮罩，能不能让代词既答对、又真的看向正确的名词？
# 检查器换 3 个随机种子训练你的模型，量没见过的句子上的正确率和代词放在正确名词上的注意力权重。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 03`。

# %%
from tutorials.exercises import check

check("03")
