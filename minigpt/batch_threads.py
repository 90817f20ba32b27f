"""A training step's batch split over threads: both cores in one process, as `mpiexec -n 2` uses them.

One process whose matrix products use two BLAS threads leaves part of a 2-core CPU idle: every other op (the
fused kernels, NumPy's elementwise passes, the engine's Python) runs on one thread, and two-thread products of a
small GPT's shapes scale poorly. Two processes (`mpiexec -n 2`), each on half the batch with one BLAS thread, were
1.28-1.34x faster. Threads do the same within one process: NumPy, BLAS and the compiled kernels release Python's
lock for their work, so the two halves of a batch run their forward and backward at once, each product on one
BLAS thread; only the engine's own Python (a small part of a step) waits for the lock.

The math. The loss of a batch is the mean over its positions; cut into shards of n_s of the n positions, with
L_s the mean over shard s,

    L = Σ_s (n_s / n) L_s,      so      ∇L = Σ_s (n_s / n) ∇L_s.

Each thread computes its shard's weighted gradients with `mg.autograd.grad`, which leaves `.grad` alone (two
threads must not add into the same buffer at once); the caller then adds them into `.grad`, as one backward over
the whole batch would: the same numbers up to float32 rounding (the sums are grouped differently).

It holds as written when every position of the batch counts in the loss, as in a language model's training
batches, and when the forward draws no random numbers (dropout would take them from one stream in an order that
depends on the threads' timing, and a run would no longer repeat): `minigpt train` uses it only then, on the CPU,
in one process (threads.py decides, by measuring). Read next: threads.py.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from functools import cache

import minigrad as mg
from minigrad import nn


class BatchThreads:
    """Forward and backward of a batch cut into `shards` parts along its first axis, one thread per part."""

    def __init__(self, shards: int) -> None:
        if shards < 1:
            raise ValueError(f"BatchThreads: shards must be at least 1, got {shards}")
        self.shards = shards
        # The calling thread does the first part itself: shards - 1 helpers.
        self._pool = ThreadPoolExecutor(max_workers=shards - 1, thread_name_prefix="batch") if shards > 1 else None

    def forward_backward(self, model: nn.Module, x: mg.Tensor, y: mg.Tensor, scale: float = 1.0) -> mg.Tensor:
        """The loss of `model(x, y)` over the whole batch (no graph kept), after adding `scale` times its gradient
        to the `.grad` of every parameter, as `(model(x, y)[1] * scale).backward()` does."""
        params = [p for p in model.parameters() if p.requires_grad]
        rows = len(x)
        bounds = [rows * s // self.shards for s in range(self.shards + 1)]
        parts = [(start, stop) for start, stop in zip(bounds, bounds[1:]) if stop > start]

        def shard(part: tuple[int, int]) -> tuple[mg.Tensor, float, tuple[mg.Tensor | None, ...]]:
            start, stop = part
            share = (stop - start) / rows  # n_s / n
            _, loss = model(x[start:stop], y[start:stop])
            return loss.detach(), share, mg.autograd.grad(loss * (scale * share), params, allow_unused=True)

        if self._pool is None or len(parts) == 1:
            results = [shard(part) for part in parts]
        else:
            helpers = [self._pool.submit(shard, part) for part in parts[1:]]
            results = [shard(parts[0])] + [helper.result() for helper in helpers]

        with mg.no_grad():
            for i, p in enumerate(params):
                gradients = [grads[i] for _, _, grads in results if grads[i] is not None]
                if not gradients:
                    continue
                total = sum(gradients[1:], gradients[0])  # Σ_s (n_s / n) ∇L_s, each term weighted in its thread
                p.grad = total if p.grad is None else p.grad + total
            return sum(loss * share for loss, share, _ in results)  # L = Σ_s (n_s / n) L_s


@cache
def split(shards: int) -> BatchThreads:
    """The BatchThreads of `shards` parts, made once (its threads are kept for the next step)."""
    return BatchThreads(shards)
