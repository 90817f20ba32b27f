"""Softmax and log-softmax, fused: the numerically stable forward and the hand-derived backward.

Composed from primitives (twins.softmax), softmax is exp, a sum and a division: three nodes, and exp overflows
for logits past ~88 in float32. Here the row maximum is subtracted first (the value does not change), and the
backward applies the Jacobian diag(y) - y y^T without forming it. The stable forward's row step,
`stable_softmax`, is shared with attention's row-block kernel, so it sits under both, in
../kernels/softmax_rows.py. tests/test_fused.py shows both twins agree.
With the compiled kernels (kernels/select.py) the ops' rows run in two passes each (kernels/numba_softmax.py).
Read next: cross_entropy.py.
"""

from __future__ import annotations

from typing import Any

from minigrad.core.backend import get_array_module
from minigrad.core.function import Function
from minigrad.kernels.select import compiled
from minigrad.kernels.softmax_rows import stable_softmax
from minigrad.ops.activations import require_float


def stable_log_softmax(x: Any, axis: int) -> Any:
    """log_softmax(x) = x - logsumexp(x), with logsumexp(x) = m + log(sum(exp(x - m))), m = max(x)."""
    xp = get_array_module(x)
    if x.size == 0:  # nothing to normalise (max of an empty axis would raise)
        return x.copy()
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - xp.log(xp.exp(shifted).sum(axis=axis, keepdims=True))


class Softmax(Function):
    """y = exp(x) / sum(exp(x));  gx = y * (gy - sum(gy * y))  (the Jacobian diag(y) - y y^T, applied)."""

    axis: int

    def forward(self, x):
        fast = compiled("softmax", require_float("softmax", x))  # kernels/numba_softmax.py, or None: NumPy
        self.y = fast.softmax_forward(x, self.axis) if fast else stable_softmax(x, self.axis)
        return self.y

    def backward(self, gy):
        y, fast = self.y, compiled("softmax", gy, self.y)  # (None on tensors, for create_graph)
        if fast:
            return fast.softmax_backward(gy, y, self.axis)
        return y * (gy - (gy * y).sum(axis=self.axis, keepdims=True))


class LogSoftmax(Function):
    """y = x - logsumexp(x);  gx = gy - softmax(x) * sum(gy)."""

    axis: int

    def forward(self, x):
        fast = compiled("softmax", require_float("log_softmax", x))  # kernels/numba_softmax.py, or None: NumPy
        self.y = fast.log_softmax_forward(x, self.axis) if fast else stable_log_softmax(x, self.axis)
        return self.y

    def backward(self, gy):
        xp, fast = get_array_module(gy), compiled("softmax", gy, self.y)  # (None on tensors, for create_graph)
        if fast:
            return fast.log_softmax_backward(gy, self.y, self.axis)
        return gy - xp.exp(self.y) * gy.sum(axis=self.axis, keepdims=True)
