"""Elementwise ops: each output element depends on the matching input element(s) only.

So each backward is "upstream gradient times local derivative", elementwise: gx = gy * dy/dx.
Binary ops broadcast as NumPy does (`check_broadcast` refuses shapes that do not fit); their backward returns
gradients in the broadcast shape and the engine (autograd.sum_to) sums them back to each input's shape. Real
functions (exp, log, sqrt, sin, erf, ...) turn integer input into float32, the default float, as PyTorch does.
The activation functions (relu, sigmoid, gelu, ...) are in activations.py.
Read next: activations.py, then reduce.py.
"""

from __future__ import annotations

import math
from typing import Any

from minigrad.core.backend import get_array_module
from minigrad.core.dtypes import get_default_dtype
from minigrad.core.function import Function, Tensors, check_broadcast, shapes_refused
from minigrad.kernels import special


class Add(Function):
    """y = a + b;  dy/da = 1, dy/db = 1."""

    double_backward = Tensors()  # differentiated twice by running backward on tensors (core/higher_order.py)

    def forward(self, a, b):
        check_broadcast("Add", a, b)
        return a + b

    def backward(self, gy):
        return gy, gy


class Sub(Function):
    """y = a - b;  dy/da = 1, dy/db = -1."""

    double_backward = Tensors()

    def forward(self, a, b):
        check_broadcast("Sub", a, b)
        return a - b

    def backward(self, gy):
        return gy, -gy


class Mul(Function):
    """y = a * b;  dy/da = b, dy/db = a."""

    double_backward = Tensors(a=0, b=1)  # ... where the saved self.a stands for input 0, self.b for input 1

    def forward(self, a, b):
        check_broadcast("Mul", a, b)
        self.a, self.b = a, b
        return a * b

    def backward(self, gy):
        return gy * self.b, gy * self.a


class Div(Function):
    """y = a / b;  dy/da = 1 / b, dy/db = -a / b**2 = -y / b."""

    double_backward = Tensors(b=1, y="output")

    def forward(self, a, b):
        check_broadcast("Div", a, b)
        self.b = b
        y = a / b
        if self.needs_input_grad[1]:  # y is kept only for b's gradient: a divisor that is a number needs none
            self.y = y
        return y

    def backward(self, gy):
        ga = gy / self.b
        # Only when b needs it: y may hold -inf (a masked score / sqrt(d)), and 0 * -inf would warn for nothing.
        return ga, (-ga * self.y if self.needs_input_grad[1] else None)


class Neg(Function):
    """y = -x;  dy/dx = -1."""

    double_backward = "linear"  # y = A x: for double backward its backward runs as an op (higher_order.py)

    def forward(self, x):
        return -x

    def backward(self, gy):
        return -gy


def to_float(x: Any) -> Any:
    """An integer or bool array in PyTorch's default float (float32), so exp([1, 2]) is float32, not float64."""
    return x if x.dtype.kind == "f" else x.astype(get_default_dtype())


class PowScalar(Function):
    """y = x ** c for a constant c;  dy/dx = c * x ** (c - 1)."""

    exponent: float
    double_backward = Tensors(x=0)

    def forward(self, x):
        if x.dtype.kind != "f":
            if isinstance(self.exponent, float):
                x = x.astype(get_default_dtype())  # int ** 0.5 is a float32, as in PyTorch
            elif self.exponent < 0:
                raise RuntimeError(f"pow: integers to negative integer powers are not allowed ({x.dtype} ** "
                                   f"{self.exponent}); use a float tensor")
        self.x = x
        return x**self.exponent

    def backward(self, gy):
        if self.exponent == 0:  # y = 1 does not depend on x; 0 * x ** -1 would be nan at x = 0
            return gy * 0
        return gy * (self.exponent * self.x ** (self.exponent - 1))


class Pow(Function):
    """y = a ** b;  dy/da = b * a ** (b - 1), dy/db = y * log(a).

    Where a = 0 the formulas meet 0 * inf; PyTorch's limits are used: dy/da = 0 where b = 0, and
    dy/db = 0 where b >= 0 (0 ** b is flat there), -inf or nan elsewhere, as log(0) makes it.
    """

    double_backward = Tensors(a=0, b=1, y="output")

    def forward(self, a, b):
        check_broadcast("Pow", a, b)
        self.a, self.b = a, b
        self.y = a**b
        return self.y

    def backward(self, gy):
        xp = get_array_module(gy)
        a, b = self.a, self.b
        ga = gb = None
        if self.needs_input_grad[0]:
            ga = gy * xp.where(b == 0, 0, b * a ** (b - 1))
        if self.needs_input_grad[1]:
            gb = gy * xp.where((a == 0) & (b >= 0), 0, self.y * xp.log(a))
        return ga, gb


class Exp(Function):
    """y = exp(x);  dy/dx = exp(x) = y."""

    double_backward = Tensors(y="output")

    def forward(self, x):
        self.y = get_array_module(x).exp(to_float(x))
        return self.y

    def backward(self, gy):
        return gy * self.y


class Log(Function):
    """y = log(x);  dy/dx = 1 / x."""

    double_backward = Tensors(x=0)

    def forward(self, x):
        self.x = to_float(x)
        return get_array_module(x).log(self.x)

    def backward(self, gy):
        return gy / self.x


class Sqrt(Function):
    """y = sqrt(x);  dy/dx = 1 / (2 sqrt(x)) = 0.5 / y."""

    double_backward = Tensors(y="output")

    def forward(self, x):
        self.y = get_array_module(x).sqrt(to_float(x))
        return self.y

    def backward(self, gy):
        return gy * 0.5 / self.y


class Rsqrt(Function):
    """y = 1 / sqrt(x);  dy/dx = -1 / (2 x**1.5) = -0.5 y**3."""

    double_backward = Tensors(y="output")

    def forward(self, x):
        self.y = 1 / get_array_module(x).sqrt(to_float(x))
        return self.y

    def backward(self, gy):
        return gy * (-0.5 * self.y * self.y * self.y)


class Square(Function):
    """y = x**2;  dy/dx = 2x."""

    double_backward = Tensors(x=0)

    def forward(self, x):
        self.x = x
        return x * x

    def backward(self, gy):
        return gy * (2 * self.x)


def pytorch_sign(x: Any) -> Any:
    """(x > 0) - (x < 0) in x's dtype: PyTorch's sign, 0 at nan (NumPy's sign is nan there)."""
    return (x > 0).astype(x.dtype) - (x < 0).astype(x.dtype)


class Abs(Function):
    """y = |x|;  dy/dx = sign(x) (0 at x = 0 and at nan, as in PyTorch)."""

    constants = ("sign",)  # sign(x) is flat: its derivative is 0 (higher_order.py)
    double_backward = Tensors()

    def forward(self, x):
        self.sign = pytorch_sign(x)
        return get_array_module(x).abs(x)

    def backward(self, gy):
        return gy * self.sign


class Sign(Function):
    """y = sign(x) (-1, 0 or 1; 0 at nan, as in PyTorch);  dy/dx = 0 (a step: flat wherever it has a slope)."""

    double_backward = Tensors()

    def forward(self, x):
        return pytorch_sign(x)

    def backward(self, gy):
        return get_array_module(gy).zeros_like(gy)


class Sin(Function):
    """y = sin(x);  dy/dx = cos(x)."""

    double_backward = Tensors(x=0)

    def forward(self, x):
        self.x = to_float(x)
        return get_array_module(x).sin(self.x)

    def backward(self, gy):
        return gy * get_array_module(gy).cos(self.x)


class Cos(Function):
    """y = cos(x);  dy/dx = -sin(x)."""

    double_backward = Tensors(x=0)

    def forward(self, x):
        self.x = to_float(x)
        return get_array_module(x).cos(self.x)

    def backward(self, gy):
        return gy * -get_array_module(gy).sin(self.x)


class Erf(Function):
    """y = erf(x) (special.py);  dy/dx = 2/sqrt(pi) exp(-x**2)."""

    double_backward = Tensors(x=0)

    def forward(self, x):
        self.x = to_float(x)
        return special.erf(self.x)

    def backward(self, gy):
        return gy * (2 / math.sqrt(math.pi)) * get_array_module(gy).exp(-(self.x * self.x))


class Maximum(Function):
    """y = max(a, b) elementwise;  dy/da = 1 where a > b, 1/2 where a = b, 0 where a < b (likewise for b).

    A NaN wins and propagates; both inputs then get the gradient, as in PyTorch.
    """

    double_backward = Tensors(a=0, b=1)

    def forward(self, a, b):
        check_broadcast("Maximum", a, b)
        self.a, self.b = a, b
        return get_array_module(a).maximum(a, b)

    def backward(self, gy):
        return split_at_ties(gy, self.a, self.b, self.a < self.b, self.b < self.a)


class Minimum(Function):
    """y = min(a, b) elementwise;  dy/da = 1 where a < b, 1/2 where a = b, 0 where a > b (likewise for b)."""

    double_backward = Tensors(a=0, b=1)

    def forward(self, a, b):
        check_broadcast("Minimum", a, b)
        self.a, self.b = a, b
        return get_array_module(a).minimum(a, b)

    def backward(self, gy):
        return split_at_ties(gy, self.a, self.b, self.a > self.b, self.b > self.a)


def split_at_ties(gy: Any, a: Any, b: Any, a_loses: Any, b_loses: Any) -> tuple[Any, Any]:
    """The gradients of max(a, b) or min(a, b): none to the loser, half each at a tie."""
    xp = get_array_module(gy)
    half = xp.where(a == b, 0.5, 1.0).astype(gy.dtype)
    return xp.where(a_loses, 0, gy * half), xp.where(b_loses, 0, gy * half)


class Clamp(Function):
    """y = min(max(x, low), high);  dy/dx = 1 where low <= x <= high, dy/dlow = 1 where x < low <= high,
    dy/dhigh = 1 where max(x, low) > high; 0 elsewhere (PyTorch's choice at the edges: x keeps them).

    `low` and `high` are arrays (0-d for a number); a missing bound is -inf or +inf.
    """

    double_backward = Tensors(x=0, low=1, high=2)

    def forward(self, x, low, high):
        check_broadcast("Clamp", x, low, high)
        xp = get_array_module(x)
        self.x, self.low, self.high = x, low, high
        return xp.minimum(xp.maximum(x, low), high)

    def backward(self, gy):
        xp = get_array_module(gy)
        x, low, high = self.x, self.low, self.high
        gx = gy * ((x >= low) & (x <= high))
        glow = gy * ((x < low) & (low <= high)) if self.needs_input_grad[1] else None
        ghigh = gy * (xp.maximum(x, low) > high) if self.needs_input_grad[2] else None
        return gx, glow, ghigh


class MaskedFill(Function):
    """y = value where mask, else x;  dy/dx = 0 where mask, else 1."""

    mask: Any
    value: float
    double_backward = Tensors()

    def forward(self, x):
        xp = get_array_module(x)
        with shapes_refused("MaskedFill", x):
            return xp.where(self.mask, xp.asarray(self.value, dtype=x.dtype), x)

    def backward(self, gy):
        return gy * ~self.mask


class Where(Function):
    """y = a where cond, else b;  dy/da = cond, dy/db = not cond."""

    cond: Any
    double_backward = Tensors()

    def forward(self, a, b):
        with shapes_refused("Where", a, b):  # (the condition broadcasts too)
            return get_array_module(a).where(self.cond, a, b)

    def backward(self, gy):
        return gy * self.cond, gy * ~self.cond


class Cast(Function):
    """y = x converted to another float dtype;  gx = gy converted back to x's dtype.

    Only between floats: a cast to or from integers or bools passes no gradient, so Tensor.to makes a
    constant for it instead of calling this op (tensor/convert.py).
    """

    dtype: Any
    double_backward = "linear"

    def forward(self, x):
        self.source_dtype = x.dtype
        return x.astype(self.dtype)

    def backward(self, gy):
        return gy.astype(self.source_dtype)
