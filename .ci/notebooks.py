"""CI: run every tutorial as a notebook, the way a learner opens it, and check that its figures show inline.

Each `tutorials/NN_*.py` is converted with jupytext and executed by nbclient in a fresh kernel, in quick mode
(`TUTORIAL_QUICK=1`), from OUT_DIR (the tutorials write `figures/` there; the executed notebooks are saved
there too). A failing assert stops the run with the cell and its traceback. Each lecture must then hold at
least one inline PNG output (a figure shown in the notebook, not only written to disk).

Usage: python .ci/notebooks.py [OUT_DIR] [NN ...]   (default: a new temporary folder, every lecture)
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
    out = Path(argv[0]) if argv else Path(tempfile.mkdtemp(prefix="notebooks-"))
    out.mkdir(parents=True, exist_ok=True)
    only = set(argv[1:])
    os.environ["TUTORIAL_QUICK"] = "1"  # the kernel inherits this process's environment
    os.environ.pop("MPLBACKEND", None)  # let the kernel use Jupyter's inline backend, as a learner's would
    without_figures = []
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
        print(f"== {path.name}: {images} inline figures, {time.time() - start:.0f} s", flush=True)
        if images == 0:
            without_figures.append(path.name)
    if without_figures:
        print(f"no inline figure in: {', '.join(without_figures)}", file=sys.stderr)
        return 1
    print(f"executed notebooks in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
