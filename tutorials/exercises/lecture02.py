"""第 02 讲练习：RNN、梯度消失与 Attention 的诞生。

把每个 `raise NotImplementedError` 换成你的代码，然后检查：

    python -m tutorials.exercises check 02
    from tutorials.exercises import check; check("02")   # Notebook 里

2.1–2.3 用 minigrad 的张量运算写（输入是 mg.Tensor，输出也要是 mg.Tensor，梯度才能传回去）；
2.4、2.5 用 NumPy。本讲约定行向量：一批输入 x 的形状是 (B, E)，状态 h 是 (B, H)，乘法写成 x @ W。
参考答案在 `tutorials/solutions/lecture02.py`——先自己做。
"""

import numpy as np

import minigrad as mg


# 练习 2.1 ★ RNN 的一步
# h_new = tanh(x @ W_xh + h @ W_hh + b)。x (B, E)，h (B, H)，W_xh (E, H)，W_hh (H, H)，b (H,)。
def rnn_step(x: mg.Tensor, h: mg.Tensor, W_xh: mg.Tensor, W_hh: mg.Tensor, b: mg.Tensor) -> mg.Tensor:
    raise NotImplementedError


# 练习 2.2 ★★ GRU 的一步
# 三组权重并排放在一个矩阵里，按 [r | z | n] 的顺序各占 H 列：W_x (E, 3H)，W_h (H, 3H)，b_x、b_h (3H,)。
# 记 a = x @ W_x + b_x，c = h @ W_h + b_h，各切成三段 a_r, a_z, a_n 和 c_r, c_z, c_n：
#   r = sigmoid(a_r + c_r)          重置门：写新内容时参考多少旧状态
#   z = sigmoid(a_z + c_z)          更新门：保留多少旧状态
#   n = tanh(a_n + r * c_n)         候选的新状态
#   h_new = (1 - z) * n + z * h
def gru_step(x: mg.Tensor, h: mg.Tensor, W_x: mg.Tensor, W_h: mg.Tensor, b_x: mg.Tensor,
             b_h: mg.Tensor) -> mg.Tensor:
    raise NotImplementedError


# 练习 2.3 ★★ 解码器回头看：注意力
# 解码器状态 s (B, H)，编码器的所有状态 enc (B, L, H)，W_a (H, H)。
# 打分：score[b, j] = enc[b, j] · (s[b] @ W_a)；权重 = 沿 j 做 softmax；上下文 context[b] = Σ_j 权重[b, j] · enc[b, j]。
# 返回 (context (B, H), weights (B, L))。
def attention_context(s: mg.Tensor, enc: mg.Tensor, W_a: mg.Tensor) -> tuple[mg.Tensor, mg.Tensor]:
    raise NotImplementedError


# 练习 2.4 ★★★ 一步的雅可比矩阵
# 对单个样本，h_new = tanh(x @ W_xh + h @ W_hh + b)。已知 h_new (H,) 和 W_hh (H, H)，
# 返回 (H, H) 的雅可比矩阵 J，J[i, j] = ∂h_new[i] / ∂h[j]。先在纸上推出来（提示：(h @ W)[i] = Σ_j h[j]·W[j, i]）。
def step_jacobian(h_new: np.ndarray, W_hh: np.ndarray) -> np.ndarray:
    raise NotImplementedError


# 练习 2.5 ★★★ 梯度一步一步往回传
# 隐藏状态 h_0, h_1, ..., h_T；jacobians[t] = ∂h_{t+1}/∂h_t（t = 0 .. T-1，每个都是 (H, H)，按 2.4 的约定）；
# g_last = ∂L/∂h_T（形状 (H,)）。用链式法则从后往前传，返回长度 T + 1 的列表：
# 第 k 个是 ‖∂L/∂h_{T-k}‖（k = 0 就是 ‖g_last‖）。
# 检查器通过后，会把它用在一个真的 tanh RNN 上，告诉你 30 步之后梯度还剩多少。
def gradient_norms(jacobians: list[np.ndarray], g_last: np.ndarray) -> list[float]:
    raise NotImplementedError


# 练习 2.6 ★★★ 开放题：让梯度活过 30 步的最小门偏置
# 讲义第 3 节看到：GRU 的更新门偏置为正时，旧状态按比例 z 直接抄到下一步，梯度能走得更远。要多大才够？
# ratio_at(bias) 替你做一次实验：给一个没训练过的 GRU 的更新门加上偏置 bias，量出 30 步之前的输入收到的梯度
# 与最后一步输入收到的梯度之比（讲义第 2 节的量法）。返回让这个比值不低于 target 的最小偏置，误差在 0.25 以内。
# 检查器用两个你没见过的单元来考（target 分别是 0.1 和 0.01），每个单元最多量 40 次：比值随偏置单调上升。
def surviving_bias(ratio_at, target: float) -> float:
    raise NotImplementedError
