"""第 03 讲练习：Attention 独立——QKV 与 Self-Attention。

把每个 `raise NotImplementedError`（或 `None`）换成你的答案，然后检查：

    python -m tutorials.exercises check 03
    from tutorials.exercises import check; check("03")   # Notebook 里

3.1–3.3 和 3.6 用 minigrad 的张量运算写（矩阵乘法 `@`、`exp`、`sum`、`max`、`masked_fill`、`softmax` 都有）。
交换最后两维请用 `k.swapaxes(-1, -2)`。
参考答案在 `tutorials/solutions/lecture03.py`——先自己做。
"""

import numpy as np

import minigrad as mg


# 练习 3.1 ★ 数值稳定的 softmax
# 沿最后一维做 softmax，只用基本运算（不许调用 .softmax 或 F.softmax）。
# 输入里可能有 1000 这样的大数：exp(1000) 会溢出。先减去每行的最大值——softmax(x − c) = softmax(x)。
# 这个答案会装进你自己的 GPT（第 09 讲，tutorials/09_capstone.py）：注意力里的 softmax（你的 3.3 调用它）。
def softmax(x: mg.Tensor) -> mg.Tensor:
    raise NotImplementedError


# 练习 3.2 ★★ 缩放点积注意力
# q (B, Tq, d)、k (B, Tk, d)、v (B, Tk, dv) -> softmax(q kᵀ / √d) v，形状 (B, Tq, dv)。
# Tq 和 Tk 可以不同（检查器两种都会试）。
def attention(q: mg.Tensor, k: mg.Tensor, v: mg.Tensor) -> mg.Tensor:
    raise NotImplementedError


# 练习 3.3 ★★ 因果注意力
# 同 3.2，但 Tq == Tk，并且位置 i 只能看见位置 j ≤ i：在 softmax 之前，把 j > i 的分数设成 −∞。
# softmax 用你在 3.1 写的 softmax（上面那个函数；检查这一题时 minigrad 自己的 softmax 会拒绝运行）。
# 提示：np.triu(np.ones((T, T), dtype=bool), k=1) 在对角线以上为 True；Tensor.masked_fill(mask, value)。
# 这个函数会装进你的 GPT（第 09 讲）：那里的 q、k、v 是四维的 (B, nh, T, hs)，检查器也会这样试——
# 时间那一维用 q.shape[-2]，缩放用 q.shape[-1]（不要写死成 shape[1]、shape[2]）。
# 这个答案会装进你自己的 GPT（第 09 讲，tutorials/09_capstone.py）：每个 Block 的因果注意力。
def causal_attention(q: mg.Tensor, k: mg.Tensor, v: mg.Tensor) -> mg.Tensor:
    raise NotImplementedError


# 练习 3.4 ★★★ 分数有多大（填数题，写成函数）
# q 和 k 是两个 d_k 维向量，每一维都是独立的标准正态随机数（均值 0、方差 1）。
# 返回点积 q·k 的标准差；scaled=True 时返回 q·k / √d_k 的标准差。先推导，再写出来。
def score_std(d_k: int, scaled: bool) -> float:
    raise NotImplementedError


# 练习 3.5 ★★★ softmax 的反向传播
# 前向已经写好，输出 y = softmax(x)（沿最后一维）存在 self.y 上。推导 backward：
# 每个 y_i 都依赖同一行的所有 x_j，∂y_i/∂x_j = y_i (δ_ij − y_j)。把它和上游梯度 gy 合起来，
# 化简成不需要构造 (V, V) 矩阵的形式（提示：会出现 Σ_i gy_i · y_i 这一项）。
class Softmax(mg.Function):
    """y = softmax(x) along the last axis."""

    def forward(self, x):
        e = np.exp(x - x.max(axis=-1, keepdims=True))
        self.y = e / e.sum(axis=-1, keepdims=True)
        return self.y

    def backward(self, gy):
        raise NotImplementedError


# 练习 3.6 ★★★ 开放题：不用遮罩，代词也看向正确的名词
# 第 2 节的“代词找名词”只许代词看句中的名词（遮罩），因为不加遮罩时模型找到了捷径：答案对了，注意力却没看向正确的名词。
# 不用遮罩（代词可以看句中的每一个词），能不能让它答对、并且真的看向正确的名词？
# pronoun_model(vocab_size, seq, d) 返回一个 mg.nn.Module，forward(ids) 对 (B, 9) 的句子返回 (logits, p)：
# logits (B, vocab_size) 是“代词指哪个词”的分数，p (B, 9, 9) 是注意力权重（检查器看代词那一行 p[:, 5]）。
# 检查器像第 2 节那样训练它（AdamW，学习率 3e-3，每步 64 句，300 步，损失是 logits 的交叉熵），换 3 个随机种子，
# 每次把词重新编号（所以没法事先知道哪些编号是名词），在没见过的句子上量：
# 正确率平均 ≥ 95%，代词放在正确名词上的注意力权重平均 ≥ 0.5（一半以上的注意力落在它上面）。
# 先把第 2 节的 PronounAttention 去掉遮罩，量一量它差在哪里；再想想：怎样让答案只能从被看的那个词来？
def pronoun_model(vocab_size: int, seq: int, d: int) -> mg.nn.Module:
    raise NotImplementedError
