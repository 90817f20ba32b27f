"""The course's CJK font: it ships with its licence, course.py registers it, and it holds every character shown.

Every Chinese character a figure can draw must be in the shipped subset (tutorials/fonts/), or a machine without
a CJK font would draw boxes. The labels are found by reading the tutorials' source: the string constants inside
plotting calls (`set_title`, `set_xlabel`, `text`, `legend`, `label(...)`, tick labels ...), plus the Tang
characters the couplet figures take from the data. When a test here fails, rebuild the subset:
`python -m tutorials.fonts.make_subset` (needs fonttools and Debian's fonts-noto-cjk).
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FONTS = ROOT / "tutorials" / "fonts"
FONT = FONTS / "NotoSansCJKsc-Course.otf"
# The calls whose string arguments end up drawn in a figure (matplotlib's, and the course's `label` helper).
PLOT_CALLS = {
    "label", "set_title", "set_xlabel", "set_ylabel", "suptitle", "supxlabel", "supylabel", "title", "xlabel",
    "ylabel", "text", "annotate", "figtext", "legend", "set_xticks", "set_yticks", "set_xticklabels",
    "set_yticklabels", "xticks", "yticks", "plot", "bar", "barh", "scatter", "hist", "step", "fill_between",
    "axhline", "axvline", "axhspan", "axvspan", "errorbar", "set_label", "colorbar", "table", "imshow",
}
MIN_CJK = 0x2E80  # from here on, CJK radicals, punctuation, kana and ideographs


def charmap(path: Path) -> set[str]:
    """The characters a font file has glyphs for (read with matplotlib's FreeType, no fontTools needed)."""
    from matplotlib.ft2font import FT2Font

    return {chr(code) for code in FT2Font(str(path)).get_charmap()}


def figure_strings(source: str) -> list[str]:
    """The string constants (f-strings' literal parts included) inside the plotting calls of a Python source."""
    strings = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name not in PLOT_CALLS:
            continue
        for argument in [*node.args, *(keyword.value for keyword in node.keywords)]:
            strings += [leaf.value for leaf in ast.walk(argument)
                        if isinstance(leaf, ast.Constant) and isinstance(leaf.value, str)]
    return strings


def missing(strings: list[str], font: set[str], fallback: set[str]) -> set[str]:
    """Characters of `strings` the figure could not draw: CJK ones outside `font`, others outside both fonts."""
    wanted = {ch for text in strings for ch in text if ch.isprintable() and not ch.isspace()}
    return {ch for ch in wanted if ch not in font and (ord(ch) >= MIN_CJK or ch not in fallback)}


@pytest.fixture(scope="module")
def fonts() -> tuple[set[str], set[str]]:
    import matplotlib

    dejavu = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans.ttf"  # matplotlib's own fallback
    return charmap(FONT), charmap(dejavu)


def lecture_sources() -> dict[str, str]:
    """Every tutorials module that draws (the lectures and their helpers), by file name."""
    return {path.name: path.read_text(encoding="utf-8") for path in sorted((ROOT / "tutorials").glob("*.py"))}


def test_the_font_ships_small_with_its_licence(fonts):
    assert FONT.stat().st_size < 500 * 1024, f"{FONT.name} is {FONT.stat().st_size / 1024:.0f} KiB"
    licence = (FONTS / "LICENSE").read_text(encoding="utf-8")
    assert "SIL OPEN FONT LICENSE Version 1.1" in licence and "Adobe" in licence
    assert len([ch for ch in fonts[0] if ord(ch) >= MIN_CJK]) > 1500  # the course's text and the Tang characters
    import tomllib

    package_data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    assert "fonts/*.otf" in package_data["tutorials"] and "fonts/LICENSE" in package_data["tutorials"]


def test_every_figure_label_is_in_the_font(fonts):
    strings = [text for source in lecture_sources().values() for text in figure_strings(source)]
    labels = {ch for text in strings for ch in text if ord(ch) >= MIN_CJK}
    assert len(labels) > 100, "the scan found few Chinese labels: is it still reading the plotting calls?"
    assert {"损", "失", "步"} <= labels  # e.g. 损失, 训练步数 on the loss curves
    gaps = missing(strings, *fonts)
    assert not gaps, f"figure labels use characters outside {FONT.name}: {''.join(sorted(gaps))}; " \
                     "rebuild it: python -m tutorials.fonts.make_subset"


def test_the_scan_catches_a_character_outside_the_font(fonts):
    # The test above is not vacuous: a label with a character outside the subset is caught, in each kind of call.
    assert "龘" not in fonts[0]
    for line in ['ax.set_title("训练龘")', 'label("龘", "dragon")', 'ax.plot(x, y, label=f"第 {k} 龘")',
                 'ax.set_xticks(range(2), ["白", "龘"])', 'fig.text(0.5, 0.5, "龘")']:
        assert missing(figure_strings(line), *fonts) == {"龘"}, line
    assert missing(figure_strings('print("龘")'), *fonts) == set()  # printed text is not a figure label


def test_the_couplet_characters_are_in_the_font(fonts):
    # The couplet figures (lectures 03-05) label their axes with characters taken from the Tang data.
    from tutorials.couplets import load_couplets

    assert not missing(load_couplets().chars, *fonts)


def test_the_course_text_is_in_the_font(fonts):
    # The site shows all of the course's prose in this font; a missing character would fall back to another one.
    from tutorials.fonts.make_subset import course_text

    gaps = {ch for ch in course_text(ROOT) if ord(ch) >= MIN_CJK} - fonts[0]
    assert not gaps, f"the course's text uses characters outside {FONT.name}: {''.join(sorted(gaps))}; " \
                     "rebuild it: python -m tutorials.fonts.make_subset"


def test_course_registers_the_font_and_says_so_in_chinese(tmp_path):
    code = ("from matplotlib import font_manager\n"
            "from tutorials.course import CJK, FONT\n"
            "assert CJK\n"
            "assert str(FONT) in {f.fname for f in font_manager.fontManager.ttflist}\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TUTORIAL_QUICK": "1", "MPLBACKEND": "Agg"}
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == "快速版 | 中文字体：有"
