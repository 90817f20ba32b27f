"""Scatter: writing (or adding) the elements of `src` into a copy of x at positions named by an index,
`torch.scatter` and `torch.scatter_add`: the reverse of gather (indexing.py), which reads them.

For dim 0, y[index[i, j], j] = src[i, j] (scatter) or y[index[i, j], j] += src[i, j] (scatter_add); likewise
for any dim. The gradient of src is gy read back at the same positions (a gather); the gradient of x is gy
where x survived: everywhere for scatter_add, and only where nothing was written for scatter.
Read next: linalg.py.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.backend import get_array_module
from minigrad.core.function import Function
from minigrad.ops.indexing import scatter_add


def positions(index: Any, dim: int) -> tuple:
    """The NumPy index of the elements that `index` names along `dim`: `index` itself along dim, and each
    element's own position along every other dim (as gather reads them)."""
    xp = get_array_module(index)
    ndim = index.ndim
    return tuple(index if d == dim else xp.arange(n).reshape([-1 if e == d else 1 for e in range(ndim)])
                 for d, n in enumerate(index.shape))


class Scatter(Function):
    """y = x with y[where] = src (torch.scatter);  gx = gy with zeros where src was written,  gsrc = gy[where].

    Where `index` names one position twice, PyTorch keeps one of the written values without saying which (NumPy
    keeps the last), and, as PyTorch, every written element still gets gy at its position (gsrc is a gather).
    """

    dim: int
    index: Any  # an integer array with x's number of dims

    def forward(self, x, src):
        xp = get_array_module(x)
        self.where = positions(self.index, self.dim)
        y = x.copy()
        y[self.where] = src
        self.written = xp.zeros(x.shape, dtype=bool)
        self.written[self.where] = True
        return y

    def backward(self, gy):
        xp = get_array_module(gy)
        return xp.where(self.written, 0, gy), gy[self.where]


class ScatterAdd(Function):
    """y = x with y[where] += src, repeated positions adding up (torch.scatter_add);  gx = gy,  gsrc = gy[where]."""

    dim: int
    index: Any

    def forward(self, x, src):
        self.where = positions(self.index, self.dim)
        y = x.copy()
        scatter_add(y, self.where, src)
        return y

    def backward(self, gy):
        return gy, gy[self.where]
