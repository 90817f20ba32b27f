"""`set_default_dtype`, `x.type(...)` and the random in-place fills (`uniform_`, `normal_`, `random_`,
`bernoulli_`, `exponential_`, each with `generator=`), against PyTorch where their values can be compared
(dtypes, shapes, ranges, refusals) and against their distributions where they cannot (minigrad's random streams
are reproducible within minigrad, not equal to PyTorch's).

Read next: test_torch_random.py.
"""

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


@pytest.fixture
def float64_default():
    mg.set_default_dtype(mg.float64)
    torch.set_default_dtype(torch.float64)
    yield
    mg.set_default_dtype(mg.float32)
    torch.set_default_dtype(torch.float32)


def test_set_default_dtype_float64_reaches_every_float_maker(float64_default):
    cases = [
        lambda t: t.tensor(1.5), lambda t: t.tensor([1.0, 2.0]), lambda t: t.zeros(2), lambda t: t.ones(2),
        lambda t: t.randn(2), lambda t: t.rand(2), lambda t: t.eye(2), lambda t: t.linspace(0, 1, 3),
        lambda t: t.arange(0.0, 2.0), lambda t: t.tensor([1, 2]) / 2, lambda t: t.tensor([1, 2]) * 2.5,
        lambda t: t.tensor([1, 2]).exp(), lambda t: t.nn.Linear(2, 3).weight, lambda t: t.nn.Embedding(4, 2).weight,
        lambda t: t.nn.LayerNorm(3).weight,
    ]
    for case in cases:
        assert str(case(mg).dtype) == str(case(torch).dtype).removeprefix("torch."), case
    assert mg.get_default_dtype() == mg.float64 and mg.finfo().bits == 64
    assert mg.tensor([1, 2]).dtype == mg.int64  # integers stay integers
    layer = mg.nn.Linear(3, 1)
    loss = layer(mg.ones(2, 3)).sum()
    loss.backward()
    assert loss.dtype == mg.float64 and layer.weight.grad.dtype == mg.float64


def test_set_default_dtype_back_to_float32():
    mg.set_default_dtype(mg.float64)
    try:
        assert mg.zeros(1).dtype == mg.float64
    finally:
        mg.set_default_dtype(mg.float32)
    assert mg.zeros(1).dtype == mg.float32 and mg.tensor(0.5).dtype == mg.float32


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "uint8", "bool"])
def test_type_names_and_conversions_match_torch(dtype):
    ours, theirs = mg.tensor([1.7, 0.0]).to(getattr(mg, dtype)), \
        torch.tensor([1.7, 0.0]).to(getattr(torch, dtype))
    assert ours.type() == theirs.type()
    for target in ("torch.FloatTensor", "torch.LongTensor", "torch.DoubleTensor"):
        assert ours.type(target).tolist() == theirs.type(target).tolist()
        assert ours.type(target).type() == target
    assert str(ours.type(mg.float64).dtype) == str(theirs.type(torch.float64).dtype).removeprefix("torch.")
    with pytest.raises(TypeError, match="invalid type"):
        ours.type("torch.ComplexTensor")


def fills(lib, generator):
    return {
        "uniform_": lambda x: x.uniform_(-2, 3, generator=generator),
        "normal_": lambda x: x.normal_(1.0, 0.5, generator=generator),
        "exponential_": lambda x: x.exponential_(4.0, generator=generator),
        "bernoulli_": lambda x: x.bernoulli_(0.3, generator=generator),
        "random_": lambda x: x.random_(3, 9, generator=generator),
    }


# (mean, std) of each fill's distribution, for 20,000 draws
MOMENTS = {"uniform_": (0.5, 5 / 12**0.5), "normal_": (1.0, 0.5), "exponential_": (0.25, 0.25),
           "bernoulli_": (0.3, (0.3 * 0.7) ** 0.5), "random_": (5.5, (35 / 12) ** 0.5)}


@pytest.mark.parametrize("name", list(MOMENTS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_fills_draw_their_distribution_in_place(name, dtype, device):
    x = mg.zeros(20_000, dtype=dtype, device=device)
    alias = x
    y = fills(mg, mg.Generator().manual_seed(0))[name](x)
    assert y is alias and x.dtype == dtype and x.device == device and x._version == 1
    values = x.numpy()
    expected = fills(torch, torch.Generator().manual_seed(0))[name](torch.zeros(20_000, dtype=getattr(torch, dtype)))
    assert values.min() >= expected.min().item() - 3 and values.max() <= expected.max().item() + 3
    mean, std = MOMENTS[name]
    assert abs(values.mean() - mean) < 5 * std / 20_000**0.5
    assert abs(values.std() - std) < 0.05 * std
    again = fills(mg, mg.Generator().manual_seed(0))[name](mg.zeros(20_000, dtype=dtype, device=device))
    np.testing.assert_array_equal(again.numpy(), values)  # the same generator seed, the same draws


def test_random_fill_ranges_and_refusals_match_torch():
    for lib in (torch, mg):
        ints = lib.zeros(1000, dtype=lib.int64).random_(5)
        assert ints.min().item() == 0 and ints.max().item() == 4 and ints.dtype == lib.int64
        mask = lib.zeros(1000).bernoulli_(lib.full((1000,), 1.0))
        assert mask.sum().item() == 1000
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
            lib.zeros(3, requires_grad=True).normal_()
        w = lib.zeros(3, requires_grad=True)
        with lib.no_grad():
            w.uniform_(1, 2)  # nn.init's way
        assert 1 <= w.min().item() and w.max().item() < 2 and w.requires_grad


def test_a_random_fill_in_a_graph_cuts_the_gradient_like_torch():
    grads = []
    for lib in (torch, mg):
        x = lib.ones(4, requires_grad=True)
        y = x * 2
        y.normal_()  # y's values no longer depend on x
        (y * x).sum().backward()
        grads.append(x.grad.numpy() - y.detach().numpy())
    np.testing.assert_allclose(grads[1], grads[0])  # both: x.grad = y (the drawn values), the fill passes nothing
