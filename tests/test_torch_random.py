"""mg.Generator and the samplers (rand, randint, randperm, multinomial, normal, bernoulli), against PyTorch's
shapes, dtypes and errors. The numbers themselves are minigrad's own stream (reproducible, not PyTorch's)."""

import numpy as np
import pytest

import minigrad as mg


def test_generator_is_reproducible_and_private():
    a = mg.randn(5, generator=mg.Generator().manual_seed(7)).numpy()
    mg.manual_seed(0)
    before = mg.randn(3).numpy()
    b = mg.randn(5, generator=mg.Generator().manual_seed(7)).numpy()
    mg.manual_seed(0)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(mg.randn(3).numpy(), before)  # a generator's draws leave the global stream alone
    assert not np.array_equal(a, mg.randn(5, generator=mg.Generator().manual_seed(8)).numpy())


def test_global_stream_unchanged_by_generator_support():
    """mg.manual_seed(s) then randn draws exactly NumPy's default_rng(s) normals, as before Generator existed."""
    mg.manual_seed(123)
    expected = np.random.default_rng(123).standard_normal((4, 3)).astype(np.float32)
    np.testing.assert_array_equal(mg.randn(4, 3).numpy(), expected)


def test_generator_state_round_trip_and_seeds():
    g = mg.Generator()
    assert g.manual_seed(42) is g and g.initial_seed() == 42
    mg.rand(3, generator=g)
    state = g.get_state()
    assert state.dtype == mg.uint8 and state.ndim == 1
    after = mg.rand(4, generator=g).numpy()
    g.manual_seed(1)
    g.set_state(state)
    np.testing.assert_array_equal(mg.rand(4, generator=g).numpy(), after)
    assert g.initial_seed() == 42
    assert g.seed() == g.initial_seed()
    with pytest.raises(RuntimeError):
        g.set_state(mg.tensor(np.frombuffer(b"not a state", dtype=np.uint8).copy(), dtype=mg.uint8))
    with pytest.raises(TypeError):
        mg.rand(2, generator=np.random.default_rng(0))


@pytest.mark.parametrize("call, shape, dtype", [
    (lambda g: mg.rand(2, 3, generator=g), (2, 3), "float32"),
    (lambda g: mg.rand((4,), generator=g, dtype=mg.float64), (4,), "float64"),
    (lambda g: mg.randn(2, 3, generator=g), (2, 3), "float32"),
    (lambda g: mg.randn(size=(2, 3), generator=g), (2, 3), "float32"),
    (lambda g: mg.rand(size=[5], generator=g), (5,), "float32"),
    (lambda g: mg.randint(5, (3, 2), generator=g), (3, 2), "int64"),
    (lambda g: mg.randint(2, 5, (7,), generator=g), (7,), "int64"),
    (lambda g: mg.randint(0, 5, size=(2,), generator=g), (2,), "int64"),
    (lambda g: mg.randperm(6, generator=g), (6,), "int64"),
    (lambda g: mg.normal(0.0, 1.0, (3, 1), generator=g), (3, 1), "float32"),
    (lambda g: mg.normal(mg.zeros(2, 3, dtype=mg.float64), 2.0, generator=g), (2, 3), "float64"),
    (lambda g: mg.normal(mg.zeros(2, 1), mg.ones(3), generator=g), (2, 3), "float32"),
    (lambda g: mg.bernoulli(mg.full((4,), 0.3), generator=g), (4,), "float32"),
    (lambda g: mg.multinomial(mg.tensor([1.0, 2.0, 3.0]), 2, generator=g), (2,), "int64"),
    (lambda g: mg.multinomial(mg.tensor([[1.0, 2.0], [3.0, 4.0]]), 5, True, generator=g), (2, 5), "int64"),
])
def test_shapes_and_dtypes_match_pytorch(call, shape, dtype):
    out = call(mg.Generator().manual_seed(0))
    assert out.shape == shape and out.dtype == np.dtype(dtype)
    assert call(None).shape == shape  # the global stream, too


def test_pytorch_dtypes_of_the_samplers():
    torch = pytest.importorskip("torch")
    pairs = [
        (mg.rand(2), torch.rand(2)), (mg.randint(5, (3,)), torch.randint(5, (3,))),
        (mg.randint(1, 5, (3,)), torch.randint(1, 5, (3,))), (mg.randperm(4), torch.randperm(4)),
        (mg.multinomial(mg.ones(3), 2), torch.multinomial(torch.ones(3), 2)),
        (mg.normal(0.0, 1.0, (2,)), torch.normal(0.0, 1.0, (2,))),
        (mg.normal(mg.zeros(2, dtype=mg.float64), 1.0), torch.normal(torch.zeros(2, dtype=torch.float64), 1.0)),
        (mg.bernoulli(mg.full((3,), 0.5, dtype=mg.float64)),
         torch.bernoulli(torch.full((3,), 0.5, dtype=torch.float64))),
    ]
    for ours, theirs in pairs:
        assert ours.shape == tuple(theirs.shape)
        assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")


def test_ranges_and_frequencies():
    g = mg.Generator().manual_seed(1)
    u = mg.rand(100_000, generator=g).numpy()
    assert u.min() >= 0 and u.max() < 1 and abs(u.mean() - 0.5) < 0.01
    r = mg.randint(-3, 4, (100_000,), generator=g).numpy()
    assert r.min() == -3 and r.max() == 3
    np.testing.assert_allclose(np.bincount(r + 3) / r.size, 1 / 7, atol=0.01)
    assert sorted(mg.randperm(50, generator=g).tolist()) == list(range(50))
    n = mg.normal(2.0, 3.0, (100_000,), generator=g).numpy()
    assert abs(n.mean() - 2.0) < 0.05 and abs(n.std() - 3.0) < 0.05
    b = mg.bernoulli(mg.full((100_000,), 0.25), generator=g).numpy()
    assert set(np.unique(b)) == {0.0, 1.0} and abs(b.mean() - 0.25) < 0.01
    assert mg.bernoulli(mg.zeros(1000), p=1.0, generator=g).numpy().sum() == 1000
    probs = np.array([1.0, 2.0, 3.0, 4.0])
    draws = mg.multinomial(mg.tensor(probs), 100_000, replacement=True, generator=g).numpy()
    np.testing.assert_allclose(np.bincount(draws, minlength=4) / draws.size, probs / probs.sum(), atol=0.01)


def test_multinomial_without_replacement_draws_distinct_indices():
    g = mg.Generator().manual_seed(2)
    for _ in range(20):
        rows = mg.multinomial(mg.rand(3, 10, generator=g), 10, generator=g).numpy()
        for row in rows:
            assert sorted(row.tolist()) == list(range(10))
    assert mg.multinomial(mg.tensor([0.0, 1.0, 0.0]), 1).item() == 1  # a zero weight is never drawn


@pytest.mark.parametrize("call", [
    lambda: mg.randint(5, 2, (3,)),
    lambda: mg.randperm(-1),
    lambda: mg.multinomial(mg.tensor([1.0, -1.0]), 1),
    lambda: mg.multinomial(mg.tensor([0.0, 0.0]), 1),
    lambda: mg.multinomial(mg.tensor([1.0, 0.0, 1.0]), 3),
    lambda: mg.multinomial(mg.ones(2, 2, 2), 1),
    lambda: mg.normal(0.0, -1.0, (2,)),
    lambda: mg.bernoulli(mg.full((2,), 1.5)),
])
def test_bad_input_raises_as_pytorch(call):
    with pytest.raises(RuntimeError):
        call()


def test_bad_call_shapes_raise_type_errors():
    with pytest.raises(TypeError):
        mg.randint(5)
    with pytest.raises(TypeError):
        mg.normal(0.0, 1.0)
    with pytest.raises(TypeError):
        mg.rand(2, dtype=mg.int64)
    with pytest.raises(TypeError, match="not both"):
        mg.randn(2, size=(2,))


def test_samplers_give_the_same_numbers_on_every_device(device):
    """Drawn on the host and moved, so a seed means the same samples on the CPU and on any device."""
    def draws(on):
        g = mg.Generator().manual_seed(11)
        probs = mg.tensor([0.2, 0.3, 0.5], device=on)
        return [mg.rand(3, generator=g, device=on), mg.randn(2, generator=g, device=on),
                mg.randint(0, 9, (4,), generator=g, device=on), mg.randperm(5, generator=g, device=on),
                mg.multinomial(probs, 2, generator=g), mg.normal(mg.zeros(3, device=on), 1.0, generator=g),
                mg.bernoulli(probs, generator=g), mg.nn.init.trunc_normal_(mg.zeros(4, device=on), generator=g)]

    for here, there in zip(draws("cpu"), draws(device)):
        assert there.device == device or str(there.device).startswith(device)
        assert here.dtype == there.dtype
        np.testing.assert_array_equal(here.numpy(), there.numpy())


@pytest.mark.parametrize("args, kwargs, low, high", [
    ((10, (3,)), {}, 0, 10), ((2, 5, (3,)), {}, 2, 5), ((10,), {"size": (2, 2)}, 0, 10),
    ((), {"low": 2, "high": 5, "size": (4,)}, 2, 5), ((3,), {"high": 5, "size": (2,)}, 3, 5),
    ((), {"high": 5, "size": (2,)}, 0, 5),
])
def test_randint_call_forms_match_pytorch(args, kwargs, low, high):
    torch = pytest.importorskip("torch")
    ours, theirs = mg.randint(*args, **kwargs), torch.randint(*args, **kwargs)
    assert ours.shape == tuple(theirs.shape) and str(ours.dtype) == "int64" == str(theirs.dtype).removeprefix("torch.")
    assert (ours.numpy() >= low).all() and (ours.numpy() < high).all()


@pytest.mark.parametrize("kwargs", [{"low": 2, "size": (2,)}, {"high": 2}])
def test_randint_bad_keywords(kwargs):
    with pytest.raises(TypeError):
        mg.randint(**kwargs)
