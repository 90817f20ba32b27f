"""Losses: cross_entropy (class weights, ignore_index, label smoothing, the three reductions, PyTorch's layouts),
nll_loss, mse_loss, binary_cross_entropy (with logits), and their helpers one_hot and normalize; the loss modules.

Read next: test_fused.py.
"""

from functools import partial

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from minigrad.testing import strategies as S


def np_log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def np_cross_entropy(logits, targets, weight=None, reduction="mean", label_smoothing=0.0):
    """PyTorch's definition, written out: classes on dim 1, -100 ignored."""
    num_classes = logits.shape[1]
    z = np.moveaxis(logits, 1, -1).reshape(-1, num_classes)
    t = targets.reshape(-1)
    counted = t != -100
    t = np.where(counted, t, 0)
    w = np.ones(num_classes) if weight is None else weight
    log_probs = np_log_softmax(z, -1)
    losses = -((1 - label_smoothing) * w[t] * log_probs[np.arange(len(t)), t]
               + label_smoothing / num_classes * (log_probs * w).sum(-1)) * counted
    if reduction == "none":
        return losses.reshape(targets.shape)
    return losses.sum() / (w[t] * counted).sum() if reduction == "mean" else losses.sum()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@op_settings
@given(drawn=S.logits_and_targets(), weighted=st.booleans(), smoothing=st.sampled_from([0.0, 0.1, 1.0]))
def test_cross_entropy(device, reduction, drawn, weighted, smoothing):
    logits, targets = drawn
    weight = np.linspace(0.5, 2.0, logits.shape[1]) if weighted else None
    mg_weight = None if weight is None else mg.tensor(weight, dtype="float64", device=device)
    check_op(lambda z: F.cross_entropy(z, targets, mg_weight, reduction=reduction, label_smoothing=smoothing),
             lambda z: np_cross_entropy(z, targets, weight, reduction, smoothing), [logits], device,
             torch_fn=lambda z: torch.nn.functional.cross_entropy(
                 z, torch.tensor(targets), None if weight is None else torch.tensor(weight),
                 reduction=reduction, label_smoothing=smoothing))


def test_cross_entropy_takes_targets_as_a_tensor_and_one_unbatched_sample(device):
    logits = mg.tensor([[0.0, 0.0], [0.0, 0.0]], device=device)
    assert F.cross_entropy(logits, mg.tensor([0, 1], device=device)).item() == pytest.approx(np.log(2))
    assert F.cross_entropy(mg.zeros(3, device=device), mg.tensor(1, device=device)).item() == pytest.approx(np.log(3))


def test_cross_entropy_over_no_counted_target_is_nan_as_in_pytorch(device):
    """A mean over zero rows is 0/0: nan (it used to be -0.0). The sum is 0, and 'none' is empty."""
    empty = mg.zeros(0, 3, requires_grad=True, device=device)
    loss = F.cross_entropy(empty, np.zeros(0, dtype=np.int64))
    assert np.isnan(loss.item())
    loss.backward()
    assert empty.grad.shape == (0, 3)
    assert F.cross_entropy(empty, np.zeros(0, dtype=np.int64), reduction="sum").item() == 0.0
    assert F.cross_entropy(empty, np.zeros(0, dtype=np.int64), reduction="none").shape == (0,)
    assert np.isnan(F.cross_entropy(mg.zeros(2, 3, device=device), np.full(2, -100)).item())
    if torch is not None:
        assert torch.nn.functional.cross_entropy(torch.zeros(0, 3), torch.zeros(0, dtype=torch.long)).isnan()


@pytest.mark.parametrize("loss", [F.cross_entropy, F.nll_loss, partial(F.cross_entropy, label_smoothing=0.2)])
def test_an_ignored_row_has_gradient_zero_even_when_every_row_is_ignored(device, loss):
    """The mean over no counted row is nan, but the ignored rows' gradient is 0, as in PyTorch (it was nan)."""
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True, device=device)
    y = loss(x, np.full(3, -100))
    assert np.isnan(y.item())
    y.backward()
    assert x.grad.numpy().tolist() == [[0.0] * 4] * 3
    if torch is not None:
        t = torch.tensor(x.numpy(), requires_grad=True)
        loss_name = "nll_loss" if loss is F.nll_loss else "cross_entropy"
        options = loss.keywords if isinstance(loss, partial) else {}
        getattr(torch.nn.functional, loss_name)(t, torch.full((3,), -100), **options).backward()
        assert t.grad.tolist() == x.grad.numpy().tolist()


def test_cross_entropy_default_ignore_index_is_minus_100(device):
    logits = mg.tensor([[0.0, 5.0], [3.0, 0.0]], device=device)
    assert F.cross_entropy(logits, np.array([1, -100])).item() == F.cross_entropy(logits[:1], np.array([1])).item()
    with pytest.raises(IndexError, match="target -1 is out of range"):
        F.cross_entropy(logits, np.array([1, -1]))  # -1 is a class id unless ignore_index says otherwise
    assert F.cross_entropy(logits, np.array([1, -1]), ignore_index=-1).item() == pytest.approx(
        F.cross_entropy(logits[:1], np.array([1])).item())


def test_cross_entropy_arguments_are_checked(device):
    logits = mg.zeros(2, 3, device=device)
    with pytest.raises(ValueError, match="cross_entropy: reduction must be 'mean', 'sum' or 'none', not 'avg'"):
        F.cross_entropy(logits, np.array([0, 1]), reduction="avg")
    with pytest.raises(ValueError, match="label_smoothing must be in"):
        F.cross_entropy(logits, np.array([0, 1]), label_smoothing=1.5)
    with pytest.raises(TypeError, match="class-probability targets are not supported"):
        F.cross_entropy(logits, np.zeros((2, 3)))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@op_settings
@given(drawn=S.logits_and_targets(), weighted=st.booleans())
def test_nll_loss(device, reduction, drawn, weighted):
    log_probs, targets = drawn
    weight = np.linspace(0.5, 2.0, log_probs.shape[1]) if weighted else None
    mg_weight = None if weight is None else mg.tensor(weight, dtype="float64", device=device)

    def np_nll(x):  # nll_loss(x) is cross_entropy of logits whose log_softmax is x: check it directly
        xs, t = np.moveaxis(x, 1, -1).reshape(-1, x.shape[1]), targets.reshape(-1)
        counted = t != -100
        t = np.where(counted, t, 0)
        w = (np.ones(x.shape[1]) if weight is None else weight)[t] * counted
        losses = -w * xs[np.arange(len(t)), t]
        return {"none": losses.reshape(targets.shape), "sum": losses.sum(), "mean": losses.sum() / w.sum()}[reduction]

    check_op(lambda x: F.nll_loss(x, targets, mg_weight, reduction=reduction), np_nll, [log_probs], device,
             torch_fn=lambda x: torch.nn.functional.nll_loss(
                 x, torch.tensor(targets), None if weight is None else torch.tensor(weight), reduction=reduction))


def test_cross_entropy_is_nll_loss_of_log_softmax(device):
    logits = mg.randn(4, 5, 2, dtype="float64", device=device)
    targets = np.array([[0, 1], [4, -100], [2, 2], [3, 0]])
    np.testing.assert_allclose(F.cross_entropy(logits, targets).item(),
                               F.nll_loss(F.log_softmax(logits, dim=1), targets).item(), rtol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@op_settings
@given(data=st.data())
def test_mse_loss(device, reduction, data):
    shape = data.draw(S.shapes())
    x, y = data.draw(S.floats(shape)), data.draw(S.floats(shape))
    np_fn = {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[reduction]
    check_op(lambda a, b: F.mse_loss(a, b, reduction=reduction), lambda a, b: np_fn((a - b) ** 2), [x, y], device,
             torch_fn=lambda a, b: torch.nn.functional.mse_loss(a, b, reduction=reduction))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@op_settings
@given(data=st.data(), weighted=st.booleans())
def test_binary_cross_entropy(device, reduction, data, weighted):
    shape = data.draw(S.shapes())
    p, t = data.draw(S.floats(shape, 0.05, 0.95)), data.draw(S.floats(shape, 0.0, 1.0))
    w = np.linspace(0.5, 1.5, p.size).reshape(shape) if weighted else None
    np_fn = {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[reduction]
    check_op(lambda a, b: F.binary_cross_entropy(a, b, w, reduction=reduction),
             lambda a, b: np_fn(-(b * np.log(a) + (1 - b) * np.log(1 - a)) * (1 if w is None else w)), [p, t], device,
             torch_fn=lambda a, b: torch.nn.functional.binary_cross_entropy(
                 a, b, None if w is None else torch.tensor(w), reduction=reduction))


def test_binary_cross_entropy_clamps_its_logs_at_minus_100_as_pytorch(device):
    p = mg.tensor([0.0, 1.0, 0.5], requires_grad=True, device=device)
    loss = F.binary_cross_entropy(p, mg.tensor([1.0, 0.0, 1.0], device=device), reduction="none")
    np.testing.assert_allclose(loss.numpy(), [100.0, 100.0, np.log(2)], rtol=1e-6)
    loss.sum().backward()
    assert np.isfinite(p.grad.numpy()).all()  # (x - t) / max(x (1 - x), 1e-12), as PyTorch
    with pytest.raises(RuntimeError, match="binary_cross_entropy: every input must be a probability"):
        F.binary_cross_entropy(mg.tensor([2.0], device=device), mg.tensor([1.0], device=device))


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@op_settings
@given(data=st.data(), weighted=st.booleans(), pos_weighted=st.booleans())
def test_binary_cross_entropy_with_logits(device, reduction, data, weighted, pos_weighted):
    shape = data.draw(S.shapes(min_dims=1))
    x, t = data.draw(S.floats(shape)), data.draw(S.floats(shape, 0.0, 1.0))
    w = np.linspace(0.5, 1.5, x.size).reshape(shape) if weighted else None
    pw = np.linspace(0.2, 3.0, shape[-1]) if pos_weighted else None
    np_fn = {"mean": np.mean, "sum": np.sum, "none": lambda a: a}[reduction]

    def np_bce(a, b):
        log_sig, log_1m_sig = -np.logaddexp(0, -a), -np.logaddexp(0, a)
        positive = b * log_sig * (1 if pw is None else pw)
        return np_fn(-(positive + (1 - b) * log_1m_sig) * (1 if w is None else w))

    check_op(lambda a, b: F.binary_cross_entropy_with_logits(a, b, w, reduction=reduction, pos_weight=pw),
             np_bce, [x, t], device,
             torch_fn=lambda a, b: torch.nn.functional.binary_cross_entropy_with_logits(
                 a, b, None if w is None else torch.tensor(w), reduction=reduction,
                 pos_weight=None if pw is None else torch.tensor(pw)))


def test_binary_cross_entropy_with_logits_is_stable_far_out(device):
    x = mg.tensor([-200.0, 200.0, 0.0], requires_grad=True, device=device)
    loss = F.binary_cross_entropy_with_logits(x, mg.tensor([1.0, 0.0, 1.0], device=device), reduction="none")
    np.testing.assert_allclose(loss.numpy(), [200.0, 200.0, np.log(2)], rtol=1e-6)
    loss.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [-1.0, 1.0, -0.5])  # sigmoid(x) - t


def test_one_hot(device):
    ids = mg.tensor([[0, 2], [1, 0]], device=device)
    y = F.one_hot(ids)
    assert y.dtype == np.int64 and y.shape == (2, 2, 3) and y.device == device
    np.testing.assert_array_equal(y.numpy(), np.eye(3, dtype=np.int64)[[[0, 2], [1, 0]]])
    assert F.one_hot(np.array([1]), num_classes=4).numpy().tolist() == [[0, 1, 0, 0]]
    with pytest.raises(IndexError, match=r"one_hot: class id 5 is out of range; valid class ids are 0\.\.3"):
        F.one_hot(np.array([0, 5]), 4)
    with pytest.raises(TypeError, match="one_hot: the input must be integer class ids"):
        F.one_hot(np.array([0.0]), 4)


@op_settings
@given(data=st.data())
def test_normalize(device, data):
    x = data.draw(S.floats(data.draw(S.shapes(min_dims=2)), avoid=(0,)))
    check_op(lambda t: F.normalize(t), lambda a: a / np.sqrt((a * a).sum(1, keepdims=True)), [x], device,
             torch_fn=lambda t: torch.nn.functional.normalize(t))
    check_op(lambda t: F.normalize(t, p=1, dim=-1), lambda a: a / np.abs(a).sum(-1, keepdims=True), [x], device,
             torch_fn=lambda t: torch.nn.functional.normalize(t, p=1, dim=-1))


def test_normalize_leaves_a_zero_vector_zero(device):
    x = mg.tensor([[0.0, 0.0], [3.0, 4.0]], requires_grad=True, device=device)
    y = F.normalize(x)
    np.testing.assert_allclose(y.numpy(), [[0.0, 0.0], [0.6, 0.8]])
    y.sum().backward()
    assert np.isfinite(x.grad.numpy()).all()


def test_loss_modules():
    logits, targets = mg.randn(4, 3), np.array([0, 2, 1, -100])
    weight = mg.tensor([1.0, 2.0, 0.5])
    module = nn.CrossEntropyLoss(weight=weight, label_smoothing=0.1, reduction="sum")
    assert module(logits, targets).item() == F.cross_entropy(logits, targets, weight, reduction="sum",
                                                             label_smoothing=0.1).item()
    assert "weight" in module.state_dict() and list(module.parameters()) == []
    assert nn.MSELoss()(logits, logits * 2).item() == pytest.approx((logits.numpy() ** 2).mean())
    log_probs = F.log_softmax(logits, dim=1)
    nll = nn.NLLLoss(weight, ignore_index=2, reduction="sum")
    kept = np.array([0, 2, 1, 1])  # class 2 ignored
    assert nll(log_probs, kept).item() == F.nll_loss(log_probs, kept, weight, ignore_index=2, reduction="sum").item()
    assert nll(log_probs, kept).item() != nn.NLLLoss(weight, reduction="sum")(log_probs, kept).item()
    assert nn.NLLLoss()(log_probs, targets).item() == pytest.approx(F.cross_entropy(logits, targets).item())
    # PyTorch's second and third positional slots are the deprecated size_average and reduce: refused, not misread
    for positional in (lambda: nn.CrossEntropyLoss(None, 0), lambda: nn.NLLLoss(None, 0), lambda: nn.MSELoss("sum")):
        with pytest.raises(TypeError, match="positional"):
            positional()
