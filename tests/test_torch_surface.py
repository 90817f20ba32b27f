"""The everyday PyTorch functions real programs stopped at (issue 47), each held against PyTorch: values, shapes,
dtypes and gradients. F.pad, F.kl_div, the legacy types, type_as, nonzero, index_fill_, meshgrid, `== None`, a
bare `@no_grad`, torch.save to a file object, view on a non-contiguous tensor, and Div's quiet backward.
The modules (LazyLinear, BatchNorm1d, the losses, pad_sequence, inplace activations): test_torch_surface_modules.py.
"""

import io
import warnings

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch
RNG = np.random.default_rng(0)


def both(fn, *arrays, grad=True):
    """fn run on minigrad and on PyTorch tensors made from `arrays` (float ones requiring grad): the outputs and
    the inputs' gradients of sum(output * fixed weights), compared."""
    results = []
    for lib in (mg, torch):
        inputs = [lib.tensor(a, requires_grad=grad and a.dtype.kind == "f") for a in arrays]
        out = fn(lib, *inputs)
        if grad and out.requires_grad:
            weights = np.linspace(-1, 1, out.numel()).reshape(tuple(out.shape)).astype(np.float32)
            (out * lib.tensor(weights)).sum().backward()
        results.append((out, [None if t.grad is None else t.grad.numpy() for t in inputs]))
    (ours, our_grads), (theirs, their_grads) = results
    assert tuple(ours.shape) == tuple(theirs.shape) and str(ours.dtype) == str(theirs.dtype).replace("torch.", "")
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5, atol=1e-6)
    for g, h in zip(our_grads, their_grads):
        assert (g is None) == (h is None)
        if g is not None:
            np.testing.assert_allclose(g, h, rtol=1e-5, atol=1e-6)


X = RNG.normal(size=(2, 3, 4)).astype(np.float32)


@pytest.mark.parametrize("pad", [(1, 2), (0, 0, 2, 1), (1, 1, 1, 1, 1, 1), (-1, 2), (2, -3, -1, 0), (0, 1)])
@pytest.mark.parametrize("value", [None, -1.5])
def test_pad_constant_as_pytorch(pad, value):
    both(lambda lib, x: lib.nn.functional.pad(x, pad, value=0 if value is None else value), X)
    both(lambda lib, x: lib.nn.functional.pad(x, pad), X)


def test_pad_keeps_an_integer_dtype_and_refuses_the_other_modes_in_one_line():
    both(lambda lib, x: lib.nn.functional.pad(x, (1, 1), value=7), np.arange(6).reshape(2, 3), grad=False)
    for mode in ("reflect", "replicate", "circular"):
        with pytest.raises(NotImplementedError) as error:
            mg.nn.functional.pad(mg.tensor(X), (1, 1), mode=mode)
        assert "mode='constant'" in str(error.value) and "\n" not in str(error.value)
    with pytest.raises(ValueError, match="even"):
        mg.nn.functional.pad(mg.tensor(X), (1,))


LOGP = np.log(RNG.dirichlet(np.ones(5), size=3)).astype(np.float32)
TARGET = RNG.dirichlet(np.ones(5), size=3).astype(np.float32)
TARGET[0, 1] = 0.0  # a zero probability: 0 * log 0 counts as 0


@pytest.mark.parametrize("reduction", ["mean", "batchmean", "sum", "none"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div_and_its_module_as_pytorch(reduction, log_target):
    target = np.log(TARGET + 1e-3) if log_target else TARGET
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch warns that "mean" is not the divergence
        both(lambda lib, p, t: lib.nn.functional.kl_div(p, t, reduction=reduction, log_target=log_target),
             LOGP, target.astype(np.float32))
        both(lambda lib, p, t: lib.nn.KLDivLoss(reduction=reduction, log_target=log_target)(p, t), LOGP,
             target.astype(np.float32))


@pytest.mark.parametrize("name, data", [("LongTensor", [1, 2]), ("FloatTensor", [[1.5, 2.0]]), ("IntTensor", [3]),
                                        ("DoubleTensor", [0.1]), ("BoolTensor", [True, False]), ("ByteTensor", [7]),
                                        ("HalfTensor", [1.0])])
def test_a_legacy_type_makes_pytorchs_tensor_and_answers_isinstance(name, data):
    ours, theirs = getattr(mg, name)(data), getattr(torch, name)(data)
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "") and ours.tolist() == theirs.tolist()
    assert isinstance(ours, getattr(mg, name)) and isinstance(theirs, getattr(torch, name))
    assert not isinstance(mg.tensor([0.0]), mg.LongTensor) and not isinstance(torch.tensor([0.0]), torch.LongTensor)
    assert tuple(getattr(mg, name)(2, 3).shape) == tuple(getattr(torch, name)(2, 3).shape) == (2, 3)
    assert ours.type() == theirs.type() and mg.ones(2).type(getattr(mg, name)).dtype == ours.dtype


def test_type_as_nonzero_and_index_fill_as_pytorch():
    ids = np.array([[0, 3, 0], [2, 0, 1]])
    both(lambda lib, x, y: x.type_as(y), ids, X, grad=False)
    both(lambda lib, x, y: y.type_as(x), ids, X, grad=False)
    both(lambda lib, x: lib.nonzero(x), ids, grad=False)
    both(lambda lib, x: x.nonzero(), np.array(5), grad=False)  # a 0-d input: shape (1, 0)
    for ours, theirs in zip(mg.tensor(ids).nonzero(as_tuple=True), torch.tensor(ids).nonzero(as_tuple=True)):
        assert ours.tolist() == theirs.tolist() and str(ours.dtype) == "int64"
    both(lambda lib, x: (x * 1).index_fill_(1, lib.tensor([0, 2]), -2.0), X)
    both(lambda lib, x: x.index_fill(-1, lib.tensor([3]), 4.0), X)
    both(lambda lib, x: (x * 1).index_fill_(0, lib.tensor(1), lib.tensor(0.5)), X)


@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_as_pytorch(indexing):
    a, b, c = (np.arange(n, dtype=np.float32) + 1 for n in (2, 3, 4))
    for k in range(3):
        both(lambda lib, *t, k=k: lib.meshgrid(*t, indexing=indexing)[k], a, b, c)
        both(lambda lib, *t, k=k: lib.meshgrid(list(t), indexing=indexing)[k % 2], a, b)
    with pytest.warns(UserWarning, match="indexing"):
        mg.meshgrid(mg.tensor(a), mg.tensor(b))


def test_a_tensor_compared_with_none_is_false_as_pytorch():
    for lib in (mg, torch):
        x = lib.tensor([1, 2])
        assert (x == None) is False and (x != None) is True  # noqa: E711  (the idiom under test)
        assert (None == x) is False  # noqa: E711


def test_a_bare_no_grad_decorator_as_pytorch():
    for lib in (mg, torch):
        @lib.no_grad
        def double(x):
            return x * 2

        @lib.enable_grad
        def triple(x):
            return x * 3

        x = lib.ones(2, requires_grad=True)
        assert not double(x).requires_grad and double.__name__ == "double"
        with lib.no_grad():
            assert triple(x).requires_grad


def test_save_and_load_through_a_file_object(tmp_path):
    model = mg.nn.Linear(3, 2)
    buffer = io.BytesIO()
    mg.save(model.state_dict(), buffer)
    buffer.seek(0)
    loaded = mg.load(buffer)
    assert all(np.array_equal(loaded[k].numpy(), v.numpy()) for k, v in model.state_dict().items())
    with open(tmp_path / "ckpt.pt", "wb") as file:
        mg.save({"model": model.state_dict(), "step": 7}, file)
    with open(tmp_path / "ckpt.pt", "rb") as file:
        assert mg.load(file)["step"] == 7
    for bad in (open(tmp_path / "text.txt", "w"), 3):  # noqa: SIM115
        with pytest.raises(TypeError) as error:
            mg.save(model.state_dict(), bad)
        assert "\n" not in str(error.value)


@pytest.mark.parametrize("make", [lambda x: x.t(), lambda x: x.permute(1, 0), lambda x: x[:, ::2],
                                  lambda x: x.unsqueeze(0).expand(2, 2, 3)])
def test_view_of_a_non_contiguous_tensor_raises_pytorchs_error(make):
    messages = []
    for lib in (mg, torch):
        y = make(lib.arange(6.0).reshape(2, 3))
        with pytest.raises(RuntimeError) as error:
            y.view(-1)
        messages.append(str(error.value))
        assert y.contiguous().view(-1).tolist() == y.reshape(-1).tolist()
        assert not y.is_contiguous() and y.contiguous().is_contiguous()
    assert messages[0] == messages[1]


def test_view_where_pytorch_allows_it_shares_memory():
    for lib in (mg, torch):
        x = lib.arange(6.0).reshape(2, 3)
        for y in (x.view(3, 2), x[:1].view(-1), x.t().view(3, 2, 1), x.flip(0).view(-1), x.t().t().view(6)):
            assert tuple(y.shape) in ((3, 2), (3,), (3, 2, 1), (6,))
        x.view(-1)[0] = 9.0
        assert x[0, 0].item() == 9.0  # a write through the view reaches the tensor


def test_division_of_minus_inf_scores_by_a_number_backpropagates_quietly():
    scores = mg.tensor([[0.0, 1.0, 2.0]], requires_grad=True)
    masked = scores.masked_fill(mg.tensor([[False, False, True]]), -mg.inf)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NumPy's "invalid value encountered in multiply" would fail here
        (masked / 8.0).softmax(-1)[0, 0].backward()
    t = torch.tensor([[0.0, 1.0, 2.0]], requires_grad=True)
    (t.masked_fill(torch.tensor([[False, False, True]]), -torch.inf) / 8.0).softmax(-1)[0, 0].backward()
    np.testing.assert_allclose(scores.grad.numpy(), t.grad.numpy(), rtol=1e-6)


REPRS = [lambda t: t.tensor([0.95444, 1.0, 2.0]), lambda t: t.tensor([1e-5, 1.0]), lambda t: t.tensor([1e9, 1.0]),
         lambda t: t.tensor([float("nan"), 1.0, float("inf")]), lambda t: t.tensor([1.0, 2.0]), lambda t: t.tensor(3.5),
         lambda t: t.tensor([]), lambda t: t.zeros(0, 3), lambda t: t.tensor([[1, -2], [300, 4]]),
         lambda t: t.tensor([-1.5, 100.25]), lambda t: t.tensor([1.0, 2.0], dtype=t.float64), lambda t: t.tensor(5),
         lambda t: t.tensor([True, False]), lambda t: t.arange(2000.0), lambda t: t.tensor([1e-10, 0.0]),
         lambda t: t.arange(24.0).reshape(2, 3, 4) / 7, lambda t: t.arange(3000).reshape(30, 100),
         lambda t: t.arange(40.0).reshape(2, 20) * 1.5, lambda t: t.tensor([1.0, 2.0], requires_grad=True),
         lambda t: t.tensor([1.0, 2.0], requires_grad=True) * 2, lambda t: t.tensor([1, 2], dtype=t.int32),
         lambda t: t.zeros(2, 0, dtype=t.int64), lambda t: (t.ones(2, requires_grad=True) * 3).sum()]


@pytest.mark.parametrize("make", REPRS)
def test_a_tensor_prints_as_pytorchs(make):
    assert repr(make(mg)) == repr(make(torch))
    assert str(make(mg)) == str(make(torch))


def test_a_parameter_prints_as_pytorchs():
    ours, theirs = mg.nn.Parameter(mg.ones(2)), torch.nn.Parameter(torch.ones(2))
    assert repr(ours) == repr(theirs) == "Parameter containing:\ntensor([1., 1.], requires_grad=True)"


PRED = RNG.normal(size=(3, 4)).astype(np.float32) * 2
GOAL = RNG.normal(size=(3, 4)).astype(np.float32)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss, options", [("l1_loss", {}), ("smooth_l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}),
                                           ("smooth_l1_loss", {"beta": 0.0}), ("huber_loss", {"delta": 0.7})])
def test_the_l1_losses_and_their_modules_as_pytorchs(loss, options, reduction):
    both(lambda lib, x, t: getattr(lib.nn.functional, loss)(x, t, reduction=reduction, **options), PRED, GOAL)
    module = {"l1_loss": "L1Loss", "smooth_l1_loss": "SmoothL1Loss", "huber_loss": "HuberLoss"}[loss]
    both(lambda lib, x, t: getattr(lib.nn, module)(reduction=reduction, **options)(x, t), PRED, GOAL)


def test_a_0d_tensor_takes_a_format_spec_as_pytorchs():
    for lib in (mg, torch):
        assert f"{lib.tensor(2.5):+.2f}" == "+2.50" and f"{lib.tensor(1234.0):.1e}" == "1.2e+03"
        assert f"{lib.tensor([1.0, 2.0])}" == str(lib.tensor([1.0, 2.0]))
        with pytest.raises(TypeError):
            f"{lib.tensor([1.0, 2.0]):.2f}"  # noqa: B018


def test_narrow_as_pytorchs():
    both(lambda lib, x: x.narrow(1, 1, 2), X)
    both(lambda lib, x: x.narrow(-1, -3, 3), X)
    for lib in (mg, torch):
        with pytest.raises(RuntimeError, match=r"start \(1\) \+ length \(5\) exceeds dimension size \(2\)"):
            lib.tensor(X).narrow(0, 1, 5)
