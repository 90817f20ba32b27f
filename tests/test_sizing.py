"""sizing.py: the parameter count without building the model, and a memory estimate that bounds what a training
step really takes (measured with tracemalloc) without overstating it much."""

import tracemalloc

import numpy as np
import pytest
from gpt_helpers import POS_ENCODINGS, random_ids, tiny

import minigrad as mg
from minigpt import GPT, sizing
from minigrad import nn, optim


@pytest.mark.parametrize("pos_encoding", POS_ENCODINGS)
@pytest.mark.parametrize("changes", [{}, {"bias": False}, {"tie_weights": False}, {"norm_position": "post"},
                                     {"n_layer": 3, "n_embd": 24, "n_head": 3, "vocab_size": 50, "block_size": 5}])
def test_the_parameter_count_is_the_models(pos_encoding, changes):
    config = tiny(pos_encoding=pos_encoding, **changes)
    assert sizing.parameter_count(config) == GPT(config).num_parameters()


def peak_of_a_training_step(config, batch_size):
    tracemalloc.start()
    try:
        model = GPT(config)
        optimizer = optim.AdamW(model.parameters(), lr=1e-3)
        x, y = random_ids((batch_size, config.block_size), config.vocab_size, seed=1), random_ids(
            (batch_size, config.block_size), config.vocab_size, seed=2)
        for _ in range(1):
            logits, loss = model(x, y)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            del logits, loss
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize(("changes", "batch_size"), [
    ({"n_layer": 2, "n_embd": 64, "n_head": 4, "block_size": 32, "vocab_size": 65}, 8),  # the parameters weigh most
    ({"n_layer": 1, "n_embd": 16, "n_head": 4, "block_size": 256, "vocab_size": 65}, 4),  # the attention matrices
    ({"n_layer": 1, "n_embd": 16, "n_head": 2, "block_size": 32, "vocab_size": 2000}, 8),  # the logits
    ({"n_layer": 1, "n_embd": 32, "n_head": 2, "block_size": 128, "vocab_size": 65, "pos_encoding": "rope"}, 4),
])
def test_the_training_estimate_bounds_the_measured_peak(changes, batch_size):
    config = tiny(**changes)
    mg.manual_seed(0)
    measured = peak_of_a_training_step(config, batch_size)
    estimate, largest = sizing.training_bytes(config, batch_size)
    assert measured <= estimate <= 3 * measured, (measured, estimate, largest)


def test_the_largest_part_is_named_with_its_shape():
    estimate, largest = sizing.training_bytes(tiny(block_size=100_000, n_head=4, n_embd=128, n_layer=4), 12)
    assert largest == "attention matrices, 4 layers of 3 (B, nh, T, T) = (12, 4, 100000, 100000)"
    assert sizing.format_bytes(estimate) == "21 TiB"
    assert [sizing.format_bytes(n) for n in (0, 1023, 1536, 3 * 2**29)] == ["0 bytes", "1023 bytes", "1.5 KiB",
                                                                           "1.5 GiB"]


def test_the_machine_says_what_memory_it_has():
    available = sizing.available_memory()
    assert available is None or 2**20 < available < 2**60
    assert np.isscalar(available) or available is None
