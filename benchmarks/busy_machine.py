"""`minigpt train` on a busy machine: its tokens per second with one busy-looping process per core beside it.

A laptop is rarely idle. This script runs the default training command (a shortened run) on the quiet
machine, then again with one busy-looping process per core started beside it, and reports the tokens per
second each run logged (metrics.jsonl, evaluation excluded). It does so for the default thread choice
(measured as the run goes, minigpt/threads.py) and for BLAS's own default, one thread per core
(`--threads <cores>`), which is what the runs did before. The target: the default run keeps at least half of
its quiet speed.

    python benchmarks/busy_machine.py                 # 300 iterations per run, 2 repeats
    python benchmarks/busy_machine.py --iters 600 --repeats 3

Start it on a quiet machine (the load average is printed): the quiet runs are the yardstick.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

BUSY_LOOP = "while True:\n    pass"


def tokens_per_second(threads: int, iters: int, out_dir: Path) -> float:
    """Tokens/s of a fresh `minigpt train` run over its logged intervals (the first, warm-up, left out): each
    interval trains the same number of tokens, so the overall rate is the harmonic mean of theirs. Thread
    trials count: their slower steps are part of what the run costs."""
    env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                                            "MKL_NUM_THREADS")}
    command = [sys.executable, "-m", "minigpt", "train", "--max-iters", str(iters), "--eval-interval", str(iters),
               "--eval-iters", "1", "--threads", str(threads), "--out-dir", str(out_dir), "--overwrite"]
    subprocess.run(command, check=True, env=env, capture_output=True)
    lines = (out_dir / "metrics.jsonl").read_text().splitlines()
    speeds = [record["tokens_per_s"] for record in map(json.loads, lines) if "tokens_per_s" in record]
    return statistics.harmonic_mean(speeds[1:])


def run_all(settings: dict[str, int], iters: int, repeats: int, busy: int, scratch: Path) -> dict[str, float]:
    """Each setting's median tokens/s over `repeats` runs, with `busy` busy-looping processes beside it."""
    loops = [subprocess.Popen([sys.executable, "-c", BUSY_LOOP]) for _ in range(busy)]
    try:
        return {name: statistics.median(tokens_per_second(threads, iters, scratch / name) for _ in range(repeats))
                for name, threads in settings.items()}
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--iters", type=int, default=300, help="training iterations per run")
    parser.add_argument("--repeats", type=int, default=2, help="runs per setting and machine state (median)")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    settings = {"default (measured)": 0, f"--threads {cores} (BLAS's default)": cores}
    print(f"{cores} cores; load average before: {os.getloadavg()[0]:.2f}; {args.iters} iterations a run, "
          f"median of {args.repeats} runs; tokens/s as logged by minigpt train\n")
    with tempfile.TemporaryDirectory() as scratch:
        quiet = run_all(settings, args.iters, args.repeats, busy=0, scratch=Path(scratch))
        loaded = run_all(settings, args.iters, args.repeats, busy=cores, scratch=Path(scratch))
    print(f"| threads | quiet tokens/s | {cores} busy processes | kept |")
    print("|---|---:|---:|---:|")
    for name in settings:
        print(f"| {name} | {quiet[name]:,.0f} | {loaded[name]:,.0f} | {loaded[name] / quiet[name]:.0%} |")


if __name__ == "__main__":
    main()
