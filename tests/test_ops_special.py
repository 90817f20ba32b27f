"""erf (minigrad/kernels/special.py), which NumPy lacks: its accuracy against Python's `math.erf`, in units in the
last place (ulp) of the true value, on a dense grid of tiny, ordinary and large |x|, in float32 and float64.

Read next: test_ops_reduce.py.
"""

import math

import numpy as np
import pytest
from helpers import torch

import minigrad as mg
from minigrad.kernels import special

# float32 is accurate to about its rounding (a correctly rounded result is within 0.5 ulp); float64 to a few
# ulps, about 1e-15 relative. Measured: float32 1.34 ulp at most, float64 4 ulps.
MAX_ULPS = {np.float32: 1.5, np.float64: 4.0}


def grid(dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    magnitudes = np.concatenate([np.geomspace(tiny, 1e-3, 20_000), np.linspace(0, 7, 200_001), [np.inf]])
    values = magnitudes.astype(dtype)
    return np.concatenate([values, -values])


def ulps(y, x, dtype):
    """|y - erf(x)| in units of the spacing of `dtype` at erf(x), erf computed in float64 by math.erf."""
    exact = np.array([math.erf(float(v)) for v in x])
    return np.abs(y.astype(np.float64) - exact) / np.spacing(np.abs(exact).astype(dtype)).astype(np.float64)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_erf_is_accurate_to_its_dtypes_rounding(dtype):
    x = grid(dtype)
    y = special.erf(x)
    assert y.dtype == dtype
    errors = ulps(y, x, dtype)
    worst = int(errors.argmax())
    assert errors.max() <= MAX_ULPS[dtype], f"erf({x[worst]!r}) is {errors.max():.2f} ulps off"
    assert np.mean(errors) < 0.5  # most results are the correctly rounded value


def test_erf_at_special_values(device):
    x = mg.tensor([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30], device=device)
    y = x.erf().numpy()
    np.testing.assert_array_equal(y[:4], [0.0, -0.0, 1.0, -1.0])
    assert np.signbit(y[1]) and np.isnan(y[4])
    np.testing.assert_allclose(y[5:], [2 / math.sqrt(math.pi) * 1e-30, -2 / math.sqrt(math.pi) * 1e-30], rtol=1e-6)


def test_erf_in_float16_is_computed_in_float32(device):
    x = np.linspace(-3, 3, 61).astype(np.float16)
    y = mg.tensor(x, dtype="float16", device=device).erf()
    assert y.dtype == np.float16
    exact = np.array([math.erf(float(v)) for v in x]).astype(np.float16)
    np.testing.assert_array_equal(y.numpy(), exact)


@pytest.mark.torch
def test_erf_matches_pytorch_in_float32():
    if torch is None:
        pytest.skip("needs PyTorch")
    x = np.linspace(-6, 6, 120_001).astype(np.float32)
    np.testing.assert_allclose(mg.tensor(x).erf().numpy(), torch.erf(torch.tensor(x)).numpy(), rtol=3e-7, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_normal_cdf_and_density_keep_their_relative_precision(dtype):
    """Phi and phi, which the exact GELU is made of, against math.erfc and math.exp in float64.

    A float32 input is exact, but exp(-x**2 / 2) turns the rounding of x**2 into a relative error of up to
    2 x**2 ulps: the bound grows with x**2, as any float32 computation's must. float32's Phi is one polynomial
    for all x and keeps that precision far left, where Phi is tiny; float64's goes through erf, 1 + erf(z),
    so far left only its absolute error is small.
    """
    x = np.concatenate([np.linspace(-14, 14, 200_001), [0.0, -np.inf, np.inf]]).astype(dtype)
    cdf, density = special.normal_cdf_and_density(x)
    assert cdf.dtype == density.dtype == dtype
    exact_cdf = np.array([0.5 * math.erfc(-float(v) / math.sqrt(2)) for v in x])
    exact_density = np.array([math.exp(-float(v) ** 2 / 2) / math.sqrt(2 * math.pi) for v in x])
    eps = np.finfo(dtype).eps
    bound = (16 + 2 * x.astype(np.float64) ** 2) * eps
    for name, ours, exact in [("Phi", cdf, exact_cdf), ("phi", density, exact_density)]:
        error = np.abs(ours - exact)
        relative = error / np.maximum(exact, np.finfo(dtype).tiny)
        checked = (exact > np.finfo(dtype).tiny) & ((dtype == np.float32) | (x > -1) | (name == "phi"))
        worst = int(np.argmax(np.where(checked, relative / bound, 0)))
        assert np.all(relative[checked] <= bound[checked]), f"{name}({x[worst]}) is {relative[worst]:.2e} off"
        assert np.all(error <= 8 * eps)  # and everywhere within a few units of 1
    assert cdf[-2] == 0 and cdf[-1] == 1 and density[-1] == 0
    for value in [-0.5, 2.0]:  # a 0-d array gives 0-d arrays, with the same values
        cdf, density = special.normal_cdf_and_density(np.array(value, dtype=dtype))
        assert cdf.shape == density.shape == () and cdf.dtype == dtype
        assert cdf == special.normal_cdf_and_density(np.array([value], dtype=dtype))[0][0]
