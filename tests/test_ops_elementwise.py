"""Elementwise ops: arithmetic (with broadcasting and Python scalars), unary functions, maximum/minimum, clamp,
masked_fill, where, and the comparisons that return boolean tensors. (Activations: test_ops_activations.py.)

Each test draws shapes and values with hypothesis and hands the op to `check_op` (tests/helpers.py).
Read next: test_ops_activations.py, then test_ops_reduce.py.
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
from minigrad.testing import strategies as S

# name: (minigrad and torch function, NumPy function, the values it is smooth on)
UNARY = {
    "neg": (lambda x: -x, np.negative, S.floats),
    "exp": (lambda x: x.exp(), np.exp, S.floats),
    "log": (lambda x: x.log(), np.log, S.positive_floats),
    "sqrt": (lambda x: x.sqrt(), np.sqrt, S.positive_floats),
    "rsqrt": (lambda x: x.rsqrt(), lambda x: 1 / np.sqrt(x), S.positive_floats),
    "square": (lambda x: x.square(), np.square, S.floats),
    "abs": (lambda x: x.abs(), np.abs, lambda shape: S.floats(shape, avoid=(0,))),
    "sign": (lambda x: x.sign(), np.sign, lambda shape: S.floats(shape, avoid=(0,))),
    "sin": (lambda x: x.sin(), np.sin, S.floats),
    "cos": (lambda x: x.cos(), np.cos, S.floats),
    "erf": (lambda x: x.erf(), np.vectorize(math.erf, otypes=[np.float64]), S.floats),
}


@pytest.mark.parametrize("name", UNARY)
@op_settings
@given(data=st.data())
def test_unary(name, device, data):
    fn, np_fn, values = UNARY[name]
    x = data.draw(values(S.shapes()))
    check_op(fn, np_fn, [x], device, torch_fn=fn, atol=1e-15, rtol=1e-14)


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "rsqrt", "sin", "cos", "erf"])
def test_integer_input_to_a_float_function_gives_float32(name, device):
    """PyTorch's rule: exp([1, 2]) is float32 (the default float), not NumPy's float64."""
    y = UNARY[name][0](mg.tensor([1, 2], device=device))
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), UNARY[name][1](np.array([1.0, 2.0])), rtol=1e-6)
    if torch is not None:
        assert UNARY[name][0](torch.tensor([1, 2])).dtype == torch.float32


def test_integer_abs_sign_and_square_stay_integer(device):
    x = mg.tensor([-2, 0, 3], device=device)
    assert [y.dtype for y in (x.abs(), x.sign(), x.square(), -x)] == [np.int64] * 4
    assert x.square().numpy().tolist() == [4, 0, 9]


def test_sign_has_gradient_zero_and_abs_has_gradient_zero_at_zero(device):
    x = mg.tensor([-2.0, 0.0, 3.0], requires_grad=True, device=device)
    (x.sign() + x.abs()).sum().backward()
    assert x.grad.numpy().tolist() == [-1.0, 0.0, 1.0]  # abs: sign(x), which is 0 at 0, as PyTorch


def test_sign_of_nan_is_0_and_abs_passes_it_no_gradient_as_in_pytorch(device):
    """PyTorch's sign is (x > 0) - (x < 0): 0 at nan, where NumPy's is nan; abs's gradient, sign(x), follows."""
    x = mg.tensor([np.nan, -2.0, 0.0, 3.0], requires_grad=True, device=device)
    assert x.sign().numpy().tolist() == [0.0, -1.0, 0.0, 1.0]
    x.abs().sum().backward()
    assert x.grad.numpy().tolist() == [0.0, -1.0, 0.0, 1.0]
    if torch is not None:
        t = torch.tensor([np.nan, -2.0, 0.0, 3.0], requires_grad=True)
        t.abs().sum().backward()
        assert t.sign().tolist() == [0.0, -1.0, 0.0, 1.0] and t.grad.tolist() == [0.0, -1.0, 0.0, 1.0]


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


def test_integer_to_a_fractional_power_is_float32_and_to_a_negative_one_an_error(device):
    x = mg.tensor([1, 4], device=device)
    assert (x**0.5).dtype == np.float32 and (x**0.5).numpy().tolist() == [1.0, 2.0]
    assert (x**2).dtype == np.int64 and (x**2).numpy().tolist() == [1, 16]
    with pytest.raises(RuntimeError, match="pow: integers to negative integer powers are not allowed"):
        x**-2


@op_settings
@given(data=st.data())
def test_pow_with_tensor_exponent(device, data):
    shape_a, shape_b = data.draw(S.broadcastable_shapes(2))
    base = data.draw(S.positive_floats(shape_a, low=0.5, high=2.0))  # d/db a**b = a**b log(a) needs a > 0
    exponent = data.draw(S.floats(shape_b, -2.0, 2.0))
    check_op(operator.pow, operator.pow, [base, exponent], device, torch_fn=operator.pow)


def test_pow_with_tensor_exponent_at_base_zero_has_pytorchs_gradients(device):
    """0 ** b is flat in b for b >= 0, and a ** 0 is flat in a: PyTorch's gradients there are 0, not nan."""
    a = mg.tensor([0.0, 0.0, 0.0, 2.0, 0.0], dtype="float64", requires_grad=True, device=device)
    b = mg.tensor([0.0, 2.0, 0.5, 0.0, -1.0], dtype="float64", requires_grad=True, device=device)
    (a**b).sum().backward()
    assert a.grad.numpy().tolist() == [0.0, 0.0, np.inf, 0.0, -np.inf]
    assert b.grad.numpy().tolist() == [0.0, 0.0, 0.0, math.log(2), -np.inf]
    if torch is not None:
        ta, tb = (torch.tensor(t.numpy(), requires_grad=True) for t in (a, b))
        (ta**tb).sum().backward()
        assert ta.grad.tolist() == a.grad.numpy().tolist() and tb.grad.tolist() == b.grad.numpy().tolist()


@pytest.mark.parametrize("name", ["maximum", "minimum"])
@op_settings
@given(data=st.data())
def test_maximum_and_minimum(name, device, data):
    shape_a, shape_b = data.draw(S.broadcastable_shapes(2))
    a = data.draw(S.floats(shape_a, avoid=(0,), gap=0.2))
    b = data.draw(S.floats(shape_b, -0.1, 0.1))  # at least 0.1 from every a: no ties
    torch_fn = (lambda x, y: getattr(torch, name)(x, y)) if torch is not None else None
    check_op(lambda x, y: getattr(x, name)(y), getattr(np, name), [a, b], device, torch_fn=torch_fn)
    check_op(lambda x, y: getattr(mg, name)(x, y), getattr(np, name), [a, b], device)


def test_maximum_and_minimum_share_ties_and_let_nan_through(device):
    """As PyTorch: a tie gives each side half the gradient; a NaN propagates and both sides get the gradient."""
    a = mg.tensor([1.0, 2.0, np.nan, 3.0], requires_grad=True, device=device)
    b = mg.tensor([1.0, 1.0, 0.0, np.nan], requires_grad=True, device=device)
    y = mg.maximum(a, b)
    np.testing.assert_array_equal(y.numpy(), [1.0, 2.0, np.nan, np.nan])
    y.sum().backward()
    assert a.grad.numpy().tolist() == [0.5, 1.0, 1.0, 1.0] and b.grad.numpy().tolist() == [0.5, 0.0, 1.0, 1.0]
    a.grad = b.grad = None
    a.minimum(b).sum().backward()
    assert a.grad.numpy().tolist() == [0.5, 0.0, 1.0, 1.0] and b.grad.numpy().tolist() == [0.5, 1.0, 1.0, 1.0]


@pytest.mark.parametrize("low, high", [(-1.0, 0.5), (None, 0.5), (-1.0, None)])
@op_settings
@given(x=S.floats(S.shapes(), avoid=(-1.0, 0.5)))
def test_clamp_with_number_bounds(device, low, high, x):
    check_op(lambda t: t.clamp(low, high), lambda a: np.clip(a, low, high), [x], device,
             torch_fn=lambda t: t.clamp(low, high))
    check_op(lambda t: mg.clip(t, min=low, max=high), lambda a: np.clip(a, low, high), [x], device)


@op_settings
@given(data=st.data())
def test_clamp_with_tensor_bounds(device, data):
    x = data.draw(S.floats(S.shapes(), avoid=(-1.0, 1.0), gap=0.3))
    # Bounds that broadcast to x's shape (PyTorch's clamp cannot give x the gradient of a larger output).
    shape_low, shape_high = (tuple(data.draw(st.sampled_from([1, n])) for n in x.shape) for _ in range(2))
    low = data.draw(S.floats(shape_low, -1.1, -0.9))  # every bound at least 0.2 from every x: no ties
    high = data.draw(S.floats(shape_high, 0.9, 1.1))
    check_op(lambda t, lo, hi: t.clamp(lo, hi), lambda a, lo, hi: np.minimum(np.maximum(a, lo), hi),
             [x, low, high], device, torch_fn=lambda t, lo, hi: t.clamp(lo, hi))


def test_clamp_edges_go_to_the_input_and_crossed_bounds_to_max(device):
    """x at a bound keeps its gradient; with min > max every element is max, as in PyTorch."""
    x = mg.tensor([1.0, 2.0, 3.0, 0.5, 5.0], requires_grad=True, device=device)
    low = mg.tensor([1.0, 1.0, 1.0, 1.0, 6.0], requires_grad=True, device=device)
    high = mg.tensor([2.0, 2.0, 2.0, 2.0, 4.0], requires_grad=True, device=device)
    y = x.clamp(low, high)
    y.sum().backward()
    assert y.numpy().tolist() == [1.0, 2.0, 2.0, 1.0, 4.0]
    assert x.grad.numpy().tolist() == [1.0, 1.0, 0.0, 0.0, 0.0]
    assert low.grad.numpy().tolist() == [0.0, 0.0, 0.0, 1.0, 0.0]
    assert high.grad.numpy().tolist() == [0.0, 0.0, 1.0, 0.0, 1.0]


def test_clamp_dtypes_and_errors(device):
    x = mg.tensor([1, 5], device=device)
    assert x.clamp(0, 3).dtype == np.int64 and x.clamp(0, 3).numpy().tolist() == [1, 3]
    assert x.clamp(min=1.5).dtype == np.float32 and x.clamp(min=1.5).numpy().tolist() == [1.5, 5.0]
    assert x.clamp(max=2).numpy().tolist() == [1, 2]
    with pytest.raises(RuntimeError, match="clamp: at least one of min and max must not be None"):
        x.clamp()


@op_settings
@given(data=st.data())
def test_masked_fill(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    mask = data.draw(S.masks(S.shapes_broadcasting_to(x.shape)))
    check_op(lambda t: t.masked_fill(mask, -1.5), lambda a: np.where(mask, -1.5, a), [x], device,
             torch_fn=lambda t: t.masked_fill(torch.tensor(mask), -1.5))


def test_masked_fill_takes_a_0d_tensor_value_on_any_device_and_differentiates_it(device):
    """As PyTorch: a 0-d tensor value (it was read through NumPy, which a device tensor refuses), whose
    gradient is the sum of the upstream gradient where the mask is True (it got none)."""
    x = mg.tensor([1.0, -2.0, 3.0], requires_grad=True, device=device)
    value = mg.tensor(0.5, dtype="float64", requires_grad=True, device=device)
    y = x.masked_fill(x > 0, value)
    assert y.numpy().tolist() == [0.5, -2.0, 0.5] and y.dtype == np.float32
    y.backward(mg.tensor([1.0, 2.0, 4.0], device=device))
    assert value.grad.numpy().tolist() == 5.0 and value.grad.dtype == np.float64
    assert x.grad.numpy().tolist() == [0.0, 2.0, 0.0]
    assert x.masked_fill(x > 0, mg.tensor(0.5, device=device)).tolist() == [0.5, -2.0, 0.5]
    with pytest.raises(RuntimeError, match="masked_fill: value must be a number or a 0-d tensor"):
        x.masked_fill(x > 0, mg.tensor([1.0, 2.0, 3.0], device=device))


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

