"""第 06 讲练习的参考答案（题目在 tutorials/exercises/lecture06.py）。先自己做，再来对照。"""

import math

import numpy as np


def make_batch(data: np.ndarray, starts: np.ndarray, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    x = np.stack([data[s : s + block_size] for s in starts])
    y = np.stack([data[s + 1 : s + block_size + 1] for s in starts])  # the next token at every position
    return x, y


def first_order_decrease(lr: float, grads: list[np.ndarray]) -> float:
    # L(θ - lr g) ≈ L(θ) - g · (lr g): the loss falls by lr times the squared gradient norm.
    return lr * sum(float((g.astype(np.float64) ** 2).sum()) for g in grads)


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max())  # -inf logits give exactly 0
    return e / e.sum()


def top_k_probs(logits: np.ndarray, k: int) -> np.ndarray:
    keep = np.argsort(-logits)[:k]  # the k largest
    filtered = np.full_like(logits, -np.inf, dtype=np.float64)
    filtered[keep] = logits[keep]
    return softmax(filtered)


def top_p_probs(logits: np.ndarray, p: float) -> np.ndarray:
    probs = softmax(logits.astype(np.float64))
    order = np.argsort(-probs, kind="stable")  # most likely first
    mass_before = np.cumsum(probs[order]) - probs[order]
    kept = order[mass_before < p]  # the first one always has 0 before it
    out = np.zeros_like(probs)
    out[kept] = probs[kept] / probs[kept].sum()
    return out


def sample_next(logits: np.ndarray, rng: np.random.Generator, temperature: float = 1.0, top_k: int | None = None,
                top_p: float | None = None) -> int:
    if temperature == 0:
        return int(np.argmax(logits))
    logits = logits / temperature  # first the temperature, then the filters on what it gives
    with np.errstate(divide="ignore"):  # log(0) = -inf: a token a filter removed stays removed
        if top_k is not None:
            logits = np.log(top_k_probs(logits, top_k))
        if top_p is not None:  # among the tokens top-k left
            logits = np.log(top_p_probs(logits, top_p))
    probs = softmax(logits)
    return int(rng.choice(len(probs), p=probs))


def cached_attention_step(q: np.ndarray, k: np.ndarray, v: np.ndarray, cache: dict) -> np.ndarray:
    cache["k"].append(k)  # first store the new token: it must see itself
    cache["v"].append(v)
    keys, values = np.stack(cache["k"]), np.stack(cache["v"])  # (t, d) each
    weights = softmax(keys @ q / math.sqrt(q.shape[-1]))  # (t,)
    return weights @ values  # (d,)


def lr_schedule(step: int, total_steps: int) -> float:
    # With only 200 steps the model is still far from converged: what counts is how far it travels. A short
    # warmup, a learning rate held high, and a short decay at the very end (the last fifth).
    peak, warmup, decay_from = 3e-3, 10, int(0.8 * total_steps)
    if step < warmup:
        return peak * (step + 1) / warmup
    if step < decay_from:
        return peak
    return peak * (total_steps - step) / (total_steps - decay_from)
