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
# # 00 反向传播从零开始
#
# 后面每一讲都要“训练”一个模型：算出损失，再让每个参数朝着让损失变小的方向挪一点。
# 要知道往哪个方向挪，就得知道损失对每个参数的导数（梯度）。这一讲回答一个问题：
#
# > **成千上万个参数的梯度，计算机是怎么一次算出来的？**
#
# 我们分八步走，每一步都是一个你能亲手跑、亲眼看到结果的小实验：
#
# 1. 手算一个导数，再用数值方法（有限差分）核对；
# 2. 在一个小算式上走一遍链式法则；
# 3. 在本文件里写一个约 60 行的标量自动求导引擎 `Value`，并踩一次 `b = a + a` 的坑；
# 4. 换成 minigrad 的张量，用 `mg.gradcheck` 检查梯度；
# 5. 看清广播（broadcasting）为什么要求反向传播里有 `sum_to`；
# 6. 把计算图画出来，一帧一帧地看反向传播；
# 7. 对梯度再求导：tanh 的高阶导数、牛顿法、海森矩阵乘向量；
# 8. 你自己的张量引擎：骨架和每个运算的反向传播怎么推（练习 0.8–0.26 把它写出来，第 09 讲你的 GPT 跑在它上面）。
#
# 每个结论后面都跟着一个 `assert`：如果哪天代码改坏了、结论不再成立，运行本文件就会报错。
#
# 运行：`python tutorials/00_autograd.py`（设 `TUTORIAL_QUICK=1` 跑快速版）。图片写到当前目录的 `figures/`。

# %% [markdown]
# **学完这一讲，你能**：用中心差分核对任何一个导数，并说清步长 $h$ 为什么不能太大也不能太小；
# 写出一个运算的 `backward`（一个 `mg.Function` 子类），并用 `mg.gradcheck` 证明它是对的；
# 解释一个值用了两次、或者被广播过时，它的梯度为什么要加起来；
# 用 `mg.grad(..., create_graph=True)` 对梯度再求导，并说清二阶导数为什么让牛顿法几步就收敛；
# 只用 NumPy 写出一个张量自动求导引擎（拓扑序、反向传播、每个运算的梯度，包括矩阵乘法和查表）。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（在 2 核 CPU 上实测）；最后有 26 道练习，
# 其中 20 道（0.4、0.8–0.26）合起来是你自己的引擎。

# %%
from tutorials.course import FIGURES, QUICK, draw_graph, label, show_figure  # 最先导入：它限定 BLAS 线程数

# isort: split
import math

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad.core.autograd import sum_to

mg.manual_seed(0)
rng = np.random.default_rng(0)

# %% [markdown]
# ## 1. 导数：先手算，再数值核对
#
# 取 $f(x) = x^3 - 2x + 1$。按求导法则，$f'(x) = 3x^2 - 2$，在 $x = 1.5$ 处等于 $4.75$。
#
# 导数的定义是“输入挪一点点，输出挪多少”。所以不用任何公式也能估它：
#
# - 前向差分：$\dfrac{f(x+h) - f(x)}{h}$，误差与 $h$ 成正比；
# - 中心差分：$\dfrac{f(x+h) - f(x-h)}{2h}$，一阶误差左右抵消，误差与 $h^2$ 成正比。
#
# 但 $h$ 也不能无限小：计算机的浮点数只有约 16 位有效数字，两个几乎相等的数相减，
# 有效数字会大量丢失（舍入误差约为 $10^{-16}/h$）。下面把误差随 $h$ 的变化画出来。
#
# **先猜一猜**：$h$ 从 $10^{-1}$ 一路缩小到 $10^{-13}$，中心差分的误差会一直变小吗？如果不会，它在哪个 $h$ 附近最小？
# 先写下你的猜测，再运行下面两格。
#
# 下一格记下你的猜测：先把其中的“还没猜”换成你自己的猜测，再往下运行（不猜也能运行，但不计分）；
# 揭晓时实测值会印在它旁边，讲末给出校准得分。

# %%
from tutorials.predictions import Predictions

my_guesses = Predictions("00", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_00.json）
my_guesses.guess("best_h", "还没猜", "中心差分的误差在哪个 h 附近最小")  # 换成你的猜测

# %%
def f(x):
    return x**3 - 2 * x + 1


def df(x):  # 手算的导数
    return 3 * x**2 - 2


x0 = 1.5
hs = np.logspace(-13, -1, 49)
forward_err = np.array([abs((f(x0 + h) - f(x0)) / h - df(x0)) for h in hs])
central_err = np.array([abs((f(x0 + h) - f(x0 - h)) / (2 * h) - df(x0)) for h in hs])

h_demo = 1e-5
print(f"手算：             f'(1.5) = {df(x0)}")
print(f"前向差分，h=1e-5：{(f(x0 + h_demo) - f(x0)) / h_demo:.10f}")
print(f"中心差分，h=1e-5：{(f(x0 + h_demo) - f(x0 - h_demo)) / (2 * h_demo):.10f}")

# %%
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.loglog(hs, forward_err, "o-", ms=3,
          label=label("前向差分  (f(x+h) − f(x)) / h", "forward difference  (f(x+h) - f(x)) / h"))
ax.loglog(hs, central_err, "s-", ms=3,
          label=label("中心差分  (f(x+h) − f(x−h)) / 2h", "central difference  (f(x+h) - f(x-h)) / 2h"))
ax.set_xlabel(label("步长 h", "step h"))
ax.set_ylabel(label("|数值估计 − 精确值|", "|numeric - exact|"))
ax.set_title(label("有限差分：截断误差（右）与舍入误差（左）",
                   "Finite differences: truncation error (right) vs rounding error (left)"))
ax.grid(True, which="major", alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "00_finite_differences.png")
my_guesses.reveal("best_h", hs[np.argmin(central_err)])

# %% [markdown]
# 图中右半边是截断误差：前向差分的线斜率约为 1（误差 ∝ h），中心差分约为 2（误差 ∝ h²）。
# 左半边 h 太小，舍入误差占上风，两条线一起抬头。中心差分在 $h \approx 10^{-5}$ 附近最准，
# 这也是后面 `gradcheck` 用中心差分、并且在 float64 下计算的原因。

# %%
i_demo = np.argmin(abs(hs - h_demo))
best_central = central_err.min()
assert central_err[i_demo] < 1e-8, central_err[i_demo]
assert central_err[i_demo] < forward_err[i_demo] / 1000  # 同样的 h，中心差分准得多
assert central_err[0] > 100 * best_central  # h 太小反而更差：舍入误差占了上风
slope_forward = np.polyfit(np.log(hs[-12:]), np.log(forward_err[-12:]), 1)[0]
slope_central = np.polyfit(np.log(hs[-12:]), np.log(central_err[-12:]), 1)[0]
print(f"h 较大时双对数图上的斜率：前向差分 {slope_forward:.2f}（应为 1），中心差分 {slope_central:.2f}（应为 2）")
assert abs(slope_forward - 1) < 0.15 and abs(slope_central - 2) < 0.15

# %% [markdown]
# ## 2. 链式法则：一个小算式
#
# 数值方法每个输入要算两次 $f$：一百万个参数就要两百万次前向计算，太慢了。
# 反向传播只需要一次前向、一次反向。它靠的是**链式法则**：如果 $L$ 依赖 $d$，$d$ 又依赖 $a$，
# 那么 $\frac{\partial L}{\partial a} = \frac{\partial L}{\partial d}\cdot\frac{\partial d}{\partial a}$。
#
# 看一个小算式（中间结果都起了名字）：
#
# $$e = a \cdot b,\qquad d = e + c,\qquad L = d \cdot g$$
#
# 从最后往前推，每一步只需要“本地导数”：
#
# | 量 | 怎么来的 | 梯度 |
# |---|---|---|
# | $\partial L/\partial d$ | $L = d\cdot g$ | $g$ |
# | $\partial L/\partial g$ | $L = d\cdot g$ | $d$ |
# | $\partial L/\partial e$ | 加法把梯度原样传下去 | $\partial L/\partial d \cdot 1$ |
# | $\partial L/\partial c$ | 同上 | $\partial L/\partial d \cdot 1$ |
# | $\partial L/\partial a$ | 乘法：乘上“另一个”输入 | $\partial L/\partial e \cdot b$ |
# | $\partial L/\partial b$ | 同上 | $\partial L/\partial e \cdot a$ |

# %%
a, b, c, g = 2.0, -3.0, 10.0, -2.0
e = a * b
d = e + c
L = d * g

dL_dd = g
dL_dg = d
dL_de = dL_dd * 1.0
dL_dc = dL_dd * 1.0
dL_da = dL_de * b
dL_db = dL_de * a
by_hand = {"a": dL_da, "b": dL_db, "c": dL_dc, "g": dL_dg}
print("L =", L)
print("链式法则手算的梯度：", by_hand)


def L_of(a, b, c, g):
    return (a * b + c) * g


h = 1e-6
args = {"a": a, "b": b, "c": c, "g": g}
numeric = {}
for name in args:
    plus, minus = dict(args), dict(args)
    plus[name] += h
    minus[name] -= h
    numeric[name] = (L_of(**plus) - L_of(**minus)) / (2 * h)
print("中心差分估计的梯度：", {k: round(v, 6) for k, v in numeric.items()})
for name in args:
    assert abs(by_hand[name] - numeric[name]) < 1e-6, name

# %% [markdown]
# 注意两件事：
#
# - 反向时，每个节点只做一件小事——把收到的梯度乘上自己的本地导数，分给输入。
# - 顺序很重要：处理 $e$ 之前，$e$ 的梯度必须已经**收齐**。这就是为什么要按拓扑顺序的逆序走。
#
# ## 3. 60 行的标量自动求导引擎
#
# 把上面的手工过程交给代码。`Value` 包着一个数，记住它由哪个运算、从哪些输入算来；
# 每个运算在前向时顺手定义一个 `_backward`，反向时把梯度按本地导数分给输入。
# 反向传播本身只有两步：**排拓扑序**，然后**逆序应用链式法则**。
#
# 梯度“交给”输入的那一步，我们单独写成 `_deposit` 方法——下面马上会看到它为什么值得单独拎出来。

# %%
class Value:
    """一个标量，记得自己是怎么算出来的，所以能做反向传播。"""

    def __init__(self, data, parents=(), op=""):
        self.data = float(data)
        self.grad = 0.0
        self._parents = parents  # 算出它的那几个 Value
        self._op = op
        self._backward = lambda: None  # 把 self.grad 分给 parents

    def _deposit(self, g):
        self.grad += g  # 用了两次的 Value 会收到两份梯度：加起来

    def _lift(self, other):
        return other if isinstance(other, Value) else type(self)(other)

    def __add__(self, other):
        other = self._lift(other)
        out = type(self)(self.data + other.data, (self, other), "+")

        def _backward():  # d(x+y)/dx = 1，d(x+y)/dy = 1
            self._deposit(out.grad)
            other._deposit(out.grad)

        out._backward = _backward
        return out

    def __mul__(self, other):
        other = self._lift(other)
        out = type(self)(self.data * other.data, (self, other), "*")

        def _backward():  # d(xy)/dx = y，d(xy)/dy = x
            self._deposit(other.data * out.grad)
            other._deposit(self.data * out.grad)

        out._backward = _backward
        return out

    def __pow__(self, k):  # k 是一个普通的数
        out = type(self)(self.data**k, (self,), f"**{k}")
        out._backward = lambda: self._deposit(k * self.data ** (k - 1) * out.grad)
        return out

    def tanh(self):
        t = math.tanh(self.data)
        out = type(self)(t, (self,), "tanh")
        out._backward = lambda: self._deposit((1 - t * t) * out.grad)  # d tanh(x)/dx = 1 - tanh(x)^2
        return out

    def exp(self):
        out = type(self)(math.exp(self.data), (self,), "exp")
        out._backward = lambda: self._deposit(out.data * out.grad)  # d exp(x)/dx = exp(x)
        return out

    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self):
        return self * -1

    def __sub__(self, other):
        return self + (-self._lift(other))

    def __truediv__(self, other):
        return self * self._lift(other) ** -1

    def backward(self):
        # 第 1 步：把计算图排成拓扑序（用显式的栈，不受递归深度限制）。
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            v, parents_done = stack.pop()
            if parents_done:
                order.append(v)
            elif id(v) not in seen:
                seen.add(id(v))
                stack.append((v, True))
                stack.extend((p, False) for p in v._parents)
        # 第 2 步：从输出往回到输入，逐个应用链式法则。
        self.grad = 1.0
        for v in reversed(order):
            v._backward()

    def __repr__(self):
        return f"Value(data={self.data:.4g}, grad={self.grad:.4g})"


# %% [markdown]
# 用它重算第 2 节的算式，应该与手算的梯度一字不差：

# %%
va, vb, vc, vg = Value(a), Value(b), Value(c), Value(g)
vL = (va * vb + vc) * vg
vL.backward()
print(va, vb, vc, vg)
for name, v in zip("abcg", (va, vb, vc, vg)):
    assert v.grad == by_hand[name], name

# %% [markdown]
# 再来一个像样一点的例子：一个神经元 $\tanh(w_1x_1 + w_2x_2 + b)$，外加一个 $e^{\cdot}$ 和除法，
# 拿引擎的梯度和中心差分比。

# %%
def neuron(x1, x2, w1, w2, bias):
    y = (x1 * w1 + x2 * w2 + bias).tanh()
    return (y * y).exp() / (y - 3)


inputs = {"x1": 2.0, "x2": 0.5, "w1": -0.7, "w2": 1.3, "bias": 0.4}
vals = {k: Value(v) for k, v in inputs.items()}
out = neuron(**vals)
out.backward()


def neuron_float(**kw):
    y = math.tanh(kw["x1"] * kw["w1"] + kw["x2"] * kw["w2"] + kw["bias"])
    return math.exp(y * y) / (y - 3)


for name in inputs:
    plus, minus = dict(inputs), dict(inputs)
    plus[name] += 1e-6
    minus[name] -= 1e-6
    num = (neuron_float(**plus) - neuron_float(**minus)) / 2e-6
    print(f"{name:5s} 引擎 {vals[name].grad:+.8f}   数值 {num:+.8f}")
    assert abs(vals[name].grad - num) < 1e-7, name

# %% [markdown]
# ### 陷阱：`b = a + a`
#
# 一个值被用了两次，反向时就会从两条路各收到一份梯度。$b = a + a = 2a$，所以 $\partial b/\partial a = 2$。
# 如果“交付梯度”时写成了 `=` 而不是 `+=`，第二份梯度会**覆盖**第一份——下面故意写错看看。
#
# **先猜一猜**：下面第二个例子 $z = y^2 + x$、$y = x + x$，在 $x = 3$ 处正确的 $dz/dx$ 是 25。
# 错误版本会给出多少？它会报错吗？

# %%
my_guesses.guess("buggy_dzdx", "还没猜", "覆盖梯度的引擎给出的 dz/dx")  # 换成你的猜测

# %%
class BuggyValue(Value):
    def _deposit(self, g):
        self.grad = g  # 错误：把这个值另一处用途已经送来的梯度覆盖掉了


def simplest(cls):
    a = cls(3.0)
    b = a + a  # db/da = 2
    b.backward()
    return a.grad


print("b = a + a：正确的引擎 db/da =", simplest(Value), "  有错的引擎 db/da =", simplest(BuggyValue))
assert simplest(Value) == 2.0
assert simplest(BuggyValue) == 1.0  # 第二条路的梯度覆盖了第一条路的


def twice(cls):
    x = cls(3.0)
    y = x + x  # db/dx = 2
    z = y * y + x  # dz/dx = 2y * 2 + 1 = 4*(2x) + 1，x = 3 时为 25
    z.backward()
    return x.grad


print("正确的引擎：dz/dx =", twice(Value))
print("有错的引擎：dz/dx =", twice(BuggyValue))
my_guesses.reveal("buggy_dzdx", twice(BuggyValue))
assert twice(Value) == 25.0
assert twice(BuggyValue) != 25.0  # 覆盖悄悄丢了梯度：答案错了，却不报任何错

# %% [markdown]
# 错的版本**不报错**，只是悄悄给出错误的数——这正是它危险的地方。
# 修复就是 `Value._deposit` 里的那个 `+=`：梯度累加。minigrad 的引擎在 `minigrad/core/autograd.py` 里做同样的事，
# 另外还要小心“别把同一块数组原地加两次”（见那里关于 `owned` 的注释）。
#
# ## 4. 换成张量：minigrad
#
# `Value` 一次只处理一个数。神经网络里的数成千上万，逐个建节点太慢。minigrad 把“一个节点”
# 换成“一整个数组”（张量），每个运算的前向和反向都用 NumPy 整块计算，思路完全相同。
# 先用它重算第 3 节的神经元：

# %%
tv = {k: mg.tensor(v, requires_grad=True, dtype="float64") for k, v in inputs.items()}
y = (tv["x1"] * tv["w1"] + tv["x2"] * tv["w2"] + tv["bias"]).tanh()
t_out = (y * y).exp() / (y - 3)
t_out.backward()
for name in inputs:
    print(f"{name:5s} minigrad {tv[name].grad.item():+.10f}   Value {vals[name].grad:+.10f}")
    assert abs(tv[name].grad.item() - vals[name].grad) < 1e-12

# %% [markdown]
# 真正的用法是整块的：一层 $\tanh(XW + b)$。`mg.gradcheck(fn, inputs)` 对每个 `requires_grad=True` 的输入
# 逐个元素做中心差分，和反向传播的结果比对；全部吻合返回 `True`，否则抛出 `mg.GradcheckError`，
# 信息里写明是哪个输入、哪个元素、两个值各是多少。

# %%
X = mg.tensor(rng.standard_normal((4, 3)), dtype="float64")
W = mg.tensor(rng.standard_normal((3, 5)), requires_grad=True, dtype="float64")
bias = mg.tensor(rng.standard_normal(5), requires_grad=True, dtype="float64")


def layer(W, bias):
    return (X @ W + bias).tanh()


assert mg.gradcheck(layer, [W, bias])
print("tanh(X @ W + b) 通过了 gradcheck")

# %% [markdown]
# `gradcheck` 本身靠得住吗？我们故意写一个反向传播有错的运算：$\sin$ 的导数应该是 $\cos$，
# 我们却写成 $-\cos$。在 minigrad 里，一个运算就是一个 `mg.Function` 子类，前向和反向并排写：

# %%
class WrongSin(mg.Function):
    """y = sin(x)；真正的导数是 cos(x)，这里的 backward 故意写错。"""

    def forward(self, x):
        self.x = x
        return np.sin(x)

    def backward(self, gy):
        return -np.cos(self.x) * gy  # 符号错了


class Sin(mg.Function):
    """y = sin(x); dy/dx = cos(x)."""

    def forward(self, x):
        self.x = x
        return np.sin(x)

    def backward(self, gy):
        return np.cos(self.x) * gy


xs = mg.tensor(rng.standard_normal(6), requires_grad=True, dtype="float64")
assert mg.gradcheck(lambda x: Sin.apply(x), [xs])
try:
    mg.gradcheck(lambda x: WrongSin.apply(x), [xs])
    caught = None
except mg.GradcheckError as error:
    caught = str(error)
print("WrongSin 被抓住：", caught)
assert caught is not None and "analytic" in caught

# %% [markdown]
# ## 5. 广播与 `sum_to`
#
# 给一批样本加同一个偏置：`X` 形状 `(4, 3)`，`b` 形状 `(3,)`，`X + b` 时 NumPy 把 `b` 悄悄“复制”成 4 行。
# 反向时，输出的梯度是 `(4, 3)`，而 `b` 只有 3 个数——4 份拷贝都用到了同一个 `b`，
# 就像 `b = a + a` 里一样，**各份拷贝的梯度要加起来**。所以 `b` 的梯度是输出梯度按行求和。
#
# 这件事与具体运算无关（加、乘、除……只要有广播都会发生），所以 minigrad 把它放在引擎里统一做一次：
# 每个运算的 `backward` 返回“广播后形状”的梯度，引擎再用 `minigrad.core.autograd.sum_to` 把它求和回输入的形状。
#
# **先猜一猜**：下面 `(Xb + bb).backward(upstream)` 之后，`bb.grad` 的形状是 `(4, 3)` 还是 `(3,)`？
# 它的第 0 个元素等于什么？

# %%
my_guesses.guess("bias_grad_shape", "还没猜", "bb.grad 的形状", options=["(4, 3)", "(3,)"])

# %%
Xb = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True, dtype="float64")
bb = mg.tensor(rng.standard_normal(3), requires_grad=True, dtype="float64")
upstream = rng.standard_normal((4, 3))
(Xb + bb).backward(upstream)
print("输出梯度的形状：", upstream.shape, "  b.grad 的形状：", tuple(bb.grad.shape))
print("b.grad            =", bb.grad.numpy())
print("upstream.sum(0)   =", upstream.sum(axis=0))
my_guesses.reveal("bias_grad_shape", str(tuple(bb.grad.shape)))
assert bb.grad.shape == bb.shape
assert np.allclose(bb.grad.numpy(), upstream.sum(axis=0))
assert np.allclose(sum_to(upstream, (3,)), upstream.sum(axis=0))

# %% [markdown]
# 维度为 1 的轴也会被广播。形状 `(3, 1)` 的张量广播到 `(2, 3, 4)`：新增的第 0 轴和被拉长的最后一轴都要求和：

# %%
ones_234 = np.ones((2, 3, 4))
print("sum_to(ones(2,3,4), (3,1)) =", sum_to(ones_234, (3, 1)).ravel(), "（每个元素：2 × 4 份拷贝）")
assert sum_to(ones_234, (3, 1)).shape == (3, 1) and np.all(sum_to(ones_234, (3, 1)) == 8)

# 如果反向传播“忘了”求和，梯度的形状就不对，数值也不对。gradcheck 确认引擎的处理是对的：
col = mg.tensor(rng.standard_normal((3, 1)), requires_grad=True, dtype="float64")
cube = mg.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True, dtype="float64")
assert mg.gradcheck(lambda col, cube: (col * cube).tanh(), [col, cube])
print("(3, 1) 的张量广播到 (2, 3, 4)：通过了 gradcheck")

# %% [markdown]
# ## 6. 把计算图画出来
#
# minigrad 记录的图可以用 `mg.viz.to_dot` 导出为 Graphviz 的 DOT 文本（不需要安装任何程序），
# 装了 `dot` 程序时还能直接渲染成图片。我们画第 4 节那一层网络再求平均的图：每个方框是一个运算，
# 标着它的名字和输出形状。

# %%
W2 = mg.tensor(rng.standard_normal((3, 5)), requires_grad=True)
b2 = mg.tensor(rng.standard_normal(5), requires_grad=True)
X2 = mg.tensor(rng.standard_normal((4, 3)))
loss = (X2 @ W2 + b2).tanh().mean()

names = {"X": X2, "W": W2, "b": b2}  # 叶子节点标上名字，而不是编号
dot_source = mg.viz.to_dot(loss, names=names)
mg.viz.draw_to_file(loss, FIGURES / "00_graph.dot", names=names)  # 同样的 DOT 文本，写进 figures/
print(dot_source[:400], "...")
assert dot_source.lstrip().startswith("digraph")
for op_name in ("MatMul", "Add", "Tanh", "Mean"):
    assert op_name in dot_source, op_name

graph_png = draw_graph(loss, "00_graph", names=names)  # 没有 Graphviz 的 `dot` 时只写出 .dot，并说明要装什么
if graph_png is not None:
    print("已画出", graph_png)

# %% [markdown]
# ### 反向传播，一帧一帧
#
# `mg.viz.backward_frames(loss, out_dir)` 跟着引擎的反向传播，每当一个张量的梯度收齐就画一帧：
# 粗黑框是刚收齐梯度的那个张量，颜色和数字是各个梯度的大小（范数），还没轮到的梯度暂不显示。
# 翻看 `figures/00_backward_frames/` 里的帧（或打开同目录的 `backward.gif`、`backward.html`），
# 你会看到梯度从 `loss` 出发，按拓扑序的逆序一路流回 `W` 和 `b`。没装 `dot` 时，帧是 `.dot` 文本。

# %%
frames_dir = FIGURES / "00_backward_frames"
frames = mg.viz.backward_frames(loss, frames_dir, names=names)  # 用 retain_graph=True 跑一遍引擎的反向传播
print(f"{frames_dir} 里有 {len(frames)} 帧：", ", ".join(p.name for p in frames[:3]), "...")
assert len(frames) >= 4
assert W2.grad is None  # 画帧不改动 .grad

loss.backward()
assert W2.grad.shape == W2.shape and b2.grad.shape == b2.shape

# %% [markdown]
# 最后，把第 2 节那个小算式也交给 minigrad，并让图上同时显示每个量的值和梯度（`values=True, grads=True`）。
# 对照第 2 节的表格：$\partial L/\partial a = 6$、$\partial L/\partial b = -4$、$\partial L/\partial c = -2$、
# $\partial L/\partial g = 4$。

# %%
ta, tb, tc, tg = (mg.tensor(v, requires_grad=True, dtype="float64") for v in (a, b, c, g))
for t, name in zip((ta, tb, tc, tg), "abcg"):
    t.name = name
tL = (ta * tb + tc) * tg
mg.viz.draw_to_file(tL, FIGURES / "00_chain_rule.dot", values=True, grads=True)
draw_graph(tL, "00_chain_rule", values=True, grads=True)
tL.backward()
assert [t.grad.item() for t in (ta, tb, tc, tg)] == [by_hand[k] for k in "abcg"]

# %% [markdown]
# ## 7. 导数的导数：反向传播也是一个计算
#
# 到目前为止，minigrad 的反向传播都在 NumPy 数组上进行：算得快，而且什么也不记录。可是仔细看第 4 节的
# `Sin.backward`：它不过是 `np.cos(self.x) * gy`，一次余弦、一次乘法——**反向传播本身也是一串普通的运算**。
# 如果像前向那样把这些运算也记进计算图，就能对“梯度”再求一次导，得到二阶导数；再求一次，得到三阶……
#
# `mg.grad(y, x, create_graph=True)` 就是这个开关：它返回 $\partial y/\partial x$，而且这个梯度是一个
# **带着自己计算图的张量**，可以接着求导。（不加 `create_graph` 时，反向传播仍走快速的数组路径，训练不受任何影响；
# 引擎怎样让每个运算的 `backward` 也能在张量上运行，见 `minigrad/core/higher_order.py` 开头的说明。）
# `mg.grad(outputs, inputs)` 与 PyTorch 的 `torch.autograd.grad` 相同：梯度作为元组直接返回，不写进 `.grad`；
# `loss.backward(create_graph=True)` 也可以，只是结果照常累加在各个 `.grad` 里。
#
# ### 7.1 tanh 的 1 到 4 阶导数
#
# 从 $y = \tanh(x)$ 出发，连续四次 `mg.grad(..., create_graph=True)`，每次都对上一次的结果求导。
# 记 $t = \tanh x$，手算的结果是：$y' = 1 - t^2$，$y'' = -2t(1-t^2)$，$y''' = (1-t^2)(6t^2-2)$，
# $y'''' = 8t(1-t^2)(2-3t^2)$。

# %%
def tanh_derivatives_by_hand(t):
    """tanh 的 1 到 4 阶导数，用 t = tanh(x) 写出。"""
    return [1 - t**2, -2 * t * (1 - t**2), (1 - t**2) * (6 * t**2 - 2), 8 * t * (1 - t**2) * (2 - 3 * t**2)]


x = mg.tensor(0.5, requires_grad=True, dtype="float64")
x.name = "x"
derivative = x.tanh()
derivatives = []
for _ in range(4):
    (derivative,) = mg.grad(derivative, x, create_graph=True)  # 带计算图的张量：还能再求导
    derivatives.append(derivative)
by_hand_tanh = tanh_derivatives_by_hand(math.tanh(0.5))
for order, (d, expected) in enumerate(zip(derivatives, by_hand_tanh), start=1):
    print(f"{order} 阶：minigrad {d.item():+.12f}   手算 {expected:+.12f}")
    assert abs(d.item() - expected) < 1e-12

# %% [markdown]
# 每一阶导数都是一个张量，它“记得”自己是怎么算出来的，所以能画出它的计算图。一阶导数 $1 - t^2$ 的图里有
# 4 个运算：前向的 `Tanh`，加上反向传播里的 $t \cdot t$、$1 - t^2$ 和乘上游梯度的那一次乘法。
#
# **先猜一猜**：每多求一阶导数，计算图会变大多少？四阶导数的图里大约有多少个运算：8 个？20 个？还是更多？

# %%
my_guesses.guess("ops_order_4", "还没猜", "四阶导数的计算图里有几个运算")  # 换成你的猜测

# %%
op_counts = [sum(t.grad_fn is not None for t in mg.viz.walk(d)) for d in derivatives]
print("1 到 4 阶导数的计算图里各有多少个运算：", op_counts)
my_guesses.reveal("ops_order_4", op_counts[3])
assert op_counts[0] == 4
assert all(later > 2 * earlier for earlier, later in zip(op_counts[1:], op_counts[2:]))  # 从 2 阶起：每阶翻一倍还多

pictures = [draw_graph(d, f"00_tanh_derivative_{order}", show=False, rankdir="TB")
            for order, d in enumerate(derivatives, start=1)]
if all(pictures):  # 四张都画出来了（没有 `dot` 时，上面已写出 figures/00_tanh_derivative_*.dot）
    fig, axes = plt.subplots(1, 4, figsize=(14, 7), gridspec_kw={"width_ratios": [1, 1.2, 1.6, 2.4]})
    for order, (path, ax) in enumerate(zip(pictures, axes), start=1):
        ax.imshow(plt.imread(path))
        count = op_counts[order - 1]
        ax.set_title(label(f"{order} 阶导数：{count} 个运算", f"order {order}: {count} ops"))
        ax.axis("off")
    fig.suptitle(label("tanh 各阶导数的计算图（自上而下计算）", "The graphs of tanh's derivatives (computed top down)"))
    fig.tight_layout()
    show_figure(fig, "00_tanh_derivative_graphs.png")

# %% [markdown]
# 图长得很快：$n$ 阶导数的图包含 $n-1$ 阶导数的整张图（那是它的“前向”），再加上对这张图做反向传播新添的运算。
# 这也是高阶导数昂贵的原因。实践中最常用的是二阶：它刻画曲率，下面两个例子都靠它。
#
# 先把四条导数曲线画出来。$x$ 取一整排点时，`tanh` 逐元素作用，第 $i$ 个输出只依赖第 $i$ 个输入，
# 所以对**求和**之后的标量求导，得到的正好是每个点各自的导数——这是对逐元素函数求导的常用技巧。

# %%
xs = mg.tensor(np.linspace(-3, 3, 121), requires_grad=True, dtype="float64")
curves = [xs.tanh()]
for _ in range(4):
    (next_curve,) = mg.grad(curves[-1].sum(), xs, create_graph=True)
    curves.append(next_curve)
for order, (curve, expected) in enumerate(zip(curves[1:], tanh_derivatives_by_hand(np.tanh(xs.numpy()))), start=1):
    assert np.allclose(curve.numpy(), expected, atol=1e-12), order

fig, ax = plt.subplots(figsize=(7, 4.5))
for order, curve in enumerate(curves):
    name = "tanh(x)" if order == 0 else label(f"{order} 阶导数", f"derivative {order}")
    ax.plot(xs.numpy(), curve.numpy(), lw=2.5 if order == 0 else 1.5, label=name)
ax.set_xlabel("x")
ax.set_title(label("tanh 与它的 1 到 4 阶导数（minigrad 逐阶求出）", "tanh and its derivatives 1 to 4 (by minigrad)"))
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "00_tanh_derivatives.png")

# %% [markdown]
# ### 7.2 牛顿法：用曲率决定步长
#
# 梯度下降每步走 $x \leftarrow x - \eta f'(x)$，学习率 $\eta$ 全程固定。它两头为难：
# $\eta$ 必须小到在最陡的地方也不冲过头，可到了谷底附近曲线很平，$f'(x)$ 很小，同样小的 $\eta$ 让每一步都挪得很慢。
#
# 牛顿法用二阶导数（曲率）来定步长：$x \leftarrow x - f'(x)/f''(x)$。这正是在 $x$ 处用抛物线近似 $f$、
# 直接跳到抛物线最低点的一步；离最低点越近，近似越准，误差大约每步平方一次（$10^{-2} \to 10^{-4} \to 10^{-8}$）。
#
# 取 $f(x) = \cosh x - x/2$，最低点在 $f'(x) = \sinh x - 1/2 = 0$，即 $x^* = \operatorname{asinh}(1/2)$。
# 从 $x = 5$ 出发（那里曲率 $f''(5) = \cosh 5 \approx 74$，谷底的曲率只有 $\cosh x^* \approx 1.1$），
# 要求误差小于 $10^{-10}$。梯度下降的学习率我们试一排（发散的不算），取其中最快的。
#
# **先猜一猜**：最好的学习率下，梯度下降要走多少步？牛顿法呢？

# %%
my_guesses.guess("gd_steps", "还没猜", "最好的学习率下梯度下降的步数")  # 换成你的猜测
my_guesses.guess("newton_steps", "还没猜", "牛顿法的步数")

# %%
def f_valley(x):
    return (x.exp() + (-x).exp()) / 2 - x / 2  # cosh(x) − x/2


X_STAR, X_START, TOL = math.asinh(0.5), 5.0, 1e-10


def gradient_descent(lr, max_steps=2000):
    """走到离最低点 TOL 以内用了几步（发散时为 None），以及每一步之后的误差。"""
    x = mg.tensor(X_START, requires_grad=True, dtype="float64")
    errors = [abs(X_START - X_STAR)]
    while errors[-1] > TOL:
        if len(errors) > max_steps or errors[-1] > 50:
            return None, errors
        (g,) = mg.grad(f_valley(x), x)
        with mg.no_grad():
            x -= lr * g
        errors.append(abs(x.item() - X_STAR))
    return len(errors) - 1, errors


def newton(max_steps=50):
    x = mg.tensor(X_START, requires_grad=True, dtype="float64")
    errors = [abs(X_START - X_STAR)]
    while errors[-1] > TOL and len(errors) <= max_steps:
        (g,) = mg.grad(f_valley(x), x, create_graph=True)  # f'(x)，带着计算图
        (h,) = mg.grad(g, x)  # f''(x)：导数的导数
        with mg.no_grad():
            x -= g / h
        errors.append(abs(x.item() - X_STAR))
    return len(errors) - 1, errors


learning_rates = [0.04, 0.08, 0.12, 0.16, 0.2] if QUICK else [round(0.02 * k, 2) for k in range(1, 11)]
gd_runs = {lr: gradient_descent(lr) for lr in learning_rates}
for lr, (steps, _) in gd_runs.items():
    print(f"梯度下降，lr = {lr:.2f}：" + (f"{steps} 步" if steps is not None else "发散"))
best_lr = min((lr for lr in gd_runs if gd_runs[lr][0] is not None), key=lambda lr: gd_runs[lr][0])
gd_steps, gd_errors = gd_runs[best_lr]
newton_steps, newton_errors = newton()
print(f"最好的梯度下降：{gd_steps} 步（lr = {best_lr}）；牛顿法：{newton_steps} 步")
my_guesses.reveal("gd_steps", gd_steps)
my_guesses.reveal("newton_steps", newton_steps)
assert newton_steps <= 10 and gd_steps >= 100
assert gd_runs[learning_rates[-1]][0] is None  # 学习率再大也没用：它发散了

fig, ax = plt.subplots(figsize=(7, 4.5))
ax.semilogy(gd_errors, ".-", ms=3, label=label(f"梯度下降（lr = {best_lr}）", f"gradient descent (lr = {best_lr})"))
ax.semilogy(newton_errors, "o-", label=label("牛顿法", "Newton's method"))
ax.axhline(TOL, color="gray", ls="--", lw=1)
ax.set_xlabel(label("步数", "step"))
ax.set_ylabel("|x - x*|")
ax.set_title(label("最小化 cosh(x) - x/2：牛顿法几步就到", "Minimising cosh(x) - x/2: Newton needs a few steps"))
ax.grid(alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "00_newton_vs_gradient_descent.png")

# %% [markdown]
# 牛顿法的误差线先缓后陡：离谷底远时抛物线近似不准，它也只是一步步往下挪；一旦靠近，误差每步平方一次，
# 两三步就从 $10^{-2}$ 掉到 $10^{-10}$ 以下。梯度下降在对数坐标上是一条直线：每步误差只乘上一个固定的因子。
# 学习率再大一点，它在起点那个陡坡上就冲过了头，发散了。
#
# ### 7.3 海森矩阵乘向量（Hessian-vector product）
#
# 参数不止一个时，二阶导数是一个矩阵：海森矩阵 $H_{ij} = \partial^2 f / \partial w_i \partial w_j$。
# 一百万个参数的海森矩阵有 $10^{12}$ 个数，根本存不下。但很多方法（牛顿-共轭梯度、曲率分析、影响函数）
# 只需要它乘一个向量 $v$，而 $Hv$ 只要两次反向传播：
#
# $$Hv = \nabla_w\big(\nabla_w f(w) \cdot v\big)$$
#
# 先求带计算图的梯度 $g = \nabla f$，再对标量 $g \cdot v$ 求一次导。用梯度的中心差分核对：
# $Hv \approx \big(\nabla f(w + \epsilon v) - \nabla f(w - \epsilon v)\big) / 2\epsilon$。

# %%
inputs_hv = mg.tensor(rng.standard_normal((30, 8)), dtype="float64")
targets_hv = mg.tensor(rng.standard_normal(30), dtype="float64")


def fit_loss(w):
    return ((inputs_hv @ w).tanh() - targets_hv).square().mean()


w = mg.tensor(0.5 * rng.standard_normal(8), requires_grad=True, dtype="float64")
v = mg.tensor(rng.standard_normal(8), dtype="float64")
(g_w,) = mg.grad(fit_loss(w), w, create_graph=True)
(hv,) = mg.grad((g_w * v).sum(), w, retain_graph=True)


def gradient_at(values):
    point = mg.tensor(values, requires_grad=True, dtype="float64")
    return mg.grad(fit_loss(point), point)[0].numpy()


eps = 1e-5
hv_numeric = (gradient_at(w.numpy() + eps * v.numpy()) - gradient_at(w.numpy() - eps * v.numpy())) / (2 * eps)
print("两次反向传播得到的 H v：", np.round(hv.numpy(), 6))
print("梯度的中心差分得到的 H v：", np.round(hv_numeric, 6))
assert np.allclose(hv.numpy(), hv_numeric, rtol=1e-6, atol=1e-9)

# 整个海森矩阵：对 g 每做一次反向传播得到一行（8 个参数没问题，一百万个参数就不可能了）：
hessian = np.stack([mg.grad(g_w[i], w, retain_graph=True)[0].numpy() for i in range(8)])
assert np.allclose(hessian, hessian.T, atol=1e-12)  # 混合偏导数与求导次序无关
assert np.allclose(hessian @ v.numpy(), hv.numpy(), atol=1e-12)
print("完整的 8 × 8 海森矩阵是对称的，H @ v 与两次反向传播得到的 H v 相等")

# %% [markdown]
# 二阶导数也要核对：`mg.gradgradcheck(fn, inputs)` 之于二阶导数，正如 `mg.gradcheck` 之于一阶导数——
# 它把 `create_graph=True` 记下的梯度当成一个新函数，再用中心差分检查它的导数。minigrad 的测试对每个运算都跑了它。

# %%
assert mg.gradgradcheck(fit_loss, [w])
print("上面的损失通过了 gradgradcheck")

# %% [markdown]
# ## 8. 你自己的张量引擎
#
# 第 3 节的 `Value` 一次只管一个数。把它长成一个张量引擎，要改的只有几处，练习 0.4、0.8–0.26 就是一步步把它写出来
# （`tutorials/exercises/engine.py`，**只许 import numpy**）；写好以后，第 09 讲你的 GPT 就跑在它上面：
# 除了 NumPy，模型、训练和引擎全是你写的。
#
# **骨架（0.8–0.11）。**
#
# - `Tensor` 包着一个 NumPy 数组 `.array`、它的梯度 `.grad`（也是一个 `Tensor`，反向传播之后才有）和算出它的运算 `.op`。
# - 运算是一个对象（`Function` 的子类），`forward` 和 `backward` 并排写，都在**数组**上算：`forward` 存下 `backward`
#   要用的东西，`backward(gy)` 按输入的顺序返回每个输入的梯度。`Value` 用闭包 `_backward` 做同一件事；对象的好处是
#   它存了什么一目了然，用完就能丢。
# - `apply(op, *inputs)` 在前向时把这一步记下来：输出的 `.op` 是这个运算，运算的 `.inputs` 是输入。计算图就是这样
#   一步步长出来的。`with no_grad():` 里什么都不记——求值、采样时不需要梯度，也就不该占着整张图的内存。
# - 拓扑序：和 `Value.backward` 的第 1 步一样，用**显式的栈**而不是递归。下面的实验说明为什么。
# - 反向传播（“逆序走一遍”）：一个字典存着每个张量到目前为止收到的梯度；按拓扑序的逆序，轮到一个张量时它的所有用处都
#   已经处理完，梯度是全的。有 `op` 的，交给 `op.backward` 分给输入——一个输入被用了几次就**加**几次（第 3 节的 `+=`）；
#   被广播过的输入，先用 `sum_to` 加回它自己的形状（第 5 节）。叶子（参数）的梯度**加进** `.grad`：和 PyTorch 一样，
#   梯度在多次 `backward` 之间累加，直到有人把它设回 `None`。叶子第一次收到梯度时存一份拷贝：同一个数组
#   可能也是别的张量的梯度（`a + b` 的 `backward` 把同一个 `gy` 给了两边），共用内存的话，以后改一个，另一个也变。
#
# 为什么拓扑序不能递归：micrograd 的 `build_topo` 是递归的，Python 默认只允许大约 1000 层。第 09 讲的一步训练就有
# 好几千个运算（每层每个 `+`、`*`、`@` 都是一个），一条长的 RNN 展开更多。在 `Value` 上试一条 10,000 步的链：

# %%
import sys


def recursive_order(root):
    order, seen = [], set()

    def visit(v):  # micrograd 的写法：每往回一步，Python 的调用栈就深一层
        if id(v) not in seen:
            seen.add(id(v))
            for p in v._parents:
                visit(p)
            order.append(v)

    visit(root)
    return order


chain_start = Value(1.0)
chain_end = chain_start
for _ in range(10_000):
    chain_end = chain_end * 1.0001
try:
    recursive_order(chain_end)
    recursion_error = None
except RecursionError as error:
    recursion_error = error
print(f"Python 的递归深度上限：{sys.getrecursionlimit()}；递归的拓扑序在 10,000 步的链上："
      f"{type(recursion_error).__name__ if recursion_error else '没有出错'}")
chain_end.backward()  # Value.backward 用显式的栈：没问题
print(f"显式的栈：d(1.0001^10000 x)/dx = {chain_start.grad:.6f}（应为 {1.0001**10_000:.6f}）")
assert isinstance(recursion_error, RecursionError)
assert abs(chain_start.grad - 1.0001**10_000) < 1e-9 * 1.0001**10_000

# %% [markdown]
# **每个运算的反向传播（0.12–0.26）。** 逐元素的运算（`+ − × ÷`、幂、`exp`、`log`、`erf`）和 `Value` 里一样：
# 本地导数乘上 `gy`，只是现在是逐元素地乘。两处要想一想：
#
# - $\operatorname{erf}(x) = \frac{2}{\sqrt\pi}\int_0^x e^{-t^2}\,dt$ 是一个积分，对上限求导就是被积函数在上限处的值
#   （微积分基本定理）。你的 GPT 的 GELU 用它：$\mathrm{GELU}(x) = \tfrac12 x\,(1 + \operatorname{erf}(x/\sqrt2))$。
#   它的前向（NumPy 没有 erf）在 `engine.py` 里写好了：一个拟合出来的多项式，float64 里误差约 $2\times10^{-15}$。
# - 梯度的 dtype 要和 `gy` 一样。`np.sqrt(np.pi)` 是一个 float64 的 NumPy 标量，乘上 float32 的数组，结果是 float64——
#   之后每一个矩阵乘法都在 float64 里算，慢一倍，也和 `minigpt` 对不上。写常数时用 Python 的数（`np.pi ** 0.5`）。
#
# 其余的运算不是逐元素的，但道理一样：**输出的每个元素是怎么由输入算出来的，梯度就沿同样的路回去。**
#
# - **求和**：$y = \sum_i x_i$ 里每个 $x_i$ 的系数都是 1，所以每个 $x_i$ 都收到 $y$ 的梯度——`gy` 沿被求和的轴复制回去。
#   `keepdims=False` 时被求和的轴不见了，先把它放回来（大小为 1）再展开。平均值就是求和再除以个数。
# - **最大值**：把最大的那个元素挪一点点，最大值跟着挪；挪别的元素，最大值不动。所以梯度只去最大的那个位置，
#   有几个并列时平分。你的 softmax 和损失先减去每行的最大值，梯度也经过它。
# - **改变形状、交换两轴**：元素一个不少，只是换了位置，梯度排回原来的位置就行（交换两次就回到原样）。
# - **遮罩**：被填成 $-\infty$ 的位置，输出是常数，和 $x$ 无关，梯度是 0；别的位置梯度原样通过。
# - **取下标**：$y = x[\text{index}]$ 从 $x$ 里挑出一些元素。反过来，每个 $y$ 的梯度要送回它来的位置；同一个位置被挑了
#   几次（嵌入表 `wte[idx]` 里同一个字出现几次），就收到几份梯度，要加起来——又是 `b = a + a`。NumPy 的
#   `gx[index] += gy` 遇到重复的下标只加一次（它先取出 `gx[index]`，加好，再一次写回），要用 `np.add.at`：

# %%
rows = np.array([0, 2, 2, 2])  # 第 2 行被查了三次
g_rows = np.ones((4, 3))
by_add_at = np.zeros((3, 3))
np.add.at(by_add_at, rows, g_rows)
by_plus_equals = np.zeros((3, 3))
by_plus_equals[rows] += g_rows
print("np.add.at 给第 2 行的梯度：", by_add_at[2], "   gx[index] += gy 给的：", by_plus_equals[2])
assert np.all(by_add_at[2] == 3) and np.all(by_plus_equals[2] == 1)

# %% [markdown]
# - **矩阵乘法**：先在二维上推。$Y = AB$，$Y_{ij} = \sum_k A_{ik}B_{kj}$。$A_{ik}$ 出现在第 $i$ 行的每一个 $Y_{ij}$ 里，
#   系数是 $B_{kj}$，所以
#   $$\frac{\partial L}{\partial A_{ik}} = \sum_j \frac{\partial L}{\partial Y_{ij}} B_{kj} = (G B^\top)_{ik},\qquad
#   \frac{\partial L}{\partial B_{kj}} = \sum_i A_{ik}\frac{\partial L}{\partial Y_{ij}} = (A^\top G)_{kj},$$
#   其中 $G = \partial L/\partial Y$。用形状检查最省事：$A$ 是 $(n, k)$，$G$ 是 $(n, m)$，要得到 $(n, k)$，只能是
#   $G$ 乘一个 $(m, k)$ 的矩阵，也就是 $B^\top$。带批量时（`(B, nh, T, hs) @ (B, nh, hs, T)`），每个批量元素各算各的，
#   “转置”是交换最后两个轴。你的 GPT 里每个 `Linear` 是 `(B, T, C) @ (C, D)`：同一个权重被 $B$ 段共用，
#   每一段各给它一份梯度，`sum_to` 把它们加起来——又一次“用了几次就加几次”。下面用中心差分核对这两个公式：

# %%
A, B_mat, G = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal((3, 2))


def loss_of(A_, B_):  # L = sum(G * (A @ B))：它对 A @ B 的梯度正是 G
    return float((G * (A_ @ B_)).sum())


numeric_A = np.zeros_like(A)
for index in np.ndindex(A.shape):
    bump = np.zeros_like(A)
    bump[index] = 1e-6
    numeric_A[index] = (loss_of(A + bump, B_mat) - loss_of(A - bump, B_mat)) / 2e-6
numeric_B = np.zeros_like(B_mat)
for index in np.ndindex(B_mat.shape):
    bump = np.zeros_like(B_mat)
    bump[index] = 1e-6
    numeric_B[index] = (loss_of(A, B_mat + bump) - loss_of(A, B_mat - bump)) / 2e-6
print("∂L/∂A 与 G Bᵀ 之差最大", np.abs(numeric_A - G @ B_mat.T).max(),
      "；∂L/∂B 与 Aᵀ G 之差最大", np.abs(numeric_B - A.T @ G).max())
assert np.allclose(numeric_A, G @ B_mat.T, atol=1e-8) and np.allclose(numeric_B, A.T @ G, atol=1e-8)

# %% [markdown]
# 检查器对每个运算都做同样的事：在 float64 里和中心差分比、和 minigrad 的梯度比，形状包括两个方向的广播、
# 大小为 1 的轴和 0 维数组；再用 float32 试一次，看梯度的 dtype 有没有变。骨架则在它自己搭的图上检查：一条链、菱形、
# 一个张量被用了三次、共享的子表达式、10,000 个运算的链、连着两次 `backward`、一部分在 `no_grad` 里算的图。
# 哪里错了，它说的是哪个输入的梯度、差了几倍、是不是转置了、该先去做哪一题。

# %%
my_guesses.calibration()  # 本讲的先猜一猜：数值猜测差几倍，选择题猜对几个

# %% [markdown]
# ## 小结
#
# - 导数可以数值估计，但每个参数都要算两次前向；反向传播一次就得到全部梯度。
# - 反向传播 = 排拓扑序 + 逆序应用链式法则，每个运算只需知道自己的本地导数。
# - 一个值被用了几次，梯度就要**加**几次；忘了累加不会报错，只会悄悄算错。
# - 广播在前向里复制，在反向里求和（`sum_to`），这件事在引擎里统一做一次。
# - `mg.gradcheck` 用中心差分核对每个梯度，写新运算时先让它通过。
# - 一个张量引擎只是把这些放在数组上：拓扑序用显式的栈（递归过不了 1000 层），矩阵乘法的梯度是
#   $G B^\top$ 和 $A^\top G$，查表的梯度要用 `np.add.at` 加回重复的行。
# - 反向传播本身也是计算：`mg.grad(..., create_graph=True)` 把它记成图，于是能求二阶、三阶导数——
#   牛顿法靠曲率几步走到谷底，海森矩阵乘向量只要两次反向传播，`mg.gradgradcheck` 核对二阶导数。
#
# 下一讲，我们就用这台引擎训练第一个语言模型：猜下一个字。
#
# ## 练习
#
# 26 道练习分在两个文件里。`tutorials/exercises/lecture00.py`：中心差分（0.1）、`Mul` 和 `Tanh` 的反向传播（0.2、0.3，
# 插在 minigrad 的引擎里）、推导 `Div` 的反向传播（0.5）、任意逐元素函数的 n 阶导数（0.6），以及一道开放题（0.7）：
# 没有标准答案，只有目标——用尽量少的试验找到第 7 节那种最快的学习率，检查器在没见过的山谷上考。
# `tutorials/exercises/engine.py`（只许 import numpy）：你自己的引擎——`sum_to`（0.4）、`Tensor`（0.8）、`apply`（0.9）、
# 拓扑序（0.10）、反向传播（0.11），和第 09 讲你的 GPT 用到的每个运算的反向传播（0.12–0.26：加减乘除、幂、exp、log、
# erf、求和、最大值、改变形状、交换两轴、取下标、遮罩、矩阵乘法）。第 8 节讲了怎么推；★★★ 的题只说要做什么、用在哪里，
# 公式在最后一条提示里（`--hint`）。
# 打开文件，把每个 `raise NotImplementedError` 换成你的代码，
# 再运行下面这一格（或在终端里运行 `python -m tutorials.exercises check 00`）：检查器逐题告诉你对了没有，
# 错了的话用一句话说出错在哪。也可以在本 Notebook 里新建一格写函数，直接交给检查器，例如 `check("0.2", Mul)`。

# %%
from tutorials.exercises import check

check("00")
