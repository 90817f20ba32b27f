"""Embedding, fused: one row of a table per integer id; its backward scatter-adds the rows' gradients back.

Composed from primitives it is integer-array indexing (twins.embedding); the op adds PyTorch's `padding_idx`.
`check_ids` names the first id out of range (the losses and F.one_hot use it too). With the compiled kernels
(kernels/select.py) the backward's scatter-add is one loop (kernels/numba_embedding.py) instead of `np.add.at`.
Read next: dropout.py.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.backend import get_array_module
from minigrad.core.function import Function
from minigrad.kernels.select import compiled
from minigrad.ops.indexing import scatter_add


def check_ids(op: str, what: str, ids: Any, size: int) -> None:
    """Raise IndexError naming the first id outside 0..size-1 (one scalar read, not a host copy)."""
    if ids.size == 0:
        return
    low, high = int(ids.min()), int(ids.max())
    if low < 0 or high >= size:
        bad = low if low < 0 else high
        raise IndexError(f"{op}: {what} {bad} is out of range; valid {what}s are 0..{size - 1}")


class Embedding(Function):
    """y = weight[ids] (one row per id);  gweight[i] = sum of gy over the positions where ids == i.

    The row `padding_idx` (if any) gets no gradient, as in PyTorch: a padding token's vector stays put.
    """

    ids: Any
    padding_idx: int | None = None
    is_linear = True  # y = A weight: for double backward its backward runs as an op (higher_order.py)

    def forward(self, weight):
        check_ids("embedding", "id", self.ids, weight.shape[0])
        self.weight_shape, self.dtype = weight.shape, weight.dtype
        return weight[self.ids]

    def backward(self, gy):
        gw = get_array_module(gy).zeros(self.weight_shape, dtype=self.dtype)
        ids, rows = self.ids.reshape(-1), gy.reshape(-1, self.weight_shape[-1])
        fast = compiled("embedding", gw, rows) if gw.ndim == 2 else None  # kernels/numba_embedding.py, or None
        # A token that occurs twice must collect both gradients: scatter-add, not assignment.
        (fast.scatter_rows if fast else scatter_add)(gw, ids, rows)
        if self.padding_idx is not None:
            gw[self.padding_idx] = 0
        return gw
