"""Elementwise ops: each output element depends on the matching input element(s) only.

So each backward is "upstream gradient times local derivative", elementwise: gx = gy * dy/dx.
Binary ops broadcast as NumPy does; their backward returns gradients in the broadcast shape and the
engine (autograd.sum_to) sums them back to each input's shape.
Read next: reduce.py.
"""

from __future__ import annotations

import math
from typing import Any

from minigrad.backend import get_array_module
from minigrad.function import Function


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
    """y = a / b;  dy/da = 1 / b, dy/db = -a / b**2 = -y / b."""

    def forward(self, a, b):
        self.b = b
        self.y = a / b
        return self.y

    def backward(self, gy):
        ga = gy / self.b
        return ga, -ga * self.y


class Neg(Function):
    """y = -x;  dy/dx = -1."""

    def forward(self, x):
        return -x

    def backward(self, gy):
        return -gy


class PowScalar(Function):
    """y = x ** c for a constant c;  dy/dx = c * x ** (c - 1)."""

    exponent: float

    def forward(self, x):
        self.x = x
        return x**self.exponent

    def backward(self, gy):
        if self.exponent == 0:  # y = 1 does not depend on x; 0 * x ** -1 would be nan at x = 0
            return gy * 0
        return gy * (self.exponent * self.x ** (self.exponent - 1))


class Pow(Function):
    """y = a ** b;  dy/da = b * a ** (b - 1), dy/db = y * log(a)  (a > 0 where b is differentiated)."""

    def forward(self, a, b):
        self.a, self.b = a, b
        self.y = a**b
        return self.y

    def backward(self, gy):
        xp = get_array_module(gy)
        ga = gy * self.b * self.a ** (self.b - 1)
        gb = gy * self.y * xp.log(self.a) if self.needs_input_grad[1] else None
        return ga, gb


class Exp(Function):
    """y = exp(x);  dy/dx = exp(x) = y."""

    def forward(self, x):
        self.y = get_array_module(x).exp(x)
        return self.y

    def backward(self, gy):
        return gy * self.y


class Log(Function):
    """y = log(x);  dy/dx = 1 / x."""

    def forward(self, x):
        self.x = x
        return get_array_module(x).log(x)

    def backward(self, gy):
        return gy / self.x


class Sqrt(Function):
    """y = sqrt(x);  dy/dx = 1 / (2 sqrt(x)) = 0.5 / y."""

    def forward(self, x):
        self.y = get_array_module(x).sqrt(x)
        return self.y

    def backward(self, gy):
        return gy * 0.5 / self.y


class Tanh(Function):
    """y = tanh(x);  dy/dx = 1 - y**2."""

    def forward(self, x):
        self.y = get_array_module(x).tanh(x)
        return self.y

    def backward(self, gy):
        return gy * (1 - self.y * self.y)


class Sigmoid(Function):
    """y = 1 / (1 + exp(-x));  dy/dx = y * (1 - y)."""

    def forward(self, x):
        xp = get_array_module(x)
        # 0.5 * (1 + tanh(x / 2)) is the same function, and it never overflows exp(-x) for x << 0.
        self.y = 0.5 * (1 + xp.tanh(0.5 * x))
        return self.y

    def backward(self, gy):
        return gy * self.y * (1 - self.y)


class ReLU(Function):
    """y = max(x, 0);  dy/dx = 1 where x > 0, else 0."""

    def forward(self, x):
        self.positive = x > 0
        return get_array_module(x).maximum(x, 0)  # not x * positive: -inf * 0 would be nan

    def backward(self, gy):
        return gy * self.positive


class Abs(Function):
    """y = |x|;  dy/dx = sign(x)."""

    def forward(self, x):
        xp = get_array_module(x)
        self.sign = xp.sign(x)
        return xp.abs(x)

    def backward(self, gy):
        return gy * self.sign


GELU_C = math.sqrt(2 / math.pi)
GELU_A = 0.044715


class GELU(Function):
    """GPT-2's tanh approximation: y = x/2 (1 + tanh(u)), u = sqrt(2/pi) (x + 0.044715 x**3).

    dy/dx = (1 + t)/2 + x/2 (1 - t**2) du/dx, with t = tanh(u), du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x**2).
    Both directions are written in place, one line per factor, so they make two arrays instead of ten
    (minigrad/reference.py has the plain formula, and tests/test_fused.py checks that the two agree).
    """

    def forward(self, x):
        xp = get_array_module(x)
        self.x = x
        t = xp.multiply(x, x, out=xp.empty_like(x))  # (an array even for 0-d x, so tanh can write into it)
        t *= GELU_A
        t += 1
        t *= x
        t *= GELU_C  # u = C x (1 + A x**2)
        self.t = xp.tanh(t, out=t)
        y = t + 1
        y *= x
        y *= 0.5  # y = x/2 (1 + t)
        return y

    def backward(self, gy):
        x, t = self.x, self.t
        gx = x * x
        gx *= 3 * GELU_A
        gx += 1
        gx *= GELU_C
        gx *= x  # x du/dx
        sech2 = t * t
        sech2 *= -1
        sech2 += 1  # 1 - t**2
        gx *= sech2
        gx += t
        gx += 1
        gx *= 0.5  # dy/dx = (1 + t + x (1 - t**2) du/dx) / 2
        gx *= gy
        return gx


class MaskedFill(Function):
    """y = value where mask, else x;  dy/dx = 0 where mask, else 1."""

    mask: Any
    value: float

    def forward(self, x):
        xp = get_array_module(x)
        return xp.where(self.mask, xp.asarray(self.value, dtype=x.dtype), x)

    def backward(self, gy):
        return gy * ~self.mask


class Where(Function):
    """y = a where cond, else b;  dy/da = cond, dy/db = not cond."""

    cond: Any

    def forward(self, a, b):
        return get_array_module(a).where(self.cond, a, b)

    def backward(self, gy):
        return gy * self.cond, gy * ~self.cond


class Cast(Function):
    """y = x converted to another float dtype;  gx = gy converted back to x's dtype.

    Only between floats: a cast to or from integers or bools passes no gradient, so Tensor.to makes a
    constant for it instead of calling this op (tensor_convert.py).
    """

    dtype: Any

    def forward(self, x):
        self.source_dtype = x.dtype
        return x.astype(self.dtype)

    def backward(self, gy):
        return gy.astype(self.source_dtype)
