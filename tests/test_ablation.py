"""The ablation staircase (tutorials/ablation.py): each variant removes exactly its piece, and nothing else.

And the shipped full-size records (tutorials/records/ablation_*.json, written by
tutorials/builders/ablation_staircase.py) keep their schema.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig
from minigrad import nn
from tutorials import ablation
from tutorials.ablation import AblatedBlock, Recipe, UnscaledQKV, build

RECORDS = Path(__file__).resolve().parent.parent / "tutorials" / "records"
CONFIG = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=16)


def ids(seed: int = 1, shape: tuple[int, int] = (2, 8)) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, CONFIG.vocab_size, size=shape)


def logits(model: GPT, x: np.ndarray) -> np.ndarray:
    with mg.no_grad():
        return model(x)[0].numpy()


def test_the_full_variant_is_minigpts_gpt_on_the_same_seed():
    mg.manual_seed(5)
    reference = GPT(CONFIG)
    full = build("full", CONFIG, seed=5)
    assert type(full) is GPT
    ref_state, full_state = reference.state_dict(), full.state_dict()
    assert list(full_state) == list(ref_state)
    assert all(np.array_equal(full_state[k].numpy(), ref_state[k].numpy()) for k in ref_state)
    np.testing.assert_array_equal(logits(full, ids()), logits(reference, ids()))


@pytest.mark.parametrize("variant", ablation.VARIANTS[1:])
def test_every_variant_keeps_the_full_models_weights_and_changes_its_output(variant):
    full, ablated = build("full", CONFIG, seed=2), build(variant, CONFIG, seed=2)
    full_state = full.state_dict()
    shared = [k for k, v in ablated.state_dict().items() if k in full_state and v.shape == full_state[k].shape]
    assert len(shared) >= 5
    for k in shared:  # the same seed draws the same initial weights for every piece a variant keeps
        np.testing.assert_array_equal(ablated.state_dict()[k].numpy(), full_state[k].numpy(), err_msg=k)
    assert not np.allclose(logits(ablated, ids()), logits(full, ids()), atol=1e-6)


def test_no_positions_has_no_position_table_and_one_layer_ignores_the_order_of_earlier_tokens():
    model = build("no_positions", GPTConfig(**{**CONFIG.__dict__, "n_layer": 1}), seed=0)
    assert not any("wpe" in name for name, _ in model.named_parameters())
    x = ids()
    shuffled = x.copy()
    shuffled[:, :-1] = x[:, :-1][:, ::-1]  # the same earlier tokens, in reverse order
    np.testing.assert_allclose(logits(model, shuffled)[:, -1], logits(model, x)[:, -1], atol=1e-5)
    full = build("full", GPTConfig(**{**CONFIG.__dict__, "n_layer": 1}), seed=0)
    assert not np.allclose(logits(full, shuffled)[:, -1], logits(full, x)[:, -1], atol=1e-3)


def test_no_scale_attention_is_attention_with_scale_one():
    model = build("no_scale", CONFIG, seed=0)
    attn = model.transformer.h[0].attn
    assert isinstance(attn.c_attn, UnscaledQKV)
    x = mg.randn(2, 8, CONFIG.n_embd)
    B, T, C = x.shape
    nh, hs = CONFIG.n_head, C // CONFIG.n_head
    qkv = F.linear(x, attn.c_attn.weight, attn.c_attn.bias).reshape(B, T, 3, nh, hs).permute(2, 0, 3, 1, 4)
    with mg.no_grad():
        for scale, close in ((1.0, True), (None, False)):  # scale=None is the usual 1/sqrt(hs)
            y = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], is_causal=True, scale=scale)
            expected = attn.c_proj(y.transpose(1, 2).reshape(B, T, C)).numpy()
            assert np.allclose(attn(x).numpy(), expected, atol=1e-5) == close


def test_one_head_has_one_head_of_the_full_width():
    model = build("one_head", CONFIG, seed=0)
    assert model.config.n_head == 1 and model.config.n_embd == CONFIG.n_embd
    assert all(block.attn.n_head == 1 for block in model.transformer.h)
    assert sum(p.numel() for p in model.parameters()) == sum(p.numel() for p in build("full", CONFIG).parameters())


def test_no_residual_blocks_replace_their_input_instead_of_adding_to_it():
    model = build("no_residual", CONFIG, seed=0)
    block = model.transformer.h[0]
    assert isinstance(block, AblatedBlock) and not block.residual
    x = mg.randn(2, 8, CONFIG.n_embd)
    with mg.no_grad():
        h = block.attn(block.ln_1(x))
        without = block.mlp(block.ln_2(h)).numpy()
        h = x + block.attn(block.ln_1(x))
        with_residual = (h + block.mlp(block.ln_2(h))).numpy()
        np.testing.assert_allclose(block(x).numpy(), without, atol=1e-6)
        assert not np.allclose(block(x).numpy(), with_residual, atol=1e-3)


def test_no_layernorm_has_no_layernorm_modules_or_parameters():
    model = build("no_layernorm", CONFIG, seed=0)
    assert not any(isinstance(m, nn.LayerNorm) for m in model.modules())
    assert not any("ln_" in name for name, _ in model.named_parameters())
    assert any(isinstance(m, nn.LayerNorm) for m in build("full", CONFIG).modules())


def test_no_mlp_blocks_are_attention_only_with_fewer_parameters_and_flops():
    model, full = build("no_mlp", CONFIG, seed=0), build("full", CONFIG, seed=0)
    assert not any(".mlp." in name or "ln_2" in name for name, _ in model.named_parameters())
    block = model.transformer.h[0]
    x = mg.randn(2, 8, CONFIG.n_embd)
    with mg.no_grad():
        np.testing.assert_allclose(block(x).numpy(), (x + block.attn(block.ln_1(x))).numpy(), atol=1e-6)
    assert sum(p.numel() for p in model.parameters()) < sum(p.numel() for p in full.parameters())
    assert ablation.flops_per_token(model) < ablation.flops_per_token(full)


def test_ablated_models_keep_minigpts_parameter_names_and_generate():
    for variant in ("no_residual", "no_mlp", "no_scale"):
        model = build(variant, CONFIG, seed=0)
        names = [name for name, _ in model.named_parameters()]
        assert "transformer.h.0.attn.c_attn.weight" in names and "transformer.h.1.attn.c_proj.weight" in names
        out = model.generate(ids(shape=(1, 3)), 4, temperature=0)
        assert out.shape == (1, 7)


def test_unknown_variants_and_unablatable_configs_are_refused():
    with pytest.raises(ValueError, match="no_attention"):
        build("no_attention", CONFIG)
    with pytest.raises(ValueError, match="pre-LN"):
        build("no_mlp", GPTConfig(**{**CONFIG.__dict__, "norm_position": "post"}))


def test_training_is_equal_compute_and_deterministic():
    recipe = Recipe(n_layer=1, n_head=2, n_embd=16, steps=3, batch=2, lr=1e-3, block=8, warmup=1)
    train_ids = np.random.default_rng(0).integers(0, CONFIG.vocab_size, size=500)
    runs = [ablation.train(build(v, recipe.config(CONFIG.vocab_size)), train_ids, recipe) for v in ("full", "full")]
    assert runs[0] == runs[1] and len(runs[0]) == 3
    assert recipe.tokens == 3 * 2 * 8


RECORD_KEYS = {"variant", "name_zh", "recipe", "config", "steps", "tokens", "params", "flops", "seconds", "cpu",
               "nats", "stderr", "gap", "gap_stderr", "command", "yardstick"}


def test_the_shipped_records_have_every_variant_and_their_schema():
    paths = sorted(RECORDS.glob("ablation_*.json"))
    assert paths, "tutorials/builders/ablation_staircase.py writes tutorials/records/ablation_<size>.json"
    for path in paths:
        record = json.loads(path.read_text(encoding="utf-8"))
        variants = record["variants"]
        assert [v["variant"] for v in variants] == list(ablation.VARIANTS)
        for v in variants:
            assert RECORD_KEYS <= set(v), path
            assert v["tokens"] == v["steps"] * v["recipe"]["batch"] * v["recipe"]["block"]
            assert math.isfinite(v["nats"]) and v["stderr"] > 0
            assert (v["gap"], v["gap_stderr"]) == (0.0, 0.0) if v["variant"] == "full" else v["gap_stderr"] > 0
        assert len({v["tokens"] for v in variants}) == 1, "equal compute: every variant saw the same tokens"
