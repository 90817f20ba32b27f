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
# # 02 RNN、长句困境与注意力（attention）的诞生
#
# 上一讲的模型只看最近几个字符。想看得更远，又不能把所有前文都存下来，怎么办？
# 一个办法是带一张固定大小的“小纸条”往后传：每读一个字，就把旧纸条和新字揉成一张新纸条。这就是 RNN。
# 这一讲用实验回答：
#
# > **RNN 的纸条能带多远？梯度为什么传不回去？门控能救多少？注意力又是怎么补上这个缺口的？**
#
# 实验清单：
#
# 1. 用 minigrad 的张量亲手写一个字符级 RNN（tanh 单元），在莎士比亚上训练，在第 01 讲的尺子上打分，让它写几句；
# 2. 测量“输出对 t 步之前输入的梯度”：随 t 按几何级数衰减（梯度消失）；
# 3. 换成带门控的 GRU，用同样的数据训练同样的步数：尺子上更好；门开着时梯度能走得远得多——
#    但仍是几何衰减，而且训练好的 GRU 并不把远处的信息留着：缓解，不是根治；
# 4. 编码器-解码器做“复述”任务：只靠一个固定向量，句子越长错得越多；
# 5. 给解码器加上注意力：长句的准确率回来了，对齐关系画成热图。
#
# 运行：`python tutorials/02_rnn_attention.py`（`TUTORIAL_QUICK=1` 跑快速版）。图片写到当前目录的 `figures/`。

# %% [markdown]
# **学完这一讲，你能**：用 minigrad 的张量写出并训练一个 RNN；量出梯度随距离几何衰减，并说清原因
# （每往回一步乘一次雅可比矩阵）；写出 GRU 的一步；解释注意力为什么能让长序列的复述“回来”。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（在 2 核 CPU 上实测，训练占了大部分）；最后有 6 道练习。

# %%
# RNN 每一步只做很小的矩阵乘法。小矩阵上，BLAS 的多个线程互相等待反而更慢（机器忙时可慢几十倍），
# 所以 tutorials.course 在导入 NumPy 之前请它只用一个线程（它因此要最先导入）。这只影响速度，不影响结果。
from tutorials.course import QUICK, label, show_figure

# isort: split
import math
import time

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, optim
from tutorials import ladder, yardstick
from tutorials.ladder import Rung

mg.manual_seed(0)

# %% [markdown]
# ## 1. 一个字符级 RNN
#
# 隐藏状态 $h_t$ 就是那张纸条，大小固定（这里 64 个数）。每一步：
#
# $$h_t = \tanh(x_t W_{xh} + h_{t-1} W_{hh} + b), \qquad \text{logits}_t = h_t W_{hy} + b_y$$
#
# $x_t$ 是第 $t$ 个字符的向量（embedding），logits 给出下一个字符的分数。
# 注意 $h_t$ 只能通过 $h_{t-1}$ 知道过去——过去的一切都得挤进这 64 个数里。
#
# 数据和第 01 讲一样：`minigpt` 自带的莎士比亚，按 `minigpt train` 的办法切开；分数也用第 01 讲的那把尺子打，
# 这样这一讲的 RNN 和第 01 讲数出来的模型可以直接比。训练时每段文本和尺子的窗口一样长。

# %%
ys = yardstick.load()
tokenizer, V = ys.tokenizer, ys.vocab_size  # 第 01 讲手工建的字符表，minigpt 里现成就有
train_data, val_data = ys.train, ys.val
SEQ = yardstick.WINDOW  # 训练用的文本段和尺子的窗口一样长
print(f"训练文本 {len(train_data):,} 个字符，字符表 {V} 个；每段训练文本 {SEQ} 个字符")


class CharRNN(nn.Module):
    """h_t = tanh(x_t W_xh + h_{t-1} W_hh + b)；logits_t = h_t W_hy + b_y。"""

    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.hidden = hidden
        self.emb = nn.Embedding(vocab, emb)
        self.W_xh = nn.Linear(emb, hidden)  # 输入 → 隐藏状态（偏置 b 在这里）
        self.W_hh = nn.Linear(hidden, hidden, bias=False)  # 隐藏状态 → 隐藏状态：往下传的纸条
        self.head = nn.Linear(hidden, vocab)

    def start(self, batch):
        return mg.zeros(batch, self.hidden)

    def step(self, x, h):  # x (B, emb)，h (B, hidden) → 新的 h
        return (self.W_xh(x) + self.W_hh(h)).tanh()

    def run(self, xs):
        """xs (B, T, emb) → 隐藏状态：T 个 (B, hidden) 张量的列表，每个字符走一步。"""
        h = self.start(xs.shape[0])
        states = []
        for t in range(xs.shape[1]):
            h = self.step(xs[:, t], h)
            states.append(h)
        return states

    def forward(self, ids, targets=None):
        states = self.run(self.emb(ids))
        logits = self.head(mg.stack(states, axis=1))  # (B, T, vocab)
        # cross_entropy 要求类别在第 1 维（和 PyTorch 一样）：每个位置一行，(B*T, vocab) 和 (B*T,)
        loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss


def get_batch(split_data, batch, seq, rng):
    starts = rng.integers(0, len(split_data) - seq - 1, batch)
    x = np.stack([split_data[s : s + seq] for s in starts])
    y = np.stack([split_data[s + 1 : s + seq + 1] for s in starts])
    return x, y


def train(model, steps, lr=3e-3, seq=SEQ, batch=32, seed=0):
    """训练 `steps` 步；返回每步的训练损失和用掉的墙钟时间（秒）。同一个 seed，同一串训练数据。"""
    optimizer = optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    rng = np.random.default_rng(seed)
    losses, start = [], time.perf_counter()
    for _ in range(steps):
        x, y = get_batch(train_data, batch, seq, rng)
        # 前向（forward）
        _, loss = model(x, y)
        # 反向传播（backward）
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # RNN 的梯度也可能爆炸：限制它的范数
        # 更新（update）
        optimizer.step()
        losses.append(loss.item())
    return losses, time.perf_counter() - start


mg.manual_seed(0)
rnn = CharRNN(V, emb=16, hidden=64)
rnn_at_init = CharRNN(V, emb=16, hidden=64)
rnn_at_init.load_state_dict(rnn.state_dict())  # 留一份没训练过的副本，第 2 节用
rnn_steps = 300 if QUICK else 1000
rnn_losses, rnn_seconds = train(rnn, rnn_steps)
rnn_score = ys.score_logits(rnn)
unigram = (np.bincount(train_data, minlength=V) + 1) / (len(train_data) + V)  # 只数字母频率
unigram_score = ys.score_probs(unigram[ys.y])
print(f"RNN（{rnn.num_parameters():,} 个参数）训练 {rnn_steps} 步，用时 {rnn_seconds:.0f} 秒；"
      f"尺子上 {rnn_score} 纳特/字符")
print(f"对比：只数字母频率 {unigram_score.nats:.3f}，瞎猜 {math.log(V):.3f}")
assert rnn_score.nats < unigram_score.nats - (0.5 if QUICK else 0.9)

# %% [markdown]
# 它比“只知道字母频率”的猜法好得多——纸条确实带着前文的信息。让它写一段（每一步按预测的概率抽一个字符）：

# %%
@mg.no_grad()
def sample(model, prompt, n, seed=0):
    rng = np.random.default_rng(seed)
    h = model.start(1)
    for ch in prompt[:-1]:
        h = model.step(model.emb(np.array(tokenizer.encode(ch))), h)
    out, idx = prompt, tokenizer.encode(prompt[-1])[0]
    for _ in range(n):
        h = model.step(model.emb(np.array([idx])), h)
        p = model.head(h).softmax(axis=-1).numpy()[0].astype(np.float64)
        idx = int(rng.choice(V, p=p / p.sum()))
        out += tokenizer.decode([idx])
    return out


print(sample(rnn, "ROMEO:\n", 300))

# %% [markdown]
# 像英文，像剧本的格式，但读不通。和第 01 讲数出来的模型比，它的分数还差得远：上一讲最好的计数模型把几十万个
# 组合的次数都存在表里，而这个 RNN 只有一万来个参数，训练也只有几分钟。（两者在同一把尺子上的分数，第 07 讲画在一起。）
# 字符级 RNN 要写出通顺的句子，需要大得多的模型和长得多的训练；不过更根本的问题在下一节。
#
# ## 2. 纸条上的字迹越来越淡：梯度消失
#
# 训练时，第 $T$ 步的损失要告诉第 $T-k$ 步的输入“你该怎么变”，信号得沿着纸条倒着传 $k$ 次。
# 每传一次乘一次雅可比矩阵 $\partial h_t/\partial h_{t-1} = \mathrm{diag}(1-h_t^2)\,W_{hh}^\top$。
# 如果它“缩小”向量（tanh 的导数不超过 1，$W_{hh}$ 的尺度也不大），$k$ 次之后就是缩小的 $k$ 次方——几何衰减。
#
# 实验：取 16 段 60 个字符的文本，让输入的嵌入需要梯度，从最后一步的隐藏状态（乘一个随机向量求和）
# 反向传播，看 $\lVert\partial L/\partial x_{T-k}\rVert$ 随 $k$ 怎么变。
#
# **先猜一猜**：30 步之前的输入，还能收到最后一步多少的梯度？一半？十分之一？千分之一？
#
# 下一格记下你的猜测：先把其中的“还没猜”换成你自己的猜测，再往下运行（不猜也能运行，但不计分）；
# 揭晓时实测值会印在它旁边，讲末给出校准得分。

# %%
from tutorials.course import FIGURES
from tutorials.predictions import Predictions

my_guesses = Predictions("02", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_02.json）
my_guesses.guess("rnn_grad_30", "还没猜", "训练后的 RNN：30 步处的梯度是 1 步处的几分之几")  # 换成你的猜测

# %%
def gradient_by_distance(model, n_back=60, seed=1):
    """k = 0 .. n_back-1 时 d(u · h_T)/d x_{T-k} 的平均范数（u 是随机向量），在真实文本上量。"""
    rng = np.random.default_rng(seed)
    ids, _ = get_batch(val_data, 16, n_back, rng)
    with mg.no_grad():
        xs_value = model.emb(ids).numpy()
    xs = mg.tensor(xs_value, requires_grad=True)  # 对输入本身求导
    h_last = model.run(xs)[-1]
    u = mg.tensor(rng.standard_normal(h_last.shape))
    (h_last * u).sum().backward()
    norms = np.linalg.norm(xs.grad.numpy(), axis=-1).mean(axis=0)  # (T,)
    return norms[::-1]  # 下标 k：离最后一步 k 步


def decay_per_step(norms, lo=1, hi=40):
    """log10(范数) 对 k 的拟合斜率：梯度每往回一步丢掉几个数量级。"""
    k = np.arange(lo, hi)
    return float(np.polyfit(k, np.log10(norms[lo:hi]), 1)[0])


grad_rnn_init = gradient_by_distance(rnn_at_init)
grad_rnn = gradient_by_distance(rnn)
my_guesses.reveal("rnn_grad_30", grad_rnn[30] / grad_rnn[1])
for name, g in [("tanh RNN，未训练", grad_rnn_init), ("tanh RNN，训练后", grad_rnn)]:
    print(f"{name:16s} k=1: {g[1]:.1e}  k=10: {g[10]:.1e}  k=30: {g[30]:.1e}  "
          f"斜率 {decay_per_step(g):+.3f} 个数量级/步")

# %%
for g in (grad_rnn_init, grad_rnn):
    assert decay_per_step(g) < -0.05  # 几何衰减：对数坐标下一条下降的直线
    assert g[30] < 1e-3 * g[1]  # 30 步之前，剩下的信号不到千分之一

# %% [markdown]
# ## 3. 门控：让纸条“选择性保留”
#
# GRU 给纸条加了两道门。更新门 $z$ 决定保留多少旧纸条，重置门 $r$ 决定写新内容时参考多少旧纸条：
#
# $$r = \sigma(x W_{xr} + h W_{hr}),\quad z = \sigma(x W_{xz} + h W_{hz}),\quad
# n = \tanh(x W_{xn} + r \odot (h W_{hn})),\quad h' = (1-z)\odot n + z \odot h$$
#
# 关键在最后一项 $z \odot h$：旧纸条可以不经过 tanh 和矩阵乘法，按比例 $z$ 直接抄到下一步，
# 梯度也沿这条近路往回走。下面用 minigrad 的基本运算写出 GRU 单元（三组权重并成一个矩阵，再切开），
# 用和 RNN **同样的数据、同样的步数**训练它，再问三个问题：尺子上谁更好？门打开时，梯度能多走多远？
# 训练好的 GRU 真的把远处的信息留着了吗？
#
# **先猜一猜**：同样 64 个数的纸条，训练好的 GRU 在 30 步处保留的梯度是训练好的 RNN 的几倍？

# %%
my_guesses.guess("gru_over_rnn_30", "还没猜", "训练后 30 步处：GRU 的梯度是 RNN 的几倍")  # 换成你的猜测

# %%
class GRUCell(nn.Module):
    """h' = (1 - z) * n + z * h；r 是重置门，z 是更新门，n 是候选的新内容。"""

    def __init__(self, inp, hidden, update_bias=0.0):
        super().__init__()
        self.hidden = hidden
        self.x2h = nn.Linear(inp, 3 * hidden)  # 输入的 [r | z | n] 三份
        self.h2h = nn.Linear(hidden, 3 * hidden)  # 状态的 [r | z | n] 三份
        # z 的偏置为正：一开始就倾向于“保留旧纸条”。
        self.x2h.bias.data[hidden : 2 * hidden] = update_bias

    def forward(self, x, h):
        H = self.hidden
        a, b = self.x2h(x), self.h2h(h)  # 各 (B, 3H)
        r = (a[:, :H] + b[:, :H]).sigmoid()
        z = (a[:, H : 2 * H] + b[:, H : 2 * H]).sigmoid()
        n = (a[:, 2 * H :] + r * b[:, 2 * H :]).tanh()
        return (1 - z) * n + z * h


class CharGRU(CharRNN):
    """把 CharRNN 的 tanh 一步换成 GRU 单元。"""

    def __init__(self, vocab, emb, hidden, update_bias=0.0):
        super().__init__(vocab, emb, hidden)
        self.cell = GRUCell(emb, hidden, update_bias)

    def step(self, x, h):
        return self.cell(x, h)


mg.manual_seed(0)
gru = CharGRU(V, 16, 64)
gru_at_init = CharGRU(V, 16, 64)
gru_at_init.load_state_dict(gru.state_dict())
gru_losses, gru_seconds = train(gru, rnn_steps)  # 同样的步数、同样的一串训练数据
gru_score = ys.score_logits(gru)
gap, gap_err = gru_score.gap(rnn_score)
print(f"GRU（{gru.num_parameters():,} 个参数）训练 {rnn_steps} 步，用时 {gru_seconds:.0f} 秒；"
      f"尺子上 {gru_score} 纳特/字符")
print(f"GRU 比 RNN：{gap:+.3f} ± {gap_err:.3f} 纳特/字符（同一批窗口上逐窗口相减）")

grad_gru_init = gradient_by_distance(gru_at_init)
grad_gru = gradient_by_distance(gru)
my_guesses.reveal("gru_over_rnn_30", grad_gru[30] / grad_rnn[30])
mg.manual_seed(0)
grad_gru_keep = gradient_by_distance(CharGRU(V, 16, 64, update_bias=1.0))
curves = {label("tanh RNN（未训练）", "tanh RNN (untrained)"): grad_rnn_init,
          label("tanh RNN（训练后）", "tanh RNN (trained)"): grad_rnn,
          label("GRU（未训练）", "GRU (untrained)"): grad_gru_init,
          label("GRU，更新门偏置 +1（未训练）", "GRU, update-gate bias +1 (untrained)"): grad_gru_keep,
          label("GRU（训练后）", "GRU (trained)"): grad_gru}
for name, g in curves.items():
    print(f"{name:24s} k=30: {g[30]:.1e}   斜率 {decay_per_step(g):+.3f} 个数量级/步")

# %%
fig, ax = plt.subplots(figsize=(8, 4.8))
for (name, g), style in zip(curves.items(), ["o-", "o--", "s-", "^-", "s--"]):
    ax.semilogy(np.arange(len(g)), g, style, ms=3, label=name)
ax.set_xlabel(label("k：输入在几步之前", "k: how many steps back the input is"))
ax.set_ylabel(label("|| d(最后的输出) / d(k 步之前的输入) ||", "|| d(output at the end) / d(input k steps back) ||"))
ax.set_title(label("梯度消失：对数坐标下的直线 = 几何衰减", "Vanishing gradients: straight lines on a log scale"))
ax.grid(True, which="major", alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "02_vanishing_gradients.png")

# %% [markdown]
# 梯度只是训练信号的大小。模型**实际**用到了多远的前文，可以直接在尺子上量：每个窗口里，
# 第 $t$ 个位置只能看前 $t$ 个字符，把所有窗口同一位置的损失平均起来，就得到“前文有 $t$ 个字符时猜得多准”。
# 曲线降得越久，模型用到的前文越远。

# %%
reach = {"RNN": rnn_score.per_position, "GRU": gru_score.per_position}
fig, ax = plt.subplots(figsize=(8, 4.2))
for name, curve in reach.items():
    ax.plot(np.arange(1, len(curve) + 1), curve, label=name)
ax.set_xscale("log")
ax.set_xlabel(label("窗口里已经读过的字符数", "characters read so far in the window"))
ax.set_ylabel(label("这个位置的平均损失（纳特）", "mean loss at this position (nats)"))
ax.set_title(label("多读一些前文，猜得多准？（尺子上逐位置平均）", "Loss by position in the window"))
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "02_context_use.png")
far_gain = {name: float(curve[8:16].mean() - curve[32:].mean()) for name, curve in reach.items()}
print("读过 9–16 个字符之后，再多读到 33–64 个字符，损失又降了：" +
      "，".join(f"{name} {g:+.3f} 纳特" for name, g in far_gain.items()))

# %%
assert gap < -3 * gap_err  # 同样的数据、同样的步数：GRU 在尺子上明显更好
assert grad_gru_keep[30] > 1e3 * grad_rnn_init[30]  # 门开着时，梯度沿近路多走了好几个数量级……
for g in (grad_gru_init, grad_gru_keep, grad_gru):
    assert decay_per_step(g) < -0.02  # ……但每条线仍是几何衰减：缓解，不是根治
assert grad_gru[30] < 1e-3 * grad_gru[1]  # 训练好的 GRU 也没把 30 步前的信号留住
assert all(gain < 0.05 for gain in far_gain.values())  # 读过十几个字符之后，两者都几乎不再从更远的前文得益

# %% [markdown]
# 同样 64 个数的纸条、同样的数据和步数，GRU 在尺子上赢了 RNN（代价是参数多了一倍多、每步慢了一倍多：上面都打印了）。
# 门的作用在未训练的模型上看得最清楚：把更新门的偏置调成“倾向保留”，30 步处的梯度比 tanh RNN 多出好几个数量级——
# 近路确实通了。可训练好的 GRU 并没有走这条近路：它在 30 步处的梯度和训练好的 RNN 一样微弱。猜下一个字符主要靠
# 最近几个字符，模型没有理由把远处的东西留在纸条上——上面第二张图也是这么说的：两个模型读过十几个字符之后，
# 再往前多读几十个字符，损失几乎不再下降。
# 而每条线都仍是对数坐标下的直线：几何衰减没有消失，只是变慢了。
# 只要信息必须一步一步“压缩传递”，距离越远，信号越弱。
#
# 两个模型是梯子上的两级，记下来，第 07 讲要用：

# %%
ladder.record("02", [
    Rung(key="rnn", name="RNN", lecture="02", size=rnn.num_parameters(), size_kind="parameters",
         train_seconds=rnn_seconds, score=rnn_score, extra={"steps": rnn_steps, "seq": SEQ, "batch": 32}),
    Rung(key="gru", name="GRU", lecture="02", size=gru.num_parameters(), size_kind="parameters",
         train_seconds=gru_seconds, score=gru_score, extra={"steps": rnn_steps, "seq": SEQ, "batch": 32}),
], ys)
print("记下了第 02 讲的两级：RNN、GRU")

# %% [markdown]
# ## 4. 编码器-解码器：一个固定向量装不下长句
#
# 翻译一类任务，输入和输出都是序列。经典做法：编码器 RNN 读完整句，最后的隐藏状态就是整句的“总摘要”；
# 解码器 RNN 从这个摘要出发，一个词一个词往外写。我们用最简单的“翻译”——**原样复述**一串随机符号
# （10 种符号，长度 2 到 16）——来测这个摘要能装多少东西。
#
# 解码器每一步的输入是上一个正确答案（训练时），或自己上一步的输出（测试时逐个生成）。
# 编码器和解码器都用上面的 GRU 单元。
#
# **先猜一猜**：只靠一个 64 维的总摘要，复述长度 4 的串和长度 16 的串，准确率各是多少？（随机猜是 10%。）

# %%
my_guesses.guess("summary_acc_4", "还没猜", "只靠总摘要：长度 4 的准确率")  # 换成你的猜测
my_guesses.guess("summary_acc_16", "还没猜", "只靠总摘要：长度 16 的准确率")

# %%
K = 10  # 符号 0..9
BOS = K  # “开始”：解码器的第一个输入
H_S2S = 64
MAX_LEN = 16


class Seq2Seq(nn.Module):
    """GRU 编码器加 GRU 解码器；`attention` 为真时，解码器每一步还回头看编码器的每个状态。"""

    def __init__(self, attention):
        super().__init__()
        self.attention = attention
        self.emb = nn.Embedding(K + 1, 16)
        self.encoder = GRUCell(16, H_S2S)
        self.decoder = GRUCell(16, H_S2S)
        self.W_a = nn.Linear(H_S2S, H_S2S, bias=False)  # 解码器状态 → 去查编码器状态的 query
        self.out = nn.Linear(2 * H_S2S if attention else H_S2S, K)

    def encode(self, src):
        e = self.emb(src)  # (B, L, 16)
        h = mg.zeros(src.shape[0], H_S2S)
        states = []
        for t in range(src.shape[1]):
            h = self.encoder(e[:, t], h)
            states.append(h)
        return h, mg.stack(states, axis=1)  # 总摘要 (B, H)，和每一步的状态 (B, L, H)

    def decode_step(self, token, h, enc):
        h = self.decoder(self.emb(token), h)
        if not self.attention:
            return self.out(h), h, None  # 一切都只能来自 h，而 h 从总摘要出发
        scores = (enc @ self.W_a(h)[:, :, None])[:, :, 0]  # (B, L)：原序列每个位置有多匹配
        weights = scores.softmax(axis=-1)  # (B, L)，和为 1
        context = (weights[:, None, :] @ enc)[:, 0]  # (B, H)：编码器状态的加权混合
        return self.out(mg.concat([h, context], axis=1)), h, weights

    def forward(self, src, dec_in):
        h, enc = self.encode(src)
        logits = []
        for t in range(dec_in.shape[1]):
            step_logits, h, _ = self.decode_step(dec_in[:, t], h, enc)
            logits.append(step_logits)
        return mg.stack(logits, axis=1)  # (B, L, K)

    @mg.no_grad()
    def generate(self, src):
        """贪心解码：每一步的输入是解码器自己上一步的答案。"""
        h, enc = self.encode(src)
        token = np.full(src.shape[0], BOS)
        outputs, alignment = [], []
        for _ in range(src.shape[1]):
            step_logits, h, weights = self.decode_step(token, h, enc)
            token = step_logits.numpy().argmax(axis=-1)
            outputs.append(token)
            alignment.append(None if weights is None else weights.numpy())
        return np.stack(outputs, axis=1), alignment


def copy_batch(rng, batch, length):
    src = rng.integers(0, K, (batch, length))
    dec_in = np.concatenate([np.full((batch, 1), BOS), src[:, :-1]], axis=1)  # 答案右移一位
    return src, dec_in, src


def train_seq2seq(attention, steps):
    mg.manual_seed(0)
    model = Seq2Seq(attention)
    optimizer = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        length = int(rng.integers(2, MAX_LEN + 1))  # 每批一个长度：不用补齐
        src, dec_in, target = copy_batch(rng, 64, length)
        # 前向（forward）
        logits = model(src, dec_in)  # (B, L, K)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
        # 反向传播（backward）
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        # 更新（update）
        optimizer.step()
    return model


def accuracy_by_length(model, lengths, n=300):
    rng = np.random.default_rng(123)  # 两个模型考同一批序列
    accuracies = []
    for length in lengths:
        src, _, target = copy_batch(rng, n, length)
        prediction, _ = model.generate(src)
        accuracies.append(float((prediction == target).mean()))  # 复述对的符号占多少
    return accuracies


s2s_steps = 300 if QUICK else 1500
test_lengths = [4, 8, 12, 16]
plain = train_seq2seq(attention=False, steps=s2s_steps)
acc_plain = accuracy_by_length(plain, test_lengths)
print("不带注意力：", {L: round(a, 3) for L, a in zip(test_lengths, acc_plain)})
my_guesses.reveal("summary_acc_4", acc_plain[0])
my_guesses.reveal("summary_acc_16", acc_plain[-1])

# %%
assert acc_plain[0] > (0.8 if QUICK else 0.9)  # 短序列装得进总摘要
assert acc_plain[-1] < acc_plain[0] - 0.4  # 长的装不下：序列越长准确率越低
assert all(a >= b - 0.02 for a, b in zip(acc_plain, acc_plain[1:]))  # 而且一路下降

# %% [markdown]
# 短序列几乎全对；序列越长准确率越低，长度 16 比长度 4 低了 40 个百分点以上（随机猜是 10%，具体的数见上面的打印）。
# 64 个数的“总行李箱”装 4 个符号绰绰有余，装 16 个就开始丢三落四——
# 而且编码器读到末尾时，开头的符号已经被揉了十几次（第 2 节的衰减）。
#
# ## 5. 让解码器回头看：注意力
#
# 补法：不要只给解码器一个总摘要，而是把编码器**每一步**的状态 $h_1, \dots, h_L$ 都留着。
# 解码器写第 $i$ 个符号前，用自己的状态 $s_i$ 去和每个 $h_j$ 打分（这里是 $s_i W_a \cdot h_j$），
# softmax 变成权重，再按权重把 $h_j$ 混合成一个“上下文”向量，和 $s_i$ 一起决定输出：
#
# $$\alpha_{ij} = \mathrm{softmax}_j(s_i W_a \cdot h_j), \qquad c_i = \sum_j \alpha_{ij} h_j$$
#
# 这样信息不必挤过一个固定向量，需要哪个位置，就去哪个位置取。

# %%
attn = train_seq2seq(attention=True, steps=s2s_steps)
acc_attn = accuracy_by_length(attn, test_lengths)
print("不带注意力：", {L: round(a, 3) for L, a in zip(test_lengths, acc_plain)})
print("带注意力：  ", {L: round(a, 3) for L, a in zip(test_lengths, acc_attn)})

fig, ax = plt.subplots(figsize=(7, 4.5))
ax.plot(test_lengths, acc_plain, "o-", label=label("编码器-解码器，一个总摘要", "encoder-decoder, one summary vector"))
ax.plot(test_lengths, acc_attn, "s-",
        label=label("+ 对编码器各状态的注意力", "+ attention over the encoder states"))
ax.axhline(1 / K, color="gray", ls=":", label=label("随机猜", "random guessing"))
ax.set_xlabel(label("序列长度", "sequence length"))
ax.set_ylabel(label("复述对的符号比例", "symbols copied correctly"))
ax.set_ylim(0, 1.05)
ax.set_xticks(test_lengths)
ax.set_title(label(f"复述一串符号（在长度 2–{MAX_LEN} 上训练 {s2s_steps} 步）",
                   f"Copying a sequence (trained {s2s_steps} steps on lengths 2-{MAX_LEN})"))
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "02_seq2seq_accuracy.png")

# %%
assert acc_attn[-1] > (0.8 if QUICK else 0.9)  # attention 让长序列也复述得对……
assert acc_attn[-1] > acc_plain[-1] + 0.4  # ……远好于一个总摘要
assert all(a >= p - 0.02 for a, p in zip(acc_attn, acc_plain))  # 而且从不更差

# %% [markdown]
# ### 对齐：解码器在看哪里
#
# 把一个长度 12 的例子里每一步的权重 $\alpha_{ij}$ 画出来：行是解码器正在写的第 $i$ 个符号，列是原序列的位置 $j$。
# 复述任务里，写第 $i$ 个符号就该看第 $i$ 个位置——热图应该是一条对角线。没有人告诉模型这件事，
# 它是为了把损失降下来自己学会的。
#
# **先猜一猜**：如果模型真学会了“写第 $i$ 个就看第 $i$ 个”，下面的热图会是什么形状？

# %%
my_guesses.guess("alignment_shape", "还没猜", "对齐热图的形状",
                 options=["一条对角线", "一条竖线", "均匀的一片"])  # 换成你的猜测

# %%
rng_show = np.random.default_rng(7)
src_show, _, _ = copy_batch(rng_show, 1, 12)
pred_show, alignment = attn.generate(src_show)
A = np.stack([w[0] for w in alignment])  # (解码器的步, 原序列的位置)
print("原序列：", " ".join(map(str, src_show[0])))
print("复述：  ", " ".join(map(str, pred_show[0])))

labels = [str(s) for s in src_show[0]]
fig, ax = plt.subplots(figsize=(6, 5.2))
im = ax.imshow(A, cmap="Blues", vmin=0, vmax=1)
ax.set_xticks(range(12), [f"{j}\n{s}" for j, s in enumerate(labels)])
ax.set_yticks(range(12), [f"{i}: {p}" for i, p in enumerate(pred_show[0])])
ax.set_xlabel(label("原序列的位置 j（和那里的符号）", "source position j (and its symbol)"))
ax.set_ylabel(label("解码器第 i 步：写出的符号", "decoder step i: symbol written"))
ax.set_title(label("复述时的注意力权重", "Attention weights while copying"))
fig.colorbar(im, ax=ax, fraction=0.046, label=label("权重", "weight"))
fig.tight_layout()
show_figure(fig, "02_alignment.png")

# 在许多测试序列上：最大的权重有多常落在正在复述的那个位置上？
rng_align = np.random.default_rng(8)
src_many, _, _ = copy_batch(rng_align, 200, 12)
_, alignment_many = attn.generate(src_many)
A_many = np.stack(alignment_many, axis=1)  # (N, 解码器的步, 原序列的位置)
on_diagonal = float((A_many.argmax(axis=-1) == np.arange(12)).mean())
print(f"{on_diagonal:.0%} 的步里，最大的权重落在正在复述的那个位置上")
my_guesses.reveal("alignment_shape", "一条对角线" if on_diagonal > 0.5 else "均匀的一片")
assert on_diagonal > (0.8 if QUICK else 0.9)

# %%
my_guesses.calibration()  # 本讲的先猜一猜：数值猜测差几倍，选择题猜对几个

# %% [markdown]
# ## 小结
#
# - RNN 把前文压进一个固定大小的隐藏状态，一步一步传下去；它能学到不少东西（比字母频率好得多）。
# - 反向时，梯度每往回一步就乘一次雅可比矩阵，随距离**几何衰减**；远处的输入几乎收不到训练信号。
# - GRU 的门给旧状态开了一条近路，衰减慢得多，但仍是几何衰减——缓解，不是根治。
# - 编码器-解码器只靠一个总摘要时，序列越长，复述得越差。
# - 注意力让解码器每一步按需回看编码器的所有状态，长序列也能复述，对齐关系自己学出来。
#
# 细看注意力这一步：打分、softmax、加权求和，全是矩阵运算，并不依赖“一步一步传纸条”。
# 那能不能干脆把 RNN 拿掉，只留注意力？这就是第三讲。
#
# ## 练习
#
# 6 道练习在 `tutorials/exercises/lecture02.py` 里：RNN 的一步（2.1）、GRU 的一步（2.2）、解码器的注意力（2.3）、
# 推导一步的雅可比矩阵（2.4）、用它把梯度一步步往回传，亲眼看到几何衰减（2.5），以及一道开放题（2.6）：
# 更新门的偏置要多大，30 步之前的梯度才能剩下十分之一？用尽量少的测量找到最小的那个。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 02`。

# %%
from tutorials.exercises import check

check("02")
