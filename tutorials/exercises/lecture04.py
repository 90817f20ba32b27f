"""第 04 讲练习：位置编码。

把每个 `raise NotImplementedError` 换成你的代码，然后检查：

    python -m tutorials.exercises check 04
    from tutorials.exercises import check; check("04")   # Notebook 里

这一讲的练习都用 NumPy。记号：第 i 对维度（i = 0, 1, ..., d/2 − 1）的角频率是 ω_i = 10000^(−2i/d)。
参考答案在 `tutorials/solutions/lecture04.py`——先自己做。
"""

import numpy as np


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
