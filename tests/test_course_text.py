"""What the lectures say about themselves stays true: how many exercises each has, where its run time is, and that
what they print is in Chinese.

Run times are measured once, in tutorials/README.md's table; a lecture's header points there instead of
repeating a figure that would go stale.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

from tutorials.exercises import LECTURES

TUTORIALS = Path(__file__).resolve().parent.parent / "tutorials"
FILES = sorted(TUTORIALS.glob("0[0-9]_*.py"))


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_lecture_counts_its_exercises_right(path):
    text = path.read_text(encoding="utf-8")
    counts = {int(n) for n in re.findall(r"(\d+) 道练习", text)}
    # a lecture without exercises of its own claims none
    assert counts == ({len(LECTURES[path.name[:2]])} if path.name[:2] in LECTURES else set()), (path.name, counts)


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_lectures_header_points_to_the_readmes_run_times(path):
    header = path.read_text(encoding="utf-8").split("# %%\n", 1)[0]
    assert "**用时**：运行本讲的耗时见 `tutorials/README.md` 的表" in header, path.name
    assert not re.search(r"快速版约|完整版约", header), path.name  # a figure here would drift from the table
    readme = (TUTORIALS / "README.md").read_text(encoding="utf-8")
    assert f"| `{path.name}` |" in readme


# What a lecture prints is Chinese: an English sentence (four or more English words in a row, nothing Chinese
# beside it) in a print, in a lecture's assert message or raised error, or in a comment of a lecture's code cell
# (the site shows the code) fails here. Code, names and shapes in English are fine: `(B, T, C)`, `F.softmax`.
ENGLISH_SENTENCE = re.compile(r"[A-Za-z][A-Za-z'’-]+(?:[ ,;:]+[A-Za-z][A-Za-z'’-]*){3,}")
CHINESE = re.compile(r"[\u3000-\u9fff\uff00-\uffef]")
PRINTING = sorted(TUTORIALS.glob("*.py"))  # the lectures and the helpers that print for them (predictions, ladder…)


def _literal(node: ast.AST) -> str | None:
    """A string constant, or an f-string's literal parts (each {…} as a blank)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else " " for v in node.values)
    return None


def english_sentences(source: str, lecture: bool) -> list[tuple[int, str]]:
    """(line, text) of every English sentence a reader of the printed lecture would meet."""
    found = []
    messages = []
    tree = ast.parse(source)
    # The one place English must stay: a terminal that cannot encode Chinese is told so in ASCII.
    ascii_only = {id(node) for handler in ast.walk(tree) if isinstance(handler, ast.ExceptHandler)
                  and getattr(handler.type, "id", None) == "UnicodeEncodeError"
                  for statement in handler.body for node in ast.walk(statement)}
    for node in ast.walk(tree):
        if id(node) in ascii_only:
            continue
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print":
            messages += [(node.lineno, arg) for arg in node.args]
        elif lecture and isinstance(node, ast.Assert) and node.msg is not None:
            messages.append((node.lineno, node.msg))
        elif lecture and isinstance(node, ast.Raise) and node.exc is not None:
            messages.append((node.lineno, node.exc))
    for line, message in messages:
        for part in ast.walk(message):
            text = _literal(part)
            if text and ENGLISH_SENTENCE.search(text) and not CHINESE.search(text):
                found.append((line, text))
    if lecture:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            text = token.string
            if token.type == tokenize.COMMENT and not text.startswith(("# %%", "# ---", "#   ")) \
                    and ENGLISH_SENTENCE.search(text) and not CHINESE.search(text):
                found.append((token.start[0], text))
    return found


@pytest.mark.parametrize("path", PRINTING, ids=[p.name for p in PRINTING])
def test_what_a_lecture_prints_is_chinese(path):
    found = english_sentences(path.read_text(encoding="utf-8"), lecture=path.name[:2].isdigit())
    assert not found, f"{path.name}: English where a learner reads: {found}"


def test_the_scan_catches_an_english_sentence():
    assert english_sentences('print("the loss fell by half")\n', lecture=False)
    assert english_sentences('print(f"{n} steps took {t} seconds in all")\n', lecture=False)
    assert english_sentences("assert ok, 'the curve should go down here'\n", lecture=True)
    assert english_sentences("x = 1  # a long run says how far it is\n", lecture=True)
    assert not english_sentences('print(f"损失 {loss:.3f}（B, T, C）")\nx = 1  # (B, T, vocab)\n', lecture=True)
    ascii_terminal = 'try:\n    f()\nexcept UnicodeEncodeError:\n    print("this terminal cannot show Chinese")\n'
    assert not english_sentences(ascii_terminal, lecture=False)
    assert english_sentences(ascii_terminal.replace("UnicodeEncodeError", "ValueError"), lecture=False)
