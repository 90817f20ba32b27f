"""A lecture's exercises for its page: each stub in tutorials/exercises/lectureNN.py, with its hints folded.

The stub file is cut at its `# 练习 N.M ...` comments: the comment lines under each are the statement, the rest
is the code the learner completes. Hints come from `hints_of(number)`: by default the `hints` (a sequence of
strings) or `hint` (one string) of the exercise in tutorials.exercises, when the exercises carry them; each
hint is folded in its own <details>, so a learner opens them one at a time. Read next: build.py.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tutorials.site.render import code

HEADER = re.compile(r"^# 练习 (\d+\.\d+)\s*(.*)$")


@dataclass
class Stub:
    """One exercise as its stub shows it."""

    number: str  # "3.2"
    title: str  # "★★ 缩放点积注意力"
    statement: list[str]  # the comment lines under the header, without "# "
    code: str


def read_stubs(path: Path) -> tuple[str, list[Stub]]:
    """The file's docstring (its instructions) and its exercises, in order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    intro = re.match(r'"""(.*?)"""', "\n".join(lines), re.S)
    stubs: list[Stub] = []
    for line in lines:
        header = HEADER.match(line)
        if header:
            stubs.append(Stub(header[1], header[2].strip(), [], ""))
        elif stubs and not stubs[-1].code and line.startswith("#"):
            stubs[-1].statement.append(line[1:].removeprefix(" "))
        elif stubs:
            stubs[-1].code += line + "\n"
    for stub in stubs:
        stub.code = stub.code.strip("\n") + "\n"
    return (intro[1].strip() if intro else ""), stubs


def exercise_hints(number: str) -> list[str]:
    """The progressive hints of exercise `number`, vaguest first, as `check --hint` gives them one by one
    (tutorials/exercises/hints.py); none for a ★ exercise."""
    from tutorials.exercises.hints import hints_for

    return hints_for(number)


def exercises_html(path: Path, lecture: str, hints_of: Callable[[str], Sequence[str]] = exercise_hints,
                   anchor: str = "exercises") -> tuple[str, str]:
    """The exercises section of a lecture's page (its heading's id `anchor`), and its plain text for searching."""
    intro, stubs = read_stubs(path)
    parts = [f'<h2 id="{anchor}">练习：{path.name}</h2>\n<p>答案写在 <code>tutorials/exercises/{path.name}</code> 里，'
             f"写好后检查：<code>python -m tutorials.exercises check {lecture}</code>。</p>"]
    if intro:
        parts.append(f'<details class="intro"><summary>这个文件的说明</summary><pre>{html.escape(intro)}</pre>'
                     "</details>")
    text = [intro]
    for stub in stubs:
        statement = "\n".join(stub.statement).strip()
        parts.append(f'<section class="exercise" id="ex-{stub.number}"><h3>练习 {stub.number} '
                     f"{html.escape(stub.title)}</h3>")
        if statement:
            parts.append(f'<p class="statement">{html.escape(statement)}</p>')
        parts.append(code(stub.code))
        for k, hint in enumerate(hints_of(stub.number), 1):
            parts.append(f'<details class="hint"><summary>提示 {k}</summary><p>{html.escape(hint)}</p></details>')
        parts.append(f"<p>检查这一题：<code>python -m tutorials.exercises check {stub.number}</code></p></section>")
        text.append(f"练习 {stub.number} {stub.title} {statement}")
    return "\n".join(parts), "\n".join(text)
