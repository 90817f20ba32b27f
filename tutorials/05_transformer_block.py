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
# # 05 多头注意力与 Transformer Block
#
# 第三讲我们有了一层自注意力（self-attention），第四讲又给它补上了座位号。可是一层注意力离“能用的模型”还差得远：
# 它只有一种看人的方式；它一旦叠深，梯度和数值都会出问题；它里面的运算几乎全是线性的。
# 这一讲逐个补上这些缺口，每个缺口都先用实验把问题摆出来，再看补丁是否真的起作用：
#
# 1. **多头注意力**（multi-head attention）：把 512 维切成 8 个 64 维的头（head），参数和乘法次数一个不多（数出来）；
#    亲手写一遍，和 `minigpt` 的结果分毫不差。
# 2. **一个头同时看不了两处**：一道需要同时往回看两个位置的题，一个头做不出，两个头各管一处就做出来了（训练出来）。
# 3. **各个头分了工**：在莎士比亚上训练的小 GPT 里，有的头专找空格和换行，别的头看它们少得多（量出来）。
# 4. **残差连接**（residual connection）：20 层堆叠时，没有残差，传到第一层的梯度几乎为零；有残差，它活下来了。
# 5. **LayerNorm**（层归一化）：没有它，残差流的数值一层比一层涨得快；有了它，每层只添一份固定大小的增量。
# 6. **为什么不用 BatchNorm**：它的统计量随同批的样本改变，在语言模型里还会让前面的位置偷看到后面。
# 7. **MLP 里的非线性**：两层线性等于一层矩阵（数值证明），加一个 GELU 就不再等价。
# 8. **Post-LN 与 Pre-LN**：LayerNorm 放在残差之后还是子层之前，在深一点的模型上比一比。
# 9. **打开黑箱**：用前面写好的零件亲手拼出整个 GPT，和 `minigpt.GPT` 算出的 logits 完全一致。
#    从下一讲起我们直接用 `minigpt`——但已经知道它里面是什么了。
# 10. **唐诗的对仗**：在五言的联上训练的小 GPT 里，有一个头专看上句的同一个座位；同一个“白”字，
#    经过自注意力后随上下文得到不同的向量，押的下一个字也不同（量出来）。
#
# 每个结论后面都跟着一个 `assert`：如果结论不成立（或者将来有人改坏了代码），这份教程自己就会报错。
#
# 运行：`python tutorials/05_transformer_block.py`（完整实验）；
# `TUTORIAL_QUICK=1 python tutorials/05_transformer_block.py`（小数据、少步数）。
# 图片写到当前目录的 `figures/` 下。术语的写法见 [术语表](术语表.md)。

# %% [markdown]
# **学完这一讲，你能**：数出多头注意力和一个 Transformer Block 的参数；亲手写出多头注意力和整个 Block，
# 并和 `minigpt` 逐位对上；说清多头、残差、LayerNorm、MLP 里的非线性各补的是哪个缺口，并用实验量出来；
# 解释为什么语言模型用 LayerNorm 而不用 BatchNorm，为什么 GPT-2 把它放在子层之前。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（在 2 核 CPU 上实测）；最后有 7 道练习。

# %%
from tutorials.course import QUICK, T_START, label, show_figure  # 放在最前：限定 BLAS 线程数

# isort: split
import inspect
import math
import time

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig
from minigpt.data import get_batch, load_dataset
from minigpt.model import Block, CausalSelfAttention
from minigrad import nn, optim


def count_parameters(module: nn.Module) -> int:
    """一个模块的参数个数（共享的矩阵只数一次）。"""
    return sum(p.numel() for p in module.parameters())


# %% [markdown]
# ## 1. 八个头并不比一个头贵
#
# 多头注意力先用同样的三个矩阵 $W_q, W_k, W_v$（每个都是 $d \times d$）算出查询、键、值（Q、K、V），
# 然后把 $d=512$ 这一维**切开**成 8 份、每份 64 维，各自做一遍注意力，最后拼回 512 维，再乘一个输出矩阵 $W_o$。
# 切开不会多出参数：矩阵还是那四个。乘法次数呢？下面这个小函数照着多头注意力的步骤走一遍，
# 每次矩阵乘都把乘法次数记下来（形状 $(m, k) \times (k, n)$ 要做 $m \cdot k \cdot n$ 次乘法）。

# %%
def attention_multiplications(T: int, d_model: int, n_head: int) -> dict[str, int]:
    """在 (T, d_model) 的输入上用 NumPy 走一遍多头自注意力，按步骤记下乘法次数。"""
    rng = np.random.default_rng(0)
    mults = {"投影 W_q W_k W_v W_o": 0, "分数 QKᵀ": 0, "权重 × V": 0}

    def mm(a: np.ndarray, b: np.ndarray, kind: str) -> np.ndarray:
        *batch, m, k = a.shape
        n = b.shape[-1]
        mults[kind] += int(np.prod(batch, dtype=np.int64)) * m * k * n
        return a @ b

    W_q, W_k, W_v, W_o = (rng.standard_normal((d_model, d_model)) / math.sqrt(d_model) for _ in range(4))
    x = rng.standard_normal((T, d_model))
    hs = d_model // n_head                                        # 每个头的宽度
    q, k, v = (mm(x, W, "投影 W_q W_k W_v W_o") for W in (W_q, W_k, W_v))  # 各 (T, d)
    q, k, v = (t.reshape(T, n_head, hs).transpose(1, 0, 2) for t in (q, k, v))  # (nh, T, hs)
    scores = mm(q, k.transpose(0, 2, 1), "分数 QKᵀ") / math.sqrt(hs)           # (nh, T, T)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    y = mm(weights, v, "权重 × V")                                 # (nh, T, hs)
    y = y.transpose(1, 0, 2).reshape(T, d_model)                   # (T, d)：各头的输出重新并排
    mm(y, W_o, "投影 W_q W_k W_v W_o")
    return mults


T_COUNT = 128
one_head = attention_multiplications(T_COUNT, 512, n_head=1)
eight_heads = attention_multiplications(T_COUNT, 512, n_head=8)
print(f"{'乘法次数':<16} {'1 个头 × 512 维':>16} {'8 个头 × 64 维':>16}")
for key in one_head:
    print(f"{key:<18} {one_head[key]:>16,} {eight_heads[key]:>16,}")
assert one_head == eight_heads, "8 个 64 维的头，乘法次数应与 1 个 512 维的头完全相同"

# %% [markdown]
# 每一行都相等。直观地说：一个 512 维的头算分数时，每对位置做 512 次乘法；8 个 64 维的头，每对位置每个头做 64 次，
# 合起来还是 512 次。多头换来的是 8 张**不同的**注意力图，而不是更多的算力。
#
# 参数也不多一个。`minigpt` 的注意力层 `CausalSelfAttention` 有两个带偏置的线性层：`c_attn` 把 $C$ 维变成
# $3C$ 维（一次算出 Q、K、V），`c_proj` 把 $C$ 维变回 $C$ 维。按这个结构，参数个数是
# $(3C^2 + 3C) + (C^2 + C) = 4C^2 + 4C$，公式里没有头数。我们建两个只差头数的注意力层，数一数它们实际有多少参数：

# %%
C_COUNT = 512
attention_params = {
    n_head: count_parameters(CausalSelfAttention(
        GPTConfig(vocab_size=65, block_size=64, n_layer=1, n_head=n_head, n_embd=C_COUNT), layer=0))
    for n_head in (1, 8)
}
formula = 4 * C_COUNT**2 + 4 * C_COUNT
print(f"注意力层的参数：1 个头 {attention_params[1]:,}，8 个头 {attention_params[8]:,}；"
      f"公式 4C² + 4C = {formula:,}")
assert attention_params[1] == attention_params[8] == formula, "各个头分用同样的四个矩阵：一个参数也不多"

# %% [markdown]
# ## 2. 亲手写多头注意力：头就是一个批量维度
#
# 多头注意力听上去像是“8 个小注意力排成一排，一个一个算”。实际的写法更聪明：把通道切成 `n_head` 份之后，
# 把“头”这一维挪到批量维度旁边，形状从 $(B, T, C)$ 变成 $(B, n_h, T, h_s)$。于是所有头的分数
# $QK^\top$ 是**一次**批量矩阵乘法，softmax、遮罩、乘 V 也都一次做完，最后再把各头的输出并排拼回 $(B, T, C)$。
#
# 下面只用 minigrad 的基本运算（矩阵乘、`reshape`、`transpose`、`masked_fill`、`softmax`）把它写出来。
# 权重按 `minigpt` 的排法给：`c_attn` 的输出前 $C$ 列是 Q，接着 $C$ 列是 K，最后 $C$ 列是 V。

# %%
def multi_head_attention(x: mg.Tensor, c_attn_weight: mg.Tensor, c_attn_bias: mg.Tensor,
                         c_proj_weight: mg.Tensor, c_proj_bias: mg.Tensor,
                         n_head: int) -> tuple[mg.Tensor, mg.Tensor]:
    """多头因果自注意力。返回输出 (B, T, C) 和每个头的注意力权重 (B, nh, T, T)。"""
    B, T, C = x.shape
    hs = C // n_head                                                  # 每个头的宽度
    qkv = x @ c_attn_weight.T + c_attn_bias                           # (B, T, 3C)：所有头的 Q、K、V 一次算出
    q, k, v = qkv[..., :C], qkv[..., C:2 * C], qkv[..., 2 * C:]       # 各 (B, T, C)
    # 把通道切成 n_head 份，再把头挪成批量维度：(B, T, C) -> (B, T, nh, hs) -> (B, nh, T, hs)
    q, k, v = (t.reshape(B, T, n_head, hs).transpose(1, 2) for t in (q, k, v))
    scores = q @ k.transpose(-2, -1) / math.sqrt(hs)                  # (B, nh, T, T)：所有头一次算完
    future = np.triu(np.ones((T, T), dtype=bool), k=1)                # 因果遮罩：j > i 是未来的位置
    weights = scores.masked_fill(future, -math.inf).softmax(axis=-1)  # (B, nh, T, T)，每行加起来是 1
    y = weights @ v                                                   # (B, nh, T, hs)
    y = y.transpose(1, 2).reshape(B, T, C)                            # (B, T, nh, hs) -> (B, T, C)：各头并排
    return y @ c_proj_weight.T + c_proj_bias, weights


# %% [markdown]
# 和 `minigpt` 的 `CausalSelfAttention` 对一对：建一个 4 个头的注意力层，换成 float64，权重换成不太小的随机数
# （GPT-2 式的初始化很小，注意力几乎是均匀的，什么错都藏得住），两边喂同一个输入。
#
# **先猜一猜**：两边的输出会差多少——差在第几位小数？
#
# 下一格记下你的猜测：先把其中的“还没猜”换成你自己的猜测，再往下运行（不猜也能运行，但不计分）；
# 揭晓时实测值会印在它旁边，讲末给出校准得分。

# %%
from tutorials.course import FIGURES
from tutorials.predictions import Predictions

my_guesses = Predictions("05", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_05.json）
my_guesses.guess("attention_gap", "还没猜", "手写的多头注意力与 minigpt 的最大差")  # 换成你的猜测

# %%
mg.manual_seed(0)
check_config = GPTConfig(vocab_size=10, block_size=16, n_layer=1, n_head=4, n_embd=32)
reference_attention = CausalSelfAttention(check_config, layer=0).to(dtype=np.float64)
for p in reference_attention.parameters():
    nn.init.normal_(p, 0.0, 0.3)
x_check = mg.randn(2, 10, 32, dtype=np.float64)

with mg.no_grad():
    expected = reference_attention(x_check).numpy()
    mine, _ = multi_head_attention(x_check, reference_attention.c_attn.weight, reference_attention.c_attn.bias,
                                   reference_attention.c_proj.weight, reference_attention.c_proj.bias, n_head=4)
attention_gap = float(np.abs(mine.numpy() - expected).max())
print(f"亲手写的多头注意力 vs minigpt.CausalSelfAttention：最大差 {attention_gap:.1e}"
      f"（输出的量级 {np.abs(expected).max():.1f}）")
my_guesses.reveal("attention_gap", attention_gap)
assert attention_gap < 1e-12, "手写的多头注意力应与 minigpt 的一致，差别只在 float64 的舍入误差"

# %% [markdown]
# 两边只差 float64 的舍入误差：`minigpt/model.py` 里的 `CausalSelfAttention.forward` 做的就是上面这十几行
# （它把 softmax、遮罩、乘 V 交给一个融合的算子 `F.scaled_dot_product_attention`，反向传播是手推的，更快更省内存）。
#
# ## 3. 一个头同时看不了两处
#
# 讲义的说法是：一个头只能学会一种“找人”的方式，想同时照顾两种关系就顾此失彼。这在一个头里到底卡在哪儿？
# 出一道需要**同时**往回看两处的题：输入一串随机词元（token），在每个位置输出两样东西——
# 它前面第 1 个词元，和它前面第 3 个词元。模型只有一层注意力：嵌入（embedding）加位置表 → 上面写的
# `multi_head_attention` → 残差连接 → 两个线性读出，一个读“前 1 个”，一个读“前 3 个”。
#
# 比两个模型：一个头、宽 16；两个头、各宽 8。总宽度一样，参数个数一样，训练步数、随机种子也一样。
#
# **先猜一猜**：一个头能把两样都答对吗？如果答不全，它的注意力会怎么分配？

# %%
my_guesses.guess("one_head_both", "还没猜", "一个宽 16 的头能把两样都答对吗",
                 options=["能", "不能"])  # 换成你的猜测

# %%
V_COPY, D_COPY, T_COPY = 8, 16, 12        # 词表大小、模型宽度、序列长度
NEAR, FAR = 1, 3                           # 要同时取回的两处：前面第 1 个和第 3 个词元
COPY_STEPS = 300 if QUICK else 1000


class TwoLookups(nn.Module):
    """一层注意力（没有 MLP、没有 LayerNorm）加两个线性读出：每个位置同时说出前 NEAR 个和前 FAR 个词元。"""

    def __init__(self, n_head: int):
        super().__init__()
        self.n_head = n_head
        self.wte, self.wpe = nn.Embedding(V_COPY, D_COPY), nn.Embedding(T_COPY, D_COPY)
        self.c_attn, self.c_proj = nn.Linear(D_COPY, 3 * D_COPY), nn.Linear(D_COPY, D_COPY)
        self.read_near, self.read_far = nn.Linear(D_COPY, V_COPY), nn.Linear(D_COPY, V_COPY)

    def forward(self, ids: np.ndarray) -> tuple[mg.Tensor, mg.Tensor, mg.Tensor]:
        x = self.wte(ids) + self.wpe.weight                           # (B, T, D)：词元加座位号
        y, weights = multi_head_attention(x, self.c_attn.weight, self.c_attn.bias, self.c_proj.weight,
                                          self.c_proj.bias, self.n_head)
        x = x + y                                                     # 残差连接
        return self.read_near(x), self.read_far(x), weights           # (B, T, V), (B, T, V), (B, nh, T, T)


def lookup_batch(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """随机词元 x，两个答案 x[t - NEAR] 和 x[t - FAR]；前 FAR 个位置没有答案（记作 -1，不计分）。"""
    x = rng.integers(0, V_COPY, size=(n, T_COPY))
    near, far = np.full((n, T_COPY), -1), np.full((n, T_COPY), -1)
    near[:, FAR:] = x[:, FAR - NEAR:T_COPY - NEAR]
    far[:, FAR:] = x[:, :T_COPY - FAR]
    return x, near, far


def copy_loss(logits: mg.Tensor, targets: np.ndarray) -> mg.Tensor:
    return F.cross_entropy(logits.reshape(-1, V_COPY), targets.reshape(-1), ignore_index=-1)


lookup_models, lookup_scores = {}, {}
x_test, near_test, far_test = lookup_batch(np.random.default_rng(99), 1000)  # 1000 条没见过的序列
for n_head in (1, 2):
    mg.manual_seed(0)
    rng = np.random.default_rng(0)
    model = TwoLookups(n_head)
    optimizer = optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.0)
    for _ in range(COPY_STEPS):
        x, near, far = lookup_batch(rng, 64)
        logits_near, logits_far, _ = model(x)                          # 前向
        loss = copy_loss(logits_near, near) + copy_loss(logits_far, far)
        optimizer.zero_grad()
        loss.backward()                                                # 反向传播
        optimizer.step()                                               # 更新
    with mg.no_grad():
        logits_near, logits_far, weights = model(x_test)
    right_near = (logits_near.numpy().argmax(-1) == near_test)[:, FAR:]
    right_far = (logits_far.numpy().argmax(-1) == far_test)[:, FAR:]
    w = weights.numpy()[:, :, FAR:, :]                                 # 只看有答案的位置 t = FAR .. T-1
    t = np.arange(FAR, T_COPY)
    lookup_models[n_head] = model
    lookup_scores[n_head] = {
        "near": right_near.mean(), "far": right_far.mean(), "both": (right_near & right_far).mean(),
        # 每个头放在“前 1 个”和“前 3 个”上的平均注意力权重
        "mass": [(w[:, h, t - FAR, t - NEAR].mean(), w[:, h, t - FAR, t - FAR].mean()) for h in range(n_head)],
    }
    s = lookup_scores[n_head]
    print(f"{n_head} 个头（每个宽 {D_COPY // n_head}，共 {count_parameters(model):,} 个参数）："
          f"训练损失 {loss.item():.3f}；"
          f"答对率：前 1 个 {s['near']:.1%}，前 3 个 {s['far']:.1%}，两个都对 {s['both']:.1%}")
    for h, (m_near, m_far) in enumerate(s["mass"]):
        print(f"    头 {h}：放在前 1 个上的注意力 {m_near:.2f}，放在前 3 个上的 {m_far:.2f}")

# %%
example = x_test[:1]
with mg.no_grad():
    maps = {n_head: lookup_models[n_head](example)[2].numpy()[0] for n_head in (1, 2)}   # (nh, T, T)
panels = [(maps[1][0], label("一个头（宽 16）", "one head (width 16)")),
          (maps[2][0], label("两个头之一（宽 8）", "two heads: head 0 (width 8)")),
          (maps[2][1], label("两个头之二（宽 8）", "two heads: head 1 (width 8)"))]
fig, axes = plt.subplots(1, 3, figsize=(12, 4.2))
for ax, (weights, title) in zip(axes, panels):
    image = ax.imshow(weights, cmap="Blues", vmin=0, vmax=1)
    ax.plot(np.arange(NEAR, T_COPY) - NEAR, np.arange(NEAR, T_COPY), "+", color="tab:orange", markersize=7,
            label=label("前 1 个", "1 back"))
    ax.plot(np.arange(FAR, T_COPY) - FAR, np.arange(FAR, T_COPY), "x", color="tab:red", markersize=6,
            label=label("前 3 个", "3 back"))
    ax.set_title(title)
    ax.set_xlabel(label("被看的位置", "position looked at"))
axes[0].set_ylabel(label("在看的位置", "position looking"))
axes[0].legend(loc="lower left", fontsize=8)
fig.colorbar(image, ax=axes, fraction=0.02)
fig.suptitle(label(f"同时取回前 1 个和前 3 个词元：两个都答对的比例，一个头 {lookup_scores[1]['both']:.0%}，"
                   f"两个头 {lookup_scores[2]['both']:.0%}",
                   f"copy the tokens 1 and 3 back: both right, one head {lookup_scores[1]['both']:.0%}, "
                   f"two heads {lookup_scores[2]['both']:.0%}"))
show_figure(fig, "05_one_head_two_relations.png")

# %%
assert count_parameters(lookup_models[1]) == count_parameters(lookup_models[2]), "宽度一样，参数个数也一样"
assert lookup_scores[2]["both"] > 0.95, "两个宽 8 的头能做对这个任务"
assert lookup_scores[1]["both"] < 0.5, "一个宽 16 的头没法同时给出两个词元"
my_guesses.reveal("one_head_both", "能" if lookup_scores[1]["both"] > 0.9 else "不能")
assert min(lookup_scores[1]["mass"][0]) > 0.2, "单个头把注意力分给了两处"
(near_0, far_0), (near_1, far_1) = lookup_scores[2]["mass"]
assert max(near_0, near_1) > 0.8 and max(far_0, far_1) > 0.8, "每种关系都有一个只看那里的头"
assert np.argmax([near_0, near_1]) != np.argmax([far_0, far_1]), "而且是两个不同的头"

# %% [markdown]
# 两个头的模型把题做对了，而且分工一目了然：一个头只看前 1 个，另一个头只看前 3 个（上图中间和右边，
# 注意力都落在对应的记号上）。一个头的模型只答对了其中一样，另一样比瞎猜（1/8）好不了多少；练得再久也一样。
#
# 卡在哪儿？一个头对每个位置只有**一行**注意力权重。要同时取回两处，它只能把权重分成两份（上图左边，
# 两条斜线上各有一半），取回的是两个值向量按权重**混在一起**的一个向量
# $\alpha\, v(\text{前 1 个}) + \beta\, v(\text{前 3 个})$。
# 混合之后，“哪个词元在哪个位置”这件事就说不清了：后面的读出是线性的，拆不开这样的混合——
# 权重大的那一份总会盖过权重小的那一份。两个头各有一行权重，各取回一个值，放在输出的不同通道里，读出时互不干扰。
#
# 真正的 GPT 在注意力后面还有 MLP，能从混合里拆出一部分信息，所以一个头做两件事是“做得更差”，而不是“完全做不到”；
# 但一个头一行权重这个结构是不变的。这正是多头的用处：不增加参数，换来好几行各自独立的注意力。
#
# ## 4. 在真实文本上，各个头分了工
#
# 人造的题里分工是我们设计出来的。在真实文本上呢？我们在莎士比亚上训练一个很小的字符级 GPT（2 层，每层 4 个头），
# 再看它的 8 个头各自在看什么。注意力图第 $i$ 行第 $j$ 列是“位置 $i$ 从位置 $j$ 取了多少信息”；因果遮罩让右上角全是 0。
#
# “分工”要量得出来才算数。对英文文本，一个很自然的量是：**一个头有多爱看空格和换行**——
# 它们标出词和行的边界。把每个头落在空格、换行上的注意力权重，除以“均匀地看前文时”会落在它们上面的权重
# （也就是前文里空格和换行所占的比例）：比值为 1 表示不偏不倚，大于 1 表示专门找它们，小于 1 表示躲着它们。
# 再量一个：每个头平均往回看多远。训练前后各量一次。
#
# **先猜一猜**：训练前，8 个头的比值会是多少？训练几百步之后，会不会有的头远大于 1、有的头远小于 1？

# %%
my_guesses.guess("preference_before", "还没猜", "训练前各头看边界的偏好（平均）")  # 换成你的猜测
my_guesses.guess("some_head_above_2", "还没猜", "训练后会有头的偏好超过 2 吗", options=["会", "不会"])

# %%
data = load_dataset(None, block_size=64)           # 内置的莎士比亚语料，按 90/10 分成训练集和验证集
tokenizer = data.tokenizer
print(f"莎士比亚：训练集 {len(data.train):,} 个字符，词表 {tokenizer.vocab_size} 个字符")

HEADS_STEPS = 200 if QUICK else 800
mg.manual_seed(0)
heads_model = GPT(GPTConfig(vocab_size=tokenizer.vocab_size, block_size=64, n_layer=2, n_head=4, n_embd=64))
probe, _ = get_batch(data.val, 32, 64, np.random.default_rng(1))   # 32 段验证集文本，每段 64 个字符
is_boundary = np.isin(probe, tokenizer.encode(" \n"))               # (32, 64)：哪些位置是空格或换行
# 均匀地看前文时，位置 i 落在空格、换行上的权重 = 位置 0..i 里空格和换行的比例
boundary_share = np.cumsum(is_boundary, axis=1) / np.arange(1, 65)
FROM = 8                                                            # 只看前文足够长（至少 9 个字符）的位置


def head_profile(model: GPT) -> tuple[np.ndarray, np.ndarray]:
    """每层每个头：看空格和换行的偏好（比值，1 = 不偏不倚），和平均往回看多远（字符）。形状都是 (层, 头)。"""
    maps = np.stack(model.attention_maps(probe))                   # (层, B, nh, T, T)
    on_boundary = (maps * is_boundary[None, :, None, None, :]).sum(-1)[..., FROM:]   # (层, B, nh, T - FROM)
    preference = on_boundary.mean(axis=(1, 3)) / boundary_share[:, FROM:].mean()
    i = np.arange(64)
    reach = (maps * (i[:, None] - i[None, :])).sum(-1)[..., FROM:].mean(axis=(1, 3))
    return preference, reach


preference_before, reach_before = head_profile(heads_model)
optimizer = optim.AdamW(heads_model.parameters(), lr=3e-3)
rng = np.random.default_rng(0)
t0 = time.time()
for _ in range(HEADS_STEPS):
    x, y = get_batch(data.train, 16, 64, rng)
    _, loss = heads_model(x, y)      # 前向
    optimizer.zero_grad()
    loss.backward()                  # 反向传播
    optimizer.step()                 # 更新
print(f"训练 {HEADS_STEPS} 步，用时 {time.time() - t0:.1f} 秒，训练损失 {loss.item():.2f}")
preference_after, reach_after = head_profile(heads_model)

print("每个头看空格和换行的偏好（1 = 不偏不倚）和平均往回看的距离：")
for layer in range(2):
    for head in range(4):
        print(f"  第 {layer} 层 头 {head}：训练前 {preference_before[layer, head]:.2f}"
              f"（{reach_before[layer, head]:4.1f} 个字符），"
              f"训练后 {preference_after[layer, head]:.2f}（{reach_after[layer, head]:4.1f} 个字符）")

# %%
snippet = data.val[:40]                              # 一行验证集文本，画出 8 个头在它上面的注意力
show_figure(mg.viz.plots.plot_attention(heads_model.attention_maps(snippet[None]), tokenizer.decode(snippet),
                                        title=label("训练后，同一段文字上 2 层 × 4 个头的注意力",
                                                    "attention of 2 layers x 4 heads, after training")),
            "05_attention_heads.png")

fig, ax = plt.subplots(figsize=(8, 3.6))
names = [f"{layer}.{head}" for layer in range(2) for head in range(4)]
ax.bar(np.arange(8) - 0.2, preference_before.ravel(), width=0.4, label=label("训练前", "before training"))
ax.bar(np.arange(8) + 0.2, preference_after.ravel(), width=0.4, label=label("训练后", "after training"))
ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
ax.set_xticks(range(8), names)
ax.set_xlabel(label("层.头", "layer.head"))
ax.set_ylabel(label("看空格和换行的偏好（1 = 不偏不倚）", "preference for spaces and newlines"))
ax.set_title(label("有的头专找词的边界，别的头看得少得多", "some heads seek word boundaries, others much less"))
ax.grid(True, axis="y", alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "05_head_roles.png")

assert np.all(np.abs(preference_before - 1) < 0.25), "训练前每个头的注意力都（几乎）是均匀的"
spread_before = preference_before.max() / preference_before.min()
spread_after = preference_after.max() / preference_after.min()
print(f"最爱看边界的头与最不爱看的头之比：训练前 {spread_before:.2f}，训练后 {spread_after:.2f}")
my_guesses.reveal("preference_before", preference_before.mean())
my_guesses.reveal("some_head_above_2", "会" if preference_after.max() > 2.0 else "不会")
assert preference_after.max() > 2.0, "训练后有的头主要看空格和换行"
assert spread_before < 2.5 < spread_after, "各个头分了工：不再都一个样"

# %% [markdown]
# 训练前，每个头的比值都在 1 附近：权重都是很小的随机数，注意力分数都接近 0，softmax 之后就是“前文每个字符平均看一眼”。
# 训练之后（看上面打印的数和柱状图），同一个模型里出现了比值远大于 1 的头——它把大部分注意力放在空格和换行上，
# 也就是“这个词、这一行从哪里开始”；别的头看它们少得多，最爱看和最不爱看的两个头相差两三倍以上。最不爱看的那个头，
# 有时比值低于 1（躲着边界，专看词的内部），有时只是接近 1：换一个随机种子（`mg.manual_seed`）再跑，结果会变，
# 但“有一个头专找边界、各头相差几倍”在我们试过的几个种子上都成立。往回看的距离也各不相同。
# 这些分工没有人规定，是训练自己长出来的；模型越大、训练越久，分工越清楚（完整模式练得更久，可以对比快速模式的结果）。

# %% [markdown]
# ## 5. 残差连接：给梯度修一条直通车道
#
# 把 20 个“线性层 + tanh”首尾相接，算一个标量损失再反向传播，看每一层权重拿到的梯度有多大。
# 再做一次完全一样的实验，只改一处：每层的输出加回它的输入，`h = h + f(h)`。
#
# **先猜一猜**：没有残差时，第一层拿到的梯度是最后一层的多少？有残差时呢？

# %%
my_guesses.guess("plain_first_over_last", "还没猜", "无残差：第一层的梯度是最后一层的几分之几")  # 换成你的猜测
my_guesses.guess("residual_first_over_last", "还没猜", "有残差：第一层的梯度是最后一层的几分之几")

# %%
DEPTH, WIDTH = 20, 64


def grad_norms_through_stack(residual: bool) -> list[float]:
    """DEPTH 层 tanh 堆叠里每一层权重的梯度范数，带或不带残差连接。"""
    mg.manual_seed(0)
    layers = [nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH)]
    h = mg.randn(32, WIDTH)
    for layer in layers:
        f = layer(h).tanh()
        h = h + f if residual else f        # 两次实验唯一的区别
    loss = (h * h).mean()
    loss.backward()
    return [float(np.linalg.norm(layer.weight.grad.numpy())) for layer in layers]


plain = grad_norms_through_stack(residual=False)
with_residual = grad_norms_through_stack(residual=True)
print(f"第  1 层的梯度：无残差 {plain[0]:.2e}，有残差 {with_residual[0]:.2e}")
print(f"第 20 层的梯度：无残差 {plain[-1]:.2e}，有残差 {with_residual[-1]:.2e}")
my_guesses.reveal("plain_first_over_last", plain[0] / plain[-1])
my_guesses.reveal("residual_first_over_last", with_residual[0] / with_residual[-1])

fig, ax = plt.subplots(figsize=(7, 4))
layers_axis = np.arange(1, DEPTH + 1)
ax.semilogy(layers_axis, plain, "o-", label=label("无残差  h = f(h)", "no residual  h = f(h)"))
ax.semilogy(layers_axis, with_residual, "s-", label=label("有残差  h = h + f(h)", "residual  h = h + f(h)"))
ax.set_xlabel(label("第几层（1 = 最靠近输入）", "layer (1 = nearest the input)"))
ax.set_ylabel(label("权重梯度的范数（对数坐标）", "weight gradient norm (log scale)"))
ax.set_title(label("20 层堆叠：梯度传到第一层还剩多少", "20 stacked layers: gradient reaching each layer"))
ax.set_xticks(layers_axis)
ax.grid(True, which="major", alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "05_residual_gradients.png")

# 没有残差，梯度在往下传的路上塌掉了；有残差，第一层拿到的和最后一层差不多。
assert plain[0] < 1e-3 * plain[-1]
assert with_residual[0] > 0.1 * with_residual[-1]
assert with_residual[0] > 1000 * plain[0]

# %% [markdown]
# 没有残差时，梯度每往下穿过一层就乘上一个小于 1 的因子（tanh 的导数和权重矩阵一起决定），
# 20 层乘下来，第一层拿到的梯度比最后一层小了好几个数量级（上面打印的数）——它几乎学不动。
# 有了残差，$h_{l+1} = h_l + f(h_l)$ 对 $h_l$ 的导数是 $I + f'(h_l)$：那个单位矩阵 $I$ 就是直通车道，
# 梯度哪怕在 $f$ 里衰减了，也能沿着 $I$ 原样走回去。
#
# ## 6. LayerNorm：每层只添一份固定大小的增量
#
# 残差有个副作用：每层都往 $h$ 上**加**东西。如果加的东西本身是从 $h$ 算出来的，$h$ 越大加得越多，
# 数值就会像利滚利一样越滚越大。GPT-2 的做法（Pre-LN）是：子层先看一眼**归一化过的** $h$，
# $h \leftarrow h + f(\mathrm{LN}(h))$。LayerNorm 对每个位置自己的向量减均值、除以标准差，
# 所以不管 $h$ 多大，子层看到的输入尺度都一样，加回来的增量也就是一份固定大小的量。
#
# 下面量 20 层残差堆叠里残差流的标准差，两种写法各量一次：不归一化 $h \leftarrow h + f(h)$，
# 和 Pre-LN $h \leftarrow h + f(\mathrm{LN}(h))$。除了那个 LayerNorm，两边的权重一模一样。
#
# **先猜一猜**：输入的标准差是 1。不归一化时，每层加进来的方差是越来越大、还是差不多？Pre-LN 呢？

# %%
my_guesses.guess("variance_plain", "还没猜", "不归一化时每层添的方差",
                 options=["越来越大", "差不多"])  # 换成你的猜测
my_guesses.guess("variance_pre_ln", "还没猜", "Pre-LN 时每层添的方差",
                 options=["越来越大", "差不多"])

# %%
def residual_stream_scale(pre_layer_norm: bool) -> np.ndarray:
    """DEPTH 层残差 MLP 里，残差流在每层之后的标准差（第 0 项是输入）。"""
    mg.manual_seed(0)
    layers = [nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH)]
    norms = [nn.LayerNorm(WIDTH) for _ in range(DEPTH)]
    h = mg.randn(32, WIDTH)
    scales = [float(h.numpy().std())]
    with mg.no_grad():
        for layer, norm in zip(layers, norms):
            h = h + layer(norm(h) if pre_layer_norm else h).gelu()   # 唯一的区别：子层看的是 LN(h) 还是 h
            scales.append(float(h.numpy().std()))
    return np.array(scales)


scale_plain = residual_stream_scale(pre_layer_norm=False)
scale_pre = residual_stream_scale(pre_layer_norm=True)
added_plain, added_pre = np.diff(scale_plain**2), np.diff(scale_pre**2)   # 每层给残差流添了多少方差
print("残差流的标准差（每 4 层）：不归一化", np.round(scale_plain[::4], 2), "；Pre-LN", np.round(scale_pre[::4], 2))
print(f"每层添的方差：不归一化，前 5 层平均 {added_plain[:5].mean():.2f}，后 5 层平均 {added_plain[-5:].mean():.2f}；"
      f"Pre-LN，前 5 层 {added_pre[:5].mean():.2f}，后 5 层 {added_pre[-5:].mean():.2f}")
my_guesses.reveal("variance_plain", "越来越大" if added_plain[-5:].mean() > 2 * added_plain[:5].mean() else "差不多")
my_guesses.reveal("variance_pre_ln", "越来越大" if added_pre[-5:].mean() > 2 * added_pre[:5].mean() else "差不多")

fig, (ax_std, ax_add) = plt.subplots(1, 2, figsize=(11, 4))
ax_std.plot(scale_plain, "o-", label=label("不归一化  h + f(h)", "no LayerNorm  h + f(h)"))
ax_std.plot(scale_pre, "s-", label=label("Pre-LN  h + f(LN(h))", "pre-LN  h + f(LN(h))"))
ax_std.set_xlabel(label("经过的层数", "layers passed"))
ax_std.set_ylabel(label("残差流的标准差", "residual stream std"))
ax_std.set_title(label("数值随深度的变化", "scale with depth"))
ax_add.semilogy(np.arange(1, DEPTH + 1), added_plain, "o-", label=label("不归一化", "no LayerNorm"))
ax_add.semilogy(np.arange(1, DEPTH + 1), added_pre, "s-", label="Pre-LN")
ax_add.set_xlabel(label("第几层", "layer"))
ax_add.set_ylabel(label("这一层添的方差（对数坐标）", "variance added by the layer (log)"))
ax_add.set_title(label("利滚利 vs 每层一份", "compounding vs a fixed increment"))
for ax in (ax_std, ax_add):
    ax.grid(True, alpha=0.3)
    ax.legend()
fig.tight_layout()
show_figure(fig, "05_layernorm_scale.png")

assert added_plain[-5:].mean() > 20 * added_plain[:5].mean(), "没有 LayerNorm 时，每一层添的都比上一层多"
assert added_pre[-5:].mean() < 2 * added_pre[:5].mean(), "用 Pre-LN 时，每一层添的差不多一样多"
assert scale_pre[-1] < scale_plain[-1] / 4

# %% [markdown]
# 不归一化时，每层添的方差一层比一层大（右图的圆点一路往上），20 层之后标准差翻了好几倍，而且越往后涨得越快：
# 这是利滚利。Pre-LN 每层添的方差差不多是同一个数（右图的方块是一条平线），方差随深度线性增长，标准差只按
# $\sqrt{\text{层数}}$ 慢慢变大——几十层、上百层也不会失控，最后再用一个 LayerNorm（GPT-2 的 `ln_f`）收尾。
# （把 LayerNorm 放在相加**之后**，$h \leftarrow \mathrm{LN}(h + f(h))$，残差流的标准差按定义就一直是 1；
# 这种放法的代价在第 8 节。）
#
# ## 7. 为什么是 LayerNorm 而不是 BatchNorm
#
# BatchNorm 也是归一化，但它的均值和方差是沿着**批**（batch）这一维、在“一批样本的同一个特征”上算的；
# LayerNorm 沿着**特征**这一维、只在“这一个位置自己的向量”上算。先看一个直观的后果：自己写一个最小的
# BatchNorm（训练模式），把同一个样本 `x0` 分别放进大小为 2 和 64 的批里，看它被归一化成了什么。
#
# **先猜一猜**：批里只有 2 个样本时，BatchNorm 能把 `x0` 的一个特征归一化成哪些值？

# %%
my_guesses.guess("batch_of_2", "还没猜", "批大小 2 时 BatchNorm 的输出",
                 options=["只有 ±1", "任意值"])  # 换成你的猜测

# %%
def batch_norm(x: np.ndarray, axis: int | tuple[int, ...] = 0, eps: float = 1e-5) -> np.ndarray:
    """训练模式的 BatchNorm（不带仿射变换）：每个特征在 axis（批这一维）上归一化。"""
    return (x - x.mean(axis=axis, keepdims=True)) / np.sqrt(x.var(axis=axis, keepdims=True) + eps)


def layer_norm_np(x: np.ndarray) -> np.ndarray:
    """经 minigrad 的 LayerNorm（weight 为 1，bias 为 0）：每个位置在自己的特征上归一化。"""
    return F.layer_norm(mg.tensor(x), x.shape[-1]).numpy()


rng = np.random.default_rng(0)
D_FEAT = 16
feature_mean = rng.normal(0, 3, D_FEAT)           # 各个特征的尺度不同，激活值就是这样
feature_std = rng.uniform(0.5, 4, D_FEAT)


def sample(n: int) -> np.ndarray:
    return (feature_mean + feature_std * rng.standard_normal((n, D_FEAT))).astype(np.float32)


x0 = sample(1)
N_DRAWS = 300
bn_of_x0 = {2: [], 64: []}
ln_of_x0 = {2: [], 64: []}
for batch_size in (2, 64):
    for _ in range(N_DRAWS):
        batch = np.concatenate([x0, sample(batch_size - 1)])   # x0 加上 batch_size - 1 个陌生样本
        bn_of_x0[batch_size].append(batch_norm(batch)[0])
        ln_of_x0[batch_size].append(layer_norm_np(batch)[0])
bn_of_x0 = {b: np.array(v) for b, v in bn_of_x0.items()}
ln_of_x0 = {b: np.array(v) for b, v in ln_of_x0.items()}

bn_spread = {b: float(v.std(axis=0).mean()) for b, v in bn_of_x0.items()}
ln_spread = {b: float(v.std(axis=0).mean()) for b, v in ln_of_x0.items()}
print("x0 归一化后的值随同批样本摆动多少（在不同的批之间的标准差）：")
print(f"  BatchNorm：批大小 2 -> {bn_spread[2]:.3f}，批大小 64 -> {bn_spread[64]:.3f}")
print(f"  LayerNorm：批大小 2 -> {ln_spread[2]:.1e}，批大小 64 -> {ln_spread[64]:.1e}")
print("批大小为 2 时，BatchNorm 给 x0 第 0 维的前 8 个结果：", np.round(bn_of_x0[2][:8, 0], 3))
# 两个样本靠得很近时，eps 让结果略小于 1：看大多数
my_guesses.reveal("batch_of_2", "只有 ±1" if np.median(np.abs(bn_of_x0[2][:, 0])) > 0.99 else "任意值")

fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharey=True)
bins = np.linspace(-2.5, 2.5, 51)
panels = [(bn_of_x0[2][:, 0], label("BatchNorm，批大小 2", "BatchNorm, batch = 2")),
          (bn_of_x0[64][:, 0], label("BatchNorm，批大小 64", "BatchNorm, batch = 64")),
          (ln_of_x0[2][:, 0], label("LayerNorm，任意批大小", "LayerNorm, any batch"))]
for ax, (values, title) in zip(axes, panels):
    ax.hist(values, bins=bins, color="tab:blue" if "Batch" in title else "tab:green")
    ax.set_title(title)
    ax.set_xlabel(label("x0 第 0 维归一化后的值", "x0 feature 0 after normalisation"))
axes[0].set_ylabel(label(f"{N_DRAWS} 个随机的批中出现的次数", f"count over {N_DRAWS} random batches"))
fig.suptitle(label("同一个样本，放进不同的批", "the same sample, in different batches"))
fig.tight_layout()
show_figure(fig, "05_batchnorm_vs_layernorm.png")

# %% [markdown]
# 在只有 2 个样本的批里，BatchNorm 把每个特征都变成了 $\pm 1$
# （两个数减去它们的平均、再除以它们的标准差，只能是 $\pm 1$）：
# 它只剩下“我比另一个样本大还是小”这一点信息，而且这点信息由那个陌生样本决定。批大到 64，统计量才稳下来。
# LayerNorm 对同一个样本永远给出同一个结果。
#
# 在语言模型里，BatchNorm 还有一个更要命的毛病。语言模型的一批数据是 $(B, T, C)$：$B$ 段文字、每段 $T$ 个位置。
# 要让统计量稳，BatchNorm 得在 $B \times T$ 个位置上一起求均值和方差——于是**后面的位置也参与了前面位置的归一化**。
# 因果遮罩辛辛苦苦挡住的未来，从归一化这个后门溜了进来。验证一下：把第 0 段文字最后一个位置的向量换掉，
# 看前面的位置、以及同批其他段落的输出变不变。

# %%
hidden = np.random.default_rng(1).standard_normal((4, 16, D_FEAT)).astype(np.float32)   # (B, T, C)：4 段，各 16 个位置
changed = hidden.copy()
changed[0, -1] = np.random.default_rng(2).standard_normal(D_FEAT)                     # 只改第 0 段的最后一个位置
leak = {}
for name, normalise in (("BatchNorm", lambda h: batch_norm(h, axis=(0, 1))), ("LayerNorm", layer_norm_np)):
    difference = np.abs(normalise(changed) - normalise(hidden)).max(axis=-1)          # (B, T)：每个位置的最大变化
    leak[name] = (float(difference[0, :-1].max()), float(difference[1:].max()))
    print(f"{name}：第 0 段前面 15 个位置最多变了 {leak[name][0]:.2e}，同批其他 3 段最多变了 {leak[name][1]:.2e}")

assert leak["BatchNorm"][0] > 1e-3 and leak["BatchNorm"][1] > 1e-3, "BatchNorm 让最后一个位置影响到了其他所有位置"
assert leak["LayerNorm"] == (0.0, 0.0), "LayerNorm 让每个位置只管自己：一点也不泄漏"

# %% [markdown]
# BatchNorm 下，改动最后一个位置，前面 15 个位置的输出全都变了，连同批别的段落也跟着变；
# LayerNorm 下，它们**一位不差**。对一个靠“只看前文”来学习的模型，前者等于在训练时把答案的影子透露给了前面的位置，
# 而生成时（一次一个词元，没有后文可看）这个影子就没了。LayerNorm 只看当前这个位置自己的向量，
# 和批里还有谁、批有多大、后面写了什么都无关——这正是语言模型需要的。
#
# ## 8. MLP 里为什么非要一个非线性
#
# 注意力负责“位置之间交换信息”，MLP 负责“每个位置自己加工特征”。MLP 是两个线性层夹一个 GELU。
# 如果去掉 GELU 呢？$W_2(W_1x+b_1)+b_2 = (W_2W_1)x + (W_2b_1+b_2)$：两层合起来仍是一个矩阵加一个偏置。
# 先用数值验证这个等式，再看加上 GELU 之后，**最好的**单个矩阵能把它近似到什么程度（最小二乘拟合）。

# %%
mg.manual_seed(0)
fc1, fc2 = nn.Linear(16, 64), nn.Linear(64, 16)
X = mg.randn(2000, 16) * 2.0

with mg.no_grad():
    two_linear = fc2(fc1(X)).numpy()
    with_gelu = fc2(fc1(X).gelu()).numpy()

W1, b1 = fc1.weight.numpy(), fc1.bias.numpy()
W2, b2 = fc2.weight.numpy(), fc2.bias.numpy()
W, b = W2 @ W1, W2 @ b1 + b2                     # 两层坍缩成的那一个矩阵和偏置
one_matrix = X.numpy() @ W.T + b
print("两个线性层 vs 一个矩阵，最大差：", np.abs(two_linear - one_matrix).max())
assert np.allclose(two_linear, one_matrix, atol=1e-4)


def best_affine_fit_error(inputs: np.ndarray, outputs: np.ndarray) -> float:
    """最好的单个仿射映射 inputs -> outputs（最小二乘）的相对误差。"""
    A = np.concatenate([inputs, np.ones((len(inputs), 1))], axis=1)
    coef, *_ = np.linalg.lstsq(A, outputs, rcond=None)
    residual = outputs - A @ coef
    return float(np.linalg.norm(residual) / np.linalg.norm(outputs - outputs.mean(0)))


err_linear = best_affine_fit_error(X.numpy(), two_linear)
err_gelu = best_affine_fit_error(X.numpy(), with_gelu)
print(f"最好的单个矩阵的相对误差：线性-线性 {err_linear:.1e}，线性-GELU-线性 {err_gelu:.3f}")
assert err_linear < 1e-4
assert err_gelu > 0.05, "中间夹了 GELU，任何单个矩阵都复现不了这个 MLP"

# %% [markdown]
# 没有 GELU，两层的输出和一个矩阵的输出只差 float32 的舍入误差；有了 GELU，
# 最好的单个矩阵也还差着一截。叠 100 层线性层，表达能力仍等于一层——非线性才让“深”有了意义。
#
# ## 9. LayerNorm 放在哪里：Post-LN 与 Pre-LN
#
# 原始 Transformer 把 LayerNorm 放在残差相加**之后**：$x \leftarrow \mathrm{LN}(x + f(x))$（Post-LN）。
# GPT-2 把它挪到子层**之前**：$x \leftarrow x + f(\mathrm{LN}(x))$（Pre-LN），并在最后补一个 LayerNorm。
# 两种写法都在 `minigpt/model.py` 的 `Block.forward` 里，由 `GPTConfig(norm_position=...)` 选择：

# %%
print(inspect.getsource(Block.forward))

# %% [markdown]
# 差别只是括号的位置，却决定了那条“直通车道”是否干净：Pre-LN 里，从输入到输出有一条不经过任何 LayerNorm 的
# 纯加法通路；Post-LN 里，这条路每过一个 Block 都要被 LayerNorm 重新缩放一次。
# 下面用两个 12 层的小 GPT 做对比：先看初始化时每个 Block 拿到的梯度，再用同样的学习率、不加预热（warmup）训练。
#
# **先猜一猜**：同样的学习率、不加预热，12 层的 Post-LN 和 Pre-LN，谁的损失降得快？

# %%
my_guesses.guess("faster_norm", "还没猜", "不预热时谁的损失降得快",
                 options=["Post-LN", "Pre-LN"])  # 换成你的猜测

# %%
DEEP_LAYERS = 12
DEEP_EMBD, DEEP_STEPS = (32, 120) if QUICK else (64, 400)


def deep_model(norm_position: str) -> GPT:
    mg.manual_seed(0)
    return GPT(GPTConfig(vocab_size=tokenizer.vocab_size, block_size=32, n_layer=DEEP_LAYERS, n_head=4,
                         n_embd=DEEP_EMBD, norm_position=norm_position))


init_grads, deep_losses = {}, {}
x_probe, y_probe = get_batch(data.train, 16, 32, np.random.default_rng(5))
for norm_position in ("post", "pre"):
    model = deep_model(norm_position)
    _, loss = model(x_probe, y_probe)
    loss.backward()
    norms = mg.viz.plots.parameter_grad_norms(model)            # {"transformer.h.0": ..., ...}
    init_grads[norm_position] = [norms[f"transformer.h.{i}"] for i in range(DEEP_LAYERS)]
    model.zero_grad()

    optimizer = optim.AdamW(model.parameters(), lr=1e-3)
    rng = np.random.default_rng(0)
    losses = []
    t0 = time.time()
    for _ in range(DEEP_STEPS):
        x, y = get_batch(data.train, 16, 32, rng)
        _, loss = model(x, y)        # 前向
        optimizer.zero_grad()
        loss.backward()              # 反向传播
        optimizer.step()             # 更新
        losses.append(loss.item())
    deep_losses[norm_position] = np.array(losses)
    name = {"post": "Post-LN", "pre": "Pre-LN"}[norm_position]
    print(f"{name}：初始化时各 Block 的梯度 {np.round(init_grads[norm_position][:3], 3)} ... "
          f"{np.round(init_grads[norm_position][-2:], 3)}；{DEEP_STEPS} 步后的训练损失 "
          f"{deep_losses[norm_position][-20:].mean():.3f}（{time.time() - t0:.1f} 秒）")

fig, (ax_grad, ax_loss) = plt.subplots(1, 2, figsize=(11, 4))
blocks = np.arange(DEEP_LAYERS)
ax_grad.semilogy(blocks, init_grads["post"], "o-", label="Post-LN")
ax_grad.semilogy(blocks, init_grads["pre"], "s-", label="Pre-LN (GPT-2)")
ax_grad.set_xlabel(label("第几个 Block", "block"))
ax_grad.set_ylabel(label("初始化时该 Block 参数的梯度范数", "gradient norm of the block at init"))
ax_grad.set_title(label("初始化时的梯度", "gradients at initialisation"))
ax_grad.set_xticks(blocks)
ax_grad.grid(True, alpha=0.3)
ax_grad.legend()
for norm_position, name in (("post", "Post-LN"), ("pre", "Pre-LN (GPT-2)")):
    smooth = np.convolve(deep_losses[norm_position], np.ones(10) / 10, mode="valid")
    ax_loss.plot(np.arange(len(smooth)) + 10, smooth, label=name)
ax_loss.set_xlabel(label("训练步数", "training step"))
ax_loss.set_ylabel(label("训练损失（10 步滑动平均）", "training loss (10-step average)"))
ax_loss.set_title(label(f"{DEEP_LAYERS} 层，学习率 1e-3，无预热", f"{DEEP_LAYERS} layers, lr 1e-3, no warmup"))
ax_loss.grid(True, alpha=0.3)
ax_loss.legend()
fig.tight_layout()
show_figure(fig, "05_post_vs_pre_ln.png")

final = {k: float(v[-20:].mean()) for k, v in deep_losses.items()}
assert all(np.isfinite(v).all() for v in deep_losses.values()), "两种写法都应能训练，不会发散"
pre_spread = max(init_grads["pre"]) / min(init_grads["pre"])
post_spread = max(init_grads["post"]) / min(init_grads["post"])
print(f"初始化时各 Block 梯度的最大值 / 最小值：Pre-LN {pre_spread:.1f}，Post-LN {post_spread:.1f}")
my_guesses.reveal("faster_norm", "Pre-LN" if final["pre"] < final["post"] else "Post-LN")
assert pre_spread < 3, "Pre-LN：每个 block 得到的梯度大小差不多"
assert post_spread > 3 * pre_spread, "Post-LN：各个 block 的梯度相差悬殊"
assert final["pre"] < final["post"] - 0.1, "这么深、又不预热时，Pre-LN 训练得更快"

# %% [markdown]
# 左图：Pre-LN 的 12 个 Block 在初始化时拿到的梯度大小相近——那条纯加法通路把梯度原样送到每一层。
# Post-LN 的梯度则很不均匀：每个 Block 的输出都被 LayerNorm 重新缩放，梯度大小取决于那一处的数值尺度
# （第 0 个 Block 的 LayerNorm 面对的是很小的嵌入向量，除以一个很小的标准差，梯度就被放大了许多倍）。
#
# 右图：同样的学习率、不加预热，Pre-LN 稳步下降，Post-LN 很快就卡住了。这不是说 Post-LN 不能用——
# 原论文靠学习率预热（先小后大）把它训练好了——而是说 Pre-LN 对超参数宽容得多，这是 GPT-2 之后的模型
# 大多改用 Pre-LN 的一个重要原因，也是 `minigpt` 的默认值。
#
# ## 10. 打开黑箱：亲手拼出整个 GPT
#
# 零件都齐了：第 2 节的多头注意力、第 6 节的 LayerNorm、第 8 节的 MLP（线性、GELU、线性），
# 用第 5、9 节的残差和 Pre-LN 拼成一个 Block；再在前面接上嵌入表和位置表，后面接最后的 LayerNorm 和输出矩阵
# （`minigpt` 让输出矩阵和嵌入表共用同一个矩阵，即 `tie_weights`）。下面每个零件都只用 minigrad 的基本运算写，
# LayerNorm 的均值方差、精确的 GELU $x\,\Phi(x) = \tfrac{x}{2}\bigl(1 + \operatorname{erf}(x/\sqrt 2)\bigr)$
# 都是亲手算的。
#
# 权重直接用第 4 节在莎士比亚上训练好的那个 `minigpt.GPT`（复制一份，换成 float64）。

# %%
def layer_norm(x: mg.Tensor, weight: mg.Tensor, bias: mg.Tensor, eps: float = 1e-5) -> mg.Tensor:
    """对最后一维减均值、除以标准差（方差除以 n），再乘 weight、加 bias。"""
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / (variance + eps).sqrt() * weight + bias


def gelu(x: mg.Tensor) -> mg.Tensor:
    """精确的 GELU：x·Φ(x)，Φ 是标准正态分布的累积分布函数。"""
    return x * 0.5 * (1 + (x / math.sqrt(2)).erf())


def mlp(x: mg.Tensor, block: Block, activation=gelu) -> mg.Tensor:
    """每个位置各自过一遍：C -> 4C，非线性，4C -> C。"""
    hidden = activation(x @ block.mlp.c_fc.weight.T + block.mlp.c_fc.bias)             # (B, T, 4C)
    return hidden @ block.mlp.c_proj.weight.T + block.mlp.c_proj.bias                   # (B, T, C)


def block_by_hand(x: mg.Tensor, block: Block, n_head: int, activation=gelu) -> mg.Tensor:
    """一个 Pre-LN 的 Transformer Block：x + 注意力(LN(x))，再 x + MLP(LN(x))。"""
    attn = block.attn
    y, _ = multi_head_attention(layer_norm(x, block.ln_1.weight, block.ln_1.bias), attn.c_attn.weight,
                                attn.c_attn.bias, attn.c_proj.weight, attn.c_proj.bias, n_head)
    x = x + y                                                                           # 残差连接
    return x + mlp(layer_norm(x, block.ln_2.weight, block.ln_2.bias), block, activation)  # 残差连接


def gpt_by_hand(model: GPT, ids: np.ndarray, activation=gelu) -> mg.Tensor:
    """整个 GPT 的前向：ids (B, T) -> logits (B, T, V)。"""
    wte, wpe, ln_f = model.transformer.wte.weight, model.transformer.wpe.weight, model.transformer.ln_f
    x = wte[ids] + wpe[:ids.shape[1]]                                                   # (B, T, C)：词元 + 位置
    for block in model.transformer.h:
        x = block_by_hand(x, block, model.config.n_head, activation)
    x = layer_norm(x, ln_f.weight, ln_f.bias)
    return x @ wte.T                                                                    # (B, T, V)：输出矩阵就是嵌入表


open_model = GPT(heads_model.config)
open_model.load_state_dict(heads_model.state_dict())
open_model.to(dtype=np.float64)
ids, _ = get_batch(data.val, 4, 64, np.random.default_rng(2))
with mg.no_grad():
    x_in = open_model.transformer.wte(ids) + open_model.transformer.wpe.weight        # 第 0 个 Block 的输入
    block_gap = float(np.abs(block_by_hand(x_in, open_model.transformer.h[0], 4).numpy()
                             - open_model.transformer.h[0](x_in).numpy()).max())
    logits_minigpt = open_model(ids)[0].numpy()
    logits_mine = gpt_by_hand(open_model, ids).numpy()
    logits_tanh = gpt_by_hand(open_model, ids, activation=lambda h: h.gelu(approximate="tanh")).numpy()
gpt_gap = float(np.abs(logits_mine - logits_minigpt).max())
tanh_gap = float(np.abs(logits_tanh - logits_minigpt).max())
print(f"第 0 个 Block：亲手拼的 vs minigpt，最大差 {block_gap:.1e}")
print(f"整个 GPT 的 logits：亲手拼的 vs minigpt，最大差 {gpt_gap:.1e}"
      f"（logits 的量级 {np.abs(logits_minigpt).max():.1f}）")
print(f"对照：把精确的 GELU 换成 GPT-2 的 tanh 近似，最大差变成 {tanh_gap:.1e}")
assert block_gap < 1e-12 and gpt_gap < 1e-12, "亲手拼出的整个 GPT 就是 minigpt 的 GPT，差别只在 float64 的舍入误差"
assert tanh_gap > 1e-8, "这个核对足够灵敏，看得出两种 GELU 的差别"

# %% [markdown]
# 亲手拼的 GPT 和 `minigpt.GPT` 只差 float64 的舍入误差；这个检查也足够灵敏——
# 只把 GELU 换成近似式，差别就大了好几个数量级。
# `minigpt/model.py` 里的 `CausalSelfAttention`、`MLP`、`Block`、`GPT` 做的就是上面这几十行，
# 只是把一些步骤交给了融合的算子（更快、更省内存，反向传播是手推的），并多了生成用的 KV 缓存。
# 从下一讲起，我们直接用 `minigpt`，而且知道它里面的每一步是什么。

# %% [markdown]
# ## 11. 唐诗的对仗：有没有一个头专看上一句的同一个座位？
#
# 律诗的一联常常**对仗**：下句第 $i$ 个字和上句第 $i$ 个字词性相同、意思相对——“白日”对“黄河”，“依山尽”对“入海流”。
# 对下句的每个字来说，最有用的一条线索，就藏在上句**同一个座位**上。这是只有中文诗才有的多头例子：
# 一个头要是学会了“往回数六个位置”，它就能在写下句时，一个字一个字地对着上句看。
#
# 从自带的唐诗语料里取出所有五言的一联（“上句，下句。”，一共 12 个词元），只留常用的 1500 个字写成的联，
# 训练一个 2 层 × 4 头的小 GPT。因果遮罩下，猜下句第 $i$ 个字的是它前面那个位置（第一个字由逗号来猜），
# 那个位置的查询要是看向上句第 $i$ 个字，就是在“对仗”。对每个头，量出这些查询落在上句同一座位上的注意力，
# 再和“均匀地看前文”时落在那里的份额（$1/(\text{前文长度})$）比。
#
# **先猜一猜**：训练前每个头落在同一座位上的注意力，和均匀的份额差多少？训练几百步之后，最好的头会是均匀份额的几倍？

# %%
my_guesses.guess("couplet_head_ratio", "还没猜",
                 "训练后，最好的头落在上句同一座位上的注意力是均匀份额的几倍")  # 换成你的猜测

# %%
from tutorials.couplets import load_couplets
from tutorials.course import CJK

tang = load_couplets()  # 每一联是 12 个编号；训练集和验证集按整首诗切开
couplets, couplets_val, couplet_chars = tang.train, tang.val, tang.chars
couplet_stoi = {c: i for i, c in enumerate(couplet_chars)}
print(f"五言的联：训练 {len(couplets):,} 联，验证 {len(couplets_val):,} 联；词表 {tang.vocab_size} 个字")
print("例如：", tang.decode(couplets_val[0]))

COUPLET_STEPS = 300 if QUICK else 1000
mg.manual_seed(0)
poet = GPT(GPTConfig(vocab_size=len(couplet_chars), block_size=11, n_layer=2, n_head=4, n_embd=64))
couplet_probe = couplets_val[:500, :11]  # 输入是前 11 个词元，第 i 个位置猜第 i + 1 个
QUERIES = np.arange(5, 10)  # 逗号和下句前四个字：猜下句第 1..5 个字的位置
SEATS = QUERIES - 5  # 各自在上句的同一座位
uniform_share = float(np.mean(1 / (QUERIES + 1)))  # 均匀地看前文时，落在那一个位置上的份额


def seat_mass(model: GPT, offset: int = 5) -> np.ndarray:
    """每层每个头：猜下句第 i 个字的查询，落在往回 `offset` 个位置上的平均注意力（offset = 5：上句同一座位）。"""
    maps = np.stack(model.attention_maps(couplet_probe))  # (层, B, nh, 11, 11)
    return maps[:, :, :, QUERIES, QUERIES - offset].mean(axis=(1, 3))  # (层, nh)


mass_before = seat_mass(poet)
optimizer = optim.AdamW(poet.parameters(), lr=3e-3)
rng = np.random.default_rng(0)
t0 = time.time()
for _ in range(COUPLET_STEPS):
    batch = couplets[rng.integers(0, len(couplets), 64)]
    _, loss = poet(batch[:, :-1], batch[:, 1:])  # 前向
    optimizer.zero_grad()
    loss.backward()  # 反向传播
    optimizer.step()  # 更新
print(f"训练 {COUPLET_STEPS} 步，用时 {time.time() - t0:.1f} 秒，训练损失 {loss.item():.2f}")
mass_after, mass_next = seat_mass(poet), seat_mass(poet, offset=6)
print(f"均匀地看前文时，落在上句同一座位上的份额：{uniform_share:.3f}")
for layer in range(2):
    for head in range(4):
        print(f"  第 {layer} 层 头 {head}：训练前 {mass_before[layer, head]:.3f}，训练后 {mass_after[layer, head]:.3f}"
              f"（对照：往回 6 个位置 {mass_next[layer, head]:.3f}）")
best = np.unravel_index(np.argmax(mass_after), mass_after.shape)
print(f"最好的头是第 {best[0]} 层 头 {best[1]}：均匀份额的 {mass_after[best] / uniform_share:.1f} 倍")
my_guesses.reveal("couplet_head_ratio", float(mass_after[best] / uniform_share))

# %%
fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
names = [f"{layer}.{head}" for layer in range(2) for head in range(4)]
axes[0].bar(np.arange(8) - 0.2, mass_before.ravel(), width=0.4, label=label("训练前", "before training"))
axes[0].bar(np.arange(8) + 0.2, mass_after.ravel(), width=0.4, label=label("训练后", "after training"))
axes[0].axhline(uniform_share, color="black", lw=0.8, ls=":", label=label("均匀的份额", "uniform share"))
axes[0].set_xticks(range(8), names)
axes[0].set_xlabel(label("层.头", "layer.head"))
axes[0].set_ylabel(label("落在上句同一座位上的注意力", "attention on the same seat of line 1"))
axes[0].legend()
seat_names = [f"上{i}" for i in range(1, 6)] + ["，"] + [f"下{i}" for i in range(1, 6)]  # 11 个输入位置
ticks = seat_names if CJK else [str(i) for i in range(11)]
best_map = np.stack(poet.attention_maps(couplet_probe))[best[0], :, best[1]].mean(axis=0)  # (11, 11)：500 联的平均
fig.colorbar(axes[1].imshow(best_map, cmap="Blues", vmin=0), ax=axes[1], fraction=0.046)
for q in QUERIES:  # 方框：猜下句第 i 个字的查询，和上句的第 i 个字
    axes[1].add_patch(plt.Rectangle((q - 5.5, q - 0.5), 1, 1, fill=False, ec="crimson", lw=1.5))
axes[1].set_xticks(range(11), ticks)
axes[1].set_yticks(range(11), ticks)
axes[1].set_xlabel(label("被看的位置（键）", "key position"))
axes[1].set_ylabel(label("看的位置（查询）", "query position"))
axes[1].set_title(label(f"第 {best[0]} 层 头 {best[1]}，验证集 500 联的平均", f"layer {best[0]}, head {best[1]}, mean"))
fig.tight_layout()
show_figure(fig, "05_couplet_head.png")

assert mass_before.max() < 1.3 * uniform_share, "训练前，没有哪个头偏爱上句的同一座位"
assert mass_after[best] > 2.5 * uniform_share, "训练后，有一个头专看上句的同一座位"
assert mass_after[best] > 2 * mass_next[best], "它看的正是同一座位，而不是随便哪个靠前的位置"

# %% [markdown]
# 训练前，每个头落在同一座位上的注意力都和均匀的份额差不多；训练几百步之后，有一个头把几倍于均匀份额的注意力
# 放在了上句的同一座位上（热图里红框标出的格子：猜下句第 $i$ 个字时看上句第 $i$ 个字），
# 而往回 6 个位置（上句的前一个座位）它看得少得多。没有人告诉模型什么是对仗，
# 它自己从三万多联诗里找到了这条最有用的线索，并交给一个头专门去做——
# 这正是多头的用处：一个头专做这件事，别的头照样做各自的事，不必为它让路。哪一层、哪个头学会它，随种子而变。
#
# ### 同一个字，不同的向量
#
# 讲义里“他推了推眼镜”和“他推了推门”，同一个“推”，后面接的完全不同：难处在上下文，不在字本身。
# 诗里也一样。“白”后面最常见的是“云”，也常是“发”“头”“首”——白云是山水，白发是老去。
# 嵌入表给每个“白”的都是同一个向量（同一座位上连位置向量都一样），只靠它，猜“云”还是“发”只能一视同仁；
# 自注意力把前文混了进来，每个“白”得到的向量不再一样。在没见过的联里找出所有后面是“云”或“发、头、首”的“白”，
# 比一比模型在“白”这个位置上给“云”和给“白发”一类的概率。

# %%
white = couplet_stoi["白"]
cloud, hair = couplet_stoi["云"], [couplet_stoi[c] for c in "发头首"]
b_idx, t_idx = np.nonzero(couplets_val[:, :10] == white)  # 每个“白”：哪一联、第几个位置（后面还有字）
follower = couplets_val[b_idx, t_idx + 1]
groups = {"白云": follower == cloud, "白发": np.isin(follower, hair)}
with mg.no_grad():
    logp = poet(couplets_val[:, :11])[0].log_softmax(-1).numpy()  # (N, 11, V)
    hidden = poet.hidden_states(couplets_val[:, :11]).numpy()  # (N, 11, C)：lm_head 读的向量
log_odds = logp[b_idx, t_idx, cloud] - np.logaddexp.reduce(logp[b_idx, t_idx][:, hair], axis=-1)  # ln P(云)/P(发头首)
vectors = hidden[b_idx, t_idx] / np.linalg.norm(hidden[b_idx, t_idx], axis=-1, keepdims=True)
cos = vectors @ vectors.T
for name, mask in groups.items():
    print(f"后面是“{name[1]}”一类的“白”：{mask.sum()} 个；"
          f"模型在“白”处的 ln P(云)/P(发头首) 平均 {log_odds[mask].mean():+.2f}")
inside_cos = np.mean([cos[np.ix_(m, m)][~np.eye(m.sum(), dtype=bool)].mean() for m in groups.values()])
across_cos = cos[np.ix_(groups["白云"], groups["白发"])].mean()
print(f"“白”的向量的余弦相似度：同一组里平均 {inside_cos:.2f}，两组之间平均 {across_cos:.2f}（嵌入表给的向量：1）")
diff = log_odds[groups["白云"]].mean() - log_odds[groups["白发"]].mean()
diff_err = math.hypot(*(log_odds[m].std() / math.sqrt(m.sum()) for m in groups.values()))
print(f"两组的 ln P(云)/P(发头首) 相差 {diff:.2f} ± {diff_err:.2f}")

assert cos[np.triu_indices(len(cos), 1)].mean() < 0.9, "同一个字，上下文不同，向量就不同"
assert diff > 3 * diff_err, "前文是山水还是老去，模型在“白”处就押不同的下一个字"

# %%
my_guesses.calibration()  # 本讲的先猜一猜：数值猜测差几倍，选择题猜对几个

# %% [markdown]
# 同一个“白”字，经过自注意力以后，向量随上下文而变；而且变得有用：后面真是“云”的那些“白”，模型在那里就更押“云”，
# 后面真是“发”“头”“首”的，就更押它们——只看“白”这一个字的计数表做不到这一点，它给每个“白”的都是同一个分布。
#
# ## 小结
#
# | 问题 | 办法 | 名字 | 在代码里 |
# |---|---|---|---|
# | 一个头只有一行权重，看不了两处 | 切成几个头，各看各的（不多花参数） | 多头注意力 | `model.py: CausalSelfAttention` |
# | 叠深了梯度传不到底层 | 每层输出加回输入 | 残差连接 | `Block.forward` 里的 `x + ...` |
# | 叠深了数值利滚利 | 子层只看归一化过的输入 | LayerNorm | `minigrad/nn/layers.py: LayerNorm` |
# | BatchNorm 随批变化，还让后文漏进前文 | 每个位置自己归一化 | LayerNorm | `F.layer_norm` |
# | 线性层叠多少层都等于一层 | 中间夹一个非线性 | MLP（GELU） | `minigpt/model.py: MLP` |
# | 深层 Post-LN 难训练 | LayerNorm 挪到子层之前 | Pre-LN | `GPTConfig(norm_position="pre")` |
#
# 下一讲（06）：模型搭好了，开始训练它，并把它变成一个会续写的 GPT。

# %%
print(f"本讲用时 {time.time() - T_START:.1f} 秒")

# %% [markdown]
# ## 练习
#
# 7 道练习在 `tutorials/exercises/lecture05.py` 里：数出一个 Block 的参数（5.1）、LayerNorm 的前向（5.2）、
# 把通道切成几个头（5.3）、合上讲义重写多头因果自注意力（5.4）、推导 LayerNorm 的反向传播（5.5）、
# 亲手拼一个 Post-LN 的 Block（5.6），以及一道开放题（5.7）：20 层 Linear + tanh 直接叠起来，训练 400 步什么也学不到；
# 用这一讲的东西让它学得动——在检查器的回归题上，3 个随机种子的平均测试误差要降到 0.5 以下（只会猜平均数是 1）。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 05`。

# %%
from tutorials.exercises import check

check("05")
