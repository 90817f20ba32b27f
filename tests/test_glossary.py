"""The lectures' prose keeps to the glossary (tutorials/术语表.md): one way to write each term.

The canonical terms are read from the glossary's table: where it writes a term in Chinese (注意力 for attention,
嵌入 for embedding, KV 缓存 for KV cache ...), the English name may appear in a lecture's text cells only as a
gloss in full-width parentheses (“注意力（attention）”), in `code` or in $math$. The glossary's conventions add
three spellings it rules out: 纳特, not nats; 嵌入, not 词向量; 词表, not 字表.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

TUTORIALS = Path(__file__).resolve().parent.parent / "tutorials"
LECTURES = sorted(TUTORIALS.glob("0[0-9]_*.py"))
RULED_OUT = {"nats": "纳特", "词向量": "嵌入", "字表": "词表"}  # the glossary's conventions, written out


def glossary_terms() -> dict[str, str]:
    """English name -> the Chinese the glossary writes for it, for every row whose canonical form is Chinese."""
    terms = {}
    for line in (TUTORIALS / "术语表.md").read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 4 or cells[0] in ("正文写作", "---"):
            continue
        english = re.sub(r"（.*?）|\(.*?\)", "", cells[1]).strip()
        for zh, en in zip(cells[0].split(" / "), english.split(" / ")):
            if re.search(r"[\u4e00-\u9fff]", zh) and zh.lower() != en.lower():
                terms[en] = zh
    return terms


def prose(path: Path) -> list[tuple[int, str]]:
    """(line number, text) of every line of a lecture's markdown cells, without code, math and glosses."""
    lines, in_markdown = [], False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith("# %%"):
            in_markdown = "[markdown]" in line
            continue
        if in_markdown:
            lines.append((number, without_code_math_and_glosses(line)))
    return lines


def without_code_math_and_glosses(line: str) -> str:
    text = re.sub(r"`[^`]*`|\$\$.*?\$\$|\$[^$]*\$", "", line)
    while re.search(r"（[^（）]*）", text):  # glosses, innermost first
        text = re.sub(r"（[^（）]*）", "", text)
    return text


def test_the_glossary_names_the_terms_this_test_guards():
    terms = glossary_terms()
    assert terms["attention"] == "注意力" and terms["embedding"] == "嵌入" and terms["KV cache"] == "KV 缓存"
    assert terms["query"] == "查询" and len(terms) >= 25


@pytest.mark.parametrize("path", LECTURES, ids=[p.name for p in LECTURES])
def test_a_lectures_prose_uses_the_glossarys_terms(path):
    wanted = {en: zh for en, zh in glossary_terms().items()} | RULED_OUT
    drift = []
    for number, text in prose(path):
        for written, canonical in wanted.items():
            if re.search(r"[A-Za-z]", written):
                found = re.search(rf"(?<![A-Za-z-]){re.escape(written)}s?(?![A-Za-z])", text, flags=re.IGNORECASE)
            else:
                found = written in text
            if found:
                drift.append(f"{path.name}:{number}: “{written}” → {canonical}")
    assert not drift, "写法与术语表不一致：\n" + "\n".join(drift)


def test_the_prose_filter_keeps_what_it_should():
    """Not vacuous: the filter drops code, math and glosses, and nothing else."""
    sample = "# 注意力（即（self-）attention）按 `attention_probs` 算 $\\mathrm{Attention}$，这里的 attention 漏网了"
    text = without_code_math_and_glosses(sample)
    assert "attention" in text and "Attention" not in text and "attention_probs" not in text


EXERCISES = TUTORIALS / "exercises"


def chinese_texts(path: Path) -> list[tuple[int, str]]:
    """The learner-facing text of an exercise file: its string constants and comments that contain Chinese, with
    the `{...}` of f-strings and `code` spans taken out (a variable named token is code, not prose)."""
    import ast
    import io
    import tokenize

    source = path.read_text(encoding="utf-8")
    texts = [(n.lineno, n.value) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Constant)
             and isinstance(n.value, str)]
    texts += [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type == tokenize.COMMENT]
    return [(line, re.sub(r"`[^`]*`", "", text)) for line, text in texts if re.search(r"[\u4e00-\u9fff]", text)]


@pytest.mark.parametrize("path", sorted(EXERCISES.rglob("*.py")), ids=lambda p: str(p.relative_to(EXERCISES)))
def test_the_exercises_and_their_checkers_speak_the_glossarys_terms(path):
    ruled_out = {r"\bnats\b": "纳特", r"\btokens?\b": "词元", r"\bKV cache\b": "KV 缓存", **RULED_OUT}
    del ruled_out["nats"]  # the glossary's own list writes it without word boundaries
    found = [(line, pattern, ruled_out[pattern]) for line, text in chinese_texts(path) for pattern in ruled_out
             if re.search(pattern, text)]
    assert not found, found
