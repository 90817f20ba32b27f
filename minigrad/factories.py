"""Making tensors, as PyTorch's factories do: `tensor`, `zeros`, `ones`, `full`, `randn`, `eye`, `arange`,
`linspace`, and `zeros_like`, `ones_like`, `full_like`, `randn_like` (each with dtype=, device=, requires_grad=);
and the samplers `rand`, `randint`, `randperm`, `multinomial`, `normal`, `bernoulli`, each taking `generator=`
(a `mg.Generator`; the global stream of `mg.manual_seed` when None). Samples are drawn on the host and moved,
so a seed gives the same numbers on every device (not the numbers PyTorch draws for that seed).

Where PyTorch infers a dtype from the numbers given, so does minigrad: `full((2,), 3)` and `arange(5)` are
int64, `full((2,), 3.0)` and `arange(0, 1, 0.25)` float32 (the default float), `full((2,), True)` bool.
Read next: random.py, the seeded generator behind `randn` and weight initialisation.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import random
from minigrad.core import backend
from minigrad.core.dtypes import check_dtype, get_default_dtype, result_type
from minigrad.tensor import Tensor


def tensor(data: Any, requires_grad: bool = False, dtype: Any = None, device: Any = None) -> Tensor:
    """A tensor from a number, a (nested) list or an array; float data becomes float32 unless `dtype`."""
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def _shape(shape: tuple) -> tuple[int, ...]:
    """Accept both zeros(2, 3) and zeros((2, 3)), as PyTorch does."""
    return tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape


def _size(shape: tuple, size: Any, op: str) -> tuple[int, ...]:
    """The shape given positionally or as size= (not both)."""
    if size is not None:
        if shape:
            raise TypeError(f"{op}: give the shape positionally or as size=, not both")
        return tuple(size) if isinstance(size, (tuple, list)) else (size,)
    return _shape(shape)


def zeros(*shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of `shape` filled with 0 (the default float, float32, unless `dtype`)."""
    dtype = get_default_dtype() if dtype is None else dtype
    return Tensor(np.zeros(_shape(shape), dtype=dtype), requires_grad=requires_grad, dtype=dtype, device=device)


def ones(*shape: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of `shape` filled with 1 (the default float, float32, unless `dtype`)."""
    dtype = get_default_dtype() if dtype is None else dtype
    return Tensor(np.ones(_shape(shape), dtype=dtype), requires_grad=requires_grad, dtype=dtype, device=device)


def full(size: Any, fill_value: Any, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    """A tensor of shape `size` filled with `fill_value`; the dtype follows the value unless `dtype` says."""
    dtype = result_type(fill_value) if dtype is None else check_dtype(dtype)
    data = np.full(tuple(size) if isinstance(size, (tuple, list)) else (size,), fill_value, dtype=dtype)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def randn(*shape: Any, size: Any = None, generator: random.Generator | None = None, dtype: Any = None,
          device: Any = None, requires_grad: bool = False) -> Tensor:
    """Standard normal samples, drawn on the host from the seeded generator (same on every device); the shape as
    randn(2, 3), randn((2, 3)) or randn(size=(2, 3))."""
    data = random.rng_for(generator).standard_normal(_size(shape, size, "randn"))
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def eye(n: int, m: int | None = None, dtype: Any = None, device: Any = None,
        requires_grad: bool = False) -> Tensor:
    """The n x m identity matrix (n x n unless `m`): ones on the diagonal, zeros elsewhere."""
    return Tensor(np.eye(n, m, dtype=dtype), requires_grad=requires_grad, dtype=dtype, device=device)


def arange(start: Any, end: Any = None, step: Any = 1, dtype: Any = None, device: Any = None,
           requires_grad: bool = False) -> Tensor:
    """start, start + step, ... up to but not including `end`; `arange(n)` is 0, 1, ..., n - 1.

    int64 when start, end and step are all integers, float32 when any is a float (unless `dtype`).
    """
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError("arange: step must be nonzero")
    inferred = result_type(start, end, step)
    data = np.arange(start, end, step, dtype=np.float64 if inferred.kind == "f" else inferred)
    return Tensor(data, requires_grad=requires_grad, dtype=inferred if dtype is None else dtype, device=device)


def linspace(start: float, end: float, steps: int, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """`steps` evenly spaced values from `start` to `end`, both included (float32 unless `dtype`)."""
    if steps < 0:
        raise ValueError(f"linspace: steps must be non-negative, got {steps}")
    data = np.linspace(start, end, steps)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


# ------------------------------------------------------------------------------------------------------
# Samplers, as torch.rand / randint / randperm / multinomial / normal / bernoulli.
def _float_dtype(dtype: Any, op: str) -> np.dtype:
    dtype = get_default_dtype() if dtype is None else check_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"{op}: samples need a float dtype, not {dtype}")
    return dtype


def rand(*shape: Any, size: Any = None, generator: random.Generator | None = None, dtype: Any = None,
         device: Any = None, requires_grad: bool = False) -> Tensor:
    """Samples of U[0, 1), as `torch.rand` (float32 unless `dtype`; the shape as for randn)."""
    data = random.rng_for(generator).random(_size(shape, size, "rand"))
    return Tensor(data, requires_grad=requires_grad, dtype=_float_dtype(dtype, "rand"), device=device)


def randint(*args: Any, low: int | None = None, high: int | None = None, size: Any = None,
            generator: random.Generator | None = None, dtype: Any = np.int64, device: Any = None,
            requires_grad: bool = False) -> Tensor:
    """Integers drawn uniformly from [low, high), as `torch.randint(low=0, high, size)`: int64 unless `dtype`.

    `randint(high, size)` and `randint(low, high, size)` both work, and so do keywords (`randint(10, size=(3,))`,
    `randint(low=2, high=5, size=(3,))`).
    """
    positional = list(args)
    if high is not None:  # randint([low,] high=H, size=S)
        if len(positional) > 1 or (positional and low is not None):
            raise TypeError("randint: expected randint(low, high, size); got low twice or too many arguments")
        low = positional[0] if positional else (0 if low is None else low)
    else:
        if low is not None:
            raise TypeError("randint: low= needs high=")
        if size is None and positional:
            size = positional.pop()
        if len(positional) not in (1, 2):
            raise TypeError("randint: expected randint(high, size) or randint(low, high, size)")
        low, high = (0, positional[0]) if len(positional) == 1 else positional
    if size is None:
        raise TypeError("randint: missing the size, e.g. randint(0, 10, (3,))")
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}")
    data = random.rng_for(generator).integers(int(low), int(high), tuple(size), dtype=np.int64)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def randperm(n: int, generator: random.Generator | None = None, dtype: Any = np.int64, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """A random permutation of 0, 1, ..., n - 1 (int64 unless `dtype`), as `torch.randperm`."""
    if n < 0:
        raise RuntimeError(f"randperm: n must be non-negative, got {n}")
    data = random.rng_for(generator).permutation(int(n)).astype(np.int64)
    return Tensor(data, requires_grad=requires_grad, dtype=dtype, device=device)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False,
                generator: random.Generator | None = None) -> Tensor:
    """Indices drawn from the categories of each row of `input` (1-D or 2-D non-negative weights, which need not
    sum to 1), as `torch.multinomial`: int64, shape (num_samples,) or (rows, num_samples).

    P(i) = input[i] / sum(input). Without replacement an index is never drawn twice in a row, so `num_samples`
    may not exceed the number of categories with a non-zero weight.
    """
    weights = backend.as_numpy(input.array if isinstance(input, Tensor) else np.asarray(input)).astype(np.float64)
    if weights.ndim not in (1, 2):
        raise RuntimeError(f"multinomial: prob_dist must be 1 or 2 dim, got {weights.ndim}")
    if not np.all(np.isfinite(weights)) or np.any(weights < 0):
        raise RuntimeError("multinomial: probability tensor contains either inf, nan or element < 0")
    rows = np.atleast_2d(weights)
    if np.any(rows.sum(axis=1) <= 0):
        raise RuntimeError("multinomial: invalid multinomial distribution (sum of probabilities <= 0)")
    if num_samples <= 0:
        raise RuntimeError(f"multinomial: cannot sample num_samples={num_samples} <= 0 samples")
    if not replacement and num_samples > int(np.min(np.count_nonzero(rows, axis=1))):
        raise RuntimeError("multinomial: cannot sample num_samples > the number of non-zero weights "
                           "without replacement")
    rng = random.rng_for(generator)
    samples = np.stack([rng.choice(row.size, size=num_samples, replace=replacement, p=row / row.sum())
                        for row in rows]).astype(np.int64)
    device = input.device if isinstance(input, Tensor) else None
    return Tensor(samples[0] if weights.ndim == 1 else samples, device=device)


def normal(mean: Any = 0.0, std: Any = 1.0, size: Any = None, generator: random.Generator | None = None,
           dtype: Any = None, device: Any = None) -> Tensor:
    """Samples of N(mean, std**2), as `torch.normal`: mean and std are tensors (broadcast) or numbers (then
    `size` gives the shape). The result does not carry gradients back to mean or std (PyTorch's are zero)."""
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    if not tensors and size is None:
        raise TypeError("normal: with a number for both mean and std, pass size=")
    if tensors and size is not None:
        raise TypeError("normal: size= is only for a number mean and std; the shape follows the tensors")
    if tensors:
        dtype = tensors[0].dtype if dtype is None else dtype
        device = tensors[0].device if device is None else device
    mean_data, std_data = (backend.as_numpy(v.array) if isinstance(v, Tensor) else v for v in (mean, std))
    if np.any(np.asarray(std_data) < 0):
        raise RuntimeError("normal expects std >= 0.0")
    shape = tuple(_shape(size)) if size is not None else np.broadcast_shapes(*(t.shape for t in tensors))
    data = random.rng_for(generator).normal(mean_data, std_data, shape)
    return Tensor(data, dtype=_float_dtype(dtype, "normal"), device=device)


def bernoulli(input: Tensor, p: float | None = None, generator: random.Generator | None = None) -> Tensor:
    """1 with probability `input` (elementwise, or the number `p` for every element), else 0, as
    `torch.bernoulli`; the result has input's shape, dtype and device and carries no gradient."""
    probs = backend.as_numpy(input.array) if p is None else np.full(input.shape, p)
    if np.any(probs < 0) or np.any(probs > 1) or np.any(np.isnan(probs)):
        raise RuntimeError("bernoulli: all probabilities must be in [0, 1]")
    draws = random.rng_for(generator).random(input.shape) < probs
    return Tensor(draws, dtype=input.dtype, device=input.device)


# The `_like` factories: the shape, dtype and device of `like`, unless given.
def zeros_like(like: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return full_like(like, 0, dtype=dtype, device=device, requires_grad=requires_grad)


def ones_like(like: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    return full_like(like, 1, dtype=dtype, device=device, requires_grad=requires_grad)


def full_like(like: Tensor, fill_value: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    dtype = like.dtype if dtype is None else dtype
    return full(like.shape, fill_value, dtype=dtype, device=device or like.device, requires_grad=requires_grad)


def randn_like(like: Tensor, dtype: Any = None, device: Any = None, requires_grad: bool = False) -> Tensor:
    dtype = like.dtype if dtype is None else check_dtype(dtype)
    if dtype.kind != "f":
        raise TypeError(f"randn_like: normal samples need a float dtype, not {dtype}; pass dtype=")
    return randn(*like.shape, dtype=dtype, device=device or like.device, requires_grad=requires_grad)


__all__ = ["arange", "bernoulli", "eye", "full", "full_like", "linspace", "multinomial", "normal", "ones",
           "ones_like", "rand", "randint", "randn", "randn_like", "randperm", "tensor", "zeros", "zeros_like"]
