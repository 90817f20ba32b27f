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
# # 04 位置编码：给每个词一个座位号
#
# 上一讲的自注意力（self-attention）有一个奇怪的盲点：它只比较向量，从不过问向量排在第几个。
# 这一讲先用实验把这个盲点抓出来，再看三种位置编码（positional encoding）——可学习的位置表（GPT-2）、
# 正弦余弦编码（原始 Transformer）、旋转位置编码 RoPE——各自补得怎么样，尤其是遇到比训练时更长的句子时。
#
# 1. 不加位置信息，“狗咬人”和“人咬狗”经过自注意力得到的是**同一组向量，只是换了顺序**。
# 2. 加上位置信号，两句话就分开了。
# 3. 把正弦余弦编码画出来，并验证：两个位置离得越近，编码越像。
# 4. 在一个离不开顺序的小任务上训练四个小 GPT（learned / sinusoidal / rope / 不加位置），
#    再把它们拿到**比训练时更长**的序列上考一考。这里有一处要**更正**讲义：正弦余弦编码并不能外推。
#
# 运行：`python tutorials/04_positional_encoding.py`（完整实验）；
# `TUTORIAL_QUICK=1 python tutorials/04_positional_encoding.py`（小模型、少步数）。图片写到 `figures/`。
# 术语的写法见 [术语表](术语表.md)。

# %% [markdown]
# **学完这一讲，你能**：证明没有位置信息的自注意力只会把输出跟着输入重排；写出正弦余弦编码，并说清它为什么
# 藏着相对位置；比较 learned、sinusoidal、RoPE 三种编码在比训练时更长的序列上的表现，并说出原因。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（在 2 核 CPU 上实测，训练四个小 GPT 占了大部分）；
# 最后有 5 道练习。

# %%
from tutorials.course import CJK, QUICK, T_START, label, show_figure  # 放在最前：在 NumPy 载入前限定 BLAS 线程数

# isort: split
import time

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig
from minigpt.model import Rotary, sinusoidal_table
from minigrad import nn, optim

# %% [markdown]
# ## 1. 没有座位号的注意力分不清“狗咬人”和“人咬狗”
#
# 我们手写一层最朴素的自注意力：每个字查一张嵌入表（embedding），经过 $W_q, W_k, W_v$ 得到查询、键、值（Q、K、V），再做
# $\mathrm{softmax}(QK^\top/\sqrt{d})\,V$。这里不加因果遮罩——和第三讲一样，每个字都能看到整句话。
#
# **先猜一猜**：“狗”在“狗咬人”里和在“人咬狗”里，经过这一层自注意力，得到的输出向量一样吗？
#
# 下一格记下你的猜测：先把其中的“还没猜”换成你自己的猜测，再往下运行（不猜也能运行，但不计分）；
# 揭晓时实测值会印在它旁边，讲末给出校准得分。
# %%
from tutorials.course import FIGURES
from tutorials.predictions import Predictions

my_guesses = Predictions("04", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_04.json）
my_guesses.guess("dog_same", "还没猜", "两句里“狗”的输出向量", options=["一样", "不一样"])  # 换成你的猜测

# %%
VOCAB = ["狗", "咬", "人"]
D = 16

mg.manual_seed(0)
embedding = nn.Embedding(len(VOCAB), D)                      # 每个字一个向量，不含任何位置信息
W_q, W_k, W_v = nn.Linear(D, D), nn.Linear(D, D), nn.Linear(D, D)


def self_attention(x: mg.Tensor) -> mg.Tensor:
    """一个头的自注意力，x 的形状 (T, D)，每个词元都看得到所有词元（没有因果遮罩）。"""
    return F.scaled_dot_product_attention(W_q(x), W_k(x), W_v(x))   # (T, D)


def encode(sentence: str) -> list[int]:
    return [VOCAB.index(ch) for ch in sentence]


with mg.no_grad():
    out_a = self_attention(embedding(encode("狗咬人"))).numpy()    # (3, D)
    out_b = self_attention(embedding(encode("人咬狗"))).numpy()

for i, ch in enumerate("狗咬人"):
    j = "人咬狗".index(ch)
    print(f"“{ch}” 在狗咬人里：{np.round(out_a[i, :4], 3)}   在人咬狗里：{np.round(out_b[j, :4], 3)}")

# 人咬狗就是按 (2, 1, 0) 的次序读狗咬人；它的输出就是狗咬人的输出按同样的次序排。
perm = [2, 1, 0]
assert np.allclose(out_b, out_a[perm], atol=1e-6), "不给位置时，注意力只是把输出换了个顺序"
my_guesses.reveal("dog_same", "一样" if np.allclose(out_a[0], out_b[2], atol=1e-6) else "不一样")
assert np.allclose(out_a.mean(axis=0), out_b.mean(axis=0), atol=1e-6)

# %% [markdown]
# “狗”在两句话里的输出向量一模一样，“人”也一样：第二句的输出只是第一句的输出换了个顺序。
# 如果之后再把整句的向量汇总（比如取平均），两句话就彻底无法区分了——可它们的意思正好相反。
#
# 原因在公式里：打乱输入的顺序，相当于把分数矩阵 $QK^\top$ 的行和列按同一种方式重排；softmax 逐行计算，
# 不在乎一行里各列的先后；再乘上同样重排过的 $V$，列的重排恰好抵消，只剩下行的重排——输出按同样的方式换了顺序。
# 任何打乱都是如此，不只是这三个字——随便 8 个词元（token）打乱次序：

# %%
rng = np.random.default_rng(0)
ids = rng.integers(0, len(VOCAB), size=8)
shuffle = rng.permutation(8)
with mg.no_grad():
    out = self_attention(embedding(ids)).numpy()
    out_shuffled = self_attention(embedding(ids[shuffle])).numpy()
assert np.allclose(out_shuffled, out[shuffle], atol=1e-6)
print("打乱 8 个词元，输出只是跟着同样打乱：是")

# %% [markdown]
# ## 2. 加上位置信号，两句话就分开了
#
# 补法是给每个座位一个固定的向量，把它**加**到坐在那里的字的向量上：“第 0 号座位的狗”和“第 2 号座位的狗”
# 从此是两个不同的向量。先用原始 Transformer 的正弦余弦编码（`minigpt.model.sinusoidal_table`）试试。

# %%
pe = mg.tensor(sinusoidal_table(8, D))                      # (8, D)：第 p 行是第 p 号座位的信号

with mg.no_grad():
    pos_a = self_attention(embedding(encode("狗咬人")) + pe[:3]).numpy()
    pos_b = self_attention(embedding(encode("人咬狗")) + pe[:3]).numpy()

gap = np.abs(pos_b - pos_a[perm]).max() / np.abs(pos_a).max()
print(f"加上位置以后，人咬狗的输出和重排过的狗咬人的输出最多差了输出尺度的 {gap:.0%}")
for i, ch in enumerate("狗咬人"):
    j = "人咬狗".index(ch)
    print(f"“{ch}” 在狗咬人里：{np.round(pos_a[i, :4], 3)}   在人咬狗里：{np.round(pos_b[j, :4], 3)}")
assert gap > 0.1, "加上位置信号后，两句话的输出不应再是彼此的重排"
assert not np.allclose(pos_a.mean(axis=0), pos_b.mean(axis=0), atol=1e-2)

# %% [markdown]
# 现在“狗”在句首和句尾得到的向量不同了，整句的平均向量也不同了。位置信号和字的向量是直接相加的：
# 相加之后的向量表示“某个位置上的某个字”，后面的注意力层会同时用到这两种成分。
#
# ## 3. 正弦余弦编码长什么样
#
# 第 $p$ 个位置的编码，第 $2i$ 维是 $\sin(p/10000^{2i/d})$，第 $2i+1$ 维是同一频率的 $\cos$。
# 可以把每一对维度想成一只以自己速度转动的钟：前几维转得飞快，后面的维度慢得几乎不动。
# 每个位置读到的是所有钟指针的一组读数，彼此都不相同；而且它是一个公式，**任何位置都算得出来**。

# %%
P_DRAW, D_DRAW = 64, 128
table = sinusoidal_table(P_DRAW, D_DRAW)

fig, ax = plt.subplots(figsize=(9, 4.2))
image = ax.imshow(table, cmap="RdBu", aspect="auto", vmin=-1, vmax=1, interpolation="nearest")
ax.set_xlabel(label("编码的维度（左边转得快，右边转得慢）", "dimension (fast clocks left, slow right)"))
ax.set_ylabel(label("位置", "position"))
ax.set_title(label(f"正弦余弦位置编码：{P_DRAW} 个位置 × {D_DRAW} 维", f"sinusoidal encoding: {P_DRAW} x {D_DRAW}"))
fig.colorbar(image, ax=ax, fraction=0.03)
fig.tight_layout()
show_figure(fig, "04_sinusoidal_table.png")

# %% [markdown]
# 两个位置的编码有多像？取位置 $p$ 和 $p+k$ 的编码算余弦相似度。对正弦余弦编码，点积只和距离 $k$ 有关：
# $\mathrm{PE}(p)\cdot\mathrm{PE}(p+k) = \sum_i \cos(\omega_i k)$，和从哪里开始量无关。

# %%
P_SIM = 256
big_table = sinusoidal_table(P_SIM + 64, D_DRAW)
start = 64                                       # 从哪里开始量都是同一条曲线：只有距离要紧
distances = np.arange(P_SIM)
cosine = big_table[start:start + P_SIM] @ big_table[start] / (
    np.linalg.norm(big_table[start:start + P_SIM], axis=1) * np.linalg.norm(big_table[start]))
cosine_elsewhere = big_table[3:3 + P_SIM] @ big_table[3] / (
    np.linalg.norm(big_table[3:3 + P_SIM], axis=1) * np.linalg.norm(big_table[3]))

fig, ax = plt.subplots(figsize=(8, 3.8))
ax.plot(distances, cosine, label=label(f"从位置 {start} 量起", f"measured from position {start}"))
ax.plot(distances, cosine_elsewhere, "--", label=label("从位置 3 量起", "measured from position 3"))
ax.set_xlabel(label("两个位置之间的距离 k", "distance k between the two positions"))
ax.set_ylabel(label("编码的余弦相似度", "cosine similarity"))
ax.set_title(label("离得越近，位置编码越像", "the closer two positions, the more alike their encodings"))
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "04_position_similarity.png")

print("距离 0..10 的余弦相似度：", np.round(cosine[:11], 3))
near, middle, far = cosine[1:5].mean(), cosine[8:17].mean(), cosine[32:129].mean()
print(f"平均相似度：距离 1–4 {near:.3f} > 8–16 {middle:.3f} > 32–128 {far:.3f}")
assert np.all(np.diff(cosine[:11]) < 0), "在近处，距离每远一步，相似度都下降"
assert near > middle > far
assert np.allclose(cosine, cosine_elsewhere, atol=1e-4), "相似度只取决于距离"

# %% [markdown]
# 在近处（这里是 10 步以内），相似度随距离一步一步严格下降；再往远处，曲线有起伏，但整体仍在走低。
# 两条曲线完全重合：编码的相似度只看两个位置**相隔多远**，不看它们在哪。这是相对位置的信息，
# 也是下面的 RoPE 把它做到极致的地方。
#
# ## 4. 三种位置编码，考一道离不开顺序的题
#
# 题目：输入一串随机词元，要求模型在每个位置输出**它前面第 3 个**词元（前 3 个位置没有答案，不计分）。
# 只知道“前面出现过哪些词元”是做不了这道题的，必须知道它们的顺序。
#
# 我们用 `minigpt` 训练四个一模一样的小 GPT，只改 `GPTConfig(pos_encoding=...)`：
#
# - `learned`：GPT-2 的做法，一张可学习的表 `wpe`，每个位置一行，和嵌入向量相加；
# - `sinusoidal`：上面画的正弦余弦表，固定不学，和嵌入向量相加；
# - `rope`：旋转位置编码，不往嵌入向量上加任何东西，而是在每一层把 q 和 k 按位置转一个角度；
# - `none`：什么位置信息都不给，作对照。
#
# 训练只用长度 16 的序列（上下文长度，即 `block_size`，是 16）；考试时再拿长度 48 的序列来考。
#
# **先猜一猜**：在训练长度上，四个模型里哪个做不出这道题？另外三个谁学得最慢？

# %%
my_guesses.guess("cannot_learn", "还没猜", "训练长度上做不出这道题的模型",
                 options=["learned", "sinusoidal", "rope", "none"])  # 换成你的猜测

# %%
V, SHIFT = 12, 3                                   # 词表大小；答案 = 前面第 SHIFT 个词元
TRAIN_LEN, TEST_LEN = 16, 48
N_EMBD, N_LAYER, N_HEAD = 32, 2, 1
STEPS = 900 if QUICK else 2500
BATCH, LR = 32, 3e-3
CHANCE = 1 / V


def shift_batch(rng: np.random.Generator, batch: int, length: int) -> tuple[np.ndarray, np.ndarray]:
    """随机词元 x 和答案 y[t] = x[t - SHIFT]；前 SHIFT 个答案是 -1（损失不计）。"""
    x = rng.integers(0, V, size=(batch, length))
    y = np.full((batch, length), -1)
    y[:, SHIFT:] = x[:, :-SHIFT]
    return x, y


def make_config(pos_encoding: str, block_size: int) -> GPTConfig:
    return GPTConfig(vocab_size=V, block_size=block_size, n_layer=N_LAYER, n_head=N_HEAD, n_embd=N_EMBD,
                     pos_encoding=pos_encoding)


def train(pos_encoding: str) -> tuple[GPT, list[float]]:
    mg.manual_seed(0)
    rng = np.random.default_rng(0)
    model = GPT(make_config(pos_encoding, block_size=TRAIN_LEN))
    optimizer = optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    losses = []
    for _ in range(STEPS):
        x, y = shift_batch(rng, BATCH, TRAIN_LEN)
        _, loss = model(x, y)          # 前向
        optimizer.zero_grad()
        loss.backward()                # 反向传播
        optimizer.step()               # 更新
        losses.append(loss.item())
    return model, losses


def score_by_position(model: GPT, length: int) -> tuple[np.ndarray, np.ndarray]:
    """在 256 条新序列上，每个位置 t >= SHIFT 的答对率（取最可能的答案）和交叉熵损失，形状都是 (length - SHIFT,)。"""
    x, y = shift_batch(np.random.default_rng(123), 256, length)
    with mg.no_grad():
        logits, _ = model(x)
    log_p = F.log_softmax(logits, axis=-1).numpy()[:, SHIFT:]                    # (256, length - SHIFT, V)
    answers = y[:, SHIFT:]
    correct = log_p.argmax(axis=-1) == answers
    loss = -np.take_along_axis(log_p, answers[..., None], axis=-1)[..., 0]
    return correct.mean(axis=0), loss.mean(axis=0)


def accuracy_by_position(model: GPT, length: int) -> np.ndarray:
    return score_by_position(model, length)[0]


ENCODINGS = ["learned", "sinusoidal", "rope", "none"]
models, curves, trained_acc = {}, {}, {}
for pos_encoding in ENCODINGS:
    t0 = time.time()
    models[pos_encoding], curves[pos_encoding] = train(pos_encoding)
    trained_acc[pos_encoding] = accuracy_by_position(models[pos_encoding], TRAIN_LEN).mean()
    print(f"{pos_encoding:>10}：最后的训练损失 {np.mean(curves[pos_encoding][-20:]):.3f}，"
          f"长度 {TRAIN_LEN} 上的答对率 {trained_acc[pos_encoding]:.1%}（{time.time() - t0:.1f} 秒）")

fig, ax = plt.subplots(figsize=(8, 3.8))
for pos_encoding in ENCODINGS:
    smooth = np.convolve(curves[pos_encoding], np.ones(20) / 20, mode="valid")
    ax.plot(smooth, label=pos_encoding if pos_encoding != "none" else label("不加位置", "none"))
ax.axhline(np.log(V), color="black", linewidth=0.8, linestyle=":")
ax.text(STEPS * 0.98, np.log(V) - 0.05, label("瞎猜的损失 ln 12", "chance loss ln 12"), ha="right", va="top")
ax.set_xlabel(label("训练步数", "training step"))
ax.set_ylabel(label("损失（20 步滑动平均）", "loss (20-step moving average)"))
ax.set_title(label("“输出前面第 3 个词元”的训练曲线", "training on 'copy the token 3 back'"))
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "04_training_curves.png")

# %% [markdown]
# 在训练长度上，三种位置编码都把题做对了（几乎 100%）；不给位置信息的模型差得远。
# 它也不是完全瞎猜：因果遮罩让第 $t$ 个位置恰好看到 $t+1$ 个词元，这本身泄露了一点点位置线索，
# 但远远不够用来找出“前面第 3 个”。

#
# 训练曲线里还藏着一个细节：sinusoidal 在“瞎猜”的水平上停了一阵才开始下降，另外两种几乎立刻就学会了。
# 这也回答了一个常被问到的问题：把位置和字直接相加，两者会不会搅在一起？会，而且谁的数值大，谁就占上风。
# 量一量刚初始化时两者的大小：

# %%
fresh = GPT(make_config("sinusoidal", block_size=TRAIN_LEN))
token_norm = np.linalg.norm(fresh.transformer.wte.weight.numpy(), axis=1).mean()
position_norm = np.linalg.norm(fresh.pos_table.numpy(), axis=1).mean()
print(f"初始化时：嵌入向量的长度 {token_norm:.3f}，正弦余弦位置向量的长度 {position_norm:.3f}"
      f"（大 {position_norm / token_norm:.0f} 倍）")
assert position_norm > 10 * token_norm

# %% [markdown]
# GPT-2 式的初始化让嵌入向量很小（每维标准差 0.02），而正弦余弦表每维都在 ±1 之间，大得多（上面打印的倍数）。
# 相加之后，字的信息一开始几乎被位置淹没，模型得先把嵌入向量“喊大声”才能开始解题——所以起步慢。
# 可学习的表和嵌入向量用同样的小初始化，RoPE 根本不往嵌入向量上加东西，都没有这个问题。
# （原始 Transformer 在相加之前把嵌入向量乘上 $\sqrt{d}$，客观上也起到了平衡两者大小的作用。）

# %%
for pos_encoding in ("learned", "sinusoidal", "rope"):
    assert trained_acc[pos_encoding] > 0.9, f"{pos_encoding} 在训练长度上应能做对这个任务"
assert trained_acc["none"] < 0.7, "不给位置，这个任务应当做不出来"
assert trained_acc["none"] < min(trained_acc[p] for p in ("learned", "sinusoidal", "rope")) - 0.25
my_guesses.reveal("cannot_learn", min(trained_acc, key=trained_acc.get))

# %% [markdown]
# ### 考更长的序列：可学习的表没有那一行
#
# 训练时 `block_size` 是 16，可学习的位置表 `wpe` 就只有 16 行。第 17 个位置没有座位号可查：

# %%
learned = models["learned"]
print("可学习的位置表的形状：", learned.transformer.wpe.weight.shape)
x_long, y_long = shift_batch(np.random.default_rng(7), 4, TEST_LEN)
try:
    learned(x_long)
    raise AssertionError("只有 16 行的可学习位置表不该能在 48 个位置上前向")
except ValueError as error:
    print("在 48 个词元上前向 ->", error)

try:
    row = learned.transformer.wpe.weight[TEST_LEN - 1]
    raise AssertionError("位置表里不该有第 47 行")
except IndexError as error:
    print(f"取 wpe.weight[{TEST_LEN - 1}] ->", type(error).__name__, error)

# 把训练好的权重装进一个为 48 个位置建的模型也不行：它的表有 48 行，我们的只有 16 行。
try:
    GPT(make_config("learned", block_size=TEST_LEN)).load_state_dict(learned.state_dict())
    raise AssertionError("16 行的位置表不该能装进 48 行的模型")
except RuntimeError as error:
    print("装进 48 个位置的模型 ->", str(error).splitlines()[1].strip())

# %% [markdown]
# 正弦余弦和 RoPE 没有需要学习的位置参数：它们的表是公式算出来的，不存进 `state_dict`。
# 所以同一份训练好的权重，可以原封不动地装进一个 `block_size=48` 的模型，直接在 48 个位置上作答。
# 为了看清可学习的表在新位置上会怎样，我们也给它造一个 48 行的表：前 16 行是学好的，后 32 行保持初始化时的随机值——
# 这相当于“有这一行，但从来没人教过它”。
#
# **先猜一猜**：在训练时没见过的位置 16–47 上，learned、sinusoidal、RoPE 的答对率各是多少？谁最接近满分？

# %%
my_guesses.guess("rope_unseen_acc", "还没猜", "RoPE 在没见过的位置上的答对率")  # 换成你的猜测
my_guesses.guess("best_unseen", "还没猜", "没见过的位置上最接近满分的", options=["learned", "sinusoidal", "rope"])

# %%
def stretched(pos_encoding: str) -> GPT:
    """把训练好的权重装进 block_size = TEST_LEN 的模型（learned：第 TRAIN_LEN 行以后保持未训练）。"""
    mg.manual_seed(1)
    big = GPT(make_config(pos_encoding, block_size=TEST_LEN))
    state = models[pos_encoding].state_dict()
    if pos_encoding == "learned":
        table = big.transformer.wpe.weight.numpy()
        table[:TRAIN_LEN] = state["transformer.wpe.weight"].numpy()
        state = {**state, "transformer.wpe.weight": table}
    big.load_state_dict(state)
    return big


long_scores = {p: score_by_position(stretched(p), TEST_LEN) for p in ENCODINGS}
long_acc = {p: acc for p, (acc, _) in long_scores.items()}
long_loss = {p: loss for p, (_, loss) in long_scores.items()}
seen = slice(0, TRAIN_LEN - SHIFT)              # 位置 SHIFT..15：训练时见过的位置
unseen = slice(TRAIN_LEN - SHIFT, None)         # 位置 16..47：从没见过
print(f"{'':>10}  位置 {SHIFT}–{TRAIN_LEN - 1}（见过）的答对率   位置 {TRAIN_LEN}–{TEST_LEN - 1}（没见过）的答对率")
for p in ENCODINGS:
    print(f"{p:>10}  {long_acc[p][seen].mean():>22.1%}   {long_acc[p][unseen].mean():>26.1%}")

fig, ax = plt.subplots(figsize=(9, 4.2))
positions = np.arange(SHIFT, TEST_LEN)
names = {"learned": label("learned（新位置的行未经训练）", "learned (new rows untrained)"),
         "sinusoidal": "sinusoidal", "rope": "RoPE", "none": label("不加位置", "none")}
for p, style in zip(ENCODINGS, ["o-", "s-", "^-", "x--"]):
    ax.plot(positions, long_acc[p], style, markersize=3.5, label=names[p])
ax.axvspan(TRAIN_LEN - 0.5, TEST_LEN - 0.5, color="grey", alpha=0.12)
ax.axhline(CHANCE, color="black", linewidth=0.8, linestyle=":")
ax.text(TRAIN_LEN + 1.5, 0.8, label("训练时没见过的位置", "positions never seen in training"), color="dimgray")
ax.text(TEST_LEN - 0.8, CHANCE - 0.015, label("瞎猜 = 1/12", "chance = 1/12"), ha="right", va="top")
ax.set_xlabel(label("位置", "position"))
ax.set_ylabel(label("答对率（输出前面第 3 个词元）", "accuracy (copy the token 3 back)"))
ax.set_title(label(f"训练长度 {TRAIN_LEN}，考试长度 {TEST_LEN}", f"trained on {TRAIN_LEN}, tested on {TEST_LEN}"))
ax.set_ylim(-0.03, 1.05)
ax.grid(True, alpha=0.3)
ax.legend(loc="center right", fontsize=9)
fig.tight_layout()
show_figure(fig, "04_length_extrapolation.png")

unseen_acc = {p: float(long_acc[p][unseen].mean()) for p in ENCODINGS}
my_guesses.reveal("rope_unseen_acc", unseen_acc["rope"])
my_guesses.reveal("best_unseen", max(("learned", "sinusoidal", "rope"), key=unseen_acc.get))
assert long_acc["learned"][seen].mean() > 0.9, "可学习的位置表在训练过的位置上仍然管用"
assert unseen_acc["learned"] < 0.35, "没人训练过的行给出的（几乎）是瞎猜"
assert unseen_acc["rope"] > 0.8, "RoPE 在训练长度之外照样管用"
assert unseen_acc["rope"] > unseen_acc["sinusoidal"] + 0.3
assert unseen_acc["rope"] > unseen_acc["learned"] + 0.3

# %% [markdown]
# 这张图值得多看几眼：
#
# - **learned**：在见过的位置上满分，一进灰色区域就掉到瞎猜的水平。那些行只是随机数，模型从没学过怎么用它们。
# - **sinusoidal**：公式能给任何位置算出编码，模型也确实给出了答案——但在新位置上的答案大多是错的。
# - **RoPE**：在新位置上几乎仍是满分。它把位置变成 q、k 的旋转角，使注意力分数只取决于两个词元
#   **相隔多远**；“往回数 3 个”这件事在第 40 号位置和第 10 号位置完全一样，学会一次，处处可用。
#   它也不是万能的：序列越长，注意力要在越多的词元里挑，换一道更难的题、或把长度拉得更远，分数就会被稀释。
#
# ### 更正：正弦余弦编码不能外推
#
# 讲义说，正弦余弦编码比可学习的表强在“能外推”：公式对任何位置都算得出来，所以模型能处理比训练时更长的句子。
# **这个实验不支持这个说法，这里明确更正**：公式确实算得出第 47 号位置的编码，但模型只在 0–15 号位置上
# 见过这些编码的组合，新位置上各只“钟”的读数组合是它从没见过的，它不知道该怎么用。
# “公式能往外算”不等于“模型能往外推”。
#
# 答对率只说对错，损失（交叉熵）还说出了模型错得多自信。把每个位置的损失画出来，和瞎猜的损失 $\ln 12$ 比：
#
# **先猜一猜**：在没见过的位置上，sinusoidal 模型的损失是接近瞎猜，还是比瞎猜还高？

# %%
my_guesses.guess("sinusoidal_unseen", "还没猜", "没见过的位置上 sinusoidal 的损失",
                 options=["接近瞎猜", "比瞎猜还高"])  # 换成你的猜测

# %%
print(f"{'':>10}  位置 {SHIFT}–{TRAIN_LEN - 1}（见过）的损失   位置 {TRAIN_LEN}–{TEST_LEN - 1}（没见过）的损失"
      f"   （瞎猜：ln {V} = {np.log(V):.2f}）")
for p in ENCODINGS:
    print(f"{p:>10}  {long_loss[p][seen].mean():>20.2f}   {long_loss[p][unseen].mean():>24.2f}")

fig, ax = plt.subplots(figsize=(9, 4.2))
for p, style in zip(ENCODINGS, ["o-", "s-", "^-", "x--"]):
    ax.plot(positions, long_loss[p], style, markersize=3.5, label=names[p])
ax.axvspan(TRAIN_LEN - 0.5, TEST_LEN - 0.5, color="grey", alpha=0.12)
ax.axvline(TRAIN_LEN - 0.5, color="black", linewidth=0.8)
ax.axhline(np.log(V), color="black", linewidth=0.8, linestyle=":")
ax.text(SHIFT, np.log(V) + 0.2, label("瞎猜 = ln 12", "chance = ln 12"), ha="left", va="bottom")
ax.text(TRAIN_LEN + 0.2, ax.get_ylim()[1] * 0.93, label("← block_size：训练到这里为止", "<- block_size"),
        color="dimgray")
ax.set_xlabel(label("位置", "position"))
ax.set_ylabel(label("交叉熵损失（纳特）", "cross-entropy (nats)"))
ax.set_title(label("更正：过了训练长度，sinusoidal 的损失一下子跳上去",
                   "correction: past the trained length, the sinusoidal model's loss jumps"))
ax.grid(True, alpha=0.3)
ax.legend(loc="center left", fontsize=9)
fig.tight_layout()
show_figure(fig, "04_sinusoidal_does_not_extrapolate.png")

sin_seen, sin_unseen = float(long_loss["sinusoidal"][seen].mean()), float(long_loss["sinusoidal"][unseen].mean())
my_guesses.reveal("sinusoidal_unseen", "比瞎猜还高" if sin_unseen > np.log(V) else "接近瞎猜")
assert sin_seen < 0.1, "在训练过的位置上，sinusoidal 模型有把握而且答对"
assert sin_unseen > sin_seen + 1.0, "过了 block_size 损失一下子跳上去：正弦余弦编码不能外推"
assert sin_unseen > np.log(V), "在那里它比瞎猜还差：错得很有把握"
assert sin_unseen > float(long_loss["rope"][unseen].mean()) + 1.0, "RoPE 能外推的地方，sinusoidal 不能"

# %% [markdown]
# 在训练长度以内，三种编码的损失都接近 0；一过 `block_size`（竖线），sinusoidal 的损失就跳了上去（上面打印的数，
# 和瞎猜的 $\ln 12$ 比一比）——它不但答错，而且错得很自信。可学习的表在那里本来就没有训练过的行，也一样跳上去；
# 只有 RoPE 的曲线平平地延续下去。所以讲义那句话要改成：**正弦余弦编码能给任何位置算出一个向量，
# 但模型学会的只是训练长度以内的那些向量；要外推，得让注意力只看相对位置**——这正是 RoPE 和后来各种相对位置编码的出发点。
#
# 最后验证一下 RoPE 的那条性质：把 q 放在位置 $m$、k 放在位置 $n$ 各自旋转，点积只取决于 $m-n$。

# %%
rotary = Rotary(head_size=16, block_size=64)
rng = np.random.default_rng(0)
q_vec = mg.tensor(rng.standard_normal((1, 1, 1, 16)))
k_vec = mg.tensor(rng.standard_normal((1, 1, 1, 16)))


def rotated_dot(m: int, n: int) -> float:
    return float((rotary(q_vec, start=m) * rotary(k_vec, start=n)).sum().item())


pairs = [(3, 0), (13, 10), (50, 47)]
dots = [rotated_dot(m, n) for m, n in pairs]
print("q 在位置 m、k 在位置 n，m - n = 3：", {f"(m={m}, n={n})": round(d, 5) for (m, n), d in zip(pairs, dots)})
print("对照：m - n = 5 时", round(rotated_dot(15, 10), 5))
assert np.allclose(dots, dots[0], atol=1e-4), "RoPE 的分数只取决于相对位置"
assert abs(rotated_dot(15, 10) - dots[0]) > 1e-2

# %% [markdown]
# ## 5. 唐诗里的“狗咬人”：一句诗和它倒过来念
#
# 第 1 节用三个随机的嵌入向量说明了盲点。换成真的诗句，并且让模型**训练**——训练能不能替它补上这个盲点？
#
# 从 `minigpt` 自带的唐诗语料里取出所有五言句，每句配一个倒过来念的版本（“白日依山尽”→“尽山依日白”），
# 训练一个小分类器判断“这是原句还是倒句”。分类器只有四步：查嵌入表（可选：加上一张可学习的位置表）→
# 一层不加遮罩的自注意力 → 五个位置的输出取平均 → 线性层给出两个分数。
# 训练用按首切分的训练集，考试用没见过的验证集（每十首留一首）。

# %%
import re

from minigpt import CharTokenizer
from minigpt.corpus import load_tang, split_poems

tang_train, tang_val = split_poems(load_tang())


def five_character_lines(text: str) -> list[str]:
    """所有正好五个字的半句（两个标点之间的文字）。"""
    return re.findall(r"(?<=[\n，；])[\u4e00-\u9fff]{5}(?=[，；。？！])", text)


zh_tok = CharTokenizer.from_text(tang_train + tang_val)
line_ids = {split: zh_tok.encode_array("".join(five_character_lines(text))).reshape(-1, 5)    # (N, 5)
            for split, text in (("train", tang_train), ("val", tang_val))}
print(f"五言句：训练集 {len(line_ids['train']):,} 句，验证集 {len(line_ids['val']):,} 句；"
      f"词表 {zh_tok.vocab_size:,} 个字")


class OrderClassifier(nn.Module):
    """一句五言是原来的次序（类别 1）还是倒过来的（类别 0）？一层注意力，没有遮罩。"""

    def __init__(self, vocab: int, dim: int, positions: bool):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.wpe = nn.Embedding(5, dim) if positions else None           # 每个座位一行可学习的向量，或者没有
        self.q, self.k, self.v = nn.Linear(dim, dim), nn.Linear(dim, dim), nn.Linear(dim, dim)
        self.head = nn.Linear(dim, 2)

    def embed(self, ids: np.ndarray) -> mg.Tensor:
        x = self.wte(ids)                                                 # (B, 5, dim)
        if self.wpe is not None:
            x = x + self.wpe(np.arange(ids.shape[1]))                     # 每句诗加同样的座位信号
        return x

    def forward(self, ids: np.ndarray) -> mg.Tensor:
        x = self.embed(ids)
        y = F.scaled_dot_product_attention(self.q(x), self.k(x), self.v(x))  # (B, 5, dim)
        return self.head(y.mean(axis=1))                                  # (B, 2)：五个座位取平均，再打分

    def attention(self, ids: np.ndarray) -> mg.Tensor:
        """注意力权重 (B, 5, 5)：第 i 行是座位 i 看每个座位的多少。"""
        x = self.embed(ids)
        scores = self.q(x) @ self.k(x).swapaxes(-1, -2) / np.sqrt(x.shape[-1])   # (B, 5, 5)
        return F.softmax(scores, axis=-1)


def line_pairs(rng: np.random.Generator, ids: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """随机 n 句，后面跟着同样 n 句的倒句，和它们的类别（1：原句，0：倒句）。"""
    rows = ids[rng.integers(0, len(ids), n)]
    return np.concatenate([rows, rows[:, ::-1]]), np.repeat(np.array([1, 0]), n)


ORDER_STEPS = 300 if QUICK else 1000
order_models, order_acc, order_gap = {}, {}, {}
for positions in (False, True):
    mg.manual_seed(0)
    rng = np.random.default_rng(0)
    model = OrderClassifier(zh_tok.vocab_size, 32, positions)
    optimizer = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    for _ in range(ORDER_STEPS):
        x, y = line_pairs(rng, line_ids["train"], 64)
        loss = F.cross_entropy(model(x), y)   # 前向
        optimizer.zero_grad()
        loss.backward()                       # 反向传播
        optimizer.step()                      # 更新
    x, y = line_pairs(np.random.default_rng(1), line_ids["val"], 2000)
    with mg.no_grad():
        logits = model(x).numpy()             # (4000, 2)：验证集的 2000 句，然后是它们的倒句
    name = "加位置表" if positions else "不加位置"
    order_models[name] = model
    order_acc[name] = float((logits.argmax(axis=1) == y).mean())
    order_gap[name] = float(np.abs(logits[:2000] - logits[2000:]).max())   # 原句和倒句的分数有没有差别？
    print(f"{name}：最后的训练损失 {loss.item():.3f}，验证集上的正确率 {order_acc[name]:.1%}，"
          f"一句和它的倒句的分数最多差 {order_gap[name]:.2g}")

# %%
for line in ("白日依山尽", "床前看月光"):
    pair = zh_tok.encode_array(line + line[::-1]).reshape(2, 5)
    with mg.no_grad():
        p_real = {name: F.softmax(m(pair), axis=-1).numpy()[:, 1] for name, m in order_models.items()}
    print(f"判为原句的概率（{line} / {line[::-1]}）：" + "；".join(
        f"{name} {p[0]:.2f} / {p[1]:.2f}" for name, p in p_real.items()))

assert order_gap["不加位置"] < 1e-4, "不给位置时，一句诗和它的倒句得分相同"
assert abs(order_acc["不加位置"] - 0.5) < 0.01, "所以每一对里它只能对一个，练多久都一样"
assert order_acc["加位置表"] > 0.6, "加一张位置表，语序就学得会"

# 两个分类器在“白日依山尽”上每个座位看哪里；倒句的注意力按座位换回原句的次序再比：
# 不加位置时是同一张图，加了位置就不是。
line_pair = zh_tok.encode_array("白日依山尽尽山依日白").reshape(2, 5)
back = [4, 3, 2, 1, 0]                                   # 原句的座位 i 是倒句的座位 4 - i
with mg.no_grad():
    maps = {name: m.attention(line_pair).numpy() for name, m in order_models.items()}   # 各 (2, 5, 5)
for name, (real, reverse) in maps.items():
    print(f"{name}：倒过来念时，注意力图（按座位换回后）最多变了 "
          f"{np.abs(real - reverse[np.ix_(back, back)]).max():.2g}")
assert np.allclose(maps["不加位置"][0], maps["不加位置"][1][np.ix_(back, back)], atol=1e-6)
assert np.abs(maps["加位置表"][0] - maps["加位置表"][1][np.ix_(back, back)]).max() > 0.05
fig, axes = plt.subplots(1, 2, figsize=(8, 3.8))
for ax, (name, weights) in zip(axes, maps.items()):
    image = ax.imshow(weights[0], cmap="Blues", vmin=0, vmax=1)
    seats = list("白日依山尽") if CJK else [f"seat {i}" for i in range(5)]
    ax.set_xticks(range(5), seats)
    ax.set_yticks(range(5), seats)
    ax.set_title(label(name, {"不加位置": "no positions", "加位置表": "with positions"}[name]))
    ax.set_xlabel(label("被看的座位", "seat looked at"))
axes[0].set_ylabel(label("在看的座位", "seat looking"))
fig.colorbar(image, ax=axes, fraction=0.03)
show_figure(fig, "04_poem_attention.png")

# %% [markdown]
# 不加位置的分类器练了这么多步，对每一句诗和它的倒句给出的分数**一模一样**（差别只在浮点误差的量级），
# 正确率就是 50%（每一对里恰好对一个；偶尔两个分数只差在第七位小数上，argmax 才会让它多对或多错一个）——
# 这不是没练好，而是它根本“看不见”两者的区别：自注意力只把输出换了个顺序，
# 取平均又把顺序抹掉了。训练改变的是嵌入向量和权重，改变不了这个结构。
#
# 加上一张 5 行的位置表，同样的层、同样的步数，它就能在没见过的诗句上把多数原句和倒句分开。
# 下图是两个分类器在“白日依山尽”上的注意力（每行是一个座位在看谁）：不加位置时，把倒句的注意力按座位换回来，
# 和原句的一模一样；加了位置，同一个字在不同座位上看的地方不一样了。
#
# 它能抓住的线索之一是“哪个字爱坐在哪个座位”。数一数训练诗句里每个常用字坐在第 1 座和第 5 座的比例：

# %%
seat_counts = np.zeros((zh_tok.vocab_size, 5))
np.add.at(seat_counts, (line_ids["train"], np.arange(5)), 1)          # 每个字坐在每个座位上的次数
common = np.flatnonzero(seat_counts.sum(axis=1) >= 1000)
first_share = seat_counts[common, 0] / seat_counts[common].sum(axis=1)
last_share = seat_counts[common, 4] / seat_counts[common].sum(axis=1)
print("偏爱句首的字：", "  ".join(f"{zh_tok.chars[common[i]]} {first_share[i]:.0%}"
                                         for i in np.argsort(-first_share)[:8]))
print("偏爱句末的字：", "  ".join(f"{zh_tok.chars[common[i]]} {last_share[i]:.0%}"
                                         for i in np.argsort(-last_share)[:8]))
assert first_share.max() > 0.4 and last_share.max() > 0.4      # 不挑座位的字每座 20%，这里是它的两倍

# %% [markdown]
# 一个不挑座位的字，每个座位各占 20%。可有的字将近一半甚至更多时候坐在句首（多是发问、起句的字，像“谁”“何”“今”），
# 有的字将近一半时候坐在句末（常做韵脚的字）。这些线索只有在知道座位号时才用得上。
# 这道题做不到 100%：很多诗句里没有这样的字，倒过来念也挑不出毛病。

# %%
my_guesses.calibration()  # 本讲的先猜一猜：数值猜测差几倍，选择题猜对几个

# %% [markdown]
# ## 小结
#
# | 问题 | 办法 | 在 minigpt 里 |
# |---|---|---|
# | 自注意力对顺序视而不见（实验 1） | 给每个位置加一个位置信号（实验 2） | `GPTConfig(pos_encoding=...)` |
# | 位置信号该长什么样 | 正弦余弦：公式生成，近处相似、远处不似（实验 3） | `minigpt.model.sinusoidal_table` |
# | 可学习的表学不到没见过的位置 | 能装进更长模型的编码；最好是相对位置 | `learned` 的 `wpe` vs `Rotary` |
# | 正弦余弦编码“能外推”？（更正：不能） | 让注意力只看相对位置 | `GPTConfig(pos_encoding="rope")` |
#
# 下一讲（05）：一层注意力只有一种看法，而且叠深了会出问题——多头、残差、LayerNorm 和 MLP 登场。

# %%
print(f"本讲用时 {time.time() - T_START:.1f} 秒")

# %% [markdown]
# ## 练习
#
# 5 道练习在 `tutorials/exercises/lecture04.py` 里：正弦余弦编码表（4.1）、两个位置编码的点积（4.2）、
# RoPE 的旋转（4.3）、推导“相对位移是一个线性变换”（4.4），以及一道开放题（4.5）：不碰嵌入向量，
# 只往注意力分数上加一个位置偏置，设计它，让第 4 节那样的题在长度 16 上训练、到长度 48 上照样做对
# （训练时没见过的位置上答对率 ≥ 90%，前面第 2 个、第 5 个两道题都要做到）。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 04`。

# %%
from tutorials.exercises import check

check("04")
