"""The compiled CPU kernels (minigrad/kernels/) against the NumPy ops they implement and against PyTorch.

Each row is one op, forward and backward, at the shapes a GPT of the row's size uses it; the three sides run in
alternating turns (A B C A B C ...) so that a drift in the machine's speed hits all alike, and the medians are
printed with the ratios kernel / NumPy and kernel / PyTorch. Everything runs on one thread: NumPy's BLAS and
PyTorch are limited to one, and the kernels never use more.

    python benchmarks/kernels.py                       # gpt-small and gpt-medium shapes
    python benchmarks/kernels.py --sizes gpt-medium --repeats 31
    python benchmarks/kernels.py --clock cpu           # this process's CPU time: on a shared machine, the time
                                                       # other processes take from it is left out

Needs numba (pip install -e ".[fast]"); PyTorch and threadpoolctl are optional (their columns then read "-").
"""

from __future__ import annotations

import blas_env  # first: re-executes without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE before NumPy loads OpenBLAS

# isort: split
import argparse
import math
import statistics
import time
from collections.abc import Callable

import numba_attention  # benchmarks/numba_attention.py: the unwired kernel, kept for its measurement
import numpy as np

from minigrad import optim
from minigrad.fused.attention import ScaledDotProductAttention
from minigrad.fused.cross_entropy import CrossEntropy, row_scale
from minigrad.fused.gelu import GELU
from minigrad.fused.layer_norm import LayerNorm
from minigrad.fused.softmax import Softmax
from minigrad.kernels import (
    numba_adamw,
    numba_cross_entropy,
    numba_gelu,
    numba_layernorm,
    numba_softmax,
)
from minigrad.tensor import Tensor

try:
    import torch
except ImportError:
    torch = None

try:
    from threadpoolctl import threadpool_limits
except ImportError:
    threadpool_limits = None

# The shapes of benchmarks/vs_torch.py's GPT rows: batch B, context T, width C, heads nh, vocabulary V.
SIZES = {
    "gpt-small": dict(B=12, T=64, C=128, nh=4, V=65, layers=4),
    "gpt-medium": dict(B=16, T=128, C=256, nh=8, V=65, layers=6),
}

Case = dict[str, Callable[[], object] | None]  # "numpy", "kernel", "torch": one forward + backward each


def random(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def gelu_case(rng, B, T, C, **_) -> Case:
    x, gy = random(rng, B, T, 4 * C), random(rng, B, T, 4 * C)

    def numpy_side():
        op = GELU()
        op.forward(x)
        op.backward(gy)

    def kernel_side():
        _, slope = numba_gelu.gelu_forward(x)
        numba_gelu.gelu_backward(gy, slope)

    return {"numpy": numpy_side, "kernel": kernel_side, "torch": torch_side(lambda t: torch.nn.functional.gelu(t),
                                                                             [x], gy)}


def layer_norm_case(rng, B, T, C, **_) -> Case:
    x, w, b, gy = random(rng, B, T, C), random(rng, C), random(rng, C), random(rng, B, T, C)

    def numpy_side():
        op = LayerNorm(eps=1e-5)
        op.forward(x, w, b)
        op.backward(gy)

    def kernel_side():
        _, xhat, rstd = numba_layernorm.layer_norm_forward(x, w, b, 1e-5)
        numba_layernorm.layer_norm_backward(gy, xhat, rstd, w, True)

    ln = lambda t, tw, tb: torch.nn.functional.layer_norm(t, (C,), tw, tb, 1e-5)
    return {"numpy": numpy_side, "kernel": kernel_side, "torch": torch_side(ln, [x, w, b], gy)}


def causal_softmax_case(rng, B, T, nh, **_) -> Case:
    x, gy = random(rng, B, nh, T, T), random(rng, B, nh, T, T)
    x[..., ~np.tri(T, dtype=bool)] = -np.inf  # the causal mask, as attention applies it

    def numpy_side():
        op = Softmax(axis=-1)
        op.forward(x)
        op.backward(gy)

    def kernel_side():
        y = numba_softmax.softmax_forward(x)
        numba_softmax.softmax_backward(gy, y)

    return {"numpy": numpy_side, "kernel": kernel_side, "torch": torch_side(lambda t: t.softmax(-1), [x], gy)}


def cross_entropy_case(rng, B, T, V, **_) -> Case:
    z, t = random(rng, B * T, V), rng.integers(0, V, B * T)
    one = np.float32(1.0)

    def numpy_side():
        op = CrossEntropy(targets=t, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0)
        op.forward(z)
        op.backward(one)

    def kernel_side():  # with the op's own preparation of the rows, so that the two sides do the same work
        counted = (t != -100).astype(np.float32)
        total = counted.sum()
        losses, probs = numba_cross_entropy.cross_entropy_forward(z, t, counted, counted, None, 0.0)
        losses.sum() / total
        scale = row_scale(one, total, "mean", counted)
        numba_cross_entropy.cross_entropy_backward(probs, t, counted, counted, None, 0.0, scale)

    ce = lambda tz: torch.nn.functional.cross_entropy(tz, torch.from_numpy(t))
    return {"numpy": numpy_side, "kernel": kernel_side, "torch": torch_side(ce, [z], None)}


def attention_case(rng, B, T, C, nh, **_) -> Case:
    q, k, v, gy = (random(rng, B, nh, T, C // nh) for _ in range(4))
    scale = 1 / math.sqrt(C // nh)

    def numpy_side():
        op = ScaledDotProductAttention(is_causal=True, mask=None, scale=None, keep=None)
        op.forward(q, k, v)
        op.backward(gy)

    def kernel_side():
        y, lse = numba_attention.attention_forward(q, k, v, scale)
        return y, numba_attention.attention_backward(gy, q, k, v, y, lse, scale)

    # The kernel is unwired (slower than the NumPy op's row blocks), so no test holds it to the op: check here.
    op = ScaledDotProductAttention(is_causal=True, mask=None, scale=None, keep=None)
    y_kernel, grads_kernel = kernel_side()
    np.testing.assert_allclose(y_kernel, op.forward(q, k, v), rtol=1e-4, atol=1e-5)
    for g_kernel, g_op in zip(grads_kernel, op.backward(gy)):
        np.testing.assert_allclose(g_kernel, g_op, rtol=1e-3, atol=1e-4)

    sdpa = lambda tq, tk, tv: torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=True)
    return {"numpy": numpy_side, "kernel": kernel_side, "torch": torch_side(sdpa, [q, k, v], gy)}


def adamw_case(rng, C, layers, V, **_) -> Case:
    """One AdamW step over a GPT's parameters: per layer 12 C**2 weights in 4 matrices, and the embeddings."""
    shapes = [(V, C), (64, C)] + [(3 * C, C), (C, C), (4 * C, C), (C, 4 * C), (C,), (C,)] * layers
    params = [Tensor(random(rng, *s), requires_grad=True) for s in shapes]
    for p in params:
        p.grad = Tensor(random(rng, *p.shape))
    opt = optim.AdamW(params, lr=1e-3, weight_decay=0.1)
    state = [(p.array.copy(), p.grad.array, np.zeros_like(p.array), np.zeros_like(p.array)) for p in params]

    def kernel_side():
        for p, g, m, v in state:
            numba_adamw.adam_step(p, g, m, v, 1e-3, 0.9, 0.999, 1e-8, 0.1, 1, True)

    torch_step = None
    if torch is not None:
        tparams = [torch.tensor(p.array, requires_grad=True) for p in params]
        for tp, p in zip(tparams, params):
            tp.grad = torch.from_numpy(p.grad.array.copy())
        topt = torch.optim.AdamW(tparams, lr=1e-3, weight_decay=0.1, fused=True)
        torch_step = topt.step
    return {"numpy": opt.step, "kernel": kernel_side, "torch": torch_step}


def torch_side(fn: Callable, arrays: list[np.ndarray], gy: np.ndarray | None) -> Callable[[], None] | None:
    """PyTorch's forward and backward of `fn` on copies of `arrays` (gy None: a scalar output)."""
    if torch is None:
        return None
    tensors = [torch.tensor(a, requires_grad=True) for a in arrays]
    tgy = None if gy is None else torch.from_numpy(gy)

    def step():
        for t in tensors:
            t.grad = None
        fn(*tensors).backward(tgy)

    return step


CASES = {"gelu": gelu_case, "layer_norm": layer_norm_case, "causal_softmax": causal_softmax_case,
         "cross_entropy": cross_entropy_case, "adamw": adamw_case, "attention": attention_case}


def measure(case: Case, repeats: int, warmup: int, clock: Callable[[], float]) -> dict[str, float]:
    """Median seconds of each side, the sides taking turns."""
    sides = {name: fn for name, fn in case.items() if fn is not None}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for i in range(warmup + repeats):
        for name, fn in sides.items():
            start = clock()
            fn()
            if i >= warmup:
                times[name].append(clock() - start)
    return {name: statistics.median(t) for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="gpt-small,gpt-medium")
    parser.add_argument("--ops", default=",".join(CASES))
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                        help="wall: time.perf_counter; cpu: time.process_time (every side runs on one thread)")
    args = parser.parse_args()
    clock = time.perf_counter if args.clock == "wall" else time.process_time
    for module in (numba_gelu, numba_layernorm, numba_softmax, numba_cross_entropy, numba_adamw, numba_attention):
        if not module.ready():
            raise SystemExit(f"{module.__name__} is not available: pip install -e '.[fast]'")
    if torch is not None:
        torch.set_num_threads(1)
    limits = threadpool_limits(limits=1, user_api="blas") if threadpool_limits else None
    print(blas_env.header())
    print(f"one thread on every side; forward + backward; {args.clock} clock; medians of {args.repeats} turns after "
          f"{args.warmup} warm-up")
    print(f"\n{'size':11} {'op':15} {'NumPy ms':>9} {'kernel ms':>10} {'torch ms':>9} {'k/NumPy':>8} {'k/torch':>8}")
    for size in args.sizes.split(","):
        for op in args.ops.split(","):
            result = measure(CASES[op](np.random.default_rng(0), **SIZES[size]), args.repeats, args.warmup, clock)
            theirs = result.get("torch")
            line = (f"{size:11} {op:15} {1e3 * result['numpy']:>9.3f} {1e3 * result['kernel']:>10.3f} "
                    + (f"{1e3 * theirs:>9.3f}" if theirs else f"{'-':>9}")
                    + f" {result['kernel'] / result['numpy']:>8.2f} "
                    + (f"{result['kernel'] / theirs:>8.2f}" if theirs else f"{'-':>8}"))
            print(f"{line}   {blas_env.tag()}", flush=True)
    if limits is not None:
        limits.restore_original_limits()


if __name__ == "__main__":
    main()
