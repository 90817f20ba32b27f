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
# 0. 一把尺子：整门课的每个模型，都在同一段没见过的文本上、用同一个办法打分；
# 1. 数数：统计“字符 a 后面跟着字符 b”的次数，得到一个二元（bigram）模型，用它写一段“莎士比亚”；
# 2. 同一个模型换一种做法：嵌入（embedding）+ 线性层，用 minigrad 训练，损失追平数数的结果；
# 3. 多看几个字：看的字符从 0 个加到 6 个，没见过的文本上损失先降后升，见过的文本上一路下降——数数只会背；
# 4. 有的前文几乎锁死下一个字符，有的几乎什么都可能：用熵来量；
# 5. 行为相似的字符，学出来的嵌入也靠得近；
# 6. 换成唐诗：“一推六二五”在诗里有多常见；
# 7. 在唐诗上玩猜字游戏；
# 8. 诗句接龙：一句的末字能帮你猜下一句的首字吗？
#
# 运行：`python tutorials/01_next_token.py`（`TUTORIAL_QUICK=1` 跑快速版）。图片写到当前目录的 `figures/`。

# %% [markdown]
# **学完这一讲，你能**：用交叉熵给一个语言模型打分，并说出“瞎猜”的分数是多少；数出一个二元模型，
# 再用梯度下降把同一个模型“学”出来；解释为什么多看几个字有用、却越来越难靠数数做到。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（在 2 核 CPU 上实测）；最后有 6 道练习。

# %%
from tutorials.course import QUICK, label, show_figure  # 最先导入：它要在 NumPy 载入前限定 BLAS 线程数

# isort: split
import math
import time

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim
from tutorials import kneser_ney, ladder, yardstick
from tutorials.ladder import Rung

mg.manual_seed(0)

# %% [markdown]
# ## 0. 语料和尺子
#
# 计算机不认字符，先给每个字符一个编号。语料是 `minigpt` 自带的莎士比亚剧本，切法和 `minigpt train` 一样：
# 前 90% 用来“学”，后 10% 留作考试——模型从没见过它们，在上面的表现才说明它学到的是规律，而不是背下了课文。
#
# 衡量“猜得好不好”用**交叉熵**：模型给正确答案的概率取负对数，再对所有位置求平均，单位是**纳特/字符**
# （自然对数；换成以 2 为底就是比特）。完全瞎猜（每个字符概率相等）的交叉熵是 $\ln V$；越低，模型越不“意外”。
#
# 这门课会造出一长串模型：数出来的表、RNN、GRU、只有注意力的模型、大大小小的 GPT。为了让它们的分数能放在一起比，
# 每个模型都用**同一把尺子**打分（`tutorials/yardstick.py`）：从验证集里等距取出一批窗口；模型在每个窗口里逐个猜
# 第 2 个到最后一个字符，每次只能看这个字符之前、同一个窗口里的字符——和 GPT 训练时算损失的方式一样。
# 快速版和完整版用的是同一批窗口。第 07 讲会把所有模型的分数画成一架“损失的梯子”。

# %%
ys = yardstick.load()  # 语料按 `minigpt train` 的办法 90/10 切开，外加验证集里固定的一批窗口
V = ys.vocab_size
chars, stoi = ys.tokenizer.chars, ys.tokenizer.stoi
train_data = ys.train
uniform = ys.uniform()
print(f"训练文本 {len(ys.train):,} 个字符，验证集 {len(ys.val):,} 个字符；字符表有 {V} 个字符：{''.join(chars)!r}")
print(f"尺子：验证集里的 {len(ys.x)} 个窗口，每个窗口要猜 {ys.x.shape[1]} 个字符，一共 {ys.y.size:,} 个")
print(f"瞎猜：每个字符的损失都是 −ln(1/{V}) = ln {V} = {uniform.nats:.3f} 纳特")

# %% [markdown]
# ## 1. 数数：二元模型
#
# 最笨的办法：只看上一个字符。数一数训练文本里每一对相邻字符 (a, b) 出现的次数，
# 那么 $P(b \mid a) = \dfrac{\text{count}(a, b)}{\text{count}(a)}$。
# 没出现过的组合会得到概率 0，一旦考试时遇上，损失就是无穷大，所以每个格子先加一个很小的数（平滑）。
#
# **先猜一猜**：瞎猜的损失是 $\ln V$（上面打印的那个数）。只看上一个字符，验证集上的损失能降到多少？
# 降一点点，还是降一大截？
#
# 下一格记下你的猜测：先把其中的“还没猜”换成你自己的猜测，再往下运行（不猜也能运行，但不计分）；
# 揭晓时实测值会印在它旁边，讲末给出校准得分。

# %%
from tutorials.course import FIGURES
from tutorials.predictions import Predictions

my_guesses = Predictions("01", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_01.json）
my_guesses.guess("bigram_loss", "还没猜", "二元模型在尺子上的损失（纳特/字符）")  # 换成你的猜测

# %%
start = time.perf_counter()
counts = np.zeros((V, V))
np.add.at(counts, (train_data[:-1], train_data[1:]), 1)
P_count = (counts + 0.1) / (counts + 0.1).sum(axis=1, keepdims=True)
bigram_seconds = time.perf_counter() - start
bigram_score = ys.score_probs(P_count[ys.x, ys.y])  # P(真正的下一个字符 | 它前面那个字符)
count_loss = bigram_score.nats
print(f"数出来的二元模型：尺子上 {bigram_score} 纳特/字符")
my_guesses.reveal("bigram_loss", count_loss)
assert count_loss < uniform.nats - 1.0  # 只看一个字符就已经帮了大忙

# %% [markdown]
# `±` 后面是**标准误差**：换一批窗口，分数大约会在这个范围里晃动。两个模型在同一批窗口上比较时，
# 它们的差值比各自的分数精确得多——两者读的是同一段文本（后面比较模型时，`Score.gap` 给出差值和它自己的标准误差）。

# %%
letters = [stoi[c] for c in "abcdefghijklmnopqrstuvwxyz "]
fig, ax = plt.subplots(figsize=(7.5, 7))
ax.imshow(P_count[np.ix_(letters, letters)], cmap="Blues")
tick = [repr(chars[i])[1:-1] if chars[i] != " " else "␣" for i in letters]
ax.set_xticks(range(len(letters)), tick)
ax.set_yticks(range(len(letters)), tick)
ax.set_xlabel(label("下一个字符 b", "next character b"))
ax.set_ylabel(label("前一个字符 a", "previous character a"))
ax.set_title(label("在莎士比亚上数出的 P(b | a)（小写字母和空格）", "P(b | a) counted on Shakespeare"))
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
    """logits(下一个 | 上一个) = Linear(Embedding(上一个))：一张二元表，中间挤过 16 维。"""

    def __init__(self, vocab, dim):
        super().__init__()
        self.emb = nn.Embedding(vocab, dim)
        self.out = nn.Linear(dim, vocab)

    def forward(self, prev):
        return self.out(self.emb(prev))  # (..., vocab)：每个“上一个字符”一行 logits


mg.manual_seed(0)
bigram = NeuralBigram(V, 16)
optimizer = optim.AdamW(bigram.parameters(), lr=1e-2, weight_decay=0.0)
steps, batch = (600, 2048) if QUICK else (2500, 4096)
rng = np.random.default_rng(0)
losses = []
for step in range(steps):
    ix = rng.integers(0, len(train_data) - 1, batch)
    # 前向（forward）
    loss = F.cross_entropy(bigram(train_data[ix]), train_data[ix + 1])
    # 反向传播（backward）
    optimizer.zero_grad()
    loss.backward()
    # 更新（update）
    optimizer.step()
    losses.append(loss.item())
    if step % 250 == 0 or step == steps - 1:
        print(f"第 {step:5d} 步  训练损失 {loss.item():.3f}")

neural_score = ys.score_logits(bigram)  # 窗口 (B, T) 的编号 → logits (B, T, V)，每个位置一行
neural_loss = neural_score.nats
gap, gap_err = neural_score.gap(bigram_score)
print(f"尺子上：数出来的 {count_loss:.3f}，学出来的（嵌入 + 线性层）{neural_loss:.3f}，"
      f"差 {gap:+.3f} ± {gap_err:.3f} 纳特/字符")

# %%
fig, ax = plt.subplots(figsize=(7, 4))
smooth = np.convolve(losses, np.ones(20) / 20, mode="valid")
ax.plot(np.arange(len(smooth)) + 19, smooth,
        label=label("嵌入 + 线性层（训练损失，滑动平均）", "embedding + linear (training loss, smoothed)"))
ax.axhline(count_loss, color="crimson", ls="--",
           label=label(f"数出来的二元模型，尺子上（{count_loss:.3f}）", f"counting model, held out ({count_loss:.3f})"))
ax.axhline(uniform.nats, color="gray", ls=":",
           label=label(f"瞎猜（{uniform.nats:.2f}）", f"uniform ({uniform.nats:.2f})"))
ax.set_xlabel(label("训练步数", "step"))
ax.set_ylabel(label("交叉熵（纳特/字符）", "cross-entropy (nats per character)"))
ax.set_title(label("用梯度下降学一个二元模型", "Learning a bigram model with gradient descent"))
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "01_neural_bigram.png")

assert abs(neural_loss - count_loss) < (0.05 if QUICK else 0.03)  # 学出来的追平了数出来的

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
# 一个看 6 个字符的模型里，顺带就有看 0 到 5 个字符的模型（退一步用的正是它们），所以数一次就能把它们都比一比。
# 窗口开头的几个字符前文不够长，就用够得着的那一级。
#
# 除了尺子（没见过的文本），我们还在**训练文本**里按同样的办法取一批窗口，看模型在“见过的”文本上猜得怎样。
#
# **先猜一猜**：前文从 0 个字符加到 6 个，没见过的文本上损失每一步降多少？会一直降下去吗？见过的文本上呢？

# %%
my_guesses.guess("more_context", "还没猜", "没见过的文本上，前文越长损失……",
                 options=["一直降", "先降后升"])  # 换成你的猜测
my_guesses.guess("best_k", "还没猜", "尺子上最好的计数模型看前几个字符")

# %%
class CharNGram:
    """P(下一个字符 | 它前面的 k 个)，在训练文本上数出来；见得少的前文多参考更短的前文。

    一个模型里装着 0..k 的每一级：第 j 级的估计正是“看 j 个字符”的模型，因为每一级只退回到比它低的级
    （`probs` 把每一级都返回）。
    """

    def __init__(self, ids, k, beta=2.0):
        self.k, self.beta = k, beta
        self.tables, self.seconds = [], []  # 每一级：数出的 (前文, 下一个) 对和前文，以及数它们用的时间
        x, y = ids[None, :-1], ids[None, 1:]  # 把训练文本当成一个长窗口：y[t] 紧跟在 x[..t] 之后
        for order in range(k + 1):
            start = time.perf_counter()
            ctx, seen = self.contexts(x, order)
            pairs = np.unique(ctx[:, seen] * V + y[:, seen], return_counts=True)  # (排好序的键, 各自的次数)
            contexts = np.unique(ctx[:, seen], return_counts=True)
            self.tables.append((pairs, contexts))
            self.seconds.append(time.perf_counter() - start)

    @staticmethod
    def contexts(x, order):
        """窗口 x (N, T) 的每个位置 t：把 x[:, t-order+1 .. t] 这 `order` 个字符写成一个 V 进制整数，
        并给出窗口里到 t 为止是否真有这么多字符（窗口开头没有）。"""
        ids = np.zeros(x.shape, dtype=np.int64)
        for j in range(order):
            ids = ids * V + np.roll(x, j, axis=1)  # x[:, t - j]（开头绕回到了窗口末尾：这些位置不算数）
        return ids, np.arange(x.shape[1]) >= order - 1

    @staticmethod
    def lookup(keys, table):
        table_keys, table_counts = table
        i = np.clip(np.searchsorted(table_keys, keys), 0, len(table_keys) - 1)
        return np.where(table_keys[i] == keys, table_counts[i], 0)

    def probs(self, x, y):
        """[P_0, ..., P_k]：每一级给 y[n, t]（接在 x[n, :t+1] 之后）的概率，形状都是 (N, T)。"""
        p = np.full(y.shape, 1.0 / V)  # P_{-1}：均匀分布
        out = []
        for order, (pairs, contexts) in enumerate(self.tables):
            ctx, seen = self.contexts(x, order)
            n_pair, n_ctx = self.lookup(ctx * V + y, pairs), self.lookup(ctx, contexts)
            p = np.where(seen, (n_pair + self.beta * p) / (n_ctx + self.beta), p)  # 窗口里前文不够长：沿用低一级的 p
            out.append(p)
        return out

    def size(self, order):
        """看 `order` 个字符的模型存了多少个计数：0..order 各级的 (前文, 下一个) 对。"""
        return sum(len(pairs[0]) for pairs, _ in self.tables[: order + 1])

    def sample(self, prompt, n, order, seed=0):
        """从 `order` 级模型逐个抽样，给 `prompt` 续写 n 个字符。"""
        rng = np.random.default_rng(seed)
        ids = [stoi[c] for c in prompt]
        for _ in range(n):
            x = np.tile(ids[-max(order, 1):], (V, 1))  # 同一段前文，每个候选字符一份
            y = np.tile(np.arange(V)[:, None], (1, x.shape[1]))  # 候选字符（只有最后一列有用）
            p = self.probs(x, y)[order][:, -1]
            ids.append(int(rng.choice(V, p=p / p.sum())))
        return "".join(chars[i] for i in ids)


MAX_K = 6
ngram = CharNGram(train_data, MAX_K)
seen_text = ys.training_windows()  # 同样多的窗口，按同样的办法从训练文本里取
ngram_scores = {k: ys.score_probs(p) for k, p in enumerate(ngram.probs(ys.x, ys.y))}
ngram_seen = {k: seen_text.score_probs(p) for k, p in enumerate(ngram.probs(seen_text.x, seen_text.y))}
print(f"计数用了 {sum(ngram.seconds):.1f} 秒")
for k in ngram_scores:
    print(f"看前 {k} 个字符：尺子上 {ngram_scores[k]}，训练文本上 {ngram_seen[k].nats:.3f} 纳特/字符；"
          f"表里存了 {ngram.size(k):>9,} 个计数")
ngram_loss = {k: score.nats for k, score in ngram_scores.items()}
best_k = min(ngram_loss, key=ngram_loss.get)
print(f"尺子上最好的计数模型：看前 {best_k} 个字符，{ngram_scores[best_k]} 纳特/字符")
my_guesses.reveal("more_context", "先降后升" if best_k < MAX_K else "一直降")
my_guesses.reveal("best_k", best_k)

# %%
fig, ax = plt.subplots(figsize=(7.5, 4.2))
ks = np.arange(MAX_K + 1)
ax.bar(ks - 0.2, [ngram_loss[k] for k in ks], 0.4, color="steelblue",
       label=label("没见过的文本（尺子）", "held-out text (the yardstick)"))
ax.bar(ks + 0.2, [ngram_seen[k].nats for k in ks], 0.4, color="lightgray",
       label=label("见过的文本（训练文本里的窗口）", "text it has seen (training windows)"))
for k in ks:
    ax.text(k - 0.2, ngram_loss[k] + 0.03, f"{ngram_loss[k]:.2f}", ha="center", fontsize=9)
ax.set_xlabel(label("模型看的前文有几个字符", "characters of context the model looks at"))
ax.set_ylabel(label("交叉熵（纳特/字符）", "cross-entropy (nats per character)"))
ax.set_title(label("多看几个字：没见过的文本上先降后升，见过的文本上一路下降",
                   "More context: held-out loss falls, then rises; on seen text it keeps falling"))
ax.set_xticks(ks)
ax.set_ylim(0, 1.15 * max(ngram_loss.values()))
ax.legend()
fig.tight_layout()
show_figure(fig, "01_context_length.png")

# %%
assert all(ngram_loss[k + 1] < ngram_loss[k] - 0.1 for k in range(3))  # 前文 0 → 1 → 2 → 3：每一步都有帮助
assert ngram_loss[4] < ngram_loss[3]  # 第四个字符还能帮一点……
assert best_k < MAX_K and ngram_loss[MAX_K] > ngram_loss[best_k] + 0.05  # ……再长反而更差
assert all(ngram_seen[k + 1].nats < ngram_seen[k].nats for k in range(MAX_K))  # 在见过的文本上，越长越“好”
memorised = {k: ngram_loss[k] - ngram_seen[k].nats for k in ngram_scores}  # 见过的文本比没见过的好多少
assert memorised[MAX_K] > memorised[best_k] + 0.3  # 长前文的表主要是在背见过的东西
assert abs(ngram_loss[1] - count_loss) < 0.02  # 看 1 个字符的模型就是第 1 节的二元模型

ngram_sample = ngram.sample("ROMEO:\n", 300, order=best_k)
print(ngram_sample)

# %% [markdown]
# 看 3、4 个字符的模型已经能拼出不少真单词。但注意收益在递减，而且到某一步就掉头了：前文每长一个字符，组合数就乘以 $V$，
# 训练文本里见过的组合越来越稀——看 6 个字符的模型在训练文本上几乎是在“背课文”（灰柱很低），
# 到了没见过的文本上，它见过的长前文大多派不上用场，还不如短一点的模型。这就是**记住**和**学会**的区别：
# 计数模型只会记住见过的组合，见得越少，记得越不可靠。
#
# 不过，“再长反而更差”不全怪数数本身，也怪我们的平滑太粗糙。先看看换一种更聪明的数法，数数最多能做到多好。
#
# ### 数得更聪明：Kneser-Ney
#
# 加 $\beta$ 的平滑有两处可以改进。Kneser-Ney 平滑（Kneser 和 Ney，1995；这里是 Chen 和 Goodman 1998 年的
# “插值、修正”版）把两处都改了：
#
# 1. **折扣（discounting）**：不往前文里“加”伪计数，而是从每个见过的计数里“减”掉一个固定的量 $D$，
#    减下来的概率全部交给短一级前文的估计。为什么要减？训练文本里恰好见过 1 次的组合，到了新文本里平均远不到 1 次
#    （见过一次，多半是碰巧）；见过上千次的，减掉一点无关紧要。减多少，由“恰好见过 $r$ 次的组合有几个”（$n_r$）算出来，
#    每一级三个：$Y = \frac{n_1}{n_1 + 2n_2}$，$D_1 = 1 - 2Y\frac{n_2}{n_1}$，$D_2 = 2 - 3Y\frac{n_3}{n_2}$，
#    $D_{3+} = 3 - 4Y\frac{n_4}{n_3}$（见过 1 次、2 次、3 次以上的组合各减各的）。
# 2. **接续计数（continuation count）**：短一级的估计只在长前文罕见或没见过时才派上用场，所以它该回答的是
#    “在一个**新的**前文之后，哪个字符可能出现”，而不是“哪个字符出现得多”。于是最高一级以下，不数组合出现的次数，
#    改数“这个组合前面出现过几种不同的字符” $N_{1+}(\bullet\, h\, c)$。
#
# 合起来，$h'$ 是 $h$ 去掉最前面那个字符，$N(h\,\bullet)$ 是前文 $h$ 之后各个字符的次数之和，
# $N_r(h\,\bullet)$ 是在 $h$ 之后恰好出现 $r$ 次的字符有几种：
#
# $$P(c \mid h) = \frac{\max\big(N(h\,c) - D,\ 0\big)}{N(h\,\bullet)} + \gamma(h)\, P(c \mid h'),\qquad
#   \gamma(h) = \frac{D_1 N_1(h\,\bullet) + D_2 N_2(h\,\bullet) + D_{3+} N_{3+}(h\,\bullet)}{N(h\,\bullet)}$$
#
# 最高一级的 $N$ 是出现次数，低几级的 $N$ 是接续计数，最底下是均匀分布 $1/V$。减下来多少，$\gamma(h)$ 就正好补回去多少，
# 所以每个前文之后的概率加起来恰好是 1。$\gamma(h)$ 随“$h$ 之后出现过几种字符”变大，
# 这一点和第 6 节的 Witten-Bell 平滑相同。
#
# 代码在 `tutorials/kneser_ney.py`，公式都写在它的文档字符串里。看几个字符（阶数减 1）、以及 $D$ 整体放大或缩小的倍数，
# 在训练文本**末尾**切下的 10% 上挑（同样切成 512 个 64 字符的窗口）：挑选的函数 `tune_order` 只拿得到训练文本，
# 尺子上的窗口它碰都碰不到。挑好以后，在整段训练文本上重新数一遍。
#
# **先猜一猜**：同样看前 4 个字符，只换平滑的办法，尺子上能省下多少？Kneser-Ney 会挑看几个字符？

# %%
my_guesses.guess("kn_saving_at_4", "还没猜",
                 "同样看前 4 个字符，Kneser-Ney 比加 β 省下多少（纳特/字符）")  # 换成你的猜测
my_guesses.guess("kn_context", "还没猜", "Kneser-Ney 在开发集上挑中看前几个字符")

# %%
start = time.perf_counter()
kn_tuning = kneser_ney.tune_order(ys.train, V)  # 只给训练文本：末尾 10% 作开发集，在上面挑阶数和折扣的倍数
kn_order = kn_tuning.order
kn = kneser_ney.KneserNey(ys.train, V, max_order=kn_order, scale=kn_tuning.scale)  # 整段训练文本，1..挑中的阶一起数
kn_seconds = time.perf_counter() - start
kn_scores = [ys.score_probs(p) for p in kn.probs_by_order(ys.x, ys.y, kn_order)]  # kn_scores[k]：看前 k 个字符
kn_score = kn_scores[kn_order - 1]
kn_seen = seen_text.score_probs(kn.probs(seen_text.x, seen_text.y, kn_order))
dev = {n: nats for (n, scale), nats in kn_tuning.dev_nats.items() if scale == kn_tuning.scale}  # 阶 → 开发集上的损失
print(f"挑选、再数一遍，共用 {kn_seconds:.0f} 秒。开发集上（折扣 × {kn_tuning.scale}）看前 0..{max(dev) - 1} 个字符：",
      " ".join(f"{dev[n]:.3f}" for n in sorted(dev)))
print(f"挑中：看前 {kn_order - 1} 个字符（{kn_order} 阶），折扣 × {kn_tuning.scale}；"
      f"尺子上 {kn_score}，训练文本上 {kn_seen.nats:.3f} 纳特/字符；存了 {kn.size(kn_order):,} 个计数")
same4, same4_err = kn_scores[4].gap(ngram_scores[4])
gap_kn, gap_kn_err = kn_score.gap(ngram_scores[best_k])
print(f"同样看前 4 个字符：Kneser-Ney 比加 β 的 {same4:+.3f} ± {same4_err:.3f} 纳特/字符")
print(f"Kneser-Ney（看 {kn_order - 1} 个）比加 β 最好的（看 {best_k} 个）：{gap_kn:+.3f} ± {gap_kn_err:.3f} 纳特/字符")
my_guesses.reveal("kn_saving_at_4", -same4)
my_guesses.reveal("kn_context", kn_order - 1)

# %% [markdown]
# 接续计数是怎么回事？看最低一级（不看前文）：每个字符占全部出现次数的比例，和它占全部接续计数的比例
# （$N_{1+}(\bullet\, c)$：它前面出现过几种不同的字符）。

# %%
unigram_level = kn.levels[0]  # 一元这一级：键就是字符的编号
raw_share = unigram_level.raw.count / unigram_level.raw.count.sum()
cont_share = unigram_level.continuation.count / unigram_level.continuation.count.sum()
share = {chars[key]: (r, c) for key, r, c in zip(unigram_level.keys, raw_share, cont_share)}
for c in ["e", "h", "\n", ":", "."]:
    r, n = share[c]
    print(f"{c!r:>6}：出现次数占 {r:6.2%}，接续计数占 {n:6.2%}")
assert share["h"][1] < share["h"][0] / 2  # h 常见，但几乎只跟在 t、s、w 之类后面
assert share[":"][1] > 2 * share[":"][0]  # 冒号不算多，前面却什么都有（人名千千万）

# %%
fig, ax = plt.subplots(figsize=(7.5, 4.2))
ax.plot(ks, [ngram_loss[k] for k in ks], "o-", color="steelblue", label=label("加 β 的平滑（第 3 节）", "add-β"))
ax.plot(np.arange(kn_order), [s.nats for s in kn_scores], "s-", color="crimson", label="Kneser-Ney")
ax.plot([kn_order - 1], [kn_score.nats], "*", ms=16, color="crimson",
        label=label(f"开发集上挑中的：看前 {kn_order - 1} 个字符", f"chosen on the dev split: {kn_order - 1}"))
ax.set_xlabel(label("模型看的前文有几个字符", "characters of context the model looks at"))
ax.set_ylabel(label("尺子上的交叉熵（纳特/字符）", "held-out cross-entropy (nats per character)"))
ax.set_title(label("平滑得好，长前文就不再帮倒忙", "With better smoothing, longer contexts stop hurting"))
ax.set_ylim(1.3, 2.6)
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "01_kneser_ney.png")

assert same4 < -0.05 and same4 < -5 * same4_err  # 同样的前文，只换平滑：好得多
assert kn_order - 1 > best_k + 1  # 开发集上挑中的前文更长……
assert kn_scores[6].nats < kn_scores[4].nats - 0.03  # ……尺子上也是：看 6 个字符不再比 4 个差
assert gap_kn < -0.15 and gap_kn < -10 * gap_kn_err  # 比加 β 最好的计数模型低一大截
assert kn_score.nats - kn_seen.nats > memorised[best_k]  # 但它背得更多：见过的文本上比没见过的好得更多

# %% [markdown]
# 同样看前 4 个字符，只是减去折扣、低几级改数接续计数，尺子上就省下了一截；而且前文再长也不再帮倒忙，
# 开发集挑中的前文比加 β 时长了一倍多。上面“再长反而更差”，相当一部分是平滑的错。
#
# 可它仍然是在数数：见过的文本上，它比在没见过的文本上好得多（背得比加 β 的 5 元模型还多），
# 看的前文也还是只有十来个字符，而且每个前文各数各的——“king”后面常跟什么，对“queen”后面跟什么毫无帮助。
# 要看得更远、让相似的前文互相借力，得换一种不靠穷举组合的办法——把前文**压缩**成一个向量，这就是下一讲的 RNN。
# 第 07 讲会看到，神经网络要越过 Kneser-Ney 这一级，比越过加 β 的计数模型难得多。
#
# 加 β 的最好的计数模型和 Kneser-Ney 是梯子上“数数”的最后两级。把这一讲的几级记下来，第 07 讲要用：

# %%
ladder.record("01", [
    Rung(key="uniform", name="瞎猜", lecture="01", size=0, size_kind="counts", train_seconds=0.0, score=uniform),
    Rung(key="unigram", name="一元模型（字符频率）", lecture="01", size=ngram.size(0), size_kind="counts",
         train_seconds=ngram.seconds[0], score=ngram_scores[0]),
    Rung(key="bigram", name="二元模型（看前 1 个字符）", lecture="01", size=V * V, size_kind="counts",
         train_seconds=bigram_seconds, score=bigram_score),
    Rung(key="ngram", name=f"{best_k + 1} 元模型（看前 {best_k} 个字符）", lecture="01", size=ngram.size(best_k),
         size_kind="counts", train_seconds=sum(ngram.seconds[: best_k + 1]), score=ngram_scores[best_k],
         extra={"order": best_k, "sample": ngram_sample, "train_nats": ngram_seen[best_k].nats}),
    Rung(key="kneser_ney", name=f"Kneser-Ney（看前 {kn_order - 1} 个字符）", lecture="01", size=kn.size(kn_order),
         size_kind="counts", train_seconds=kn_seconds, score=kn_score,
         extra={"order": kn_order - 1, "scale": kn_tuning.scale, "train_nats": kn_seen.nats}),
], ys)
print("记下了第 01 讲的五级：瞎猜、一元、二元、加 β 最好的计数模型、Kneser-Ney")

# %% [markdown]

# ## 4. 有的前文锁死答案，有的前文什么都可能
#
# 一个前文之后下一个字符有多“确定”，可以用它的概率分布的**熵**来量：
# $H = -\sum_c P(c)\log_2 P(c)$，单位是比特。熵为 0 表示完全确定；熵为 $\log_2 V$ 表示完全没头绪。
# 我们只看训练文本里出现至少 200 次的前文。
#
# **先猜一猜**：英文里 `q` 之后、空格之后，下一个字符的熵大约各是多少比特？（完全确定是 0，完全没头绪是 $\log_2 V$。）

# %%
my_guesses.guess("entropy_after_q", "还没猜", "q 之后下一个字符的熵（比特）")  # 换成你的猜测
my_guesses.guess("entropy_after_space", "还没猜", "空格之后下一个字符的熵（比特）")

# %%
def context_entropies(order, min_count=200):
    """每个常见的 `order` 字符前文之后，下一个字符的分布的熵（比特）。"""
    ctx = np.zeros(len(train_data) - order, dtype=np.int64)
    for j in range(order):
        ctx = ctx * V + train_data[j : len(train_data) - order + j]
    keys, inverse = np.unique(ctx, return_inverse=True)
    table = np.zeros((len(keys), V))
    np.add.at(table, (inverse, train_data[order:]), 1)
    total = table.sum(axis=1)
    keep = total >= min_count
    p = table[keep] / total[keep, None]
    entropy = (p * np.log2(1 / np.where(p > 0, p, 1))).sum(axis=1)  # Σ p log2(1/p)；约定 0 log 0 = 0
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
    print(f"\n训练文本里出现至少 200 次的 {order} 字符前文：{len(names)} 个")
    print("  最好猜的：" + "，".join(
        f"'{show(names[i])}' → '{show(chars[p[i].argmax()])}'（{entropy[i]:.2f} 比特）" for i in rank[:5]))
    print("  最难猜的：" + "，".join(f"'{show(names[i])}'（{entropy[i]:.2f} 比特）" for i in rank[-5:]))

# %%
H1 = entropy_by_order[1]
print(f"\nq 之后：{H1['q']:.2f} 比特；空格之后：{H1[' ']:.2f} 比特；完全没头绪：log2 {V} = {math.log2(V):.2f} 比特")
my_guesses.reveal("entropy_after_q", H1["q"])
my_guesses.reveal("entropy_after_space", H1[" "])
assert H1["q"] < 0.2  # q 后面几乎总是 u
assert H1[" "] > 4.0  # 空格后面几乎什么字母都有
assert max(H1.values()) - min(H1.values()) > 3.5  # 不同前文能决定的东西差得极远

fig, ax = plt.subplots(figsize=(11, 4))
order1 = sorted(H1.items(), key=lambda kv: kv[1])
ax.bar(range(len(order1)), [h for _, h in order1], color="steelblue")
ax.set_xticks(range(len(order1)), [show(n) for n, _ in order1], fontsize=9)
ax.set_ylabel(label("下一个字符的熵（比特）", "entropy of the next character (bits)"))
ax.set_xlabel(label("前一个字符", "previous character"))
ax.set_title(label("前一个字符在多大程度上决定了下一个？", "How much does the previous character decide the next one?"))
ax.axhline(math.log2(V), color="gray", ls=":", label=label(f"完全没头绪（log2 {V}）", f"no idea at all (log2 {V})"))
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
my_guesses.guess("dot_neighbours", "还没猜", "离 . 最近的五个字符大多是",
                 options=["标点", "元音", "大写字母", "别的"])  # 换成你的猜测

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
print(f"平均余弦相似度：元音-元音 {vv:.2f}，标点-标点 {pp:.2f}，元音-标点 {vp:.2f}")
print(f"                大写-大写 {uu:.2f}，大写-小写 {ul:.2f}")
for c in ".ae":
    nearest = np.argsort(-cos[stoi[c]])[1:6]
    print(f"离 '{c}' 最近的：", " ".join(f"'{show(chars[i])}'" for i in nearest))

# %%
assert vv > vp + 0.15 and pp > vp + 0.15  # 元音挨着元音，标点挨着标点
assert uu > ul + 0.15  # 大写字母挨着大写字母
nearest_dot = {chars[i] for i in np.argsort(-cos[stoi["."]])[1:6]}
dot_kinds = ["标点" if c in punct else "元音" if c in vowels else "大写字母" if c.isupper() else "别的"
             for c in nearest_dot]
my_guesses.reveal("dot_neighbours", max(sorted(set(dot_kinds)), key=dot_kinds.count))
assert len(nearest_dot & set(punct)) >= 4  # 离 '.' 最近的都是标点

# %%
# 16 维向量的二维图：投影到散得最开的两个方向上（PCA）。
centered = E - E.mean(axis=0)
_, _, Vt = np.linalg.svd(centered, full_matrices=False)
xy = centered @ Vt[:2].T


def kind(c):
    if c.isupper():
        return label("大写字母", "uppercase letter")
    if c in "aeiou":
        return label("小写元音", "lowercase vowel")
    if c.isalpha():
        return label("小写辅音", "lowercase consonant")
    if c.isdigit():
        return label("数字", "digit")
    if c in " \n":
        return label("空格 / 换行", "space / newline")
    return label("标点", "punctuation")


colors = {label("小写元音", "lowercase vowel"): "crimson", label("小写辅音", "lowercase consonant"): "steelblue",
          label("大写字母", "uppercase letter"): "darkviolet", label("数字", "digit"): "darkorange",
          label("标点", "punctuation"): "forestgreen", label("空格 / 换行", "space / newline"): "black"}
fig, ax = plt.subplots(figsize=(8, 7))
for name, color in colors.items():
    idx = [i for i, c in enumerate(chars) if kind(c) == name]
    if not idx:
        continue
    ax.scatter(xy[idx, 0], xy[idx, 1], s=12, color=color, label=name)
    for i in idx:
        ax.annotate(show(chars[i]), xy[i], fontsize=10, color=color, xytext=(3, 2), textcoords="offset points")
ax.set_title(label("二元模型学出的字符向量（PCA 投影到二维）", "Character embeddings of the bigram model (PCA)"))
ax.set_xlabel(label("第一主方向", "principal direction 1"))
ax.set_ylabel(label("第二主方向", "principal direction 2"))
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
tang_train, tang_val = split_poems(tang)  # 每十首里整首拿出一首做验证集
if QUICK:  # 三分之一的训练诗：数得更快，图一样
    train_poems = tang_train.split("\n\n")
    tang_train = "\n\n".join(train_poems[: len(train_poems) // 3])
zh_tok = CharTokenizer.from_text(tang)
ZV = zh_tok.vocab_size
zh_train, zh_val = zh_tok.encode_array(tang_train), zh_tok.encode_array(tang_val)
print(f"{tang.count(chr(10) * 2) + 1:,} 首诗；训练 {len(zh_train):,} 字，验证集 {len(zh_val):,} 字；词表 {ZV:,} 个字")
print(tang_val[:52])

# %% [markdown]
# 还用第 3 节的办法数数，但有两处要改：
#
# - 词表有六千多个字，第 3 节把前文写成一个 $V$ 进制整数的做法，到 5 个字时就超出了 64 位整数的范围
#   （$6445^5 > 2^{63}$）。改成**给见过的前文编号**：$k$ 个字的前文 = “$k-1$ 个字的前文的编号” + “紧挨着的那个字”，
#   用 `np.unique` 重新编成连续的号。
# - 字多了，没见过的组合是常态，第 3 节固定的 $\beta = 2$ 太自信。改用 Witten-Bell 平滑：把 $\beta$ 换成
#   “这个前文后面出现过多少种不同的字” $T(h)$——后面跟过的字五花八门的前文，多给没见过的字留些余地：
#
# $$P_k(c \mid h_k) = \frac{N(h_k, c) + T(h_k)\, P_{k-1}(c \mid h_{k-1})}{N(h_k) + T(h_k)}$$

# %%
ZK = 4  # 前文最多四个字：“五”前面的“一推六二”


def context_numbers(ids: np.ndarray, k_max: int) -> list[np.ndarray]:
    """numbers[k][t]：位置 t 之前的 k 字前文的编号，不同的前文不同的号（k = 0 时全是 0）。"""
    numbers = [np.zeros(len(ids), dtype=np.int64)]
    for _ in range(k_max):
        key = np.full(len(ids), -1, dtype=np.int64)  # 位置 0 前面什么都没有
        key[1:] = numbers[-1][:-1] * ZV + ids[:-1]  # t - 1 之前短一个字的前文，再接上 t - 1 处的字
        numbers.append(np.unique(key, return_inverse=True)[1].reshape(-1))
    return numbers


class HanNGram:
    """0..k_max 个字的每个前文之后，下一个字的计数，用 Witten-Bell 平滑。

    `ids` 是训练文本接上验证集文本，这样同一个前文在两边拿到同一个编号；只数前 `n_train` 个位置。
    """

    def __init__(self, ids: np.ndarray, n_train: int, k_max: int):
        self.ids, self.numbers = ids, context_numbers(ids, k_max)
        train = np.arange(k_max, n_train)
        self.tables = []  # 每一级：(前文, 下一个) 的键和次数；前文的键、次数和后面跟过几种字
        for ctx in self.numbers:
            pair_keys, pair_counts = np.unique(ctx[train] * ZV + ids[train], return_counts=True)
            ctx_keys, ctx_counts = np.unique(ctx[train], return_counts=True)
            _, types = np.unique(pair_keys // ZV, return_counts=True)  # 每个前文后面出现过几种不同的字
            self.tables.append((pair_keys, pair_counts, ctx_keys, ctx_counts, types))

    def probs(self, positions: np.ndarray, candidates: np.ndarray | None = None) -> list[np.ndarray]:
        """[P_0, ..., P_k_max]：每一级给真字（或每个候选字）的概率。"""
        nxt = self.ids[positions][:, None] if candidates is None else candidates[None, :]
        p = np.full((len(positions), nxt.shape[1]), 1.0 / ZV)
        out = []
        for ctx_ids, (pair_keys, pair_counts, ctx_keys, ctx_counts, types) in zip(self.numbers, self.tables):
            ctx = ctx_ids[positions][:, None]
            n_pair = CharNGram.lookup(ctx * ZV + nxt, (pair_keys, pair_counts))
            n_ctx, t = CharNGram.lookup(ctx, (ctx_keys, ctx_counts)), CharNGram.lookup(ctx, (ctx_keys, types))
            p = np.where(n_ctx > 0, (n_pair + t * p) / np.maximum(n_ctx + t, 1), p)  # 没见过的前文：退回低一级
            out.append(p)
        return out


han = HanNGram(np.concatenate([zh_train, zh_val]), len(zh_train), ZK)
held_out = len(zh_train)  # 验证集在 han.ids 里从哪里开始

# 验证集里每个字的位置：在 n 字半句里是第 1..n 个，句末标点记作 n + 1。
seat = np.zeros(len(zh_val), dtype=np.int64)
form = np.zeros(len(zh_val), dtype=np.int64)
for m in re.finditer(r"(?<=[\n，；])([\u4e00-\u9fff]{5}|[\u4e00-\u9fff]{7})[，；。？！]", tang_val):
    n = len(m.group(1))
    seat[m.start():m.end()], form[m.start():m.end()] = np.arange(1, n + 2), n


def positions_at(n: int, s: int) -> np.ndarray:
    return np.flatnonzero((form == n) & (seat == s)) + held_out


bits = {}  # (句式, 位置) → 看 0..ZK 个字时，没见过的诗上每字的比特数
for n, s in [(5, 1), (5, 2), (5, 3), (5, 4), (5, 5), (5, 6), (7, 7), (7, 8)]:
    bits[n, s] = [float(-np.log2(p).mean()) for p in han.probs(positions_at(n, s))]
print("没见过的诗上每个字的交叉熵（比特），依次看前 0 / 1 / 2 / 3 / 4 个字：")
for (n, s), row in bits.items():
    where = f"{'五' if n == 5 else '七'}言第 {s} 个位置" + ("（句末标点）" if s == n + 1 else "")
    print(f"  {where:<16}" + "  ".join(f"{b:5.2f}" for b in row))

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
print(f"五言第 5 字：看前四个字，{bits[5, 5][0]:.2f} → {bits[5, 5][ZK]:.2f} 比特"
      f"（相当于还剩约 {2 ** bits[5, 5][ZK]:.0f} 个同样可能的候选）")
print(f"五言第 1 字：{bits[5, 1][0]:.2f} → {bits[5, 1][ZK]:.2f} 比特；七言第 7 字：{bits[7, 7][0]:.2f} → "
      f"{bits[7, 7][ZK]:.2f} 比特")
assert gain5 > 1.2 and bits[7, 7][0] - bits[7, 7][ZK] > 1.2  # 前四个字对最后一个字有帮助……
assert bits[5, 5][ZK] > 7.0  # ……但还剩一百多个候选：平均说来没有“一推六二五”
assert gain5 > gain1 + 1.0  # 一句的第一个字从上一句得不到多少帮助
assert min(bits[5, 1][ZK], bits[5, 3][ZK]) > max(bits[5, 2][ZK], bits[5, 4][ZK]) + 1.0  # 词的第二个字更好猜
assert bits[5, 6][ZK] < min(3.5, min(bits[5, s][ZK] for s in range(1, 6)) - 4)  # 句末标点几乎送分

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
    next_char.setdefault(line[-5:-1], Counter())[line[-1]] += 1  # 最后一个字之前的四个字 → 最后一个字
frequent = {ctx: c for ctx, c in next_char.items() if c.total() >= 8}
locked = sorted(((c.total(), ctx, next(iter(c))) for ctx, c in frequent.items() if len(c) == 1), reverse=True)
print(f"{len(half_lines):,} 个半句；出现至少 8 次的前四字有 {len(frequent)} 个，"
      f"其中 {len(locked)} 个后面总是同一个字：")
for count, ctx, last in locked:
    print(f"  {ctx} → {last}（{count} 次）")
assert locked and all(frequent[ctx].total() >= 8 for _, ctx, _ in locked)
assert len(frequent) < 0.001 * len(next_char)  # 反复出现的四字前文很少

# %% [markdown]
# “何处春深”后面总是“好”，“自君之出”后面总是“矣”：它们来自一组组同题诗（一位诗人用同一个开头连写了二十首），
# 或者是乐府里的固定句式——这才是诗里的“一推六二五”。
#
# ## 7. 在唐诗上玩猜字游戏
#
# 让上面看四个字的模型去猜一首它没见过的诗：每一步给出它的前三个候选，再看真字在它的排名里排第几。

# %%
poem = tang_val.split("\n\n")[3]  # 验证集里的一首诗
start = tang_val.index(poem) + poem.index("\n") + 1  # 题目之后的第一行
print(poem.split("\n")[0])
game = np.arange(start, start + 12) + held_out  # 第一联：5 个字、标点、5 个字、标点
game_p = han.probs(game, candidates=np.arange(ZV))[ZK]
ranks = []
for t, p in zip(game, game_p):
    truth = han.ids[t]
    rank = int((p > p[truth]).sum()) + 1
    ranks.append(rank)
    guesses = "  ".join(f"{zh_tok.chars[i]} {p[i]:.2f}" for i in np.argsort(-p)[:3]).replace("\n", "↵")
    context = zh_tok.decode(han.ids[t - 4:t]).replace("\n", "↵")  # ↵：题目后面的换行
    print(f"  前文 …{context}  猜：{guesses:<24} 真字 {zh_tok.chars[truth]}  排第 {rank}")
first_guess = [zh_tok.chars[int(np.argmax(p))] for p in game_p]
assert first_guess[5] in "，。" and first_guess[11] in "，。"  # 句子结束处，它猜标点……
assert ranks[5] <= 2 and ranks[11] <= 2  # ……而且猜对，或者先猜另一个标点

# %% [markdown]
# 标点几乎次次猜中，字就难得多——有时真字排进前几名，有时排到几百名以外。换成所有没见过的诗，统计每个位置的猜中率：

# %%
rng = np.random.default_rng(0)
hits = {}
for s in range(1, 7):
    sample = rng.choice(positions_at(5, s), 100 if QUICK else 1000, replace=False)
    p = han.probs(sample, candidates=np.arange(ZV))[ZK]
    truth_p = p[np.arange(len(sample)), han.ids[sample]]
    rank = (p > truth_p[:, None]).sum(axis=1)  # 0：第一猜
    hits[s] = (float((rank < 1).mean()), float((rank < 10).mean()))
    print(f"第 {s} 个位置：第一猜就中 {hits[s][0]:.0%}，前十个候选里有真字 {hits[s][1]:.0%}")
assert hits[6][0] > 0.5 and hits[6][1] > 0.9  # 句末标点
assert hits[2][1] > 2 * max(hits[1][1], hits[3][1])  # 词的第二个字
assert max(hits[s][0] for s in range(1, 6)) < 0.35  # 诗句本身没有哪个位置好猜

# %% [markdown]
# 猜字游戏和熵说的是同一件事：格律锁定的位置（句末标点）一猜就中；词的第二个字常在前十名里；
# 每个词的第一个字最难，因为那里是诗人真正在“选字”的地方。
#
# ## 8. 诗句接龙：一句的末字能帮你猜下一句的首字吗？
#
# 成语接龙只有一条规则：看着已经说出的字，接下一个字。把它搬到唐诗上，玩一个“接句”的游戏：
# 我念完一句（到标点为止），你猜下一句的**第一个字**。你手里只有一条线索——我刚念的**最后一个字**。
# 和它对照的是句子**里面**的接字：看着一个字，猜同一句里紧跟着它的那个字。
#
# 两种接法各数一张表，都只看前一个字：$P(\text{后字} \mid \text{前字})$，用第 6 节的 Witten-Bell 平滑，
# 退回到的一元分布也各用各的（句首的字和句中的字本来就不一样常见，这部分差别不算在“前一个字”的功劳里）。
# 为了公平，句内的接字对从训练诗里随机抽出和句间一样多的对来数——两张表见过的数据一样多。
# 前一个字帮了多少忙，就看在没见过的诗上，它比只用一元分布省下了多少比特。
#
# **先猜一猜**：“床前看月光”的“光”，能帮你猜到下一句的“疑”吗？句子里面的“看”→“月”呢？两者各能省下多少比特？

# %%
my_guesses.guess("relay_inside_bits", "还没猜", "句内：前一个字比一元分布省下多少比特")  # 换成你的猜测
my_guesses.guess("relay_across_bits", "还没猜", "句间：上一句的末字帮下一句的首字省下多少比特")

# %%
HALF_LINE = re.compile(r"[\u4e00-\u9fff]+")  # 两个标点之间的一串字：半句


def relay_pairs(text: str) -> tuple[np.ndarray, np.ndarray]:
    """一首诗正文里的两种接字对，每对写成一个整数 前字 × ZV + 后字：句内相邻的字；上一句末字 → 下一句首字。"""
    inside, relay = [], []
    for poem in text.split("\n\n"):
        halves = HALF_LINE.findall(poem.split("\n", 1)[-1])  # 去掉题目，按标点切成半句
        relay += [(a[-1], b[0]) for a, b in zip(halves, halves[1:])]
        inside += [pair for half in halves for pair in zip(half, half[1:])]
    stoi = zh_tok.stoi
    return tuple(np.array([stoi[a] * ZV + stoi[b] for a, b in pairs], dtype=np.int64) for pairs in (inside, relay))


class PairModel:
    """P(后字 | 前字)：数出来的接字的计数表，Witten-Bell 平滑，退回到后字自己的一元分布。"""

    def __init__(self, keys: np.ndarray):
        nxt = keys % ZV
        self.unigram = (np.bincount(nxt, minlength=ZV) + 0.5) / (len(keys) + 0.5 * ZV)  # 每个字加半次：没见过的字不是 0
        self.pairs = np.unique(keys, return_counts=True)
        self.n_prev = np.bincount(keys // ZV, minlength=ZV)  # 每个前字出现了几次
        self.types = np.bincount(self.pairs[0] // ZV, minlength=ZV)  # 每个前字后面跟过几种不同的字

    def probs(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """每一对的后字：只看一元分布的概率，和看了前字之后的概率。"""
        prev, nxt = keys // ZV, keys % ZV
        n_pair, n, t = CharNGram.lookup(keys, self.pairs), self.n_prev[prev], self.types[prev]
        p = np.where(n > 0, (n_pair + t * self.unigram[nxt]) / np.maximum(n + t, 1), self.unigram[nxt])
        return self.unigram[nxt], p


(inside_train, relay_train), (inside_val, relay_val) = relay_pairs(tang_train), relay_pairs(tang_val)
fair = np.random.default_rng(0).choice(inside_train, len(relay_train), replace=False)  # 和句间一样多的句内对
saved = {}  # 接法 → 没见过的诗上每个后字省下的比特（逐对的平均值和它的标准误差）
for name, train_keys, val_keys in (("句内", fair, inside_val), ("句间", relay_train, relay_val)):
    p_uni, p_pair = PairModel(train_keys).probs(val_keys)
    gain = np.log2(p_pair) - np.log2(p_uni)
    saved[name] = (float(gain.mean()), float(gain.std() / np.sqrt(len(gain))))
    print(f"{name}接字：训练 {len(train_keys):,} 对，验证 {len(val_keys):,} 对；"
          f"只看一元分布 {-np.log2(p_uni).mean():.2f} 比特，再看前一个字 {-np.log2(p_pair).mean():.2f} 比特，"
          f"省下 {saved[name][0]:+.2f} ± {saved[name][1]:.2f}")
same = float(np.mean(relay_val // ZV == relay_val % ZV))
print(f"下一句恰好用上一句的末字开头（成语接龙的规则）：{same:.2%} 的句间接字对")
my_guesses.reveal("relay_inside_bits", saved["句内"][0])
my_guesses.reveal("relay_across_bits", saved["句间"][0])

# %%
assert saved["句内"][0] > 0.4  # 句子里面，前一个字实实在在地帮忙……
assert saved["句间"][0] < 0.1  # ……隔着标点，末字对下一句的首字几乎没用（数出来的表甚至帮倒忙）
assert saved["句内"][0] - saved["句间"][0] > 10 * (saved["句内"][1] + saved["句间"][1])  # 差距远大于误差
assert same < 0.01  # 诗人几乎从不“接龙”

# %% [markdown]
# 句子里面，前一个字能省下大半个比特以上（用上全部训练诗数，还要多一些）；隔着一个标点，末字几乎帮不上忙——
# 数出来的接字的计数表在没见过的诗上甚至比一元分布还差：训练诗里的“末字 → 首字”大多只见过一两次，记下的是巧合。
# 这和第 6 节的发现（一句的第一个字从前文得不到帮助）是同一件事，只是换成了最短的前文来看。
# 诗人也几乎从不照成语接龙的规矩拿末字起句。
#
# 拿一首没见过的诗玩一轮：每念完一句，接字的计数表按末字给出它的前三个候选首字，再看真字排第几。

# %%
relay_table = PairModel(relay_train)
candidates = np.arange(ZV)
round_poem = tang_val.split("\n\n")[3]
print(round_poem.split("\n")[0])
halves = HALF_LINE.findall(round_poem.split("\n", 1)[-1])
for a, b in zip(halves, halves[1:]):
    _, p = relay_table.probs(zh_tok.stoi[a[-1]] * ZV + candidates)
    rank = int((p > p[zh_tok.stoi[b[0]]]).sum()) + 1
    top = "、".join(zh_tok.chars[i] for i in np.argsort(-p)[:3])
    print(f"  “{a}”的末字“{a[-1]}” → 猜 {top}；真字“{b[0]}”排第 {rank}")

# %%
my_guesses.calibration()  # 本讲的先猜一猜：数值猜测差几倍，选择题猜对几个

# %% [markdown]
# 候选里常有“不”“何”这类本来就常在句首的字，也有只在训练诗里碰巧见过一两次的接法；真字往往排在几百名开外。
# 末字没有提供线索，表只能押常见的起句字，或者押它记下的巧合。
# 要接好下一句，得看懂整句、整首在说什么——这正是后面几讲的模型要学的。
#
# ## 小结
#
# - 语言模型 = 给定前文，输出下一个字符（词）的概率分布；用交叉熵衡量它猜得好不好。
# - 二元模型可以“数”出来，也可以用嵌入 + 线性层“学”出来，两者殊途同归。
# - 看的前文越长，猜得越准；但靠数数，组合数随长度爆炸，越长越靠不住。
# - 有的前文几乎决定了答案，有的几乎没有帮助：关键是前文里**哪些信息**和当前有关。
# - 学出来的嵌入里，用法相似的字符自然聚在一起。
#
# 下一讲：把前文压缩成一个向量带着走——RNN，以及它为什么记不住太远的东西。
#
# ## 练习
#
# 6 道练习在 `tutorials/exercises/lecture01.py` 里：瞎猜的损失（1.1）、数出二元组（1.2）、平滑并归一化（1.3）、
# 平均交叉熵（1.4）、熵（1.5），以及一道开放题（1.6）：第 3 节把 β 固定在 2 只挑了 k；在训练文本里切出开发集，
# 把 k 和 β 一起挑，在尺子上比讲义的选择好 0.15 纳特以上。检查器只把训练文本交给你，碰了尺子就不算。
# 把每个 `raise NotImplementedError` 换成你的代码，再运行下面这一格
# （或在终端里运行 `python -m tutorials.exercises check 01`）。也可以在这里写函数直接检查，
# 例如 `check("1.2", bigram_counts)`。

# %%
from tutorials.exercises import check

check("01")
