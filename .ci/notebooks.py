"""CI: run every tutorial as a notebook, the way a learner opens it, and check that its figures show inline.

Each `tutorials/NN_*.py` is converted with jupytext and executed by nbclient in a fresh kernel, in quick mode
(`TUTORIAL_QUICK=1`) and in full mode (the sizes and thresholds a learner's plain run asserts), each mode from
its own folder OUT_DIR/quick, OUT_DIR/full (the tutorials write `figures/` there, lecture 01-03's ladder
records among them, which later lectures read back; the executed notebooks are saved there too). A failing
assert stops the run with the cell and its traceback. Each lecture must then hold at least one inline PNG output
(a figure shown in the notebook, not only written to disk).

Every lecture uses one core, so the (mode, lecture) runs are shared among --jobs worker processes (default: one
per core), full mode's first since they are the longest. A lecture that reads another lecture's ladder records
(`ladder.ensure("NN", ...)` in its source) starts only once that lecture has run in the same mode, so it finds
them and never has to run it again. Each run's wall time is printed as it ends, and all of them at the end.

Usage: python .ci/notebooks.py [--modes quick,full] [--jobs N] [OUT_DIR] [NN ...]
       (default: both modes, a new temporary folder, every lecture)
       python .ci/notebooks.py --one MODE OUT_DIR NN   (one lecture in one mode: what each worker runs)
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LECTURES = sorted((ROOT / "tutorials").glob("[0-9][0-9]_*.py"))


def inline_images(notebook) -> int:
    """How many PNG outputs the executed notebook shows."""
    return sum("image/png" in output.get("data", {})
               for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", []))


def run_one(mode: str, out: Path, number: str) -> int:
    """Execute lecture `number` as a notebook in `mode` from `out`; 1 if an assert failed or no figure showed."""
    import jupytext
    import nbclient
    import nbformat

    if mode == "full":  # the kernel inherits this process's environment
        os.environ.pop("TUTORIAL_QUICK", None)
    else:
        os.environ["TUTORIAL_QUICK"] = "1"
    os.environ.pop("MPLBACKEND", None)  # let the kernel use Jupyter's inline backend, as a learner's would
    path = next(p for p in LECTURES if p.name[:2] == number)
    notebook = jupytext.read(path)
    out.mkdir(parents=True, exist_ok=True)
    client = nbclient.NotebookClient(notebook, timeout=3600, kernel_name="python3",
                                     resources={"metadata": {"path": str(out)}})
    client.execute()  # raises CellExecutionError, naming the cell, when an assert fails
    nbformat.write(notebook, out / f"{path.stem}.ipynb")
    if inline_images(notebook) == 0:
        print(f"no inline figure in {path.name} ({mode} mode)", file=sys.stderr)
        return 1
    return 0


def reads_records_of(path: Path) -> set[str]:
    """The lectures whose ladder records this lecture reads (`ladder.ensure("NN", ...)` in its source)."""
    return set(re.findall(r"""ladder\.ensure\(\s*["'](\d\d)["']""", path.read_text(encoding="utf-8")))


def run_all(modes: list[str], out: Path, numbers: list[str], jobs: int) -> int:
    """Run every (mode, lecture) on `jobs` workers, dependencies first; stop everything at the first failure."""
    waiting = [(mode, n) for mode in sorted(modes, key=lambda m: m != "full") for n in numbers]
    needs = {p.name[:2]: reads_records_of(p) & set(numbers) for p in LECTURES}
    done: set[tuple[str, str]] = set()
    running: dict[tuple[str, str], tuple[subprocess.Popen, float]] = {}
    seconds: dict[tuple[str, str], float] = {}
    while waiting or running:
        ready = [job for job in waiting if all((job[0], n) in done for n in needs[job[1]])]
        while ready and len(running) < jobs:
            job = ready.pop(0)
            waiting.remove(job)
            command = [sys.executable, __file__, "--one", job[0], str(out / job[0]), job[1]]
            running[job] = (subprocess.Popen(command), time.time())
        time.sleep(0.5)
        for job, (process, start) in list(running.items()):
            if process.poll() is None:
                continue
            del running[job]
            seconds[job] = time.time() - start
            print(f"== {job[1]} ({job[0]} mode): {seconds[job]:.0f} s, rc {process.returncode}", flush=True)
            if process.returncode != 0:
                for other, _ in running.values():
                    other.kill()
                return 1
            done.add(job)
    for mode in modes:
        times = {n: s for (m, n), s in seconds.items() if m == mode}
        print(f"{mode} mode: {len(times)} notebooks in {out / mode}, {sum(times.values()) / 60:.1f} min of runs: "
              + ", ".join(f"{n} {s:.0f} s" for n, s in sorted(times.items())))
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        return run_one(argv[1], Path(argv[2]), argv[3])
    parser = argparse.ArgumentParser(prog="python .ci/notebooks.py", description=__doc__.split("\n")[0])
    parser.add_argument("--modes", default="quick,full", help="comma-separated: quick, full (default: both)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="lectures run at once (default: cores)")
    parser.add_argument("out", nargs="?", help="folder for figures and executed notebooks (default: a new one)")
    parser.add_argument("lectures", nargs="*", help="lecture numbers such as 00 07 (default: every lecture)")
    args = parser.parse_args(argv)
    out = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="notebooks-"))
    numbers = args.lectures or [p.name[:2] for p in LECTURES]
    start = time.time()
    status = run_all(args.modes.split(","), out, numbers, max(1, args.jobs))
    print(f"notebooks: {(time.time() - start) / 60:.1f} min wall, rc {status}")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
