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
# # 01 猜下一个词
#
# 语言模型只玩一个游戏：看着已经出现的内容，猜下一个是什么。这一讲我们在莎士比亚的剧本上
# 玩这个游戏（英文，以字符为单位猜），回答：
#
# > **最笨的猜法有多好？让机器“学”出来的猜法和“数”出来的一样吗？多看几个字有多大用处？**
#
# 实验清单：
#
# 1. 数数：统计“字符 a 后面跟着字符 b”的次数，得到一个二元（bigram）模型，用它写一段“莎士比亚”；
# 2. 同一个模型换一种做法：embedding + 线性层，用 minigrad 训练，损失追平数数的结果；
# 3. 多看几个字（前 1、2、3、4 个字符）：在没见过的文本上，损失一路下降；
# 4. 有的前文几乎锁死下一个字符，有的几乎什么都可能：用熵来量；
# 5. 行为相似的字符，学出来的 embedding 也靠得近。
#
# 运行：`python tutorials/01_next_token.py`（`TUTORIAL_QUICK=1` 跑快速版）。图片写到当前目录的 `figures/`。

# %% [markdown]
# **学完这一讲，你能**：用交叉熵给一个语言模型打分，并说出“瞎猜”的分数是多少；数出一个二元模型，
# 再用梯度下降把同一个模型“学”出来；解释为什么多看几个字有用、却越来越难靠数数做到。
#
# **用时**（在 2 核 CPU 上实测的 CPU 时间；机器忙时墙钟时间更长）：
# 运行本讲，快速版约 10 秒，完整版约 45 秒；最后有 5 道练习。

# %%
from tutorials.course import QUICK, label, show_figure  # first: it limits BLAS threads before NumPy loads

# isort: split
import math

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt.corpus import load_shakespeare
from minigrad import nn, optim

mg.manual_seed(0)

# %% [markdown]
# ## 0. 语料：字符变成数字
#
# 计算机不认字符，先给每个字符一个编号。前 90% 的文本用来“学”，后 10% 留作考试——
# 模型从没见过它们，在上面的表现才说明它学到的是规律，而不是背下了课文。
#
# 衡量“猜得好不好”用**交叉熵损失**：模型给正确答案的概率取负对数，再对所有位置求平均，单位是 nats。
# 完全瞎猜（每个字符概率相等）的损失是 $\ln V$；损失越低，模型越不“意外”。

# %%
text = load_shakespeare()
if QUICK:
    text = text[:1_000_000]
chars = sorted(set(text))
V = len(chars)
stoi = {ch: i for i, ch in enumerate(chars)}
data = np.array([stoi[ch] for ch in text])
n_train = int(0.9 * len(data))
train_data, val_data = data[:n_train], data[n_train:]
print(f"{len(text):,} characters; vocabulary of {V}: {''.join(chars)!r}")
print(f"uniform guessing: ln {V} = {math.log(V):.3f} nats per character")

# %% [markdown]
# ## 1. 数数：二元模型
#
# 最笨的办法：只看上一个字符。数一数训练文本里每一对相邻字符 (a, b) 出现的次数，
# 那么 $P(b \mid a) = \dfrac{\text{count}(a, b)}{\text{count}(a)}$。
# 没出现过的组合会得到概率 0，一旦考试时遇上，损失就是无穷大，所以每个格子先加一个很小的数（平滑）。
#
# **先猜一猜**：瞎猜的损失是 $\ln V$（上面打印的那个数）。只看上一个字符，留出文本上的损失能降到多少？
# 降一点点，还是降一大截？

# %%
counts = np.zeros((V, V))
np.add.at(counts, (train_data[:-1], train_data[1:]), 1)
P_count = (counts + 0.1) / (counts + 0.1).sum(axis=1, keepdims=True)
count_loss = float(-np.log(P_count[val_data[:-1], val_data[1:]]).mean())
print(f"counting bigram: held-out loss {count_loss:.3f} nats per character")
assert count_loss < math.log(V) - 1.0  # one character of context already helps a lot

# %%
letters = [stoi[c] for c in "abcdefghijklmnopqrstuvwxyz "]
fig, ax = plt.subplots(figsize=(7.5, 7))
ax.imshow(P_count[np.ix_(letters, letters)], cmap="Blues")
tick = [repr(chars[i])[1:-1] if chars[i] != " " else "␣" for i in letters]
ax.set_xticks(range(len(letters)), tick)
ax.set_yticks(range(len(letters)), tick)
ax.set_xlabel("next character b")
ax.set_ylabel("previous character a")
ax.set_title("P(b | a) counted on Shakespeare (lowercase letters and space)")
fig.tight_layout()
show_figure(fig, "01_bigram_table.png")

# %% [markdown]
# 表里能看到英文的“指纹”：q 那一行几乎只有 u 是深色，空格后面各种字母都有可能。
# 按这张表一个字符一个字符地抽样，就能“写作”：

# %%
def sample_bigram(P, first, n, seed=0):
    rng = np.random.default_rng(seed)
    out = [stoi[first]]
    for _ in range(n):
        out.append(int(rng.choice(V, p=P[out[-1]])))
    return "".join(chars[i] for i in out)


print(sample_bigram(P_count, "\n", 300))

# %% [markdown]
# 有点像英文剧本的样子（大写人名、冒号、换行），但词都是乱的——只看一个字符，记不住一个词。
#
# ## 2. 同一个模型，换成“学”出来的
#
# 现在换个做法：每个字符先查一张表，得到一个 16 维向量（embedding），再用一个线性层把它变成
# $V$ 个分数（logits），softmax 之后就是下一个字符的概率。参数随机开始，用梯度下降（AdamW）让交叉熵变小。
#
# 这个模型能表达的，本质上还是一张“上一个字符 → 下一个字符”的概率表，所以它最好也就追平数数的结果。
# 我们来看它能不能追上。

# %%
class NeuralBigram(nn.Module):
    """logits(next | prev) = Linear(Embedding(prev)): a bigram table through a 16-dimensional bottleneck."""

    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, prev):
        return self.out(self.emb(prev))  # (N, vocab)


mg.manual_seed(0)
bigram = NeuralBigram(V, 16)
optimizer = optim.AdamW(bigram.parameters(), lr=1e-2, weight_decay=0.0)
steps, batch = (600, 2048) if QUICK else (2500, 4096)
rng = np.random.default_rng(0)
losses = []
for step in range(steps):
    ix = rng.integers(0, len(train_data) - 1, batch)
    # forward
    loss = F.cross_entropy(bigram(train_data[ix]), train_data[ix + 1])
    # backward
    optimizer.zero_grad()
    loss.backward()
    # update
    optimizer.step()
    losses.append(loss.item())
    if step % 250 == 0 or step == steps - 1:
        print(f"step {step:5d}  training loss {loss.item():.3f}")

with mg.no_grad():
    neural_loss = F.cross_entropy(bigram(val_data[:-1]), val_data[1:]).item()
print(f"held-out loss: counting {count_loss:.3f}, trained embedding + linear {neural_loss:.3f}")

# %%
fig, ax = plt.subplots(figsize=(7, 4))
smooth = np.convolve(losses, np.ones(20) / 20, mode="valid")
ax.plot(np.arange(len(smooth)) + 19, smooth, label="embedding + linear (training loss, smoothed)")
ax.axhline(count_loss, color="crimson", ls="--", label=f"counting model, held-out ({count_loss:.3f})")
ax.axhline(math.log(V), color="gray", ls=":", label=f"uniform guessing ({math.log(V):.2f})")
ax.set_xlabel("step")
ax.set_ylabel("cross-entropy (nats per character)")
ax.set_title("Learning a bigram model with gradient descent")
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "01_neural_bigram.png")

assert abs(neural_loss - count_loss) < (0.05 if QUICK else 0.03)  # learning reaches what counting gives

# %% [markdown]
# 两条路走到了同一个地方：数数是直接写下答案，梯度下降是一步步逼近它。
# 梯度下降的好处在于它不挑模型——后面的 RNN、Transformer 没法“数”，却都能这样训练。
#
# ## 3. 多看几个字
#
# 只看 1 个字符太少。看前 $k$ 个字符呢？数数的办法照用，只是“前文”从 1 个字符变成 $k$ 个。
# 麻烦在于前文越长，组合越多，很多组合在训练文本里一次都没出现过。
# 办法是**退一步**：某个长前文见得少，就多参考短一点的前文的估计：
#
# $$P_k(c \mid h_k) = \frac{N(h_k, c) + \beta\, P_{k-1}(c \mid h_{k-1})}{N(h_k) + \beta}$$
#
# 其中 $h_k$ 是前 $k$ 个字符，$N(\cdot)$ 是它在训练文本里出现的次数，$\beta = 2$。
#
# 见得多的前文，以自己的统计为准；没见过的，整个退回到短一级的估计。$P_{-1}$ 是均匀分布。
#
# **先猜一猜**：前文从 0 个字符加到 4 个，留出文本上的损失每一步降多少？收益是越来越大，还是越来越小？

# %%
class CharNGram:
    """Next-character counts for every context of up to k previous characters, each backed off to shorter ones."""

    def __init__(self, data, k, beta=2.0):
        self.k, self.beta = k, beta
        self.tables = []  # one per order 0..k: sorted (context, next) keys and their counts, contexts and counts
        for order in range(k + 1):
            ctx = self.context_ids(data, order)
            pair_keys, pair_counts = np.unique(ctx * V + data[k:], return_counts=True)
            ctx_keys, ctx_counts = np.unique(ctx, return_counts=True)
            self.tables.append((pair_keys, pair_counts, ctx_keys, ctx_counts))

    def context_ids(self, data, order):
        """For every position t >= k, the `order` characters before it as one integer (base V)."""
        ids = np.zeros(len(data) - self.k, dtype=np.int64)
        for j in range(1, order + 1):
            ids = ids * V + data[self.k - j : len(data) - j]
        return ids

    @staticmethod
    def lookup(keys, table_keys, table_counts):
        i = np.clip(np.searchsorted(table_keys, keys), 0, len(table_keys) - 1)
        return np.where(table_keys[i] == keys, table_counts[i], 0)

    def prob(self, data, candidates=None):
        """P(next char) at every position t >= k of `data`: of data[t] itself, or of each of `candidates`."""
        nxt = data[self.k :, None] if candidates is None else np.asarray(candidates)[None, :]
        p = np.full((len(data) - self.k, nxt.shape[1]), 1.0 / V)
        for order in range(self.k + 1):
            pair_keys, pair_counts, ctx_keys, ctx_counts = self.tables[order]
            ctx = self.context_ids(data, order)[:, None]
            n_pair = self.lookup(ctx * V + nxt, pair_keys, pair_counts)
            n_ctx = self.lookup(ctx, ctx_keys, ctx_counts)
            p = (n_pair + self.beta * p) / (n_ctx + self.beta)
        return p

    def loss(self, data):
        return float(-np.log(self.prob(data)).mean())

    def sample(self, prompt, n, seed=0):
        rng = np.random.default_rng(seed)
        ids = [stoi[c] for c in prompt]
        for _ in range(n):
            context = np.array(ids[-self.k :] + [0]) if self.k else np.array([0])  # [0]: a stand-in "next"
            p = self.prob(context, candidates=np.arange(V))[0]
            ids.append(int(rng.choice(V, p=p / p.sum())))
        return "".join(chars[i] for i in ids)


MAX_K = 4
ngram_models = {k: CharNGram(train_data, k) for k in range(MAX_K + 1)}
# Score every model on the same held-out positions (those with at least MAX_K characters before them).
ngram_loss = {k: float(-np.log(m.prob(val_data[MAX_K - k :])).mean()) for k, m in ngram_models.items()}
for k, value in ngram_loss.items():
    print(f"context of {k} character{'s' if k != 1 else ''}: held-out loss {value:.3f}")

# %%
fig, ax = plt.subplots(figsize=(6.5, 4))
ks = list(ngram_loss)
ax.bar(ks, [ngram_loss[k] for k in ks], color="steelblue")
for k in ks:
    ax.text(k, ngram_loss[k] + 0.03, f"{ngram_loss[k]:.2f}", ha="center")
ax.set_xlabel("characters of context the model looks at")
ax.set_ylabel("held-out loss (nats per character)")
ax.set_title("More context, better guesses (counting models, backed off)")
ax.set_xticks(ks)
ax.set_ylim(0, 1.12 * max(ngram_loss.values()))
fig.tight_layout()
show_figure(fig, "01_context_length.png")

# %%
assert all(ngram_loss[k + 1] < ngram_loss[k] - 0.1 for k in range(3))  # contexts 0 -> 1 -> 2 -> 3: each helps
assert ngram_loss[MAX_K] < ngram_loss[3]  # and a fourth character still helps a little
assert abs(ngram_loss[1] - count_loss) < 0.02  # the k=1 model is the bigram of section 1

print(ngram_models[3].sample("ROMEO:\n", 300))

# %% [markdown]
# 看 3 个字符的模型已经能拼出不少真单词。但注意收益在递减：前文每长一个字符，组合数就乘以 $V$，
# 训练文本里见过的组合越来越稀，“数数”越来越靠不住。要看得更远，得换一种不靠穷举组合的办法——
# 把前文**压缩**成一个向量，这就是下一讲的 RNN。
#
# ## 4. 有的前文锁死答案，有的前文什么都可能
#
# 一个前文之后下一个字符有多“确定”，可以用它的概率分布的**熵**来量：
# $H = -\sum_c P(c)\log_2 P(c)$，单位是比特。熵为 0 表示完全确定；熵为 $\log_2 V$ 表示完全没头绪。
# 我们只看训练文本里出现至少 200 次的前文。
#
# **先猜一猜**：英文里 `q` 之后、空格之后，下一个字符的熵大约各是多少比特？（完全确定是 0，完全没头绪是 $\log_2 V$。）

# %%
def context_entropies(order, min_count=200):
    """Entropy (bits) of the next-character distribution for every context of `order` characters seen often."""
    ctx = np.zeros(len(train_data) - order, dtype=np.int64)
    for j in range(order):
        ctx = ctx * V + train_data[j : len(train_data) - order + j]
    keys, inverse = np.unique(ctx, return_inverse=True)
    table = np.zeros((len(keys), V))
    np.add.at(table, (inverse, train_data[order:]), 1)
    total = table.sum(axis=1)
    keep = total >= min_count
    p = table[keep] / total[keep, None]
    entropy = (p * np.log2(1 / np.where(p > 0, p, 1))).sum(axis=1)  # sum of p log2(1/p); 0 log 0 = 0
    names = []
    for key in keys[keep]:
        name = ""
        for _ in range(order):
            name = chars[key % V] + name
            key //= V
        names.append(name)
    return names, entropy, p


def show(name):
    return repr(name)[1:-1].replace(" ", "␣")


entropy_by_order = {}
for order in (1, 2):
    names, entropy, p = context_entropies(order)
    entropy_by_order[order] = dict(zip(names, entropy))
    rank = np.argsort(entropy)
    print(f"\ncontexts of {order} character(s) seen >= 200 times: {len(names)}")
    print("  most predictable: " + ",  ".join(
        f"'{show(names[i])}' -> '{show(chars[p[i].argmax()])}' ({entropy[i]:.2f} bits)" for i in rank[:5]))
    print("  most open:        " + ",  ".join(f"'{show(names[i])}' ({entropy[i]:.2f} bits)" for i in rank[-5:]))

# %%
H1 = entropy_by_order[1]
print(f"\nH(next | 'q') = {H1['q']:.2f} bits,  H(next | ' ') = {H1[' ']:.2f} bits,  "
      f"the most open possible: log2 {V} = {math.log2(V):.2f} bits")
assert H1["q"] < 0.2  # after q comes u, almost always
assert H1[" "] > 4.0  # after a space, almost any letter
assert max(H1.values()) - min(H1.values()) > 3.5  # contexts differ enormously in how much they decide

fig, ax = plt.subplots(figsize=(11, 4))
order1 = sorted(H1.items(), key=lambda kv: kv[1])
ax.bar(range(len(order1)), [h for _, h in order1], color="steelblue")
ax.set_xticks(range(len(order1)), [show(n) for n, _ in order1], fontsize=9)
ax.set_ylabel("entropy of the next character (bits)")
ax.set_xlabel("previous character")
ax.set_title("How much does the previous character decide the next one?")
ax.axhline(math.log2(V), color="gray", ls=":", label=f"no idea at all (log2 {V})")
ax.legend()
fig.tight_layout()
show_figure(fig, "01_context_entropy.png")

# %% [markdown]
# 和中文里“一推六二五”类似：英文的 q 后面几乎总是 u，猜起来毫无悬念；而空格、换行之后，
# 下一个字符几乎什么都有可能——难度取决于前文提供了多少信息，要看得更远才能猜准。
#
# ## 5. 相似的字符，相近的向量
#
# 第 2 节的模型给每个字符学了一个 16 维向量。没有人告诉它哪些是元音、哪些是标点；
# 但如果两个字符“后面跟什么”的规律相似，让它们共用相似的向量对降低损失最划算。
# 用余弦相似度（两个向量夹角的余弦，1 是同方向，0 是无关）来看看。
#
# **先猜一猜**：句号 `.` 的向量，离它最近的五个字符会是哪些？

# %%
E = bigram.emb.weight.numpy()
En = E / np.linalg.norm(E, axis=1, keepdims=True)
cos = En @ En.T


def mean_cos(group_a, group_b):
    ia, ib = [stoi[c] for c in group_a], [stoi[c] for c in group_b]
    return float(np.mean([cos[i, j] for i in ia for j in ib if i != j]))


vowels, punct = "aeiou", ".,;:!?"
upper, lower = "ABCDEFGHIJKLMNOPRSTUVWY", "abcdefghijklmnoprstuvwy"
vv, pp, vp = mean_cos(vowels, vowels), mean_cos(punct, punct), mean_cos(vowels, punct)
uu, ul = mean_cos(upper, upper), mean_cos(upper, lower)
print(f"mean cosine similarity: vowel-vowel {vv:.2f}, punctuation-punctuation {pp:.2f}, vowel-punctuation {vp:.2f}")
print(f"                        uppercase-uppercase {uu:.2f}, uppercase-lowercase {ul:.2f}")
for c in ".ae":
    nearest = np.argsort(-cos[stoi[c]])[1:6]
    print(f"nearest to '{c}':", " ".join(f"'{show(chars[i])}'" for i in nearest))

# %%
assert vv > vp + 0.15 and pp > vp + 0.15  # vowels sit with vowels, punctuation with punctuation
assert uu > ul + 0.15  # and capitals with capitals
nearest_dot = {chars[i] for i in np.argsort(-cos[stoi["."]])[1:6]}
assert len(nearest_dot & set(punct)) >= 4  # the nearest neighbours of '.' are punctuation marks

# %%
# A 2-D picture of the 16-dimensional vectors: project onto the two directions of largest spread (PCA).
centered = E - E.mean(axis=0)
_, _, Vt = np.linalg.svd(centered, full_matrices=False)
xy = centered @ Vt[:2].T


def kind(c):
    if c.isupper():
        return "uppercase letter"
    if c in "aeiou":
        return "lowercase vowel"
    if c.isalpha():
        return "lowercase consonant"
    if c.isdigit():
        return "digit"
    if c in " \n":
        return "space / newline"
    return "punctuation"


colors = {"lowercase vowel": "crimson", "lowercase consonant": "steelblue", "uppercase letter": "darkviolet",
          "digit": "darkorange", "punctuation": "forestgreen", "space / newline": "black"}
fig, ax = plt.subplots(figsize=(8, 7))
for name, color in colors.items():
    idx = [i for i, c in enumerate(chars) if kind(c) == name]
    if not idx:
        continue
    ax.scatter(xy[idx, 0], xy[idx, 1], s=12, color=color, label=name)
    for i in idx:
        ax.annotate(show(chars[i]), xy[i], fontsize=10, color=color, xytext=(3, 2), textcoords="offset points")
ax.set_title("Character embeddings learned by the bigram model (PCA to 2-D)")
ax.set_xlabel("principal direction 1")
ax.set_ylabel("principal direction 2")
ax.legend()
fig.tight_layout()
show_figure(fig, "01_embeddings.png")

# %% [markdown]
# 标点挤成一团，小写元音彼此靠近，大写字母自成一片（剧本里大写字母多半出现在全大写的人名里，
# 比如 `ROMEO:`，后面跟的往往还是大写字母）：模型为了猜下一个字符，自己发现了“哪些字符用法相似”。
# 这就是“把词变成数字”的真正含义——不只是编号，而是一串带着用法信息的坐标。
#
# ## 6. 换成中文：唐诗里有没有“一推六二五”？
#
# 讲义里的例子是中文的：“一推六二五”，前四个字一出，第五个字几乎没有悬念。上面在英文上看到了同样的现象
# （q 后面几乎总是 u）。现在换成 `minigpt` 自带的唐诗语料（`minigpt train --corpus tang` 用的就是它）：
# 三万五千首绝句和律诗，简体字，每首一块——先是题目，再每行一联，首与首之间空一行。
# 训练和考试按**整首诗**切开：每十首留一首作考试，这样考卷里不会有半首见过、半首没见过的诗。
#
# 五言诗每句正好五个字，是检验这句话的好地方：**看了一句的前四个字，第五个字还剩多少不确定？**

# %%
import re
from collections import Counter

from minigpt import CharTokenizer
from minigpt.corpus import load_tang, split_poems

tang = load_tang()
tang_train, tang_val = split_poems(tang)  # every tenth poem is held out, whole
if QUICK:  # a third of the training poems: cheaper counts, the same picture
    train_poems = tang_train.split("\n\n")
    tang_train = "\n\n".join(train_poems[: len(train_poems) // 3])
zh_tok = CharTokenizer.from_text(tang)
ZV = zh_tok.vocab_size
zh_train, zh_val = zh_tok.encode_array(tang_train), zh_tok.encode_array(tang_val)
print(f"{tang.count(chr(10) * 2) + 1:,} poems; {len(zh_train):,} training and {len(zh_val):,} held-out characters; "
      f"vocabulary of {ZV:,}")
print(tang_val[:52])

# %% [markdown]
# 还用第 3 节的办法数数，但有两处要改：
#
# - 字表有六千多个字，第 3 节把前文写成一个 $V$ 进制整数的做法，到 5 个字时就超出了 64 位整数的范围
#   （$6445^5 > 2^{63}$）。改成**给见过的前文编号**：$k$ 个字的前文 = “$k-1$ 个字的前文的编号” + “紧挨着的那个字”，
#   用 `np.unique` 重新编成连续的号。
# - 字多了，没见过的组合是常态，第 3 节固定的 $\beta = 2$ 太自信。改用 Witten-Bell 平滑：把 $\beta$ 换成
#   “这个前文后面出现过多少种不同的字” $T(h)$——后面跟过的字五花八门的前文，多给没见过的字留些余地：
#
# $$P_k(c \mid h_k) = \frac{N(h_k, c) + T(h_k)\, P_{k-1}(c \mid h_{k-1})}{N(h_k) + T(h_k)}$$

# %%
ZK = 4  # contexts of up to four characters: the "一推六二" before the "五"


def context_numbers(ids: np.ndarray, k_max: int) -> list[np.ndarray]:
    """numbers[k][t]: one integer per distinct k-character context before position t (all 0 for k = 0)."""
    numbers = [np.zeros(len(ids), dtype=np.int64)]
    for _ in range(k_max):
        key = np.full(len(ids), -1, dtype=np.int64)  # position 0 has nothing before it
        key[1:] = numbers[-1][:-1] * ZV + ids[:-1]  # the context one shorter, before t - 1, then the character at t - 1
        numbers.append(np.unique(key, return_inverse=True)[1].reshape(-1))
    return numbers


class HanNGram:
    """Next-character counts after every context of 0..k_max characters, Witten-Bell smoothed.

    `ids` is the training text followed by the held-out text, so that a context gets one number in both;
    only the first `n_train` positions are counted.
    """

    def __init__(self, ids: np.ndarray, n_train: int, k_max: int):
        self.ids, self.numbers = ids, context_numbers(ids, k_max)
        train = np.arange(k_max, n_train)
        self.tables = []  # per order: (context, next) keys and counts; contexts, their counts and follower types
        for ctx in self.numbers:
            pair_keys, pair_counts = np.unique(ctx[train] * ZV + ids[train], return_counts=True)
            ctx_keys, ctx_counts = np.unique(ctx[train], return_counts=True)
            _, types = np.unique(pair_keys // ZV, return_counts=True)  # distinct next characters per context
            self.tables.append((pair_keys, pair_counts, ctx_keys, ctx_counts, types))

    def probs(self, positions: np.ndarray, candidates: np.ndarray | None = None) -> list[np.ndarray]:
        """[P_0, ..., P_k_max]: each order's probability of the true next character (or of each candidate)."""
        nxt = self.ids[positions][:, None] if candidates is None else candidates[None, :]
        p = np.full((len(positions), nxt.shape[1]), 1.0 / ZV)
        out = []
        for ctx_ids, (pair_keys, pair_counts, ctx_keys, ctx_counts, types) in zip(self.numbers, self.tables):
            ctx = ctx_ids[positions][:, None]
            n_pair = CharNGram.lookup(ctx * ZV + nxt, pair_keys, pair_counts)
            n_ctx, t = CharNGram.lookup(ctx, ctx_keys, ctx_counts), CharNGram.lookup(ctx, ctx_keys, types)
            p = np.where(n_ctx > 0, (n_pair + t * p) / np.maximum(n_ctx + t, 1), p)  # unseen context: back off
            out.append(p)
        return out


han = HanNGram(np.concatenate([zh_train, zh_val]), len(zh_train), ZK)
held_out = len(zh_train)  # where the held-out text starts in han.ids

# Where each held-out character sits: seat 1..n in its n-character half-line, n + 1 for the mark after it.
seat = np.zeros(len(zh_val), dtype=np.int64)
form = np.zeros(len(zh_val), dtype=np.int64)
for m in re.finditer(r"(?<=[\n，；])([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})[，；。？！]", tang_val):
    n = len(m.group(1))
    seat[m.start():m.end()], form[m.start():m.end()] = np.arange(1, n + 2), n


def positions_at(n: int, s: int) -> np.ndarray:
    return np.flatnonzero((form == n) & (seat == s)) + held_out


bits = {}  # (form, seat) -> held-out bits per character with 0..ZK characters of context
for n, s in [(5, 1), (5, 2), (5, 3), (5, 4), (5, 5), (5, 6), (7, 7), (7, 8)]:
    bits[n, s] = [float(-np.log2(p).mean()) for p in han.probs(positions_at(n, s))]
print("held-out bits per character, with 0 / 1 / 2 / 3 / 4 characters of context:")
for (n, s), row in bits.items():
    where = f"{'五' if n == 5 else '七'}言 seat {s}" + (" (the mark after the line)" if s == n + 1 else "")
    print(f"  {where:<34}" + "  ".join(f"{b:5.2f}" for b in row))

# %%
fig, ax = plt.subplots(figsize=(8, 4))
seats = [1, 2, 3, 4, 5, 6]
for k, style in ((0, "o:"), (1, "s--"), (2, "^-."), (4, "D-")):
    ax.plot(seats, [bits[5, s][k] for s in seats], style, label=label(f"看前 {k} 个字", f"{k} characters of context"))
ax.set_xticks(seats, [label(f"第{s}字", f"char {s}") for s in seats[:-1]] + [label("，或。", "mark")])
ax.set_xlabel(label("五言诗一句里的位置", "seat in a five-character line"))
ax.set_ylabel(label("没见过的诗上的交叉熵（比特）", "held-out bits per character"))
ax.set_title(label("五言诗：哪个位置好猜，多看几个字有多大用", "Five-character lines: which seat is easy to guess"))
ax.set_ylim(0, 12.5)
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "01_tang_seats.png")

# %% [markdown]
# 读这张图要记住：1 比特的差别就是候选少了一半；$2^{8} = 256$，$2^{10} \approx 1000$。

# %%
gain5, gain1 = bits[5, 5][0] - bits[5, 5][ZK], bits[5, 1][0] - bits[5, 1][ZK]
print(f"seat 5: {bits[5, 5][0]:.2f} -> {bits[5, 5][ZK]:.2f} bits with four characters of context "
      f"(about {2 ** bits[5, 5][ZK]:.0f} equally likely candidates left)")
print(f"seat 1: {bits[5, 1][0]:.2f} -> {bits[5, 1][ZK]:.2f} bits;  七言 seat 7: {bits[7, 7][0]:.2f} -> "
      f"{bits[7, 7][ZK]:.2f} bits")
assert gain5 > 1.2 and bits[7, 7][0] - bits[7, 7][ZK] > 1.2  # the four characters before the last one help...
assert bits[5, 5][ZK] > 7.0  # ...but leave well over a hundred candidates: no 一推六二五 on average
assert gain5 > gain1 + 1.0  # the first seat of a line gains little from the line before it
assert min(bits[5, 1][ZK], bits[5, 3][ZK]) > max(bits[5, 2][ZK], bits[5, 4][ZK]) + 1.0  # 2nd char of a word: easier
assert bits[5, 6][ZK] < min(3.5, min(bits[5, s][ZK] for s in range(1, 6)) - 4)  # the mark after a line: nearly given

# %% [markdown]
# 结论比口号细致：
#
# - **最后一个字**：前四个字让它从约一千个候选缩到几百个（省下一两个比特），但远没有“唯一确定”。诗人本来就要出人意料，
#   大多数诗句不是“一推六二五”那样的固定搭配。
# - **一句的第一个字**：上一句结尾的几个字几乎帮不上忙——新的一句另起炉灶。表里更长的前文甚至更差：
#   四个字连成的前文在训练诗里大多只见过一两次，数出来的统计不可靠，这正是第 3 节说的“数数越来越靠不住”。
# - **第 2、4 个字**比第 1、3 个字好猜得多：五言句常是“二字 + 二字 + 一字”，词的第二个字有第一个字撑腰
#   （“明”后面常是“月”）。
# - **句末的标点**几乎是送分题（两三个比特，而且多半是“，”和“。”二选一）：格律本身就是一种“一推六二五”。
#
# 真正被前四个字锁死的第五个字也有，只是很少，而且都是套语。在全部诗句里找出出现至少 8 次、而第五个字从不变的前四字：

# %%
half_lines = re.findall(r"(?<=[\n，；])([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})(?=[，；。？！])", tang)
next_char = {}
for line in half_lines:
    next_char.setdefault(line[-5:-1], Counter())[line[-1]] += 1  # the four characters before the last -> the last
frequent = {ctx: c for ctx, c in next_char.items() if c.total() >= 8}
locked = sorted(((c.total(), ctx, next(iter(c))) for ctx, c in frequent.items() if len(c) == 1), reverse=True)
print(f"{len(half_lines):,} half-lines; {len(frequent)} four-character contexts seen at least 8 times; "
      f"{len(locked)} of them always end the same way:")
for count, ctx, last in locked:
    print(f"  {ctx} -> {last}   ({count} times)")
assert locked and all(frequent[ctx].total() >= 8 for _, ctx, _ in locked)
assert len(frequent) < 0.001 * len(next_char)  # four-character contexts that come back often are rare

# %% [markdown]
# “何处春深”后面总是“好”，“自君之出”后面总是“矣”：它们来自一组组同题诗（一位诗人用同一个开头连写了二十首），
# 或者是乐府里的固定句式——这才是诗里的“一推六二五”。
#
# ## 7. 在唐诗上玩猜字游戏
#
# 让上面看四个字的模型去猜一首它没见过的诗：每一步给出它的前三个候选，再看真字在它的排名里排第几。

# %%
poem = tang_val.split("\n\n")[3]  # a held-out poem
start = tang_val.index(poem) + poem.index("\n") + 1  # its first line, after the title
print(poem.split("\n")[0])
game = np.arange(start, start + 12) + held_out  # the first couplet: 5 characters, a mark, 5, a mark
game_p = han.probs(game, candidates=np.arange(ZV))[ZK]
ranks = []
for t, p in zip(game, game_p):
    truth = han.ids[t]
    rank = int((p > p[truth]).sum()) + 1
    ranks.append(rank)
    guesses = "  ".join(f"{zh_tok.chars[i]} {p[i]:.2f}" for i in np.argsort(-p)[:3]).replace("\n", "↵")
    context = zh_tok.decode(han.ids[t - 4:t]).replace("\n", "↵")  # ↵: the line break after the title
    print(f"  after ...{context}  guesses: {guesses:<24} truth {zh_tok.chars[truth]}  ranked {rank}")
first_guess = [zh_tok.chars[int(np.argmax(p))] for p in game_p]
assert first_guess[5] in "，。" and first_guess[11] in "，。"  # where a line ends, it guesses a mark...
assert ranks[5] <= 2 and ranks[11] <= 2  # ...and the right one, or the other mark first

# %% [markdown]
# 标点几乎次次猜中，字就难得多——有时真字排进前几名，有时排到几百名以外。换成所有没见过的诗，统计每个位置的猜中率：

# %%
rng = np.random.default_rng(0)
hits = {}
for s in range(1, 7):
    sample = rng.choice(positions_at(5, s), 100 if QUICK else 1000, replace=False)
    p = han.probs(sample, candidates=np.arange(ZV))[ZK]
    truth_p = p[np.arange(len(sample)), han.ids[sample]]
    rank = (p > truth_p[:, None]).sum(axis=1)  # 0: the first guess
    hits[s] = (float((rank < 1).mean()), float((rank < 10).mean()))
    print(f"seat {s}: first guess right {hits[s][0]:.0%}, right within ten guesses {hits[s][1]:.0%}")
assert hits[6][0] > 0.5 and hits[6][1] > 0.9  # the mark after the line
assert hits[2][1] > 2 * max(hits[1][1], hits[3][1])  # the second character of a word
assert max(hits[s][0] for s in range(1, 6)) < 0.35  # no seat of the verse itself is an easy guess

# %% [markdown]
# 猜字游戏和熵说的是同一件事：格律锁定的位置（句末标点）一猜就中；词的第二个字常在前十名里；
# 每个词的第一个字最难，因为那里是诗人真正在“选字”的地方。
#
# ## 小结
#
# - 语言模型 = 给定前文，输出下一个字符（词）的概率分布；用交叉熵衡量它猜得好不好。
# - 二元模型可以“数”出来，也可以用 embedding + 线性层“学”出来，两者殊途同归。
# - 看的前文越长，猜得越准；但靠数数，组合数随长度爆炸，越长越靠不住。
# - 有的前文几乎决定了答案，有的几乎没有帮助：关键是前文里**哪些信息**和当前有关。
# - 学出来的 embedding 里，用法相似的字符自然聚在一起。
#
# 下一讲：把前文压缩成一个向量带着走——RNN，以及它为什么记不住太远的东西。
#
# ## 练习
#
# 5 道练习在 `tutorials/exercises/lecture01.py` 里：瞎猜的损失（1.1）、数出二元组（1.2）、平滑并归一化（1.3）、
# 平均交叉熵（1.4）、熵（1.5）。把每个 `raise NotImplementedError` 换成你的代码，再运行下面这一格
# （或在终端里运行 `python -m tutorials.exercises check 01`）。也可以在这里写函数直接检查，
# 例如 `check("1.2", bigram_counts)`。

# %%
from tutorials.exercises import check

check("01")
