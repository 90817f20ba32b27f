"""Shape ops: reshape (with -1), transpose and .T, indexing (ints, slices, None, ..., integer arrays), concat, stack.

Their backward only moves gradients around, except when an integer array picks an element twice: then
the element's gradient must arrive twice (scatter-add).
Read next: test_ops_linalg.py.
"""

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import minigrad as mg
from minigrad.testing import strategies as S


@op_settings
@given(data=st.data())
def test_reshape_with_minus_one(device, data):
    x = data.draw(S.floats(S.shapes()))
    target = list(reversed(x.shape))  # same elements, another shape
    if target:
        target[data.draw(st.integers(0, len(target) - 1))] = -1  # -1: "whatever makes the size right"
    fn = lambda t: t.reshape(tuple(target))
    check_op(fn, fn, [x], device, torch_fn=fn)
    check_op(lambda t: t.reshape(-1), lambda a: a.reshape(-1), [x], device)


@op_settings
@given(data=st.data())
def test_transpose(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    axes = data.draw(st.permutations(range(x.ndim)))
    axes = [a - x.ndim if data.draw(st.booleans()) else a for a in axes]  # negative axes count from the end
    check_op(lambda t: t.transpose(*axes), lambda a: a.transpose(axes), [x], device,
             torch_fn=lambda t: t.permute(tuple(axes)))


@op_settings
@given(x=S.floats(S.shapes()))
def test_T_reverses_the_axes(device, x):
    check_op(lambda t: t.T, lambda a: a.T, [x], device, torch_fn=lambda t: t.permute(tuple(reversed(range(t.ndim)))))
    check_op(lambda t: t.transpose(), lambda a: a.transpose(), [x], device)


@op_settings
@given(data=st.data())
def test_getitem_basic(device, data):
    """Ints (negative too), slices (any step), None and ... (torch has no negative steps: NumPy is the oracle)."""
    x = data.draw(S.floats(S.shapes()))
    index = data.draw(hnp.basic_indices(x.shape, allow_newaxis=True, allow_ellipsis=True))
    check_op(lambda t: t[index], lambda a: a[index], [x], device)


@op_settings
@given(data=st.data())
def test_getitem_integer_arrays(device, data):
    """One integer array per axis, repeats included: a repeated element's gradient accumulates."""
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    index = data.draw(hnp.integer_array_indices(x.shape, result_shape=S.shapes(max_dims=2)))
    check_op(lambda t: t[index], lambda a: a[index], [x], device,
             torch_fn=lambda t: t[tuple(torch.tensor(i) for i in index)])


@op_settings
@given(data=st.data())
def test_getitem_integer_array_with_a_slice(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=2)))
    ids = data.draw(S.integer_ids(st.integers(1, 4), x.shape[0]))
    check_op(lambda t: t[ids, 1:], lambda a: a[ids, 1:], [x], device, torch_fn=lambda t: t[torch.tensor(ids), 1:])
    last = ids % x.shape[-1]  # the same ids, now along the last axis
    check_op(lambda t: t[..., last], lambda a: a[..., last], [x], device,
             torch_fn=lambda t: t[..., torch.tensor(last)])


@pytest.mark.parametrize("index", [[0, 0, 2], np.array([0, 0, 2]), "tensor"], ids=["list", "ndarray", "tensor"])
def test_repeated_index_accumulates_the_gradient(device, index):
    if isinstance(index, str):
        index = mg.tensor([0, 0, 2], device=device)
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    x[index].sum().backward()
    assert x.grad.numpy().tolist() == [2.0, 0.0, 1.0]  # x[0] was used twice


@st.composite
def joinable(draw, new_axis: bool):
    """1-3 arrays of one shape, except (for concat) along `axis`; and the axis (maybe negative)."""
    shape = list(draw(S.shapes(min_dims=0 if new_axis else 1, max_dims=3)))
    ndim = len(shape) + (1 if new_axis else 0)
    axis = draw(st.integers(-ndim, ndim - 1))
    arrays = []
    for _ in range(draw(st.integers(1, 3))):
        if not new_axis:
            shape[axis] = draw(st.integers(1, 3))
        arrays.append(draw(S.floats(tuple(shape))))
    return arrays, axis


@op_settings
@given(drawn=joinable(new_axis=False))
def test_concat(device, drawn):
    arrays, axis = drawn
    check_op(lambda *ts: mg.concat(ts, axis=axis), lambda *a: np.concatenate(a, axis=axis), arrays, device,
             torch_fn=lambda *ts: torch.cat(ts, dim=axis))


@op_settings
@given(drawn=joinable(new_axis=True))
def test_stack(device, drawn):
    arrays, axis = drawn
    check_op(lambda *ts: mg.stack(ts, axis=axis), lambda *a: np.stack(a, axis=axis), arrays, device,
             torch_fn=lambda *ts: torch.stack(ts, dim=axis))
