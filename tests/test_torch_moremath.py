"""The everyday math PyTorch programs use beyond the core ops (minigrad/compat/moremath.py): each as an mg.*
function and a Tensor method, its float64 gradient checked over drawn shapes, and its values held to PyTorch's.

Read next: test_torch_functions.py.
"""

import math

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from minigrad.testing import strategies as S


def between_steps(x, step=1.0):
    """Values a quarter step from any multiple of `step` or half-step: a step function is smooth there."""
    return (np.round(x * 4 / step) / 4 + 1 / 8) * step


def inside(x, low, high):
    return low + (high - low) * (np.tanh(x) + 1) / 2 * 0.98 + (high - low) * 0.01


# name: (the function, NumPy's, the values it is smooth on)
UNARY = {
    "log10": (mg.log10, np.log10, S.positive_floats),
    "log2": (mg.log2, np.log2, S.positive_floats),
    "exp2": (mg.exp2, np.exp2, S.floats),
    "log1p": (mg.log1p, np.log1p, S.positive_floats),
    "expm1": (mg.expm1, np.expm1, S.floats),
    "sinh": (mg.sinh, np.sinh, S.floats),
    "cosh": (mg.cosh, np.cosh, S.floats),
    "tan": (mg.tan, np.tan, lambda shape: S.floats(shape).map(lambda x: inside(x, -1.4, 1.4))),
    "acosh": (mg.acosh, np.arccosh, lambda shape: S.positive_floats(shape).map(lambda x: x + 1.05)),
    "atanh": (mg.atanh, np.arctanh, lambda shape: S.floats(shape).map(lambda x: inside(x, -0.95, 0.95))),
    "logit": (mg.logit, lambda x: np.log(x / (1 - x)), lambda shape: S.floats(shape).map(lambda x: inside(x, 0, 1))),
    "reciprocal": (mg.reciprocal, np.reciprocal, S.positive_floats),
    "trunc": (mg.trunc, np.trunc, lambda shape: S.floats(shape).map(between_steps)),
    "floor": (mg.floor, np.floor, lambda shape: S.floats(shape).map(between_steps)),
    "ceil": (mg.ceil, np.ceil, lambda shape: S.floats(shape).map(between_steps)),
    "round": (mg.round, np.round, lambda shape: S.floats(shape).map(between_steps)),
    "round(decimals=1)": (lambda x: mg.round(x, decimals=1), lambda x: np.round(x, 1),
                          lambda shape: S.floats(shape).map(lambda x: between_steps(x, 0.1))),
    "frac": (mg.frac, lambda x: x - np.trunc(x), lambda shape: S.floats(shape).map(between_steps)),
    "nan_to_num": (mg.nan_to_num, np.nan_to_num, S.floats),
    "clamp_min": (lambda x: mg.clamp_min(x, 0.3), lambda x: np.maximum(x, 0.3),
                  lambda shape: S.floats(shape, avoid=(0.3,))),
    "clamp_max": (lambda x: mg.clamp_max(x, 0.3), lambda x: np.minimum(x, 0.3),
                  lambda shape: S.floats(shape, avoid=(0.3,))),
}

BINARY = {
    "hypot": (mg.hypot, np.hypot, S.floats, S.positive_floats),
    "logaddexp": (mg.logaddexp, np.logaddexp, S.floats, S.floats),
    "xlogy": (mg.xlogy, lambda x, y: x * np.log(y), lambda shape: S.floats(shape, avoid=(0,)), S.positive_floats),
    "lerp": (lambda a, b: mg.lerp(a, b, 0.3), lambda a, b: a + 0.3 * (b - a), S.floats, S.floats),
    "remainder": (mg.remainder, np.remainder, S.floats, lambda shape: S.positive_floats(shape).map(lambda y: y + 1)),
    "fmod": (mg.fmod, np.fmod, S.floats, lambda shape: S.positive_floats(shape).map(lambda y: y + 1)),
}


@pytest.mark.parametrize("name", UNARY)
@op_settings
@given(data=st.data())
def test_unary(name, device, data):
    fn, np_fn, values = UNARY[name]
    x = data.draw(values(S.shapes()))
    check_op(fn, np_fn, [x], device, atol=1e-12, rtol=1e-10)


@pytest.mark.parametrize("name", BINARY)
@op_settings
@given(data=st.data())
def test_binary(name, device, data):
    fn, np_fn, left, right = BINARY[name]
    shape_a, shape_b = data.draw(S.broadcastable_shapes(2))  # the engine sums each gradient back to its shape
    a, b = data.draw(left(shape_a)), data.draw(right(shape_b))
    if name in ("remainder", "fmod"):  # away from the steps of the quotient (a takes the broadcast shape; b stays)
        a = between_steps(a / b) * b
    check_op(fn, np_fn, [a, b], device, atol=1e-12, rtol=1e-10)


def test_accurate_where_the_plain_formula_is_not():
    tiny = mg.tensor([1e-10, -1e-12], dtype="float64")
    np.testing.assert_allclose(mg.log1p(tiny).numpy(), np.log1p(tiny.numpy()), rtol=1e-15)
    np.testing.assert_allclose(mg.expm1(tiny).numpy(), np.expm1(tiny.numpy()), rtol=1e-15)
    assert mg.log1p(mg.tensor([math.inf])).item() == math.inf  # inf never meets -inf in the correction
    assert mg.xlogy(mg.tensor([0.0]), mg.tensor([0.0])).item() == 0.0


def test_methods_are_the_functions():
    x = mg.tensor([0.25, 1.5, 2.75], requires_grad=True)
    for name in ["log10", "log1p", "expm1", "sinh", "cosh", "trunc", "frac", "reciprocal"]:
        np.testing.assert_array_equal(getattr(x, name)().detach().numpy(), getattr(mg, name)(x).detach().numpy())
    assert x.round(decimals=1).tolist() == pytest.approx([0.2, 1.5, 2.8])
    assert x.round().requires_grad  # a step function is in the graph, with gradient 0 (as PyTorch)
    x.round().sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


def test_floor_division_and_the_bitwise_operators_have_no_gradient():
    x = mg.tensor([7.5, -3.0], requires_grad=True)
    assert not (x // 2).requires_grad
    assert (x // 2).tolist() == [3.0, -2.0] and (x % 2).tolist() == [1.5, 1.0]
    assert (mg.tensor([5, 3]) ^ 1).tolist() == [4, 2] and (1 << mg.tensor([1, 2])).tolist() == [2, 4]
    with pytest.raises(TypeError, match="bool and integer"):
        mg.tensor([1.0]) ^ 1


@pytest.mark.torch
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients_are_pytorchs(dtype):
    x = np.array([-3.7, -1.5, -0.5, -1e-6, 0.0, 1e-6, 0.5, 1.5, 2.5, 3.7], dtype=dtype)
    positive = np.abs(x) + 0.25
    cases = {
        "log10": (positive,), "log2": (positive,), "exp2": (x,), "log1p": (positive,), "expm1": (x,),
        "sinh": (x,), "cosh": (x,), "trunc": (x,), "frac": (x,), "reciprocal": (positive,),
        "hypot": (x, positive), "logaddexp": (x, x[::-1].copy()), "xlogy": (x, positive),
        "remainder": (x, positive), "fmod": (x, positive), "floor_divide": (x, positive), "round": (x,),
        "clamp_min": (x, 0.5), "clamp_max": (x, 0.5), "nan_to_num": (np.array([np.nan, np.inf, -np.inf, 1.0],
                                                                               dtype=dtype),),
    }
    for name, args in cases.items():
        ours = [mg.tensor(a, dtype=dtype, requires_grad=True) if isinstance(a, np.ndarray) else a for a in args]
        theirs = [torch.tensor(a, requires_grad=True) if isinstance(a, np.ndarray) else a for a in args]
        y, z = getattr(mg, name)(*ours), getattr(torch, name)(*theirs)
        np.testing.assert_allclose(y.detach().numpy(), z.detach().numpy(), rtol=2e-6, atol=1e-6, err_msg=name)
        assert str(y.dtype) == str(z.dtype).replace("torch.", ""), name
        if name == "floor_divide":
            continue  # not differentiable in PyTorch either
        y.sum().backward()
        z.sum().backward()
        for a, b in zip(ours, theirs):
            if isinstance(a, mg.Tensor):
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=2e-6, atol=1e-6, err_msg=name)
    y = mg.tensor(x).round(decimals=1)
    np.testing.assert_allclose(y.numpy(), torch.tensor(x).round(decimals=1).numpy())
