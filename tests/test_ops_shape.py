"""Shape ops, with PyTorch's meanings: reshape and view (with -1), permute, transpose (two dims), .T and .mT,
squeeze and unsqueeze, flatten and unflatten, expand, repeat, flip, split and chunk, tril and triu, clone,
concat (cat) and stack.

Their backward only moves gradients around, except where one element went to several places (expand,
repeat): then its gradients add up. Each op is held against NumPy, finite differences and PyTorch
(`check_op`), on every device. Indexing has its own file, test_indexing.py.
Read next: test_indexing.py.
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
def test_permute(device, data):
    x = data.draw(S.floats(S.shapes()))
    dims = data.draw(st.permutations(range(x.ndim)))
    dims = [d - x.ndim if data.draw(st.booleans()) else d for d in dims]  # negative dims count from the end
    check_op(lambda t: t.permute(*dims), lambda a: a.transpose(dims), [x], device,
             torch_fn=lambda t: t.permute(tuple(dims)))
    check_op(lambda t: t.permute(tuple(dims)), lambda a: a.transpose(dims), [x], device)


@op_settings
@given(data=st.data())
def test_transpose_swaps_two_dims(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    dim0, dim1 = (data.draw(st.integers(-x.ndim, x.ndim - 1)) for _ in range(2))
    fn = lambda t: t.transpose(dim0, dim1)
    check_op(fn, lambda a: np.swapaxes(a, dim0, dim1), [x], device, torch_fn=fn)
    check_op(lambda t: t.swapaxes(dim0, dim1), lambda a: np.swapaxes(a, dim0, dim1), [x], device)
    check_op(lambda t: t.swapdims(dim0, dim1), lambda a: np.swapaxes(a, dim0, dim1), [x], device)


def test_transpose_means_what_it_means_in_pytorch():
    """NumPy's meaning (transpose(1, 0) on a 2-d array, no-op reorders) was a silent difference."""
    x = mg.ones(2, 3)
    assert x.transpose(0, 1).shape == (3, 2)
    assert mg.ones(2, 3, 4).transpose(0, 2).shape == (4, 3, 2)
    with pytest.raises(TypeError, match=r"transpose\(dim0, dim1\) swaps two dims.*permute"):
        mg.ones(2, 3, 4).transpose(2, 0, 1)
    with pytest.raises(IndexError, match=r"transpose: dim 2 is out of range for a tensor with 2 dims"):
        x.transpose(0, 2)


@op_settings
@given(x=S.floats(S.shapes(min_dims=2, max_dims=2)))
def test_T_transposes_a_matrix(device, x):
    check_op(lambda t: t.T, lambda a: a.T, [x], device, torch_fn=lambda t: t.T)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3, 4)])
def test_T_on_other_ranks_reverses_the_dims_with_pytorchs_deprecation_warning(shape):
    with pytest.warns(UserWarning, match="deprecated"):
        assert mg.randn(*shape).T.shape == shape[::-1]


@op_settings
@given(x=S.floats(S.shapes(min_dims=2)))
def test_mT_transposes_each_matrix_of_a_batch(device, x):
    check_op(lambda t: t.mT, lambda a: np.swapaxes(a, -1, -2), [x], device, torch_fn=lambda t: t.mT)


def test_mT_needs_a_matrix():
    with pytest.raises(RuntimeError, match="mT: only matrices"):
        _ = mg.ones(3).mT


@st.composite
def dims_of(draw, ndim: int, allow_none: bool = True):
    """None, one dim or a tuple of distinct dims of an `ndim`-d tensor (negative ones too)."""
    if ndim == 0:
        return None
    return draw(S.axes(ndim, allow_none=allow_none))


def np_squeeze(a, dim):
    dims = range(a.ndim) if dim is None else [d % a.ndim for d in np.atleast_1d(dim)]
    return a.reshape([n for i, n in enumerate(a.shape) if not (i in dims and n == 1)])


@op_settings
@given(data=st.data())
def test_squeeze_and_unsqueeze(device, data):
    x = data.draw(S.floats(S.shapes(max_side=2)))  # sides of 1 are likely
    dim = data.draw(dims_of(x.ndim))
    check_op(lambda t: t.squeeze(dim), lambda a: np_squeeze(a, dim), [x], device,
             torch_fn=lambda t: t.squeeze() if dim is None else t.squeeze(dim))
    new = data.draw(st.integers(-x.ndim - 1, x.ndim))
    fn = lambda t: t.unsqueeze(new)
    check_op(fn, lambda a: np.expand_dims(a, new), [x], device, torch_fn=fn)


@op_settings
@given(data=st.data())
def test_flatten_and_unflatten(device, data):
    x = data.draw(S.floats(S.shapes()))
    n = max(x.ndim, 1)
    start = data.draw(st.integers(-n, n - 1))
    end = data.draw(st.integers(start % n, n - 1)) - (n if data.draw(st.booleans()) else 0)
    flat_shape = x.shape[:start % n] + (-1,) + x.shape[end % n + 1:] if x.ndim else (1,)
    fn = lambda t: t.flatten(start, end)
    check_op(fn, lambda a: a.reshape(flat_shape), [x], device, torch_fn=fn)
    if x.ndim:
        dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
        side = x.shape[dim]
        first = data.draw(st.sampled_from([k for k in range(1, side + 1) if side % k == 0]))
        sizes = (first, -1) if data.draw(st.booleans()) else (first, side // first)
        new_shape = x.shape[:dim % x.ndim] + (first, side // first) + x.shape[dim % x.ndim + 1:]
        fn = lambda t: t.unflatten(dim, sizes)
        check_op(fn, lambda a: a.reshape(new_shape), [x], device, torch_fn=fn)


def test_unflatten_names_sizes_that_do_not_fit():
    with pytest.raises(mg.ShapeError, match=r"unflatten: sizes \(2, 4\) do not multiply up to 6"):
        mg.ones(6).unflatten(0, (2, 4))


@op_settings
@given(x=S.floats(S.shapes(min_dims=1)))
def test_view_is_reshape(device, x):
    check_op(lambda t: t.view(-1), lambda a: a.reshape(-1), [x], device, torch_fn=lambda t: t.view(-1))


def test_view_with_a_dtype_is_refused_clearly():
    with pytest.raises(TypeError, match=r"view\('int32'\): reinterpreting the bytes .* use \.to\(dtype\)"):
        mg.ones(2).view("int32")


@st.composite
def expansions(draw):
    """An array and the sizes to expand it to: new leading dims, size-1 dims stretched, -1 kept."""
    x = draw(S.floats(S.shapes(max_dims=3, max_side=2)))
    leading = [draw(st.integers(1, 2)) for _ in range(draw(st.integers(0, 1)))]
    sizes = [draw(st.sampled_from([-1, n] + ([2, 3] if n == 1 else []))) for n in x.shape]
    return x, leading + sizes


@op_settings
@given(drawn=expansions())
def test_expand(device, drawn):
    x, sizes = drawn
    lead = len(sizes) - x.ndim
    shape = [n if n != -1 else x.shape[i - lead] for i, n in enumerate(sizes)]
    check_op(lambda t: t.expand(*sizes), lambda a: np.broadcast_to(a, shape), [x], device,
             torch_fn=lambda t: t.expand(tuple(sizes)))


def test_expand_names_a_size_it_cannot_stretch():
    with pytest.raises(mg.ShapeError, match=r"expand: size 3 at dim 0 must match the existing size 2"):
        mg.ones(2, 3).expand(3, 3)
    with pytest.raises(mg.ShapeError, match="size -1 is not allowed for the new leading dim 0"):
        mg.ones(2, 3).expand(-1, 2, 3)


@op_settings
@given(data=st.data())
def test_repeat(device, data):
    x = data.draw(S.floats(S.shapes(max_dims=3, max_side=2)))
    repeats = [data.draw(st.integers(1, 3)) for _ in range(x.ndim + data.draw(st.integers(0, 1)))]
    check_op(lambda t: t.repeat(*repeats), lambda a: np.tile(a, repeats), [x], device,
             torch_fn=lambda t: t.repeat(tuple(repeats)))


def test_repeat_zero_times_gives_an_empty_tensor_and_a_zero_gradient():
    x = mg.ones(2, requires_grad=True)
    y = x.repeat(2, 0)
    assert y.shape == (2, 0)
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0]


def test_repeat_needs_a_repeat_per_dim():
    with pytest.raises(mg.ShapeError, match="repeat: 1 repeats given for a tensor with 2 dims"):
        mg.ones(2, 3).repeat(2)


@op_settings
@given(data=st.data())
def test_flip(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    dims = data.draw(hnp.valid_tuple_axes(x.ndim, min_size=1))
    fn = lambda t: t.flip(dims)
    check_op(fn, lambda a: np.flip(a, axis=dims), [x], device, torch_fn=fn)


def np_split(a, sizes, dim):
    """The pieces of `a` along `dim`, of the sizes listed."""
    bounds = np.cumsum([0] + list(sizes))
    return [np.take(a, np.arange(lo, hi), axis=dim) for lo, hi in zip(bounds[:-1], bounds[1:])]


def weighted_join(pieces, dim, join):
    """Piece i times (i + 1), joined again: every piece's gradient differs, so a mixed-up piece shows."""
    return join([p * (i + 1) for i, p in enumerate(pieces)], dim)


@op_settings
@given(data=st.data())
def test_split_and_chunk(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    n = x.shape[dim]
    size = data.draw(st.integers(1, n + 1))
    sizes = [min(size, n - start) for start in range(0, n, size)]
    np_join = lambda pieces, d: np.concatenate(pieces, axis=d)
    torch_join = lambda pieces, d: torch.cat(pieces, d)
    check_op(lambda t: weighted_join(t.split(size, dim), dim, mg.cat),
             lambda a: weighted_join(np_split(a, sizes, dim), dim, np_join), [x], device,
             torch_fn=lambda t: weighted_join(t.split(size, dim), dim, torch_join))
    sections = data.draw(st.lists(st.integers(0, n), min_size=1, max_size=3).filter(lambda s: sum(s) <= n))
    sections = sections + [n - sum(sections)]
    check_op(lambda t: weighted_join(t.split(sections, dim), dim, mg.cat),
             lambda a: weighted_join(np_split(a, sections, dim), dim, np_join), [x], device,
             torch_fn=lambda t: weighted_join(t.split(sections, dim), dim, torch_join))
    chunks = data.draw(st.integers(1, 4))
    step = -(-n // chunks)
    check_op(lambda t: weighted_join(t.chunk(chunks, dim), dim, mg.cat),
             lambda a: weighted_join(np_split(a, [min(step, n - s) for s in range(0, n, step)], dim), dim, np_join),
             [x], device, torch_fn=lambda t: weighted_join(t.chunk(chunks, dim), dim, torch_join))


def test_split_and_chunk_give_pytorchs_pieces():
    x = mg.arange(5)
    assert [p.tolist() for p in x.split(2)] == [[0, 1], [2, 3], [4]]
    assert [p.tolist() for p in x.split([1, 4])] == [[0], [1, 2, 3, 4]]
    assert [p.tolist() for p in mg.arange(6).chunk(4)] == [[0, 1], [2, 3], [4, 5]]  # fewer than asked, as torch
    with pytest.raises(mg.ShapeError, match=r"split: sizes \[1, 3\] do not add up to 5"):
        x.split([1, 3])


@op_settings
@given(data=st.data())
def test_tril_and_triu(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=2)))
    k = data.draw(st.integers(-3, 3))
    check_op(lambda t: t.tril(k), lambda a: np.tril(a, k), [x], device, torch_fn=lambda t: t.tril(k))
    check_op(lambda t: t.triu(k), lambda a: np.triu(a, k), [x], device, torch_fn=lambda t: t.triu(k))


def test_tril_needs_a_matrix():
    with pytest.raises(RuntimeError, match="tril: the input must have at least 2 dims, not 1"):
        mg.ones(3).tril()


@op_settings
@given(x=S.floats(S.shapes()))
def test_clone_copies_and_passes_the_gradient(device, x):
    check_op(lambda t: t.clone(), np.copy, [x], device, torch_fn=lambda t: t.clone())
    t = mg.tensor(x, device=device)
    assert t.clone().array is not t.array and t.contiguous() is t


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


def test_cat_is_concat_and_dim_is_axis(device):
    a, b = mg.ones(2, 1, device=device), mg.zeros(2, 2, device=device)
    assert mg.cat is mg.concat
    assert mg.cat([a, b], dim=1).shape == mg.concat([a, b], axis=1).shape == (2, 3)
    assert mg.stack([a, a], dim=-1).shape == (2, 1, 2)


def test_cat_refuses_0d_tensors_and_a_dim_out_of_range_naming_itself(device):
    """They used to fail with a bare 'tuple index out of range' from inside the op."""
    x = mg.ones(2, 3, device=device)
    with pytest.raises(RuntimeError, match="cat: 0-d tensors cannot be concatenated"):
        mg.cat([mg.tensor(1.0, device=device), mg.tensor(2.0, device=device)])
    for dim in (2, -3):
        with pytest.raises(IndexError, match=f"cat: dim {dim} is out of range for tensors with 2 dims"):
            mg.cat([x, x], dim=dim)
    assert mg.cat([x, x], dim=-2).shape == (4, 3)


@pytest.mark.parametrize("join", [mg.concat, mg.stack])
def test_joining_mixed_dtypes_promotes_as_pytorch(join):
    """torch.cat([int64, float32]) is float32; NumPy's concatenate would give float64."""
    assert join([mg.arange(2), mg.ones(2)]).dtype == np.float32
    assert join([mg.ones(2, dtype="float16"), mg.ones(2)]).dtype == np.float32
