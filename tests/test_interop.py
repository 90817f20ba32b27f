"""nanoGPT interop: weights leave and return unchanged, load into a PyTorch nanoGPT, and other configs are refused."""

import numpy as np
import pytest
from gpt_helpers import tiny

import minigrad as mg
from minigpt import GPT
from minigpt.interop import from_nanogpt, to_nanogpt


def nanogpt_names(n_layer: int, bias: bool = True) -> set[str]:
    names = {"transformer.wte.weight", "transformer.wpe.weight", "transformer.ln_f.weight", "lm_head.weight"}
    layer_weights = ["ln_1", "attn.c_attn", "attn.c_proj", "ln_2", "mlp.c_fc", "mlp.c_proj"]
    for i in range(n_layer):
        names |= {f"transformer.h.{i}.{w}.weight" for w in layer_weights}
        if bias:
            names |= {f"transformer.h.{i}.{w}.bias" for w in layer_weights}
    return names | ({"transformer.ln_f.bias"} if bias else set())


@pytest.mark.parametrize("bias", [True, False])
def test_round_trip_keeps_every_weight_and_the_function(device, bias):
    model = GPT(tiny(bias=bias)).to(device)
    weights = to_nanogpt(model)
    assert set(weights) == nanogpt_names(2, bias)
    assert all(isinstance(w, np.ndarray) for w in weights.values())
    assert weights["transformer.h.1.mlp.c_fc.weight"].shape == (64, 16)  # (out, in): no transposes
    mg.manual_seed(123)  # a different initialisation, overwritten by the load
    loaded = from_nanogpt(weights, tiny(bias=bias), device=device)
    assert loaded.lm_head.weight is loaded.transformer.wte.weight  # still tied
    for name, w in to_nanogpt(loaded).items():
        np.testing.assert_array_equal(w, weights[name], err_msg=name)
    idx = np.random.default_rng(0).integers(0, 11, (2, 8))
    np.testing.assert_array_equal(loaded(idx)[0].numpy(), model(idx)[0].numpy())


def test_from_nanogpt_accepts_tensors_skips_mask_buffers_and_converts_dtype():
    weights = to_nanogpt(GPT(tiny()))
    as_tensors = {name: mg.tensor(w) for name, w in weights.items()}
    as_tensors["transformer.h.0.attn.bias"] = np.tril(np.ones((1, 1, 8, 8)))  # nanoGPT's causal-mask buffer
    model = from_nanogpt(as_tensors, tiny(), dtype=np.float64)
    assert model.transformer.wte.weight.dtype == np.float64
    np.testing.assert_allclose(to_nanogpt(model)["transformer.wpe.weight"], weights["transformer.wpe.weight"])


def test_missing_and_misshapen_weights_are_named():
    weights = to_nanogpt(GPT(tiny()))
    del weights["transformer.h.1.ln_2.bias"]
    with pytest.raises((KeyError, RuntimeError), match=r"transformer\.h\.1\.ln_2\.bias"):
        from_nanogpt(weights, tiny())
    weights = to_nanogpt(GPT(tiny()))
    with pytest.raises((ValueError, RuntimeError), match="transformer.wpe.weight"):
        from_nanogpt(weights, tiny(block_size=16))


@pytest.mark.parametrize("overrides, message", [
    (dict(pos_encoding="rope"), "pos_encoding='rope'"),
    (dict(pos_encoding="sinusoidal"), "pos_encoding='sinusoidal'"),
    (dict(pos_encoding="none"), "pos_encoding='none'"),
    (dict(norm_position="post"), "norm_position='post'"),
])
def test_configs_nanogpt_cannot_express_are_refused(overrides, message):
    model = GPT(tiny(**overrides))
    with pytest.raises(ValueError, match=message):
        to_nanogpt(model)
    with pytest.raises(ValueError, match="learned-position, pre-LN"):
        from_nanogpt(model.state_dict(), tiny(**overrides))


@pytest.mark.torch
def test_weights_load_into_pytorch_nanogpt_and_come_back():
    torch = pytest.importorskip("torch")
    from minigpt.testing.torch_gpt import TorchGPT, load_minigpt

    model = GPT(tiny())
    reference = load_minigpt(model)
    assert isinstance(reference, TorchGPT)
    idx = np.random.default_rng(0).integers(0, 11, (2, 8))
    np.testing.assert_allclose(reference(torch.from_numpy(idx))[0].detach().numpy(), model(idx)[0].numpy(),
                               rtol=1e-4, atol=1e-5)
    back = from_nanogpt(reference.state_dict(), tiny())  # torch tensors straight from PyTorch
    np.testing.assert_array_equal(back(idx)[0].numpy(), model(idx)[0].numpy())
