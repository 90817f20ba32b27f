"""Tensor's shape methods, a base class of Tensor: reshape and view, permute and transpose, squeeze and
unsqueeze, flatten, expand, repeat, flip, split and chunk, tril and triu, gather; then selecting, sorting and
scattering along a dim: index_select, unbind, roll, sort, argsort, topk, scatter, scatter_add, diag.

Each checks its arguments as PyTorch does (a dim may be negative; a bad one gets PyTorch's complaint, with
the op's name) and calls one op from ops/shape.py or ops/indexing.py. Several are Reshape in disguise:
squeeze, unsqueeze, flatten and unflatten only compute the new shape.

The ops import Tensor, and Tensor's class statement needs this module first, so the methods reach the ops
through the package, `minigrad.ops.shape`, when they are called.
Read next: ops/shape.py.
"""

from __future__ import annotations

import math
import operator
import warnings
from typing import Any

import numpy as np

import minigrad


class ShapeMethods:
    """The shape methods of `Tensor` (tensor.py); `self` is always a Tensor."""

    __slots__ = ()

    def reshape(self, *shape: Any) -> minigrad.Tensor:
        """The same elements in a new shape; one size may be -1 ("whatever makes the count right")."""
        return minigrad.ops.shape.Reshape.apply(self, shape=_sizes(shape))

    def view(self, *shape: Any) -> minigrad.Tensor:
        """As `reshape`, but never a copy: a tensor whose elements cannot be walked in the new shape without
        copying (x.t(), a permuted one) is refused with PyTorch's error, since writes through the "view" would be
        lost. (PyTorch's `view(dtype)`, which reinterprets the bytes, is not supported.)"""
        if len(shape) == 1 and isinstance(shape[0], (str, type, np.dtype)):
            raise TypeError(f"view({shape[0]!r}): reinterpreting the bytes as another dtype is not supported; "
                            "use .to(dtype) to convert the values")
        sizes = list(_sizes(shape))
        if sizes.count(-1) == 1 and math.prod(sizes) != 0:
            sizes[sizes.index(-1)] = self.numel() // -math.prod(sizes)
        if math.prod(sizes) == self.numel() and not _viewable(self.shape, self.array.strides, sizes):
            raise RuntimeError("view size is not compatible with input tensor's size and stride (at least one "
                               "dimension spans across two contiguous subspaces). Use .reshape(...) instead.")
        return self.reshape(*shape)

    def permute(self, *dims: Any) -> minigrad.Tensor:
        """The dims reordered: the result's dim i is this tensor's dim dims[i]. permute(1, 0) or permute((1, 0))."""
        dims = tuple(_dim(d, self.ndim, "permute") for d in _sizes(dims))
        if len(dims) != self.ndim:
            raise RuntimeError(f"permute: {len(dims)} dims given for a tensor with {self.ndim}")
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"permute: duplicate dims are not allowed: {dims}")
        return minigrad.ops.shape.Permute.apply(self, dims=dims)

    def transpose(self, *dims: Any) -> minigrad.Tensor:
        """transpose(dim0, dim1): dims dim0 and dim1 swapped, as in PyTorch (NumPy's transpose is `permute`)."""
        if len(dims) != 2:
            raise TypeError(f"transpose(dim0, dim1) swaps two dims, as in PyTorch, got {len(dims)} arguments; "
                            "use permute(*dims) for any order")
        order = list(range(self.ndim))
        dim0, dim1 = (_dim(d, self.ndim, "transpose") for d in dims)
        if self.ndim:
            order[dim0], order[dim1] = order[dim1], order[dim0]
        return minigrad.ops.shape.Permute.apply(self, dims=tuple(order))

    swapaxes = transpose  # PyTorch's and NumPy's name for the same thing
    swapdims = transpose

    @property
    def T(self) -> minigrad.Tensor:
        """The dims reversed. Meant for matrices: like PyTorch, other ranks get its deprecation warning."""
        if self.ndim != 2:
            warnings.warn(f"Tensor.T on a {self.ndim}-d tensor is deprecated in PyTorch; use .mT to transpose "
                          "batches of matrices, or permute() to reverse the dims", UserWarning, stacklevel=2)
        return minigrad.ops.shape.Permute.apply(self, dims=tuple(reversed(range(self.ndim))))

    @property
    def mT(self) -> minigrad.Tensor:
        """Each matrix in the batch transposed: the last two dims swapped."""
        if self.ndim < 2:
            raise RuntimeError(f"mT: only matrices or batches of matrices have it, not a {self.ndim}-d tensor")
        return self.transpose(-2, -1)

    def squeeze(self, dim: Any = None) -> minigrad.Tensor:
        """Size-1 dims removed: all of them, or those among `dim` (an int or a tuple; other sizes stay)."""
        if dim is None:
            chosen = range(self.ndim)
        else:
            chosen = {_dim(d, self.ndim, "squeeze") for d in (dim if isinstance(dim, (tuple, list)) else (dim,))}
        shape = tuple(n for i, n in enumerate(self.shape) if not (i in chosen and n == 1))
        return minigrad.ops.shape.Reshape.apply(self, shape=shape)

    def unsqueeze(self, dim: int) -> minigrad.Tensor:
        """A size-1 dim inserted at position `dim` (-1: a new last dim)."""
        dim = _dim(dim, self.ndim + 1, "unsqueeze")
        return minigrad.ops.shape.Reshape.apply(self, shape=self.shape[:dim] + (1,) + self.shape[dim:])

    def flatten(self, start_dim: int = 0, end_dim: int = -1) -> minigrad.Tensor:
        """Dims start_dim..end_dim merged into one (all of them by default; a 0-d tensor becomes 1-d)."""
        start, end = _dim(start_dim, self.ndim, "flatten"), _dim(end_dim, self.ndim, "flatten")
        if start > end:
            raise RuntimeError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim}")
        shape = self.shape[:start] + (math.prod(self.shape[start:end + 1]),) + self.shape[end + 1:]
        return minigrad.ops.shape.Reshape.apply(self, shape=shape)

    def unflatten(self, dim: int, sizes: Any) -> minigrad.Tensor:
        """Dim `dim` split into several of `sizes` (one may be -1), the inverse of flatten."""
        dim, sizes = _dim(dim, self.ndim, "unflatten"), _sizes((sizes,))
        known = math.prod(n for n in sizes if n != -1)
        if sizes.count(-1) > 1 or (-1 not in sizes and known != self.shape[dim]) or self.shape[dim] % max(known, 1):
            raise minigrad.ShapeError(f"unflatten: sizes {sizes} do not multiply up to {self.shape[dim]}, "
                                      f"the size of dim {dim} of shape {self.shape}")
        return minigrad.ops.shape.Reshape.apply(self, shape=self.shape[:dim] + sizes + self.shape[dim + 1:])

    def expand(self, *sizes: Any) -> minigrad.Tensor:
        """A read-only view broadcast to `sizes`: size-1 dims stretch, new dims go in front, -1 keeps a size."""
        sizes = _sizes(sizes)
        new = len(sizes) - self.ndim
        if new < 0:
            raise minigrad.ShapeError(f"expand: {len(sizes)} sizes given for a tensor with {self.ndim} dims")
        shape = []
        for i, size in enumerate(sizes):
            old = self.shape[i - new] if i >= new else None
            if size == -1 and old is None:
                raise minigrad.ShapeError(f"expand: size -1 is not allowed for the new leading dim {i}")
            size = old if size == -1 else size
            if old is not None and old != 1 and size != old:
                raise minigrad.ShapeError(f"expand: size {size} at dim {i} must match the existing size {old} "
                                          f"(only size-1 dims stretch); sizes {sizes}, shape {self.shape}")
            shape.append(size)
        return minigrad.ops.shape.Expand.apply(self, shape=tuple(shape))

    def expand_as(self, other: minigrad.Tensor) -> minigrad.Tensor:
        return self.expand(*other.shape)

    def repeat(self, *repeats: Any) -> minigrad.Tensor:
        """The tensor tiled: repeats[i] copies along dim i (more repeats than dims add leading dims)."""
        repeats = _sizes(repeats)
        if len(repeats) < self.ndim:
            raise minigrad.ShapeError(f"repeat: {len(repeats)} repeats given for a tensor with {self.ndim} dims; "
                                      "give at least one per dim")
        return minigrad.ops.shape.Repeat.apply(self, repeats=repeats)

    def flip(self, *dims: Any) -> minigrad.Tensor:
        """The order of elements reversed along `dims`: flip(0), flip(0, 1) or flip((0, 1))."""
        dims = tuple(_dim(d, self.ndim, "flip") for d in _sizes(dims))
        if len(set(dims)) != len(dims):
            raise RuntimeError(f"flip: dim {dims} appears twice")
        return minigrad.ops.shape.Flip.apply(self, dims=dims)

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[minigrad.Tensor, ...]:
        """Pieces along `dim`: of size split_size each (the last may be smaller), or of the sizes listed."""
        if self.ndim == 0:
            raise RuntimeError("split: a 0-d tensor has no dim to split")
        dim = _dim(dim, self.ndim, "split")
        n = self.shape[dim]
        if isinstance(split_size_or_sections, (list, tuple)):
            sizes = [operator.index(size) for size in split_size_or_sections]
            if sum(sizes) != n or min(sizes, default=0) < 0:
                raise minigrad.ShapeError(f"split: sizes {sizes} do not add up to {n}, the size of dim {dim}")
        else:
            size = operator.index(split_size_or_sections)
            if size <= 0 and n > 0:
                raise ValueError(f"split: split_size must be positive, got {size}")
            sizes = [min(size, n - start) for start in range(0, n, size)] if n else [0]
        pieces, start = [], 0
        for size in sizes:
            pieces.append(self[(slice(None),) * dim + (slice(start, start + size),)])
            start += size
        return tuple(pieces)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[minigrad.Tensor, ...]:
        """`chunks` pieces of equal size along `dim` (the last may be smaller, and there may be fewer)."""
        if chunks <= 0:
            raise ValueError(f"chunk: chunks must be positive, got {chunks}")
        if self.ndim == 0:
            raise RuntimeError("chunk: a 0-d tensor has no dim to split")
        n = self.shape[_dim(dim, self.ndim, "chunk")]
        if n == 0:
            return self.split([0] * chunks, dim)
        return self.split(-(-n // chunks), dim)  # ceil(n / chunks) each

    def tril(self, diagonal: int = 0) -> minigrad.Tensor:
        """The lower triangle of each matrix (the last two dims): zeros above the `diagonal`-th diagonal."""
        if self.ndim < 2:
            raise RuntimeError(f"tril: the input must have at least 2 dims, not {self.ndim}")
        return minigrad.ops.shape.Tril.apply(self, diagonal=operator.index(diagonal))

    def triu(self, diagonal: int = 0) -> minigrad.Tensor:
        """The upper triangle of each matrix (the last two dims): zeros below the `diagonal`-th diagonal."""
        if self.ndim < 2:
            raise RuntimeError(f"triu: the input must have at least 2 dims, not {self.ndim}")
        return minigrad.ops.shape.Triu.apply(self, diagonal=operator.index(diagonal))

    def gather(self, dim: int, index: Any) -> minigrad.Tensor:
        """out[i][j] = self[index[i][j]][j] for dim 0 (and likewise for any dim), as torch.gather."""
        dim = _dim(dim, self.ndim, "gather")
        index = minigrad.ops.indexing.index_array(index, self.device, "gather")
        if index.dtype.kind not in "iu":
            raise TypeError(f"gather: index must hold integers, not {index.dtype}")
        if index.ndim != self.ndim or self.ndim == 0:
            raise minigrad.ShapeError(f"gather: index {index.shape} needs as many dims as the input {self.array.shape}")
        for d, (size, limit) in enumerate(zip(index.shape, self.shape)):
            if d != dim and size > limit:
                raise minigrad.ShapeError(f"gather: index {index.shape} is larger than the input {self.array.shape} "
                                          f"at dim {d}, which is not dim {dim}")
        return minigrad.ops.indexing.Gather.apply(self, dim=dim, index=index)


    # Selecting, sorting and scattering along a dim: each reads or writes through an index (ops/indexing.py,
    # ops/scatter.py), so the gradient goes back to exactly the elements that were used.
    def index_select(self, dim: int, index: Any) -> minigrad.Tensor:
        """The slices at `index` (a 1-D integer tensor) along `dim`, in that order, as torch.index_select."""
        dim = _dim(dim, self.ndim, "index_select")
        index = _check_index(index, self, dim, "index_select")
        if index.ndim > 1:
            raise IndexError(f"index_select: index must be a vector (1-D), not of shape {index.shape}")
        return self[(slice(None),) * dim + (index.reshape(-1),)]

    def unbind(self, dim: int = 0) -> tuple[minigrad.Tensor, ...]:
        """The slices along `dim`, that dim removed, as a tuple (`torch.unbind`)."""
        dim = _dim(dim, self.ndim, "unbind")
        return tuple(self[(slice(None),) * dim + (i,)] for i in range(self.shape[dim]))

    def roll(self, shifts: Any, dims: Any = None) -> minigrad.Tensor:
        """Elements shifted by `shifts` along `dims`, those pushed past the end coming back at the start;
        without dims, along the flattened tensor (its shape kept), as torch.roll."""
        if dims is None:
            if isinstance(shifts, (tuple, list)) and len(shifts) != 1:
                raise RuntimeError(f"roll: {len(shifts)} shifts given without dims; give one dim per shift")
            return self.reshape(-1).roll(shifts, 0).reshape(self.shape)
        shifts, dims = _sizes((shifts,)), _sizes((dims,))
        if len(shifts) != len(dims):
            raise RuntimeError(f"roll: {len(shifts)} shifts and {len(dims)} dims; give one shift per dim")
        y = self
        for shift, dim in zip(shifts, dims):
            dim = _dim(dim, self.ndim, "roll")
            n = self.shape[dim]
            if n:  # y[i] = x[(i - shift) mod n]
                y = y[(slice(None),) * dim + ((np.arange(n) - shift) % n,)]
        return y

    def sort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> Any:
        """(values, indices) sorted along `dim`, as torch.sort. Always stable: equal elements keep their order
        (PyTorch's CPU sort does the same); NaN counts as the largest value, as in PyTorch."""
        x = self if self.ndim else self.reshape(1)
        dim = _dim(dim, self.ndim, "sort")
        indices = _sorted_indices(x.array, dim, descending)
        values, indices = x.gather(dim, indices), minigrad.Tensor._make(indices, False)
        if not self.ndim:
            values, indices = values.reshape(()), indices.reshape(())
        return minigrad.ops.reduce.ValuesIndices(values, indices)

    def argsort(self, dim: int = -1, descending: bool = False, stable: bool = False) -> minigrad.Tensor:
        """The indices that sort the tensor along `dim` (stable, as sort)."""
        return self.sort(dim, descending, stable).indices

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> Any:
        """(values, indices) of the k largest (or smallest) elements along `dim`, largest first, as torch.topk.

        Among equal elements the one seen first comes first. PyTorch leaves that order unspecified (its CPU
        kernel may give the tied indices in another order); the values are the same.
        """
        dim = _dim(dim, self.ndim, "topk")
        n = self.shape[dim] if self.ndim else 1
        if not 0 <= operator.index(k) <= n:
            raise RuntimeError(f"topk: k ({k}) is out of range for a dim of size {n}")
        values, indices = self.sort(dim, descending=largest)
        picked = (slice(None),) * dim + (slice(0, k),) if self.ndim else ()
        return minigrad.ops.reduce.ValuesIndices(values[picked], indices[picked])

    def scatter(self, dim: int, index: Any, src: Any = None, *, value: Any = None,
                reduce: str | None = None) -> minigrad.Tensor:
        """A copy with `src` (a tensor, or a number) written at `index` along `dim`, as torch.scatter:
        for dim 0, out[index[i][j]][j] = src[i][j]."""
        if reduce is not None:
            raise NotImplementedError("scatter: minigrad has no reduce=; use scatter_add for reduce='add'")
        dim = _dim(dim, self.ndim, "scatter")
        index = _check_index(index, self, dim, "scatter")
        src = _scatter_source(self, value if src is None else src, index, "scatter")
        return minigrad.ops.scatter.Scatter.apply(self, src, dim=dim, index=index)

    def scatter_add(self, dim: int, index: Any, src: Any) -> minigrad.Tensor:
        """A copy with `src` added at `index` along `dim` (a position named twice adds both), as torch.scatter_add."""
        dim = _dim(dim, self.ndim, "scatter_add")
        index = _check_index(index, self, dim, "scatter_add")
        src = _scatter_source(self, src, index, "scatter_add")
        return minigrad.ops.scatter.ScatterAdd.apply(self, src, dim=dim, index=index)

    def diag(self, diagonal: int = 0) -> minigrad.Tensor:
        """A 1-D tensor's square matrix with it on the `diagonal`-th diagonal, or a matrix's diagonal, as torch.diag."""
        k = operator.index(diagonal)
        if self.ndim == 1:
            n = self.shape[0]
            m = n + abs(k)
            flat = (np.arange(n) + max(-k, 0)) * m + np.arange(n) + max(k, 0)  # row * m + column
            zeros = minigrad.factories.zeros(m * m, dtype=self.dtype, device=self.device)
            return zeros.scatter(0, flat, self).reshape(m, m)
        if self.ndim == 2:
            rows, columns = self.shape
            length = max(0, min(rows, columns - k) if k >= 0 else min(rows + k, columns))
            return self[np.arange(length) + max(-k, 0), np.arange(length) + max(k, 0)]
        raise RuntimeError(f"diag: the input must have 1 or 2 dims, not {self.ndim}")


def _sizes(args: tuple) -> tuple[int, ...]:
    """Sizes or dims given either way, f(2, 3) or f((2, 3)), as plain ints."""
    if len(args) == 1 and isinstance(args[0], (tuple, list)):
        args = tuple(args[0])
    return tuple(operator.index(a) for a in args)


def _viewable(shape: tuple[int, ...], strides: tuple[int, ...], new_shape: list[int]) -> bool:
    """Whether an array of `shape` and `strides` can be seen in `new_shape` without a copy: PyTorch's rule (its
    computeStride). The dims are split into chunks whose elements are evenly spaced in memory; each chunk must be
    made of whole dims of the new shape (a new dim cannot span two chunks)."""
    if not shape or math.prod(shape) == 0:
        return True
    view_d, view_numel, chunk_numel, base = len(new_shape) - 1, 1, 1, strides[-1]
    for d in range(len(shape) - 1, -1, -1):
        chunk_numel *= shape[d]
        if d == 0 or (shape[d - 1] != 1 and strides[d - 1] != chunk_numel * base):  # the chunk ends here
            while view_d >= 0 and (view_numel < chunk_numel or new_shape[view_d] == 1):
                view_numel *= new_shape[view_d]
                view_d -= 1
            if view_numel != chunk_numel:
                return False
            if d > 0:
                base, chunk_numel, view_numel = strides[d - 1], 1, 1
    return view_d == -1


def _dim(dim: Any, ndim: int, op: str) -> int:
    """`dim` (negative counts from the end) as 0..ndim-1; a 0-d tensor accepts 0 and -1, as in PyTorch."""
    dim = operator.index(dim)
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"{op}: dim {dim} is out of range for a tensor with {ndim} dims (expected {-n}..{n - 1})")
    return dim % n


def _check_index(index: Any, x: Any, dim: int, op: str) -> Any:
    """An integer index for `op` along `dim` of x, as a backend array; out-of-range values are refused."""
    index = minigrad.ops.indexing.index_array(index, x.device, op)
    if op.startswith("scatter") and index.ndim == 0 and x.ndim == 1:  # PyTorch reads a 0-d index as one position
        index = index.reshape(1)
    if index.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must hold integers, not {index.dtype}")
    n = x.shape[dim] if x.ndim else 1
    if index.size and (int(index.min()) < 0 or int(index.max()) >= n):
        raise IndexError(f"{op}: index {int(index.min())}..{int(index.max())} is out of range for dim {dim} of "
                         f"size {n}")
    if op.startswith("scatter") and index.ndim != x.ndim:
        raise minigrad.ShapeError(f"{op}: index {index.shape} must have as many dims as the input {x.shape}")
    if op.startswith("scatter") and any(i > s for d, (i, s) in enumerate(zip(index.shape, x.shape)) if d != dim):
        raise minigrad.ShapeError(f"{op}: index {index.shape} is larger than the input {x.shape} at a dim other "
                                  f"than dim {dim}")
    return index


def _scatter_source(x: Any, src: Any, index: Any, op: str) -> Any:
    """The values `op` writes: a number filled to index's shape, or a tensor of x's dtype cut to index's shape."""
    if not isinstance(src, minigrad.Tensor):
        return minigrad.factories.full(index.shape, src, dtype=x.dtype, device=x.device)
    if src.dtype != x.dtype:
        raise RuntimeError(f"{op}: src ({src.dtype}) must have the input's dtype ({x.dtype})")
    if src.ndim == 0 and index.shape == (1,):  # a 0-d src with a 0-d index, as PyTorch allows
        src = src.reshape(1)
    if src.ndim != index.ndim or any(i > s for i, s in zip(index.shape, src.shape)):
        raise minigrad.ShapeError(f"{op}: index {index.shape} must be no larger than src {src.shape} at any dim")
    return src if src.shape == index.shape else src[tuple(slice(0, n) for n in index.shape)]


def _sorted_indices(x: Any, dim: int, descending: bool) -> Any:
    """The stable sorting order along dim. Descending: the ascending order of the reversed array, reversed
    (so equal elements keep their order, and NaN, last when ascending, comes first), mapped back."""
    xp = minigrad.core.backend.get_array_module(x)
    if not descending:
        return xp.argsort(x, axis=dim, kind="stable")
    n = x.shape[dim]
    return n - 1 - xp.flip(xp.argsort(xp.flip(x, dim), axis=dim, kind="stable"), dim)
