"""The torch.* functions a script reaches for that were only methods (`torch.tril`, `torch.sort`, `torch.einsum`,
...), and the selection, sorting and scattering ops behind them: each held against NumPy, finite differences
and PyTorch (`check_op`: values, shapes, dtypes, gradients) on every device, with hypothesis drawing the inputs.

What is not differentiable (indices, comparisons, whole-tensor answers, tensors made from arrays) is compared with
PyTorch in test_torch_tensor_methods.py, with the Tensor methods and gradient hooks.
Read next: test_torch_tensor_methods.py.
"""

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from minigrad.testing import strategies as S

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is the oracle here")


def dim_of(data, x):
    return data.draw(st.integers(-x.ndim, x.ndim - 1))


def sort_along(a, dim, descending):
    """NumPy's stable sort along dim, descending as PyTorch orders it."""
    order = np.argsort(-a if descending else a, axis=dim, kind="stable")
    return np.take_along_axis(a, order, axis=dim)


@op_settings
@given(data=st.data(), descending=st.booleans())
def test_sort_values_and_their_gradient(device, data, descending):
    x = data.draw(S.distinct_floats(data.draw(S.shapes(min_dims=1))))
    dim = dim_of(data, x)
    check_op(lambda t: mg.sort(t, dim, descending).values, lambda a: sort_along(a, dim, descending), [x], device,
             torch_fn=lambda t: torch.sort(t, dim, descending).values)
    check_op(lambda t: t.sort(dim=dim, descending=descending)[0] * t, lambda a: sort_along(a, dim, descending) * a,
             [x], device)


@op_settings
@given(data=st.data(), largest=st.booleans())
def test_topk_values_and_their_gradient(device, data, largest):
    x = data.draw(S.distinct_floats(data.draw(S.shapes(min_dims=1))))
    dim = dim_of(data, x)
    k = data.draw(st.integers(0, x.shape[dim]))
    picked = lambda a: np.take(sort_along(a, dim, largest), np.arange(k), axis=dim)
    check_op(lambda t: mg.topk(t, k, dim, largest).values, picked, [x], device,
             torch_fn=lambda t: torch.topk(t, k, dim, largest).values)


@op_settings
@given(data=st.data())
def test_scatter_writes_src_and_differentiates_both(device, data):
    x = data.draw(S.floats(data.draw(S.shapes(min_dims=1))))
    dim = data.draw(st.integers(0, x.ndim - 1))
    size = data.draw(st.integers(1, x.shape[dim]))
    order = np.argsort(data.draw(S.distinct_floats(x.shape)), axis=dim)
    index = np.take(order, np.arange(size), axis=dim)  # no position twice: every written value counts

    def expected(a, s):
        y = a.copy()
        np.put_along_axis(y, index, s, axis=dim)
        return y
    src = data.draw(S.floats(index.shape))
    check_op(lambda t, s: mg.scatter(t, dim, index, s), expected, [x, src], device,
             torch_fn=lambda t, s: torch.scatter(t, dim, torch.tensor(index), s))
    value = data.draw(st.floats(-2, 2))
    check_op(lambda t: t.scatter(dim, index, value=value), lambda a: expected(a, value), [x], device,
             torch_fn=lambda t: t.scatter(dim, torch.tensor(index), value))
    check_op(lambda t, s: t.clone().scatter_(dim, index, s), expected, [x, src], device,  # in place, as PyTorch
             torch_fn=lambda t, s: t.clone().scatter_(dim, torch.tensor(index), s))


@op_settings
@given(data=st.data())
def test_scatter_add_adds_repeated_positions(device, data):
    x = data.draw(S.floats(data.draw(S.shapes(min_dims=1))))
    dim = data.draw(st.integers(0, x.ndim - 1))
    shape = tuple(data.draw(st.integers(1, n)) for n in x.shape)
    index = data.draw(S.integer_ids(shape, x.shape[dim]))  # repeats are likely: they must add up
    src = data.draw(S.floats(shape))

    def expected(a, s):
        y = a.copy()
        where = tuple(index if d == dim else np.arange(n).reshape([-1 if e == d else 1 for e in range(len(shape))])
                      for d, n in enumerate(shape))
        np.add.at(y, where, s)
        return y
    check_op(lambda t, s: mg.scatter_add(t, dim, index, s), expected, [x, src], device,
             torch_fn=lambda t, s: torch.scatter_add(t, dim, torch.tensor(index), s))
    check_op(lambda t, s: t.clone().scatter_add_(dim, index, s), expected, [x, src], device,
             torch_fn=lambda t, s: t.clone().scatter_add_(dim, torch.tensor(index), s))


@op_settings
@given(data=st.data())
def test_index_select_gather_unbind_roll(device, data):
    x = data.draw(S.floats(data.draw(S.shapes(min_dims=1))))
    dim = dim_of(data, x)
    index = data.draw(S.integer_ids((data.draw(st.integers(0, 4)),), x.shape[dim]))
    check_op(lambda t: mg.index_select(t, dim, index), lambda a: np.take(a, index, axis=dim), [x], device,
             torch_fn=lambda t: torch.index_select(t, dim, torch.tensor(index)))
    gather_index = data.draw(S.integer_ids(x.shape, x.shape[dim]))
    check_op(lambda t: mg.gather(t, dim, gather_index), lambda a: np.take_along_axis(a, gather_index, dim), [x],
             device, torch_fn=lambda t: torch.gather(t, dim, torch.tensor(gather_index)))
    weights = np.arange(1.0, x.shape[dim] + 1)  # each slice scaled differently, so a swap would show
    check_op(lambda t: sum(w * s for w, s in zip(weights, mg.unbind(t, dim))),
             lambda a: sum(w * s for w, s in zip(weights, np.moveaxis(a, dim, 0))), [x], device,
             torch_fn=lambda t: sum(w * s for w, s in zip(weights, torch.unbind(t, dim))))
    shift = data.draw(st.integers(-5, 5))
    check_op(lambda t: mg.roll(t, shift, dim), lambda a: np.roll(a, shift, dim), [x], device,
             torch_fn=lambda t: torch.roll(t, shift, dim))
    check_op(lambda t: mg.roll(t, shift), lambda a: np.roll(a, shift), [x], device,
             torch_fn=lambda t: torch.roll(t, shift))


@op_settings
@given(data=st.data())
def test_shape_functions(device, data):
    x = data.draw(S.floats(data.draw(S.shapes(min_dims=2))))
    k = data.draw(st.integers(-2, 2))
    check_op(lambda t: mg.tril(t, k), lambda a: np.tril(a, k), [x], device, torch_fn=lambda t: torch.tril(t, k))
    check_op(lambda t: mg.triu(t, k), lambda a: np.triu(a, k), [x], device, torch_fn=lambda t: torch.triu(t, k))
    check_op(lambda t: mg.flatten(t, 1), lambda a: a.reshape(a.shape[0], -1), [x], device,
             torch_fn=lambda t: torch.flatten(t, 1))
    check_op(lambda t: mg.flip(t, (0, -1)), lambda a: np.flip(a, (0, -1)), [x], device,
             torch_fn=lambda t: torch.flip(t, (0, -1)))
    # the pieces weighted by their position, so that a piece out of place would show
    pieces = lambda lib, t: sum((p * (i + 1)).sum() for i, p in enumerate(lib.chunk(t, 2, 1) + lib.split(t, 1, 0)))
    if torch is not None:
        check_op(lambda t: pieces(mg, t), lambda a: pieces(torch, torch.tensor(a)).numpy(), [x], device)


@op_settings
@given(data=st.data())
def test_diag_both_ways(device, data):
    k = data.draw(st.integers(-3, 3))
    v = data.draw(S.floats((data.draw(st.integers(0, 4)),)))
    check_op(lambda t: mg.diag(t, k), lambda a: np.diag(a, k), [v], device, torch_fn=lambda t: torch.diag(t, k))
    m = data.draw(S.floats(data.draw(S.shapes(min_dims=2, max_dims=2))))
    check_op(lambda t: t.diag(k), lambda a: np.diag(a, k), [m], device, torch_fn=lambda t: torch.diag(t, k))


@op_settings
@given(data=st.data())
def test_cumprod(device, data):
    x = data.draw(S.floats(data.draw(S.shapes(min_dims=1))))
    dim = dim_of(data, x)
    check_op(lambda t: mg.cumprod(t, dim), lambda a: np.cumprod(a, dim), [x], device,
             torch_fn=lambda t: torch.cumprod(t, dim))


@needs_torch
def test_cumprod_at_zeros_equals_pytorch(device):
    """The recurrence never divides: one zero, two zeros, a zero first or last all get PyTorch's gradient."""
    for values in ([2.0, 0.0, 3.0, 4.0], [0.0, 2.0, 0.0, 5.0], [3.0, 2.0, 1.5, 0.0], [0.0, 0.0, 0.0]):
        x = mg.tensor(values, dtype="float64", device=device, requires_grad=True)
        t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
        upstream = np.linspace(1.0, 2.0, len(values))
        mg.cumprod(x, 0).backward(upstream)
        torch.cumprod(t, 0).backward(torch.tensor(upstream))
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12, err_msg=str(values))
    ints = mg.tensor([1, 2, 3], dtype="int32")
    assert mg.cumprod(ints, 0).dtype == np.int64 and torch.cumprod(torch.tensor([1, 2]), 0).dtype == torch.int64


EQUATIONS = {  # the contractions a transformer writes, and a few more
    "bij,bjk->bik": ("bij", "bjk"), "bhqd,bhkd->bhqk": ("bhqd", "bhkd"), "...ij->...ji": ("...ij",),
    "ij,jk": ("ij", "jk"), "i,j->ij": ("i", "j"), "ij->": ("ij",), "bij->bj": ("bij",), "ij,ij->i": ("ij", "ij"),
}


@op_settings
@given(data=st.data(), equation=st.sampled_from(sorted(EQUATIONS)))
def test_einsum(device, data, equation):
    sizes = {c: data.draw(st.integers(1, 3)) for c in "bhijkqd"}
    batch = data.draw(S.shapes(max_dims=2))
    arrays = [data.draw(S.floats((batch if "..." in sub else ()) + tuple(sizes[c] for c in sub.strip("."))))
              for sub in EQUATIONS[equation]]
    check_op(lambda *ts: mg.einsum(equation, *ts), lambda *a: np.einsum(equation, *a), arrays, device,
             torch_fn=lambda *ts: torch.einsum(equation, *ts))


@pytest.mark.skipif(torch is None, reason="PyTorch is the oracle here")
@pytest.mark.parametrize("equation, shapes", [
    ("...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),  # batch dims that broadcast: their gradients are summed back
    ("bij,bjk", [(2, 3, 4), (2, 4, 5)]),  # no output given: b is summed, as in torch
    ("b h q d, b h k d -> b h q k", [(1, 2, 3, 4), (1, 2, 5, 4)]),  # spaces are ignored
])
def test_einsum_broadcasts_and_reads_equations_as_pytorch(device, equation, shapes):
    arrays = [np.random.default_rng(i).standard_normal(shape) for i, shape in enumerate(shapes)]
    check_op(lambda *ts: mg.einsum(equation, *ts), lambda *a: np.einsum(equation.replace(" ", ""), *a), arrays,
             device, torch_fn=lambda *ts: torch.einsum(equation, *ts))


def test_einsum_refuses_what_it_does_not_cover_and_says_so():
    with pytest.raises(NotImplementedError, match="each letter"):
        mg.einsum("ii->i", mg.ones(2, 2))
    with pytest.raises(ValueError, match="names 2 operands, 1 given"):
        mg.einsum("ij,jk->ik", mg.ones(2, 2))
    with pytest.raises(RuntimeError, match="one dtype"):
        mg.einsum("ij,jk->ik", mg.ones(2, 2), mg.ones(2, 2, dtype="float64"))
    assert mg.einsum("ij,jk->ik", [mg.ones(2, 3), mg.ones(3, 1)]).shape == (2, 1)  # a list, as torch takes


@op_settings
@given(data=st.data())
def test_matmul_bmm_dot_outer(device, data):
    b, n, m, p = (data.draw(st.integers(1, 3)) for _ in range(4))
    x, y = data.draw(S.floats((b, n, m))), data.draw(S.floats((b, m, p)))
    check_op(mg.bmm, np.matmul, [x, y], device, torch_fn=torch.bmm if torch else None)
    check_op(mg.matmul, np.matmul, [x, y[0]], device, torch_fn=torch.matmul if torch else None)
    u, v = data.draw(S.floats((m,))), data.draw(S.floats((m,)))
    check_op(mg.dot, np.dot, [u, v], device, torch_fn=torch.dot if torch else None)
    w = data.draw(S.floats((n,)))
    check_op(mg.outer, np.outer, [u, w], device, torch_fn=torch.outer if torch else None)


def test_products_refuse_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="3-D"):
        mg.bmm(mg.ones(2, 2), mg.ones(2, 2))
    with pytest.raises(RuntimeError, match="batch sizes"):
        mg.bmm(mg.ones(2, 2, 2), mg.ones(3, 2, 2))
    with pytest.raises(RuntimeError, match="sizes differ"):
        mg.dot(mg.ones(2), mg.ones(3))
    with pytest.raises(RuntimeError, match="1-D"):
        mg.outer(mg.ones(2, 2), mg.ones(2))
    assert mg.outer(mg.tensor([1, 2]), mg.tensor([1.0, 2.0])).dtype == np.float32  # promoted, as torch does


@op_settings
@given(data=st.data())
def test_elementwise_and_reductions_as_functions(device, data):
    """The torch.* spellings that were already there, through mg.*: clamp/clip, where, maximum/minimum, amax,
    amin, logsumexp, norm, cumsum."""
    x = data.draw(S.distinct_floats((2, 3)))  # a grid of step 0.125 or 0.25, jittered by at most 0.05
    y = x[::-1, ::-1] + 0.1  # never equal to x, nor any value to a bound below: no ties, where gradients split
    cond = x > y
    check_op(lambda t: mg.clamp(t, -0.4, 0.6), lambda a: np.clip(a, -0.4, 0.6), [x], device)
    check_op(lambda t: mg.clip(t, max=0.2), lambda a: np.minimum(a, 0.2), [x], device)
    check_op(lambda a, b: mg.where(mg.tensor(cond), a, b), lambda a, b: np.where(cond, a, b), [x, y], device)
    check_op(mg.maximum, np.maximum, [x, y], device)
    check_op(mg.minimum, np.minimum, [x, y], device)
    check_op(lambda t: mg.amax(t, 1), lambda a: a.max(1), [x], device)
    check_op(lambda t: mg.amin(t, 0), lambda a: a.min(0), [x], device)
    check_op(lambda t: mg.logsumexp(t, 1), lambda a: np.log(np.exp(a).sum(1)), [x], device)
    check_op(lambda t: mg.norm(t), lambda a: np.sqrt((a * a).sum()), [x], device)
    check_op(lambda t: mg.cumsum(t, 1), lambda a: np.cumsum(a, 1), [x], device)
