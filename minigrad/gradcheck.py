"""`gradcheck`: compare backward's gradients with central finite differences, in float64.

For a random upstream gradient v (so every output element matters, with different weights), the
analytic gradient of L = sum(v * fn(inputs)) comes from backward; the numeric one perturbs one input
element at a time: dL/dx_j ~ (L(x_j + eps) - L(x_j - eps)) / (2 eps), accurate to O(eps**2).
Read next: viz/graph.py, then dot.py, which draw the graphs whose gradients this checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from minigrad import backend
from minigrad.autograd import no_grad
from minigrad.tensor import Tensor


class GradcheckError(AssertionError):
    """An analytic gradient disagrees with the numeric one; the message names where and by how much."""


def gradcheck(
    fn: Callable[..., Tensor],
    inputs: Sequence[Tensor],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    seed: int = 0,
) -> bool:
    """Check `fn`'s gradient with respect to every input that requires grad.

    Args:
        fn: maps the input tensors to one output tensor.
        inputs: tensors; those with `requires_grad=True` are checked and must be float64.
        eps: the finite-difference step.
        atol, rtol: an element passes when |analytic - numeric| <= atol + rtol * |numeric|.
        seed: seeds the random upstream gradient.

    Returns True, or raises GradcheckError naming the input, the worst element (its index), the
    analytic and the numeric value.
    """
    inputs = list(inputs)
    checked = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input has requires_grad=True")
    for i in checked:
        if inputs[i].dtype != np.float64:
            raise TypeError(f"gradcheck: input {i} is {inputs[i].dtype}; finite differences need float64")
        data = inputs[i].data  # contiguous, so that reshape(-1) below is a view (ascontiguousarray makes 0-d 1-d)
        inputs[i].data = backend.get_array_module(data).ascontiguousarray(data).reshape(data.shape)

    out = fn(*inputs)
    upstream = np.random.default_rng(seed).standard_normal(out.shape)
    v = backend.to_device(upstream.astype(out.dtype), out.device)
    for i in checked:
        inputs[i].grad = None
    out.backward(v)

    def objective() -> float:
        with no_grad():
            return float((fn(*inputs).data * v).sum())

    for i in checked:
        x = inputs[i]
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        numeric = np.zeros(x.shape)
        flat = x.data.reshape(-1)  # a view: writing into it perturbs the input
        for j in range(flat.shape[0]):
            original = float(flat[j])
            flat[j] = original + eps
            f_plus = objective()
            flat[j] = original - eps
            f_minus = objective()
            flat[j] = original
            numeric.reshape(-1)[j] = (f_plus - f_minus) / (2 * eps)
        _compare(i, analytic, numeric, atol, rtol)
    return True


def _compare(index: int, analytic: np.ndarray, numeric: np.ndarray, atol: float, rtol: float) -> None:
    excess = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
    if not np.all(np.isfinite(analytic)) or excess.size and excess.max() > 0:
        worst = np.unravel_index(np.nanargmax(np.where(np.isfinite(analytic), excess, np.inf)), analytic.shape)
        raise GradcheckError(
            f"gradcheck: gradient of input {index} (shape {analytic.shape}) is wrong at element "
            f"{tuple(int(w) for w in worst)}: analytic {analytic[worst]:.8g}, numeric {numeric[worst]:.8g} "
            f"(atol={atol}, rtol={rtol})"
        )


