"""A float32 exp written out for the compiled kernels: numba's own exp is a scalar library call per element.

    exp(x) = 2**n * exp(r),   n = round(x / ln 2),   r = x - n ln 2 in [-ln2/2, ln2/2],

exp(r) a Taylor polynomial (degree 7: its error, r**8 / 8!, is far below float32's ulp), ln 2 split in two
(Cody and Waite) so that n ln 2 is subtracted without losing r's digits, and 2**n built from its bits. Every step
is plain arithmetic, so LLVM turns a loop of them into vector code (about NumPy's own speed, 0.6 ns an element on
an Intel Xeon; fused into a kernel, it saves the passes around it). Within 1.5 ulp of the true exp on average,
4.6 at most (near x = 88: the fast-math reassociation the kernels need blurs the two halves of ln 2 a little);
exactly 0 at -inf (and 0 for results below 1.7e-38, which NumPy keeps as subnormals), inf at +inf, NaN passes
through. Read next: ../fused/gelu.py (the op whose erf it compiles).
"""

from __future__ import annotations

import numpy as np

from minigrad.kernels.numba_setup import kernel

LOG2E = np.float32(1.4426950408889634)
LN2_HI = np.float32(0.693359375)  # ln 2 = LN2_HI + LN2_LO; LN2_HI has few bits, so n * LN2_HI is exact
LN2_LO = np.float32(-2.12194440e-4)
LOW = np.float32(-87.5)  # below it, n would fall under -126 (the result is flushed to 0 from about -87 on)
HIGH = np.float32(88.72283935546875)  # log of float32's largest number: above it, inf
INF = np.float32(np.inf)
HALF, ONE = np.float32(0.5), np.float32(1.0)
C3, C4, C5, C6, C7 = (np.float32(1 / f) for f in (6, 24, 120, 720, 5040))


@kernel(inline="always")  # inlined into each kernel's loop, where LLVM vectorises it (a call would not be)
def exp32(x: np.float32) -> np.float32:
    """exp(x) for a float32 x, in float32 (see the module docstring)."""
    # Clamped by comparisons that send a NaN to LOW (no NaN reaches the float-to-int conversion below, where it
    # would be undefined); the NaN is given back at the end.
    xc = x if x > LOW else LOW
    xc = xc if xc < HIGH else HIGH
    n = np.floor(xc * LOG2E + HALF)  # round(x / ln 2)
    r = (xc - n * LN2_HI) - n * LN2_LO
    p = ONE + r * (ONE + r * (HALF + r * (C3 + r * (C4 + r * (C5 + r * (C6 + r * C7))))))
    # 2**(n - 1), built from its bits, times 2 p: 2**n itself would overflow for n = 128 (x near 88.7). At the
    # low end n = -126 gives the bits of 0.0: exp(x) < 1.7e-38 is flushed to 0 (NumPy keeps such subnormals).
    k = np.int32(n) - np.int32(1)
    scale = np.int32((k + np.int32(127)) << np.int32(23)).view(np.float32)
    y = (p + p) * scale
    y = INF if x > HIGH else y
    return y if x == x else x
