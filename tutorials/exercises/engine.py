"""第 00 讲练习（续）：你自己的张量自动求导引擎。这个文件只许 import numpy。

讲义第 8 节把第 3 节的标量引擎 `Value` 长成一个张量引擎：一个 `Tensor` 包着一个 NumPy 数组（`.array`）、
它的梯度（`.grad`）和算出它的运算（`.op`）；`apply` 在前向时把每个运算记进计算图；`topological_order` 排出拓扑序；
`backward` 逆序走一遍，按链式法则把梯度分给每个输入。最后是第 09 讲你的 GPT 用到的每一个运算的反向传播。
写好以后，第 09 讲的 GPT 就跑在**这个文件**上：除了 NumPy，模型、训练和引擎都是你写的。

把每个 `raise NotImplementedError` 换成你的代码，然后检查（和 lecture00.py 一起）：

    python -m tutorials.exercises check 00          # 终端里，任意目录
    python -m tutorials.exercises check 0.11        # 只检查一题
    from tutorials.exercises import check; check("00")   # Notebook 里

规矩：只用 NumPy（和 Python 自带的模块）。minigrad、minigpt、torch、jax 之类的库，不管怎么导入，检查时都会被拒绝。
每个运算的 `forward` 已经写好（它存下 backward 要用的东西）；你写 `backward(self, gy)`：收到输出的梯度 gy，
按输入的顺序返回每个输入的梯度（一个元组；只有一个输入时也可以直接返回数组），形状和**输出**一样——
广播过的输入由你的 `backward`（练习 0.11）用 `sum_to` 加回它自己的形状。不要原地修改 gy，梯度的 dtype 要和 gy 一样。
难度：★ 照着讲义写一遍；★★ 自己动手写；★★★ 先推导，再实现（推导在讲义第 8 节，公式只在最后一条提示里）。
参考答案在 `tutorials/solutions/engine.py`——先自己做，卡住了先要提示（--hint），再看答案。
"""

import numpy as np

# --------------------------------------------------------------------------------------------------
# Given: the grad-mode switch, the op base class, erf's values, the (values, indices) pair of max(dim)

grad_enabled = True  # no_grad turns it off: apply then records nothing


class no_grad:
    """`with no_grad():` ops run, but nothing is recorded (evaluation, sampling): no graph, no memory held."""

    def __enter__(self):
        global grad_enabled
        self.before, grad_enabled = grad_enabled, False

    def __exit__(self, *exc):
        global grad_enabled
        grad_enabled = self.before


class Function:
    """One op: forward(*arrays) -> array saves what backward needs; backward(gy) -> one gradient per input."""

    def __init__(self, **params):
        for name, value in params.items():  # the op's settings: axis=, keepdims=, exponent=...
            setattr(self, name, value)

    def forward(self, *xs):
        raise NotImplementedError

    def backward(self, gy):
        raise NotImplementedError


# erf(a) = 1 - exp(-a**2) t P(t), t = 1 / (1 + p a), for a = |x| (erf is odd). P was fitted by least squares to
# the absolute error of erf at 400 Chebyshev points of a in [0, 6]; measured against math.erf on a grid of
# [-7, 7]: within 3e-7 in float32 (degree 6, p = 0.5), 2e-15 in float64 (degree 12, p = 0.33).
ERF_FIT = {
    np.dtype(np.float32): (0.5, [0.276745487918855, 0.32393268068711345, 0.12372005110934843, 0.319701594501502,
                                 0.11085259975165711, -0.21258740208855134, 0.05763499820989893]),
    np.dtype(np.float64): (0.33, [0.186307297943352, 0.18376239830661414, 0.1975132530907563,
                                  0.040563355700225616, 0.5436604352220763, -0.9762559932157224,
                                  2.0524207311488674, -2.683269949416282, 2.6534028888942394,
                                  -1.7874364781654564, 0.7470094675555871, -0.1755947235535842,
                                  0.017917316489327862]),
}


def erf(x: np.ndarray) -> np.ndarray:
    """The error function, elementwise, in x's dtype (NumPy has none): erf(x) = 2/√π ∫₀ˣ exp(−t²) dt."""
    p, coefficients = ERF_FIT[np.dtype(x.dtype)]
    a = np.abs(x)
    t = 1 / (1 + p * a)
    y = np.full_like(a, coefficients[-1])
    for c in reversed(coefficients[:-1]):  # Horner's rule
        y *= t
        y += c
    return np.copysign(1 - np.exp(-a * a) * t * y, x)


class ValuesIndices(tuple):
    """What x.max(dim) returns, as in PyTorch: the pair (values, indices)."""

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])


# --------------------------------------------------------------------------------------------------
# 引擎的骨架


# 练习 0.4 ★★ sum_to：广播的反面
# 前向时，形状为 `shape` 的输入被广播成了 g 的形状；反向时，每份“拷贝”都收到一份梯度，要加回去。
# 返回把 g 求和回 `shape` 的数组。两种情况都要处理：
#   - g 比 shape 多出来的前导轴（例如 (4, 3) -> (3,)）：对这些轴求和；
#   - shape 里大小为 1、g 里更大的轴（例如 (2, 3, 4) -> (3, 1) 的最后一轴）：求和并保留这一轴。
# 不要原地修改 g。（minigrad 自己的版本在 minigrad/core/autograd.py，先别看。）
# 它是你的引擎的第一块：练习 0.11 的 backward 用它把广播过的输入的梯度加回去。
def sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    raise NotImplementedError


# 练习 0.8 ★ Tensor：数组、梯度、算出它的运算
# 写 __init__：self.array 是 np.asarray(array)；浮点数组原样留着（不复制、不改 dtype：float32 还是 float32），
# 别的（Python 的数、列表、整数数组）变成 float64。self.requires_grad 记下参数；self.grad 和 self.op 先是 None
# （op 是算出这个张量的那个运算；叶子张量——参数、输入——没有 op）。
# 下面其余的方法已经写好：每个运算符都是一行，把一个运算交给 apply（练习 0.9）。
class Tensor:
    """A NumPy array (`.array`), its gradient (`.grad`, a Tensor once backward has run) and the op that made it."""

    def __init__(self, array, requires_grad: bool = False):
        raise NotImplementedError

    shape = property(lambda self: self.array.shape)
    ndim = property(lambda self: self.array.ndim)
    dtype = property(lambda self: self.array.dtype)

    def numpy(self) -> np.ndarray:
        return self.array

    def item(self) -> float:
        return self.array.item()

    def detach(self) -> "Tensor":
        return Tensor(self.array)  # the same numbers, no history: no gradient flows back through it

    def backward(self, grad=None) -> None:
        """Fill `.grad` of every leaf this tensor was computed from (gradients add up until set to None)."""
        if not self.requires_grad:
            raise RuntimeError("backward: this tensor needs no gradient (made under no_grad, or from tensors "
                               "that need none)")
        backward(self, np.ones_like(self.array) if grad is None else np.asarray(grad, dtype=self.dtype))

    def __repr__(self) -> str:
        return f"Tensor({self.array}, requires_grad={self.requires_grad})"

    def _lift(self, other) -> "Tensor":
        """A number or an array as a Tensor of this tensor's dtype (0.5 * x stays float32)."""
        return other if isinstance(other, Tensor) else Tensor(np.asarray(other, dtype=self.dtype))

    def __add__(self, other):
        return apply(Add(), self, self._lift(other))

    def __radd__(self, other):
        return apply(Add(), self._lift(other), self)

    def __sub__(self, other):
        return apply(Sub(), self, self._lift(other))

    def __rsub__(self, other):
        return apply(Sub(), self._lift(other), self)

    def __mul__(self, other):
        return apply(Mul(), self, self._lift(other))

    def __rmul__(self, other):
        return apply(Mul(), self._lift(other), self)

    def __truediv__(self, other):
        return apply(Div(), self, self._lift(other))

    def __rtruediv__(self, other):
        return apply(Div(), self._lift(other), self)

    def __neg__(self):
        return self * -1.0

    def __pow__(self, exponent):
        if isinstance(exponent, Tensor) or np.ndim(exponent) != 0:
            raise TypeError(f"x ** p: the exponent must be a number, not {type(exponent).__name__}")
        return apply(Pow(exponent=float(exponent)), self)

    def __matmul__(self, other):
        if self.ndim < 2 or other.ndim < 2:
            raise ValueError(f"a @ b: both need at least two axes, got {self.shape} @ {other.shape}")
        return apply(MatMul(), self, other)

    def exp(self):
        return apply(Exp(), self)

    def log(self):
        return apply(Log(), self)

    def sqrt(self):
        return self**0.5

    def erf(self):
        return apply(Erf(), self)

    def sum(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return apply(Sum(axis=_axis(dim, axis), keepdims=_keep(keepdim, keepdims)), self)

    def mean(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        axis = _axis(dim, axis)
        n = self.array.size if axis is None else int(np.prod([self.shape[a] for a in np.atleast_1d(axis)]))
        return self.sum(axis=axis, keepdims=_keep(keepdim, keepdims)) / n

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """As PyTorch: x.max() is the largest element; x.max(dim) is the pair (values, indices) along dim."""
        axis, keep = _axis(dim, axis), _keep(keepdim, keepdims)
        if axis is None:
            return apply(Max(axis=None, keepdims=False), self)
        indices = np.argmax(self.array, axis=axis)
        return ValuesIndices((apply(Max(axis=axis, keepdims=keep), self),
                              np.expand_dims(indices, axis) if keep else indices))

    def reshape(self, *shape):
        shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return apply(Reshape(shape=shape), self)

    def swapaxes(self, axis1, axis2):
        return apply(SwapAxes(axis1=axis1, axis2=axis2), self)

    transpose = swapaxes  # PyTorch's transpose(dim0, dim1) swaps two axes

    def __getitem__(self, index):
        return apply(GetItem(index=index), self)

    def masked_fill(self, mask, value):
        mask = np.asarray(mask.array if isinstance(mask, Tensor) else mask, dtype=bool)
        return apply(MaskedFill(mask=mask, value=value), self)


def _axis(dim, axis):
    """PyTorch's dim or NumPy's axis (an int, a tuple, or None for every axis)."""
    axis = dim if axis is None else axis
    return tuple(axis) if isinstance(axis, list) else axis


def _keep(keepdim, keepdims):
    return bool(keepdim if keepdims is None else keepdims)


# 练习 0.9 ★★ apply：前向时把运算记下来
# op 是一个运算（Function 的实例，例如 Mul()），inputs 是几个 Tensor。
# 在输入的数组上运行 op.forward，把结果包成一个新的 Tensor 返回。如果梯度开着（grad_enabled，no_grad 会关掉它），
# 而且有一个输入需要梯度，就把这一步记进计算图：输出需要梯度，输出的 .op 是 op，op.inputs 是 inputs。
# 否则什么也不记（no_grad 下求值、采样不占内存）。Tensor 的每个运算符都经过它。
def apply(op: Function, *inputs: Tensor) -> Tensor:
    raise NotImplementedError


# 练习 0.10 ★★★ 拓扑序
# 返回 root 依赖的、需要梯度的每一个张量（root 自己也算），每个只出现一次，而且每个都排在它的所有输入之后。
# 沿着 t.op.inputs 往回找；叶子没有 op；不需要梯度的张量不用管。
# 用一个显式的栈，不要递归：第 09 讲的一步训练有几千个运算，检查器还会试一条 10,000 个运算的链，
# Python 的递归深度只有 1000 左右。练习 0.11 的 backward 按它的逆序走。
def topological_order(root: Tensor) -> list:
    raise NotImplementedError


# 练习 0.11 ★★★ 反向传播：逆序走一遍
# root 是一个张量，grad 是它的梯度（和 root.array 一样形状的数组）。把梯度一路传回每一个需要梯度的叶子，
# 加进叶子的 .grad（一个 Tensor）：叶子原来就有 .grad 时加上去，不覆盖——梯度在多次 backward 之间累加，
# 直到有人把它设回 None（你的训练一步 9.7 就是这样清梯度的）。
# 要做对的几件事，讲义第 8 节逐一讲了：顺序；一个张量被用了几次；广播过的输入（sum_to）；
# 叶子的梯度别和别的数组共用内存。
# Tensor.backward() 调用它；你的 GPT 的每一步训练都靠它。
def backward(root: Tensor, grad: np.ndarray) -> None:
    raise NotImplementedError


# --------------------------------------------------------------------------------------------------
# 运算：forward 已经写好，你写 backward（收到 gy，按输入的顺序返回每个输入的梯度）


# 练习 0.12 ★ 加法
# y = a + b：∂y/∂a = 1，∂y/∂b = 1，所以两个输入都收到 gy（广播交给 0.11 的 sum_to）。
class Add(Function):
    """y = a + b."""

    def forward(self, a, b):
        return a + b

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.13 ★ 减法
# y = a − b：∂y/∂a = 1，∂y/∂b = −1。
class Sub(Function):
    """y = a - b."""

    def forward(self, a, b):
        return a - b

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.14 ★ 乘法（和 0.2 一样，这次在你自己的引擎里）
# y = a · b：∂y/∂a = b，∂y/∂b = a，各乘上 gy。
class Mul(Function):
    """y = a * b."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a * b

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.15 ★ 除法（你在 0.5 推过）
# y = a / b：∂y/∂a = 1/b，∂y/∂b = −a/b²，各乘上 gy。
class Div(Function):
    """y = a / b."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a / b

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.16 ★★ 幂：x ** p，p 是一个数
# 你的 GPT 里 x.sqrt() 就是 x ** 0.5（LayerNorm 的标准差）。
class Pow(Function):
    """y = x ** p for a number p (self.exponent)."""

    def forward(self, x):
        self.x = x
        return x**self.exponent

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.17 ★ exp
# y = exp(x)：∂y/∂x = exp(x) = y，前向已经把 y 存下了。你的 softmax 和损失用它。
class Exp(Function):
    """y = exp(x)."""

    def forward(self, x):
        self.y = np.exp(x)
        return self.y

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.18 ★ log
# y = log(x)：∂y/∂x = 1/x。你的损失（log-softmax）用它。
class Log(Function):
    """y = log(x)."""

    def forward(self, x):
        self.x = x
        return np.log(x)

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.19 ★★ erf
# 前向用上面写好的 erf（NumPy 没有它）。erf(x) = 2/√π ∫₀ˣ exp(−t²) dt：对上限求导就是被积函数。
# 你的 GPT 的 MLP 用它算精确的 GELU。小心：np.sqrt(np.pi) 是 float64 的标量，乘上 float32 的 gy 会把梯度变成 float64。
class Erf(Function):
    """y = erf(x)."""

    def forward(self, x):
        self.x = x
        return erf(x)

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.20 ★★ 求和：沿 axis（None 是全部）求和，keepdims 决定留不留下被求和的轴
# 每个元素都只在它那一组的和里出现一次。返回和 x 一样形状的梯度（self.shape）；
# 没保留的轴，要先把它们放回去（大小为 1），再展开成 x 的形状。mean 就是 sum 再除以个数，不用另写。
class Sum(Function):
    """y = x summed over self.axis (an int, a tuple, or None for every axis), keeping them if self.keepdims."""

    def forward(self, x):
        self.shape = x.shape
        return x.sum(axis=self.axis, keepdims=self.keepdims)

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.21 ★★★ 最大值：沿 axis 取最大
# 你的 softmax（3.1）和损失（9.4）先减去每行的最大值。这个运算的梯度往哪里去？（讲义第 8 节；有并列的最大值时
# 平分。）前向存下了 x 和保留了轴的最大值 self.y。
class Max(Function):
    """y = the largest x over self.axis (None: every axis), keeping it if self.keepdims."""

    def forward(self, x):
        self.x = x
        self.y = x.max(axis=self.axis, keepdims=True)
        return self.y if self.keepdims else x.max(axis=self.axis)

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.22 ★ 改变形状
# 元素还是那些、顺序也不变，只是排成了另一个形状：梯度排回 x 的形状（self.in_shape）就行。
class Reshape(Function):
    """y = x with another shape (self.shape)."""

    def forward(self, x):
        self.in_shape = x.shape
        return x.reshape(self.shape)

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.23 ★★ 交换两个轴
# 你的 GPT 用它把通道切成头、把权重转置。y 的 (i, j) 来自 x 的 (j, i)：梯度该怎么排回去？
class SwapAxes(Function):
    """y = x with axes self.axis1 and self.axis2 swapped."""

    def forward(self, x):
        return x.swapaxes(self.axis1, self.axis2)

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.24 ★★★ 取下标：切片，以及整数数组（嵌入表的查表）
# y = x[self.index]。你的 GPT 的第一层就是它：wte[idx] 按字符编号查嵌入表的行，同一个字符出现几次，那一行就被
# 查几次；切开 q、k、v 和 wpe[:T] 也是它。返回和 x 一样形状的梯度（self.shape）。想一想：同一行被查了两次，
# 它该收到什么？（讲义第 8 节。）
class GetItem(Function):
    """y = x[self.index] (slices, integers, integer arrays)."""

    def forward(self, x):
        self.shape = x.shape
        return x[self.index]

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.25 ★★ 遮罩：mask 为 True 的位置填上 value
# 你的因果注意力（3.3）用它把未来的位置填成 −inf。被填掉的位置，输出还和 x 有关吗？
class MaskedFill(Function):
    """y = self.value where self.mask, else x."""

    def forward(self, x):
        return np.where(self.mask, self.value, x)

    def backward(self, gy):
        raise NotImplementedError


# 练习 0.26 ★★★ 矩阵乘法：a @ b，带批量
# a (..., n, k) @ b (..., k, m) -> (..., n, m)，前面的批量轴按广播规则对齐：你的 GPT 里有 (B, T, C) @ (C, D)
# （每个 Linear：权重被所有 B 段共用），也有 (B, nh, T, hs) @ (B, nh, hs, T)（注意力的分数）。
# 返回 (ga, gb)，ga 和 a 一样形状、gb 和 b 一样形状——被广播过的批量轴交给 0.11 的 sum_to。
# 哪个转置、乘在哪一边？先在二维上推（讲义第 8 节），再看形状对不对。
class MatMul(Function):
    """y = a @ b, batched over the leading axes."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a @ b

    def backward(self, gy):
        raise NotImplementedError
