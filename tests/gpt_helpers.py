"""Tiny GPTs for the minigpt tests: `tiny(**overrides)` (a few thousand parameters, so each test takes a
fraction of a second), `random_ids(shape)` for their inputs, and the positional encodings to sweep.

Read next: test_model.py.
"""

import numpy as np

from minigpt import GPTConfig

POS_ENCODINGS = ["learned", "sinusoidal", "rope", "none"]


def tiny(**overrides) -> GPTConfig:
    values = dict(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=16)
    values.update(overrides)
    return GPTConfig(**values)


def random_ids(shape, vocab=11, seed=0):
    return np.random.default_rng(seed).integers(0, vocab, shape)
