"""nn modules: shapes, parameter names and order, state_dict round trips and strict errors, modes, devices,
initialisers and gradient clipping (against PyTorch where installed)."""

import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn


class Block(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.ln = nn.LayerNorm(dim)
        self.fc = nn.Linear(dim, 2 * dim)
        self.proj = nn.Linear(2 * dim, dim, bias=False)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return x + self.drop(self.proj(self.fc(self.ln(x)).gelu()))


class TinyLM(nn.Module):
    """Embedding, a ModuleList of blocks, a head tied to the embedding (as GPT-2 does)."""

    def __init__(self, vocab=7, dim=4, n_layer=2):
        super().__init__()
        self.wte = nn.Embedding(vocab, dim)
        self.h = nn.ModuleList([Block(dim) for _ in range(n_layer)])
        self.ln_f = nn.LayerNorm(dim)
        self.lm_head = nn.Linear(dim, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # weight tying
        self.register_buffer("pos", mg.arange(3))

    def forward(self, ids):
        x = self.wte(ids)
        for block in self.h:
            x = block(x)
        return self.lm_head(self.ln_f(x))


PARAM_NAMES = ["wte.weight", "h.0.ln.weight", "h.0.ln.bias", "h.0.fc.weight", "h.0.fc.bias", "h.0.proj.weight",
               "h.1.ln.weight", "h.1.ln.bias", "h.1.fc.weight", "h.1.fc.bias", "h.1.proj.weight", "ln_f.weight",
               "ln_f.bias"]


def test_parameter_names_in_definition_order_and_tied_weights_once():
    model = TinyLM()
    assert [name for name, _ in model.named_parameters()] == PARAM_NAMES
    assert len(list(model.parameters())) == len(PARAM_NAMES)
    assert model.num_parameters() == 7 * 4 + 2 * (4 + 4 + 32 + 8 + 32) + 8
    # The state_dict holds the tied weight under both names and the persistent buffer, module by module
    # (each module's own parameters and buffers before its children's), as PyTorch orders them.
    assert list(model.state_dict()) == ["pos"] + PARAM_NAMES + ["lm_head.weight"]
    assert model.state_dict()["lm_head.weight"].array is model.wte.weight.array


def test_children_and_modules():
    model = TinyLM()
    assert [type(m).__name__ for m in model.children()] == ["Embedding", "ModuleList", "LayerNorm", "Linear"]
    assert [name for name, _ in model.named_modules()][:5] == ["", "wte", "h", "h.0", "h.0.ln"]


def test_linear(device):
    layer = nn.Linear(3, 5).to(device)
    assert layer.weight.shape == (5, 3) and layer.bias.shape == (5,)
    bound = 1 / math.sqrt(3)  # PyTorch's default: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias
    assert np.abs(layer.weight.numpy()).max() <= bound and np.abs(layer.bias.numpy()).max() <= bound
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    y = layer(mg.tensor(x, device=device))
    assert y.shape == (2, 4, 5) and y.device == device
    np.testing.assert_allclose(y.numpy(), x @ layer.weight.numpy().T + layer.bias.numpy(), rtol=1e-5, atol=1e-6)
    assert nn.Linear(3, 5, bias=False).bias is None
    assert [n for n, _ in nn.Linear(3, 5, bias=False).named_parameters()] == ["weight"]


def test_linear_init_spread_matches_pytorch():
    """U(-b, b) has standard deviation b / sqrt(3)."""
    weight = nn.Linear(400, 300).weight.numpy()
    assert weight.std() == pytest.approx(1 / math.sqrt(400) / math.sqrt(3), rel=0.02)
    assert abs(weight.mean()) < 1e-3


def test_embedding_layernorm_dropout_gelu(device):
    emb = nn.Embedding(10, 4).to(device)
    ids = np.array([[1, 2, 3], [9, 0, 1]])
    out = emb(ids)
    assert out.shape == (2, 3, 4)
    np.testing.assert_array_equal(out.numpy(), emb.weight.numpy()[ids])

    ln = nn.LayerNorm(4).to(device)
    np.testing.assert_array_equal(ln.weight.numpy(), np.ones(4))
    np.testing.assert_array_equal(ln.bias.numpy(), np.zeros(4))
    y = ln(out).numpy()
    np.testing.assert_allclose(y.mean(-1), 0, atol=1e-6)
    np.testing.assert_allclose(y.var(-1), 1, atol=1e-3)

    drop = nn.Dropout(0.5)
    x = mg.ones(1000, device=device)
    kept = drop(x).numpy()
    assert set(np.unique(kept)) <= {0.0, 2.0} and 400 < (kept > 0).sum() < 600
    drop.eval()
    assert drop(x) is x
    with pytest.raises(ValueError, match="p must be"):
        nn.Dropout(1.0)

    z = np.linspace(-3, 3, 7).astype(np.float32)
    exact = np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in z.astype(np.float64)])
    np.testing.assert_allclose(nn.GELU()(mg.tensor(z, device=device)).numpy(), exact, rtol=1e-6, atol=1e-7)
    tanh_form = 0.5 * z * (1 + np.tanh(math.sqrt(2 / math.pi) * (z + 0.044715 * z**3)))
    np.testing.assert_allclose(nn.GELU("tanh")(mg.tensor(z, device=device)).numpy(), tanh_form, rtol=1e-5, atol=1e-6)


def test_sequential_and_modulelist():
    seq = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1))
    assert len(seq) == 3 and isinstance(seq[0], nn.Linear) and isinstance(seq[-1], nn.Linear)
    assert isinstance(seq[:2], nn.Sequential) and len(seq[:2]) == 2
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    x = mg.randn(4, 2)
    np.testing.assert_allclose(seq(x).numpy(), seq[2](seq[1](seq[0](x))).numpy())
    layers = nn.ModuleList([nn.Linear(2, 2)]).append(nn.Linear(2, 3))
    assert len(layers) == 2 and layers[1].out_features == 3 and len(layers[:1]) == 1
    assert [n for n, _ in layers.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias"]


def test_forward_backward_on_every_device(device):
    model = TinyLM().to(device)
    logits = model(np.array([[1, 2, 3]]))
    assert logits.shape == (1, 3, 7) and logits.device == device
    F.cross_entropy(logits.reshape(-1, 7), np.array([2, 3, 4])).backward()
    for name, p in model.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape and p.grad.device == device, name
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_train_eval_propagate():
    model = TinyLM()
    assert all(m.training for m in model.modules())
    assert model.eval() is model and not any(m.training for m in model.modules())
    model.train()
    assert model.h[1].drop.training


def test_state_dict_round_trip_through_save_and_load(device, tmp_path):
    model = TinyLM().to(device).eval()
    mg.save(model.state_dict(), tmp_path / "m.safetensors")
    mg.manual_seed(1)
    other = TinyLM().to(device).eval()
    ids = np.array([[0, 5, 6]])
    assert not np.allclose(model(ids).numpy(), other(ids).numpy())
    missing, unexpected = other.load_state_dict(mg.load(tmp_path / "m.safetensors", device=device))
    assert missing == [] and unexpected == []
    np.testing.assert_array_equal(model(ids).numpy(), other(ids).numpy())
    assert other.lm_head.weight is other.wte.weight  # still tied after loading


def test_load_state_dict_accepts_arrays_from_any_device_and_copies_in_place():
    model = nn.Linear(2, 3)
    weight_array = model.weight.array
    sd = {"weight": mg.ones(3, 2, device="strict", dtype="float64"), "bias": np.zeros(3)}
    model.load_state_dict(sd)
    assert model.weight.array is weight_array and model.weight.dtype == np.float32
    np.testing.assert_array_equal(model.weight.numpy(), np.ones((3, 2)))
    sd["bias"][:] = 5  # no aliasing of the given arrays
    np.testing.assert_array_equal(model.bias.numpy(), np.zeros(3))


def test_load_state_dict_strict_errors_list_every_problem():
    model = TinyLM()
    before = model.wte.weight.numpy()
    sd = {name: t.numpy() for name, t in model.state_dict().items()}
    del sd["h.0.fc.bias"], sd["ln_f.weight"]
    sd["h.2.fc.bias"] = np.zeros(8)
    sd["h.1.proj.weight"] = np.zeros((4, 4))
    sd["wte.weight"] = sd["lm_head.weight"] = np.zeros_like(before)  # one tied tensor, two names
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(sd)
    message = str(info.value)
    for text in ["TinyLM", "Missing key(s) in state_dict", '"h.0.fc.bias"', '"ln_f.weight"',
                 'Unexpected key(s) in state_dict: "h.2.fc.bias"', "size mismatch for h.1.proj.weight", "(4, 4)",
                 "(4, 8)"]:
        assert text in message
    np.testing.assert_array_equal(model.wte.weight.numpy(), before)  # nothing loaded on error

    del sd["h.1.proj.weight"]
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert missing == ["h.0.fc.bias", "h.1.proj.weight", "ln_f.weight"] and unexpected == ["h.2.fc.bias"]
    assert not model.wte.weight.numpy().any()
    with pytest.raises(RuntimeError, match="size mismatch"):
        model.load_state_dict({"wte.weight": np.zeros((2, 2))}, strict=False)


def test_to_device_and_dtype_moves_parameters_buffers_and_grads():
    model = TinyLM()
    model.register_buffer("table", mg.ones(2), persistent=False)
    model(np.array([[1]])).sum().backward()
    params = list(model.parameters())
    model.to("strict")
    assert all(a is b for a, b in zip(model.parameters(), params))  # the same Parameter objects
    assert all(p.device == "strict" and p.grad.device == "strict" for p in model.parameters())
    assert model.pos.device == "strict" and model.table.device == "strict"
    assert "table" not in model.state_dict()
    model.to("cpu", dtype="float64")
    assert all(p.dtype == np.float64 and p.device == "cpu" for p in model.parameters())
    assert model.pos.dtype == np.int64  # integer buffers keep their dtype


def test_buffers():
    model = nn.Module()
    model.register_buffer("mask", mg.ones(2, 2))
    model.mask = mg.zeros(2, 2)  # reassigning keeps it a buffer
    assert list(model.state_dict()) == ["mask"] and not model.state_dict()["mask"].numpy().any()
    model.weight = nn.Parameter(np.ones(2))
    del model.weight
    assert list(model.named_parameters()) == []
    with pytest.raises(AttributeError, match="super"):
        class Broken(nn.Module):
            def __init__(self):
                self.w = nn.Parameter(np.ones(2))

        Broken()


def test_init_helpers_fill_in_place():
    t = nn.Parameter(np.zeros((200, 50)))
    array = t.array
    nn.init.normal_(t, mean=1.0, std=0.02)
    assert t.array is array and abs(t.numpy().mean() - 1.0) < 1e-3 and abs(t.numpy().std() - 0.02) < 1e-3
    nn.init.uniform_(t, -0.5, 0.5)
    assert -0.5 <= t.numpy().min() and t.numpy().max() <= 0.5
    nn.init.zeros_(t)
    assert not t.numpy().any()
    nn.init.ones_(t)
    assert (t.numpy() == 1).all()
    nn.init.constant_(t, 3.0)
    assert (t.numpy() == 3).all() and t.dtype == np.float32
    s = nn.Parameter(np.zeros(3), device="strict")
    nn.init.normal_(s)
    assert s.device == "strict" and s.numpy().any()


def test_clip_grad_norm(device):
    params = [nn.Parameter(np.zeros(3), device=device), nn.Parameter(np.zeros(4), device=device)]
    params[0].grad = mg.tensor([3.0, 0.0, 0.0], device=device)
    params[1].grad = mg.tensor([0.0, 4.0, 0.0, 0.0], device=device)
    norm = nn.utils.clip_grad_norm_(params, max_norm=1.0)
    assert isinstance(norm, float) and norm == pytest.approx(5.0)
    clipped = np.concatenate([p.grad.numpy() for p in params])
    assert np.linalg.norm(clipped) == pytest.approx(1.0, rel=1e-5)
    assert nn.utils.clip_grad_norm_(params, max_norm=10.0) == pytest.approx(1.0, rel=1e-5)  # no clipping
    assert np.linalg.norm(np.concatenate([p.grad.numpy() for p in params])) == pytest.approx(1.0, rel=1e-5)
    assert nn.utils.clip_grad_norm_([nn.Parameter(np.zeros(2))], 1.0) == 0.0  # no gradients at all


@pytest.mark.torch
def test_clip_grad_norm_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(s).astype(np.float32) for s in [(3, 4), (5,)]]
    ours = [nn.Parameter(np.zeros_like(g)) for g in grads]
    theirs = [torch.zeros(g.shape, requires_grad=True) for g in grads]
    for p, t, g in zip(ours, theirs, grads):
        p.grad, t.grad = mg.tensor(g), torch.tensor(g)
    norm = nn.utils.clip_grad_norm_(ours, 0.5)
    assert norm == pytest.approx(torch.nn.utils.clip_grad_norm_(theirs, 0.5).item(), rel=1e-6)
    for p, t in zip(ours, theirs):
        np.testing.assert_allclose(p.grad.numpy(), t.grad.numpy(), rtol=1e-6)


@pytest.mark.torch
def test_layers_match_torch():
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    ours = nn.Sequential(nn.Linear(4, 6), nn.GELU(), nn.LayerNorm(6))
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.GELU(), torch.nn.LayerNorm(6))
    theirs.load_state_dict({name: torch.tensor(t.numpy()) for name, t in ours.state_dict().items()})
    assert list(theirs.state_dict()) == list(ours.state_dict())
    np.testing.assert_allclose(ours(mg.tensor(x)).numpy(), theirs(torch.tensor(x)).detach().numpy(), atol=1e-5)


@pytest.mark.torch
def test_assigning_a_submodule_or_parameter_again_keeps_its_place_as_in_pytorch():
    """Swapping a module on a built model (a learner's LayerNorm for the model's) keeps the order of
    parameters() and state_dict(), as PyTorch does: clip_grad_norm_ sums the norms in that order."""
    torch = pytest.importorskip("torch")

    def rebuilt(nn_):
        net = nn_.Sequential(nn_.Linear(2, 3), nn_.LayerNorm(3), nn_.Linear(3, 1))
        net.ln = nn_.LayerNorm(3)
        net.head = nn_.Linear(1, 1)
        setattr(net, "1", nn_.LayerNorm(3))  # the middle module, replaced
        net.ln = nn_.Identity()  # a module with no parameters, replaced in place
        net.head.weight = nn_.Parameter(net.head.weight.detach().clone())  # a parameter, assigned again
        return [name for name, _ in net.named_parameters()], list(net.state_dict())

    assert rebuilt(nn) == rebuilt(torch.nn)
