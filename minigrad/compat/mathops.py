"""The `torch.*` spellings of the math methods, as `mg.*` functions: `mg.exp(x)` is `x.exp()`,
`mg.sum(x, dim=1)` is `x.sum(dim=1)`, `mg.maximum(a, b)` is `a.maximum(b)`, and so on.

Each is one line; the op, its arguments and its derivative are documented on the Tensor method
(tensor/tensor.py, math.py, shape.py) and in ops/. The second half holds the shape and selection functions
(`mg.tril`, `mg.sort`, `mg.gather`, ...), the products (`mg.matmul`, `mg.einsum`, ...), the comparisons that
answer for a whole tensor (`mg.allclose`, `mg.equal`) and the ways to make a tensor from an array (`mg.from_numpy`,
`mg.as_tensor`). Read next: functional.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core import backend
from minigrad.core.dtypes import check_dtype
from minigrad.tensor import Tensor

__all__ = [
    "abs", "amax", "amin", "argmax", "argmin", "clamp", "clip", "cos", "cumsum", "erf", "exp", "log", "log_softmax",
    "logsumexp", "max", "maximum", "mean", "min", "minimum", "norm", "prod", "relu", "rsqrt", "sigmoid", "sign",
    "sin", "softmax", "sqrt", "square", "std", "sum", "tanh", "var",
    # the shape, selection, products and comparison functions (the second half of this file)
    "allclose", "argsort", "as_tensor", "bmm", "chunk", "cumprod", "diag", "dot", "einsum", "empty", "equal",
    "flatten", "flip", "from_numpy", "gather", "index_select", "is_tensor", "isclose", "matmul", "numel", "outer",
    "roll", "scatter", "scatter_add", "sort", "split", "topk", "tril", "triu", "unbind",
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


def cumprod(input: Any, *args: Any, **kwargs: Any) -> Tensor:
    return _as_tensor(input).cumprod(*args, **kwargs)


# Shape and selection
def flatten(input: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    return input.flatten(start_dim, end_dim)


def flip(input: Tensor, dims: Any) -> Tensor:
    return input.flip(dims)


def roll(input: Tensor, shifts: Any, dims: Any = None) -> Tensor:
    return input.roll(shifts, dims)


def split(tensor: Tensor, split_size_or_sections: Any, dim: int = 0) -> tuple[Tensor, ...]:
    return tensor.split(split_size_or_sections, dim)


def chunk(input: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    return input.chunk(chunks, dim)


def unbind(input: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    return input.unbind(dim)


def tril(input: Tensor, diagonal: int = 0) -> Tensor:
    return input.tril(diagonal)


def triu(input: Tensor, diagonal: int = 0) -> Tensor:
    return input.triu(diagonal)


def diag(input: Tensor, diagonal: int = 0) -> Tensor:
    return input.diag(diagonal)


def gather(input: Tensor, dim: int, index: Any) -> Tensor:
    return input.gather(dim, index)


def index_select(input: Tensor, dim: int, index: Any) -> Tensor:
    return input.index_select(dim, index)


def scatter(input: Tensor, dim: int, index: Any, src: Any = None, *, value: Any = None,
            reduce: str | None = None) -> Tensor:
    return input.scatter(dim, index, src, value=value, reduce=reduce)


def scatter_add(input: Tensor, dim: int, index: Any, src: Tensor) -> Tensor:
    return input.scatter_add(dim, index, src)


def sort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
    return input.sort(dim, descending, stable)


def argsort(input: Tensor, dim: int = -1, descending: bool = False, stable: bool = False) -> Tensor:
    return input.argsort(dim, descending, stable)


def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
    return input.topk(k, dim, largest, sorted)


# Products
def matmul(input: Tensor, other: Tensor) -> Tensor:
    return input @ other


def bmm(input: Tensor, mat2: Tensor) -> Tensor:
    """Batched matrix products of two 3-D tensors with one batch size, (b, n, m) @ (b, m, p), without broadcasting."""
    if input.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: both inputs must be 3-D tensors, got {input.ndim}-D and {mat2.ndim}-D")
    if input.shape[0] != mat2.shape[0]:
        raise RuntimeError(f"bmm: batch sizes differ: {input.shape} and {mat2.shape}")
    return input @ mat2


def dot(input: Tensor, other: Tensor) -> Tensor:
    """The inner product of two 1-D tensors of one size and dtype."""
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"dot: both inputs must be 1-D, got {input.ndim}-D and {other.ndim}-D")
    if input.shape != other.shape:
        raise RuntimeError(f"dot: sizes differ: {input.shape[0]} and {other.shape[0]} elements")
    return input @ other


def outer(input: Tensor, vec2: Tensor) -> Tensor:
    """out[i, j] = input[i] * vec2[j], for two 1-D tensors."""
    if input.ndim != 1 or vec2.ndim != 1:
        raise RuntimeError(f"outer: both inputs must be 1-D, got {input.ndim}-D and {vec2.ndim}-D")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


def einsum(equation: str, *operands: Any) -> Tensor:
    """The contraction that `equation` names (`bij,bjk->bik`, `bhqd,bhkd->bhqk`, `...ij->...ji`), as torch.einsum;
    differentiable (ops/linalg.py's Einsum). A letter repeated within one operand (a trace) is refused."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    dtypes = {t.dtype for t in operands}
    if len(dtypes) > 1:
        raise RuntimeError(f"einsum: the operands must have one dtype, got {sorted(map(str, dtypes))}")
    from minigrad.ops.linalg import Einsum, parse_einsum  # here: the ops import the tensor package

    subscripts, output = parse_einsum(equation, len(operands))
    return Einsum.apply(*operands, subscripts=subscripts, output=output)


# Whole-tensor comparisons: Python values, not tensors
def isclose(input: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Tensor:
    """|input - other| <= atol + rtol * |other| elementwise (a bool tensor); both of one dtype, as PyTorch asks."""
    if input.dtype != other.dtype:
        raise RuntimeError(f"isclose: both inputs must have one dtype, got {input.dtype} and {other.dtype}")
    xp = backend.get_array_module(input.array)
    return Tensor._make(xp.isclose(input.array, other.array, rtol=rtol, atol=atol, equal_nan=equal_nan), False)


def allclose(input: Tensor, other: Tensor, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> bool:
    """Whether isclose holds for every element."""
    return bool(isclose(input, other, rtol, atol, equal_nan).array.all())


def equal(input: Tensor, other: Tensor) -> bool:
    """Whether the two tensors have one shape and equal elements."""
    return input.shape == other.shape and bool((input == other).array.all())


def numel(input: Tensor) -> int:
    return input.numel()


def is_tensor(obj: Any) -> bool:
    return isinstance(obj, Tensor)


# Tensors from arrays
def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A tensor that shares the array's memory and keeps its dtype (float64 stays float64), as torch.from_numpy:
    writing into one changes the other."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}")
    check_dtype(ndarray.dtype)
    return Tensor._make(ndarray, False)


def as_tensor(data: Any, dtype: Any = None, device: Any = None) -> Tensor:
    """`data` as a tensor, sharing memory where it can (a tensor, or a NumPy array, of the asked dtype and device),
    as torch.as_tensor: an array keeps its dtype; lists become tensors as in mg.tensor."""
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    if isinstance(data, np.ndarray):
        if (dtype is None or check_dtype(dtype) == data.dtype) and device in (None, "cpu"):
            return from_numpy(data)
        return Tensor(data, dtype=data.dtype if dtype is None else dtype, device=device)
    return Tensor(data, dtype=dtype, device=device)


def empty(*size: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """An uninitialised tensor in PyTorch; here filled with zeros (the values must not be relied on)."""
    from minigrad.factories import zeros  # here: factories imports the tensor package too

    return zeros(*size, **({} if dtype is None else {"dtype": dtype}), device=device, requires_grad=requires_grad)
