"""第 08 讲练习：PyTorch 为什么快——数一数内存被读了几遍。

把每个 `raise NotImplementedError` 换成你的答案，然后检查：

    python -m tutorials.exercises check 08
    from tutorials.exercises import check; check("08")   # Notebook 里

参考答案在 `tutorials/solutions/lecture08.py`——先自己做。
"""

import numpy as np


# 练习 8.1 ★ 屋顶线：一个运算至少要多久
# 一个逐元素运算处理 n 个元素，每个元素要从内存读写 bytes_per_element 字节、做 flops_per_element 次运算。
# 机器每秒能搬 bandwidth 字节、算 flops_per_second 次。搬运和计算可以同时进行，所以它至少要花的时间（秒）
# 是两者中较慢的那个。返回这个时间。
def roofline_seconds(n: int, bytes_per_element: float, flops_per_element: float, bandwidth: float,
                     flops_per_second: float) -> float:
    raise NotImplementedError


# 练习 8.2 ★★ 分块计算
# f 是一个逐元素的函数：输入一个一维 float32 数组，返回一组（tuple）和它一样长的数组（例如 gelu_and_slope 返回
# (值, 导数)）。把 x（任意形状）拉平，切成每块 block 个元素（最后一块可以短一些），逐块调用 f，把每块的结果写进事先
# 分配好的输出数组；返回和 f(x) 一样的一组数组，形状和 x 相同。每次调用 f 的块都不许超过 block 个元素。
def in_blocks(f, x: np.ndarray, block: int) -> tuple[np.ndarray, ...]:
    raise NotImplementedError


# 练习 8.3 ★★ 少几遍的多项式
# 求 c[0] + c[1] s + c[2] s² + ... + c[d] s^d（d ≥ 1，s 是数组），用秦九韶（Horner）法：
# c[d] s + c[d-1]，再乘 s、加 c[d-2]……一直到 c[0]。只许新建一个数组，之后都原地计算（`*=`、`+=`），
# 一共正好 2d 次 NumPy 运算（检查器会数）；不许修改 s。这就是 minigrad/kernels/special.py 的 Interpolant 做的事。
def horner(coefficients: list[float], s: np.ndarray) -> np.ndarray:
    raise NotImplementedError


# 练习 8.4 ★★★ 开放题：少占内存的精确 GELU
# gelu_and_slope(x)（from minigrad.fused.gelu import gelu_and_slope）算精确 GELU 的值和导数时，同时占着 5 个和 x
# 一样大的数组：2 个结果，3 个临时数组。每个临时数组都要从内存写一遍、读一遍。写一个 gelu_lean(x)，返回同样的
# (值, 导数)（float32，和 x 同形状，误差在 float32 的舍入以内），但算的过程中最多同时占 3 个这么大的数组，而且不比
# 36 遍的写法慢很多（检查器用 tracemalloc 量内存，用秒表量时间）。办法不止一种：分块（8.2），或者 out= 和原地运算。
def gelu_lean(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    raise NotImplementedError
