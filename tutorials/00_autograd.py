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
# 我们分六步走，每一步都是一个你能亲手跑、亲眼看到结果的小实验：
#
# 1. 手算一个导数，再用数值方法（有限差分）核对；
# 2. 在一个小算式上走一遍链式法则；
# 3. 在本文件里写一个约 60 行的标量自动求导引擎 `Value`，并踩一次 `b = a + a` 的坑；
# 4. 换成 minigrad 的张量，用 `mg.gradcheck` 检查梯度；
# 5. 看清广播（broadcasting）为什么要求反向传播里有 `sum_to`；
# 6. 把计算图画出来，一帧一帧地看反向传播。
#
# 每个结论后面都跟着一个 `assert`：如果哪天代码改坏了、结论不再成立，运行本文件就会报错。
#
# 运行：`python tutorials/00_autograd.py`（设 `TUTORIAL_QUICK=1` 跑快速版）。图片写到当前目录的 `figures/`。

# %% [markdown]
# **学完这一讲，你能**：用中心差分核对任何一个导数，并说清步长 $h$ 为什么不能太大也不能太小；
# 写出一个运算的 `backward`（一个 `mg.Function` 子类），并用 `mg.gradcheck` 证明它是对的；
# 解释一个值用了两次、或者被广播过时，它的梯度为什么要加起来。
#
# **用时**（在 2 核 CPU 上实测的 CPU 时间；机器忙时墙钟时间更长）：
# 运行本讲，快速版约 5 秒，完整版约 5 秒；最后有 5 道练习。

# %%
from tutorials.course import FIGURES, show_figure, show_image  # first: it limits BLAS threads before NumPy loads

# isort: split
import math
import shutil

import matplotlib.pyplot as plt
import numpy as np

import minigrad as mg
from minigrad.autograd import sum_to

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

# %%
def f(x):
    return x**3 - 2 * x + 1


def df(x):  # the derivative, by hand
    return 3 * x**2 - 2


x0 = 1.5
hs = np.logspace(-13, -1, 49)
forward_err = np.array([abs((f(x0 + h) - f(x0)) / h - df(x0)) for h in hs])
central_err = np.array([abs((f(x0 + h) - f(x0 - h)) / (2 * h) - df(x0)) for h in hs])

h_demo = 1e-5
print(f"by hand:          f'(1.5) = {df(x0)}")
print(f"forward, h=1e-5:  {(f(x0 + h_demo) - f(x0)) / h_demo:.10f}")
print(f"central, h=1e-5:  {(f(x0 + h_demo) - f(x0 - h_demo)) / (2 * h_demo):.10f}")

# %%
fig, ax = plt.subplots(figsize=(7, 4.5))
ax.loglog(hs, forward_err, "o-", ms=3, label="forward difference  (f(x+h) - f(x)) / h")
ax.loglog(hs, central_err, "s-", ms=3, label="central difference  (f(x+h) - f(x-h)) / 2h")
ax.set_xlabel("step h")
ax.set_ylabel("|numeric - exact|")
ax.set_title("Finite differences: truncation error (right) vs rounding error (left)")
ax.grid(True, which="major", alpha=0.3)
ax.legend()
fig.tight_layout()
show_figure(fig, "00_finite_differences.png")

# %% [markdown]
# 图中右半边是截断误差：前向差分的线斜率约为 1（误差 ∝ h），中心差分约为 2（误差 ∝ h²）。
# 左半边 h 太小，舍入误差占上风，两条线一起抬头。中心差分在 $h \approx 10^{-5}$ 附近最准，
# 这也是后面 `gradcheck` 用中心差分、并且在 float64 下计算的原因。

# %%
i_demo = np.argmin(abs(hs - h_demo))
best_central = central_err.min()
assert central_err[i_demo] < 1e-8, central_err[i_demo]
assert central_err[i_demo] < forward_err[i_demo] / 1000  # central is far more accurate at the same h
assert central_err[0] > 100 * best_central  # a tiny h is worse: rounding error takes over
slope_forward = np.polyfit(np.log(hs[-12:]), np.log(forward_err[-12:]), 1)[0]
slope_central = np.polyfit(np.log(hs[-12:]), np.log(central_err[-12:]), 1)[0]
print(f"log-log slope for large h: forward {slope_forward:.2f} (expect 1), central {slope_central:.2f} (expect 2)")
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
print("gradients by the chain rule:", by_hand)


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
print("gradients by central differences:", {k: round(v, 6) for k, v in numeric.items()})
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
    """A scalar that remembers how it was computed, so that it can backpropagate."""

    def __init__(self, data, parents=(), op=""):
        self.data = float(data)
        self.grad = 0.0
        self._parents = parents  # the Values this one was computed from
        self._op = op
        self._backward = lambda: None  # sends self.grad on to the parents

    def _deposit(self, g):
        self.grad += g  # a Value used twice receives gradient twice: add them up

    def _lift(self, other):
        return other if isinstance(other, Value) else type(self)(other)

    def __add__(self, other):
        other = self._lift(other)
        out = type(self)(self.data + other.data, (self, other), "+")

        def _backward():  # d(x+y)/dx = 1, d(x+y)/dy = 1
            self._deposit(out.grad)
            other._deposit(out.grad)

        out._backward = _backward
        return out

    def __mul__(self, other):
        other = self._lift(other)
        out = type(self)(self.data * other.data, (self, other), "*")

        def _backward():  # d(xy)/dx = y, d(xy)/dy = x
            self._deposit(other.data * out.grad)
            other._deposit(self.data * out.grad)

        out._backward = _backward
        return out

    def __pow__(self, k):  # k is a plain number
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
        # Step 1: order the graph topologically (an explicit stack: no recursion limit).
        order, seen, stack = [], set(), [(self, False)]
        while stack:
            v, parents_done = stack.pop()
            if parents_done:
                order.append(v)
            elif id(v) not in seen:
                seen.add(id(v))
                stack.append((v, True))
                stack.extend((p, False) for p in v._parents)
        # Step 2: apply the chain rule, from the output back to the inputs.
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
    print(f"{name:5s} engine {vals[name].grad:+.8f}   numeric {num:+.8f}")
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
class BuggyValue(Value):
    def _deposit(self, g):
        self.grad = g  # BUG: overwrites the gradient that the other use of this value already sent


def simplest(cls):
    a = cls(3.0)
    b = a + a  # db/da = 2
    b.backward()
    return a.grad


print("b = a + a:  correct engine db/da =", simplest(Value), "  buggy engine db/da =", simplest(BuggyValue))
assert simplest(Value) == 2.0
assert simplest(BuggyValue) == 1.0  # the second path's gradient overwrote the first


def twice(cls):
    x = cls(3.0)
    y = x + x  # db/dx = 2
    z = y * y + x  # dz/dx = 2y * 2 + 1 = 4*(2x) + 1 = 25 at x = 3
    z.backward()
    return x.grad


print("correct engine: dz/dx =", twice(Value))
print("buggy engine:   dz/dx =", twice(BuggyValue))
assert twice(Value) == 25.0
assert twice(BuggyValue) != 25.0  # the overwrite silently loses gradient: the answer is wrong, with no error

# %% [markdown]
# 错的版本**不报错**，只是悄悄给出错误的数——这正是它危险的地方。
# 修复就是 `Value._deposit` 里的那个 `+=`：梯度累加。minigrad 的引擎在 `minigrad/autograd.py` 里做同样的事，
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
print("gradcheck passed for tanh(X @ W + b)")

# %% [markdown]
# `gradcheck` 本身靠得住吗？我们故意写一个反向传播有错的运算：$\sin$ 的导数应该是 $\cos$，
# 我们却写成 $-\cos$。在 minigrad 里，一个运算就是一个 `mg.Function` 子类，前向和反向并排写：

# %%
class WrongSin(mg.Function):
    """y = sin(x); the true derivative is cos(x) - this backward is wrong on purpose."""

    def forward(self, x):
        self.x = x
        return np.sin(x)

    def backward(self, gy):
        return -np.cos(self.x) * gy  # wrong sign


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
print("WrongSin ->", caught)
assert caught is not None and "analytic" in caught

# %% [markdown]
# ## 5. 广播与 `sum_to`
#
# 给一批样本加同一个偏置：`X` 形状 `(4, 3)`，`b` 形状 `(3,)`，`X + b` 时 NumPy 把 `b` 悄悄“复制”成 4 行。
# 反向时，输出的梯度是 `(4, 3)`，而 `b` 只有 3 个数——4 份拷贝都用到了同一个 `b`，
# 就像 `b = a + a` 里一样，**各份拷贝的梯度要加起来**。所以 `b` 的梯度是输出梯度按行求和。
#
# 这件事与具体运算无关（加、乘、除……只要有广播都会发生），所以 minigrad 把它放在引擎里统一做一次：
# 每个运算的 `backward` 返回“广播后形状”的梯度，引擎再用 `minigrad.autograd.sum_to` 把它求和回输入的形状。
#
# **先猜一猜**：下面 `(Xb + bb).backward(upstream)` 之后，`bb.grad` 的形状是 `(4, 3)` 还是 `(3,)`？
# 它的第 0 个元素等于什么？

# %%
Xb = mg.tensor(rng.standard_normal((4, 3)), requires_grad=True, dtype="float64")
bb = mg.tensor(rng.standard_normal(3), requires_grad=True, dtype="float64")
upstream = rng.standard_normal((4, 3))
(Xb + bb).backward(upstream)
print("output grad shape:", upstream.shape, " b.grad shape:", bb.grad.shape)
print("b.grad            =", bb.grad.numpy())
print("upstream.sum(0)   =", upstream.sum(axis=0))
assert bb.grad.shape == bb.shape
assert np.allclose(bb.grad.numpy(), upstream.sum(axis=0))
assert np.allclose(sum_to(upstream, (3,)), upstream.sum(axis=0))

# %% [markdown]
# 维度为 1 的轴也会被广播。形状 `(3, 1)` 的张量广播到 `(2, 3, 4)`：新增的第 0 轴和被拉长的最后一轴都要求和：

# %%
ones_234 = np.ones((2, 3, 4))
print("sum_to(ones(2,3,4), (3,1)) =", sum_to(ones_234, (3, 1)).ravel(), " (each entry: 2 * 4 copies)")
assert sum_to(ones_234, (3, 1)).shape == (3, 1) and np.all(sum_to(ones_234, (3, 1)) == 8)

# 如果反向传播“忘了”求和，梯度的形状就不对，数值也不对。gradcheck 确认引擎的处理是对的：
col = mg.tensor(rng.standard_normal((3, 1)), requires_grad=True, dtype="float64")
cube = mg.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True, dtype="float64")
assert mg.gradcheck(lambda col, cube: (col * cube).tanh(), [col, cube])
print("gradcheck passed for a (3, 1) tensor broadcast against (2, 3, 4)")

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

names = {"X": X2, "W": W2, "b": b2}  # label the leaves by name instead of by number
dot_source = mg.viz.to_dot(loss, names=names)
(FIGURES / "00_graph.dot").write_text(dot_source)
print(dot_source[:400], "...")
assert dot_source.lstrip().startswith("digraph")
for op_name in ("MatMul", "Add", "Tanh", "Mean"):
    assert op_name in dot_source, op_name

HAVE_DOT = shutil.which("dot") is not None
if HAVE_DOT:
    mg.viz.draw(loss, path=str(FIGURES / "00_graph"), format="png", names=names)
    show_image(FIGURES / "00_graph.png")
    print("rendered", FIGURES / "00_graph.png")
else:
    print("note: the Graphviz `dot` program is not installed; wrote", FIGURES / "00_graph.dot",
          "(render it with `dot -Tpng`, or install graphviz)")

# %% [markdown]
# ### 反向传播，一帧一帧
#
# `mg.viz.backward_frames(loss, out_dir)` 跟着引擎的反向传播，每当一个张量的梯度收齐就画一帧：
# 粗黑框是刚收齐梯度的那个张量，颜色和数字是各个梯度的大小（范数），还没轮到的梯度暂不显示。
# 翻看 `figures/00_backward_frames/` 里的帧（或打开同目录的 `backward.gif`、`backward.html`），
# 你会看到梯度从 `loss` 出发，按拓扑序的逆序一路流回 `W` 和 `b`。没装 `dot` 时，帧是 `.dot` 文本。

# %%
frames_dir = FIGURES / "00_backward_frames"
frames = mg.viz.backward_frames(loss, frames_dir, names=names)  # runs the engine's backward with retain_graph=True
print(f"{len(frames)} frames in {frames_dir}:", ", ".join(p.name for p in frames[:3]), "...")
assert len(frames) >= 4
assert W2.grad is None  # the frames leave .grad as it was

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
small_dot = mg.viz.to_dot(tL, values=True, grads=True)
(FIGURES / "00_chain_rule.dot").write_text(small_dot)
if HAVE_DOT:
    mg.viz.draw(tL, path=str(FIGURES / "00_chain_rule"), format="png", values=True, grads=True)
    show_image(FIGURES / "00_chain_rule.png")
tL.backward()
assert [t.grad.item() for t in (ta, tb, tc, tg)] == [by_hand[k] for k in "abcg"]

# %% [markdown]
# ## 小结
#
# - 导数可以数值估计，但每个参数都要算两次前向；反向传播一次就得到全部梯度。
# - 反向传播 = 排拓扑序 + 逆序应用链式法则，每个运算只需知道自己的本地导数。
# - 一个值被用了几次，梯度就要**加**几次；忘了累加不会报错，只会悄悄算错。
# - 广播在前向里复制，在反向里求和（`sum_to`），这件事在引擎里统一做一次。
# - `mg.gradcheck` 用中心差分核对每个梯度，写新运算时先让它通过。
#
# 下一讲，我们就用这台引擎训练第一个语言模型：猜下一个字。
#
# ## 练习
#
# 5 道练习在 `tutorials/exercises/lecture00.py` 里：中心差分（0.1）、`Mul` 和 `Tanh` 的反向传播（0.2、0.3）、
# `sum_to`（0.4）、推导 `Div` 的反向传播（0.5）。打开那个文件，把每个 `raise NotImplementedError` 换成你的代码，
# 再运行下面这一格（或在终端里运行 `python -m tutorials.exercises check 00`）：检查器逐题告诉你对了没有，
# 错了的话用一句话说出错在哪。也可以在本 Notebook 里新建一格写函数，直接交给检查器，例如 `check("0.4", sum_to)`。

# %%
from tutorials.exercises import check

check("00")
