"""Rebuild the course's CJK font: a subset of Noto Sans CJK SC holding every character the course shows.

The course draws Chinese labels in its figures and the site (`python -m tutorials.site`) shows Chinese prose;
neither may depend on a CJK font being installed. So the course ships `NotoSansCJKsc-Course.otf`, a subset of
Noto Sans CJK SC (SIL Open Font License 1.1, `LICENSE` beside it) holding only the characters it needs:

- every character of the course's own text: the lectures, their helpers, exercises and solutions, the READMEs
  and the glossary (`tutorials/**/*.py`, `tutorials/**/*.md`), and the learner-facing messages of minigrad and
  minigpt (`**/*.py`);
- the 1500 most common characters of the Tang corpus, counted both ways the lectures count them (over the
  training text, lecture 06; over its five-character couplets, `tutorials/couplets.py`), since the poems the
  models write and the attention maps over couplets use them;
- printable ASCII.

This is a maintainer's tool (it needs fontTools: `pip install fonttools`, and the full font: Debian/Ubuntu
`apt-get install fonts-noto-cjk`). Run it from the repository root after the course's text gains characters
(tests/test_course_font.py says which are missing):

    python -m tutorials.fonts.make_subset [--source /usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc]

Read next: tutorials/course.py, which registers the font with matplotlib.
"""

from __future__ import annotations

import argparse
import io
import string
import sys
from collections import Counter
from pathlib import Path

from minigrad.tools.files import write_file

ROOT = Path(__file__).resolve().parents[2]
FONT = Path(__file__).resolve().parent / "NotoSansCJKsc-Course.otf"
SOURCE = Path("/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc")  # Debian's fonts-noto-cjk
FAMILY = "Noto Sans CJK SC"  # the collection's member to keep (the simplified-Chinese forms)
TEXT_FOLDERS = {"tutorials": ("*.py", "*.md"), "minigrad": ("*.py",), "minigpt": ("*.py",)}


def course_text(root: Path = ROOT) -> str:
    """All the text of the course's sources whose characters can reach a figure or a page."""
    parts = []
    for folder, patterns in TEXT_FOLDERS.items():
        for pattern in patterns:
            parts += [path.read_text(encoding="utf-8") for path in sorted((root / folder).rglob(pattern))]
    return "\n".join(parts)


def tang_characters(n_chars: int = 1500) -> set[str]:
    """The Tang corpus's most common characters, counted as lecture 06 does and as tutorials/couplets.py does."""
    from minigpt.corpus import load_tang, split_poems
    from tutorials.couplets import load_couplets

    train, _ = split_poems(load_tang())
    by_text = Counter(ch for ch in train if "\u4e00" <= ch <= "\u9fff").most_common(n_chars)
    return {ch for ch, _ in by_text} | set(load_couplets(n_chars).chars)


def characters() -> set[str]:
    """Every character the subset must hold (those the source font lacks are simply left out)."""
    text = course_text() + "".join(tang_characters()) + string.printable
    return {ch for ch in text if ch.isprintable() or ch == " "}


def make_subset(source: Path, out: Path = FONT) -> None:
    """Write the subset of `source` (a .ttc or .otf) holding `characters()` to `out`."""
    from fontTools import subset
    from fontTools.ttLib import TTCollection, TTFont

    number = 0
    if source.suffix.lower() == ".ttc":
        names = [font["name"].getDebugName(1) for font in TTCollection(str(source)).fonts]
        number = names.index(FAMILY)
    font = TTFont(str(source), fontNumber=number)
    options = subset.Options()
    options.hinting = False  # hinting matters little at screen sizes for CJK, and costs space
    options.name_IDs = ["*"]  # keep the copyright and licence records
    options.notdef_outline = True
    # Kerning only: the default features' vertical forms, alternates and regional variants would double the
    # glyph count (750 KiB instead of 410) for text a learner never sees.
    options.layout_features = ["kern"]
    subsetter = subset.Subsetter(options)
    subsetter.populate(text="".join(sorted(characters())))
    subsetter.subset(font)
    buffer = io.BytesIO()
    font.save(buffer)
    write_file(out, buffer.getvalue())  # never through a link at `out`
    glyphs = len(font.getGlyphOrder())
    print(f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB, {glyphs} glyphs, "
          f"{len(font.getBestCmap())} characters)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", type=Path, default=SOURCE, help=f"the full font (default: {SOURCE})")
    args = parser.parse_args(argv)
    if not args.source.exists():
        print(f"no {args.source}: install fonts-noto-cjk or give --source", file=sys.stderr)
        return 1
    make_subset(args.source)
    return 0


if __name__ == "__main__":
    sys.exit(main())
