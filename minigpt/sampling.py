"""Choosing the next token from the model's logits: temperature, top-k, top-p, and the draw itself.

All of it runs on the host in float64 on one row of logits per sequence, (B, V): it is tiny next to the
model, and drawing from minigrad's seeded host generator makes generation repeatable with `mg.manual_seed`
and identical with and without the KV cache (both paths make the same draws in the same order).
model.py's `GPT.generate` calls `next_token` once per step.
Read next: tokenizer.py.
"""

from __future__ import annotations

import numpy as np

from minigrad import random


def softmax(logits: np.ndarray) -> np.ndarray:
    """Probabilities over the last axis; -inf logits get probability exactly 0."""
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def top_k_filter(logits: np.ndarray, k: int) -> np.ndarray:
    """A copy of `logits` (B, V) with every logit below the k-th largest of its row set to -inf.

    Sampling then never leaves the k most likely tokens (ties with the k-th are kept, as in nanoGPT).
    """
    if k < 1:
        raise ValueError(f"top_k must be at least 1, got {k}")
    k = min(k, logits.shape[-1])
    kth_largest = np.partition(logits, -k, axis=-1)[..., -k, None]  # (B, 1)
    return np.where(logits < kth_largest, -np.inf, logits)


def top_p_filter(logits: np.ndarray, p: float) -> np.ndarray:
    """Nucleus filtering: keep the smallest set of most likely tokens whose probabilities sum to at least p.

    Sorted from most to least likely, a token is kept while the probability mass before it is below p,
    so the most likely token is always kept and p -> 0 becomes greedy decoding.
    """
    if not 0 < p <= 1:
        raise ValueError(f"top_p must be in (0, 1], got {p}")
    if p == 1:
        return logits.copy()
    order = np.argsort(-logits, axis=-1, kind="stable")  # (B, V) most likely first
    sorted_probs = np.take_along_axis(softmax(logits), order, axis=-1)
    mass_before = np.cumsum(sorted_probs, axis=-1) - sorted_probs  # (B, V)
    drop_sorted = mass_before >= p
    drop_sorted[..., 0] = False  # never drop the most likely token
    drop = np.empty_like(drop_sorted)
    np.put_along_axis(drop, order, drop_sorted, axis=-1)  # back to vocabulary order
    return np.where(drop, -np.inf, logits)


def sample(probs: np.ndarray, rng: np.random.Generator | None = None) -> np.ndarray:
    """One id per row of `probs` (B, V), by inverting the cumulative distribution with one uniform draw per row.

    Token j is chosen when cdf[j-1] <= u * total < cdf[j]: an interval of width probs[j], so a token of
    probability 0 is never chosen. Exactly one draw per row keeps the generator's sequence predictable.
    """
    rng = random.host_rng() if rng is None else rng
    cdf = np.cumsum(probs, axis=-1)  # (B, V)
    u = rng.random(probs.shape[0]) * cdf[:, -1]  # (B,) scaled by the total, in case it is not exactly 1
    ids = (cdf <= u[:, None]).sum(axis=-1)
    return np.minimum(ids, probs.shape[-1] - 1).astype(np.int64)


def next_token(logits: np.ndarray, temperature: float = 1.0, top_k: int | None = None,
               top_p: float | None = None, rng: np.random.Generator | None = None) -> np.ndarray:
    """The next id (B,) for each row of `logits` (B, V).

    temperature 0 is greedy (the argmax, no random draw); otherwise the logits are divided by the temperature
    (below 1 sharpens, above 1 flattens), filtered by top-k then top-p, and one token is drawn per row.
    """
    logits = np.asarray(logits, dtype=np.float64)
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    if temperature == 0:
        return logits.argmax(axis=-1).astype(np.int64)
    logits = logits / temperature
    if top_k is not None:
        logits = top_k_filter(logits, top_k)
    if top_p is not None:
        logits = top_p_filter(logits, top_p)
    return sample(softmax(logits), rng)
