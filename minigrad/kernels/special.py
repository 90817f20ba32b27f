"""erf, the error function, on backend arrays: NumPy has none, and ops may only use `xp` functions.

    erf(x) = 2/sqrt(pi) * integral from 0 to x of exp(-t**2) dt,   erf(-x) = -erf(x),   erf(inf) = 1.

Two pieces, each accurate to the last bit or two of the dtype (float32: within 1.34 units in the last
place of `math.erf` on a dense grid, 0.2 on average; float64: within 4, about 1e-15 relative; measured by
tests/test_ops_special.py):
- |x| < 1: erf(x) = x + x g(x**2), where g(u) = erf(sqrt(u)) / sqrt(u) - 1 is smooth (its Maclaurin
  series is 2/sqrt(pi) (1 - u/3 + u**2/10 - ...) - 1). Adding the largest term, x, last and exactly
  keeps a tiny x's full relative precision.
- |x| >= 1: erf(x) = 1 - erfc(x) with erfc(x) = exp(-x**2) h(x), where h(x) = exp(x**2) erfc(x) is smooth
  and slowly varying (about 1 / (sqrt(pi) x)): a function of t = 1/(1 + x), it is nearly a low polynomial.
  Past SATURATES, erfc(x) is below half a unit in the last place of 1 and erf is exactly 1 in that dtype.
g and h are polynomials whose coefficients are computed once, at import, by interpolating Python's
`math.erf` and `math.erfc` at Chebyshev points (near-best polynomials for a smooth function). float16 is
computed in float32 and rounded back.

The exact GELU needs the standard normal's CDF, Phi(x) = (1 + erf(x / sqrt(2))) / 2, and its density, and it
runs on every activation of a GPT's MLP: `normal_cdf_and_density` computes both with one exp and one
polynomial of degree 8 (see there), fewer passes than erf and without its loss of precision far left.
Read next: ../fused/gelu.py (the op that needs erf).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from numpy.polynomial import chebyshev

from minigrad.core.backend import get_array_module
from minigrad.kernels.threads import in_chunks

# Per dtype: the degrees of the polynomials for g and h, and where erf saturates to 1.
DEGREES = {np.dtype(np.float32): (6, 6), np.dtype(np.float64): (12, 18)}
SATURATES = {np.dtype(np.float32): 4.0, np.dtype(np.float64): 6.0}  # erfc(4) = 1.5e-8, erfc(6) = 2.2e-17


class Interpolant:
    """A polynomial matching f on [low, high] at `degree + 1` Chebyshev points, evaluated by Horner's rule.

    It is a power series in s = v * scale + shift, the variable v mapped onto [-1, 1], where the
    power series of a Chebyshev interpolant is well conditioned.
    """

    def __init__(self, f: Callable[[float], float], low: float, high: float, degree: int) -> None:
        self.scale, self.shift = 2 / (high - low), -(high + low) / (high - low)
        on_s = lambda s: np.array([f(low + (v + 1) * (high - low) / 2) for v in s])
        self.coefficients = [float(c) for c in chebyshev.cheb2poly(chebyshev.chebinterpolate(on_s, degree))]

    def __call__(self, v: Any) -> Any:
        """c0 + c1 s + c2 s**2 + ... = c0 + s (c1 + s (c2 + ...)), in place on one new array."""
        s = v * self.scale
        s += self.shift
        *lower, next_to_last, last = self.coefficients
        y = s * last  # the innermost bracket, c_n s + c_(n-1), starts the one new array
        y += next_to_last
        for c in reversed(lower):
            y *= s
            y += c
        return y


def _g(u: float) -> float:
    """erf(sqrt(u)) / sqrt(u) - 1, with its limit 2/sqrt(pi) - 1 at u = 0."""
    return math.erf(math.sqrt(u)) / math.sqrt(u) - 1 if u > 0 else 2 / math.sqrt(math.pi) - 1


def _h(t: float) -> float:
    """exp(x**2) erfc(x) at x = 1/t - 1."""
    x = 1 / t - 1
    return math.exp(x * x) * math.erfc(x)


def _mills_over_sqrt_2pi(u: float) -> float:
    """R(a) / sqrt(2 pi) at a = K (1/u - 1), R(a) = (1 - Phi(a)) / phi(a) the normal's Mills ratio."""
    a = MILLS_K * (1 / u - 1)
    return 0.5 * math.erfc(a / math.sqrt(2)) * math.exp(a * a / 2)


# Phi's tail in float32, 1 - Phi(a) = phi(a) R(a) for a = |x|, for every a in [0, TAIL] at once. R is smooth
# and slowly varying (R(0) = sqrt(pi / 2), R(a) ~ 1/a far out); as a function of u = K / (K + a) it is nearly
# a low polynomial. K = 2.5 lets degree 8 reach float32's precision (measured over [-14, 14]: within 6.6e-7
# relative where |x| < 3, against 1.0e-6 for a degree-12 polynomial in 1 / (1 + |x| / sqrt(2))); each degree
# fewer is two passes fewer over a GPT's activations. Past TAIL, phi and the tail round to 0 in float32.
MILLS_K = 2.5
TAIL = 14.5
_MILLS_FLOAT32 = Interpolant(_mills_over_sqrt_2pi, MILLS_K / (MILLS_K + TAIL), 1.0, 8)

_PIECES = {
    dtype: (Interpolant(_g, 0.0, 1.0, near), Interpolant(_h, 1 / (1 + SATURATES[dtype]), 0.5, far))
    for dtype, (near, far) in DEGREES.items()
}


def erf(x: Any) -> Any:
    """The error function of a float array, elementwise, in the array's dtype (see the module docstring).

    About forty passes over the array: on the CPU, a large array is split over the threads (threads.py)."""
    return in_chunks(_erf, x)


def _erf(x: Any) -> Any:
    xp = get_array_module(x)
    if x.dtype == np.float16:
        return _erf(x.astype(np.float32)).astype(np.float16)
    g, h = _PIECES[np.dtype(x.dtype)]
    a = xp.minimum(xp.abs(x), SATURATES[np.dtype(x.dtype)])  # erf is odd: work on |x|, restore the sign last
    a2 = a * a
    near = a * g(a2)
    near += a  # erf(a) for a < 1
    erfc = xp.exp(-a2)
    erfc *= h(1 / (1 + a))
    y = xp.where(a < 1, near, 1 - erfc)
    return xp.copysign(y, x)


def normal_cdf_and_density(x: Any) -> tuple[Any, Any]:
    """(Phi(x), phi(x)) of a float array: the standard normal's CDF and density, in the array's dtype.

        Phi(x) = erfc(-x / sqrt(2)) / 2,   phi(x) = exp(-x**2 / 2) / sqrt(2 pi).

    In float32 (the training dtype) both come from one exp: with a = |x|, Phi's tail 1 - Phi(a) = Phi(-a) is
    phi(a) R(a), R the Mills ratio, one polynomial over all of [0, TAIL] (see _MILLS_FLOAT32), and Phi(x)
    is that tail for negative x, 1 minus it otherwise. Phi keeps its relative precision (about 1e-6) far
    left, where 1 + erf(x / sqrt(2)) would be 1 minus a number near 1. float64 and float16 go through erf
    (float64 needs two pieces to reach its precision).
    """
    xp = get_array_module(x)
    if x.ndim == 0:  # NumPy turns 0-d results into scalars, which the steps below could not write into
        cdf, density = normal_cdf_and_density(x.reshape(1))
        return cdf.reshape(()), density.reshape(())
    if x.dtype != np.float32:
        z = x * (1 / math.sqrt(2))
        cdf = erf(z)
        cdf += 1
        cdf *= 0.5
        density = xp.exp(-(z * z))
        density *= 1 / math.sqrt(2 * math.pi)
        return cdf, density
    a = xp.abs(x)
    a = xp.minimum(a, TAIL, out=a)  # keeps u in the polynomial's range; past TAIL phi is 0 anyway
    gauss = x * x
    gauss *= -0.5
    xp.exp(gauss, out=gauss)  # exp(-x**2 / 2) = sqrt(2 pi) phi(x)
    a += MILLS_K
    u = xp.divide(MILLS_K, a, out=a)
    tail = _MILLS_FLOAT32(u)  # R(|x|) / sqrt(2 pi)
    tail *= gauss  # 1 - Phi(|x|) = phi(|x|) R(|x|) = Phi(-|x|)
    # Phi(x) = tail for x < 0 and 1 - tail for x >= 0. With r = 1 for x >= 0, else 0, that is r - (2r - 1) tail:
    # arithmetic, because NumPy's where and copysign cost 5 to 10 times a product per element. (Not with the
    # sign of x: -0.0 >= 0, yet its sign is negative, and Phi(-0.0) came out as 1.5 that way.)
    right = (x >= 0).astype(x.dtype)
    sign = right * 2
    sign -= 1
    tail *= sign
    cdf = xp.subtract(right, tail, out=tail)
    gauss *= 1 / math.sqrt(2 * math.pi)
    return cdf, gauss
