"""More of PyTorch's everyday tensor functions, composed from what minigrad has: `nonzero`, `meshgrid`, and the
Tensor methods `type_as`, `index_fill` / `index_fill_`, `nonzero`, `narrow`, `is_contiguous` and `__format__`
(`CompatTensorMethods`, a base class of tensor_methods.py's `CompatMathMethods`, attached to Tensor from above).

`nonzero` answers with integer positions and has no gradient, as in PyTorch; `meshgrid` is reshapes and expands,
so its gradient sums back over the grid; `index_fill_` is an indexed write (`x[:, index] = value`), recorded in a
graph as any in-place write is (../tensor/inplace.py).
Read next: legacy_types.py.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

import minigrad
from minigrad.core import backend

__all__ = ["meshgrid", "nonzero"]


def nonzero(input: Any, *, as_tuple: bool = False) -> Any:
    """The positions of the nonzero elements, in row-major order: an int64 tensor (N, input.ndim), or with
    `as_tuple` one int64 tensor of N positions per dim (what `x[x.nonzero(as_tuple=True)]` indexes with)."""
    x = input if isinstance(input, minigrad.Tensor) else minigrad.tensor(input)
    xp = backend.get_array_module(x.array)
    if as_tuple:
        found = xp.nonzero(x.array.reshape(1) if x.ndim == 0 else x.array)  # PyTorch treats a 0-d input as 1-d
        return tuple(minigrad.Tensor._make(i.astype(np.int64), False) for i in found)
    return minigrad.Tensor._make(xp.argwhere(x.array).astype(np.int64), False)


def meshgrid(*tensors: Any, indexing: str | None = None) -> tuple[minigrad.Tensor, ...]:
    """Coordinate grids from 1-d tensors: output i holds tensors[i] along dim i, repeated along the others.

    indexing="ij" (matrix indexing: output shape (len(t0), len(t1), ...)) or "xy" (Cartesian: the first two dims
    swapped, as NumPy's default). PyTorch's default is "ij" and it warns when `indexing` is not given; so does this.
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument.",
                      UserWarning, stacklevel=2)
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise ValueError(f"torch.meshgrid: indexing must be one of 'xy' or 'ij', but received: {indexing}")
    if any(t.ndim > 1 for t in tensors):
        raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list")
    swap = indexing == "xy" and len(tensors) >= 2
    order = [1, 0, *range(2, len(tensors))] if swap else list(range(len(tensors)))  # which input on which dim
    shape = tuple(tensors[i].numel() for i in order)
    grids = []
    for dim, i in enumerate(order):
        sizes = [1] * len(tensors)
        sizes[dim] = -1
        grids.append((i, tensors[i].reshape(*sizes).expand(*shape)))
    return tuple(grid for _, grid in sorted(grids, key=lambda pair: pair[0]))


class CompatTensorMethods:
    """The Tensor methods of this file (`self` is always a Tensor)."""

    __slots__ = ()

    def type_as(self, other: Any) -> minigrad.Tensor:
        """This tensor with `other`'s dtype (and device), as `x.type(other.type())`: itself when they match."""
        return self.to(other.device, other.dtype)

    def __format__(self, spec: str) -> str:
        """f"{loss:.4f}" on a 0-d tensor formats its number, as PyTorch's does; any other tensor takes no spec."""
        return format(self.item(), spec) if self.ndim == 0 else object.__format__(self, spec)

    def is_contiguous(self) -> bool:
        """Whether the elements lie in memory in row-major order (what `view` needs; `contiguous()` makes it so)."""
        return bool(self.array.flags.c_contiguous)

    def nonzero(self, *, as_tuple: bool = False) -> Any:
        return nonzero(self, as_tuple=as_tuple)

    def narrow(self, dim: int, start: int, length: int) -> minigrad.Tensor:
        """Elements start .. start + length - 1 along `dim`: x[:, start:start + length] for dim 1 (a view)."""
        n = self.shape[dim]
        start = start + n if start < 0 else start
        if not 0 <= start <= n or length < 0 or start + length > n:
            raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
        return self[(slice(None),) * (dim % self.ndim) + (slice(start, start + length),)]

    def index_fill_(self, dim: int, index: Any, value: Any) -> minigrad.Tensor:
        """`value` written at the positions `index` (1-d integers) along `dim`, in place: x[:, index] = value."""
        if not -max(self.ndim, 1) <= dim < max(self.ndim, 1):
            raise IndexError(f"index_fill_: dim {dim} is out of range for a tensor with {self.ndim} dims")
        index = index if isinstance(index, minigrad.Tensor) else minigrad.tensor(index)
        if index.dtype != np.int64 or index.ndim > 1:
            raise IndexError(f"index_fill_(): Expected a 0-d or 1-d int64 index, not {index.ndim}-d {index.dtype}")
        if isinstance(value, minigrad.Tensor) and value.ndim != 0:
            raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got tensor with "
                               f"{value.ndim} dimension(s).")
        self[(slice(None),) * (dim % max(self.ndim, 1)) + (index.reshape(-1),)] = value
        return self

    def index_fill(self, dim: int, index: Any, value: Any) -> minigrad.Tensor:
        """A copy of this tensor with `value` at the positions `index` along `dim` (differentiable)."""
        return self.clone().index_fill_(dim, index, value)
