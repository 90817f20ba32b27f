"""mg.manual_seed drives every random draw (randn, initialisation, dropout) on every device."""

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn, random


def draws(device):
    """One of each kind of random draw minigrad makes."""
    x = mg.randn(3, 4, device=device)
    layer = nn.Linear(4, 5, device=device)
    emb = nn.Embedding(6, 2, device=device)
    mask = F.dropout(mg.ones(50, device=device), 0.5, training=True)
    return [x.numpy(), layer.weight.numpy(), layer.bias.numpy(), emb.weight.numpy(), mask.numpy()]


def test_same_seed_same_draws(device):
    mg.manual_seed(42)
    first = draws(device)
    mg.manual_seed(42)
    second = draws(device)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)


def test_other_seed_other_draws(device):
    mg.manual_seed(1)
    first = draws(device)
    mg.manual_seed(2)
    second = draws(device)
    for a, b in zip(first, second):
        assert not np.array_equal(a, b)


@pytest.mark.parametrize("other", ["strict", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_initialisation_is_the_same_on_every_device(other):
    """Weights and randn are drawn on the host and copied, so a seed means the same model everywhere."""
    if other == "cuda" and not mg.cuda.is_available():
        pytest.skip("needs CuPy and an NVIDIA GPU")
    mg.manual_seed(3)
    on_cpu = draws("cpu")[:4]
    mg.manual_seed(3)
    elsewhere = draws(other)[:4]
    for a, b in zip(on_cpu, elsewhere):
        np.testing.assert_array_equal(a, b)


def test_rng_state_round_trip_resumes_the_stream(device):
    mg.manual_seed(5)
    mg.randn(3)
    state = random.get_rng_state()
    expected = mg.randn(4, device=device).numpy()
    mg.manual_seed(99)
    random.set_rng_state(state)
    np.testing.assert_array_equal(mg.randn(4, device=device).numpy(), expected)
