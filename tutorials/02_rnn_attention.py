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
# # 02 RNN、长句困境与 Attention 的诞生
#
# 上一讲的模型只看最近几个字符。想看得更远，又不能把所有前文都存下来，怎么办？
# 一个办法是带一张固定大小的“小纸条”往后传：每读一个字，就把旧纸条和新字揉成一张新纸条。这就是 RNN。
# 这一讲用实验回答：
#
# > **RNN 的纸条能带多远？梯度为什么传不回去？门控能救多少？Attention 又是怎么补上这个缺口的？**
#
# 实验清单：
#
# 1. 用 minigrad 的张量亲手写一个字符级 RNN（tanh 单元），在莎士比亚上训练，让它写几句；
# 2. 测量“输出对 t 步之前输入的梯度”：随 t 按几何级数衰减（梯度消失）；
# 3. 换成带门控的 GRU：衰减变慢了，但仍是几何衰减——缓解，不是根治；
# 4. 编码器-解码器做“复述”任务：只靠一个固定向量，句子越长错得越多；
# 5. 给解码器加上 attention：长句的准确率回来了，对齐关系画成热图。
#
# 运行：`python tutorials/02_rnn_attention.py`（`TUTORIAL_QUICK=1` 跑快速版）。图片写到当前目录的 `figures/`。

# %% [markdown]
# **学完这一讲，你能**：用 minigrad 的张量写出并训练一个 RNN；量出梯度随距离几何衰减，并说清原因
# （每往回一步乘一次雅可比矩阵）；写出 GRU 的一步；解释 attention 为什么能让长序列的复述“回来”。
#
# **用时**（在 2 核 CPU 上实测的 CPU 时间；机器忙时墙钟时间更长）：
# 运行本讲，快速版约 35 秒，完整版约 3 分钟；最后有 5 道练习。

# %%
# RNN 每一步只做很小的矩阵乘法。小矩阵上，BLAS 的多个线程互相等待反而更慢（机器忙时可慢几十倍），
# 所以 tutorials.course 在导入 NumPy 之前请它只用一个线程（它因此要最先导入）。这只影响速度，不影响结果。
from tutorials.course import QUICK, show_figure

# isort: split
import math

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt import CharTokenizer
from minigpt.corpus import load_shakespeare
from minigrad import nn, optim

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

# %%
text = load_shakespeare()
text = text[: 1_000_000] if QUICK else text
tokenizer = CharTokenizer.from_text(text)  # lecture 01 built this mapping by hand; minigpt has it ready
data = np.array(tokenizer.encode(text))
n_train = int(0.9 * len(data))
train_data, val_data = data[:n_train], data[n_train:]
V = tokenizer.vocab_size
print(f"{len(text):,} characters, vocabulary of {V}")


class CharRNN(nn.Module):
    """h_t = tanh(x_t W_xh + h_{t-1} W_hh + b); logits_t = h_t W_hy + b_y."""

    def __init__(self, vocab, emb, hidden):
        super().__init__()
        self.hidden = hidden
        self.emb = nn.Embedding(vocab, emb)
        self.W_xh = nn.Linear(emb, hidden)  # input -> hidden (with the bias b)
        self.W_hh = nn.Linear(hidden, hidden, bias=False)  # hidden -> hidden: the note passed along
        self.head = nn.Linear(hidden, vocab)

    def start(self, batch):
        return mg.zeros(batch, self.hidden)

    def step(self, x, h):  # x (B, emb), h (B, hidden) -> the new h
        return (self.W_xh(x) + self.W_hh(h)).tanh()

    def run(self, xs):
        """xs (B, T, emb) -> the hidden states, a list of T tensors (B, hidden), one step per token."""
        h = self.start(xs.shape[0])
        states = []
        for t in range(xs.shape[1]):
            h = self.step(xs[:, t], h)
            states.append(h)
        return states

    def forward(self, ids, targets=None):
        states = self.run(self.emb(ids))
        logits = self.head(mg.stack(states, axis=1))  # (B, T, vocab)
        # cross_entropy wants the classes on dim 1 (as PyTorch): one row per position, (B*T, vocab) and (B*T,)
        loss = None if targets is None else F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss


def get_batch(split_data, batch, seq, rng):
    starts = rng.integers(0, len(split_data) - seq - 1, batch)
    x = np.stack([split_data[s : s + seq] for s in starts])
    y = np.stack([split_data[s + 1 : s + seq + 1] for s in starts])
    return x, y


@mg.no_grad()
def evaluate(model, split_data, batches=20, seq=64):
    rng = np.random.default_rng(123)  # the same evaluation windows every time
    return float(np.mean([model(*get_batch(split_data, 32, seq, rng))[1].item() for _ in range(batches)]))


def train(model, steps, lr=3e-3, seq=32, batch=32, seed=0):
    optimizer = optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    rng = np.random.default_rng(seed)
    losses = []
    for _ in range(steps):
        x, y = get_batch(train_data, batch, seq, rng)
        # forward
        _, loss = model(x, y)
        # backward
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)  # RNN gradients can also explode: cap their norm
        # update
        optimizer.step()
        losses.append(loss.item())
    return losses


mg.manual_seed(0)
rnn = CharRNN(V, emb=16, hidden=64)
rnn_at_init = CharRNN(V, emb=16, hidden=64)
rnn_at_init.load_state_dict(rnn.state_dict())  # an untrained copy, for section 2
rnn_steps = 400 if QUICK else 3000
rnn_losses = train(rnn, rnn_steps)
val_loss = evaluate(rnn, val_data)
counts = np.bincount(train_data, minlength=V) + 1
unigram = counts / counts.sum()
unigram_loss = float(-(np.bincount(val_data, minlength=V) / len(val_data) * np.log(unigram)).sum())
print(f"after {rnn_steps} steps: held-out loss {val_loss:.3f} nats/char "
      f"(letter frequencies alone: {unigram_loss:.3f}; uniform guessing: {math.log(V):.3f})")
assert val_loss < unigram_loss - (0.5 if QUICK else 0.9)

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
# 像英文，像剧本的格式，但读不通。字符级 RNN 要写出通顺的句子，需要大得多的模型和长得多的训练；
# 不过更根本的问题在下一节。
#
# ## 2. 纸条上的字迹越来越淡：梯度消失
#
# 训练时，第 $T$ 步的损失要告诉第 $T-k$ 步的输入“你该怎么变”，信号得沿着纸条倒着传 $k$ 次。
# 每传一次乘一次雅可比矩阵 $\partial h_t/\partial h_{t-1} = \mathrm{diag}(1-h_t^2)\,W_{hh}^\top$。
# 如果它“缩小”向量（tanh 的导数不超过 1，$W_{hh}$ 的尺度也不大），$k$ 次之后就是缩小的 $k$ 次方——几何衰减。
#
# 实验：取 16 段 60 个字符的文本，让输入的 embedding 需要梯度，从最后一步的隐藏状态（乘一个随机向量求和）
# 反向传播，看 $\lVert\partial L/\partial x_{T-k}\rVert$ 随 $k$ 怎么变。
#
# **先猜一猜**：30 步之前的输入，还能收到最后一步多少的梯度？一半？十分之一？千分之一？

# %%
def gradient_by_distance(model, n_back=60, seed=1):
    """Mean norm of d(u . h_T)/d x_{T-k} for k = 0 .. n_back-1 (u a random vector), on real text."""
    rng = np.random.default_rng(seed)
    ids, _ = get_batch(val_data, 16, n_back, rng)
    with mg.no_grad():
        xs_value = model.emb(ids).numpy()
    xs = mg.tensor(xs_value, requires_grad=True)  # the inputs themselves are what we differentiate against
    h_last = model.run(xs)[-1]
    u = mg.tensor(rng.standard_normal(h_last.shape))
    (h_last * u).sum().backward()
    norms = np.linalg.norm(xs.grad.numpy(), axis=-1).mean(axis=0)  # (T,)
    return norms[::-1]  # index k: k steps before the end


def decay_per_step(norms, lo=1, hi=40):
    """The fitted slope of log10(norm) against k: how many decades the gradient loses per step."""
    k = np.arange(lo, hi)
    return float(np.polyfit(k, np.log10(norms[lo:hi]), 1)[0])


grad_rnn_init = gradient_by_distance(rnn_at_init)
grad_rnn = gradient_by_distance(rnn)
for name, g in [("tanh RNN, untrained", grad_rnn_init), ("tanh RNN, trained", grad_rnn)]:
    print(f"{name:22s} k=1: {g[1]:.1e}  k=10: {g[10]:.1e}  k=30: {g[30]:.1e}  "
          f"slope {decay_per_step(g):+.3f} decades/step")

# %%
for g in (grad_rnn_init, grad_rnn):
    assert decay_per_step(g) < -0.05  # geometric decay: a straight falling line on a log scale
    assert g[30] < 1e-3 * g[1]  # thirty steps back, less than a thousandth of the signal is left

# %% [markdown]
# ## 3. 门控：让纸条“选择性保留”
#
# GRU 给纸条加了两道门。更新门 $z$ 决定保留多少旧纸条，重置门 $r$ 决定写新内容时参考多少旧纸条：
#
# $$r = \sigma(x W_{xr} + h W_{hr}),\quad z = \sigma(x W_{xz} + h W_{hz}),\quad
# n = \tanh(x W_{xn} + r \odot (h W_{hn})),\quad h' = (1-z)\odot n + z \odot h$$
#
# 关键在最后一项 $z \odot h$：旧纸条可以不经过 tanh 和矩阵乘法，按比例 $z$ 直接抄到下一步，
# 梯度也沿这条近路往回走。下面用 minigrad 的基本运算写出 GRU 单元（三组权重并成一个矩阵，再切开）。
#
# **先猜一猜**：同样 64 个数的纸条，GRU 在 30 步处保留的梯度是 tanh RNN 的几倍？它还会按几何级数衰减吗？

# %%
class GRUCell(nn.Module):
    """h' = (1 - z) * n + z * h, with reset gate r, update gate z and candidate n."""

    def __init__(self, inp, hidden, update_bias=0.0):
        super().__init__()
        self.hidden = hidden
        self.x2h = nn.Linear(inp, 3 * hidden)  # [r | z | n] parts for the input
        self.h2h = nn.Linear(hidden, 3 * hidden)  # [r | z | n] parts for the state
        # A positive bias on z starts the gate leaning towards "keep the old note".
        self.x2h.bias.data[hidden : 2 * hidden] = update_bias

    def forward(self, x, h):
        H = self.hidden
        a, b = self.x2h(x), self.h2h(h)  # (B, 3H) each
        r = (a[:, :H] + b[:, :H]).sigmoid()
        z = (a[:, H : 2 * H] + b[:, H : 2 * H]).sigmoid()
        n = (a[:, 2 * H :] + r * b[:, 2 * H :]).tanh()
        return (1 - z) * n + z * h


class CharGRU(CharRNN):
    """CharRNN with the tanh step replaced by a GRU cell."""

    def __init__(self, vocab, emb, hidden, update_bias=0.0):
        super().__init__(vocab, emb, hidden)
        self.cell = GRUCell(emb, hidden, update_bias)

    def step(self, x, h):
        return self.cell(x, h)


mg.manual_seed(0)
grad_gru = gradient_by_distance(CharGRU(V, 16, 64))
mg.manual_seed(0)
grad_gru_keep = gradient_by_distance(CharGRU(V, 16, 64, update_bias=1.0))
curves = {"tanh RNN (untrained)": grad_rnn_init, "tanh RNN (trained)": grad_rnn,
          "GRU (untrained)": grad_gru, "GRU, update-gate bias +1 (untrained)": grad_gru_keep}
for name, g in curves.items():
    print(f"{name:38s} k=30: {g[30]:.1e}   slope {decay_per_step(g):+.3f} decades/step")

# %%
fig, ax = plt.subplots(figsize=(8, 4.8))
for (name, g), style in zip(curves.items(), ["o-", "o--", "s-", "^-"]):
    ax.semilogy(np.arange(len(g)), g, style, ms=3, label=name)
ax.set_xlabel("k: how many steps back the input is")
ax.set_ylabel("|| d(output at the end) / d(input k steps back) ||")
ax.set_title("Vanishing gradients: straight lines on a log scale = geometric decay")
ax.grid(True, which="major", alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "02_vanishing_gradients.png")

# %%
assert decay_per_step(grad_rnn_init) < decay_per_step(grad_gru) < decay_per_step(grad_gru_keep)  # gates slow it
assert grad_gru[30] > 100 * grad_rnn_init[30]  # at 30 steps, a GRU keeps over 100x more gradient
assert decay_per_step(grad_gru_keep) < -0.02  # ... but it still decays geometrically: relief, not a cure

# %% [markdown]
# 同样 64 个数的纸条、同样随机初始化，GRU 在 30 步处保留的梯度是 tanh RNN 的上百倍到上千倍；
# 把更新门的偏置调成“倾向保留”，衰减更慢。（训练过的 tanh RNN 比未训练时衰减稍慢，但仍是一条陡峭的直线。）
# 但每条线仍然是对数坐标下的直线——几何衰减没有消失，只是变慢了。
# 只要信息必须一步一步“压缩传递”，距离越远，信号越弱。
#
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
K = 10  # symbols 0..9
BOS = K  # "begin": the decoder's first input
H_S2S = 64
MAX_LEN = 16


class Seq2Seq(nn.Module):
    """A GRU encoder and a GRU decoder; with `attention`, the decoder also looks back at every encoder state."""

    def __init__(self, attention):
        super().__init__()
        self.attention = attention
        self.emb = nn.Embedding(K + 1, 16)
        self.encoder = GRUCell(16, H_S2S)
        self.decoder = GRUCell(16, H_S2S)
        self.W_a = nn.Linear(H_S2S, H_S2S, bias=False)  # the decoder state -> a query for the encoder states
        self.out = nn.Linear(2 * H_S2S if attention else H_S2S, K)

    def encode(self, src):
        e = self.emb(src)  # (B, L, 16)
        h = mg.zeros(src.shape[0], H_S2S)
        states = []
        for t in range(src.shape[1]):
            h = self.encoder(e[:, t], h)
            states.append(h)
        return h, mg.stack(states, axis=1)  # the summary (B, H), and every state (B, L, H)

    def decode_step(self, token, h, enc):
        h = self.decoder(self.emb(token), h)
        if not self.attention:
            return self.out(h), h, None  # everything must come from h, and h started as the summary
        scores = (enc @ self.W_a(h)[:, :, None])[:, :, 0]  # (B, L): how well each source position matches
        weights = scores.softmax(axis=-1)  # (B, L), sums to 1
        context = (weights[:, None, :] @ enc)[:, 0]  # (B, H): the weighted mix of encoder states
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
        """Greedy decoding: each step is fed the decoder's own previous answer."""
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
    dec_in = np.concatenate([np.full((batch, 1), BOS), src[:, :-1]], axis=1)  # the answer, shifted right
    return src, dec_in, src


def train_seq2seq(attention, steps):
    mg.manual_seed(0)
    model = Seq2Seq(attention)
    optimizer = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        length = int(rng.integers(2, MAX_LEN + 1))  # one length per batch: no padding needed
        src, dec_in, target = copy_batch(rng, 64, length)
        # forward
        logits = model(src, dec_in)  # (B, L, K)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), target.reshape(-1))
        # backward
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        # update
        optimizer.step()
    return model


def accuracy_by_length(model, lengths, n=300):
    rng = np.random.default_rng(123)  # the same test sequences for both models
    accuracies = []
    for length in lengths:
        src, _, target = copy_batch(rng, n, length)
        prediction, _ = model.generate(src)
        accuracies.append(float((prediction == target).mean()))  # the fraction of symbols right
    return accuracies


s2s_steps = 300 if QUICK else 1500
test_lengths = [4, 8, 12, 16]
plain = train_seq2seq(attention=False, steps=s2s_steps)
acc_plain = accuracy_by_length(plain, test_lengths)
print("without attention:", {L: round(a, 3) for L, a in zip(test_lengths, acc_plain)})

# %%
assert acc_plain[0] > (0.8 if QUICK else 0.9)  # short sequences fit in the summary
assert acc_plain[-1] < acc_plain[0] - 0.4  # long ones do not: accuracy falls as the sequence grows
assert all(a >= b - 0.02 for a, b in zip(acc_plain, acc_plain[1:]))  # and it falls steadily

# %% [markdown]
# 短序列几乎全对，长序列错一大半（随机猜是 10%）。64 个数的“总行李箱”装 4 个符号绰绰有余，
# 装 16 个就开始丢三落四——而且编码器读到末尾时，开头的符号已经被揉了十几次（第 2 节的衰减）。
#
# ## 5. 让解码器回头看：Attention
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
print("without attention:", {L: round(a, 3) for L, a in zip(test_lengths, acc_plain)})
print("with attention:   ", {L: round(a, 3) for L, a in zip(test_lengths, acc_attn)})

fig, ax = plt.subplots(figsize=(7, 4.5))
ax.plot(test_lengths, acc_plain, "o-", label="encoder-decoder, one summary vector")
ax.plot(test_lengths, acc_attn, "s-", label="+ attention over the encoder states")
ax.axhline(1 / K, color="gray", ls=":", label="random guessing")
ax.set_xlabel("sequence length")
ax.set_ylabel("symbols copied correctly")
ax.set_ylim(0, 1.05)
ax.set_xticks(test_lengths)
ax.set_title(f"Copying a sequence (trained {s2s_steps} steps on lengths 2-{MAX_LEN})")
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "02_seq2seq_accuracy.png")

# %%
assert acc_attn[-1] > (0.8 if QUICK else 0.9)  # attention keeps long sequences right ...
assert acc_attn[-1] > acc_plain[-1] + 0.4  # ... far better than one summary vector
assert all(a >= p - 0.02 for a, p in zip(acc_attn, acc_plain))  # and never worse

# %% [markdown]
# ### 对齐：解码器在看哪里
#
# 把一个长度 12 的例子里每一步的权重 $\alpha_{ij}$ 画出来：行是解码器正在写的第 $i$ 个符号，列是原序列的位置 $j$。
# 复述任务里，写第 $i$ 个符号就该看第 $i$ 个位置——热图应该是一条对角线。没有人告诉模型这件事，
# 它是为了把损失降下来自己学会的。
#
# **先猜一猜**：如果模型真学会了“写第 $i$ 个就看第 $i$ 个”，下面的热图会是什么形状？

# %%
rng_show = np.random.default_rng(7)
src_show, _, _ = copy_batch(rng_show, 1, 12)
pred_show, alignment = attn.generate(src_show)
A = np.stack([w[0] for w in alignment])  # (decoder step, source position)
print("source: ", " ".join(map(str, src_show[0])))
print("output: ", " ".join(map(str, pred_show[0])))

labels = [str(s) for s in src_show[0]]
fig, ax = plt.subplots(figsize=(6, 5.2))
im = ax.imshow(A, cmap="Blues", vmin=0, vmax=1)
ax.set_xticks(range(12), [f"{j}\n{s}" for j, s in enumerate(labels)])
ax.set_yticks(range(12), [f"{i}: {p}" for i, p in enumerate(pred_show[0])])
ax.set_xlabel("source position j (and its symbol)")
ax.set_ylabel("decoder step i: symbol written")
ax.set_title("Attention weights while copying")
fig.colorbar(im, ax=ax, fraction=0.046, label="weight")
fig.tight_layout()
show_figure(fig, "02_alignment.png")

# On many test sequences: how often is the largest weight on the position being copied?
rng_align = np.random.default_rng(8)
src_many, _, _ = copy_batch(rng_align, 200, 12)
_, alignment_many = attn.generate(src_many)
A_many = np.stack(alignment_many, axis=1)  # (N, decoder step, source position)
on_diagonal = float((A_many.argmax(axis=-1) == np.arange(12)).mean())
print(f"the largest weight sits on the position being copied in {on_diagonal:.0%} of the steps")
assert on_diagonal > (0.8 if QUICK else 0.9)

# %% [markdown]
# ## 小结
#
# - RNN 把前文压进一个固定大小的隐藏状态，一步一步传下去；它能学到不少东西（比字母频率好得多）。
# - 反向时，梯度每往回一步就乘一次雅可比矩阵，随距离**几何衰减**；远处的输入几乎收不到训练信号。
# - GRU 的门给旧状态开了一条近路，衰减慢得多，但仍是几何衰减——缓解，不是根治。
# - 编码器-解码器只靠一个总摘要时，序列越长，复述得越差。
# - Attention 让解码器每一步按需回看编码器的所有状态，长序列也能复述，对齐关系自己学出来。
#
# 细看 attention 这一步：打分、softmax、加权求和，全是矩阵运算，并不依赖“一步一步传纸条”。
# 那能不能干脆把 RNN 拿掉，只留 attention？这就是第三讲。
#
# ## 练习
#
# 5 道练习在 `tutorials/exercises/lecture02.py` 里：RNN 的一步（2.1）、GRU 的一步（2.2）、解码器的 attention（2.3）、
# 推导一步的雅可比矩阵（2.4）、用它把梯度一步步往回传，亲眼看到几何衰减（2.5）。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 02`。

# %%
from tutorials.exercises import check

check("02")
