"""Derive the built-in Tang-poem corpus, `minigpt/corpora/tang.txt.xz`, from the npm package `chinese-poetry`.

This is a maintainer's script: users never run it (the derived file ships inside the package, and nothing
is fetched at run time). To rebuild the corpus:

    npm pack chinese-poetry@2.0.1                    # writes chinese-poetry-2.0.1.tgz (about 85 MB, MIT licence)
    pip install opencc==1.4.2                        # traditional -> simplified; this script's dependency only
    python scripts/make_tang_corpus.py chinese-poetry-2.0.1.tgz

It reads the complete Tang poems (全唐诗) straight from the tarball, `package/dist/quantangshi/poet.tang.N.json`
for N = 0, 1000, ..., 57000 (57,607 poems in traditional characters), and writes a plain text with one poem
per block, the title line then one couplet per line, blocks separated by a blank line:

    静夜思
    床前看月光，疑是地上霜。
    举头望山月，低头思故乡。

What it keeps, in this order:
1. Broken entries are dropped: no lines at all; a line with anything but CJK Unified Ideographs (U+4E00-U+9FFF)
   and the verse punctuation ，。？！；： (this catches the placeholder □ for a lost character, editorial notes
   in （）〖〗[]{}, digits and ○, ideographic description sequences, and characters of the rare extension
   blocks that most fonts cannot show); a line with 囗, the other placeholder for a lost character (a Han
   character itself, the radical "enclosure"); a title that still holds such characters once its bracketed
   notes are removed.
2. The full 全唐诗 does not fit the 3 MB the package allows (4.1 MB compressed), so we keep the regulated
   shapes, which are also what makes the form visible: 绝句 (4 lines) and 律诗 (8 lines) of 5 or 7 characters
   a line, each couplet a line ending in ，or ； and then 。？or ！. This is the shape only: tones and rhymes
   are not checked, so an old-style poem of that shape is kept too. About two thirds of the poems pass.
3. Traditional characters become simplified ones with OpenCC's `t2s` conversion (phrase-aware: 後 and 后,
   髮 and 發 are told apart by their context), title and lines converted as one text. A poem is dropped if the
   conversion takes one of its characters out of the basic block: OpenCC maps a few rare traditional
   characters to simplified forms encoded only recently, in the extension blocks (鐄 -> 𬭭).
4. Duplicates are dropped: a poem whose lines (after conversion) equal an earlier poem's, whatever its title.
5. The order is the source's: files by N, poems in file order (so the poems of one poet stay together).

It prints the figures that go into `minigpt/corpora/README.md` (size, lines, poems, characters, vocabulary,
sha256 of the input and of the output); paste them there when the corpus changes.
Read next: minigpt/corpus.py, which reads the file back.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import re
import tarfile
from pathlib import Path

import opencc

SOURCE = re.compile(r"^package/dist/quantangshi/poet\.tang\.(\d+)\.json$")
OUTPUT = Path(__file__).resolve().parent.parent / "minigpt" / "corpora" / "tang.txt.xz"
MAX_BYTES = 3_000_000

HAN = "\u4e00-\u9fff"  # CJK Unified Ideographs, the basic block
LINE = re.compile(rf"^[{HAN}，。？！；：]+$")  # what a clean line of verse may hold
TITLE = re.compile(rf"^[{HAN}]+( [{HAN}]+)*$")  # a clean title: words of Han characters, single spaces between
PLACEHOLDER = "囗"  # a Han character (the radical "enclosure"), which the source also uses for a lost character
NOTE = re.compile(r"（[^（）]*）|〖[^〖〗]*〗")  # an editorial note inside a title: （一作...）, 〖1〗
COUPLET = {n: rf"[{HAN}]{{{n}}}[，；][{HAN}]{{{n}}}[。？！]" for n in (5, 7)}  # one couplet of n-character lines
REGULATED = [re.compile(rf"^(?:{couplet}){{{count}}}$") for couplet in COUPLET.values() for count in (2, 4)]


def read_poems(tarball: Path) -> tuple[list[dict], list[str]]:
    """Every Tang poem in the tarball, in source order, and the names of the files they came from."""
    with tarfile.open(tarball) as tar:
        members = [m for m in tar.getmembers() if SOURCE.match(m.name)]
        members.sort(key=lambda m: int(SOURCE.match(m.name).group(1)))
        poems = [poem for m in members for poem in json.load(tar.extractfile(m))]
    return poems, [m.name for m in members]


def clean_title(title: str) -> str | None:
    """The title without its editorial notes and with single spaces, or None if it is still not clean."""
    title = NOTE.sub("", title).replace("[", "").replace("]", "")
    title = " ".join(title.split())
    return title if TITLE.match(title) else None


def couplets(lines: list[str]) -> list[str] | None:
    """The poem as one couplet per line if it has the shape of a 绝句 or 律诗, else None."""
    body = "".join(lines)  # the source cuts some poems into lines, others into couplets: rejoin, then recut
    if not any(shape.match(body) for shape in REGULATED):
        return None
    return re.findall(r"[^。？！]+[。？！]", body)


def derive(poems: list[dict]) -> tuple[str, dict[str, int]]:
    """The corpus text, and how many poems each rule dropped."""
    to_simplified = opencc.OpenCC("t2s")
    dropped = {"broken": 0, "not 绝句/律诗": 0, "rare once simplified": 0, "duplicate": 0}
    blocks, seen = [], set()
    for poem in poems:
        title = clean_title(poem.get("title", ""))
        lines = [p.strip() for p in poem.get("paragraphs", []) if p.strip()]
        if title is None or not lines or not all(LINE.match(line) and PLACEHOLDER not in line for line in lines):
            dropped["broken"] += 1
            continue
        body = couplets(lines)
        if body is None:
            dropped["not 绝句/律诗"] += 1
            continue
        # One conversion of the whole poem, so that OpenCC sees each character in its phrase.
        title, *body = to_simplified.convert("\n".join([title, *body])).split("\n")
        if not (TITLE.match(title) and all(LINE.match(line) for line in body)):
            dropped["rare once simplified"] += 1
            continue
        if tuple(body) in seen:
            dropped["duplicate"] += 1
            continue
        seen.add(tuple(body))
        blocks.append("\n".join([title, *body]))
    return "\n\n".join(blocks) + "\n", dropped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tarball", type=Path, help="chinese-poetry-VERSION.tgz, as `npm pack chinese-poetry` writes")
    parser.add_argument("--out", type=Path, default=OUTPUT, help=f"where to write the corpus (default: {OUTPUT})")
    args = parser.parse_args()

    poems, files = read_poems(args.tarball)
    text, dropped = derive(poems)
    data = lzma.compress(text.encode("utf-8"), preset=9 | lzma.PRESET_EXTREME)
    if len(data) > MAX_BYTES:
        raise SystemExit(f"the corpus is {len(data):,} bytes compressed, over the {MAX_BYTES:,} allowed")
    args.out.write_bytes(data)

    blocks = text.rstrip("\n").split("\n\n")
    hanzi = sum(1 for ch in text if "\u4e00" <= ch <= "\u9fff")
    print(f"source: {args.tarball.name}, sha256 {hashlib.sha256(args.tarball.read_bytes()).hexdigest()}")
    print(f"        {len(files)} files, {files[0]} ... {files[-1]}; {len(poems):,} poems")
    print(f"dropped: {', '.join(f'{n:,} {why}' for why, n in dropped.items())}")
    print(f"kept: {len(blocks):,} poems, {text.count(chr(10)):,} lines, {len(text):,} characters "
          f"({hanzi:,} Han characters), vocabulary {len(set(text)):,}")
    print(f"wrote {args.out}: {len(data):,} bytes (xz); text sha256 {hashlib.sha256(text.encode()).hexdigest()}, "
          f"file sha256 {hashlib.sha256(data).hexdigest()}")


if __name__ == "__main__":
    main()
