"""minigrad/minigpt against PyTorch, side by side in one process: the speed targets of the project.

Each row builds the same model in minigrad and in PyTorch (weights copied across with `interop`), feeds
both the same batches, and runs them in alternating turns of a few steps (A B A B ...), so a drift in the
machine's speed hits both sides alike. Reported: the median time of each side and the median of the per-pair
ratios minigrad / PyTorch. Peak memory is measured in separate processes (one per side), as the
growth of the resident set size over the process's size after start-up.

    python benchmarks/vs_torch.py                  # every row, 2 threads on both sides
    python benchmarks/vs_torch.py --rows loaded    # gpt-small quiet, then beside one busy process per core
    python benchmarks/vs_torch.py --rows gpt-small --profile   # where minigrad's time goes
    python benchmarks/vs_torch.py --rows gpt-small,gpt-medium --batch-threads 2   # minigpt train's split plan
    python benchmarks/vs_torch.py --device cuda    # the GPU (CuPy against PyTorch CUDA)

On machines that set OPENBLAS_CORETYPE (it pins an old OpenBLAS kernel), this script re-executes itself without
it and OPENBLAS_L2_SIZE (blas_env.py), and prints NumPy's BLAS kernel and thread count beside every figure.
"""

from __future__ import annotations

import blas_env  # first: re-executes without OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE before NumPy loads OpenBLAS

# isort: split
import argparse
import cProfile
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig, batch_threads
from minigpt.threads import ThreadChooser, plans, use_plan
from minigrad import kernels, nn, optim
from minigrad.core import backend

try:
    import torch
except ImportError:  # the minigrad rows still run, with a note
    torch = None

GPT_ROWS = {
    "gpt-small": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=12),
    "gpt-medium": dict(n_layer=6, n_head=8, n_embd=256, block_size=128, batch_size=16),
    "gpt-gpu": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch_size=64),
}
TARGETS = {"mlp": 0.8, "gpt-small": 1.0, "gpt-medium": 1.2, "memory": 1.5}
VOCAB = 65


@dataclass
class Side:
    """One side of a comparison: `step()` runs one training step and waits until it has finished."""

    step: Callable[[], Any]
    name: str
    tokens: int = 0  # tokens one step trains on (GPT rows), for tokens per second
    flops: float = 0.0  # the model's floating-point operations in one training step, for MFU


# --------------------------------------------------------------------------------------------------
# The MLP row: 784-256-10, batch 64, AdamW


def mlp_sides(device: str, rng: np.random.Generator) -> tuple[Side, Side | None]:
    x = rng.standard_normal((64, 784)).astype(np.float32)
    y = rng.integers(0, 10, 64)
    model = nn.Sequential(nn.Linear(784, 256), nn.ReLU(), nn.Linear(256, 10)).to(device)
    opt = optim.AdamW(model.parameters(), lr=1e-3)
    xm, ym = mg.tensor(x, device=device), mg.tensor(y, device=device)

    # forward 2 FLOPs per weight per example, backward twice that: 6 per weight per example
    flops = 6.0 * 64 * (784 * 256 + 256 * 10)

    def minigrad_step() -> None:
        loss = F.cross_entropy(model(xm), ym)  # forward
        opt.zero_grad()
        loss.backward()  # backward
        opt.step()  # update
        synchronize(device)

    if torch is None:
        return Side(minigrad_step, "minigrad", flops=flops), None
    tdev = torch_device(device)
    tmodel = torch.nn.Sequential(torch.nn.Linear(784, 256), torch.nn.ReLU(), torch.nn.Linear(256, 10)).to(tdev)
    with torch.no_grad():
        for tp, p in zip(tmodel.parameters(), model.parameters()):
            tp.copy_(torch.from_numpy(p.numpy()))
    topt = torch.optim.AdamW(tmodel.parameters(), lr=1e-3)
    xt, yt = torch.from_numpy(x).to(tdev), torch.from_numpy(y).to(tdev)

    def torch_step() -> None:
        loss = torch.nn.functional.cross_entropy(tmodel(xt), yt)
        topt.zero_grad()
        loss.backward()
        topt.step()
        torch_synchronize(device)

    return Side(minigrad_step, "minigrad", flops=flops), Side(torch_step, "torch", flops=flops)


# --------------------------------------------------------------------------------------------------
# The GPT rows: a training step (forward, backward, AdamW) on random token batches


def gpt_sides(row: str, device: str, rng: np.random.Generator, shards: int = 1) -> tuple[Side, Side | None]:
    """The GPT rows; `shards` > 1 runs minigrad's step as minigpt train's plan "N batch threads x 1 BLAS" (the batch
    cut into `shards` parts, each part's forward and backward on its own thread: minigpt/batch_threads.py)."""
    spec = dict(GPT_ROWS[row])
    batch_size = spec.pop("batch_size")
    config = GPTConfig(vocab_size=VOCAB, dropout=0.0, **spec)
    model = GPT(config).to(device)
    opt = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.1)
    batches = [rng.integers(0, VOCAB, (batch_size, config.block_size + 1)) for _ in range(4)]
    counter = iter(range(10**9))
    tokens = batch_size * config.block_size
    flops = gpt_step_flops(config, tokens)

    def minigrad_step() -> None:
        batch = batches[next(counter) % len(batches)]
        idx, targets = mg.tensor(batch[:, :-1], device=device), mg.tensor(batch[:, 1:], device=device)
        if shards > 1:
            blas = mg.get_num_threads()
            mg.set_num_threads(1)
            opt.zero_grad()
            batch_threads.split(shards).forward_backward(model, idx, targets)  # forward and backward, per part
            mg.set_num_threads(blas)
        else:
            _, loss = model(idx, targets)  # forward
            opt.zero_grad()
            loss.backward()  # backward
        opt.step()  # update
        synchronize(device)

    if torch is None:
        return Side(minigrad_step, "minigrad", tokens, flops), None
    from minigpt.testing.torch_gpt import load_minigpt

    tdev = torch_device(device)
    tmodel = load_minigpt(model).to(tdev)
    topt = torch.optim.AdamW(tmodel.parameters(), lr=1e-3, weight_decay=0.1)
    tcounter = iter(range(10**9))

    def torch_step() -> None:
        batch = batches[next(tcounter) % len(batches)]
        idx = torch.from_numpy(np.ascontiguousarray(batch[:, :-1])).to(tdev)
        targets = torch.from_numpy(np.ascontiguousarray(batch[:, 1:])).to(tdev)
        _, loss = tmodel(idx, targets)
        topt.zero_grad()
        loss.backward()
        topt.step()
        torch_synchronize(device)

    return Side(minigrad_step, "minigrad", tokens, flops), Side(torch_step, "torch", tokens, flops)


def gpt_step_flops(config: GPTConfig, tokens: int) -> float:
    """A GPT training step's FLOPs, counted as nanoGPT's estimate_mfu (the PaLM paper's appendix B) does:
    6 per weight per token (forward 2, backward 4), the position table left out, plus the attention scores
    and their weighted sum, 12 * n_layer * n_embd * block_size per token."""
    c, layers = config.n_embd, config.n_layer
    weights = config.vocab_size * c + layers * 12 * c * c  # the (tied) token table and each block's matrices
    return tokens * (6.0 * weights + 12.0 * layers * c * config.block_size)


def sgemm_peak() -> dict[str, float]:
    """The machine's float32 matrix-product speed (FLOP/s), best of a few 2048 x 2048 products, per library."""
    n = 2048
    a = np.random.default_rng(0).standard_normal((n, n), dtype=np.float32)
    speeds = {"numpy": 2 * n**3 / min(_seconds(lambda: a @ a) for _ in range(5))}
    if torch is not None:
        t = torch.from_numpy(a)
        speeds["torch"] = 2 * n**3 / min(_seconds(lambda: t @ t) for _ in range(5))
    return speeds


def _seconds(work: Callable[[], Any]) -> float:
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


# --------------------------------------------------------------------------------------------------
# Generation: 240 new tokens with the KV cache against recomputing the prefix


def generation_sides(device: str) -> tuple[Side, Side]:
    config = GPTConfig(vocab_size=VOCAB, block_size=256, n_layer=4, n_head=4, n_embd=128)
    model = GPT(config).to(device).eval()
    prompt = mg.tensor(np.arange(16)[None, :] % VOCAB, device=device)

    def run(use_cache: bool) -> Callable[[], None]:
        def generate() -> None:
            mg.manual_seed(0)
            model.generate(prompt, 240, temperature=1.0, use_cache=use_cache)
            synchronize(device)
        return generate

    return Side(run(True), "cache"), Side(run(False), "recompute")


# --------------------------------------------------------------------------------------------------
# The loaded machine: gpt-small again, with one busy-looping process per core beside it


def loaded_machine(device: str, repeats: int) -> dict[str, dict[str, Any]]:
    """gpt-small's step times quiet and with one busy process per core: each side as a user gets it by default
    (minigrad: the plan minigpt train measures among threads.plans, the batch split over the cores among them;
    PyTorch: its own default threads)."""
    cores = os.cpu_count() or 1
    a, b = sides_for("gpt-small", device)
    split = sides_for("gpt-small", device, shards=cores)[0].step if cores > 1 else a.step
    chooser = ThreadChooser(plans(cores), every=10**9, use=use_plan)  # one trial, in the warm-up
    whole = a.step

    def minigrad_default_step() -> None:
        chooser.before_step()
        start = time.perf_counter()
        (split if chooser.current.shards > 1 else whole)()
        chooser.after_step(time.perf_counter() - start)

    a = Side(minigrad_default_step, a.name, a.tokens, a.flops)
    warmup = len(chooser.counts) * (chooser.trial_steps + 1) + 1
    results = {"quiet": {**interleave(a, b, repeats, warmup), "plan": str(chooser.chosen)}}
    loops = [subprocess.Popen([sys.executable, "-c", "while True:\n    pass"]) for _ in range(os.cpu_count() or 1)]
    try:
        chooser.steps_since_trial = chooser.every  # a new trial: the machine has changed
        results["loaded"] = {**interleave(a, b, repeats, warmup), "plan": str(chooser.chosen)}
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    return results


# --------------------------------------------------------------------------------------------------
# Timing


# Each side runs in turns of BURST timed steps, and each turn begins with a pause of SETTLE seconds and one
# untimed step. Both libraries keep their idle worker threads spinning for a while after a call (OpenBLAS for
# about 0.1 s), and straight after a turn of the other side those threads would take the cores from this one:
# stepped A B A B, a PyTorch step ran up to three times as slow. (Until this round the script shortened
# OpenBLAS's spin instead, OPENBLAS_THREAD_TIMEOUT=4; on an Intel Xeon that made minigrad's gpt-small step 15%
# slower and far noisier alone, a handicap no user has.) Turns still alternate, so a drift of the machine's
# speed hits both sides alike; the ratio is the median of the ratios of paired turns.
BURST = 5
SETTLE = 0.25


def interleave(a: Side, b: Side | None, repeats: int, warmup: int, burst: int = BURST) -> dict[str, Any]:
    """Run a and b in turns of `burst` timed steps until each has `repeats`; medians of each side's steps and
    of the ratios a/b of the paired turns' medians."""
    for _ in range(warmup):
        a.step()
        if b is not None:
            b.step()
    times_a: list[float] = []
    times_b: list[float] = []
    ratios = []
    while len(times_a) < repeats:
        turn_a = turn(a, burst)
        times_a += turn_a
        if b is not None:
            turn_b = turn(b, burst)
            times_b += turn_b
            ratios.append(statistics.median(turn_a) / statistics.median(turn_b))
    result = {"a": statistics.median(times_a), "a_name": a.name}
    if b is not None:
        result.update(b=statistics.median(times_b), b_name=b.name, ratio=statistics.median(ratios))
    return result


def turn(side: Side, steps: int) -> list[float]:
    """The times of `steps` steps of side, after a pause and one untimed step (see BURST)."""
    time.sleep(SETTLE)
    side.step()
    return [timed(side) for _ in range(steps)]


def timed(side: Side) -> float:
    """Seconds one step of `side` takes."""
    start = time.perf_counter()
    side.step()
    return time.perf_counter() - start


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        backend.backend_for_device(device).xp.cuda.Device().synchronize()


def torch_device(device: str) -> str:
    return "cpu" if device in ("cpu", "strict") else device


def torch_synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def sides_for(row: str, device: str, shards: int = 1) -> tuple[Side, Side | None]:
    rng = np.random.default_rng(0)
    mg.manual_seed(0)
    if row == "mlp":
        return mlp_sides(device, rng)
    if row == "generate":
        return generation_sides(device)
    return gpt_sides(row, device, rng, shards)


# --------------------------------------------------------------------------------------------------
# Peak memory, one process per side


def memory_child(side: str, row: str, device: str, steps: int) -> None:
    """Print how far this process's resident memory rises above its size before the first step (MiB).

    The rise covers what training adds: activations, gradients and the optimizer's moments. The
    process holds only what its side needs (the minigrad side never builds the PyTorch model), and
    the kernel's high-water mark is reset just before the first step (Linux's clear_refs).
    """
    global torch
    if side == "minigrad":
        torch = None
    a, b = sides_for(row, device)
    chosen = a if side == "minigrad" else b
    before = _status_mib("VmRSS")
    with open("/proc/self/clear_refs", "w") as clear_refs:
        clear_refs.write("5")  # reset VmHWM, the peak resident set size
    for _ in range(steps):
        chosen.step()
    peak = _status_mib("VmHWM")
    print(json.dumps({"before_mib": before, "peak_mib": peak, "growth_mib": peak - before}))


def _status_mib(field: str) -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) / 1024  # the kernel reports kB
    raise RuntimeError(f"no {field} in /proc/self/status")


def measure_memory(row: str, device: str) -> dict[str, Any]:
    results = {}
    for side in ("minigrad", "torch") if torch is not None else ("minigrad",):
        command = [sys.executable, __file__, "--memory-child", side, "--rows", row, "--device", device]
        output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        results[side] = json.loads(output.strip().splitlines()[-1])
    return results


# --------------------------------------------------------------------------------------------------
# Profile: where minigrad's time goes, per op, forward and backward


def profile(row: str, device: str, steps: int) -> None:
    a, _ = sides_for(row, device)
    a.step()
    profiler = cProfile.Profile()
    start = time.perf_counter()
    profiler.enable()
    for _ in range(steps):
        a.step()
    profiler.disable()
    total = time.perf_counter() - start
    stats = pstats.Stats(profiler).stats
    print(f"\nprofile of {row} on {device}: {steps} steps, {1e3 * total / steps:.1f} ms a step\n")
    print(f"{'where':40} {'calls/step':>10} {'ms/step':>9} {'share':>7}")
    # Cumulative time of each forward/backward of each op class (methods share a file, so key by class).
    by_class: dict[str, list[float]] = {}
    for (filename, line, function), (_, calls, _own, cumulative, _) in stats.items():
        if f"minigrad{os.sep}ops{os.sep}" not in filename or function not in ("forward", "backward"):
            continue  # only the ops: modules' forward methods would count their ops twice
        key = f"{_class_at(filename, line)}.{function}"
        entry = by_class.setdefault(key, [0.0, 0])
        entry[0] += cumulative
        entry[1] += calls
    for key, (seconds, calls) in sorted(by_class.items(), key=lambda item: -item[1][0])[:25]:
        print(f"{key:40} {calls // steps:>10} {1e3 * seconds / steps:>9.2f} {seconds / total:>7.1%}")
    in_ops = sum(seconds for seconds, _ in by_class.values())
    rest = total - in_ops
    print(f"{'all ops, forward and backward':40} {'':>10} {1e3 * in_ops / steps:>9.2f} {in_ops / total:>7.1%}")
    print(f"{'the rest: engine, modules, optimizer':40} {'':>10} {1e3 * rest / steps:>9.2f} {rest / total:>7.1%}")


def _class_at(filename: str, line: int) -> str:
    """The name of the class whose method starts at `line` of `filename` (for the profile table)."""
    with open(filename) as source:
        lines = source.readlines()[:line]
    for text in reversed(lines):
        if text.startswith("class "):
            return text.split()[1].split("(")[0].rstrip(":")
    return os.path.basename(filename)


# --------------------------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="mlp,gpt-small,gpt-medium,generate,memory,loaded",
                        help="comma-separated: mlp, gpt-small, gpt-medium, gpt-gpu, generate, memory, loaded "
                             "(gpt-small beside one busy process per core)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=15, help="timed steps of each side")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2, help="PyTorch threads (NumPy's BLAS uses the cores)")
    parser.add_argument("--batch-threads", type=int, default=1, metavar="N",
                        help="the GPT rows' minigrad step as minigpt train's plan: the batch cut over N threads, one "
                             "BLAS thread each (1: the whole batch, NumPy's BLAS threads)")
    parser.add_argument("--profile", action="store_true", help="print where minigrad's time goes")
    parser.add_argument("--memory-child", choices=["minigrad", "torch"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if torch is not None:
        torch.set_num_threads(args.threads)
    rows = args.rows.split(",")

    if args.memory_child:
        memory_child(args.memory_child, rows[0], args.device, steps=5)
        return
    if args.profile:
        for row in rows:
            profile(row, args.device, steps=args.repeats)
        return
    if torch is None:
        print("note: PyTorch is not installed; only minigrad's columns are measured")

    print(blas_env.header())
    print(f"fused ops: {kernels.implementation()} (numba: the compiled kernels of the extra `fast`; "
          "MINIGRAD_KERNELS=numpy forces the NumPy reference)")
    print(f"device {args.device}, {args.repeats} steps a side in alternating turns of {BURST}, after {args.warmup} "
          "warm-up; medians")
    peak = max(sgemm_peak().values()) if args.device == "cpu" else 0.0
    if peak:
        print(f"sgemm peak of this machine (2048 x 2048 float32, the faster library): {peak / 1e9:.0f} GFLOP/s; "
              "MFU = the model's FLOPs per second / the highest peak measured so far (again before each model)")
    print()
    print(f"{'row':12} {'minigrad ms':>12} {'other ms':>10} {'ratio':>7} {'target':>8}")
    for row in rows:
        if row == "memory":
            for model_row in ("gpt-small", "gpt-medium"):
                memory = measure_memory(model_row, args.device)
                mine = memory["minigrad"]["growth_mib"]
                line = f"{'memory':12} {mine:>10.0f}MB"
                if "torch" in memory:
                    theirs = memory["torch"]["growth_mib"]
                    line += f" {theirs:>8.0f}MB {mine / theirs:>7.2f} {'<= 1.5':>8}"
                print(line + f"   (peak RSS rise over 5 training steps of {model_row}, separate processes)   "
                      f"{blas_env.tag()}")
            continue
        if row == "loaded":
            result = loaded_machine(args.device, args.repeats)
            quiet, loaded = result["quiet"], result["loaded"]
            line = f"{'loaded':12} {1e3 * loaded['a']:>12.1f}"
            slowdown = f"slowdown: minigrad {loaded['a'] / quiet['a']:.1f}x"
            if "b" in loaded:
                line += f" {1e3 * loaded['b']:>10.1f} {loaded['ratio']:>7.2f} {'-':>8}"
                slowdown += f", torch {loaded['b'] / quiet['b']:.1f}x (target: minigrad's <= torch's)"
            print(f"{line}   (gpt-small beside {os.cpu_count()} busy processes; {slowdown}; minigrad's plan "
                  f"{quiet['plan']} quiet, {loaded['plan']} loaded)   {blas_env.tag()}")
            continue
        if peak and row != "generate":
            # Measured once, at a moment when a shared VM happens to be slow, the peak would be too low and every
            # MFU after it too high (PyTorch at 99% was seen). The machine's peak is the best it has shown.
            peak = max(peak, *sgemm_peak().values())
        a, b = sides_for(row, args.device, args.batch_threads if row.startswith("gpt") else 1)
        repeats = args.repeats if row != "generate" else max(3, args.repeats // 5)
        result = interleave(a, b, repeats, args.warmup, burst=min(BURST, repeats))
        if row == "generate":
            speedup = result["b"] / result["a"]
            print(f"{'generate':12} {1e3 * result['a']:>12.1f} {1e3 * result['b']:>10.1f} {speedup:>6.1f}x "
                  f"{'>= 5x':>8}   (240 tokens, KV cache vs recompute)   {blas_env.tag()}")
            continue
        throughput = ""
        if peak and a.flops:
            throughput += f"   MFU: minigrad {a.flops / result['a'] / peak:.0%}"
            throughput += f", torch {b.flops / result['b'] / peak:.0%}" if b is not None else ""
        if a.tokens:
            throughput += f"   tokens/s: minigrad {a.tokens / result['a']:,.0f}"
            throughput += f" ({args.batch_threads} batch threads x 1 BLAS)" if args.batch_threads > 1 else ""
            throughput += f", torch {b.tokens / result['b']:,.0f}" if b is not None else ""
        if "ratio" in result:
            print(f"{row:12} {1e3 * result['a']:>12.1f} {1e3 * result['b']:>10.1f} {result['ratio']:>7.2f} "
                  f"{'<= ' + str(TARGETS.get(row, '-')):>8}{throughput}   {blas_env.tag()}")
        else:
            print(f"{row:12} {1e3 * result['a']:>12.1f} {'-':>10}{throughput}   {blas_env.tag()}")


if __name__ == "__main__":
    main()
