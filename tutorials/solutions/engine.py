"""你自己的引擎：第 00 讲练习 0.4、0.8–0.26 的参考答案（题目在 tutorials/exercises/engine.py）。先自己做，再来对照。"""

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
# 0.8 the Tensor (its methods below __init__ are given: each records one op through apply)


class Tensor:
    """A NumPy array (`.array`), its gradient (`.grad`, a Tensor once backward has run) and the op that made it."""

    def __init__(self, array, requires_grad: bool = False):
        array = np.asarray(array)
        self.array = array if array.dtype.kind == "f" else array.astype(np.float64)  # float arrays as they are
        self.requires_grad = requires_grad
        self.grad = None  # filled (and added to) by backward
        self.op = None  # the op that made this tensor; None for a leaf (a parameter, an input)

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


# --------------------------------------------------------------------------------------------------
# 0.9 recording an op; 0.10 the order; 0.4 sum_to; 0.11 the walk


def apply(op: Function, *inputs: Tensor) -> Tensor:
    y = Tensor(op.forward(*[x.array for x in inputs]))
    if grad_enabled and any(x.requires_grad for x in inputs):
        y.requires_grad = True
        y.op, op.inputs = op, inputs  # the output remembers its op, the op its inputs: the graph
    return y


def topological_order(root: Tensor) -> list:
    order, visited = [], set()
    stack = [(root, False)]  # (tensor, whether its inputs are all in `order` already)
    while stack:
        tensor, inputs_done = stack.pop()
        if inputs_done:
            order.append(tensor)
            continue
        if id(tensor) in visited:
            continue
        visited.add(id(tensor))
        stack.append((tensor, True))  # comes back off the stack after all of its inputs
        if tensor.op is not None:
            for x in reversed(tensor.op.inputs):
                if x.requires_grad and id(x) not in visited:
                    stack.append((x, False))
    return order


def sum_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    lead = g.ndim - len(shape)  # axes broadcasting added in front
    stretched = tuple(lead + i for i, n in enumerate(shape) if n == 1)  # (summing a size-1 axis is harmless)
    y = g.sum(axis=tuple(range(lead)) + stretched, keepdims=True)  # a new array: g is not modified
    return y.reshape(shape)  # drop the leading axes, which keepdims kept as size 1


def backward(root: Tensor, grad: np.ndarray) -> None:
    grads = {id(root): grad}  # the gradient of each tensor reached so far, by id
    for tensor in reversed(topological_order(root)):  # every use of a tensor comes later in the order
        g = grads.pop(id(tensor), None)
        if g is None:
            continue
        if tensor.op is None:  # a leaf: add into .grad (a copy: g may be another tensor's gradient too)
            tensor.grad = Tensor(np.array(g)) if tensor.grad is None else Tensor(tensor.grad.array + g)
            continue
        gxs = tensor.op.backward(g)
        gxs = gxs if isinstance(gxs, tuple) else (gxs,)  # an op of one input may return its gradient alone
        for x, gx in zip(tensor.op.inputs, gxs):
            if x.requires_grad:
                if gx.shape != x.shape:
                    gx = sum_to(gx, x.shape)  # a broadcast input: its copies' gradients add up
                grads[id(x)] = gx if id(x) not in grads else grads[id(x)] + gx  # used twice: add, never overwrite


# --------------------------------------------------------------------------------------------------
# 0.12-0.26 the ops: forward on arrays, backward the chain rule (the walk sums broadcast gradients back)


class Add(Function):
    """y = a + b;  dy/da = 1, dy/db = 1."""

    def forward(self, a, b):
        return a + b

    def backward(self, gy):
        return gy, gy


class Sub(Function):
    """y = a - b;  dy/da = 1, dy/db = -1."""

    def forward(self, a, b):
        return a - b

    def backward(self, gy):
        return gy, -gy


class Mul(Function):
    """y = a * b;  dy/da = b, dy/db = a."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a * b

    def backward(self, gy):
        return gy * self.b, gy * self.a


class Div(Function):
    """y = a / b;  dy/da = 1 / b, dy/db = -a / b**2."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a / b

    def backward(self, gy):
        ga = gy / self.b
        return ga, -ga * self.a / self.b


class Pow(Function):
    """y = x ** p for a number p;  dy/dx = p x**(p - 1)."""

    def forward(self, x):
        self.x = x
        return x**self.exponent

    def backward(self, gy):
        return gy * self.exponent * self.x ** (self.exponent - 1)


class Exp(Function):
    """y = exp(x);  dy/dx = exp(x) = y."""

    def forward(self, x):
        self.y = np.exp(x)
        return self.y

    def backward(self, gy):
        return gy * self.y


class Log(Function):
    """y = log(x);  dy/dx = 1 / x."""

    def forward(self, x):
        self.x = x
        return np.log(x)

    def backward(self, gy):
        return gy / self.x


class Erf(Function):
    """y = erf(x);  dy/dx = 2/sqrt(pi) exp(-x**2)."""

    def forward(self, x):
        self.x = x
        return erf(x)

    def backward(self, gy):
        return gy * np.exp(-self.x * self.x) * (2 / np.pi**0.5)  # np.pi is a Python float: gy keeps its dtype


class Sum(Function):
    """y = x summed over `axis` (None: every axis);  dy/dx = 1: every element gets the gradient of its sum."""

    def forward(self, x):
        self.shape = x.shape
        return x.sum(axis=self.axis, keepdims=self.keepdims)

    def backward(self, gy):
        if not self.keepdims and self.axis is not None:
            gy = np.expand_dims(gy, self.axis)  # put back the summed axes, as size 1
        return np.broadcast_to(gy, self.shape)


class Max(Function):
    """y = the largest x over `axis`;  dy/dx = 1 where x is the largest (ties share it), else 0."""

    def forward(self, x):
        self.x = x
        self.y = x.max(axis=self.axis, keepdims=True)
        return self.y if self.keepdims else x.max(axis=self.axis)

    def backward(self, gy):
        if not self.keepdims and self.axis is not None:
            gy = np.expand_dims(gy, self.axis)
        winners = self.x == self.y
        return gy * winners / winners.sum(axis=self.axis, keepdims=True).astype(gy.dtype)  # ties share it


class Reshape(Function):
    """y = x with another shape, the same elements in the same order;  gx = gy with x's shape."""

    def forward(self, x):
        self.in_shape = x.shape
        return x.reshape(self.shape)

    def backward(self, gy):
        return gy.reshape(self.in_shape)


class SwapAxes(Function):
    """y = x with axes axis1 and axis2 swapped;  gx = gy with them swapped back."""

    def forward(self, x):
        return x.swapaxes(self.axis1, self.axis2)

    def backward(self, gy):
        return gy.swapaxes(self.axis1, self.axis2)


class GetItem(Function):
    """y = x[index] (slices, integers, integer arrays);  gx = 0, plus gy added where each y came from."""

    def forward(self, x):
        self.shape = x.shape
        return x[self.index]

    def backward(self, gy):
        gx = np.zeros(self.shape, dtype=gy.dtype)
        np.add.at(gx, self.index, gy)  # an index that repeats gets every gradient sent to it, added
        return gx


class MaskedFill(Function):
    """y = value where mask, else x;  dy/dx = 0 where mask, else 1."""

    def forward(self, x):
        return np.where(self.mask, self.value, x)

    def backward(self, gy):
        return np.where(self.mask, 0, gy)


class MatMul(Function):
    """y = a @ b, batched over the leading axes;  ga = gy @ bᵀ, gb = aᵀ @ gy (ᵀ: the last two axes swapped)."""

    def forward(self, a, b):
        self.a, self.b = a, b
        return a @ b

    def backward(self, gy):
        return gy @ self.b.swapaxes(-1, -2), self.a.swapaxes(-1, -2) @ gy
