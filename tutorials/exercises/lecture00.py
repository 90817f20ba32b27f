"""第 00 讲练习：反向传播从零开始。

把每个 `raise NotImplementedError` 换成你的代码，然后检查：

    python -m tutorials.exercises check 00          # 终端里，任意目录
    from tutorials.exercises import check; check("00")   # Notebook 里

检查器会告诉你哪一题对了；错了的话，用一句话说出错在哪（哪个元素、应为多少、你的是多少，或者一个提示）。
难度：★ 照着讲义写一遍；★★ 自己动手写；★★★ 先推导，再实现。
参考答案在 `tutorials/solutions/lecture00.py`——先自己做，卡住了再看。
"""

import numpy as np

import minigrad as mg


# 练习 0.1 ★ 中心差分
# 用中心差分估计 f 在 x 处的导数：(f(x + h) - f(x - h)) / (2h)。
# 讲义第 1 节画过它和前向差分的误差曲线：同样的 h，中心差分准得多。
def central_difference(f, x: float, h: float = 1e-5) -> float:
    raise NotImplementedError


# 练习 0.2 ★ 乘法的反向传播
# minigrad 里一个运算就是一个 mg.Function 子类：forward 和 backward 并排写，都在 NumPy 数组上计算。
# 前向已经写好了。补上 backward：收到输出的梯度 gy，返回两个输入各自的梯度，写成元组 (ga, gb)。
# 提示：z = a * b，∂z/∂a = b，∂z/∂b = a；别忘了链式法则要乘上 gy。
# 写好后检查器会用 mg.gradcheck（中心差分）核对，也会试 a、b 形状不同（广播）的情况。
class Mul(mg.Function):
    """z = a * b (elementwise)."""

    def forward(self, a, b):
        self.a, self.b = a, b  # save exactly what backward needs
        return a * b

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.3 ★★ tanh 的反向传播
# 前向把输出 y = tanh(x) 存在 self.y 上。用 y（而不是 x）写出 backward。
class Tanh(mg.Function):
    """y = tanh(x)."""

    def forward(self, x):
        self.y = np.tanh(x)
        return self.y

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.5 ★★★ 除法的反向传播
# z = a / b。先自己推出 ∂z/∂a 和 ∂z/∂b，再写 backward，返回 (ga, gb)。
class Div(mg.Function):
    """z = a / b (elementwise)."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a / b

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.6 ★★ n 阶导数：对导数再求导
# f 对张量逐元素作用（例如 lambda t: t.sin() * t）。返回 f 在 x 的每个元素处的 n 阶导数（n ≥ 1），形状同 x。
# 讲义第 7 节对 tanh 做过：mg.grad(..., create_graph=True) 返回的导数带着自己的计算图，可以接着求导。
# x 有多个元素时 f(x) 不是标量：讲义 7.1 节画导数曲线时用了什么办法？
def nth_derivative(f, x: mg.Tensor, n: int) -> mg.Tensor:
    raise NotImplementedError


# 练习 0.7 ★★★ 开放题：用实验找最快的学习率
# 讲义第 7 节从一排学习率里挑了最快的一个。这里把它做成一个实验：steps_with(lr) 用学习率 lr 跑一次梯度下降，
# 返回走到谷底（误差 < 1e-10）用了几步；发散（或 3000 步还没到）时返回 None。你事先不知道学习率的量级。
# 返回一个学习率，它用的步数不超过检查器细扫 600 个学习率找到的最少步数的 1.15 倍。
# 检查器在三个你没见过的山谷 cosh(a·x) − b·x 上考，每个山谷最多让你跑 60 次。
def fastest_learning_rate(steps_with) -> float:
    raise NotImplementedError
