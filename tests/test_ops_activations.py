"""Activation functions: tanh, sigmoid, relu, leaky_relu, elu, silu, softplus and both GELUs, against NumPy,
finite differences and PyTorch; their behaviour far out, at the kinks and on integer input; and the nn modules.

Read next: test_ops_special.py (erf, which the exact GELU is made of).
"""

import math

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from minigrad.testing import strategies as S

np_erf = np.vectorize(math.erf, otypes=[np.float64])


def np_softplus(x, beta=1.0, threshold=20.0):
    return np.where(beta * x > threshold, x, np.logaddexp(0, beta * x) / beta)


# name: (minigrad function, NumPy function, torch function, the values it is smooth on)
ACTIVATIONS = {
    "tanh": (lambda x: x.tanh(), np.tanh, lambda t: t.tanh(), S.floats),
    "sigmoid": (F.sigmoid, lambda x: 1 / (1 + np.exp(-x)), lambda t: t.sigmoid(), S.floats),
    "relu": (F.relu, lambda x: np.maximum(x, 0), lambda t: t.relu(), lambda s: S.floats(s, avoid=(0,))),
    "leaky_relu": (lambda x: F.leaky_relu(x, 0.2), lambda x: np.where(x > 0, x, 0.2 * x),
                   lambda t: torch.nn.functional.leaky_relu(t, 0.2), lambda s: S.floats(s, avoid=(0,))),
    "elu": (lambda x: F.elu(x, 1.5), lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)),
            lambda t: torch.nn.functional.elu(t, 1.5), lambda s: S.floats(s, avoid=(0,))),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x)), lambda t: torch.nn.functional.silu(t), S.floats),
    "softplus": (F.softplus, np_softplus, lambda t: torch.nn.functional.softplus(t), S.floats),
    "softplus(beta=2, threshold=1)": (lambda x: F.softplus(x, beta=2, threshold=1), lambda x: np_softplus(x, 2, 1),
                                      lambda t: torch.nn.functional.softplus(t, beta=2, threshold=1),
                                      lambda s: S.floats(s, avoid=(0.5,))),  # its switch to x is at x = 0.5
    "gelu": (F.gelu, lambda x: 0.5 * x * (1 + np_erf(x / math.sqrt(2))), lambda t: torch.nn.functional.gelu(t),
             S.floats),
    "gelu(approximate='tanh')": (lambda x: x.gelu(approximate="tanh"),
                                 lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
                                 lambda t: torch.nn.functional.gelu(t, approximate="tanh"), S.floats),
}


@pytest.mark.parametrize("name", ACTIVATIONS)
@op_settings
@given(data=st.data())
def test_activation(name, device, data):
    fn, np_fn, torch_fn, values = ACTIVATIONS[name]
    x = data.draw(values(S.shapes()))
    check_op(fn, np_fn, [x], device, torch_fn=torch_fn, atol=1e-14, rtol=1e-13)


@pytest.mark.torch
@pytest.mark.parametrize("name", ACTIVATIONS)
def test_activation_in_float32_far_out_and_at_the_kinks_matches_pytorch(name, device):
    """Values and gradients on a grid from -100 to 100 with the kinks (0, softplus's switch) on it, to float32's
    rounding: a relative 2e-6, or 5e-7 (four units in the last place of 1) where a difference like 1 + tanh(u)
    cancels (both sides then err by about that much from the float64 value, in opposite directions)."""
    if torch is None:
        pytest.skip("needs PyTorch")
    fn, _, torch_fn, _ = ACTIVATIONS[name]
    grid = np.concatenate([np.linspace(-100, 100, 401), [-1e-30, 0.0, 0.5, 1e-30, 20.0]]).astype(np.float32)
    x = mg.tensor(grid, requires_grad=True, device=device)
    t = torch.tensor(grid, requires_grad=True)
    y, ty = fn(x), torch_fn(t)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=2e-6, atol=5e-7)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=2e-6, atol=5e-7)


def test_sigmoid_keeps_its_relative_precision_far_left(device):
    """1 - (...) forms of sigmoid lose every digit below -17 in float32; PyTorch's sigmoid(-20) is 2.06e-9."""
    x = mg.tensor([-20.0, -80.0], device=device)
    np.testing.assert_allclose(x.sigmoid().numpy(), [1 / (1 + math.exp(20)), 1 / (1 + math.exp(80))], rtol=1e-6)
    np.testing.assert_allclose(x.sigmoid().log().numpy(), [-20.0, -80.0], rtol=1e-6)  # not -inf


def test_activations_at_infinity(device):
    x = mg.tensor([-np.inf, -1000.0, 1000.0, np.inf], device=device)
    assert x.relu().numpy().tolist() == [0.0, 0.0, 1000.0, np.inf]  # not -inf * 0 = nan
    assert x.sigmoid().numpy().tolist() == [0.0, 0.0, 1.0, 1.0]  # and exp(1000) never overflows
    assert F.softplus(x).numpy().tolist() == [0.0, 0.0, 1000.0, np.inf]
    assert F.elu(x).numpy().tolist() == [-1.0, -1.0, 1000.0, np.inf]
    # -inf * Phi(-inf) and -inf * sigmoid(-inf) are -inf * 0: nan, as PyTorch's gelu and silu give too.
    np.testing.assert_array_equal(F.gelu(x).numpy(), [np.nan, 0.0, 1000.0, np.inf])
    np.testing.assert_array_equal(F.silu(x).numpy(), [np.nan, 0.0, 1000.0, np.inf])


@pytest.mark.parametrize("name", ["relu", "elu"])
def test_relu_and_elu_pass_the_gradient_through_a_nan_as_pytorch_does(name, device):
    """PyTorch zeroes their gradient where x <= 0, which a nan is not; it used to be 0 (relu) or nan (elu)."""
    x = mg.tensor([np.nan, -1.0, 2.0], requires_grad=True, device=device)
    getattr(F, name)(x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.0 if name == "relu" else np.exp(-1.0), 1.0], rtol=1e-6)
    if torch is not None:
        t = torch.tensor([np.nan, -1.0, 2.0], requires_grad=True)
        getattr(torch.nn.functional, name)(t).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-6)


def test_gradients_at_the_kinks_are_pytorchs(device):
    x = mg.tensor([0.0, 0.0, 0.0], requires_grad=True, device=device)
    (F.relu(x[0:1]) + F.leaky_relu(x[1:2], 0.1) + F.elu(x[2:3], alpha=2.0)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [0.0, 0.1, 2.0])  # relu 0, leaky_relu the slope, elu alpha


def test_integer_input(device):
    """tanh and sigmoid give float32 (PyTorch's default float); relu keeps integers; the rest refuse, as PyTorch."""
    x = mg.tensor([1, 2], device=device)
    assert x.tanh().dtype == x.sigmoid().dtype == np.float32
    assert x.relu().dtype == np.int64
    for name, fn in [("gelu", F.gelu), ("silu", F.silu), ("softplus", F.softplus), ("leaky_relu", F.leaky_relu),
                     ("elu", F.elu)]:
        with pytest.raises(NotImplementedError, match=f"{name}: not implemented for int64 tensors"):
            fn(x)


def test_gelu_approximate_is_checked():
    with pytest.raises(ValueError, match="gelu: approximate must be 'none' or 'tanh', not 'fast'"):
        F.gelu(mg.ones(2), approximate="fast")
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        nn.GELU("fast")


def test_exact_and_tanh_gelu_differ(device):
    """The default is the exact GELU: at x = 1 the two forms differ in the fourth digit."""
    x = mg.tensor([1.0], dtype="float64", device=device)
    assert F.gelu(x).item() == pytest.approx(0.5 * (1 + math.erf(1 / math.sqrt(2))), rel=1e-15)
    assert abs(F.gelu(x).item() - F.gelu(x, approximate="tanh").item()) > 1e-4
    assert x.gelu().item() == F.gelu(x).item() and nn.GELU()(x).item() == F.gelu(x).item()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_exact_gelu_at_negative_zero(device, dtype):
    """-0.0 carries a negative sign but is not below 0: Phi(-0.0) = 1/2, so gelu(-0.0) = -0.0 with slope 1/2,
    as in PyTorch (an earlier Phi, written with copysign, gave a slope of 1.5 there)."""
    x = mg.tensor([-0.0, 0.0], dtype=dtype, device=device, requires_grad=True)
    y = F.gelu(x)
    y.sum().backward()
    np.testing.assert_array_equal(y.numpy(), [-0.0, 0.0])
    np.testing.assert_array_equal(x.grad.numpy(), [0.5, 0.5])


@pytest.mark.parametrize("module, fn", [
    (nn.ReLU(), F.relu), (nn.Tanh(), F.tanh), (nn.Sigmoid(), F.sigmoid), (nn.SiLU(), F.silu),
    (nn.LeakyReLU(0.3), lambda x: F.leaky_relu(x, 0.3)), (nn.ELU(0.5), lambda x: F.elu(x, 0.5)),
    (nn.Softplus(2.0, 5.0), lambda x: F.softplus(x, 2.0, 5.0)), (nn.GELU(), F.gelu),
    (nn.GELU(approximate="tanh"), lambda x: F.gelu(x, approximate="tanh")),
])
def test_activation_modules(module, fn):
    x = mg.tensor(np.linspace(-4, 4, 9))
    np.testing.assert_array_equal(module(x).numpy(), fn(x).numpy())
    assert list(module.parameters()) == []
    if torch is not None:
        theirs = getattr(torch.nn, type(module).__name__)
        assert type(module).__name__ in repr(module) and callable(theirs)
