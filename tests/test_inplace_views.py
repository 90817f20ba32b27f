"""In-place updates through views in a recorded graph (tensor/versions.py's bases_of_view, update_base), each
program run under PyTorch and minigrad and compared: values, the base's values, and every gradient. The first is
the English d2l textbook's masked_softmax, which every one of its attention models runs: a masked write into a
reshaped view of the attention scores."""

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch


def masked_softmax(torch, X, valid_lens):
    """d2l's masked_softmax (chapter attention-scoring-functions), as the book writes it."""

    def _sequence_mask(X, valid_len, value=0):
        maxlen = X.size(1)
        mask = torch.arange((maxlen), dtype=torch.float32, device=X.device)[None, :] < valid_len[:, None]
        X[~mask] = value
        return X

    if valid_lens is None:
        return torch.nn.functional.softmax(X, dim=-1)
    shape = X.shape
    if valid_lens.dim() == 1:
        valid_lens = torch.repeat_interleave(valid_lens, shape[1])
    else:
        valid_lens = valid_lens.reshape(-1)
    X = _sequence_mask(X.reshape(-1, shape[-1]), valid_lens, value=-1e6)
    return torch.nn.functional.softmax(X.reshape(shape), dim=-1)


def d2l_attention(lib, a, w):
    scores = lib.bmm(a, a.transpose(1, 2)) / 2.0  # (B, T, T), in the graph
    p = masked_softmax(lib, scores, lib.tensor([2, 3]))
    return p, (p * w).sum()


def reshape_write_then_read_the_base(lib, a, w):
    base = a * 1.0
    v = base.reshape(-1)
    v[1:4] = 0.0
    return base, (base * w).sum()


def slice_of_a_transpose_twice(lib, a, w):
    base = a * 2.0
    t = base.transpose(1, 2)
    t[0] *= 3  # a view of a view: t[0] is a slice of t, itself a permute of base
    t[:, 1] = t[:, 0] + 1  # a second update through t, whose value reads t
    return base, (base * w).sum() + (t * t).sum()


def base_changed_before_the_first_view_write(lib, a, w):
    base = a + 0.5
    row = base[1]  # made before the base changes: PyTorch replays it on the base as it is at the write
    base.mul_(2)
    row.masked_fill_(row > 1, -1.0)
    return base, (base * w).sum()


def base_changed_between_two_view_writes(lib, a, w):
    base = a * 3.0
    flat = base.reshape(-1)
    flat[0] = 1.0
    base.add_(w)  # the view now shows the changed base: its second write reads those values, as PyTorch replays it
    flat[1:3] = flat[4:6] * 2
    return base, (base * w).sum() + (flat * flat).sum()


def retained_gradient_of_the_base(lib, a, w):
    scores = a * 2.0
    scores.retain_grad()
    p = masked_softmax(lib, scores, lib.tensor([1, 2]))
    (p * w).sum().backward(retain_graph=True)
    return scores.grad.clone(), (p * w).sum()


PROGRAMS = [d2l_attention, reshape_write_then_read_the_base, slice_of_a_transpose_twice,
            base_changed_before_the_first_view_write, base_changed_between_two_view_writes,
            retained_gradient_of_the_base]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__)
def test_an_update_through_a_view_gives_pytorchs_values_and_gradients(program):
    rng = np.random.default_rng(0)
    a_np, w_np = rng.normal(size=(2, 3, 3)).astype(np.float32), rng.normal(size=(2, 3, 3)).astype(np.float32)
    found = []
    for lib in (torch, mg):
        a = lib.tensor(a_np, requires_grad=True)
        out, loss = program(lib, a, lib.tensor(w_np))
        loss.backward()
        found.append((out.detach().numpy(), loss.item(), a.grad.numpy()))
    (out, loss, grad), (our_out, our_loss, our_grad) = found
    np.testing.assert_allclose(our_out, out, rtol=1e-5, atol=1e-6)
    assert our_loss == pytest.approx(loss, rel=1e-5)
    np.testing.assert_allclose(our_grad, grad, rtol=1e-5, atol=1e-6)


def test_the_masked_scores_get_no_gradient():
    a = mg.randn(2, 3, 3, requires_grad=True)
    scores = mg.bmm(a, a.transpose(1, 2))
    scores.retain_grad()
    masked_softmax(mg, scores, mg.tensor([2, 3]))[0].sum().backward()
    assert np.all(scores.grad.numpy()[0, :, 2] == 0)  # the third key is masked for the first sequence
    assert np.any(scores.grad.numpy()[0, :, :2] != 0)


def test_a_saved_base_changed_through_a_view_is_refused_as_pytorch_refuses_it():
    for lib in (torch, mg):
        a = lib.ones(2, 2, requires_grad=True)
        base = a.exp()  # exp saves its output for backward
        base.reshape(-1)[0] = 5.0
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            base.sum().backward()


def test_a_view_of_a_leaf_that_requires_grad_is_refused_as_in_pytorch():
    for lib in (torch, mg):
        with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
            lib.ones(2, 3, requires_grad=True).reshape(-1)[0] = 2.0


def test_a_view_made_outside_the_graph_is_refused_in_one_line():
    y = mg.ones(2, 3, requires_grad=True) * 2
    v = y.detach().reshape(-1)  # no op records that v views y's memory
    with pytest.raises(RuntimeError) as error:
        v[1] = mg.tensor(3.0, requires_grad=True)
    assert "shares its memory with another" in str(error.value) and "\n" not in str(error.value)


def test_repeated_updates_through_views_of_an_ops_scratch_memory_as_pytorch():
    """A Linear's output is itself a view of the op's own array: updates through a view of it, twice, and through
    a view of a view, each recorded (the walk up the views stops at the tensor it belongs to)."""
    found = []
    for lib in (torch, mg):
        lib.manual_seed(0)
        w = lib.tensor(np.arange(12, dtype=np.float32).reshape(4, 3) / 10, requires_grad=True)
        x = lib.tensor(np.ones((2, 3, 3), dtype=np.float32))
        out = x @ w.T  # (2, 3, 4)
        flat = out.reshape(-1, 4)
        flat[0] = 1.0
        flat[1:3] *= 2
        flat.t()[0] += 5
        (out * out).sum().backward()
        found.append((out.detach().numpy(), w.grad.numpy()))
    np.testing.assert_allclose(found[1][0], found[0][0], rtol=1e-6)
    np.testing.assert_allclose(found[1][1], found[0][1], rtol=1e-6)
