"""Generation: the KV cache gives exactly the tokens of recomputation, and the sampler draws what it should."""

import numpy as np
import pytest
from gpt_helpers import POS_ENCODINGS, random_ids, tiny

import minigrad as mg
from minigpt import GPT
from minigpt.model import KVCache
from minigpt.sampling import next_token, sample, softmax, top_k_filter, top_p_filter


def generate_seeded(model, idx, seed=1, **kwargs):
    mg.manual_seed(seed)
    return model.generate(idx, **kwargs)


# ----------------------------------------------------------------------------------------------------
# The KV cache


@pytest.mark.parametrize("pos", POS_ENCODINGS)
@pytest.mark.parametrize("norm", ["pre", "post"])
@pytest.mark.parametrize("prompt_length", [1, 5, 8, 11])  # shorter than, equal to and longer than block_size
def test_cache_gives_the_tokens_of_recomputation(device, pos, norm, prompt_length):
    model = GPT(tiny(pos_encoding=pos, norm_position=norm)).to(device)
    idx = random_ids((2, prompt_length))
    options = dict(max_new_tokens=12, temperature=1.0, top_k=8)  # runs well past block_size
    cached = generate_seeded(model, idx, use_cache=True, **options)
    recomputed = generate_seeded(model, idx, use_cache=False, **options)
    assert cached.shape == (2, prompt_length + 12)
    np.testing.assert_array_equal(cached, recomputed)
    np.testing.assert_array_equal(cached[:, :prompt_length], idx)


@pytest.mark.parametrize("pos", POS_ENCODINGS)
def test_cached_logits_equal_full_forward(device, pos):
    model = GPT(tiny(pos_encoding=pos)).to(device)
    idx = random_ids((2, 8))
    full = model(idx)[0].numpy()
    with mg.no_grad():
        cache = KVCache(model.config.n_layer, model.config.block_size)
        pieces = [model(idx[:, :3], kv_cache=cache)[0].numpy()]  # a prompt, then one token at a time
        pieces += [model(idx[:, t:t + 1], kv_cache=cache)[0].numpy() for t in range(3, 8)]
    assert cache.length == 8
    np.testing.assert_allclose(np.concatenate(pieces, axis=1), full, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("use_cache, fed", [
    (True, [3, 1, 1, 1, 1, 1, 8, 8, 8, 8]),  # the prompt once, then one token a step until the window slides
    (False, [3, 4, 5, 6, 7, 8, 8, 8, 8, 8]),  # the whole (cropped) context every step
])
def test_what_each_step_feeds_the_model(monkeypatch, use_cache, fed):
    model = GPT(tiny())
    seen = []
    hidden_states = model.hidden_states

    def recording(idx, kv_cache=None):
        seen.append(idx.shape[1])
        x = hidden_states(idx, kv_cache)
        assert x.grad_fn is None and not x.requires_grad  # generation records no graph
        return x

    monkeypatch.setattr(model, "hidden_states", recording)
    model.generate(random_ids((1, 3)), max_new_tokens=10, use_cache=use_cache)
    assert seen == fed


def test_cache_errors():
    model = GPT(tiny())
    cache = KVCache(model.config.n_layer, model.config.block_size)
    with pytest.raises(RuntimeError, match="no_grad"):
        model(random_ids((1, 2)), kv_cache=cache)
    with mg.no_grad():
        model(random_ids((1, 6)), kv_cache=cache)
        with pytest.raises(ValueError, match="block_size 8"):
            model(random_ids((1, 3)), kv_cache=cache)


def test_generate_builds_no_graph_and_returns_the_input_kind(device):
    model = GPT(tiny()).to(device)
    out = model.generate(mg.tensor(random_ids((1, 3)), device=device), max_new_tokens=4)
    assert isinstance(out, mg.Tensor) and out.device == device and out.shape == (1, 7)
    assert out.dtype == np.int64 and not out.requires_grad
    out = model.generate(random_ids((1, 3)).tolist(), max_new_tokens=2)
    assert isinstance(out, np.ndarray) and out.shape == (1, 5)
    assert all(p.grad is None for p in model.parameters()) and mg.is_grad_enabled()
    with pytest.raises(ValueError, match=r"\(B, T\)"):
        model.generate(np.zeros((3,), dtype=np.int64), max_new_tokens=1)


def test_same_seed_same_tokens():
    model = GPT(tiny())
    idx = random_ids((3, 2))
    a = generate_seeded(model, idx, max_new_tokens=10, seed=5)
    b = generate_seeded(model, idx, max_new_tokens=10, seed=5)
    c = generate_seeded(model, idx, max_new_tokens=10, seed=6)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


@pytest.mark.torch
@pytest.mark.parametrize("use_cache", [True, False])
def test_greedy_generation_equals_pytorch(use_cache):
    torch = pytest.importorskip("torch")
    from minigpt.testing.torch_gpt import load_minigpt

    model = GPT(tiny(n_embd=32, n_head=4))
    for p in model.parameters():  # larger weights, so the greedy path is far from ties
        p.data = p.data * 20
    reference = load_minigpt(model)
    idx = random_ids((2, 3))
    ours = model.generate(idx, max_new_tokens=12, temperature=0, use_cache=use_cache)
    theirs = reference.generate(torch.from_numpy(idx), max_new_tokens=12).numpy()
    np.testing.assert_array_equal(ours, theirs)
    assert len(np.unique(ours[:, 3:])) > 1  # not a degenerate repeat of one token


# ----------------------------------------------------------------------------------------------------
# The sampler


def test_top_k_never_leaves_the_top_k():
    rng = np.random.default_rng(0)
    logits = rng.standard_normal((4, 20))
    top3 = np.argsort(-logits, axis=-1)[:, :3]
    filtered = top_k_filter(logits, 3)
    assert (np.isfinite(filtered).sum(axis=-1) == 3).all()
    generator = np.random.default_rng(1)
    for _ in range(300):
        ids = next_token(logits, temperature=2.0, top_k=3, rng=generator)
        assert all(ids[b] in top3[b] for b in range(4))
    assert (np.isfinite(top_k_filter(logits, 100)).all())  # k above the vocabulary keeps everything


def test_top_p_keeps_the_smallest_nucleus_and_tends_to_greedy():
    logits = np.log(np.array([[0.5, 0.1, 0.3, 0.1]]))
    assert np.isfinite(top_p_filter(logits, 0.5)).tolist() == [[True, False, False, False]]
    assert np.isfinite(top_p_filter(logits, 0.6)).tolist() == [[True, False, True, False]]
    assert np.isfinite(top_p_filter(logits, 1.0)).all()
    rng = np.random.default_rng(0)
    generator = np.random.default_rng(1)
    for _ in range(50):
        logits = rng.standard_normal((3, 30)) * 3
        np.testing.assert_array_equal(next_token(logits, top_p=1e-9, rng=generator), logits.argmax(axis=-1))
    with pytest.raises(ValueError, match="top_p"):
        top_p_filter(logits, 0.0)


def test_temperature_zero_is_greedy_and_draws_nothing():
    logits = np.random.default_rng(0).standard_normal((5, 9))
    mg.manual_seed(3)
    state = mg.random.get_rng_state()
    np.testing.assert_array_equal(next_token(logits, temperature=0), logits.argmax(axis=-1))
    assert mg.random.get_rng_state() == state


@pytest.mark.parametrize("temperature", [1.0, 0.5])
def test_sampling_follows_the_softmax(temperature):
    logits = np.array([1.0, 0.0, -1.0, 2.0, 0.5, -np.inf])
    expected = softmax(logits / temperature)
    generator = np.random.default_rng(1)  # a fixed seed: the test is deterministic, the thresholds honest
    n = 40_000
    ids = next_token(np.tile(logits, (n, 1)), temperature=temperature, rng=generator)
    frequencies = np.bincount(ids, minlength=6) / n
    assert frequencies[5] == 0  # probability 0 is never drawn
    assert 0.5 * np.abs(frequencies - expected).sum() < 0.01  # total variation
    # Pearson's chi-square over the 5 possible tokens (4 degrees of freedom; 0.999 quantile is 18.5)
    chi2 = (n * (frequencies[:5] - expected[:5]) ** 2 / expected[:5]).sum()
    assert chi2 < 18.5


def test_sample_handles_unnormalised_rows():
    ids = sample(np.array([[0.0, 2.0, 0.0], [1.0, 0.0, 0.0]]), np.random.default_rng(0))
    np.testing.assert_array_equal(ids, [1, 0])
