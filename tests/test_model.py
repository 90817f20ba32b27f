"""minigpt's GPT: the config's checks, the layout, equality with a PyTorch nanoGPT, and what attention must obey.

Every model here is tiny (a few thousand parameters), so each test takes a fraction of a second.
"""

import math
from dataclasses import replace

import numpy as np
import pytest
from gpt_helpers import POS_ENCODINGS, random_ids, tiny

import minigrad as mg
from minigpt import GPT, GPTConfig
from minigpt.model import Rotary, sinusoidal_table

# ----------------------------------------------------------------------------------------------------
# The config


@pytest.mark.parametrize("overrides, message", [
    (dict(n_embd=10, n_head=3), "divisible by n_head"),
    (dict(pos_encoding="alibi"), "pos_encoding"),
    (dict(norm_position="sandwich"), "norm_position"),
    (dict(n_embd=6, n_head=2, pos_encoding="rope"), "even"),
    (dict(n_layer=0), "n_layer"),
    (dict(dropout=1.0), "dropout"),
])
def test_config_rejects_bad_values_with_a_clear_error(overrides, message):
    with pytest.raises(ValueError, match=message):
        tiny(**overrides)


def test_config_round_trips_through_a_dict():
    config = tiny(pos_encoding="rope", bias=False)
    assert GPTConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ValueError, match="unknown fields"):
        GPTConfig.from_dict({**config.to_dict(), "n_heads": 4})


# ----------------------------------------------------------------------------------------------------
# Layout and initialisation


def test_parameter_names_follow_nanogpt_and_weights_are_tied():
    model = GPT(tiny(n_layer=1))
    names = list(model.state_dict())
    assert names[:2] == ["transformer.wte.weight", "transformer.wpe.weight"]
    for part in ["ln_1.weight", "ln_1.bias", "attn.c_attn.weight", "attn.c_attn.bias", "attn.c_proj.weight",
                 "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                 "mlp.c_proj.weight", "mlp.c_proj.bias"]:
        assert f"transformer.h.0.{part}" in names
    assert names[-3:] == ["transformer.ln_f.weight", "transformer.ln_f.bias", "lm_head.weight"]
    assert model.lm_head.weight is model.transformer.wte.weight
    assert model.state_dict()["transformer.h.0.attn.c_attn.weight"].shape == (48, 16)  # (out, in), as PyTorch
    # a tied weight is one parameter, counted once
    assert "lm_head.weight" not in dict(model.named_parameters())


def test_bias_false_and_untied_weights():
    model = GPT(tiny(bias=False, tie_weights=False))
    names = set(model.state_dict())
    assert not any(name.endswith(".bias") for name in names)
    assert model.lm_head.weight is not model.transformer.wte.weight
    assert "lm_head.weight" in dict(model.named_parameters())


@pytest.mark.parametrize("pos", ["sinusoidal", "rope", "none"])
def test_fixed_tables_are_not_saved_and_not_trained(pos):
    model = GPT(tiny(pos_encoding=pos))
    assert "transformer.wpe.weight" not in model.state_dict()
    assert all("pos_table" not in n and "rotary" not in n for n, _ in model.named_parameters())
    GPT(tiny(pos_encoding=pos)).load_state_dict(model.state_dict())  # strict load works without the tables


@pytest.mark.parametrize("bias", [True, False])
def test_gpt2_initialisation_as_nanogpt(bias):
    """nanoGPT's GPT.__init__: every Linear and Embedding weight drawn from N(0, 0.02), every c_proj.weight
    (the two residual projections of each block) from N(0, 0.02 / sqrt(2 n_layer)), zero biases, LayerNorm
    gains of one, and the output layer tied to the token embedding."""
    config = tiny(n_layer=8, n_embd=64, n_head=4, vocab_size=64, block_size=64, bias=bias)
    model = GPT(config)
    assert model.lm_head.weight is model.transformer.wte.weight
    residual = 0.02 / math.sqrt(2 * config.n_layer)
    weights = 0
    for name, param in model.named_parameters():
        w = param.numpy().astype(np.float64)
        if w.ndim == 2:
            std = residual if name.endswith("c_proj.weight") else 0.02
            assert abs(w.std() / std - 1) < 0.1, name
            assert abs(w.mean()) < 5 * std / math.sqrt(w.size), name
            kurtosis = ((w - w.mean()) ** 4).mean() / w.var() ** 2
            assert abs(kurtosis - 3) < 0.5, f"{name}: not normal (kurtosis {kurtosis:.2f}; uniform's is 1.8)"
            weights += 1
        elif name.endswith(".bias"):
            np.testing.assert_array_equal(w, 0.0, err_msg=name)
        else:
            np.testing.assert_array_equal(w, 1.0, err_msg=name)  # a LayerNorm gain
    assert weights == 2 + 4 * config.n_layer  # wte (= lm_head), wpe, and four Linear layers a block
    assert any(name.endswith(".bias") for name, _ in model.named_parameters()) == bias


# ----------------------------------------------------------------------------------------------------
# Forward: shapes, dtypes, errors


@pytest.mark.parametrize("pos", POS_ENCODINGS)
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_forward_shapes_dtypes_and_every_gradient(device, pos, norm):
    model = GPT(tiny(pos_encoding=pos, norm_position=norm)).to(device)
    idx = random_ids((3, 8))
    logits, loss = model(mg.tensor(idx, device=device), idx)
    assert logits.shape == (3, 8, 11) and logits.dtype == np.float32 and logits.device == device
    assert loss.shape == () and loss.dtype == np.float32
    loss.backward()
    for name, param in model.named_parameters():
        assert param.grad is not None, name
        assert param.grad.dtype == np.float32 and param.grad.device == device, name
    assert model(idx)[1] is None


@pytest.mark.parametrize("pos", POS_ENCODINGS)
def test_float64_path(pos):
    model = GPT(tiny(pos_encoding=pos)).to(dtype=np.float64)
    logits, loss = model(random_ids((2, 5)), random_ids((2, 5), seed=1))
    assert logits.dtype == np.float64 and loss.dtype == np.float64


def test_too_long_context_is_a_clear_error():
    with pytest.raises(ValueError, match=r"9.*block_size 8"):
        GPT(tiny())(random_ids((1, 9)))
    with pytest.raises(ValueError, match=r"\(B, T\)"):
        GPT(tiny())(random_ids((8,)))


def test_ignored_targets_do_not_count():
    model = GPT(tiny())
    idx, targets = random_ids((2, 6)), random_ids((2, 6), seed=1)
    masked = targets.copy()
    masked[:, 3:] = -1
    _, loss = model(idx, masked)
    logits, _ = model(idx)
    log_probs = logits.log_softmax().numpy()
    rows = np.arange(2)[:, None], np.arange(3)[None, :], targets[:, :3]
    np.testing.assert_allclose(loss.item(), -log_probs[rows].mean(), rtol=1e-5)


def test_dropout_is_active_only_in_training_mode():
    model = GPT(tiny(dropout=0.5))
    idx = random_ids((2, 8))
    a, b = model(idx)[0].numpy(), model(idx)[0].numpy()
    assert not np.allclose(a, b)
    model.eval()
    np.testing.assert_array_equal(model(idx)[0].numpy(), model(idx)[0].numpy())


# ----------------------------------------------------------------------------------------------------
# Against PyTorch (nanoGPT's model) on identical weights, in float64


@pytest.mark.torch
@pytest.mark.parametrize("overrides", [{}, dict(bias=False), dict(tie_weights=False, n_head=4)])
def test_logits_loss_and_gradients_equal_pytorch(device, overrides):
    torch = pytest.importorskip("torch")
    from minigpt.testing.torch_gpt import load_minigpt

    model = GPT(tiny(**overrides)).to(dtype=np.float64)
    reference = load_minigpt(model)
    model.to(device)
    idx, targets = random_ids((3, 8)), random_ids((3, 8), seed=1)
    logits, loss = model(idx, targets)
    loss.backward()
    ref_logits, ref_loss = reference(torch.from_numpy(idx), torch.from_numpy(targets))
    ref_loss.backward()
    np.testing.assert_allclose(logits.numpy(), ref_logits.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(loss.item(), ref_loss.item(), rtol=1e-12)
    ref_params = dict(reference.named_parameters())
    for name, param in model.named_parameters():
        ref_grad = ref_params[name].grad.numpy()
        np.testing.assert_allclose(param.grad.numpy(), ref_grad, rtol=1e-9, atol=1e-12, err_msg=name)


# ----------------------------------------------------------------------------------------------------
# What attention must obey


@pytest.mark.parametrize("pos", POS_ENCODINGS)
@pytest.mark.parametrize("norm", ["pre", "post"])
def test_causal_mask_hides_the_future(device, pos, norm):
    model = GPT(tiny(pos_encoding=pos, norm_position=norm)).to(device)
    idx = random_ids((2, 8))
    logits = model(idx)[0].numpy()
    for t in [0, 3, 7]:
        changed = idx.copy()
        changed[:, t] = (changed[:, t] + 1) % 11
        new_logits = model(changed)[0].numpy()
        np.testing.assert_allclose(new_logits[:, :t], logits[:, :t], rtol=1e-5, atol=1e-6)
        assert not np.allclose(new_logits[:, t], logits[:, t])


@pytest.mark.parametrize("pos", POS_ENCODINGS)
def test_unmasked_attention_is_permutation_equivariant_only_without_positions(pos):
    model = GPT(tiny(pos_encoding=pos)).to(dtype=np.float64)
    for block in model.transformer.h:
        block.attn.causal = False  # bidirectional attention: no token order left, unless positions add it
    idx = np.arange(8)[None, :]
    perm = np.random.default_rng(0).permutation(8)
    logits = model(idx)[0].numpy()
    permuted = model(idx[:, perm])[0].numpy()
    if pos == "none":
        np.testing.assert_allclose(permuted, logits[:, perm], rtol=1e-10, atol=1e-12)
    else:
        assert not np.allclose(permuted, logits[:, perm], atol=1e-6)


def test_rope_scores_depend_only_on_relative_position():
    rotary = Rotary(head_size=8, block_size=32).to(dtype=np.float64)
    rng = np.random.default_rng(0)
    q, k = (mg.tensor(rng.standard_normal((1, 1, 1, 8)), dtype=np.float64) for _ in range(2))

    def score(m, n):  # q at position m, k at position n
        return (rotary(q, m) * rotary(k, n)).sum().item()

    for m, n in [(5, 2), (9, 9), (3, 7)]:
        for shift in [1, 4, 20]:
            assert score(m + shift, n + shift) == pytest.approx(score(m, n), rel=1e-6)  # float32 tables
    assert score(5, 2) != pytest.approx(score(5, 3))
    np.testing.assert_allclose(rotary(q, 0).numpy(), q.numpy())  # position 0 is not rotated
    np.testing.assert_allclose(np.linalg.norm(rotary(q, 13).numpy()), np.linalg.norm(q.numpy()))  # a rotation


def test_sinusoidal_table():
    table = sinusoidal_table(16, 6)
    assert table.shape == (16, 6) and table.dtype == np.float32
    np.testing.assert_allclose(table[:, 0], np.sin(np.arange(16)), atol=1e-6)
    np.testing.assert_allclose(table[:, 1], np.cos(np.arange(16)), atol=1e-6)
    assert sinusoidal_table(4, 5).shape == (4, 5)


@pytest.mark.parametrize("pos", POS_ENCODINGS)
def test_attention_maps(device, pos):
    model = GPT(tiny(pos_encoding=pos, dropout=0.1)).to(device)
    maps = model.attention_maps(random_ids((2, 6)))
    assert model.training  # the mode is restored
    assert len(maps) == 2
    for attention in maps:
        assert isinstance(attention, np.ndarray) and attention.shape == (2, 2, 6, 6)
        np.testing.assert_allclose(attention.sum(axis=-1), 1.0, rtol=1e-5)
        assert not np.triu(attention, k=1).any()  # no weight on the future
    assert all(block.attn.attention is None for block in model.transformer.h)


# ----------------------------------------------------------------------------------------------------
# Both normalisation placements learn


@pytest.mark.parametrize("norm", ["pre", "post"])
def test_loss_falls_when_training(norm):
    model = GPT(tiny(norm_position=norm, vocab_size=8, n_embd=32, n_head=4))
    text = np.tile(np.array([0, 1, 2, 3, 4, 5, 6, 7, 6, 5, 4, 3, 2, 1]), 6)
    starts = np.random.default_rng(0).integers(0, len(text) - 9, size=16)
    x = np.stack([text[s:s + 8] for s in starts])
    y = np.stack([text[s + 1:s + 9] for s in starts])
    optimizer = mg.optim.AdamW(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(30):
        # forward
        _, loss = model(x, y)
        losses.append(loss.item())
        # backward
        model.zero_grad()
        loss.backward()
        # update
        optimizer.step()
    assert losses[-1] < 0.6 * losses[0], losses


def test_dropout_acts_in_training_mode_only():
    """Attention and residual dropout: random in train mode, the identity in eval mode."""
    mg.manual_seed(0)
    config = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=16, dropout=0.3)
    model = GPT(config)
    idx = np.random.default_rng(0).integers(0, 11, (2, 8))
    first, _ = model(idx)
    second, _ = model(idx)
    assert not np.allclose(first.numpy(), second.numpy())
    model.eval()
    plain = GPT(replace(config, dropout=0.0))
    plain.load_state_dict(model.state_dict())
    np.testing.assert_allclose(model(idx)[0].numpy(), plain(idx)[0].numpy(), rtol=1e-6)
