"""The Tensor methods and torch.* functions that give indices, booleans, Python values or new tensors, held against
PyTorch: sort/argsort/topk indices (and their order for ties), comparisons (eq ... ge), all/any, where, isclose,
allclose, equal, numel/nelement/size/dim/element_size, new_zeros/new_ones/new_full/new_tensor/new_empty,
from_numpy/as_tensor/is_tensor/empty, cpu()/cuda(); and gradient hooks (register_hook, retain_grad).
Read next: test_torch_functions.py for the differentiable ones.
"""

import numpy as np
import pytest
from helpers import op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from minigrad.testing import strategies as S

pytestmark = pytest.mark.skipif(torch is None, reason="PyTorch is the oracle here")


def same(ours, theirs):
    """Equal values, shape and dtype (by name: float32, int64, bool)."""
    assert ours.shape == tuple(theirs.shape), (ours.shape, theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch."), (ours.dtype, theirs.dtype)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


@op_settings
@given(data=st.data(), descending=st.booleans())
def test_sort_and_argsort_indices_equal_pytorchs_also_with_ties(device, data, descending):
    """PyTorch's CPU sort is stable (ties keep their order, both ways): so is ours. Small integers tie often."""
    a = data.draw(S.integer_ids(data.draw(S.shapes(min_dims=1)), 3)).astype(np.float32)
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    x, t = mg.tensor(a, device=device), torch.tensor(a)
    values, indices = x.sort(dim, descending=descending)
    same(values, torch.sort(t, dim=dim, descending=descending, stable=True).values)
    same(indices, torch.sort(t, dim=dim, descending=descending, stable=True).indices)
    same(mg.argsort(x, dim, descending), torch.argsort(t, dim=dim, descending=descending, stable=True))
    same(x.long().sort(dim).values, t.long().sort(dim).values)  # integers keep their dtype


def test_sort_puts_nan_last_ascending_and_first_descending_as_pytorch():
    a = np.array([1.0, np.nan, 3.0, -1.0], dtype=np.float32)
    for descending in (False, True):
        ours, theirs = mg.tensor(a).sort(descending=descending), torch.tensor(a).sort(descending=descending)
        np.testing.assert_array_equal(ours.values.numpy(), theirs.values.numpy())
        same(ours.indices, theirs.indices)
    assert mg.tensor(3.0).sort().values.shape == () and mg.tensor(3.0).topk(1).indices.item() == 0


@op_settings
@given(data=st.data(), largest=st.booleans())
def test_topk_values_and_indices(device, data, largest):
    """Distinct values: PyTorch's indices. With ties the values are PyTorch's and the indices name elements of those
    values; among equal elements ours come in their order in the input (PyTorch leaves that order open)."""
    a = data.draw(S.distinct_floats(data.draw(S.shapes(min_dims=1)))).astype(np.float32)
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    k = data.draw(st.integers(0, a.shape[dim]))
    ours, theirs = mg.topk(mg.tensor(a, device=device), k, dim, largest), torch.topk(torch.tensor(a), k, dim, largest)
    same(ours.values, theirs.values)
    same(ours.indices, theirs.indices)
    tied = np.array([1.0, 3.0, 3.0, 2.0, 3.0, 1.0], dtype=np.float32)
    ours, theirs = mg.tensor(tied).topk(3), torch.tensor(tied).topk(3)
    same(ours.values, theirs.values)
    assert ours.indices.tolist() == [1, 2, 4]  # first seen, first listed
    assert sorted(ours.indices.tolist()) == sorted(theirs.indices.tolist())


def test_a_0d_scatter_index_writes_one_position_with_pytorchs_gradients():
    grads = []
    for lib in (mg, torch):
        src = lib.tensor(7.0, requires_grad=True)
        base = lib.tensor([1.0, 2.0, 3.0, 4.0], requires_grad=True)
        out = base.clone().scatter_(0, lib.tensor(2), src)  # index and src both 0-d, as PyTorch allows
        assert out.tolist() == [1.0, 2.0, 7.0, 4.0]
        (out * lib.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
        grads.append((base.grad.tolist(), src.grad.item()))
    assert grads[0] == grads[1] == ([1.0, 2.0, 0.0, 4.0], 3.0)


def test_topk_and_scatter_refuse_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="out of range"):
        mg.ones(3).topk(4)
    with pytest.raises(IndexError, match="out of range"):
        mg.zeros(3).scatter(0, mg.tensor([3]), mg.ones(1))
    with pytest.raises(RuntimeError, match="dtype"):
        mg.zeros(3).scatter(0, mg.tensor([1]), mg.ones(1, dtype="float64"))
    with pytest.raises(NotImplementedError, match="scatter_add"):
        mg.zeros(3).scatter(0, mg.tensor([1]), mg.ones(1), reduce="add")
    with pytest.raises(NotImplementedError, match="scatter_add"):
        mg.zeros(3).scatter_(0, mg.tensor([1]), mg.ones(1), reduce="add")
    with pytest.raises(mg.ShapeError, match="as many dims"):  # a 0-d index is one position only in a 1-D input
        mg.zeros(2, 3).scatter(0, mg.tensor(1), value=1.0)
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        torch.zeros(2, 3).scatter(0, torch.tensor(1), value=1.0)
    with pytest.raises(IndexError, match="vector"):
        mg.zeros(3).index_select(0, mg.tensor([[1]]))
    with pytest.raises(RuntimeError, match="1 or 2 dims"):
        mg.zeros(2, 2, 2).diag()


@op_settings
@given(data=st.data())
def test_comparisons_all_any_where(device, data):
    a = data.draw(S.integer_ids(data.draw(S.shapes(min_dims=1)), 3)).astype(np.float32)
    b = data.draw(S.integer_ids(a.shape, 3)).astype(np.float32)
    x, y, s, u = mg.tensor(a, device=device), mg.tensor(b, device=device), torch.tensor(a), torch.tensor(b)
    for name in ("eq", "ne", "lt", "le", "gt", "ge"):
        same(getattr(x, name)(y), getattr(s, name)(u))
        same(getattr(x, name)(1.0), getattr(s, name)(1.0))
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    for name in ("all", "any"):
        same(getattr(x, name)(), getattr(s, name)())
        same(getattr(x, name)(dim), getattr(s, name)(dim))
        same(getattr(x, name)(dim=dim, keepdim=True), getattr(s, name)(dim=dim, keepdim=True))
    same(x.where(x > y, y), s.where(s > u, u))
    same(x.where(x > 1, 0.5), s.where(s > 1, 0.5))


def test_isclose_allclose_equal():
    a, b = np.array([1.0, 2.0, np.nan, np.inf]), np.array([1.0 + 1e-9, 2.1, np.nan, np.inf])
    for kwargs in ({}, {"equal_nan": True}, {"rtol": 0.1}, {"atol": 0.2, "rtol": 0.0}):
        same(mg.isclose(mg.tensor(a), mg.tensor(b), **kwargs), torch.isclose(torch.tensor(a), torch.tensor(b),
                                                                              **kwargs))
        assert mg.allclose(mg.tensor(a), mg.tensor(b), **kwargs) == torch.allclose(torch.tensor(a), torch.tensor(b),
                                                                                   **kwargs)
    with pytest.raises(RuntimeError, match="dtype"):
        mg.isclose(mg.tensor([1.0]), mg.tensor([1.0], dtype="float64"))
    for p, q in (([1, 2], [1, 2]), ([1, 2], [1.0, 2.0]), ([1, 2], [[1, 2]]), ([1, 2], [1, 3])):
        assert mg.equal(mg.tensor(p), mg.tensor(q)) == torch.equal(torch.tensor(p), torch.tensor(q)), (p, q)


def test_sizes_counts_and_leaves():
    x, t = mg.zeros(2, 3, 4), torch.zeros(2, 3, 4)
    assert (x.size(), x.size(-1), x.shape[-1], x.dim(), x.numel(), x.nelement(), mg.numel(x)) == (
        tuple(t.size()), t.size(-1), t.shape[-1], t.dim(), t.numel(), t.nelement(), torch.numel(t))
    assert [mg.zeros(1, dtype=d).element_size() for d in ("float16", "float32", "float64", "int64", "bool")] == [
        torch.zeros(1, dtype=d).element_size() for d in (torch.float16, torch.float32, torch.float64, torch.int64,
                                                        torch.bool)]
    w = mg.ones(2, requires_grad=True)
    assert w.is_leaf and not (w * 2).is_leaf and mg.ones(2).is_leaf  # as torch: a tensor outside the graph is a leaf
    with pytest.raises(IndexError):
        x.size(3)


def test_new_tensors_take_the_dtype_and_device_of_the_tensor():
    for dtype, torch_dtype in (("float64", torch.float64), ("int32", torch.int32)):
        x, t = mg.ones(2, dtype=dtype), torch.ones(2, dtype=torch_dtype)
        same(x.new_zeros(2, 3), t.new_zeros(2, 3))
        same(x.new_ones((3,)), t.new_ones((3,)))
        same(x.new_full((2,), 7), t.new_full((2,), 7))
        same(x.new_tensor([1, 2]), t.new_tensor([1, 2]))
        assert x.new_empty(2, 2).shape == (2, 2) and x.new_empty(2).dtype == x.dtype
        same(x.new_zeros(2, dtype=mg.float32), t.new_zeros(2, dtype=torch.float32))  # a dtype given wins
    assert mg.ones(2).new_ones(2, requires_grad=True).requires_grad


def test_tensors_from_arrays():
    a = np.arange(3.0)
    x = mg.from_numpy(a)
    same(x, torch.from_numpy(a))  # float64 stays float64
    assert mg.is_tensor(x) and not mg.is_tensor(a)
    a[0] = 5.0  # from_numpy shares the array's memory, as in PyTorch
    assert x[0].item() == 5.0
    with pytest.raises(TypeError, match="numpy.ndarray"):
        mg.from_numpy([1.0])
    same(mg.as_tensor(a), torch.as_tensor(a))
    assert mg.as_tensor(a).array is a
    assert mg.as_tensor(a, dtype="float32").dtype == np.float32 and mg.as_tensor(a, dtype="float32").array is not a
    assert mg.as_tensor([1.0, 2.0]).dtype == np.float32 and mg.as_tensor(x) is x
    assert mg.empty(2, 3).shape == (2, 3) and mg.empty(2, 3).dtype == np.float32
    assert mg.empty((2,), dtype=mg.int64).dtype == np.int64


def test_cpu_and_cuda():
    x = mg.ones(2)
    assert x.cpu() is x and x.cpu().device == "cpu"
    if not mg.cuda.is_available():
        with pytest.raises(Exception, match="(?i)cupy|cuda|gpu"):
            x.cuda()


def test_register_hook_sees_and_replaces_gradients_as_pytorch():
    def run(lib):
        seen = []
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 3
        y.register_hook(lambda g: seen.append(g.tolist()))  # returns None: only looks
        handle = y.register_hook(lambda g: g * 2)  # replaces: x's gradient doubles
        y.retain_grad()
        x.register_hook(lambda g: g + 1)  # on a leaf: before .grad
        (y * y).sum().backward()
        first = (x.grad.tolist(), y.grad.tolist())
        handle.remove()
        x.grad = None
        y2 = x * 3
        y2.sum().backward()
        return seen, first, x.grad.tolist()
    assert run(mg) == run(torch)


def test_hooks_fire_in_mg_grad_and_with_create_graph():
    x = mg.tensor([1.0, 2.0], dtype="float64", requires_grad=True)
    t = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    y, u = x * x, t * t
    y.register_hook(lambda g: g * 10)
    u.register_hook(lambda g: g * 10)
    (gx,) = mg.grad(y.sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad(u.sum(), t, create_graph=True)
    np.testing.assert_allclose(gx.numpy(), gt.detach().numpy())
    (ggx,) = mg.grad(gx.sum(), x)
    (ggt,) = torch.autograd.grad(gt.sum(), t)
    np.testing.assert_allclose(ggx.numpy(), ggt.numpy())


def test_a_kept_gradient_is_never_changed_by_later_accumulation():
    """A hook that stores the gradient it is shown: a later backward adds into .grad, never into what it stored."""
    stored = []
    w = mg.ones(2, requires_grad=True)
    w.register_hook(lambda g: stored.append(g))
    (w * 2).sum().backward()
    (w * 2).sum().backward()
    assert [g.tolist() for g in stored] == [[2.0, 2.0], [2.0, 2.0]] and w.grad.tolist() == [4.0, 4.0]


def test_hook_errors_are_clear():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.ones(2).register_hook(lambda g: g)
    x = mg.ones(2, requires_grad=True)
    x.register_hook(lambda g: g.sum())
    with pytest.raises(RuntimeError, match="shape"):
        (x * 2).sum().backward()
