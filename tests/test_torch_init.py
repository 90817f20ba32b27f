"""nn.init against torch.nn.init: the fans and gains exactly, the distributions by their statistics on large
tensors (the streams differ from PyTorch's), in place, returning the tensor, with generator=."""

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

torch = pytest.importorskip("torch")

SHAPES = [(3, 5), (64, 32), (4, 3, 2, 5), (7, 2, 9)]


@pytest.mark.parametrize("shape", SHAPES)
def test_fans_match_pytorch(shape):
    ours = nn.init._calculate_fan_in_and_fan_out(mg.zeros(shape))
    assert ours == torch.nn.init._calculate_fan_in_and_fan_out(torch.zeros(shape))
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        nn.init._calculate_fan_in_and_fan_out(mg.zeros(4))


@pytest.mark.parametrize("name, param", [("linear", None), ("sigmoid", None), ("tanh", None), ("relu", None),
                                          ("leaky_relu", None), ("leaky_relu", 0.2), ("selu", None),
                                          ("conv2d", None)])
def test_gains_match_pytorch(name, param):
    assert nn.init.calculate_gain(name, param) == torch.nn.init.calculate_gain(name, param)


def test_unknown_gain_raises():
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        nn.init.calculate_gain("swish")


def _uniform_bound(call, shape):
    t = mg.zeros(shape)
    assert call(t) is t  # in place, returning the tensor
    return np.abs(t.numpy()).max(), t.numpy()


@pytest.mark.parametrize("kwargs", [{}, {"a": math.sqrt(5)}, {"mode": "fan_out", "nonlinearity": "relu"}])
def test_kaiming_uniform_bound_and_spread(kwargs):
    shape = (300, 200)
    fan = 200 if kwargs.get("mode", "fan_in") == "fan_in" else 300
    gain = torch.nn.init.calculate_gain(kwargs.get("nonlinearity", "leaky_relu"), kwargs.get("a", 0))
    bound = gain * math.sqrt(3.0 / fan)
    top, values = _uniform_bound(lambda t: nn.init.kaiming_uniform_(t, **kwargs), shape)
    assert bound * 0.99 < top <= bound
    assert abs(values.std() - bound / math.sqrt(3)) < 0.01 * bound
    theirs = torch.nn.init.kaiming_uniform_(torch.zeros(shape), **kwargs)
    assert bound * 0.99 < theirs.abs().max().item() <= bound * (1 + 1e-6)


@pytest.mark.parametrize("gain", [1.0, 2.0])
def test_xavier_uniform_and_normal(gain):
    shape = (400, 100)
    bound = gain * math.sqrt(6.0 / 500)
    top, values = _uniform_bound(lambda t: nn.init.xavier_uniform_(t, gain=gain), shape)
    assert bound * 0.99 < top <= bound
    t = nn.init.xavier_normal_(mg.zeros(shape), gain=gain)
    std = gain * math.sqrt(2.0 / 500)
    assert abs(t.numpy().std() - std) < 0.02 * std
    assert abs(torch.nn.init.xavier_normal_(torch.zeros(shape), gain=gain).std().item() - std) < 0.02 * std


def test_kaiming_normal_std():
    t = nn.init.kaiming_normal_(mg.zeros(500, 200), mode="fan_in", nonlinearity="relu")
    assert abs(t.numpy().std() - math.sqrt(2.0 / 200)) < 0.02 * math.sqrt(2.0 / 200)


def test_trunc_normal_bounds_and_std():
    t = nn.init.trunc_normal_(mg.zeros(200_000), mean=1.0, std=2.0, a=0.0, b=3.0)
    values = t.numpy()
    assert values.min() >= 0.0 and values.max() <= 3.0
    theirs = torch.nn.init.trunc_normal_(torch.zeros(200_000), mean=1.0, std=2.0, a=0.0, b=3.0)
    assert abs(values.mean() - theirs.mean().item()) < 0.02 and abs(values.std() - theirs.std().item()) < 0.02
    small = nn.init.trunc_normal_(mg.zeros(100_000), std=0.02).numpy()  # nanoGPT-style: bounds far outside
    assert abs(small.std() - 0.02) < 0.001
    with pytest.raises(ValueError):
        nn.init.trunc_normal_(mg.zeros(3), a=1.0, b=0.0)


def test_simple_fills_and_generators():
    t = mg.zeros(2, 3, requires_grad=True)
    assert nn.init.ones_(t) is t and t.numpy().sum() == 6 and t.grad is None
    assert nn.init.constant_(t, 0.5).numpy().mean() == 0.5
    assert not nn.init.zeros_(t).numpy().any()
    u = nn.init.uniform_(mg.zeros(10_000), -2.0, -1.0).numpy()
    assert u.min() >= -2.0 and u.max() < -1.0
    n = nn.init.normal_(mg.zeros(100_000), mean=3.0, std=0.5).numpy()
    assert abs(n.mean() - 3.0) < 0.01 and abs(n.std() - 0.5) < 0.01
    for init in (nn.init.normal_, nn.init.uniform_, nn.init.xavier_uniform_, nn.init.xavier_normal_,
                 nn.init.kaiming_uniform_, nn.init.kaiming_normal_, nn.init.trunc_normal_):
        first = init(mg.zeros(4, 5), generator=mg.Generator().manual_seed(3)).numpy()
        second = init(mg.zeros(4, 5), generator=mg.Generator().manual_seed(3)).numpy()
        np.testing.assert_array_equal(first, second)
        assert first.any()


def test_mode_must_be_a_fan():
    with pytest.raises(ValueError, match="fan_in, fan_out"):
        nn.init.kaiming_uniform_(mg.zeros(2, 2), mode="fan_avg")
