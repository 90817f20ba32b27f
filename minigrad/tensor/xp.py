"""NumPy's names, on tensors: the array module of a Tensor, for an op's backward that runs on tensors.

An op's backward asks `get_array_module(gy)` for `xp` and writes, say, `xp.where(self.positive, gy, 0)`. When
the gradients must record a graph of their own (`create_graph=True`, higher_order.py), the engine runs that
same backward with tensors in place of arrays, and `get_array_module` returns this module: each function here
is the NumPy function of the same name, built from Tensor ops, so the backward records a graph.

Only what the ops' backwards use is here; any other name raises an AttributeError that says so.
Read next: ../core/higher_order.py.
"""

from __future__ import annotations

from typing import Any

from minigrad.factories import ones_like, zeros_like  # noqa: F401  (constants: a step function's gradient, ...)
from minigrad.functional import where  # noqa: F401  (cond, a and b as in np.where; cond is not differentiated)
from minigrad.tensor import Tensor


def exp(x: Tensor) -> Tensor:
    return x.exp()


def log(x: Tensor) -> Tensor:
    return x.log()


def sin(x: Tensor) -> Tensor:
    return x.sin()


def cos(x: Tensor) -> Tensor:
    return x.cos()


def abs(x: Tensor) -> Tensor:  # noqa: A001  (NumPy's name)
    return x.abs()


def sign(x: Tensor) -> Tensor:
    return x.sign()


def maximum(a: Any, b: Any) -> Tensor:
    """The larger of a and b elementwise; either may be a number."""
    return a.maximum(b) if isinstance(a, Tensor) else b.maximum(a)


def expand_dims(x: Tensor, axis: int) -> Tensor:
    return x.unsqueeze(axis)


def swapaxes(x: Tensor, axis1: int, axis2: int) -> Tensor:
    return x.transpose(axis1, axis2)


def take(x: Tensor, index: int, axis: int) -> Tensor:
    """x's slice at position `index` along `axis` (that axis removed), as np.take with an int."""
    return x[(slice(None),) * (axis % x.ndim) + (index,)]


def split(x: Tensor, boundaries: list[int], axis: int) -> list[Tensor]:
    """x cut along `axis` before each position in `boundaries`, as np.split with a list of indices."""
    edges = [0, *boundaries, x.shape[axis]]
    before = (slice(None),) * (axis % x.ndim)
    return [x[before + (slice(start, stop),)] for start, stop in zip(edges, edges[1:])]


def einsum(equation: str, *operands: Tensor) -> Tensor:
    from minigrad.ops.linalg import Einsum, parse_einsum  # here: the ops import the tensor package

    subscripts, output = parse_einsum(equation, len(operands))
    return Einsum.apply(*operands, subscripts=subscripts, output=output)


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"xp.{name} has no tensor version (minigrad/tensor/xp.py), so an op whose backward calls it cannot run its "
        "backward on tensors for create_graph=True: add it there, or give the op a composed twin (higher_order.py)"
    )
