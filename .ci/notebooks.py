"""CI: run every tutorial as a notebook, the way a learner opens it, and check that its figures show inline.

Each `tutorials/NN_*.py` is converted with jupytext and executed by nbclient in a fresh kernel, in quick mode
(`TUTORIAL_QUICK=1`) or, with --full, in full mode (the sizes and thresholds a learner's plain run asserts),
from OUT_DIR (the tutorials write `figures/` there, lecture 01-03's ladder records among them, which lecture
07 reads back; the executed notebooks are saved there too). A failing assert stops the run with the cell and
its traceback. Each lecture must then hold at least one inline PNG output (a figure shown in the notebook, not
only written to disk). Each lecture's wall time is printed, and all of them at the end.

Usage: python .ci/notebooks.py [--full] [OUT_DIR] [NN ...]   (default: a new temporary folder, every lecture)
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

import jupytext
import nbclient
import nbformat

ROOT = Path(__file__).resolve().parent.parent


def inline_images(notebook: nbformat.NotebookNode) -> int:
    """How many PNG outputs the executed notebook shows."""
    return sum("image/png" in output.get("data", {})
               for cell in notebook.cells if cell.cell_type == "code" for output in cell.get("outputs", []))


def main(argv: list[str]) -> int:
    full = "--full" in argv
    mode = "full" if full else "quick"
    argv = [arg for arg in argv if arg != "--full"]
    out = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="notebooks-"))
    out.mkdir(parents=True, exist_ok=True)
    only = set(argv[1:])
    if full:  # the kernel inherits this process's environment
        os.environ.pop("TUTORIAL_QUICK", None)
    else:
        os.environ["TUTORIAL_QUICK"] = "1"
    os.environ.pop("MPLBACKEND", None)  # let the kernel use Jupyter's inline backend, as a learner's would
    without_figures, seconds = [], {}
    for path in sorted((ROOT / "tutorials").glob("[0-9][0-9]_*.py")):
        if only and path.name[:2] not in only:
            continue
        notebook = jupytext.read(path)
        start = time.time()
        client = nbclient.NotebookClient(notebook, timeout=3600, kernel_name="python3",
                                         resources={"metadata": {"path": str(out)}})
        client.execute()  # raises CellExecutionError, naming the cell, when an assert fails
        nbformat.write(notebook, out / f"{path.stem}.ipynb")
        images = inline_images(notebook)
        seconds[path.name] = time.time() - start
        print(f"== {path.name} ({mode} mode): {images} inline figures, {seconds[path.name]:.0f} s", flush=True)
        if images == 0:
            without_figures.append(path.name)
    print(f"executed {len(seconds)} notebooks in {out} ({mode} mode), {sum(seconds.values()) / 60:.1f} min in all: "
          + ", ".join(f"{name[:2]} {s:.0f} s" for name, s in seconds.items()))
    if without_figures:
        print(f"no inline figure in: {', '.join(without_figures)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
