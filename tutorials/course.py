"""The set-up every lecture shares: threads, quick mode, the figures folder, matplotlib, the course's CJK font.

Each lecture begins with

    from tutorials.course import CJK, FIGURES, QUICK, label, show_figure

Run as a script, figures are drawn off screen (matplotlib's Agg backend) and written to `figures/` in the
current directory; opened as a notebook, `show_figure` also shows each one inline, below its cell.
Read next: 00_autograd.py.
"""

from __future__ import annotations

import os

# The lectures multiply small matrices: one BLAS thread is faster than several waiting on each other (much
# faster on a busy machine), and results repeat bit for bit. This must happen before NumPy loads, which is
# why every lecture imports this module before anything else.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import shutil
import sys
import time
from pathlib import Path
from typing import Any

import matplotlib


def in_notebook() -> bool:
    """True inside a Jupyter kernel (where figures can be shown inline), False in a plain script."""
    if "IPython" not in sys.modules:  # a script never imported IPython: do not import it for it
        return False
    from IPython import get_ipython

    return getattr(get_ipython(), "kernel", None) is not None


if not in_notebook():
    matplotlib.use("Agg")  # a script draws off screen; a notebook keeps the backend Jupyter chose

import matplotlib.pyplot as plt

import minigrad as mg

QUICK = os.environ.get("TUTORIAL_QUICK") == "1"  # smaller data, fewer steps, looser thresholds
FIGURES = Path("figures")  # in the current directory, never inside the repository's tutorials/
FIGURES.mkdir(exist_ok=True)
T_START = time.time()

# Chinese labels need a CJK font. The course ships one (tutorials/fonts/: a subset of Noto Sans CJK SC holding
# every character the course draws, rebuilt by tutorials/fonts/make_subset.py), so every machine has it; only if
# that file were missing would `label` fall back to English rather than draw empty boxes.
FONT = Path(__file__).resolve().parent / "fonts" / "NotoSansCJKsc-Course.otf"


def use_course_font() -> bool:
    """Register the course's CJK font with matplotlib and make it the one for Chinese text; False without it.

    Its family name is Noto Sans CJK SC, the first of the fonts minigrad.viz looks for, so the lectures' own
    plots and minigrad.viz's plots both draw with it (or with a full Noto Sans CJK SC installed on the machine).
    """
    from matplotlib import font_manager

    if FONT.exists():
        font_manager.fontManager.addfont(str(FONT))
        mg.viz.plots.find_cjk_font.cache_clear()  # it may have looked before the font was registered
    return mg.viz.use_cjk_font()


CJK = use_course_font()


def label(zh: str, en: str) -> str:
    """Chinese text when a CJK font is installed, English otherwise (never boxes where characters should be)."""
    return zh if CJK else en


def show_image(path: str | Path) -> None:
    """Show a PNG file inline when running in a notebook (in a script it has already been written)."""
    if in_notebook():
        from IPython.display import Image, display

        display(Image(filename=str(path)))


def show_figure(fig: Any, name: str, dpi: int = 120, **savefig_options: Any) -> None:
    """Write a matplotlib figure to figures/`name`, show it inline in a notebook, and close it.

    Showing the written PNG (rather than relying on the notebook's matplotlib backend) gives the same
    picture in the notebook as on disk. Closing it frees the memory and stops Jupyter showing it twice.
    """
    path = FIGURES / name
    mg.viz.plots.save_figure(fig, path, dpi=dpi, **savefig_options)  # as every file: never through a link
    plt.close(fig)
    show_image(path)


# Graphviz's `dot` program draws the computation graphs; without it a lecture writes the DOT text and goes on.
INSTALL_DOT = "apt install graphviz（Debian/Ubuntu）、brew install graphviz（macOS）或 conda install graphviz"
_told_to_install: list[bool] = []  # what to install is said once a lecture, not once a picture


def draw_graph(tensor: Any, name: str, show: bool = True, **options: Any) -> Path | None:
    """Draw the graph that computed `tensor` to figures/`name`.png and show it; the PNG's path.

    Without graphviz's `dot` program (or when it fails) the DOT text goes to figures/`name`.dot instead, one
    Chinese line says what to install, and this returns None: the lecture goes on without the picture.
    The options are those of `mg.viz.draw` (names=, values=, grads=, rankdir=, ...).
    """
    if shutil.which("dot") is None:
        written = mg.viz.draw_to_file(tensor, FIGURES / f"{name}.dot", **options)
        install = "" if _told_to_install else f"；要画成图片请安装 Graphviz：{INSTALL_DOT}"
        _told_to_install.append(True)
        print(f"说明：没有 Graphviz 的 `dot` 程序，只写出了 {written}{install}")
        return None
    written = mg.viz.draw_to_file(tensor, FIGURES / f"{name}.png", **options)  # (its own line if `dot` fails)
    if written.suffix != ".png":
        print(f"说明：Graphviz 的 `dot` 程序出错（原因见上一行），只写出了 {written}；可重装 Graphviz：{INSTALL_DOT}")
        return None
    if show:
        show_image(written)
    return written


print(f"{'快速版' if QUICK else '完整版'} | 中文字体：{'有' if CJK else '没有（图中标注改用英文）'}")
