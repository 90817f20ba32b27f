"""The torch.nn modules real programs stopped at (issue 47), each run from PyTorch's own weights and compared:
LazyLinear, BatchNorm1d and LazyBatchNorm1d (running statistics, momentum, train/eval, affine, state_dict),
BCEWithLogitsLoss (weight, pos_weight), BCELoss, nn.utils.rnn.pad_sequence, and the inplace activations."""

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
RNG = np.random.default_rng(1)


def close(ours, theirs, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(ours.detach().numpy()), theirs.detach().numpy(), rtol=rtol, atol=atol)


def copy_weights(ours, theirs):
    ours.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in theirs.state_dict().items()})


def test_lazy_linear_infers_in_features_and_becomes_a_linear_as_pytorchs():
    x = RNG.normal(size=(4, 5)).astype(np.float32)
    ours, theirs = mg.nn.LazyLinear(3), torch.nn.LazyLinear(3)
    assert repr(ours) == repr(theirs) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    optimizer = mg.optim.SGD(ours.parameters(), lr=0.1)  # made before the first call: it keeps the same tensors
    ours(mg.tensor(x)), theirs(torch.tensor(x))
    assert type(ours) is mg.nn.Linear and type(theirs) is torch.nn.Linear and repr(ours) == repr(theirs)
    assert ours.weight.shape == tuple(theirs.weight.shape) == (3, 5)
    assert np.abs(ours.weight.numpy()).max() <= 1 / np.sqrt(5)  # Linear's U(-1/sqrt(in), 1/sqrt(in))
    copy_weights(ours, theirs)
    ours(mg.tensor(x)).square().sum().backward()
    theirs(torch.tensor(x)).square().sum().backward()
    close(ours.weight.grad, theirs.weight.grad)
    before = ours.weight.numpy()
    optimizer.step()
    assert not np.array_equal(before, ours.weight.numpy())


def test_lazy_linear_in_a_sequential_as_the_d2l_textbook_writes_it():
    net = mg.nn.Sequential(mg.nn.LazyLinear(8), mg.nn.ReLU(), mg.nn.LazyLinear(2))
    assert net(mg.randn(3, 6)).shape == (3, 2)
    assert [p.shape for p in net.parameters()] == [(8, 6), (8,), (2, 8), (2,)]


@pytest.mark.parametrize("shape", [(8, 3), (4, 3, 5)])
@pytest.mark.parametrize("momentum, affine, track", [(0.1, True, True), (None, True, True), (0.3, False, True),
                                                     (0.1, True, False)])
def test_batch_norm_1d_trains_and_evaluates_as_pytorchs(shape, momentum, affine, track):
    ours = mg.nn.BatchNorm1d(3, momentum=momentum, affine=affine, track_running_stats=track)
    theirs = torch.nn.BatchNorm1d(3, momentum=momentum, affine=affine, track_running_stats=track)
    assert repr(ours) == repr(theirs) and list(ours.state_dict()) == list(theirs.state_dict())
    if affine:
        with torch.no_grad():
            theirs.weight.uniform_(0.5, 1.5), theirs.bias.uniform_(-0.5, 0.5)
        copy_weights(ours, theirs)
    for step in range(3):
        x = (RNG.normal(size=shape) * (step + 1) + step).astype(np.float32)
        xs = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        outs = ours(xs[0]), theirs(xs[1])
        weights = RNG.normal(size=shape).astype(np.float32)
        (outs[0] * mg.tensor(weights)).sum().backward()
        (outs[1] * torch.tensor(weights)).sum().backward()
        close(outs[0], outs[1], rtol=1e-4, atol=1e-5)
        close(xs[0].grad, xs[1].grad, rtol=1e-4, atol=1e-5)
    for (name, ours_value), theirs_value in zip(ours.state_dict().items(), theirs.state_dict().values()):
        np.testing.assert_allclose(ours_value.numpy(), theirs_value.numpy(), rtol=1e-5, atol=1e-6, err_msg=name)
    if affine:
        close(ours.weight.grad, theirs.weight.grad, rtol=1e-4, atol=1e-5)
    ours.eval(), theirs.eval()
    x = RNG.normal(size=shape).astype(np.float32)
    close(ours(mg.tensor(x)), theirs(torch.tensor(x)), rtol=1e-4, atol=1e-5)


def test_batch_norm_loads_a_pytorch_state_dict_and_refuses_what_pytorch_refuses():
    theirs = torch.nn.BatchNorm1d(4)
    theirs(torch.randn(16, 4) * 3 + 1)
    ours = mg.nn.BatchNorm1d(4)
    copy_weights(ours, theirs)
    assert ours.num_batches_tracked.item() == 1 and str(ours.num_batches_tracked.dtype) == "int64"
    ours.eval(), theirs.eval()
    x = np.ones((2, 4), dtype=np.float32)
    close(ours(mg.tensor(x)), theirs(torch.tensor(x)))
    ours.train()
    for bad, error in ((mg.ones(1, 4), "more than 1 value per channel"), (mg.ones(2, 3), "channels"),
                       (mg.ones(2, 4, 1, 1), "expected 2D or 3D input")):
        with pytest.raises(ValueError, match=error):
            ours(bad)


def test_lazy_batch_norm_infers_its_features_as_pytorchs():
    ours, theirs = mg.nn.LazyBatchNorm1d(), torch.nn.LazyBatchNorm1d()
    x = RNG.normal(size=(6, 5, 2)).astype(np.float32)
    close(ours(mg.tensor(x)), theirs(torch.tensor(x)), rtol=1e-4, atol=1e-5)
    assert type(ours) is mg.nn.BatchNorm1d and type(theirs) is torch.nn.BatchNorm1d and repr(ours) == repr(theirs)
    close(ours.running_var, theirs.running_var)


LOGITS = RNG.normal(size=(4, 3)).astype(np.float32) * 3
LABELS = (RNG.random(size=(4, 3)) > 0.5).astype(np.float32)


@pytest.mark.parametrize("options", [{}, {"reduction": "sum"}, {"reduction": "none"},
                                     {"pos_weight": np.array([1.0, 3.0, 0.5], dtype=np.float32)},
                                     {"weight": np.array([2.0, 1.0, 0.0], dtype=np.float32), "reduction": "sum"}])
def test_bce_with_logits_loss_as_pytorchs(options):
    found = []
    for lib in (mg, torch):
        kwargs = {k: lib.tensor(v) if isinstance(v, np.ndarray) else v for k, v in options.items()}
        module = lib.nn.BCEWithLogitsLoss(**kwargs)
        x = lib.tensor(LOGITS, requires_grad=True)
        loss = module(x, lib.tensor(LABELS))
        loss.sum().backward()
        found.append((loss, x.grad, list(module.state_dict())))
    close(found[0][0], found[1][0])
    close(found[0][1], found[1][1])
    assert found[0][2] == found[1][2]
    probabilities = 1 / (1 + np.exp(-LOGITS))
    close(mg.nn.BCELoss()(mg.tensor(probabilities), mg.tensor(LABELS)),
          torch.nn.BCELoss()(torch.tensor(probabilities), torch.tensor(LABELS)))


@pytest.mark.parametrize("batch_first, side", [(False, "right"), (True, "right"), (True, "left")])
def test_pad_sequence_as_pytorchs(batch_first, side):
    lengths, found = (3, 1, 4), []
    for lib in (mg, torch):
        seqs = [lib.tensor(np.arange(n * 2, dtype=np.float32).reshape(n, 2) + n, requires_grad=True) for n in lengths]
        out = lib.nn.utils.rnn.pad_sequence(seqs, batch_first=batch_first, padding_value=-1.0, padding_side=side)
        (out * lib.arange(out.numel()).reshape(out.shape)).sum().backward()
        found.append((out, [s.grad for s in seqs]))
    close(found[0][0], found[1][0])
    for ours, theirs in zip(found[0][1], found[1][1]):
        close(ours, theirs)


@pytest.mark.parametrize("make", [lambda nn: nn.ReLU(inplace=True), lambda nn: nn.LeakyReLU(0.2, inplace=True),
                                  lambda nn: nn.ELU(inplace=True), lambda nn: nn.SiLU(inplace=True)])
def test_an_inplace_activation_writes_into_its_input_as_pytorchs(make):
    x_np, found = RNG.normal(size=(2, 3)).astype(np.float32), []
    for lib in (mg, torch):
        x = lib.tensor(x_np, requires_grad=True)
        h = x * 2
        module = make(lib.nn)
        y = module(h)
        assert y is h  # the same tensor, changed
        (y * y).sum().backward()
        found.append((h, x.grad, repr(module)))
        with pytest.raises(RuntimeError, match="leaf Variable"):
            make(lib.nn)(lib.ones(2, requires_grad=True))
    close(found[0][0], found[1][0])
    close(found[0][1], found[1][1])
    assert found[0][2] == found[1][2]
