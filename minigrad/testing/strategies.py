"""Hypothesis strategies shared by the tests: shapes, broadcastable shapes, axes and well-behaved arrays.

Gradient checks compare backward with finite differences, which are only trustworthy where the function
is smooth. So the array strategies keep values away from kinks and ties: relu and abs away from 0, max
without ties, log and sqrt away from non-positive numbers, division away from 0. Shapes stay small
(at most 24 elements), because a gradient check costs two forward passes per input element.

Read next: ../tools/gradcheck.py (the check these shapes feed).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

MAX_ELEMENTS = 24  # per input: keeps a gradient check (O(elements) forwards) fast


def _small(shape: tuple[int, ...]) -> bool:
    return math.prod(shape) <= MAX_ELEMENTS


def shapes(min_dims: int = 0, max_dims: int = 4, min_side: int = 1, max_side: int = 3) -> st.SearchStrategy:
    """Array shapes from 0-d up to 4-d with small sides, at most MAX_ELEMENTS elements."""
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side).filter(_small)


def broadcastable_shapes(num_shapes: int = 2, min_dims: int = 0, max_dims: int = 4,
                         max_side: int = 3) -> st.SearchStrategy:
    """`num_shapes` shapes that broadcast together (NumPy rules: size-1 and missing axes stretch).

    Draws a tuple of shapes; the broadcast result also has at most MAX_ELEMENTS elements.
    """
    return hnp.mutually_broadcastable_shapes(
        num_shapes=num_shapes, min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=max_side
    ).filter(lambda drawn: _small(drawn.result_shape)).map(lambda drawn: drawn.input_shapes)


@st.composite
def axes(draw: st.DrawFn, ndim: int, allow_none: bool = True) -> int | tuple[int, ...] | None:
    """An `axis` argument for a reduction over `ndim` axes: None, an int or a tuple, negatives included.

    A 0-d array has no axis to name, so for ndim == 0 this is always None.
    """
    if ndim == 0:
        return None
    single = st.integers(-ndim, ndim - 1)
    several = hnp.valid_tuple_axes(ndim, min_size=1)  # distinct axes, possibly negative
    options = [single, several] + ([st.none()] if allow_none else [])
    return draw(st.one_of(*options))


keepdims = st.booleans()
"""The `keepdims` flag of a reduction."""


def floats(shape: tuple[int, ...] | st.SearchStrategy, low: float = -3.0, high: float = 3.0,
           avoid: Sequence[float] = (), gap: float = 1e-2) -> st.SearchStrategy:
    """float64 arrays with values in [low, high] and at least `gap` away from every point in `avoid`.

    Use `avoid=(0,)` for relu, abs and division (their kink or pole is at 0). The gap is far larger than
    gradcheck's finite-difference step (1e-6), so a perturbed element never crosses a kink.
    """
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False, allow_subnormal=False)
    if avoid:
        elements = elements.filter(lambda v: all(abs(v - point) >= gap for point in avoid))
    return hnp.arrays(np.float64, shape, elements=elements)


def positive_floats(shape: tuple[int, ...] | st.SearchStrategy, low: float = 0.1,
                    high: float = 3.0) -> st.SearchStrategy:
    """float64 arrays in [low, high], low > 0: safe inputs for log, sqrt and a divisor."""
    return floats(shape, low, high)


@st.composite
def distinct_floats(draw: st.DrawFn, shape: tuple[int, ...], spacing: float = 0.25) -> np.ndarray:
    """float64 arrays whose values differ pairwise by at least 0.8 * `spacing`: max has no ties.

    A shuffled evenly spaced grid, each value jittered by at most a fifth of the spacing.
    """
    size = math.prod(shape)
    order = draw(st.permutations(range(size)))
    jitter = draw(hnp.arrays(np.float64, size, elements=st.floats(0, spacing / 5)))
    values = (np.asarray(order, dtype=np.float64) - size / 2) * spacing + jitter
    return values.reshape(shape)


def integer_ids(shape: tuple[int, ...] | st.SearchStrategy, high: int) -> st.SearchStrategy:
    """int64 arrays of ids in 0..high-1 (class targets, token ids, indices); repeats are likely."""
    return hnp.arrays(np.int64, shape, elements=st.integers(0, high - 1))


def masks(shape: tuple[int, ...] | st.SearchStrategy) -> st.SearchStrategy:
    """Boolean arrays (masks and `where` conditions)."""
    return hnp.arrays(np.bool_, shape, elements=st.booleans())


def shapes_broadcasting_to(shape: tuple[int, ...]) -> st.SearchStrategy:
    """Shapes that broadcast to `shape` without changing it (for masks and conditions applied to an array)."""
    return hnp.broadcastable_shapes(shape, min_dims=0, max_dims=len(shape))


@st.composite
def logits_and_targets(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray]:
    """Logits (N, C) or (N, C, d) (PyTorch's layouts: the classes on dim 1) and integer targets (N,) or (N, d),
    some of them -100 (an ignore_index). The first target is always a real one, so a mean over them exists.
    """
    n, num_classes = draw(st.integers(1, 6)), draw(st.integers(1, 4))
    extra = draw(st.sampled_from([(), (draw(st.integers(1, 3)),)]))  # the d of (N, C, d)
    logits = draw(floats((n, num_classes, *extra)))
    targets = draw(integer_ids((n, *extra), num_classes))
    ignored = draw(masks((n, *extra)))
    ignored.reshape(-1)[0] = False
    return logits, np.where(ignored, -100, targets)


@st.composite
def attention_inputs(draw: st.DrawFn, kind: str) -> tuple[np.ndarray, ...]:
    """q (..., T_q, d), k (..., T_k, d), v (..., T_k, dv) with T_q <= T_k, and a mask (or None).

    `kind` is "plain" or "causal" (no mask), "boolean mask" (True = may attend) or "additive mask"
    (finite values and -inf). Every query may attend to at least one key (its last), so no row is all -inf.
    """
    batch = draw(shapes(max_dims=2, max_side=2))
    t_q, d, dv = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    t_k = draw(st.integers(t_q, 3))
    q, k, v = (draw(floats((*batch, *shape), -2, 2)) for shape in [(t_q, d), (t_k, d), (t_k, dv)])
    mask = None
    if kind == "boolean mask":
        mask = draw(masks((t_q, t_k)))
        mask[:, -1] = True
    elif kind == "additive mask":
        mask = draw(floats((t_q, t_k), -1, 1))
        mask[:, :-1][draw(masks((t_q, t_k - 1)))] = -np.inf
    return q, k, v, mask
