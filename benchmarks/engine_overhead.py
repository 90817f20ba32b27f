"""How much does minigrad's Python engine cost, next to PyTorch's C++ one? Two measurements on the CPU:

(a) per-op overhead: a chain of 1,000 tiny ops (16 elements each), forward and backward. The arithmetic
    is negligible, so the time is the engine's bookkeeping: building a Tensor and a Function per op,
    then the topological sort and one backward call per op.
(b) a small real workload: forward and backward of a two-layer 784-256-10 MLP (raw tensors, relu,
    cross-entropy) on a batch of 64, where NumPy's matrix products do most of the work.

Both libraries run on 2 threads (OMP_NUM_THREADS=1 for one); A and B runs are interleaved so that a
noisy neighbour hurts both alike; the table shows medians. Without PyTorch the torch column is skipped.

    python benchmarks/engine_overhead.py [--repeats 15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

# Both libraries get THREADS threads (2 unless OMP_NUM_THREADS says otherwise). BLAS reads its thread
# count when NumPy is first imported, so this comes before the imports.
THREADS = int(os.environ.setdefault("OMP_NUM_THREADS", "2"))
for variable in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(variable, str(THREADS))

import numpy as np  # noqa: E402

import minigrad as mg  # noqa: E402
import minigrad.functional as F  # noqa: E402

try:
    import torch
except ImportError:  # the torch column is optional
    torch = None


# (a) per-op overhead ----------------------------------------------------------------------------------------------
def chain(x: object, length: int) -> None:
    """`length` alternating multiplies and adds on a 16-element tensor, then backward."""
    y = x
    for i in range(length):
        y = y * 1.0001 if i % 2 == 0 else y + 0.001
    y.sum().backward()
    x.grad = None


# (b) an MLP step --------------------------------------------------------------------------------------------------
def mlp_step(lib, params: list, x: object, targets: object) -> None:
    """Forward and backward of relu(x W1 + b1) W2 + b2 with a cross-entropy loss."""
    w1, b1, w2, b2 = params
    h = (x @ w1 + b1).relu()  # (64, 256)
    logits = h @ w2 + b2  # (64, 10)
    loss = lib.cross_entropy(logits, targets)
    loss.backward()
    for p in params:
        p.grad = None


def make_inputs(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "chain_x": rng.standard_normal(16).astype(np.float32),
        "w1": (rng.standard_normal((784, 256)) * 784**-0.5).astype(np.float32),
        "b1": np.zeros(256, dtype=np.float32),
        "w2": (rng.standard_normal((256, 10)) * 256**-0.5).astype(np.float32),
        "b2": np.zeros(10, dtype=np.float32),
        "x": rng.standard_normal((64, 784)).astype(np.float32),
        "targets": rng.integers(0, 10, 64),
    }


class MinigradLib:
    """What the workloads need from minigrad: leaves that require grad, constants, cross-entropy."""

    cross_entropy = staticmethod(F.cross_entropy)

    @staticmethod
    def leaf(array: np.ndarray) -> mg.Tensor:
        return mg.tensor(array, requires_grad=True)

    @staticmethod
    def constant(array: np.ndarray) -> object:
        return mg.tensor(array) if array.dtype.kind == "f" else array


class TorchLib:
    """The same for PyTorch (float32 tensors from the same NumPy arrays)."""

    @staticmethod
    def cross_entropy(logits, targets):
        return torch.nn.functional.cross_entropy(logits, targets)

    @staticmethod
    def leaf(array: np.ndarray):
        return torch.tensor(array, requires_grad=True)

    @staticmethod
    def constant(array: np.ndarray):
        return torch.tensor(array)


def workloads(lib, inputs: dict[str, np.ndarray], chain_length: int) -> dict[str, Callable[[], None]]:
    """The two benchmarks as argument-free callables for one library."""
    x = lib.leaf(inputs["chain_x"])
    params = [lib.leaf(inputs[name]) for name in ("w1", "b1", "w2", "b2")]
    batch, targets = lib.constant(inputs["x"]), lib.constant(inputs["targets"])
    return {
        f"chain of {chain_length} ops, fwd+bwd": lambda: chain(x, chain_length),
        "MLP 784-256-10, batch 64, fwd+bwd": lambda: mlp_step(lib, params, batch, targets),
    }


def seconds(fn: Callable[[], None], inner: int) -> float:
    """Seconds per call, averaged over `inner` back-to-back calls.

    The pause first lets the other library's idle thread pool stop spinning: OpenMP (torch) busy-waits
    for a few milliseconds after each parallel region and OpenBLAS (NumPy) for about 0.1 s, and on 2 cores
    a spinning pool would steal the cores of the library being timed (see vs_torch.py's BURST).
    """
    time.sleep(0.25)
    start = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - start) / inner


def calls_per_measurement(fn: Callable[[], None], target_seconds: float) -> int:
    """How many calls make one measurement last about `target_seconds`."""
    once = seconds(fn, 3)
    return max(1, round(target_seconds / once))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=15, help="interleaved A/B measurements per benchmark")
    parser.add_argument("--measure-seconds", type=float, default=0.1, help="length of one measurement")
    parser.add_argument("--chain-length", type=int, default=1000)
    args = parser.parse_args()

    inputs = make_inputs()
    libraries = {"minigrad": workloads(MinigradLib, inputs, args.chain_length)}
    if torch is not None:
        torch.set_num_threads(THREADS)
        libraries["torch"] = workloads(TorchLib, inputs, args.chain_length)

    print(f"numpy {np.__version__}" + (f", torch {torch.__version__}" if torch else "") + f"; {THREADS} thread(s) "
          f"each; median of {args.repeats} interleaved measurements of ~{args.measure_seconds} s each")
    # Other processes on a small machine skew every number: say how busy it was.
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    print(f"load average (1 min) at the start: {load:.1f} on {cores} cores")
    if load > cores - 1:  # a 2-thread matrix product then waits for a thread the scheduler has parked
        print("(the machine is busy: the threaded MLP timings of both libraries will be inflated and noisy)")
    header = f"{'benchmark':<38} {'minigrad':>12} {'torch':>12} {'minigrad/torch':>15}"
    print(header)
    print("-" * len(header))
    medians: dict[str, dict[str, float]] = {}
    for name in libraries["minigrad"]:
        timings: dict[str, list[float]] = {lib: [] for lib in libraries}
        # Calibrating also warms up: first calls allocate and fill caches.
        inner = {lib: calls_per_measurement(fns[name], args.measure_seconds) for lib, fns in libraries.items()}
        for _ in range(args.repeats):
            for lib, fns in libraries.items():  # A, B, A, B, ...
                timings[lib].append(seconds(fns[name], inner[lib]))
        medians[name] = {lib: statistics.median(times) for lib, times in timings.items()}
        ours, theirs = medians[name]["minigrad"], medians[name].get("torch")
        if theirs is not None:
            print(f"{name:<38} {ours * 1e3:>9.2f} ms {theirs * 1e3:>9.2f} ms {ours / theirs:>14.1f}x")
        else:
            print(f"{name:<38} {ours * 1e3:>9.2f} ms {'-':>12} {'-':>15}")

    per_op = {lib: t / args.chain_length * 1e6 for lib, t in next(iter(medians.values())).items()}
    print("per op (forward + backward): " + ", ".join(f"{lib} {us:.1f} us" for lib, us in per_op.items()))
    if torch is None:
        print("(PyTorch is not installed, so there is no torch column: pip install -e '.[oracle]')")

if __name__ == "__main__":
    main()
