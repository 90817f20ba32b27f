"""Writing into tensors as PyTorch does: `x[index] = value` and in-place arithmetic (`+=`, `mul_`, `exp_`, ...),
plain on tensors that need no gradient, recorded as ops inside a graph, with PyTorch's version-counter errors.
Every case runs the same lines under PyTorch (the oracle) and minigrad and compares values and gradients.

Read next: test_tensor_protocol.py.
"""

import numpy as np
import pytest
from helpers import check_op, op_settings
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg

torch = pytest.importorskip("torch")

INDICES = [
    (1,), (slice(None), 2), (Ellipsis, 0), (None, 1), ([0, 2],), (slice(None), [1, 3]), (1, [0, 2]),
    (np.array([True, False, True]),), (slice(0, 2), slice(1, 3)),
]


def write(lib, x, index, value):
    """x[index] = value in `lib`'s terms; an index array becomes a tensor of that library."""
    index = tuple(lib.tensor(part) if isinstance(part, (list, np.ndarray)) else part for part in index)
    x[index] = value
    return x


@pytest.mark.parametrize("index", INDICES, ids=str)
def test_setitem_without_grad_matches_torch(index):
    base = np.arange(12, dtype=np.float32).reshape(3, 4)
    for value in (7.5, -1, "tensor"):
        expected = write(torch, torch.tensor(base), index, torch.tensor(-2.0) if value == "tensor" else value)
        x = mg.tensor(base)
        alias = x
        got = write(mg, x, index, mg.tensor(-2.0) if value == "tensor" else value)
        assert got is alias and x._version == 1  # in place: the same tensor, one version on
        np.testing.assert_array_equal(x.numpy(), expected.numpy())


def test_setitem_broadcasts_and_converts_like_torch():
    ids = mg.zeros(2, 3, dtype=mg.long)
    ids[:, 1:] = mg.tensor([2.7, 3.2])  # a float row broadcast over the rows, truncated into int64
    expected = torch.zeros(2, 3, dtype=torch.long)
    expected[:, 1:] = torch.tensor([2.7, 3.2])
    assert ids.tolist() == expected.tolist() and ids.dtype == mg.long
    losses = mg.zeros(3)
    for k in range(3):
        losses[k] = mg.tensor(float(k), requires_grad=True).item()  # estimate_loss's idiom
    assert losses.tolist() == [0.0, 1.0, 2.0] and losses.grad_fn is None


@pytest.mark.parametrize("index", INDICES, ids=str)
def test_setitem_in_a_graph_matches_torch(index):
    """Gradient to the untouched part of x (zero where written) and to the value (summed to its shape)."""
    rng = np.random.default_rng(0)
    base, value, seed = rng.normal(size=(3, 4)), rng.normal(size=(1,)), rng.normal(size=(3, 4))
    results = []
    for lib in (torch, mg):
        x = lib.tensor(base, dtype=lib.float64, requires_grad=True)
        v = lib.tensor(value, dtype=lib.float64, requires_grad=True)
        y = x * 2  # a non-leaf
        write(lib, y, index, v * 3)
        (y * lib.tensor(seed, dtype=lib.float64)).sum().backward()
        results.append((y.detach().numpy(), x.grad.numpy(), v.grad.numpy()))
    for got, expected in zip(results[1], results[0]):
        np.testing.assert_allclose(got, expected, rtol=1e-12)


def test_setitem_of_a_tensor_that_requires_grad_into_a_plain_one():
    """out = zeros; out[t] = f(x): out joins the graph, as in PyTorch."""
    grads = []
    for lib in (torch, mg):
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        out = lib.zeros(3, 2)
        for t in range(3):
            out[t] = x[t] * lib.tensor([1.0, -1.0])
        assert out.grad_fn is not None and not out.is_leaf
        (out**2).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0])


def test_a_leaf_that_requires_grad_refuses_writes_with_torchs_words():
    message = "a leaf Variable that requires grad is being used in an in-place operation."
    for lib in (torch, mg):
        w = lib.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match=message):
            w[0] = 2.0
        with pytest.raises(RuntimeError, match=message):
            w.mul_(2)
        with lib.no_grad():
            w[0] = 5.0  # allowed under no_grad, as in PyTorch
        assert w.tolist() == [5.0, 1.0, 1.0]


@op_settings
@given(data=st.data())
def test_setitem_gradcheck(device, data):
    rows = data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=3, unique=True))
    cols = data.draw(st.sampled_from([slice(None), slice(1, 3), 0]))

    def write_into(x, v):
        y = x * 1.0
        y[rows, cols] = v
        return y * x

    def numpy_twin(x, v):
        y = x.copy()
        y[rows, cols] = v
        return y * x

    shape = np.zeros((3, 4))[rows, cols].shape[1:]
    arrays = [data.draw(st.just(np.random.default_rng(len(rows)).normal(size=(3, 4)))),
              np.random.default_rng(1).normal(size=shape)]
    check_op(write_into, numpy_twin, arrays, device, torch_fn=write_into)


def run_in_place_program(lib, program):
    x = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
    w = lib.tensor([1.5, 2.0, -0.5], dtype=lib.float64, requires_grad=True)
    loss = program(lib, x, w)
    loss.backward()
    return loss.item(), x.grad.numpy(), w.grad.numpy()


def add_then_reuse(lib, x, w):
    a = x * 2
    b = a + 1  # Add saved nothing: a may change in place afterwards
    a.mul_(w)  # ... and b's gradient still reaches x through the a it saw
    return (b * 3).sum() + (a**2).sum()


def chain_of_updates(lib, x, w):
    h = x * w
    h += x
    h.clamp_(min=-0.5, max=1.5)
    h -= 0.25
    h /= w
    h.masked_fill_(lib.tensor([True, False, False]), 0.0)
    h.exp_()  # last: exp_ saves its output, and PyTorch refuses a later in-place update of it at backward
    return h.sum()


def accumulate_into_zeros(lib, x, w):
    acc = lib.zeros(3, dtype=lib.float64)
    acc += x * w  # a plain tensor joins the graph
    acc.add_(x, alpha=2)
    acc.relu_()
    return (acc * acc).sum()


@pytest.mark.parametrize("program", [add_then_reuse, chain_of_updates, accumulate_into_zeros])
def test_in_place_arithmetic_in_a_graph_matches_torch(program):
    expected, got = run_in_place_program(torch, program), run_in_place_program(mg, program)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def saved_input_changed(lib, x, w):
    a = x * 2
    b = a * w  # Mul saved a
    a.add_(1)
    return b.sum()


def saved_output_changed(lib, x, w):
    a = (x * 2).exp()  # Exp saved its output
    a.add_(1)

    return a.sum()


@pytest.mark.parametrize("program, what, versions", [
    (saved_input_changed, r"input 0 of Mul \(shape minigrad\.Size\(\[3\]\)\)", "is at version 1; expected version 0"),
    (saved_output_changed, "output 0 of Exp", "is at version 1; expected version 0"),
])
def test_backward_refuses_a_saved_tensor_changed_in_place(program, what, versions):
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="one of the variables needed for gradient computation has been "
                                               "modified by an inplace operation"):
            run_in_place_program(lib, program)
    with pytest.raises(RuntimeError, match=f"{what} {versions}"):
        run_in_place_program(mg, program)


def test_in_place_in_a_graph_is_refused_on_a_view_made_outside_the_graph():
    """A view of a detached tensor written with a value that requires grad: minigrad cannot record what it
    changes in the tensor it views (the updates through views it records: test_inplace_views.py)."""
    y = mg.ones(2, 3, requires_grad=True) * 2
    with pytest.raises(RuntimeError, match="shares its memory with another"):
        y.detach()[0].add_(mg.ones(3, requires_grad=True))
