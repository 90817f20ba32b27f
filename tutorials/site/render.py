"""Notebook cells to HTML: Markdown with its formulas as MathML, highlighted Python, and the cells' outputs.

Everything is converted when the site is built, so a page needs no script to show a formula (Chromium and
Firefox draw MathML natively) and nothing is fetched when it opens. Links between the course's files become
links between its pages; a link to a file the site does not have keeps its text and loses its target.
Read next: exercises.py.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from latex2mathml.converter import convert as latex_to_mathml
from markdown_it import MarkdownIt
from mdit_py_plugins.dollarmath import dollarmath_plugin
from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from minigrad.tools.files import write_file  # every file of the site: never through a link

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")  # colour codes in tracebacks and progress bars


def math(latex: str, display: bool) -> str:
    """LaTeX as MathML; the source in <code> when latex2mathml cannot read it (the page still shows it)."""
    try:
        return latex_to_mathml(latex, display="block" if display else "inline")
    except Exception:  # latex2mathml raises several kinds: one bad formula must not stop the site
        return f'<code class="tex">{html.escape(latex)}</code>'


def slug(text: str, taken: set[str]) -> str:
    """An anchor for a heading: its words (Chinese kept), unique within the page."""
    base = re.sub(r"[^\w\u4e00-\u9fff-]+", "-", text.strip().lower()).strip("-") or "section"
    anchor, k = base, 1
    while anchor in taken:
        k += 1
        anchor = f"{base}-{k}"
    taken.add(anchor)
    return anchor


class Markdown:
    """A CommonMark renderer with tables and $…$ / $$…$$ math, which records each heading for the page's contents.

    `link_target(href)` maps a link in the course's Markdown to a page of the site, or None to drop the link.
    """

    def __init__(self, link_target: Callable[[str], str | None]):
        self.md = MarkdownIt("commonmark", {"html": True}).enable("table").use(dollarmath_plugin, double_inline=True)
        inline = lambda _renderer, tokens, i, *_: math(tokens[i].content, False)
        block = lambda _renderer, tokens, i, *_: math(tokens[i].content, True) + "\n"
        for rule, render in (("math_inline", inline), ("math_inline_double", block), ("math_block", block),
                             ("math_block_label", block)):
            self.md.add_render_rule(rule, render)
        self.link_target = link_target
        self.headings: list[tuple[int, str, str, str]] = []  # (level, text, anchor, HTML) in page order
        self.taken: set[str] = set()

    def render(self, text: str) -> str:
        tokens = self.md.parse(text)
        for k, token in enumerate(tokens):
            if token.type == "heading_open":
                title = tokens[k + 1].content.replace("`", "")  # the search shows plain text
                anchor = slug(title, self.taken)
                token.attrSet("id", anchor)
                shown = self.md.renderer.renderInline(tokens[k + 1].children or [], self.md.options, {})
                self.headings.append((int(token.tag[1]), title, anchor, shown))
            for child in token.children or []:
                if child.type == "link_open":
                    target = self.link_target(str(child.attrGet("href") or ""))
                    if target is None:
                        child.tag, child.attrs = "span", {"class": "file"}
                    else:
                        child.attrSet("href", target)
        self._close_dropped_links(tokens)
        return self.md.renderer.render(tokens, self.md.options, {})

    @staticmethod
    def _close_dropped_links(tokens: list[Any]) -> None:
        """Give each dropped link's closing token the <span> its opening token became."""
        for token in tokens:
            stack = []
            for child in token.children or []:
                if child.type == "link_open":
                    stack.append(child.tag)
                elif child.type == "link_close" and stack:
                    child.tag = stack.pop()


FORMATTER = HtmlFormatter(cssclass="highlight")


def code(source: str) -> str:
    """Python source, highlighted (the colours are in pygments.css)."""
    return highlight(source, PythonLexer(), FORMATTER)


def pygments_css() -> str:
    return FORMATTER.get_style_defs(".highlight")


def outputs(cell: dict, images: Path, prefix: str, link: str) -> str:
    """A code cell's outputs as HTML; images are written to `images` and linked as `link`/NAME."""
    parts = []
    for j, output in enumerate(cell.get("outputs", [])):
        kind = output.get("output_type")
        if kind == "stream":
            css = "out err" if output.get("name") == "stderr" else "out"
            parts.append(f'<pre class="{css}">{html.escape(ANSI.sub("", _text(output["text"])))}</pre>')
        elif kind == "error":
            trace = ANSI.sub("", "\n".join(output.get("traceback", [])))
            parts.append(f'<pre class="out err">{html.escape(trace)}</pre>')
        elif kind in ("display_data", "execute_result"):
            parts.append(_rich(output.get("data", {}), images, f"{prefix}-{j}", link))
    return "\n".join(parts)


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value)


def _rich(data: dict, images: Path, name: str, link: str) -> str:
    """The best of a display's formats that a static page can show."""
    if "image/png" in data:
        images.mkdir(parents=True, exist_ok=True)
        write_file(images / f"{name}.png", base64.b64decode(_text(data["image/png"])))
        return f'<figure><img src="{link}/{name}.png" alt="图 {name}"></figure>'
    if "image/svg+xml" in data:
        images.mkdir(parents=True, exist_ok=True)
        write_file(images / f"{name}.svg", _text(data["image/svg+xml"]))
        return f'<figure><img src="{link}/{name}.svg" alt="图 {name}"></figure>'
    if "text/html" in data and not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", _text(data["text/html"])):
        return f'<div class="out html">{_text(data["text/html"])}</div>'
    if "text/plain" in data:
        return f'<pre class="out">{html.escape(ANSI.sub("", _text(data["text/plain"])))}</pre>'
    return ""
