"""The nn modules and Module methods added for PyTorch programs, each against torch.nn: ModuleDict, Identity,
Softmax, LogSoftmax, Tanh, Sigmoid, SiLU, RMSNorm, Flatten, Unflatten, MultiheadAttention, apply,
get_submodule, requires_grad_, weight tying, and load_state_dict's errors in PyTorch's words."""

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

torch = pytest.importorskip("torch")


def same(ours, theirs, atol=1e-10):
    assert ours.shape == tuple(theirs.shape)
    assert str(ours.dtype) == str(theirs.dtype).removeprefix("torch.")
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), atol=atol, rtol=1e-7)


def run_both(make_ours, make_theirs, shape, seed=0):
    """The same float64 input through both modules: output and input gradient (for a random upstream)."""
    rng = np.random.default_rng(seed)
    x, gy = rng.standard_normal(shape), None
    ours, theirs = make_ours(), make_theirs()
    xm, xt = mg.tensor(x, dtype=mg.float64, requires_grad=True), torch.tensor(x, requires_grad=True)
    ym, yt = ours(xm), theirs(xt)
    same(ym, yt)
    gy = rng.standard_normal(tuple(yt.shape))
    (ym * mg.tensor(gy, dtype=mg.float64)).sum().backward()
    (yt * torch.tensor(gy)).sum().backward()
    same(xm.grad, xt.grad)
    return ours, theirs


@pytest.mark.parametrize("ours, theirs, shape", [
    (lambda: nn.Identity(3, flag=True), lambda: torch.nn.Identity(3, flag=True), (2, 3)),
    (lambda: nn.Softmax(dim=1), lambda: torch.nn.Softmax(dim=1), (2, 5, 3)),
    (lambda: nn.LogSoftmax(dim=-1), lambda: torch.nn.LogSoftmax(dim=-1), (4, 6)),
    (lambda: nn.Tanh(), lambda: torch.nn.Tanh(), (3, 4)),
    (lambda: nn.Sigmoid(), lambda: torch.nn.Sigmoid(), (3, 4)),
    (lambda: nn.SiLU(), lambda: torch.nn.SiLU(), (3, 4)),
    (lambda: nn.Flatten(), lambda: torch.nn.Flatten(), (2, 3, 4)),
    (lambda: nn.Flatten(0, 1), lambda: torch.nn.Flatten(0, 1), (2, 3, 4)),
    (lambda: nn.Unflatten(1, (2, 3)), lambda: torch.nn.Unflatten(1, (2, 3)), (4, 6)),
])
def test_stateless_modules_match_pytorch(ours, theirs, shape):
    run_both(ours, theirs, shape)


def test_softmax_needs_a_dim():
    with pytest.raises(TypeError, match="dim"):
        nn.Softmax()(mg.ones(2, 3))


@pytest.mark.parametrize("shape, normalized, eps", [((2, 3, 4), 4, None), ((2, 3, 4), (3, 4), 1e-5)])
def test_rms_norm_matches_pytorch(shape, normalized, eps):
    ours = nn.RMSNorm(normalized, eps=eps, dtype=mg.float64)
    theirs = torch.nn.RMSNorm(normalized, eps=eps, dtype=torch.float64)
    w = np.random.default_rng(1).standard_normal(ours.weight.shape)
    ours.weight.data[...] = w
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor(w))
    run_both(lambda: ours, lambda: theirs, shape)
    same(ours.weight.grad, theirs.weight.grad)
    assert nn.RMSNorm(4).weight.dtype == mg.float32


def test_rms_norm_gradcheck():
    x = mg.tensor(np.random.default_rng(2).standard_normal((3, 4)), dtype=mg.float64, requires_grad=True)
    w = mg.tensor(np.random.default_rng(3).standard_normal(4), dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda x, w: mg.nn.functional.rms_norm(x, 4, w, 1e-6), [x, w])


def _copy_mha(ours, theirs):
    with torch.no_grad():
        for name, p in theirs.named_parameters():
            p.copy_(torch.tensor(dict(ours.named_parameters())[name].numpy()))


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("mask_kind", [None, "bool", "float", "padding"])
def test_multihead_attention_matches_pytorch(batch_first, mask_kind):
    E, nh, B, L = 8, 2, 3, 5
    mg.manual_seed(0)
    ours = nn.MultiheadAttention(E, nh, batch_first=batch_first, dtype=mg.float64)
    theirs = torch.nn.MultiheadAttention(E, nh, batch_first=batch_first, dtype=torch.float64)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    _copy_mha(ours, theirs)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((B, L, E) if batch_first else (L, B, E))
    kwargs_m, kwargs_t = {}, {}
    if mask_kind == "bool":
        causal = np.triu(np.ones((L, L), dtype=bool), 1)  # True = may not attend
        kwargs_m, kwargs_t = {"attn_mask": mg.tensor(causal)}, {"attn_mask": torch.tensor(causal)}
    elif mask_kind == "float":
        bias = rng.standard_normal((L, L))
        kwargs_m = {"attn_mask": mg.tensor(bias, dtype=mg.float64, requires_grad=True)}
        kwargs_t = {"attn_mask": torch.tensor(bias, requires_grad=True)}
    elif mask_kind == "padding":
        pad = np.zeros((B, L), dtype=bool)
        pad[:, -2:] = True
        kwargs_m, kwargs_t = {"key_padding_mask": mg.tensor(pad)}, {"key_padding_mask": torch.tensor(pad)}
    xm, xt = mg.tensor(x, dtype=mg.float64, requires_grad=True), torch.tensor(x, requires_grad=True)
    (ym, wm), (yt, wt) = ours(xm, xm, xm, **kwargs_m), theirs(xt, xt, xt, **kwargs_t)
    same(ym, yt)
    same(wm, wt)
    (ym.sum() + (wm * wm).sum()).backward()
    (yt.sum() + (wt * wt).sum()).backward()
    same(xm.grad, xt.grad, atol=1e-9)
    for (_, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters()):
        same(p.grad, q.grad, atol=1e-9)
    if mask_kind == "float":  # a learned bias gets its gradient, as under PyTorch
        same(kwargs_m["attn_mask"].grad, kwargs_t["attn_mask"].grad, atol=1e-9)
    _, per_head = ours(xm, xm, xm, average_attn_weights=False, **kwargs_m)
    assert per_head.shape == (B, nh, L, L)
    # need_weights=False takes the other path (one scaled_dot_product_attention, its mask flipped to that
    # function's convention): the same output and gradients as PyTorch's.
    for t in (xm, xt, kwargs_m.get("attn_mask"), kwargs_t.get("attn_mask")):
        if t is not None:
            t.grad = None
    ours.zero_grad(), theirs.zero_grad()
    (ym, none), (yt, _) = ours(xm, xm, xm, need_weights=False, **kwargs_m), theirs(xt, xt, xt, need_weights=False,
                                                                                   **kwargs_t)
    assert none is None
    same(ym, yt)
    (ym * ym).sum().backward()
    (yt * yt).sum().backward()
    same(xm.grad, xt.grad, atol=1e-9)
    if mask_kind == "float":
        same(kwargs_m["attn_mask"].grad, kwargs_t["attn_mask"].grad, atol=1e-9)


def test_multihead_attention_errors():
    with pytest.raises(ValueError):
        nn.MultiheadAttention(6, 4)
    with pytest.raises(NotImplementedError):
        nn.MultiheadAttention(4, 2, kdim=3)
    m = nn.MultiheadAttention(4, 2, batch_first=True)
    x = mg.ones(1, 2, 4)
    with pytest.raises(RuntimeError, match="attn_mask"):
        m(x, x, x, is_causal=True)


def test_module_dict_and_tree_walks_match_pytorch():
    def build(lib):
        return lib.nn.ModuleDict(dict(wte=lib.nn.Embedding(5, 4), h=lib.nn.ModuleList(
            [lib.nn.Sequential(lib.nn.Linear(4, 4), lib.nn.Tanh()) for _ in range(2)]), ln_f=lib.nn.LayerNorm(4)))

    ours, theirs = build(mg), build(torch)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert list(ours.keys()) == list(theirs.keys()) and "h" in ours and len(ours) == 3
    assert [type(m).__name__ for m in ours.children()] == [type(m).__name__ for m in theirs.children()]
    assert len(list(ours.modules())) == len(list(theirs.modules()))
    assert isinstance(ours.get_submodule("h.1.0"), nn.Linear)
    assert ours.get_submodule("") is ours
    with pytest.raises(AttributeError, match="has no attribute `zz`"):
        ours.get_submodule("h.zz")
    ours["extra"] = nn.Identity()
    assert list(ours.keys())[-1] == "extra"
    assert isinstance(ours.pop("extra"), nn.Identity) and "extra" not in ours
    with pytest.raises(TypeError):
        ours["bad"] = 3


def test_apply_visits_children_first_then_self():
    def build(lib):
        return lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Sequential(lib.nn.ReLU(), lib.nn.Linear(3, 1)))

    orders = []
    for lib in (mg, torch):
        order = []
        model = build(lib)
        assert model.apply(lambda m, order=order: order.append(type(m).__name__)) is model
        orders.append(order)
    assert orders[0] == orders[1]

    model = build(mg)
    model.apply(lambda m: nn.init.zeros_(m.weight) if isinstance(m, nn.Linear) else None)
    assert all(not m.weight.numpy().any() for m in model.modules() if isinstance(m, nn.Linear))


def test_requires_grad_and_zero_grad():
    model = nn.Linear(3, 2)
    assert model.requires_grad_(False) is model
    assert not any(p.requires_grad for p in model.parameters())
    model.requires_grad_()
    model(mg.ones(1, 3)).sum().backward()
    model.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_weight_tying_by_assignment():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.wte = nn.Embedding(6, 4)
            self.lm_head = nn.Linear(4, 6, bias=False)
            self.wte.weight = self.lm_head.weight  # nanoGPT's tying

    model = Tied()
    assert model.wte.weight is model.lm_head.weight
    assert len(list(model.parameters())) == 1
    assert list(model.state_dict()) == ["wte.weight", "lm_head.weight"]  # as PyTorch: both names saved
    logits = model.lm_head(model.wte(np.array([1, 2])))
    logits.sum().backward()
    assert model.wte.weight.grad is model.lm_head.weight.grad  # one gradient, from both uses


def test_load_state_dict_errors_in_pytorch_words():
    def messages(lib, sd):
        model = lib.nn.Sequential(lib.nn.Linear(2, 3))
        with pytest.raises(RuntimeError) as info:
            model.load_state_dict(sd)
        return str(info.value)

    sd = {"0.weight": np.zeros((3, 2)), "extra": np.zeros(1)}
    ours = messages(mg, {k: mg.tensor(v) for k, v in sd.items()})
    theirs = messages(torch, {k: torch.tensor(v) for k, v in sd.items()})
    assert ours == theirs
    assert 'Missing key(s) in state_dict: "0.bias"' in ours and 'Unexpected key(s) in state_dict: "extra"' in ours
    result = nn.Sequential(nn.Linear(2, 3)).load_state_dict({"0.weight": mg.zeros(3, 2)}, strict=False)
    assert result.missing_keys == ["0.bias"] and result.unexpected_keys == []
    with pytest.raises(RuntimeError, match="size mismatch for 0.weight: copying a param with shape"):
        nn.Sequential(nn.Linear(2, 3)).load_state_dict({"0.weight": mg.zeros(2, 2)}, strict=False)


def test_functional_is_one_module_under_two_names():
    import minigrad.nn.functional as F

    import minigrad.functional
    from minigrad.nn import functional as G

    assert F is minigrad.functional and G is F


def test_module_registration_and_conversion_methods_match_pytorch():
    def build(lib):
        model = lib.nn.Module()
        for i in range(2):
            model.add_module(f"layer{i}", lib.nn.Linear(3, 3))
        model.register_module("head", lib.nn.Linear(3, 1))
        model.register_parameter("scale", lib.nn.Parameter(lib.ones(1)))
        model.register_parameter("unused", None)
        model.register_buffer("steps", lib.zeros(1))
        return model

    ours, theirs = build(mg), build(torch)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in theirs.named_parameters(recurse=False)] == ["scale"]
    assert len(list(ours.parameters(recurse=False))) == 1 and ours.unused is None
    assert len(list(ours.buffers())) == len(list(theirs.buffers())) == 1
    assert ours.get_parameter("layer1.bias") is ours.layer1.bias
    with pytest.raises(AttributeError):
        ours.get_parameter("layer1.nothing")
    with pytest.raises(KeyError):
        ours.add_module("a.b", nn.Identity())
    with pytest.raises(TypeError):
        ours.register_parameter("w", mg.ones(1))
    for method, dtype in [("double", "float64"), ("half", "float16"), ("float", "float32")]:
        getattr(ours, method)()
        getattr(theirs, method)()
        assert str(ours.head.weight.dtype) == dtype == str(theirs.head.weight.dtype).removeprefix("torch.")
    assert ours.to(mg.float64) is ours and ours.head.weight.dtype == mg.float64  # a dtype in the device's place
    assert ours.to("float32").head.weight.dtype == mg.float32
    assert ours.cpu().head.weight.device == "cpu"
