"""`mg.Size`, as `torch.Size`: what `x.shape` and `x.size()` give, a tuple of ints that prints as PyTorch's does.

A Size is a tuple: it equals the tuple of the same ints, hashes as it, and goes wherever a shape goes
(`np.zeros(x.shape)`, `x.view(s)`, `mg.zeros(s)`). PyTorch adds little to it, and so does this: `numel()`, the
printing (`minigrad.Size([6, 2])`, where PyTorch prints `torch.Size([6, 2])`), and slices, sums and repeats that
stay Sizes. The engine's Tensor keeps a plain tuple as its shape; `shape` as a Size is attached from above
(tensor_methods.py), so an op's code reads the same either way.
Read next: tensor_methods.py (where `x.shape` becomes a Size).
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable
from typing import Any


class Size(tuple):
    """A shape: `Size([2, 3])`, `Size()` (a 0-d tensor's), `x.shape`. Its items are ints (PyTorch's rule)."""

    __slots__ = ()

    def __new__(cls, sizes: Iterable[Any] = ()) -> Size:
        items = tuple(sizes)
        for position, item in enumerate(items):
            if not hasattr(item, "__index__"):  # an int, a NumPy int, a bool (PyTorch's Size([True]) is Size([1]))
                raise TypeError(f"Size() takes an iterable of 'int' (item {position} is "
                                f"'{type(item).__name__}')")
        return super().__new__(cls, (operator.index(item) for item in items))

    def numel(self) -> int:
        """How many elements a tensor of this shape holds: the product of the sizes (1 for Size())."""
        return math.prod(self)

    def __repr__(self) -> str:
        return f"minigrad.Size({list(self)})"

    def __getitem__(self, index: Any) -> Any:
        item = tuple.__getitem__(self, index)
        return of_shape(item) if isinstance(index, slice) else item

    def __add__(self, other: Any) -> Size:
        return of_shape(tuple.__add__(self, other))

    def __radd__(self, other: Any) -> Size:
        if not isinstance(other, tuple):
            return NotImplemented
        return of_shape(tuple.__add__(other, self))

    def __mul__(self, times: Any) -> Size:
        return of_shape(tuple.__mul__(self, times))

    __rmul__ = __mul__


def of_shape(shape: tuple[int, ...]) -> Size:
    """A backend array's shape (already ints) as a Size, without checking each item again: `x.shape` is hot."""
    return tuple.__new__(Size, shape)
