"""`gradcheck` and `gradgradcheck`: compare backward's gradients with central finite differences, in float64.

For a random upstream gradient v (so every output element matters, with different weights), the
analytic gradient of L = sum(v * fn(inputs)) comes from backward; the numeric one perturbs one input
element at a time: dL/dx_j ~ (L(x_j + eps) - L(x_j - eps)) / (2 eps), accurate to O(eps**2).

`gradgradcheck` checks second derivatives the same way, as PyTorch's does: the gradient that
`create_graph=True` records, g(inputs, v) = dL/dinputs, is itself a function of the inputs and of v, and
gradcheck runs on it. Its derivatives with respect to the inputs are the second derivatives of fn (times v);
with respect to v (g is linear in v) they check the graph that the first backward recorded.
Read next: ../viz/graph.py, then ../viz/dot.py, which draw the graphs whose gradients this checks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from minigrad.core import backend
from minigrad.core.autograd import enable_grad, grad, is_grad_enabled, no_grad
from minigrad.functional import concat
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
    checked = _checked("gradcheck", inputs)
    return _check("gradcheck", fn, inputs, {i: f"gradient of input {i}" for i in checked}, eps, atol, rtol, seed)


def gradgradcheck(
    fn: Callable[..., Tensor],
    inputs: Sequence[Tensor],
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    seed: int = 0,
) -> bool:
    """Check `fn`'s second derivatives with respect to every input that requires grad (see the module docstring).

    The arguments mean what they mean for `gradcheck`. Returns True, or raises GradcheckError naming the input
    (or the upstream gradient v), the worst element, the analytic and the numeric value.
    """
    inputs = list(inputs)
    checked = _checked("gradgradcheck", inputs)
    with enable_grad():
        out = fn(*inputs)
    upstream = np.random.default_rng(seed).standard_normal(out.shape)
    v = Tensor(upstream, dtype=out.dtype, device=out.device, requires_grad=True)

    def gradient(*xs_and_v: Tensor) -> Tensor:
        """dL/dx for every checked input x, flattened into one tensor: a graph when grad mode is on, else values
        (gradcheck's finite differences run under no_grad, where the values are all that is needed)."""
        *xs, v = xs_and_v
        create_graph = is_grad_enabled()
        with enable_grad():
            y = fn(*xs)
        grads = grad(y, [xs[i] for i in checked], v, create_graph=create_graph, allow_unused=True)
        return concat([(xs[i] * 0 if g is None else g).reshape(-1) for i, g in zip(checked, grads)])

    what = {i: f"second derivative (the gradient's gradient) with respect to input {i}" for i in checked}
    what[len(inputs)] = "the gradient's gradient with respect to the upstream gradient v"
    return _check("gradgradcheck", gradient, [*inputs, v], what, eps, atol, rtol, seed + 1)


def _checked(name: str, inputs: list) -> list[int]:
    """The positions of the inputs to check (those that require grad), after checking that they are float64."""
    checked = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    if not checked:
        raise ValueError(f"{name}: no input has requires_grad=True")
    for i in checked:
        if inputs[i].dtype != np.float64:
            raise TypeError(f"{name}: input {i} is {inputs[i].dtype}; finite differences need float64")
    return checked


def _check(name: str, fn: Callable[..., Tensor], inputs: list, what: dict[int, str], eps: float, atol: float,
           rtol: float, seed: int) -> bool:
    """Compare backward's gradient of sum(v * fn(inputs)) with central differences, for each input in `what`."""
    for i in what:
        data = inputs[i].array  # contiguous, so that reshape(-1) below is a view (ascontiguousarray makes 0-d 1-d)
        inputs[i].array = backend.get_array_module(data).ascontiguousarray(data).reshape(data.shape)

    out = fn(*inputs)
    upstream = np.random.default_rng(seed).standard_normal(out.shape)
    v = backend.to_device(upstream.astype(out.dtype), out.device)
    for i in what:
        inputs[i].grad = None
    if out.requires_grad:  # otherwise fn does not depend on the inputs: every analytic gradient is 0
        out.backward(v)

    def objective() -> float:
        with no_grad():
            return float((fn(*inputs).array * v).sum())

    for i, description in what.items():
        x = inputs[i]
        analytic = np.zeros(x.shape) if x.grad is None else x.grad.numpy()
        numeric = np.zeros(x.shape)
        flat = x.array.reshape(-1)  # a view: writing into it perturbs the input
        for j in range(flat.shape[0]):
            original = float(flat[j])
            flat[j] = original + eps
            f_plus = objective()
            flat[j] = original - eps
            f_minus = objective()
            flat[j] = original
            numeric.reshape(-1)[j] = (f_plus - f_minus) / (2 * eps)
        _compare(f"{name}: {description}", analytic, numeric, atol, rtol)
    return True


def _compare(what: str, analytic: np.ndarray, numeric: np.ndarray, atol: float, rtol: float) -> None:
    excess = np.abs(analytic - numeric) - (atol + rtol * np.abs(numeric))
    if not np.all(np.isfinite(analytic)) or excess.size and excess.max() > 0:
        worst = np.unravel_index(np.nanargmax(np.where(np.isfinite(analytic), excess, np.inf)), analytic.shape)
        raise GradcheckError(
            f"{what} (shape {analytic.shape}) is wrong at element {tuple(int(w) for w in worst)}: "
            f"analytic {analytic[worst]:.8g}, numeric {numeric[worst]:.8g} (atol={atol}, rtol={rtol})"
        )
