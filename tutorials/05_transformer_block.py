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
# 第三讲我们有了一层自注意力，第四讲又给它补上了座位号。可是一层注意力离“能用的模型”还差得远：
# 它只有一种看人的方式；它一旦叠深，梯度和数值都会出问题；它里面的运算几乎全是线性的。
# 这一讲逐个补上这些缺口，每个缺口都先用实验把问题摆出来，再看补丁是否真的起作用：
#
# 1. **多头**：把 512 维切成 8 个 64 维的头，参数和乘法次数一个不多（数出来）；训练后各头看的位置确实不同（画出来）。
# 2. **残差连接**：20 层堆叠时，没有残差，传到第一层的梯度几乎为零；有残差，它活下来了（量出来）。
# 3. **LayerNorm**：残差流的数值随深度越滚越大，LayerNorm 把它稳住（量出来）。
# 4. **为什么不用 BatchNorm**：它的统计量随 batch 大小改变，LayerNorm 不会（自己写一个 BatchNorm 对照）。
# 5. **MLP 里的非线性**：两层线性等于一层矩阵（数值证明），加一个 GELU 就不再等价。
# 6. **Post-LN 与 Pre-LN**：原论文把 LayerNorm 放在残差之后，GPT-2 挪到了子层之前；两种写法都在
#    `minigpt` 里（`GPTConfig(norm_position="post"/"pre")`），我们在深一点的模型上比一比。
#
# 每个结论后面都跟着一个 `assert`：如果将来有人改坏了代码，这份教程自己就会报错。
#
# 运行：`python tutorials/05_transformer_block.py`（完整实验）；
# `TUTORIAL_QUICK=1 python tutorials/05_transformer_block.py`（小数据、少步数）。
# 图片写到当前目录的 `figures/` 下。

# %% [markdown]
# **学完这一讲，你能**：数出多头注意力和一个 Transformer block 的参数；说清残差、LayerNorm、MLP 里的非线性
# 各补的是哪个缺口，并用实验量出来；解释为什么语言模型用 LayerNorm 而不用 BatchNorm，为什么 GPT-2 把它放在子层之前。
#
# **用时**（在 2 核 CPU 上实测的 CPU 时间；机器忙时墙钟时间更长）：
# 运行本讲，快速版约 50 秒，完整版约 3 分钟；最后有 5 道练习。

# %%
from tutorials.course import FIGURES, QUICK, T_START, label, show_figure, show_image  # first: limits BLAS threads

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
from minigpt.model import Block
from minigrad import nn, optim

# %% [markdown]
# ## 1. 八个头并不比一个头贵
#
# 多头注意力先用同样的三个矩阵 $W_q, W_k, W_v$（每个都是 $d \times d$）算出 Q、K、V，
# 然后把 $d=512$ 这一维**切开**成 8 份、每份 64 维，各自做一遍注意力，最后拼回 512 维，再乘一个输出矩阵 $W_o$。
# 切开不会多出参数：矩阵还是那四个。乘法次数呢？下面这个小函数照着多头注意力的步骤走一遍，
# 每次矩阵乘都把乘法次数记下来（形状 $(m, k) \times (k, n)$ 要做 $m \cdot k \cdot n$ 次乘法）。

# %%
def attention_cost(T: int, d_model: int, n_head: int) -> dict[str, int]:
    """Run multi-head self-attention in NumPy on a (T, d_model) input, counting parameters and multiplications."""
    rng = np.random.default_rng(0)
    mults = {"projections": 0, "scores QK^T": 0, "weights x V": 0}

    def mm(a: np.ndarray, b: np.ndarray, kind: str) -> np.ndarray:
        *batch, m, k = a.shape
        n = b.shape[-1]
        mults[kind] += int(np.prod(batch, dtype=np.int64)) * m * k * n
        return a @ b

    W_q, W_k, W_v, W_o = (rng.standard_normal((d_model, d_model)) / math.sqrt(d_model) for _ in range(4))
    x = rng.standard_normal((T, d_model))
    hs = d_model // n_head                                        # head size
    q, k, v = (mm(x, W, "projections") for W in (W_q, W_k, W_v))  # (T, d) each
    q, k, v = (t.reshape(T, n_head, hs).transpose(1, 0, 2) for t in (q, k, v))  # (nh, T, hs)
    scores = mm(q, k.transpose(0, 2, 1), "scores QK^T") / math.sqrt(hs)        # (nh, T, T)
    weights = np.exp(scores - scores.max(-1, keepdims=True))
    weights /= weights.sum(-1, keepdims=True)
    y = mm(weights, v, "weights x V")                              # (nh, T, hs)
    y = y.transpose(1, 0, 2).reshape(T, d_model)                   # (T, d): heads side by side again
    mm(y, W_o, "projections")
    mults["parameters"] = 4 * d_model * d_model
    return mults


T_COUNT = 128
one_head = attention_cost(T_COUNT, 512, n_head=1)
eight_heads = attention_cost(T_COUNT, 512, n_head=8)
print(f"{'':>14} {'1 head x 512':>14} {'8 heads x 64':>14}")
for key in one_head:
    print(f"{key:>14} {one_head[key]:>14,} {eight_heads[key]:>14,}")
assert one_head == eight_heads, "8 heads of 64 should cost exactly what 1 head of 512 costs"

# %% [markdown]
# 每一行都相等。直观地说：一个 512 维的头算分数时，每对位置做 512 次乘法；8 个 64 维的头，每对位置每个头做 64 次，
# 合起来还是 512 次。多头换来的是 8 张**不同的**注意力图，而不是更多的算力。
#
# 真正的模型里也是如此：用 `minigpt` 建两个只差头数的 GPT，参数个数一个不差。

# %%
def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


mg.manual_seed(0)
n_params = {
    n_head: count_parameters(GPT(GPTConfig(vocab_size=65, block_size=64, n_layer=2, n_head=n_head, n_embd=512)))
    for n_head in (1, 8)
}
print(f"GPT parameters, 1 head: {n_params[1]:,} | 8 heads: {n_params[8]:,}")
assert n_params[1] == n_params[8]

# %% [markdown]
# ## 2. 训练之后，各个头看的地方不一样
#
# 参数一样多，但 8 张注意力图有什么用？只有当各个头学到**不同的**看法时才有用。
# 我们在莎士比亚文本上训练一个很小的字符级 GPT（2 层，每层 4 个头），然后把同一段文字上每个头的注意力图画出来。
# 注意力图第 $i$ 行第 $j$ 列是“位置 $i$ 从位置 $j$ 取了多少信息”；因果遮罩让右上角全是 0。
#
# 训练前，所有权重都是很小的随机数，每个头的注意力分数都接近 0，softmax 之后几乎是“前面每个字平均看一眼”——
# 每层的 4 个头看起来一模一样。我们用两张注意力图每一行之间的总变差距离（$\tfrac12\sum_j |p_{ij} - p'_{ij}|$，
# 0 表示完全相同，1 表示毫不重叠）来量“两个头有多不同”，训练前后各量一次。
#
# **先猜一猜**：训练前，同一层的 4 个头看的地方有多不同（距离接近 0 还是接近 1）？训练几百步之后呢？

# %%
data = load_dataset(None, block_size=64)           # the built-in Shakespeare corpus, split 90/10
tokenizer = data.tokenizer
print(f"Shakespeare: {len(data.train):,} training characters, vocabulary of {tokenizer.vocab_size}")

HEADS_STEPS = 200 if QUICK else 800
mg.manual_seed(0)
heads_model = GPT(GPTConfig(vocab_size=tokenizer.vocab_size, block_size=64, n_layer=2, n_head=4, n_embd=64))
snippet = data.val[:40]                              # a line of held-out text to look at
print("text:", repr(tokenizer.decode(snippet)))


def head_distances(maps: np.ndarray) -> np.ndarray:
    """Total-variation distance between every pair of heads' attention maps (nh, T, T), averaged over queries."""
    nh = maps.shape[0]
    return np.array([0.5 * np.abs(maps[a] - maps[b]).sum(axis=-1).mean()
                     for a in range(nh) for b in range(a + 1, nh)])


before = heads_model.attention_maps(snippet[None])   # a list over layers of (1, nh, T, T)
distance_before = np.concatenate([head_distances(layer[0]) for layer in before])

optimizer = optim.AdamW(heads_model.parameters(), lr=3e-3)
rng = np.random.default_rng(0)
t0 = time.time()
for _ in range(HEADS_STEPS):
    x, y = get_batch(data.train, 16, 64, rng)
    _, loss = heads_model(x, y)      # forward
    optimizer.zero_grad()
    loss.backward()                  # backward
    optimizer.step()                 # update
print(f"trained {HEADS_STEPS} steps in {time.time() - t0:.1f} s, loss {loss.item():.2f}")

after = heads_model.attention_maps(snippet[None])
distance_after = np.concatenate([head_distances(layer[0]) for layer in after])
print(f"distance between heads before training: min {distance_before.min():.3f}, max {distance_before.max():.3f}")
print(f"distance between heads after training:  min {distance_after.min():.3f}, max {distance_after.max():.3f}")

T_snip = len(snippet)
query, key = np.arange(T_snip)[:, None], np.arange(T_snip)[None, :]
for layer_index, layer in enumerate(after):
    for head in range(layer.shape[1]):
        p = layer[0, head]
        reach = (p * (query - key)).sum(axis=-1).mean()         # how far back this head looks, on average
        print(f"layer {layer_index} head {head}: looks back {reach:4.1f} characters on average, "
              f"weight on itself {np.diag(p).mean():.2f}, on the previous character {np.diag(p, -1).mean():.2f}")

mg.viz.plots.plot_attention(after, tokenizer.decode(snippet), path=FIGURES / "05_attention_heads.png",
                            title=label("训练后，同一段文字上 2 层 × 4 个头的注意力",
                                        "attention of 2 layers x 4 heads, after training"))
show_image(FIGURES / "05_attention_heads.png")

assert distance_before.max() < 0.05, "before training every head attends (almost) uniformly"
assert distance_after.min() > 0.05, "after training every pair of heads attends differently"
assert distance_after.mean() > 5 * distance_before.mean()

# %% [markdown]
# 训练前任意两个头之间的距离都只有 0.01 左右；训练几百步之后，每一对头之间都拉开了距离（上面打印的最小值和最大值），
# 8 张图各有各的样子：有的头把注意力大致均匀地铺在前文上，有的头更偏爱紧挨着的前几个字符，
# 有的头死死盯住某一个特别的字符——图中竖直的深色条纹，常常落在换行 `\n` 或空格上，
# 那是“新的一行 / 新的一个词从这里开始”的信号。
# 这些分工没有人规定，是训练自己长出来的；模型越大、训练越久，分工越清楚。


# %% [markdown]
# ## 3. 残差连接：给梯度修一条直通车道
#
# 把 20 个“线性层 + tanh”首尾相接，算一个标量损失再反向传播，看每一层权重拿到的梯度有多大。
# 再做一次完全一样的实验，只改一处：每层的输出加回它的输入，`h = h + f(h)`。
#
# **先猜一猜**：没有残差时，第一层拿到的梯度是最后一层的多少？有残差时呢？

# %%
DEPTH, WIDTH = 20, 64


def grad_norms_through_stack(residual: bool) -> list[float]:
    """Gradient norm of each layer's weight in a DEPTH-layer tanh stack, with or without residual connections."""
    mg.manual_seed(0)
    layers = [nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH)]
    h = mg.randn(32, WIDTH)
    for layer in layers:
        f = layer(h).tanh()
        h = h + f if residual else f        # the only difference between the two runs
    loss = (h * h).mean()
    loss.backward()
    return [float(np.linalg.norm(layer.weight.grad.numpy())) for layer in layers]


plain = grad_norms_through_stack(residual=False)
with_residual = grad_norms_through_stack(residual=True)
print(f"layer  1 gradient: plain {plain[0]:.2e} | residual {with_residual[0]:.2e}")
print(f"layer 20 gradient: plain {plain[-1]:.2e} | residual {with_residual[-1]:.2e}")

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

# Without residuals the gradient collapses on its way down; with them the first layer gets as much as the last.
assert plain[0] < 1e-3 * plain[-1]
assert with_residual[0] > 0.1 * with_residual[-1]
assert with_residual[0] > 1000 * plain[0]

# %% [markdown]
# 没有残差时，梯度每往下穿过一层就乘上一个小于 1 的因子（tanh 的导数和权重矩阵一起决定），
# 20 层乘下来，第一层拿到的梯度不到最后一层的万分之一——它几乎学不动。
# 有了残差，$h_{l+1} = h_l + f(h_l)$ 对 $h_l$ 的导数是 $I + f'(h_l)$：那个单位矩阵 $I$ 就是直通车道，
# 梯度哪怕在 $f$ 里衰减了，也能沿着 $I$ 原样走回去。
#
# ## 4. LayerNorm：把每个位置的向量拉回同一个尺度
#
# 残差有个副作用：每层都往 $h$ 上**加**东西，数值会越加越大。下面量一量 20 层之后激活值的标准差，
# 再在每层之后加一个 LayerNorm（对每个位置自己的向量做归一化：减均值、除以标准差）重新量一次。
#
# **先猜一猜**：输入的标准差是 1。不归一化，20 层之后残差流的标准差会涨到多少？

# %%
def activation_scale(use_layer_norm: bool) -> list[float]:
    """Standard deviation of the residual stream after each of DEPTH residual MLP layers."""
    mg.manual_seed(0)
    layers = [nn.Linear(WIDTH, WIDTH) for _ in range(DEPTH)]
    norms = [nn.LayerNorm(WIDTH) for _ in range(DEPTH)]
    h = mg.randn(32, WIDTH)
    scales = [float(h.numpy().std())]
    with mg.no_grad():
        for layer, norm in zip(layers, norms):
            h = h + layer(h).gelu()
            if use_layer_norm:
                h = norm(h)
            scales.append(float(h.numpy().std()))
    return scales


scale_plain = activation_scale(use_layer_norm=False)
scale_ln = activation_scale(use_layer_norm=True)
print("std by depth, no LayerNorm:  ", np.round(scale_plain[::4], 2))
print("std by depth, with LayerNorm:", np.round(scale_ln[::4], 2))

fig, ax = plt.subplots(figsize=(7, 4))
ax.plot(scale_plain, "o-", label=label("残差，无 LayerNorm", "residual, no LayerNorm"))
ax.plot(scale_ln, "s-", label=label("残差 + LayerNorm", "residual + LayerNorm"))
ax.set_xlabel(label("经过的层数", "layers passed"))
ax.set_ylabel(label("激活值标准差", "activation std"))
ax.set_title(label("数值随深度的变化", "activation scale with depth"))
ax.set_xticks(range(0, DEPTH + 1, 2))
ax.grid(True, alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "05_layernorm_scale.png")

assert scale_plain[-1] > 5 * scale_plain[0], "without normalisation the residual stream should grow"
assert max(abs(s - 1.0) for s in scale_ln[1:]) < 0.05, "LayerNorm should hold the scale at 1"

# %% [markdown]
# 不归一化，20 层后标准差涨了十来倍，而且越往后涨得越快；每层之后做一次 LayerNorm，它每一层都稳稳地停在 1。
#
# ## 5. 为什么是 LayerNorm 而不是 BatchNorm
#
# BatchNorm 也是归一化，但它的均值和方差是沿着 **batch** 这一维、在“一批样本的同一个特征”上算的；
# LayerNorm 沿着**特征**这一维、只在“这一个位置自己的向量”上算。我们自己写一个最小的 BatchNorm（训练模式），
# 把同一个样本 `x0` 分别放进大小为 2 和 64 的 batch 里，看它被归一化成了什么。
#
# **先猜一猜**：batch 里只有 2 个样本时，BatchNorm 能把 `x0` 的一个特征归一化成哪些值？

# %%
def batch_norm(x: np.ndarray, eps: float = 1e-5) -> np.ndarray:
    """Training-mode BatchNorm without the affine part: each feature normalised over the batch axis."""
    return (x - x.mean(axis=0)) / np.sqrt(x.var(axis=0) + eps)


def layer_norm(x: np.ndarray) -> np.ndarray:
    """LayerNorm through minigrad (weight 1, bias 0): each row normalised over its own features."""
    return F.layer_norm(mg.tensor(x), x.shape[-1]).numpy()


rng = np.random.default_rng(0)
D_FEAT = 16
feature_mean = rng.normal(0, 3, D_FEAT)           # features live on different scales, as activations do
feature_std = rng.uniform(0.5, 4, D_FEAT)


def sample(n: int) -> np.ndarray:
    return (feature_mean + feature_std * rng.standard_normal((n, D_FEAT))).astype(np.float32)


x0 = sample(1)
N_DRAWS = 300
bn_of_x0 = {2: [], 64: []}
ln_of_x0 = {2: [], 64: []}
for batch_size in (2, 64):
    for _ in range(N_DRAWS):
        batch = np.concatenate([x0, sample(batch_size - 1)])   # x0 plus batch_size - 1 strangers
        bn_of_x0[batch_size].append(batch_norm(batch)[0])
        ln_of_x0[batch_size].append(layer_norm(batch)[0])
bn_of_x0 = {b: np.array(v) for b, v in bn_of_x0.items()}
ln_of_x0 = {b: np.array(v) for b, v in ln_of_x0.items()}

bn_spread = {b: float(v.std(axis=0).mean()) for b, v in bn_of_x0.items()}
ln_spread = {b: float(v.std(axis=0).mean()) for b, v in ln_of_x0.items()}
print("how much x0's normalised value moves with its batch-mates (std over draws):")
print(f"  BatchNorm: batch 2 -> {bn_spread[2]:.3f}, batch 64 -> {bn_spread[64]:.3f}")
print(f"  LayerNorm: batch 2 -> {ln_spread[2]:.1e}, batch 64 -> {ln_spread[64]:.1e}")
print("BatchNorm with a batch of 2, feature 0 of x0, first 8 draws:", np.round(bn_of_x0[2][:8, 0], 3))

fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), sharey=True)
bins = np.linspace(-2.5, 2.5, 51)
panels = [(bn_of_x0[2][:, 0], label("BatchNorm，batch = 2", "BatchNorm, batch = 2")),
          (bn_of_x0[64][:, 0], label("BatchNorm，batch = 64", "BatchNorm, batch = 64")),
          (ln_of_x0[2][:, 0], label("LayerNorm，任意 batch", "LayerNorm, any batch"))]
for ax, (values, title) in zip(axes, panels):
    ax.hist(values, bins=bins, color="tab:blue" if "Batch" in title else "tab:green")
    ax.set_title(title)
    ax.set_xlabel(label("x0 第 0 维归一化后的值", "x0 feature 0 after normalisation"))
axes[0].set_ylabel(label(f"{N_DRAWS} 个随机 batch 中出现的次数", f"count over {N_DRAWS} random batches"))
fig.suptitle(label("同一个样本，放进不同的 batch", "the same sample, in different batches"))
fig.tight_layout()
show_figure(fig, "05_batchnorm_vs_layernorm.png")

assert ln_spread[2] < 1e-5 and ln_spread[64] < 1e-5, "LayerNorm must not depend on the rest of the batch"
assert np.allclose(ln_of_x0[2][0], ln_of_x0[64][0], atol=1e-5)  # equal up to float32 rounding
assert bn_spread[2] > 0.5, "with 2 samples BatchNorm's output swings with the other sample"
assert bn_spread[2] > 3 * bn_spread[64], "a bigger batch steadies BatchNorm's statistics"
# With two samples, (x0 - mean) / std is exactly +1 or -1 (up to eps, which matters only for near-ties).
assert np.mean(np.abs(np.abs(bn_of_x0[2]) - 1.0) < 1e-2) > 0.95, "with batch 2 BatchNorm can only say +1 or -1"

# %% [markdown]
# 在只有 2 个样本的 batch 里，BatchNorm 把每个特征都变成了 $\pm 1$：它只剩下“我比另一个样本大还是小”这一点信息，
# 而且这点信息由那个陌生样本决定。batch 大到 64，统计量才稳下来。LayerNorm 对同一个样本永远给出同一个结果，
# 和 batch 里还有谁、batch 有多大都无关——这正是语言模型想要的：句子长短不一、batch 常常很小，
# 推理时甚至一次只生成一个 token。
#
# ## 6. MLP 里为什么非要一个非线性
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
W, b = W2 @ W1, W2 @ b1 + b2                     # the single matrix the two layers collapse into
one_matrix = X.numpy() @ W.T + b
print("two linear layers vs one matrix, max difference:", np.abs(two_linear - one_matrix).max())
assert np.allclose(two_linear, one_matrix, atol=1e-4)


def best_affine_fit_error(inputs: np.ndarray, outputs: np.ndarray) -> float:
    """Relative error of the best single affine map inputs -> outputs (least squares)."""
    A = np.concatenate([inputs, np.ones((len(inputs), 1))], axis=1)
    coef, *_ = np.linalg.lstsq(A, outputs, rcond=None)
    residual = outputs - A @ coef
    return float(np.linalg.norm(residual) / np.linalg.norm(outputs - outputs.mean(0)))


err_linear = best_affine_fit_error(X.numpy(), two_linear)
err_gelu = best_affine_fit_error(X.numpy(), with_gelu)
print(f"best single-matrix fit, relative error: linear-linear {err_linear:.1e} | linear-GELU-linear {err_gelu:.3f}")
assert err_linear < 1e-4
assert err_gelu > 0.05, "with GELU in between, no single matrix reproduces the MLP"

# %% [markdown]
# 没有 GELU，两层的输出和一个矩阵的输出差在第 6 位小数（那是 float32 的舍入）；有了 GELU，
# 最好的单个矩阵也还差着一截。叠 100 层线性层，表达能力仍等于一层——非线性才让“深”有了意义。
#
# ## 7. LayerNorm 放在哪里：Post-LN 与 Pre-LN
#
# 原始 Transformer 把 LayerNorm 放在残差相加**之后**：$x \leftarrow \mathrm{LN}(x + f(x))$（Post-LN）。
# GPT-2 把它挪到子层**之前**：$x \leftarrow x + f(\mathrm{LN}(x))$（Pre-LN），并在最后补一个 LayerNorm。
# 两种写法都在 `minigpt/model.py` 的 `Block.forward` 里，由 `GPTConfig(norm_position=...)` 选择：

# %%
print(inspect.getsource(Block.forward))

# %% [markdown]
# 差别只是括号的位置，却决定了那条“直通车道”是否干净：Pre-LN 里，从输入到输出有一条不经过任何 LayerNorm 的
# 纯加法通路；Post-LN 里，这条路每过一个 block 都要被 LayerNorm 重新缩放一次。
# 下面用两个 12 层的小 GPT 做对比：先看初始化时每个 block 拿到的梯度，再用同样的学习率、不加预热（warmup）训练。
#
# **先猜一猜**：同样的学习率、不加预热，12 层的 Post-LN 和 Pre-LN，谁的损失降得快？

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
        _, loss = model(x, y)        # forward
        optimizer.zero_grad()
        loss.backward()              # backward
        optimizer.step()             # update
        losses.append(loss.item())
    deep_losses[norm_position] = np.array(losses)
    print(f"{norm_position}-LN: block gradients at init {np.round(init_grads[norm_position][:3], 3)} ... "
          f"{np.round(init_grads[norm_position][-2:], 3)}; loss after {DEEP_STEPS} steps "
          f"{deep_losses[norm_position][-20:].mean():.3f} ({time.time() - t0:.1f} s)")

fig, (ax_grad, ax_loss) = plt.subplots(1, 2, figsize=(11, 4))
blocks = np.arange(DEEP_LAYERS)
ax_grad.semilogy(blocks, init_grads["post"], "o-", label="Post-LN")
ax_grad.semilogy(blocks, init_grads["pre"], "s-", label="Pre-LN (GPT-2)")
ax_grad.set_xlabel(label("第几个 block", "block"))
ax_grad.set_ylabel(label("初始化时该 block 参数的梯度范数", "gradient norm of the block at init"))
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
assert all(np.isfinite(v).all() for v in deep_losses.values()), "both variants should train without blowing up"
pre_spread = max(init_grads["pre"]) / min(init_grads["pre"])
post_spread = max(init_grads["post"]) / min(init_grads["post"])
print(f"max/min block gradient at init: pre-LN {pre_spread:.1f}, post-LN {post_spread:.1f}")
assert pre_spread < 3, "pre-LN: every block gets a gradient of about the same size"
assert final["pre"] < final["post"] - 0.1, "at this depth, without warmup, pre-LN trains faster"

# %% [markdown]
# 左图：Pre-LN 的 12 个 block 在初始化时拿到的梯度大小相近——那条纯加法通路把梯度原样送到每一层。
# Post-LN 的梯度则很不均匀：每个 block 的输出都被 LayerNorm 重新缩放，梯度大小取决于那一处的数值尺度
# （这里第 0 个 block 的 LayerNorm 面对的是很小的词向量，除以一个很小的标准差，梯度就被放大了十几倍）。
#
# 右图：同样的学习率、不加预热，Pre-LN 稳步下降，Post-LN 很快就卡住了。这不是说 Post-LN 不能用——
# 原论文靠学习率预热（先小后大）把它训练好了——而是说 Pre-LN 对超参数宽容得多，这是 GPT-2 之后的模型
# 大多改用 Pre-LN 的一个重要原因，也是 `minigpt` 的默认值。
#
# ## 小结
#
# | 问题 | 办法 | 名字 | 在代码里 |
# |---|---|---|---|
# | 一套注意力只有一种看法 | 切成几个头，各看各的（不多花参数） | 多头注意力 | `minigpt/model.py: CausalSelfAttention` |
# | 叠深了梯度传不到底层 | 每层输出加回输入 | 残差连接 | `Block.forward` 里的 `x + ...` |
# | 叠深了数值越滚越大 | 每个位置自己归一化 | LayerNorm | `minigrad/nn/layers.py: LayerNorm` |
# | 线性层叠多少层都等于一层 | 中间夹一个非线性 | MLP（GELU） | `minigpt/model.py: MLP` |
# | 深层 Post-LN 难训练 | LayerNorm 挪到子层之前 | Pre-LN | `GPTConfig(norm_position="pre")` |
#
# 下一讲（06）：模型搭好了，开始训练它，并把它变成一个会续写的 GPT。

# %%
print(f"done in {time.time() - T_START:.1f} s")

# %% [markdown]
# ## 练习
#
# 5 道练习在 `tutorials/exercises/lecture05.py` 里：数出一个 block 的参数（5.1）、LayerNorm 的前向（5.2）、
# 把通道切成几个头（5.3）、手写和 minigpt 完全一致的多头因果自注意力（5.4）、推导 LayerNorm 的反向传播（5.5）。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 05`。

# %%
from tutorials.exercises import check

check("05")
