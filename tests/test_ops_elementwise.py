"""Elementwise ops: arithmetic (with broadcasting and Python scalars), unary functions, masked_fill, where,
and the comparisons that return boolean tensors.

Each test draws shapes and values with hypothesis and hands the op to `check_op` (tests/helpers.py).
Read next: test_ops_reduce.py.
"""

import math
import operator

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
import minigrad.functional as F
from minigrad.testing import strategies as S


def np_gelu(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def torch_gelu(x):
    return torch.nn.functional.gelu(x, approximate="tanh")


# name: (minigrad and torch function, NumPy function, the values it is smooth on)
UNARY = {
    "neg": (lambda x: -x, np.negative, S.floats),
    "exp": (lambda x: x.exp(), np.exp, S.floats),
    "log": (lambda x: x.log(), np.log, S.positive_floats),
    "sqrt": (lambda x: x.sqrt(), np.sqrt, S.positive_floats),
    "tanh": (lambda x: x.tanh(), np.tanh, S.floats),
    "sigmoid": (lambda x: x.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), S.floats),
    "relu": (lambda x: x.relu(), lambda x: np.maximum(x, 0), lambda shape: S.floats(shape, avoid=(0,))),
    "abs": (lambda x: x.abs(), np.abs, lambda shape: S.floats(shape, avoid=(0,))),
}


@pytest.mark.parametrize("name", UNARY)
@op_settings
@given(data=st.data())
def test_unary(name, device, data):
    fn, np_fn, values = UNARY[name]
    x = data.draw(values(S.shapes()))
    check_op(fn, np_fn, [x], device, torch_fn=fn)


@op_settings
@given(x=S.floats(S.shapes()))
def test_gelu_is_gpt2_tanh_approximation(device, x):
    check_op(lambda t: t.gelu(), np_gelu, [x], device, torch_fn=torch_gelu)
    check_op(F.gelu, np_gelu, [x], device, torch_fn=torch_gelu)


# The same function works on minigrad tensors, NumPy arrays and torch tensors.
BINARY = {"add": operator.add, "sub": operator.sub, "mul": operator.mul, "truediv": operator.truediv}


@pytest.mark.parametrize("name", BINARY)
@op_settings
@given(data=st.data())
def test_binary_broadcasts(name, device, data):
    shape_a, shape_b = data.draw(S.broadcastable_shapes(2))
    a = data.draw(S.floats(shape_a))
    b = data.draw(S.floats(shape_b, avoid=(0,), gap=0.3))  # a divisor away from 0
    op = BINARY[name]
    check_op(op, op, [a, b], device, torch_fn=op)


# Python scalars on either side; the tensor keeps its dtype.
WITH_SCALAR = {
    "x + 2": lambda x: x + 2.0, "2 + x": lambda x: 2.0 + x,
    "x - 2": lambda x: x - 2.0, "2 - x": lambda x: 2.0 - x,
    "x * 2": lambda x: x * 2.0, "2 * x": lambda x: 2.0 * x,
    "x / 2": lambda x: x / 2.0, "2 / x": lambda x: 2.0 / x,
    "x ** 2": lambda x: x**2, "x ** 3": lambda x: x**3, "x ** -2": lambda x: x**-2, "2 ** x": lambda x: 2.0**x,
}


@pytest.mark.parametrize("name", WITH_SCALAR)
@op_settings
@given(x=S.floats(S.shapes(), avoid=(0,), gap=0.3))
def test_scalar_operand(name, device, x):
    op = WITH_SCALAR[name]
    check_op(op, op, [x], device, torch_fn=op)


@pytest.mark.parametrize("exponent", [0.5, -1.5])
@op_settings
@given(x=S.positive_floats(S.shapes()))
def test_fractional_power_of_positive_values(exponent, device, x):
    check_op(lambda t: t**exponent, lambda a: a**exponent, [x], device, torch_fn=lambda t: t**exponent)


def test_power_zero_has_gradient_zero_even_at_zero(device):
    x = mg.tensor([0.0, 2.0], requires_grad=True, device=device)
    (x**0).sum().backward()
    assert x.grad.numpy().tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_scalar_operand_keeps_the_tensors_dtype(dtype):
    x = mg.ones(3, dtype=dtype)
    for y in (x + 1.5, 1.5 - x, x * 2, 3 / x, x**2, 2.0**x):
        assert y.dtype == dtype


@op_settings
@given(data=st.data())
def test_pow_with_tensor_exponent(device, data):
    shape_a, shape_b = data.draw(S.broadcastable_shapes(2))
    base = data.draw(S.positive_floats(shape_a, low=0.5, high=2.0))  # d/db a**b = a**b log(a) needs a > 0
    exponent = data.draw(S.floats(shape_b, -2.0, 2.0))
    check_op(operator.pow, operator.pow, [base, exponent], device, torch_fn=operator.pow)


@op_settings
@given(data=st.data())
def test_masked_fill(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    mask = data.draw(S.masks(S.shapes_broadcasting_to(x.shape)))
    check_op(lambda t: t.masked_fill(mask, -1.5), lambda a: np.where(mask, -1.5, a), [x], device,
             torch_fn=lambda t: t.masked_fill(torch.tensor(mask), -1.5))


def test_masked_fill_with_minus_inf_blocks_the_gradient(device):
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    y = x.masked_fill(np.array([False, True, False]), -np.inf)
    assert y.numpy().tolist() == [1.0, -np.inf, 3.0]
    y.backward(np.ones(3))
    assert x.grad.numpy().tolist() == [1.0, 0.0, 1.0]


def test_masked_fill_accepts_an_integer_mask(device):
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    y = x.masked_fill(mg.tensor([0, 1, 0], device=device), 0.0)  # nonzero means "fill", as in a bool mask
    y.sum().backward()
    assert y.numpy().tolist() == [1.0, 0.0, 3.0]
    assert x.grad.numpy().tolist() == [1.0, 0.0, 1.0]
    assert x.grad.dtype == np.float32


@op_settings
@given(data=st.data())
def test_where(device, data):
    shape_c, shape_a, shape_b = data.draw(S.broadcastable_shapes(3))
    cond = data.draw(S.masks(shape_c))
    a, b = data.draw(S.floats(shape_a)), data.draw(S.floats(shape_b))
    check_op(lambda x, y: mg.where(cond, x, y), lambda x, y: np.where(cond, x, y), [a, b], device,
             torch_fn=lambda x, y: torch.where(torch.tensor(cond), x, y))


def test_where_takes_a_scalar_branch(device):
    x = mg.tensor([-1.0, 2.0, -3.0], requires_grad=True, device=device)
    y = mg.where(x > 0, x, 0.0)
    y.sum().backward()
    assert y.numpy().tolist() == [0.0, 2.0, 0.0]
    assert x.grad.numpy().tolist() == [0.0, 1.0, 0.0]


COMPARISONS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
               "==": operator.eq, "!=": operator.ne}


@pytest.mark.parametrize("name", COMPARISONS)
@op_settings
@given(data=st.data())
def test_comparison_returns_a_bool_tensor_outside_the_graph(name, device, data):
    shape_a, shape_b = data.draw(S.broadcastable_shapes(2))
    grid = st.sampled_from([-1.0, 0.0, 1.0])  # a coarse grid, so that == and != meet ties
    a = data.draw(hnp.arrays(np.float64, shape_a, elements=grid))
    b = data.draw(hnp.arrays(np.float64, shape_b, elements=grid))
    op = COMPARISONS[name]
    x = mg.tensor(a, requires_grad=True, device=device)
    for result, expected in [(op(x, mg.tensor(b, device=device)), op(a, b)), (op(x, 0.0), op(a, 0.0))]:
        assert result.dtype == np.bool_
        assert not result.requires_grad and result.grad_fn is None
        assert result.device == device
        np.testing.assert_array_equal(result.numpy(), expected)


def test_relu_and_sigmoid_at_infinity(device):
    x = mg.tensor([-np.inf, -1000.0, 1000.0, np.inf], device=device)
    assert x.relu().numpy().tolist() == [0.0, 0.0, 1000.0, np.inf]  # not -inf * 0 = nan
    assert x.sigmoid().numpy().tolist() == [0.0, 0.0, 1.0, 1.0]  # and exp(1000) never overflows
