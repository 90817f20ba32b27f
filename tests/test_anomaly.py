"""mg.detect_anomaly(): the first NaN or inf, forward or backward, names the op, its inputs and the user's line."""

import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad.core import autograd
from minigrad.tools.anomaly import AnomalyError


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():  # NumPy warns about log(-1) and 1/0; here that is the point
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def test_nan_in_forward_names_the_op_shapes_and_line(device):
    x = mg.tensor([1.0, -1.0, 2.0], requires_grad=True, device=device)
    with pytest.raises(AnomalyError) as info, mg.detect_anomaly():
        y = x * 2
        y.log()  # the culprit
    message = str(info.value)
    assert "Log produced nan in its forward" in message
    assert "(3,) float32" in message
    assert "test_anomaly.py" in message and "in test_nan_in_forward_names_the_op_shapes_and_line" in message
    assert "y.log()  # the culprit" in message
    assert isinstance(info.value, RuntimeError)


def test_nan_in_backward_names_the_op_and_where_it_was_made(device):
    x = mg.tensor([0.0, 4.0], requires_grad=True, device=device)
    with mg.detect_anomaly():
        loss = x.sqrt().sum()  # sqrt is fine at 0, its derivative 1 / (2 sqrt(x)) is not
        with pytest.raises(AnomalyError) as info:
            loss.backward()
    message = str(info.value)
    assert "Sqrt produced inf in the gradient of its input 0 during backward" in message
    assert "(2,) float32" in message
    assert "loss = x.sqrt().sum()" in message


def test_inf_created_in_forward(device):
    x = mg.tensor([0.0, 1.0], device=device)
    with mg.detect_anomaly(), pytest.raises(AnomalyError, match="Log produced inf"):
        x.log()
    with mg.detect_anomaly(), pytest.raises(AnomalyError, match="Exp produced inf"):
        (x * 1000).exp()


def test_intended_infinities_pass(device):
    """An attention mask writes -inf on purpose, and an inf that comes in may flow through; neither is an anomaly."""
    scores = mg.randn(3, 3, requires_grad=True, device=device)
    mask = np.triu(np.ones((3, 3), dtype=bool), k=1)
    with mg.detect_anomaly():
        masked = scores.masked_fill(mask, float("-inf"))
        shifted = masked + 1.0  # the -inf came in: passing it on is fine
        probs = shifted.softmax(axis=-1)
        (probs * probs).sum().backward()
    assert np.isfinite(scores.grad.numpy()).all()


def test_nan_already_in_the_data_is_reported_as_such():
    x = mg.tensor([np.nan, 1.0])
    with mg.detect_anomaly(), pytest.raises(AnomalyError, match="already in input 0"):
        x + 1


def test_off_by_default_and_restored_after_nesting_and_errors():
    assert autograd.anomaly_hook is None
    y = mg.tensor([-1.0]).log()  # no detection: a silent NaN, as in NumPy
    assert np.isnan(y.numpy()).all()
    with mg.detect_anomaly():
        outer = autograd.anomaly_hook
        assert outer is not None
        with mg.detect_anomaly():
            assert autograd.anomaly_hook is not outer
        assert autograd.anomaly_hook is outer
        with pytest.raises(AnomalyError):
            mg.tensor([-1.0]).log()
        assert autograd.anomaly_hook is outer
    assert autograd.anomaly_hook is None


def test_decorator_form():
    @mg.detect_anomaly()
    def step(x):
        return x.log()

    with pytest.raises(AnomalyError):
        step(mg.tensor([-1.0]))
    assert autograd.anomaly_hook is None


def test_graph_built_before_detection():
    x = mg.tensor([0.0], requires_grad=True)
    loss = x.sqrt().sum()
    with mg.detect_anomaly(), pytest.raises(AnomalyError, match="unknown"):
        loss.backward()


def test_a_model_trains_normally_under_detection(device):
    model = mg.nn.Sequential(mg.nn.Linear(3, 4), mg.nn.GELU(), mg.nn.LayerNorm(4), mg.nn.Linear(4, 2)).to(device)
    with mg.detect_anomaly():
        logits = model(mg.randn(5, 3, device=device))
        mg.functional.cross_entropy(logits, np.array([0, 1, 0, 1, 1])).backward()
    assert all(np.isfinite(p.grad.numpy()).all() for p in model.parameters())
