"""`check_op`: the one helper behind every op test. Read it once; then each test is one line of intent.

    check_op(lambda x: x.exp(), np.exp, [x], device, torch_fn=torch.exp)

runs the op on float64 tensors on `device` and checks, in order:
1. forward: the output's values against the NumPy function, its shape, dtype (float64) and device;
2. backward: every input's gradient against finite differences (`mg.gradcheck`), with its shape,
   dtype and device;
3. no aliasing: each gradient owns its buffer (writing into it changes no other gradient, input or output);
4. no mutation: the input arrays and tensors, and the upstream gradient handed to `backward`, are unchanged;
5. when PyTorch is installed (the optional oracle), forward and backward against `torch_fn`.

Also here: `op_settings`, the hypothesis settings every op test uses.
Read next: test_ops_elementwise.py, and minigrad/testing/strategies.py for what the tests draw.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import HealthCheck, settings

import minigrad as mg
from minigrad.core import backend

try:
    import torch
except ImportError:  # PyTorch is the optional oracle: pip install -e '.[oracle]'
    torch = None

# The `device` fixture only names a device, so sharing it across a test's examples is safe.
op_settings = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def check_op(
    mg_fn: Callable[..., mg.Tensor],
    np_fn: Callable[..., np.ndarray],
    arrays: Sequence[np.ndarray],
    device: str,
    torch_fn: Callable | None = None,
    atol: float = 1e-9,
    rtol: float = 1e-7,
    grad_atol: float = 1e-5,
    grad_rtol: float = 1e-3,
) -> None:
    """Check a differentiable op: forward against `np_fn`, backward against gradcheck (and PyTorch).

    `mg_fn` takes one tensor per array in `arrays` (all float64, all requiring grad); `np_fn` takes
    the arrays themselves; `torch_fn` takes torch tensors. Non-differentiable arguments (ids, masks,
    axes) go into the lambdas' closures.
    """
    originals = [a.copy() for a in arrays]
    inputs = [mg.tensor(a, dtype=np.float64, device=device, requires_grad=True) for a in arrays]

    # 1. forward
    out = mg_fn(*inputs)
    expected = np.asarray(np_fn(*arrays))
    assert out.shape == expected.shape, f"output shape {out.shape}, expected {expected.shape}"
    assert out.dtype == np.float64, f"an op on float64 tensors returned {out.dtype}"
    assert out.device == device, f"output on {out.device}, inputs on {device}"
    np.testing.assert_allclose(out.numpy(), expected, atol=atol, rtol=rtol, err_msg="forward")

    # 2. backward
    mg.gradcheck(mg_fn, inputs, atol=grad_atol, rtol=grad_rtol)
    for i, x in enumerate(inputs):
        assert x.grad is not None, f"input {i} got no gradient"
        assert x.grad.shape == x.shape, f"gradient of input {i} has shape {x.grad.shape}, input {x.shape}"
        assert x.grad.dtype == np.float64, f"gradient of input {i} is {x.grad.dtype}"
        assert x.grad.device == device, f"gradient of input {i} is on {x.grad.device}"

    # 3. no aliasing
    assert_grads_own_their_buffers(inputs, out)

    # 4. no mutation (of the arrays we were given, the input tensors, or an upstream gradient)
    for i, (a, x, original) in enumerate(zip(arrays, inputs, originals)):
        np.testing.assert_array_equal(a, original, err_msg=f"input array {i} was modified")
        np.testing.assert_array_equal(x.numpy(), original, err_msg=f"input tensor {i} was modified")
    fresh = [mg.tensor(a, dtype=np.float64, device=device, requires_grad=True) for a in arrays]
    out = mg_fn(*fresh)
    upstream = np.random.default_rng(1).standard_normal(out.shape)
    gy = mg.tensor(upstream, dtype=np.float64, device=device)
    out.backward(gy)
    np.testing.assert_array_equal(gy.numpy(), upstream, err_msg="backward modified the upstream gradient")

    # 5. PyTorch, the oracle
    if torch_fn is not None and torch is not None:
        xs = [torch.tensor(a, requires_grad=True) for a in arrays]
        y = torch_fn(*xs)
        assert tuple(y.shape) == out.shape, f"torch's output has shape {tuple(y.shape)}, ours {out.shape}"
        np.testing.assert_allclose(out.numpy(), y.detach().numpy(), atol=atol, rtol=rtol, err_msg="torch forward")
        y.backward(torch.tensor(upstream))
        for i, (x, t) in enumerate(zip(fresh, xs)):
            torch_grad = np.zeros(t.shape) if t.grad is None else t.grad.numpy()
            np.testing.assert_allclose(x.grad.numpy(), torch_grad, atol=1e-8, rtol=1e-6,
                                       err_msg=f"torch backward, input {i}")


def assert_grads_own_their_buffers(inputs: Sequence[mg.Tensor], out: mg.Tensor) -> None:
    """Writing into one input's gradient changes no other gradient, no input and not the output.

    Checked on the backend arrays themselves (a host copy could never show sharing on a device).
    """
    grads = [x.grad.array for x in inputs]
    for i, g in enumerate(grads):
        for j, other in enumerate(grads[:i]):
            assert g is not other, f"inputs {j} and {i} share one gradient array"
    everything = [x.array for x in inputs] + [out.array] + grads
    for i, g in enumerate(grads):
        watched = [a for a in everything if a is not g]
        before = [backend.as_numpy(a).copy() for a in watched]
        g += 1  # in place, on the device
        for a, snapshot in zip(watched, before):
            np.testing.assert_array_equal(backend.as_numpy(a), snapshot,
                                          err_msg=f"writing into input {i}'s gradient changed another array")
