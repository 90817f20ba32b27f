"""Optimizers and schedules: each update rule against torch.optim (where installed) and against hand-computed
first steps (everywhere); parameter groups; state_dict round trips through safetensors; in-place updates."""

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim

SHAPES = [(4, 3), (3,), (2, 2, 2)]

CONFIGS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.1)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, betas=(0.85, 0.95), weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, weight_decay=0.0)),
]


def make_params(device, dtype="float64", seed=0):
    rng = np.random.default_rng(seed)
    values = [rng.standard_normal(shape) for shape in SHAPES]
    return values, [nn.Parameter(v, dtype=dtype, device=device) for v in values]


def gradients(steps, seed=1):
    """The same gradients for both libraries; parameter 2 gets none on odd steps (it must be skipped)."""
    rng = np.random.default_rng(seed)
    return [[None if (i == 2 and step % 2) else rng.standard_normal(shape) for i, shape in enumerate(SHAPES)]
            for step in range(steps)]


def run_minigrad(opt, params, grads, device, dtype="float64"):
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = None if g is None else mg.tensor(g, dtype=dtype, device=device)
        opt.step()
    return [p.numpy() for p in params]


def run_torch(torch, opt, params, grads):
    for step_grads in grads:
        for p, g in zip(params, step_grads):
            p.grad = None if g is None else torch.tensor(g, dtype=p.dtype)
        opt.step()
    return [p.detach().numpy() for p in params]


@pytest.mark.torch
@pytest.mark.parametrize("name, kwargs", CONFIGS)
def test_matches_torch_for_20_steps(device, name, kwargs):
    torch = pytest.importorskip("torch")
    values, params = make_params(device)
    torch_params = [torch.tensor(v, requires_grad=True) for v in values]
    grads = gradients(20)
    ours = run_minigrad(getattr(optim, name)(params, **kwargs), params, grads, device)
    theirs = run_torch(torch, getattr(torch.optim, name)(torch_params, **kwargs), torch_params, grads)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.torch
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_parameter_groups_match_torch(device, name):
    """Two groups: weights with decay and one lr, 'biases' without decay and another lr (momentum for SGD)."""
    torch = pytest.importorskip("torch")
    values, params = make_params(device)
    torch_params = [torch.tensor(v, requires_grad=True) for v in values]

    def groups(ps):
        return [{"params": [ps[0], ps[2]], "weight_decay": 0.1}, {"params": [ps[1]], "weight_decay": 0.0, "lr": 0.003}]

    extra = {"momentum": 0.9} if name == "SGD" else {}
    grads = gradients(20)
    ours = run_minigrad(getattr(optim, name)(groups(params), lr=0.01, **extra), params, grads, device)
    theirs = run_torch(torch, getattr(torch.optim, name)(groups(torch_params), lr=0.01, **extra), torch_params, grads)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.torch
def test_float32_and_a_real_loss_match_torch(device):
    """float32 parameters, gradients from an actual backward pass, a schedule setting the lr each step."""
    torch = pytest.importorskip("torch")
    layer = nn.Linear(3, 2).to(device)
    torch_layer = torch.nn.Linear(3, 2)
    with torch.no_grad():
        torch_layer.weight.copy_(torch.tensor(layer.weight.numpy()))
        torch_layer.bias.copy_(torch.tensor(layer.bias.numpy()))
    x = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    ours = optim.AdamW(layer.parameters(), lr=0.01, weight_decay=0.1)
    theirs = torch.optim.AdamW(torch_layer.parameters(), lr=0.01, weight_decay=0.1)
    for it in range(20):
        lr = optim.cosine_with_warmup(it, 0.01, warmup_iters=5, decay_iters=20, min_lr=0.001)
        optim.set_lr(ours, lr)
        for group in theirs.param_groups:
            group["lr"] = lr
        ours.zero_grad()
        (layer(mg.tensor(x, device=device)).tanh() ** 2).mean().backward()
        ours.step()
        theirs.zero_grad()
        (torch_layer(torch.tensor(x)).tanh() ** 2).mean().backward()
        theirs.step()
    np.testing.assert_allclose(layer.weight.numpy(), torch_layer.weight.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(layer.bias.numpy(), torch_layer.bias.detach().numpy(), rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------------------------------------
# Hand-computed first steps (no PyTorch needed)
def one_param(device, value, grads):
    p = nn.Parameter(np.array(value), dtype="float64", device=device)
    return p, [[np.array(g)] for g in grads]


def test_sgd_momentum_by_hand(device):
    p, grads = one_param(device, [1.0, -2.0], [[0.5, 1.0], [1.0, -1.0]])
    run_minigrad(optim.SGD([p], lr=0.1, momentum=0.9, weight_decay=0.01), [p], grads, device)
    p1 = np.array([1.0, -2.0]) - 0.1 * (np.array([0.5, 1.0]) + 0.01 * np.array([1.0, -2.0]))
    buf1 = np.array([0.5, 1.0]) + 0.01 * np.array([1.0, -2.0])
    buf2 = 0.9 * buf1 + (np.array([1.0, -1.0]) + 0.01 * p1)
    np.testing.assert_allclose(p.numpy(), p1 - 0.1 * buf2, rtol=1e-12)


def test_adam_first_step_is_lr_times_sign(device):
    """Bias correction makes m_hat = g and v_hat = g**2 on step 1, so the step is lr * g / (|g| + eps)."""
    p, grads = one_param(device, [1.0, -2.0, 0.5], [[0.3, -4.0, 0.0]])
    run_minigrad(optim.Adam([p], lr=0.1), [p], grads, device)
    np.testing.assert_allclose(p.numpy(), [0.9, -1.9, 0.5], rtol=1e-7)


def test_adam_two_steps_by_hand(device):
    p0, g1, g2 = np.array([1.0, -2.0]), np.array([0.5, 1.0]), np.array([-1.0, 2.0])
    lr, b1, b2, eps, wd = 0.01, 0.9, 0.999, 1e-8, 0.1
    p, grads = one_param(device, p0, [g1, g2])
    run_minigrad(optim.Adam([p], lr=lr, weight_decay=wd), [p], grads, device)
    m = v = 0
    expected = p0
    for t, g in enumerate([g1, g2], start=1):
        g = g + wd * expected  # Adam: L2 decay enters the gradient
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g**2
        expected = expected - lr * (m / (1 - b1**t)) / (np.sqrt(v / (1 - b2**t)) + eps)
    np.testing.assert_allclose(p.numpy(), expected, rtol=1e-12)


def test_adamw_decay_is_decoupled(device):
    """AdamW: p1 = p0 * (1 - lr * wd) - lr * sign(g); a zero gradient still decays the weight."""
    p, grads = one_param(device, [1.0, -2.0], [[0.5, 0.0]])
    run_minigrad(optim.AdamW([p], lr=0.1, weight_decay=0.5), [p], grads, device)
    np.testing.assert_allclose(p.numpy(), [1.0 * 0.95 - 0.1, -2.0 * 0.95], rtol=1e-7)


def test_step_skips_parameters_without_grad_and_never_touches_the_gradient(device):
    _, params = make_params(device)
    opt = optim.AdamW(params, lr=0.1, weight_decay=0.1)
    params[0].grad = mg.tensor(np.ones(SHAPES[0]), dtype="float64", device=device)
    before = [p.numpy() for p in params]
    opt.step()
    assert not np.allclose(params[0].numpy(), before[0])
    np.testing.assert_array_equal(params[1].numpy(), before[1])
    np.testing.assert_array_equal(params[0].grad.numpy(), np.ones(SHAPES[0]))
    assert list(opt.state_dict()["state"]) == [0] and opt.state_dict()["state"][0]["step"] == 1


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_updates_in_place(name):
    """The parameter keeps its array (no new allocation), so views of it, e.g. a state_dict, follow."""
    _, params = make_params("cpu", dtype="float32")
    arrays = [p.array for p in params]
    opt = getattr(optim, name)(params, lr=0.1, **({"momentum": 0.9} if name == "SGD" else {}))
    for _ in range(2):
        for p in params:
            p.grad = mg.ones(*p.shape)
        opt.step()
    for p, array in zip(params, arrays):
        assert p.array is array and p.dtype == np.float32


def test_zero_grad(device):
    _, params = make_params(device)
    opt = optim.SGD(params, lr=0.1)
    for p in params:
        p.grad = mg.ones(*p.shape, device=device)
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in params)
    opt.zero_grad()
    assert all(p.grad is None for p in params)


def test_bad_arguments():
    _, params = make_params("cpu")
    with pytest.raises(ValueError, match="empty"):
        optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="twice"):
        optim.Adam([{"params": params[:2]}, {"params": params[1:]}], lr=0.1)
    with pytest.raises(ValueError, match="betas"):
        optim.Adam(params, lr=0.1, betas=(0.9, 1.0))
    with pytest.raises(ValueError, match="lr"):
        optim.AdamW(params, lr=-1.0)
    with pytest.raises(TypeError, match="Tensors"):
        optim.SGD([np.zeros(3)], lr=0.1)


def test_defaults_fill_groups():
    _, params = make_params("cpu")
    opt = optim.AdamW([{"params": params[:1], "weight_decay": 0.0}, {"params": params[1:]}], lr=0.5)
    assert opt.param_groups[0]["weight_decay"] == 0.0 and opt.param_groups[1]["weight_decay"] == 0.01
    assert opt.param_groups[0]["lr"] == 0.5 and opt.param_groups[1]["betas"] == (0.9, 0.999)


# ------------------------------------------------------------------------------------------------------
# state_dict
@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW"])
def test_state_dict_round_trip_through_safetensors_resumes_exactly(device, name, tmp_path):
    kwargs = {"lr": 0.05, "momentum": 0.9} if name == "SGD" else {"lr": 0.05, "weight_decay": 0.1}
    grads = gradients(10)
    _, params = make_params(device)
    opt = getattr(optim, name)([{"params": params[:2]}, {"params": params[2:], "lr": 0.01}], **kwargs)
    run_minigrad(opt, params, grads[:5], device)

    tensors, metadata = optim.flatten_state_dict(opt.state_dict())
    assert all(isinstance(v, str) for v in metadata.values())
    mg.save(tensors, tmp_path / "opt.safetensors", metadata=metadata)
    mg.save({str(i): p for i, p in enumerate(params)}, tmp_path / "params.safetensors")

    # A fresh optimizer over fresh parameters (other values, other hyperparameters) picks up where we were.
    _, resumed_params = make_params(device, seed=7)
    for p, value in zip(resumed_params, mg.load(tmp_path / "params.safetensors", device=device).values()):
        p.array = value.array
    resumed = getattr(optim, name)([{"params": resumed_params[:2]}, {"params": resumed_params[2:]}], lr=1.0)
    path = tmp_path / "opt.safetensors"
    resumed.load_state_dict(optim.unflatten_state_dict(mg.load(path), mg.load_metadata(path)))
    assert resumed.param_groups[1]["lr"] == 0.01
    assert all(isinstance(g.get("betas", ()), tuple) for g in resumed.param_groups)  # JSON lists made tuples again

    a = run_minigrad(opt, params, grads[5:], device)
    b = run_minigrad(resumed, resumed_params, grads[5:], device)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_state_dict_format():
    _, params = make_params("cpu")
    groups = [{"params": params[:2], "weight_decay": 0.1}, {"params": params[2:], "weight_decay": 0.0}]
    opt = optim.AdamW(groups, lr=1e-3)
    for p in params:
        p.grad = mg.ones(*p.shape, dtype="float64")
    opt.step()
    sd = opt.state_dict()
    assert sd["param_groups"][0]["params"] == [0, 1] and sd["param_groups"][1]["params"] == [2]
    assert sd["param_groups"][1]["weight_decay"] == 0.0
    assert set(sd["state"][2]) == {"step", "exp_avg", "exp_avg_sq"} and sd["state"][2]["step"] == 1
    assert isinstance(sd["state"][0]["exp_avg"], mg.Tensor) and sd["state"][0]["exp_avg"].shape == SHAPES[0]


def test_load_state_dict_copies_and_converts():
    """Loading never aliases the given arrays, and casts them to the parameter's dtype."""
    _, params = make_params("cpu", dtype="float32")
    opt = optim.SGD(params, lr=0.1, momentum=0.9)
    state = {i: {"momentum_buffer": np.ones(shape)} for i, shape in enumerate(SHAPES)}
    opt.load_state_dict({"state": state, "param_groups": [{"lr": 0.2, "momentum": 0.5, "params": [0, 1, 2]}]})
    state[0]["momentum_buffer"][...] = 5
    buf = opt.state_dict()["state"][0]["momentum_buffer"]
    assert buf.dtype == np.float32 and buf.numpy().max() == 1
    assert opt.param_groups[0]["lr"] == 0.2 and opt.param_groups[0]["momentum"] == 0.5


def test_load_state_dict_checks_the_groups():
    _, params = make_params("cpu")
    opt = optim.Adam(params, lr=0.1)
    with pytest.raises(ValueError, match="2 parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0]}, {"params": [1, 2]}]})
    with pytest.raises(ValueError, match="2 parameters in the checkpoint, 3 here"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1]}]})


# ------------------------------------------------------------------------------------------------------
# Schedules
def test_cosine_with_warmup():
    lr = lambda it: optim.cosine_with_warmup(it, max_lr=1.0, warmup_iters=10, decay_iters=110, min_lr=0.1)
    assert lr(0) == pytest.approx(1 / 11)
    assert lr(9) == pytest.approx(10 / 11)
    assert lr(10) == pytest.approx(1.0)
    assert lr(60) == pytest.approx(0.55)  # halfway down the cosine: (max + min) / 2
    assert lr(110) == pytest.approx(0.1) and lr(1000) == 0.1
    values = [lr(it) for it in range(200)]
    assert all(a <= b for a, b in zip(values[:10], values[1:11]))  # warmup rises
    assert all(a >= b for a, b in zip(values[10:], values[11:]))  # then never rises again
    assert math.isclose(optim.cosine_with_warmup(5, 1.0, 0, 10, 0.0), 0.5)  # no warmup at all


def test_other_schedules_and_set_lr():
    assert optim.linear_with_warmup(0, 1.0, 4, 14, 0.0) == pytest.approx(0.2)
    assert optim.linear_with_warmup(9, 1.0, 4, 14, 0.0) == pytest.approx(0.5)
    assert optim.linear_with_warmup(20, 1.0, 4, 14, 0.0) == 0.0
    assert optim.constant_with_warmup(1, 1.0, 3) == pytest.approx(0.5)
    assert optim.constant_with_warmup(100, 1.0, 3) == 1.0
    _, params = make_params("cpu")
    opt = optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.5}], lr=0.1)
    optim.set_lr(opt, 0.25)
    assert [g["lr"] for g in opt.param_groups] == [0.25, 0.25]


def test_load_state_dict_rejects_state_for_a_missing_parameter():
    _, params = make_params("cpu")
    opt = optim.SGD(params, lr=0.1, momentum=0.9)
    with pytest.raises(ValueError, match="parameter 5"):
        opt.load_state_dict({"state": {5: {"momentum_buffer": np.zeros(3)}}, "param_groups": [{"params": [0, 1, 2]}]})


# ------------------------------------------------------------------------------------------------------------
# What a PyTorch loop relies on: the optimizer never writes into p.grad, and no state aliases it (each of these
# tests fails on an optimizer that adds weight decay into the gradient in place, or keeps p.grad as its buffer).
STATEFUL_CONFIGS = [
    ("SGD", dict(lr=0.1, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.1, nesterov=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.1)),
    ("AdamW", dict(lr=0.01, weight_decay=0.1)),
]


# The contracts hold for every implementation: in float32 the numba kernels run the update (kernels/numba_adamw.py),
# so each test runs with the kernels on and with the NumPy reference forced, in float32 and float64.
KERNELS = ["numpy", pytest.param("numba", marks=pytest.mark.skipif(not mg.kernels.select.numba_installed(),
                                                                    reason="needs numba (the extra fast)"))]


@pytest.fixture(params=KERNELS)
def kernels(request):
    with mg.kernels.using(request.param):
        yield request.param


def assert_the_kernel_ran(kernels, name, dtype, device):
    """The numba AdamW kernel ran where it should (float32 on the CPU), so the contract was tested through it."""
    if kernels == "numba" and name in ("Adam", "AdamW") and dtype == "float32" and device == "cpu":
        assert mg.kernels.report()["ran"].get("adamw", 0) > 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name, kwargs", STATEFUL_CONFIGS)
def test_a_step_with_weight_decay_leaves_the_gradient_alone(device, name, kwargs, dtype, kernels):
    params = [nn.Parameter(p.numpy(), dtype=dtype, device=device) for p in make_params(device)[1]]
    opt = getattr(optim, name)(params, **kwargs)
    rng = np.random.default_rng(5)
    for _ in range(3):
        grads = [rng.standard_normal(p.shape).astype(dtype) for p in params]
        for p, g in zip(params, grads):
            p.grad = mg.tensor(g, dtype=dtype, device=device)
        before = [p.numpy() for p in params]
        opt.step()
        for p, g, old in zip(params, grads, before):
            np.testing.assert_array_equal(p.grad.numpy(), g)  # the gradient is never written into
            assert not np.array_equal(p.numpy(), old)  # while the parameter did move
            for buffer in opt.state.get(p, {}).values():  # and no state shares p.grad's or p's memory
                if hasattr(buffer, "shape") and not isinstance(buffer, mg.Tensor) and buffer.shape == p.shape:
                    assert not np.shares_memory(mg.Tensor(buffer).numpy(), p.grad.numpy()) or device != "cpu"
                    assert buffer is not p.grad.array and buffer is not p.array
    assert_the_kernel_ran(kernels, name, dtype, device)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("weight_decay", [0.0, 0.1])
@pytest.mark.parametrize("nesterov", [False, True])
def test_sgd_momentum_buffer_does_not_alias_the_gradient(device, weight_decay, nesterov, dtype, kernels):
    params = [nn.Parameter(p.numpy(), dtype=dtype, device=device) for p in make_params(device)[1]]
    opt = optim.SGD(params, lr=0.1, momentum=0.9, weight_decay=weight_decay, nesterov=nesterov)
    for p in params:
        p.grad = mg.tensor(np.ones(p.shape), dtype=dtype, device=device)
    opt.step()
    buffers = [opt.state[p]["momentum_buffer"].copy() for p in params]
    opt.zero_grad(set_to_none=False)  # zeros each p.grad in place: a buffer sharing its array would be zeroed too
    for p, buf in zip(params, buffers):
        assert p.grad is not None and not p.grad.numpy().any()
        np.testing.assert_array_equal(mg.Tensor(opt.state[p]["momentum_buffer"]).numpy(), mg.Tensor(buf).numpy())


@pytest.mark.parametrize("name, kwargs", STATEFUL_CONFIGS)
def test_adam_buffers_survive_zeroing_the_gradient(name, kwargs, kernels):
    """Adam's moments are its own arrays in float32 with the kernels on too: zeroing p.grad in place leaves them."""
    params = [nn.Parameter(np.full((3, 4), 0.5), dtype="float32")]
    opt = getattr(optim, name)(params, **kwargs)
    params[0].grad = mg.ones(3, 4)
    opt.step()
    saved = {key: np.array(mg.Tensor(value).numpy()) for key, value in opt.state.get(params[0], {}).items()
             if hasattr(value, "shape") and np.ndim(value) > 0}
    opt.zero_grad(set_to_none=False)
    for key, value in saved.items():
        np.testing.assert_array_equal(mg.Tensor(opt.state[params[0]][key]).numpy(), value, err_msg=key)
    assert_the_kernel_ran(kernels, name, "float32", "cpu")


@pytest.mark.torch
@pytest.mark.parametrize("name, kwargs", [
    ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9)),
    ("SGD", dict(lr=0.05, momentum=0.9, weight_decay=0.01, nesterov=True)),
    ("Adam", dict(lr=0.01, weight_decay=0.05)),
    ("AdamW", dict(lr=0.01, weight_decay=0.05)),
])
def test_a_pytorch_style_loop_matches_torch_optim_step_by_step(name, kwargs):
    """zero_grad(set_to_none=False), backward, step, six times, on the same model and data: every step's loss and
    parameters agree with torch.optim's, so gradients accumulate into (and are zeroed in) the same arrays."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((16, 3)), rng.standard_normal((16, 1))
    w1, b1, w2, b2 = (rng.standard_normal(s) * 0.5 for s in [(8, 3), (8,), (1, 8), (1,)])

    ours = [nn.Parameter(v, dtype="float64") for v in (w1, b1, w2, b2)]
    theirs = [torch.tensor(v, requires_grad=True) for v in (w1, b1, w2, b2)]
    opt_m, opt_t = getattr(optim, name)(ours, **kwargs), getattr(torch.optim, name)(theirs, **kwargs)
    xm, ym, xt, yt = mg.tensor(x, dtype="float64"), mg.tensor(y, dtype="float64"), torch.tensor(x), torch.tensor(y)
    for step in range(6):
        # forward
        loss_m = ((((xm @ ours[0].T + ours[1]).tanh() @ ours[2].T + ours[3]) - ym) ** 2).mean()
        loss_t = ((((xt @ theirs[0].T + theirs[1]).tanh() @ theirs[2].T + theirs[3]) - yt) ** 2).mean()
        # backward
        opt_m.zero_grad(set_to_none=False)
        opt_t.zero_grad(set_to_none=False)
        loss_m.backward()
        loss_t.backward()
        # update
        opt_m.step()
        opt_t.step()
        assert loss_m.item() == pytest.approx(loss_t.item(), rel=1e-12), f"step {step}"
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-10, atol=1e-12)
