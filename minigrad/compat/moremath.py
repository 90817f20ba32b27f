"""The rest of PyTorch's everyday elementwise math, composed from the ops minigrad has: `log10`, `log1p`, `expm1`,
the hyperbolic functions, `trunc`, `frac`, `round(decimals=)`, `reciprocal`, `hypot`,
`logaddexp`, `xlogy`, `lerp`, `nan_to_num`, `clamp_min`, ... and the operators `//`, `%`, `^`, `<<`, `>>`.

Each is an `mg.*` function here, and a Tensor method through `CompatMathMethods` (a base class of Tensor, at the
end of this file): `mg.log10(x)` is `x.log10()`. They teach nothing new, so they are compositions (their gradients,
and second gradients, come from the ops they are made of), with two tools where a plain composition would lose
precision or give NaN:
- `_exact_value(composed, exact)`: NumPy's accurate value (`log1p`, `expm1`) with the composition's gradient;
- `_zero_gradient(x, values)`: a step function's value (`trunc`, `round`, `floor`) with gradient 0, as PyTorch.
`//`, `^`, `<<` and `>>` have no gradient in PyTorch either: their results do not require grad.
Read next: mathops.py (the torch.* spellings of the Tensor methods).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import minigrad
from minigrad.compat.tensor_methods import CompatTensorMethods
from minigrad.core import backend

__all__ = [
    "acosh", "all", "any", "atanh", "bitwise_and", "bitwise_left_shift", "bitwise_not", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "ceil", "clamp_max", "clamp_min", "cosh", "div", "dropout", "exp2",
    "expm1", "floor", "floor_divide", "fmod", "frac", "hypot", "lerp", "log10", "log1p", "log2", "logaddexp",
    "logit", "mm", "mul", "mv", "nan_to_num", "neg", "negative", "pow", "rand_like", "reciprocal", "remainder",
    "repeat_interleave", "round", "sinh", "sub", "tan", "trunc", "unsqueeze", "xlogy",
]


def _tensor(x: Any) -> minigrad.Tensor:
    return x if isinstance(x, minigrad.Tensor) else minigrad.Tensor(x)


def _float(x: Any) -> minigrad.Tensor:
    """A tensor in a float dtype: integers become the default float, as PyTorch's elementwise math does."""
    x = _tensor(x)
    return x if x.dtype.kind == "f" else x.to(minigrad.get_default_dtype())


def _exact_value(composed: minigrad.Tensor, exact: Any) -> minigrad.Tensor:
    """`composed`'s gradient with the value `exact` (an array NumPy computed more accurately): the difference is
    added as a constant. Where the two agree (infinities included) nothing is added, so inf never meets -inf."""
    xp = backend.get_array_module(composed.data)
    correction = xp.where(composed.data == exact, 0, exact - composed.data).astype(composed.dtype)
    return composed + minigrad.Tensor._make(correction, False)


def _zero_gradient(x: minigrad.Tensor, values: Any) -> minigrad.Tensor:
    """`values` (an array shaped like x) as a function of x whose gradient is 0, as PyTorch gives a step function."""
    xp = backend.get_array_module(x.data)
    everywhere = minigrad.Tensor._make(xp.ones(x.shape, dtype=bool), False)
    return minigrad.where(everywhere, minigrad.Tensor._make(values.astype(x.dtype), False), x)


def _no_gradient(ufunc: str, input: Any, other: Any) -> minigrad.Tensor:
    """A binary op PyTorch does not differentiate, on the two operands promoted as for `+`."""
    x, y = _tensor(input)._operands(other) if isinstance(input, minigrad.Tensor) else \
        tuple(reversed(_tensor(other)._operands(input)))
    return minigrad.Tensor._make(getattr(backend.get_array_module(x.data), ufunc)(x.data, y.data), False)


# Logarithms and exponentials
def log10(input: Any) -> minigrad.Tensor:
    return _float(input).log() / math.log(10)


def log2(input: Any) -> minigrad.Tensor:
    return _float(input).log() / math.log(2)


def exp2(input: Any) -> minigrad.Tensor:
    return (_float(input) * math.log(2)).exp()


def log1p(input: Any) -> minigrad.Tensor:
    """log(1 + x), accurate for tiny x (where 1 + x rounds to 1); gradient 1 / (1 + x)."""
    x = _float(input)
    return _exact_value((1 + x).log(), backend.get_array_module(x.data).log1p(x.data))


def expm1(input: Any) -> minigrad.Tensor:
    """exp(x) - 1, accurate for tiny x; gradient exp(x)."""
    x = _float(input)
    return _exact_value(x.exp() - 1, backend.get_array_module(x.data).expm1(x.data))


def logaddexp(input: Any, other: Any) -> minigrad.Tensor:
    """log(exp(a) + exp(b)) without overflow: max + log1p(exp(-|a - b|))."""
    a, b = _float(input), _float(other)
    return minigrad.maximum(a, b) + log1p((-(a - b).abs()).exp())


def xlogy(input: Any, other: Any) -> minigrad.Tensor:
    """x * log(y), and 0 where x is 0 (even where log(y) is -inf or y is inf), as PyTorch; NaN in y stays NaN.
    Its gradient for x is log(y), at x = 0 too."""
    x, y = _float(input), _float(other)
    undefined = (x == 0) & ((y == 0) | (y == math.inf))  # 0 * -inf and 0 * inf, which PyTorch calls 0
    return minigrad.where(undefined, 0.0, x * y.log())


def logit(input: Any, eps: float | None = None) -> minigrad.Tensor:
    x = _float(input)
    x = x if eps is None else x.clamp(eps, 1 - eps)
    return (x / (1 - x)).log()


# Hyperbolic functions (atan, asin, atan2 and asinh are not compositions of minigrad's ops: not here)
def sinh(input: Any) -> minigrad.Tensor:
    x = _float(input)
    return _exact_value((x.exp() - (-x).exp()) / 2, backend.get_array_module(x.data).sinh(x.data))


def cosh(input: Any) -> minigrad.Tensor:
    x = _float(input)
    return _exact_value((x.exp() + (-x).exp()) / 2, backend.get_array_module(x.data).cosh(x.data))


def acosh(input: Any) -> minigrad.Tensor:
    x = _float(input)
    return _exact_value((x + (x * x - 1).sqrt()).log(), backend.get_array_module(x.data).arccosh(x.data))


def atanh(input: Any) -> minigrad.Tensor:
    x = _float(input)
    return _exact_value(((1 + x) / (1 - x)).log() / 2, backend.get_array_module(x.data).arctanh(x.data))


def tan(input: Any) -> minigrad.Tensor:
    x = _float(input)
    return _exact_value(x.sin() / x.cos(), backend.get_array_module(x.data).tan(x.data))


# Rounding: the value changes in steps, so the gradient is 0 (frac's is 1)
def trunc(input: Any) -> minigrad.Tensor:
    x = _tensor(input)
    return x.clone() if x.dtype.kind != "f" else _zero_gradient(x, backend.get_array_module(x.data).trunc(x.data))


def floor(input: Any) -> minigrad.Tensor:
    x = _tensor(input)
    return x.clone() if x.dtype.kind != "f" else _zero_gradient(x, backend.get_array_module(x.data).floor(x.data))


def ceil(input: Any) -> minigrad.Tensor:
    x = _tensor(input)
    return x.clone() if x.dtype.kind != "f" else _zero_gradient(x, backend.get_array_module(x.data).ceil(x.data))


def round(input: Any, *, decimals: int = 0) -> minigrad.Tensor:  # noqa: A001 (PyTorch's name)
    """Half to even, as PyTorch (and NumPy): round(2.5) = 2; `decimals` rounds to that many decimal places."""
    x = _tensor(input)
    if x.dtype.kind != "f":
        return x.clone()
    return _zero_gradient(x, backend.get_array_module(x.data).round(x.data, decimals))


def frac(input: Any) -> minigrad.Tensor:
    """x - trunc(x): the fractional part, with x's sign; gradient 1."""
    x = _float(input)
    return x - trunc(x)


# Arithmetic in PyTorch's function spellings
def reciprocal(input: Any) -> minigrad.Tensor:
    return 1 / _float(input)


def neg(input: Any) -> minigrad.Tensor:
    return -_tensor(input)


negative = neg


def sub(input: Any, other: Any, *, alpha: float = 1) -> minigrad.Tensor:
    return _tensor(input) - (other if alpha == 1 else alpha * other)


def mul(input: Any, other: Any) -> minigrad.Tensor:
    return _tensor(input) * other


def div(input: Any, other: Any, *, rounding_mode: str | None = None) -> minigrad.Tensor:
    """True division; rounding_mode "floor" is `//`, "trunc" rounds towards zero."""
    if rounding_mode is None:
        return _tensor(input) / other
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode == "trunc":
        quotient = _tensor(input) / other
        return trunc(quotient).detach().to(_no_gradient("add", input, other).dtype)
    raise ValueError(f'div expected rounding_mode to be one of None, "trunc", or "floor" but found "{rounding_mode}"')


def pow(input: Any, exponent: Any) -> minigrad.Tensor:  # noqa: A001 (PyTorch's name)
    return _tensor(input) ** exponent if isinstance(input, minigrad.Tensor) else _tensor(exponent).__rpow__(input)


def hypot(input: Any, other: Any) -> minigrad.Tensor:
    a, b = _float(input), _float(other)
    return (a * a + b * b).sqrt()


def lerp(input: Any, end: Any, weight: Any) -> minigrad.Tensor:
    """input + weight * (end - input)."""
    start = _float(input)
    return start + weight * (_float(end) - start)


def clamp_min(input: Any, min: Any) -> minigrad.Tensor:  # noqa: A002 (PyTorch's names)
    return _tensor(input).clamp(min=min)


def clamp_max(input: Any, max: Any) -> minigrad.Tensor:  # noqa: A002
    return _tensor(input).clamp(max=max)


def nan_to_num(input: Any, nan: float = 0.0, posinf: float | None = None, neginf: float | None = None) -> Any:
    """NaN -> nan, +inf -> posinf, -inf -> neginf (by default the dtype's largest and smallest finite numbers);
    gradient 1 where the value is kept, 0 where it is replaced."""
    x = _tensor(input)
    if x.dtype.kind != "f":
        return x.clone()
    big = np.finfo(x.dtype).max
    x = minigrad.where(x != x, nan, x)
    x = minigrad.where(x == math.inf, big if posinf is None else posinf, x)
    return minigrad.where(x == -math.inf, -big if neginf is None else neginf, x)


# The operators with no gradient in PyTorch (// and the bitwise ones) and the remainders
def floor_divide(input: Any, other: Any) -> minigrad.Tensor:
    """`a // b`: the quotient rounded down (for floats too, as PyTorch); not differentiable."""
    return _no_gradient("floor_divide", input, other)


def remainder(input: Any, other: Any) -> minigrad.Tensor:
    """`a % b`: a - b * floor(a / b), with the sign of b (Python's %); gradient 1 for a, -floor(a / b) for b."""
    a = _tensor(input) if isinstance(input, minigrad.Tensor) else _tensor(other)._operands(input)[1]
    quotient = floor_divide(a, other)
    exact = _no_gradient("remainder", a, other)
    return _exact_value(a - quotient * other, exact.data) if exact.dtype.kind == "f" else exact


def fmod(input: Any, other: Any) -> minigrad.Tensor:
    """The remainder of division rounded towards zero (C's fmod): the sign of a."""
    a = _tensor(input)
    exact = _no_gradient("fmod", a, other)
    if exact.dtype.kind != "f":
        return exact
    return _exact_value(a - trunc(a / other).detach() * other, exact.data)


def bitwise_and(input: Any, other: Any) -> minigrad.Tensor:
    return _tensor(input) & other


def bitwise_or(input: Any, other: Any) -> minigrad.Tensor:
    return _tensor(input) | other


def bitwise_not(input: Any) -> minigrad.Tensor:
    return ~_tensor(input)


def bitwise_xor(input: Any, other: Any) -> minigrad.Tensor:
    return _bitwise("bitwise_xor", input, other)


def bitwise_left_shift(input: Any, other: Any) -> minigrad.Tensor:
    return _bitwise("left_shift", input, other)


def bitwise_right_shift(input: Any, other: Any) -> minigrad.Tensor:
    return _bitwise("right_shift", input, other)


def _bitwise(ufunc: str, input: Any, other: Any) -> minigrad.Tensor:
    dtypes = [getattr(v, "dtype", np.dtype(type(v))) for v in (input, other)]
    if "f" in {np.dtype(d).kind for d in dtypes}:
        raise TypeError(f"{ufunc}: only bool and integer tensors have it, not float")
    return _no_gradient(ufunc, input, other)


# Products and shape functions in PyTorch's spellings
def mm(input: Any, mat2: Any) -> minigrad.Tensor:
    """A matrix product of two 2-D tensors (torch.mm refuses other ranks)."""
    a, b = _tensor(input), _tensor(mat2)
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mm: both arguments must be 2-D, got {a.ndim}-D and {b.ndim}-D")
    return a @ b


def mv(input: Any, vec: Any) -> minigrad.Tensor:
    """A 2-D tensor times a 1-D one."""
    a, v = _tensor(input), _tensor(vec)
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"mv: expected a 2-D matrix and a 1-D vector, got {a.ndim}-D and {v.ndim}-D")
    return a @ v


def rand_like(input: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> minigrad.Tensor:
    """Samples of U[0, 1) shaped like `input` (its dtype and device unless given), as torch.rand_like."""
    like = _tensor(input)
    dtype = like.dtype if dtype is None else np.dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"rand_like: uniform samples need a float dtype, not {dtype}; pass dtype=")
    return minigrad.rand(*like.shape, dtype=dtype, device=device or like.device, requires_grad=requires_grad)


def dropout(input: Any, p: float, train: bool) -> minigrad.Tensor:
    return minigrad.functional.dropout(_tensor(input), p, train)


def unsqueeze(input: Any, dim: int) -> minigrad.Tensor:
    return _tensor(input).unsqueeze(dim)


def all(input: Any, dim: Any = None, keepdim: bool = False) -> minigrad.Tensor:  # noqa: A001 (PyTorch's name)
    return _tensor(input).all(dim, keepdim)


def any(input: Any, dim: Any = None, keepdim: bool = False) -> minigrad.Tensor:  # noqa: A001
    return _tensor(input).any(dim, keepdim)


def repeat_interleave(input: Any, repeats: Any, dim: int | None = None) -> minigrad.Tensor:
    """Each element (each slice along `dim`; of the flattened tensor when dim is None) `repeats` times in a row."""
    x = _tensor(input)
    if dim is None:
        x, dim = x.reshape(-1), 0
    counts = repeats.numpy() if isinstance(repeats, minigrad.Tensor) else repeats
    index = np.repeat(np.arange(x.shape[dim]), counts)
    return x.index_select(dim, minigrad.Tensor(index))


class CompatMathMethods(CompatTensorMethods):
    """These functions as Tensor methods and operators (a base class of Tensor): `x.log1p()`, `x // 2`, `2 % x`."""

    __slots__ = ()
    log10, log2, exp2, log1p, expm1, logaddexp, xlogy, logit = log10, log2, exp2, log1p, expm1, logaddexp, xlogy, logit
    sinh, cosh, tan, acosh, atanh, arccosh, arctanh = sinh, cosh, tan, acosh, atanh, acosh, atanh
    trunc, floor, ceil, round, frac, reciprocal, neg, negative = trunc, floor, ceil, round, frac, reciprocal, \
        neg, negative
    sub, mul, div, pow, hypot, lerp, clamp_min, clamp_max, nan_to_num = sub, mul, div, pow, hypot, lerp, clamp_min, \
        clamp_max, nan_to_num
    subtract, multiply, divide, true_divide = sub, mul, div, div
    floor_divide, remainder, fmod, bitwise_and, bitwise_or, bitwise_not, bitwise_xor = floor_divide, remainder, \
        fmod, bitwise_and, bitwise_or, bitwise_not, bitwise_xor
    bitwise_left_shift, bitwise_right_shift = bitwise_left_shift, bitwise_right_shift
    mm, mv, repeat_interleave = mm, mv, repeat_interleave

    def matmul(self, other: Any) -> minigrad.Tensor:
        return self @ other

    def dot(self, other: Any) -> minigrad.Tensor:
        return minigrad.dot(self, other)

    def bmm(self, mat2: Any) -> minigrad.Tensor:
        return minigrad.bmm(self, mat2)

    def t(self) -> minigrad.Tensor:
        """The transpose of a tensor of at most 2 dims (a 0-d or 1-d tensor is itself), as torch.Tensor.t."""
        if self.ndim > 2:
            raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
        return self.transpose(0, 1) if self.ndim == 2 else self

    def allclose(self, other: Any, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
        return minigrad.allclose(self, other, rtol=rtol, atol=atol, equal_nan=equal_nan)

    def __getattr__(self, name: str) -> Any:
        """A torch.Tensor name minigrad does not have: one line saying so, and what to use instead."""
        from minigrad.compat.missing import refuse

        raise refuse("minigrad.Tensor", name)

    def multinomial(self, num_samples: int, replacement: bool = False, *, generator: Any = None) -> minigrad.Tensor:
        return minigrad.multinomial(self, num_samples, replacement, generator=generator)
    __floordiv__, __mod__, __xor__, __lshift__, __rshift__ = floor_divide, remainder, bitwise_xor, \
        bitwise_left_shift, bitwise_right_shift

    def __rfloordiv__(self, other: Any) -> minigrad.Tensor:
        return floor_divide(other, self)

    def __rmod__(self, other: Any) -> minigrad.Tensor:
        return remainder(other, self)

    def __rxor__(self, other: Any) -> minigrad.Tensor:
        return bitwise_xor(other, self)

    def __rlshift__(self, other: Any) -> minigrad.Tensor:
        return bitwise_left_shift(other, self)

    def __rrshift__(self, other: Any) -> minigrad.Tensor:
        return bitwise_right_shift(other, self)
