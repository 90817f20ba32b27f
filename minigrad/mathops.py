"""The `torch.*` spellings of the math methods, as `mg.*` functions: `mg.exp(x)` is `x.exp()`,
`mg.sum(x, dim=1)` is `x.sum(dim=1)`, `mg.maximum(a, b)` is `a.maximum(b)`, and so on.

Each is one line; the op, its arguments and its derivative are documented on the Tensor method
(tensor/tensor.py) and in ops/. Read next: functional.py.
"""

from __future__ import annotations

from typing import Any

from minigrad.tensor import Tensor

__all__ = [
    "abs", "amax", "amin", "argmax", "argmin", "clamp", "clip", "cos", "cumsum", "erf", "exp", "log", "log_softmax",
    "logsumexp", "max", "maximum", "mean", "min", "minimum", "norm", "prod", "relu", "rsqrt", "sigmoid", "sign",
    "sin", "softmax", "sqrt", "square", "std", "sum", "tanh", "var",
]


def _as_tensor(x: Any) -> Tensor:
    return x if isinstance(x, Tensor) else Tensor(x)


# Elementwise
def exp(input: Any) -> Tensor:
    return _as_tensor(input).exp()


def log(input: Any) -> Tensor:
    return _as_tensor(input).log()


def sqrt(input: Any) -> Tensor:
    return _as_tensor(input).sqrt()


def rsqrt(input: Any) -> Tensor:
    return _as_tensor(input).rsqrt()


def square(input: Any) -> Tensor:
    return _as_tensor(input).square()


def abs(input: Any) -> Tensor:
    return _as_tensor(input).abs()


def sign(input: Any) -> Tensor:
    return _as_tensor(input).sign()


def sin(input: Any) -> Tensor:
    return _as_tensor(input).sin()


def cos(input: Any) -> Tensor:
    return _as_tensor(input).cos()


def erf(input: Any) -> Tensor:
    return _as_tensor(input).erf()


def tanh(input: Any) -> Tensor:
    return _as_tensor(input).tanh()


def sigmoid(input: Any) -> Tensor:
    return _as_tensor(input).sigmoid()


def relu(input: Any) -> Tensor:
    return _as_tensor(input).relu()


def maximum(input: Any, other: Any) -> Tensor:
    return _as_tensor(input).maximum(other)


def minimum(input: Any, other: Any) -> Tensor:
    return _as_tensor(input).minimum(other)


def clamp(input: Any, min: Any = None, max: Any = None) -> Tensor:
    return _as_tensor(input).clamp(min, max)


clip = clamp


# Reductions (each takes the method's arguments: dim=, keepdim=, and axis=, keepdims= as aliases)
def sum(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).sum(*args, **kwargs)


def mean(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).mean(*args, **kwargs)


def amax(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).amax(*args, **kwargs)


def amin(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).amin(*args, **kwargs)


def max(input: Any, *args: Any, **kwargs: Any) -> Any:
    return _as_tensor(input).max(*args, **kwargs)


def min(input: Any, *args: Any, **kwargs: Any) -> Any:
    return _as_tensor(input).min(*args, **kwargs)


def argmax(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).argmax(*args, **kwargs)


def argmin(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).argmin(*args, **kwargs)


def var(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).var(*args, **kwargs)


def std(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).std(*args, **kwargs)


def prod(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).prod(*args, **kwargs)


def cumsum(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).cumsum(*args, **kwargs)


def logsumexp(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).logsumexp(*args, **kwargs)


def norm(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).norm(*args, **kwargs)


def softmax(input: Any, dim: int, dtype: Any = None) -> Tensor:
    return _as_tensor(input).softmax(dim, dtype)


def log_softmax(input: Any, dim: int, dtype: Any = None) -> Tensor:
    return _as_tensor(input).log_softmax(dim, dtype)
