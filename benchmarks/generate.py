"""Generation speed with and without the KV cache: tokens per second at contexts of 64, 128 and 256 tokens.

A 4-layer, 128-wide, 4-head GPT (block_size 256, a 65-character vocabulary, as for Shakespeare) on the CPU.
For each context length N, the prompt has N - 32 tokens and the model samples 32 more, so every step attends
to about N tokens. Without the cache each step reruns the model on the whole context (cost grows with N);
with it, the prompt runs once and each step runs on one token (cost grows only through attention).
Reported: median tokens per second over a few runs, and the cache's speed-up.

    python benchmarks/generate.py [--repeats 3] [--new-tokens 32] [--device cpu]

On a machine that other jobs share, pin BLAS to one thread (OPENBLAS_NUM_THREADS=1): oversubscribed BLAS
threads spin and can make the larger matmuls ten times slower, which measures the neighbours, not the model.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

import minigrad as mg
from minigpt import GPT, GPTConfig


def tokens_per_second(model: GPT, prompt: np.ndarray, new_tokens: int, use_cache: bool, repeats: int) -> float:
    """Median over `repeats` runs of new tokens per second (prompt processing included)."""
    rates = []
    for _ in range(repeats):
        mg.manual_seed(0)
        start = time.perf_counter()
        model.generate(prompt, new_tokens, temperature=1.0, use_cache=use_cache)
        rates.append(new_tokens / (time.perf_counter() - start))
    return statistics.median(rates)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()

    mg.manual_seed(0)
    config = GPTConfig(vocab_size=65, block_size=256, n_layer=4, n_head=4, n_embd=128)
    model = GPT(config).to(args.device)
    model.eval()
    model.generate(np.zeros((1, 8), dtype=np.int64), 4)  # warm-up (BLAS threads, allocator)

    print(f"GPT: {config.n_layer} layers, n_embd {config.n_embd}, {config.n_head} heads, "
          f"{model.num_parameters() / 1e6:.2f}M parameters, device {args.device}, batch 1, "
          f"{args.new_tokens} new tokens, median of {args.repeats}")
    print(f"{'context':>8} | {'no cache tok/s':>14} | {'cache tok/s':>11} | {'speed-up':>8}")
    print(f"{'-' * 8}-+-{'-' * 14}-+-{'-' * 11}-+-{'-' * 8}")
    for context in (64, 128, 256):
        prompt = np.random.default_rng(0).integers(0, config.vocab_size, (1, context - args.new_tokens))
        recompute = tokens_per_second(model, prompt, args.new_tokens, use_cache=False, repeats=args.repeats)
        cached = tokens_per_second(model, prompt, args.new_tokens, use_cache=True, repeats=args.repeats)
        print(f"{context:>8} | {recompute:>14.1f} | {cached:>11.1f} | {cached / recompute:>7.2f}x")


if __name__ == "__main__":
    main()
