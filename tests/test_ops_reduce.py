"""Reductions over `dim` (None, an int, a tuple, negatives; NumPy's `axis`/`keepdims` as aliases): sum, mean,
amax/amin, max/min (values and indices), argmax/argmin, var/std, prod, cumsum, logsumexp and norm; 0-d tensors,
empty dims, NaN and ties as PyTorch treats them.

Read next: test_ops_nn.py.
"""

import math

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from minigrad.testing import strategies as S


def np_logsumexp(a, axis=None, keepdims=False):
    m = a.max(axis=axis, keepdims=True)
    y = m + np.log(np.exp(a - m).sum(axis=axis, keepdims=True))
    return y if keepdims else np.squeeze(y, axis=axis) if axis is not None else y.reshape(())


def np_norm(p):
    return lambda a, axis=None, keepdims=False: (np.abs(a) ** p).sum(axis=axis, keepdims=keepdims) ** (1 / p)


def torch_all(name):
    """torch's reduction over `dim`, with dim=None (every axis) spelled out: torch's sum() ignores keepdim."""
    def call(t, dim, keepdim):
        return getattr(t, name)(tuple(range(t.ndim)) if dim is None else dim, keepdim=keepdim)
    return call


# name: (minigrad method, NumPy function, torch function, the values it is smooth on)
REDUCTIONS = {
    "sum": (np.sum, torch_all("sum"), S.floats),
    "mean": (np.mean, torch_all("mean"), S.floats),
    "amax": (np.max, torch_all("amax"), S.distinct_floats),  # no ties
    "amin": (np.min, torch_all("amin"), S.distinct_floats),
    "var": (lambda a, axis, keepdims: np.var(a, axis=axis, keepdims=keepdims, ddof=1), torch_all("var"), S.floats),
    "std": (lambda a, axis, keepdims: np.std(a, axis=axis, keepdims=keepdims, ddof=1), torch_all("std"),
            S.distinct_floats),  # never a constant slice, where std's derivative has a kink
    "logsumexp": (np_logsumexp, torch_all("logsumexp"), S.floats),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@op_settings
@given(data=st.data(), keepdim=S.keepdims)
def test_reduction(name, device, data, keepdim):
    np_fn, torch_fn, values = REDUCTIONS[name]
    x = data.draw(values(data.draw(S.shapes())))
    dim = data.draw(S.axes(x.ndim))
    if name in ("var", "std"):  # the unbiased estimate needs two elements per slice
        n = x.size if dim is None else math.prod(x.shape[d] for d in np.atleast_1d(dim))
        if n < 2:
            return
    check_op(lambda t: getattr(t, name)(dim, keepdim=keepdim), lambda a: np_fn(a, axis=dim, keepdims=keepdim),
             [x], device, torch_fn=lambda t: torch_fn(t, dim, keepdim))
    check_op(lambda t: getattr(t, name)(axis=dim, keepdims=keepdim), lambda a: np_fn(a, axis=dim, keepdims=keepdim),
             [x], device)  # NumPy's spelling, the same thing


@pytest.mark.parametrize("name", ["max", "min"])
@op_settings
@given(data=st.data(), keepdim=S.keepdims)
def test_max_and_min_along_a_dim_return_values_and_indices(name, device, data, keepdim):
    x = data.draw(S.distinct_floats(data.draw(S.shapes(min_dims=1))))
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    pick = np.argmax if name == "max" else np.argmin
    check_op(lambda t: getattr(t, name)(dim, keepdim).values,
             lambda a: getattr(np, name)(a, axis=dim, keepdims=keepdim), [x], device,
             torch_fn=lambda t: getattr(t, name)(dim, keepdim).values)
    result = getattr(mg.tensor(x, device=device), name)(dim=dim, keepdim=keepdim)
    values, indices = result  # a named tuple, as torch.return_types.max
    assert result.values is values and result.indices is indices
    assert indices.dtype == np.int64 and not indices.requires_grad
    expected = pick(x, axis=dim, keepdims=keepdim)
    np.testing.assert_array_equal(indices.numpy(), expected)
    arg = getattr(mg.tensor(x, device=device), f"arg{name}")(dim, keepdim=keepdim)
    np.testing.assert_array_equal(arg.numpy(), expected)
    assert getattr(mg.tensor(x, device=device), f"arg{name}")().item() == pick(x)  # into the flattened tensor


def test_max_and_min_of_every_element_is_a_tensor_and_with_a_tensor_elementwise(device):
    x = mg.tensor([[1.0, 5.0], [3.0, 2.0]], device=device)
    assert x.max().item() == 5.0 and x.min().item() == 1.0 and mg.max(x).item() == 5.0
    np.testing.assert_array_equal(x.max(mg.tensor([2.0, 4.0], device=device)).numpy(), [[2.0, 5.0], [3.0, 4.0]])
    np.testing.assert_array_equal(mg.min(x, mg.tensor(2.0, device=device)).numpy(), [[1.0, 2.0], [2.0, 2.0]])


def test_max_gradient_ties_and_nan_as_pytorch(device):
    """max(): ties share, a NaN takes it all. max(dim): the index takes it. amax: ties share, NaN poisons the slice."""
    def grad(fn, values):
        x = mg.tensor(values, requires_grad=True, device=device)
        fn(x).sum().backward()
        return x.grad.numpy().tolist()

    assert grad(lambda x: x.max(), [1.0, 3.0, 3.0]) == [0.0, 0.5, 0.5]
    assert grad(lambda x: x.max(), [1.0, np.nan, 3.0, 3.0]) == [0.0, 1.0, 0.0, 0.0]
    assert grad(lambda x: x.max(0).values, [1.0, 3.0, 3.0]) == [0.0, 1.0, 0.0]
    assert grad(lambda x: x.max(1).values, [[1.0, np.nan, 3.0], [2.0, 1.0, 0.0]]) == [[0, 1, 0], [1, 0, 0]]
    assert grad(lambda x: x.min(0).values, [2.0, 1.0, 1.0]) == [0.0, 1.0, 0.0]
    assert grad(lambda x: x.amax(1), [[1.0, 3.0, 3.0], [2.0, 1.0, 0.0]]) == [[0, 0.5, 0.5], [1, 0, 0]]
    assert np.isnan(grad(lambda x: x.amax(1), [[1.0, np.nan, 3.0], [2.0, 1.0, 0.0]])[0]).all()
    if torch is not None:
        t = torch.tensor([1.0, np.nan, 3.0, 3.0], requires_grad=True)
        t.max().backward()
        assert t.grad.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_a_0d_tensor_reduces_over_dim_0_and_minus_1(device):
    """A 0-d tensor has one element and accepts dim 0 and -1, as in PyTorch."""
    t = mg.tensor(3.0, requires_grad=True, device=device)
    for dim in (0, -1):
        for y in (t.sum(dim), t.mean(dim), t.amax(dim), t.max(dim).values, t.min(dim).values, t.prod(dim),
                  t.logsumexp(dim), t.cumsum(dim), t.norm(dim=dim), t.sum(dim, keepdim=True)):
            assert y.shape == () and y.item() == 3.0
        assert t.max(dim).indices.item() == 0 and t.argmax(dim).item() == 0
        assert np.isnan(t.var(dim).item()) and np.isnan(t.std(dim).item())  # n - 1 = 0
        assert t.softmax(dim).item() == 1.0 and t.log_softmax(dim).item() == 0.0
    (t.sum(0) + t.max(-1).values + t.softmax(0)).backward()
    assert t.grad.item() == 2.0
    with pytest.raises(IndexError, match=r"sum: dim 1 is out of range for a tensor with 0 dimensions"):
        t.sum(1)


def test_var_and_std_are_unbiased_by_default_with_pytorchs_correction(device):
    x = mg.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    assert x.var().item() == pytest.approx(5 / 3)  # divides by n - 1 = 3, as torch.var
    assert x.var(correction=0).item() == pytest.approx(1.25) == x.var(unbiased=False).item()
    assert x.var(0, True).item() == pytest.approx(5 / 3) and x.var(True).item() == pytest.approx(5 / 3)
    assert x.std(correction=2).item() == pytest.approx(math.sqrt(5 / 2))
    with pytest.raises(TypeError, match="var: pass correction or unbiased, not both"):
        x.var(unbiased=True, correction=1)


def test_std_of_a_constant_slice_has_gradient_zero(device):
    x = mg.tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]], dtype="float64", requires_grad=True, device=device)
    x.std(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0, 0], [-0.5, 0, 0.5]])  # torch: 0 where std = 0, not nan


def test_var_over_an_empty_dim_is_nan_with_a_zero_size_gradient(device):
    x = mg.tensor(np.zeros((2, 0)), requires_grad=True, device=device)
    y = x.var(1)
    assert np.isnan(y.numpy()).all() and y.shape == (2,)
    y.sum().backward()
    assert x.grad.shape == (2, 0)
    z = mg.tensor(np.zeros((2, 0)), requires_grad=True, device=device)
    z.mean(1).sum().backward()
    assert z.grad.shape == (2, 0)


@op_settings
@given(data=st.data(), keepdim=S.keepdims)
def test_prod(device, data, keepdim):
    x = data.draw(S.floats(data.draw(S.shapes())))
    dim = None if x.ndim == 0 or data.draw(st.booleans()) else data.draw(st.integers(-x.ndim, x.ndim - 1))
    keepdim = keepdim and dim is not None  # torch's prod() over every element has no keepdim
    check_op(lambda t: t.prod(dim, keepdim=keepdim), lambda a: np.prod(a, axis=dim, keepdims=keepdim), [x], device,
             torch_fn=lambda t: t.prod(dim, keepdim=keepdim) if dim is not None else t.prod())


def test_prod_gradient_with_zeros_is_exact(device):
    """No division by x: one zero gets the product of the others; with two zeros every gradient is 0."""
    for values, expected in [([2.0, 0.0, 3.0], [0.0, 6.0, 0.0]), ([0.0, 0.0, 3.0], [0.0, 0.0, 0.0])]:
        x = mg.tensor(values, requires_grad=True, device=device)
        x.prod().backward()
        assert x.grad.numpy().tolist() == expected


@op_settings
@given(data=st.data())
def test_cumsum(device, data):
    x = data.draw(S.floats(data.draw(S.shapes(min_dims=1))))
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    check_op(lambda t: t.cumsum(dim), lambda a: np.cumsum(a, axis=dim), [x], device,
             torch_fn=lambda t: t.cumsum(dim))


def test_logsumexp_of_huge_and_minus_inf_values(device):
    x = mg.tensor([[1000.0, 1000.0], [-np.inf, -np.inf], [np.inf, 1.0]], device=device)
    np.testing.assert_allclose(x.logsumexp(1).numpy(), [1000 + math.log(2), -np.inf, np.inf])
    assert mg.tensor(np.zeros((0,)), device=device).logsumexp(0).item() == -np.inf


@pytest.mark.parametrize("p", [1, 2, 3, 0.5, math.inf])
@op_settings
@given(data=st.data(), keepdim=S.keepdims)
def test_norm(p, device, data, keepdim):
    shape = data.draw(S.shapes())
    if p == math.inf:  # |x| without ties and away from 0: distinct magnitudes, random signs
        magnitudes = data.draw(S.distinct_floats(shape))
        x = (magnitudes - magnitudes.min() + 0.5) * data.draw(S.floats(shape).map(np.sign).map(lambda a: a + (a == 0)))
    else:
        x = data.draw(S.floats(shape, avoid=(0,)))
    dim = data.draw(S.axes(x.ndim))
    np_fn = (lambda a, axis, keepdims: np.abs(a).max(axis=axis, keepdims=keepdims)) if p == math.inf else np_norm(p)
    check_op(lambda t: t.norm(p, dim, keepdim), lambda a: np_fn(a, axis=dim, keepdims=keepdim), [x], device,
             torch_fn=lambda t: t.norm(p, dim, keepdim))


@pytest.mark.parametrize("p, expected", [(1, [0.0, -1.0, 1.0]), (math.inf, [0.0, 0.0, 0.0])])
def test_norm_gradient_with_a_nan_is_pytorchs(p, expected, device):
    """p=1: sign(x), 0 at nan as PyTorch's sign; p=inf: 0, since no element equals the nan maximum (was 0/0)."""
    x = mg.tensor([np.nan, -2.0, 1.0], requires_grad=True, device=device)
    x.norm(p).backward()
    assert x.grad.numpy().tolist() == expected
    if torch is not None:
        t = torch.tensor([np.nan, -2.0, 1.0], requires_grad=True)
        t.norm(p).backward()
        assert t.grad.tolist() == expected


def test_norm_of_zero_has_gradient_zero(device):
    for p in (2, 1, 3, 0.5):
        x = mg.tensor([0.0, 0.0], requires_grad=True, device=device)
        x.norm(p).backward()
        assert x.grad.numpy().tolist() == [0.0, 0.0], p
    x = mg.tensor([0.0, 1.0], requires_grad=True, device=device)
    x.norm(0.5).backward()
    assert x.grad.numpy().tolist() == [0.0, 1.0]  # torch: 0 at x = 0, not inf


def test_integer_reductions_have_pytorchs_dtypes(device):
    x = mg.tensor([1, 2], dtype="int32", device=device)
    assert x.sum().dtype == np.int64 and x.prod().dtype == np.int64 and x.cumsum(0).dtype == np.int64
    assert mg.tensor([200, 100], dtype="uint8", device=device).sum().item() == 300  # int64, not a wrapped uint8
    assert mg.tensor([True, True], device=device).sum().item() == 2
    assert x.amax().dtype == np.int32 and x.max().item() == 2
    assert x.mean(dtype="float32").item() == 1.5 and x.sum(dtype="float64").dtype == np.float64
    assert x.logsumexp(0).dtype == np.float32
    with pytest.raises(RuntimeError, match="mean: input dtype must be a floating point type, not int32"):
        x.mean()
    with pytest.raises(RuntimeError, match="var: input dtype must be a floating point type"):
        x.var()


def test_dims_as_pytorch_spells_them(device):
    x = mg.tensor(np.arange(6.0).reshape(2, 3), device=device)
    assert x.sum(dim=()).item() == 15.0  # an empty dim list means every axis, as in PyTorch
    assert x.sum(np.int64(1)).numpy().tolist() == [3.0, 12.0]  # a NumPy integer is an int
    assert x.sum(axis=1, keepdims=True).shape == (2, 1) == x.sum(1, keepdim=True).shape
    assert x.amax(dim=(0, 1)).item() == 5.0 and x.mean((-1, 0)).item() == 2.5
    with pytest.raises(IndexError, match=r"sum: dim 2 is out of range for a tensor with 2 dimensions"):
        x.sum(2)
    with pytest.raises(RuntimeError, match="dim 0 appears more than once"):
        x.sum((0, 0))
    with pytest.raises(TypeError, match="max: dim must be a single int"):
        x.max((0, 1))
    with pytest.raises(TypeError, match="sum: pass dim or its alias axis, not both"):
        x.sum(0, axis=1)
