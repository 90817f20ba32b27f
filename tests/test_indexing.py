"""Indexing, read as PyTorch reads it: ints, slices, None, ..., integer lists, tuples, arrays and tensors, bool
masks; and `gather`. An element picked twice must get its gradient twice (scatter-add).

PyTorch is the oracle where NumPy differs (an int standing with an integer array: `x[0, :, [1, 2]]`), so
the drawn index expressions are held against PyTorch, forward and backward.
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
def test_basic_indices(device, data):
    """Ints (negative too), slices (any step), None and ... (torch has no negative steps: NumPy is the oracle)."""
    x = data.draw(S.floats(S.shapes()))
    index = data.draw(hnp.basic_indices(x.shape, allow_newaxis=True, allow_ellipsis=True))
    check_op(lambda t: t[index], lambda a: a[index], [x], device)


@op_settings
@given(data=st.data())
def test_several_basic_indices_of_one_tensor_add_their_gradients(device, data):
    """q, k, v = qkv[0], qkv[1], qkv[2], overlapping slices, single elements: the second slice on adds its gradient
    straight into the input's gradient so far (a SliceGradient, core/gradients.py); the sum must be every slice's."""
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    indices = data.draw(st.lists(hnp.basic_indices(x.shape, allow_newaxis=True, allow_ellipsis=True), min_size=2,
                                 max_size=4))
    rng = np.random.default_rng(0)
    weights = [rng.standard_normal(np.shape(x[index])).astype(x.dtype) for index in indices]
    t = mg.tensor(x, requires_grad=True, device=device)
    total = (t * 0.5).sum()  # one more use of t, whose gradient comes first
    for index, w in zip(indices, weights):
        total = total + (t[index] * mg.tensor(w, device=device)).sum()
    total.backward()
    expected = np.full(x.shape, 0.5, dtype=x.dtype)
    for index, w in zip(indices, weights):
        expected[index] += w
    np.testing.assert_allclose(t.grad.numpy(), expected, rtol=1e-5, atol=1e-6)


@op_settings
@given(data=st.data())
def test_one_integer_array_per_dim(device, data):
    """Repeats included: a repeated element's gradient accumulates."""
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    index = data.draw(hnp.integer_array_indices(x.shape, result_shape=S.shapes(max_dims=2)))
    check_op(lambda t: t[index], lambda a: a[index], [x], device,
             torch_fn=lambda t: t[tuple(torch.tensor(i) for i in index)])


@pytest.mark.parametrize("index", [[0, 0, 2], (0, 0, 2), np.array([0, 0, 2]), "tensor"],
                         ids=["list", "tuple", "ndarray", "tensor"])
def test_a_repeated_index_accumulates_the_gradient(device, index):
    if isinstance(index, str):
        index = mg.tensor([0, 0, 2], device=device)
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    x[index,].sum().backward()
    assert x.grad.numpy().tolist() == [2.0, 0.0, 1.0]  # x[0] was used twice


def test_a_tuple_inside_an_index_is_an_integer_array():
    """Defect: a tuple inside an index was taken for basic indexing in backward, so x[:, (1, 1)] gave its
    repeated column a gradient of 1 instead of 2 (PyTorch: 2)."""
    x = mg.ones(2, 3, requires_grad=True)
    x[:, (1, 1)].sum().backward()
    assert x.grad.numpy().tolist() == [[0, 2, 0], [0, 2, 0]]
    y = mg.ones(3, requires_grad=True)
    y[((0, 0),)].sum().backward()
    assert y.grad.numpy().tolist() == [2, 0, 0]


def test_an_int_beside_an_integer_array_selects_first_as_in_pytorch():
    """NumPy puts the advanced dims first: x[0, :, [1, 2]] on (3, 4, 5) is (2, 4) there, (4, 2) in PyTorch."""
    x = mg.arange(60.0).reshape(3, 4, 5)
    picked = x[0, :, [1, 2]]
    assert picked.shape == (4, 2)
    np.testing.assert_array_equal(picked.numpy(), x.numpy()[0][:, [1, 2]])
    assert x[0, 1:3, [0, 1]].numpy().tolist() == [[5, 6], [10, 11]]  # same shape either way, other values
    assert x[mg.tensor(0), :, [1, 2]].shape == (4, 2)  # a 0-d integer tensor is an int, as in PyTorch


def test_masks_lists_and_empty_indices():
    x = mg.arange(12.0).reshape(3, 4)
    assert x[[True, False, True]].shape == (2, 4)
    assert x[x > 5].tolist() == [6, 7, 8, 9, 10, 11]
    assert x[np.array([True, False, True]), 1:].shape == (2, 3)
    assert x[[]].shape == (0, 4)


@pytest.mark.parametrize("index, message", [
    ([[0, 1], [1, 2]], "a list holding lists.*is ambiguous"),
    (1.5, "float is not a valid index"),
    (mg.tensor([0.5]), "must be integer or bool, not float32"),
    (np.array([0, 1], dtype=np.uint8), "uint8 index is a mask in PyTorch"),
])
def test_bad_indices_are_named(index, message):
    with pytest.raises(IndexError, match=message):
        mg.ones(3, 3)[index]


@st.composite
def index_expressions(draw, shape: tuple[int, ...]):
    """An index for an array of `shape`, as a PyTorch user writes one: per dim an int, a slice (step >= 1),
    an integer list, tuple, array or tensor (repeats likely) or a bool mask; None and ... sprinkled in.

    All integer arrays of one expression share a shape (so that they broadcast); a mask stands alone.
    """
    array_shape = draw(st.sampled_from([(1,), (2,), (3,), (2, 2)]))
    parts, seen, dim = [], set(), 0
    while dim < len(shape) and draw(st.integers(0, 4)):  # sometimes stop early: the rest is taken whole
        kind = draw(st.sampled_from(["int", "slice", "array", "mask", "None", "..."]))
        side = shape[dim]
        if kind == "None":
            parts.append(None)
            continue
        if kind == "..." and kind not in seen:
            parts.append(Ellipsis)
            dim += draw(st.integers(0, len(shape) - dim))  # the dims it stands for
        elif kind == "int":
            parts.append(draw(st.integers(-side, side - 1)))
            dim += 1
        elif kind == "slice":
            ends = st.none() | st.integers(-3, 3)
            parts.append(slice(draw(ends), draw(ends), draw(st.none() | st.integers(1, 2))))
            dim += 1
        elif kind == "array" and "mask" not in seen:
            ids = draw(hnp.arrays(np.int64, array_shape, elements=st.integers(-side, side - 1)))
            form = draw(st.sampled_from(["list", "tuple", "ndarray", "tensor"]))
            if form == "list":
                parts.append(ids.tolist())
            elif form == "tuple" and ids.ndim == 1:
                parts.append(tuple(ids.tolist()))
            else:
                parts.append(mg.tensor(ids) if form == "tensor" else ids)
            dim += 1
        elif kind == "mask" and not seen & {"array", "mask"}:
            parts.append(draw(hnp.arrays(np.bool_, side)))
            dim += 1
        seen.add(kind)
    return tuple(parts)


def torch_index(index: tuple) -> tuple:
    """The same index for a torch tensor: arrays and tensors become torch tensors; lists and tuples stay."""
    return tuple(torch.tensor(np.asarray(p)) if isinstance(p, (np.ndarray, mg.Tensor)) else p for p in index)


@pytest.mark.torch
@op_settings
@given(data=st.data())
def test_drawn_index_expressions_match_pytorch(device, data):
    pytest.importorskip("torch")
    x = data.draw(S.floats(S.shapes(min_dims=1, max_dims=3)))
    index = data.draw(index_expressions(x.shape))
    check_op(lambda t: t[index], lambda a: torch.tensor(a)[torch_index(index)].numpy(), [x], device,
             torch_fn=lambda t: t[torch_index(index)])


@op_settings
@given(data=st.data())
def test_gather(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    index_shape = tuple(data.draw(st.integers(1, 3)) if d == dim % x.ndim else data.draw(st.integers(1, n))
                        for d, n in enumerate(x.shape))
    index = data.draw(S.integer_ids(index_shape, x.shape[dim]))
    where = [index if d == dim % x.ndim else np.arange(n).reshape([-1 if e == d else 1 for e in range(x.ndim)])
             for d, n in enumerate(index_shape)]
    check_op(lambda t: t.gather(dim, index), lambda a: a[tuple(where)], [x], device,
             torch_fn=lambda t: t.gather(dim, torch.tensor(index)))


def test_gather_checks_the_index_shape():
    x = mg.ones(2, 3)
    with pytest.raises(mg.ShapeError, match=r"gather: index \(2,\) needs as many dims as the input \(2, 3\)"):
        x.gather(1, [0, 1])
    with pytest.raises(mg.ShapeError, match=r"larger than the input \(2, 3\) at dim 0"):
        x.gather(1, np.zeros((3, 1), dtype=np.int64))
