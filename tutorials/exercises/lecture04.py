"""第 04 讲练习：位置编码。

把每个 `raise NotImplementedError` 换成你的代码，然后检查：

    python -m tutorials.exercises check 04
    from tutorials.exercises import check; check("04")   # Notebook 里

4.1–4.4 用 NumPy，4.5 用 minigrad（mg.nn.Module、mg.nn.Parameter）。
记号：第 i 对维度（i = 0, 1, ..., d/2 − 1）的角频率是 ω_i = 10000^(−2i/d)。
参考答案在 `tutorials/solutions/lecture04.py`——先自己做。
"""

import numpy as np

import minigrad as mg


# 练习 4.1 ★ 正弦余弦位置编码表
# 返回 (n_positions, dim) 的表 pe（dim 是偶数）：pe[p, 2i] = sin(p·ω_i)，pe[p, 2i + 1] = cos(p·ω_i)。
# 位置 p 从 0 数起。写好后可以和 minigpt.model.sinusoidal_table 对照。
def sinusoidal_table(n_positions: int, dim: int) -> np.ndarray:
    raise NotImplementedError


# 练习 4.2 ★★ 两个位置编码的点积
# 不查表，直接用公式算出 PE(p) · PE(p + k)，其中 PE(p) 是 4.1 表里的第 p 行。
# 提示：sin(a)sin(b) + cos(a)cos(b) = cos(a − b)。结果和 p 有关吗？
def pe_dot(k: int, dim: int) -> float:
    raise NotImplementedError


# 练习 4.3 ★★ 旋转位置编码 RoPE（minigpt 的排法）
# x 是一个 hs 维向量（hs 为偶数），记 half = hs // 2。把第 i 维和第 i + half 维配成一对（i < half），
# 整对旋转角度 position·θ_i，其中 θ_i = base^(−i/half)：
#   out[i]        = x[i]·cos − x[i + half]·sin
#   out[i + half] = x[i + half]·cos + x[i]·sin
# 返回旋转后的向量（和 minigpt.model.Rotary 对位置 position 上的向量做的一样）。
def rope(x: np.ndarray, position: int, base: float = 10000.0) -> np.ndarray:
    raise NotImplementedError


# 练习 4.4 ★★★ 相对位移是一个线性变换
# 返回 (dim, dim) 的矩阵 M，使得对每一个位置 p 都有 PE(p + k) = PE(p) @ M（PE(p) 是行向量）。
# M 只依赖 k，不依赖 p——这正是“正弦编码里藏着相对位置”的意思。
# 提示：用和角公式写出 sin(a + θ)、cos(a + θ)；每对 (sin, cos) 维度各自乘一个 2×2 的块。
def offset_matrix(k: int, dim: int) -> np.ndarray:
    raise NotImplementedError


# 练习 4.5 ★★★ 开放题：训练长度之外也管用的位置偏置（用 minigrad 写）
# 第 4 节里，可学习的位置表在训练长度之外没有那一行，只有 RoPE 管用。还有一种给位置的办法：不碰嵌入向量，
# 直接往注意力分数上加一个偏置 bias[h, i, j]（第 h 个头、位置 i 看位置 j）。
# position_bias(n_head, train_length) 返回一个 mg.nn.Module，它的 forward(T) 返回 (n_head, T, T) 的偏置
# （张量或 NumPy 数组；它可以有可学习的参数，和模型一起训练）。检查器的模型只有嵌入、一层 4 个头的因果注意力和读出层，
# 除了你的偏置，没有任何位置信息。它在长度 16 的序列上训练 400 步，再拿长度 48 的序列来考（train_length 是 16）；
# 考两道题：“输出前面第 2 个词元”和“输出前面第 5 个词元”（同一个设计，各训练一个模型）。
# 目标：两道题在训练时没见过的位置 16–47 上，答对率都 ≥ 90%。
# 先试试一张可学习的 (n_head, 16, 16) 表，看它在长度 48 上会怎样；再想想偏置该依赖什么。
def position_bias(n_head: int, train_length: int) -> mg.nn.Module:
    raise NotImplementedError
