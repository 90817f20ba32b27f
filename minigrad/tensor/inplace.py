"""Tensor's in-place updates, a base class of Tensor: `+=`, `-=`, `*=`, `/=`, `x[index] = value`, and `add_`,
`sub_`, `mul_`, `div_`, `clamp_`, `exp_`, `log_`, `relu_`, `masked_fill_`, `scatter_`, `scatter_add_`, `zero_`,
`fill_`, `copy_`, as in PyTorch.

In place means in place: `w -= x` writes into w's own array, so every reference to w sees the change
(the optimizer's update, `with mg.no_grad(): w -= lr * w.grad`). The result is computed as the
out-of-place op would compute it, then converted to w's dtype (a float result cannot go into an integer
tensor). Each update counts up the tensor's `_version`.

When a gradient is being recorded (grad mode on, and the tensor or the value written requires grad) the update
is recorded too, as PyTorch records it: the tensor becomes the output of the op that made its new values, whose
input is a stand-in for the tensor as it was (versions.py). Backward refuses an op that saved a tensor changed
in place after it ran, with PyTorch's error. Refused at once, as in PyTorch: a leaf that requires grad (do the
update under `mg.no_grad()`).

Read next: versions.py, then shape.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import minigrad
from minigrad.core import autograd, backend
from minigrad.core.dtypes import category
from minigrad.tensor import versions

LEAF_ERROR = "a leaf Variable that requires grad is being used in an in-place operation."


class InPlaceMethods:
    """The in-place methods of `Tensor` (tensor.py); `self` is always a Tensor."""

    __slots__ = ()

    def __iadd__(self, other: Any) -> Any:
        return self.add_(other)

    def __isub__(self, other: Any) -> Any:
        return self.sub_(other)

    def __imul__(self, other: Any) -> Any:
        return self.mul_(other)

    def __itruediv__(self, other: Any) -> Any:
        return self.div_(other)

    def add_(self, other: Any, *, alpha: float = 1) -> Any:
        """self += alpha * other, in place."""
        return self._in_place("add_", lambda x: x + (other if alpha == 1 else alpha * other), other)

    def sub_(self, other: Any, *, alpha: float = 1) -> Any:
        """self -= alpha * other, in place."""
        return self._in_place("sub_", lambda x: x - (other if alpha == 1 else alpha * other), other)

    def mul_(self, other: Any) -> Any:
        """self *= other, in place."""
        return self._in_place("mul_", lambda x: x * other, other)

    def div_(self, other: Any) -> Any:
        """self /= other, in place (an integer tensor cannot hold the float quotient: that raises)."""
        return self._in_place("div_", lambda x: x / other, other)

    def clamp_(self, min: Any = None, max: Any = None) -> Any:  # noqa: A002 (PyTorch's names)
        """self = clamp(self, min, max), in place."""
        return self._in_place("clamp_", lambda x: x.clamp(min, max))

    def exp_(self) -> Any:
        """self = exp(self), in place."""
        return self._in_place("exp_", lambda x: x.exp())

    def log_(self) -> Any:
        """self = log(self), in place."""
        return self._in_place("log_", lambda x: x.log())

    def relu_(self) -> Any:
        """self = max(self, 0), in place."""
        return self._in_place("relu_", lambda x: x.relu())

    def masked_fill_(self, mask: Any, value: Any) -> Any:
        """Where `mask` is True, `value`, in place (see `masked_fill`)."""
        return self._in_place("masked_fill_", lambda x: x.masked_fill(mask, value), value)

    def scatter_(self, dim: int, index: Any, src: Any = None, *, value: Any = None, reduce: str | None = None) -> Any:
        """`src` (or the number `value`) written at `index` along `dim`, in place (see `scatter`)."""
        return self._in_place("scatter_", lambda x: x.scatter(dim, index, src, value=value, reduce=reduce), src)

    def scatter_add_(self, dim: int, index: Any, src: Any) -> Any:
        """`src` added at `index` along `dim`, in place (see `scatter_add`)."""
        return self._in_place("scatter_add_", lambda x: x.scatter_add(dim, index, src), src)

    # Random fills, as PyTorch's: drawn on the host from the seeded generator (or `generator`), in this dtype.
    def uniform_(self, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Any:
        """Every element drawn from U[a, b), in place."""
        return self._fill_random("uniform_", lambda rng: rng.uniform(a, b, self.shape), generator)

    def normal_(self, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Any:
        """Every element drawn from N(mean, std**2), in place."""
        return self._fill_random("normal_", lambda rng: rng.normal(mean, std, self.shape), generator)

    def exponential_(self, lambd: float = 1.0, *, generator: Any = None) -> Any:
        """Every element drawn from the exponential distribution of rate `lambd` (density lambd * exp(-lambd x))."""
        return self._fill_random("exponential_", lambda rng: rng.exponential(1.0 / lambd, self.shape), generator)

    def bernoulli_(self, p: Any = 0.5, *, generator: Any = None) -> Any:
        """Every element 1 with probability `p` (a number, or a tensor of probabilities broadcast to this shape),
        else 0, in place."""
        probs = backend.as_numpy(p.array) if hasattr(p, "requires_grad") else p
        return self._fill_random("bernoulli_", lambda rng: rng.random(self.shape) < probs, generator)

    def random_(self, from_: int | None = None, to: int | None = None, *, generator: Any = None) -> Any:
        """Every element an integer drawn uniformly from [from_, to - 1], in place; `random_(n)` draws from
        [0, n - 1], and `random_()` from [0, 2**mantissa] for a float dtype (every such integer is exact),
        [0, max] for an integer one, as in PyTorch."""
        if to is None:
            if from_ is None:
                top = 2 ** (np.finfo(self.dtype).nmant + 1) if self.dtype.kind == "f" else np.iinfo(self.dtype).max
                from_, to = 0, int(top) + (self.dtype.kind == "f")
            else:
                from_, to = 0, from_
        if to <= from_:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={from_} >= to={to}")
        return self._fill_random("random_", lambda rng: rng.integers(from_, to, self.shape), generator)

    def _fill_random(self, op: str, draw: Callable[[Any], Any], generator: Any) -> Any:
        values = draw(minigrad.random.rng_for(generator))
        return self._write(op, (Ellipsis,), None, backend.to_device(np.asarray(values).astype(self.dtype), self.device))

    def zero_(self) -> Any:
        """Every element set to 0, in place."""
        return self.fill_(0)

    def fill_(self, value: Any) -> Any:
        """Every element set to `value` (a number or a one-element tensor), in place."""
        if hasattr(value, "requires_grad") and value.array.size != 1:
            raise RuntimeError(f"fill_: only supports a 0-dimension value tensor, not shape {value.shape}")
        if hasattr(value, "requires_grad") and value.ndim:
            value = value.reshape(())
        return self._write("fill_", (Ellipsis,), None, value)

    def copy_(self, source: Any) -> Any:
        """The values of `source` (broadcast to this shape, converted to this dtype) copied in, in place."""
        if not hasattr(source, "requires_grad") and not isinstance(source, (bool, int, float)):
            source = backend.to_device(source if hasattr(source, "dtype") else np.asarray(source), self.device)
        return self._write("copy_", (Ellipsis,), None, source)

    def __setitem__(self, index: Any, value: Any) -> None:
        """x[index] = value, with PyTorch's indices (as `x[index]` reads them) and broadcasting; recorded in a
        graph when x or value requires grad (ops/indexing.py's SetItem)."""
        basic, advanced = minigrad.ops.indexing.split_index(index, self.device)
        self._write("__setitem__", basic, advanced, value)

    def _write(self, op: str, basic: Any, advanced: Any, value: Any) -> Any:
        """x[basic][advanced] = value, in place: recorded as SetItem when a gradient is being recorded."""
        if self._recording(op, value):
            if not hasattr(value, "requires_grad"):
                value = minigrad.Tensor(value, dtype=self.dtype, device=self.device)
            return self._record(op, lambda x: minigrad.ops.indexing.SetItem.apply(
                x, value._cast(self.dtype), basic=basic, advanced=advanced))
        if hasattr(value, "requires_grad"):
            value = backend.to_device(value.array, self.device)
        try:
            minigrad.ops.indexing._select(self.array, basic, advanced, value)  # converted to this dtype
        except ValueError as error:  # NumPy: a read-only view (expand) or a shape that does not broadcast
            raise RuntimeError(f"{op}: cannot write into this tensor of shape {self.shape}: {error}") from error
        self._version += 1
        return self

    def _recording(self, op: str, value: Any = None) -> bool:
        """Whether this update must be recorded in the graph; refuses a leaf that requires grad, as PyTorch."""
        if not autograd.grad_mode.enabled or not (self.requires_grad or getattr(value, "requires_grad", False)):
            return False
        if self._ctx is None and self.requires_grad:
            raise RuntimeError(f"{op}: {LEAF_ERROR} Update it under `with mg.no_grad():`")
        return True

    def _in_place(self, op: str, compute: Callable[[Any], Any], value: Any = None) -> Any:
        """Write `compute(self)` into this tensor's own array; return the tensor."""
        if self._recording(op, value):
            return self._record(op, compute)
        with autograd.no_grad():
            result = compute(self)
        _check_result(op, self, result)
        try:
            self.array[...] = result.array  # converted to this tensor's dtype, as PyTorch does
        except ValueError as error:  # NumPy: a read-only view (expand)
            raise RuntimeError(f"{op}: cannot write into this tensor of shape {self.shape}: {error}") from error
        self._version += 1
        return self

    def _record(self, op: str, compute: Callable[[Any], Any]) -> Any:
        """The update, recorded: `compute` runs on a stand-in for this tensor, and this tensor takes over the
        result's op and values (versions.py)."""
        links = []
        if getattr(self.array, "base", None) is not None:
            links = versions.bases_of_view(self)
            if links is None:
                raise RuntimeError(f"{op}: this tensor shares its memory with another, and minigrad records an "
                                   "in-place update in a graph only on a tensor that owns its memory or on one "
                                   "reshape, transpose or slice of it; write y = y + ... (out of place), or update "
                                   "a clone()")
            if links and links[-1][1]._ctx is None and links[-1][1].requires_grad:
                raise RuntimeError(f"{op}: a view of a leaf Variable that requires grad is being used in an "
                                   "in-place operation. Update it under `with mg.no_grad():`")
        old = versions.stand_in(self)
        result = compute(old)
        _check_result(op, self, result)
        if result.array is not self.array:  # SetItem wrote in place already
            versions.write_result(self, result)
        versions.take_over(self, result, old)
        view = self
        for ctx, base in links:  # the bases' values changed with the view's: record that too (versions.py)
            versions.update_base(base, view, ctx)
            view = base
        return self


def _check_result(op: str, x: Any, result: Any) -> None:
    """An in-place result must fit: no higher dtype category (a float into an integer tensor), the same shape."""
    if category(result.dtype) > category(x.dtype):
        raise RuntimeError(f"{op}: result type {result.dtype} can't be cast to the desired output type {x.dtype}")
    if result.shape != x.shape:
        raise RuntimeError(f"{op}: the result's shape {result.shape} does not match this tensor's "
                           f"{x.shape} (an in-place op cannot change it)")
