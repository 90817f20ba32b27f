"""The exact GELU as one compiled pass: the kernel of `GELU` (minigrad/fused/gelu.py).

    y = x Phi(x),   dy/dx = Phi(x) + x phi(x),   phi(x) = exp(-x**2 / 2) / sqrt(2 pi),
    Phi(x) = 1 - phi(|x|) R(|x|) for x >= 0, phi(|x|) R(|x|) for x < 0   (R the Mills ratio),

the float32 formula of special.normal_cdf_and_density, with the same degree-8 polynomial for R (its
coefficients are taken from there), so kernel and NumPy op agree to float32 rounding. NumPy makes about 36
passes over the array for it (each operation one pass); this kernel reads x once and writes y and the slope.
float32 only (`numba_setup.supports`); the NumPy op handles every other dtype.

    gelu_forward(x) -> (y, slope)        the op's forward: y, and the slope it saves for backward
    gelu_backward(gy, slope) -> gx       gx = gy * slope
Read next: ../fused/gelu.py (the op it implements).
"""

from __future__ import annotations

import functools
import math

import numpy as np

from minigrad.kernels import numba_setup, special
from minigrad.kernels.numba_math import exp32
from minigrad.kernels.numba_setup import AVAILABLE, kernel

__all__ = ["AVAILABLE", "ready", "gelu_forward", "gelu_backward"]

# The Mills-ratio polynomial of special.py, R(|x|) / sqrt(2 pi) as a power series in s = u * SCALE + SHIFT with
# u = K / (K + |x|): the very numbers NumPy's op uses, in float32.
_mills = special._MILLS_FLOAT32  # (private there: this kernel is the one other reader)
SCALE, SHIFT = np.float32(_mills.scale), np.float32(_mills.shift)
M0, M1, M2, M3, M4, M5, M6, M7, M8 = (np.float32(c) for c in _mills.coefficients)
MILLS_K, TAIL = np.float32(special.MILLS_K), np.float32(special.TAIL)
MINUS_HALF, ZERO, HALF, ONE, TWO = (np.float32(c) for c in (-0.5, 0.0, 0.5, 1.0, 2.0))
INV_SQRT_2PI = np.float32(1 / math.sqrt(2 * math.pi))


@kernel
def _gelu_and_slope(x: np.ndarray, y: np.ndarray, slope: np.ndarray) -> None:
    """y[i] = x Phi(x), slope[i] = Phi(x) + x phi(x) for the flat float32 array x (the NumPy op's steps)."""
    for i in range(x.size):
        xi = x[i]
        a = abs(xi)
        a = TAIL if a > TAIL else a  # keeps u in the polynomial's range (a NaN passes: the comparison is false)
        gauss = exp32(MINUS_HALF * (xi * xi))  # sqrt(2 pi) phi(x)
        s = (MILLS_K / (a + MILLS_K)) * SCALE + SHIFT
        mills = M0 + s * (M1 + s * (M2 + s * (M3 + s * (M4 + s * (M5 + s * (M6 + s * (M7 + s * M8)))))))
        tail = mills * gauss  # Phi(-|x|)
        # Phi(0) = 1/2 exactly, as in PyTorch and the NumPy op: evaluated with fused multiply-adds (which make this
        # loop 1.7x faster), the polynomial rounds to 1/2 + 1 ulp there.
        tail = HALF if a == ZERO else tail
        right = ONE if xi >= ZERO else ZERO  # Phi = right - (2 right - 1) tail, as the NumPy op writes it
        cdf = right - (right * TWO - ONE) * tail
        y[i] = xi * cdf
        slope[i] = cdf + xi * (gauss * INV_SQRT_2PI)


@kernel
def _times(gy: np.ndarray, slope: np.ndarray, gx: np.ndarray) -> None:
    """gx = gy * slope, flat."""
    for i in range(gy.size):
        gx[i] = gy[i] * slope[i]


def gelu_forward(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(y, slope) of the exact GELU for a float32 array of any shape (0-d, empty, strided: copied once)."""
    flat = np.ascontiguousarray(x).reshape(-1)
    y, slope = np.empty_like(flat), np.empty_like(flat)
    _gelu_and_slope(flat, y, slope)
    return y.reshape(x.shape), slope.reshape(x.shape)


def gelu_backward(gy: np.ndarray, slope: np.ndarray) -> np.ndarray:
    """gx = gy * slope, the GELU's backward (one pass, as the NumPy op's; here for a complete pair)."""
    flat_gy, flat_slope = np.ascontiguousarray(gy).reshape(-1), np.ascontiguousarray(slope).reshape(-1)
    gx = np.empty_like(flat_gy)
    _times(flat_gy, flat_slope, gx)
    return gx.reshape(slope.shape)


def _warm_up() -> None:
    x = np.array([-1.0, 0.5], np.float32)
    gelu_backward(x, gelu_forward(x)[1])


@functools.cache
def ready() -> bool:
    """True once the GELU kernel is compiled or loaded from the cache (once per process); False: use NumPy."""
    return numba_setup.prepare("GELU", _warm_up)
