"""The reading guide tells the truth: every file, folder and name that the README, tutorials/README.md and the
source's "Read next" lines send a reader to exists where they say, and the README's first screen starts the
reader on the core path.

A citation is a path in backticks (`minigrad/core/autograd.py`), optionally followed by the names to look for
in it, in parentheses of either width: `minigrad/core/autograd.py`（`backward`、`grad`）. A name is found when
the file defines it (a function, a class, an assignment; `GPT.forward` is a method of a class), so a renamed
function breaks the guide here rather than in a learner's hands. "N lines" beside a file in the README's guide
must be within 15% of its size.
Read next: test_code_size.py.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDES = ("README.md", "tutorials/README.md")
TOP_FOLDERS = ("minigrad/", "minigpt/", "tutorials/", "tests/", "benchmarks/", "scripts/", "examples/", "docs/")
CITATION = re.compile(r"`((?:minigrad|minigpt|tutorials|tests|benchmarks|scripts|examples|docs)/[\w./-]*)`"
                      r"(?:\s*[（(]([^）)]*)[）)])?")
NAME = re.compile(r"`([A-Za-z_][\w.]*)`")


def citations(text: str) -> list[tuple[str, list[str]]]:
    """(path, [names]) for each path cited in backticks, with the backticked names in the parentheses after it."""
    return [(m.group(1), NAME.findall(m.group(2) or "")) for m in CITATION.finditer(text)]


def defined_names(path: Path) -> set[str]:
    """Every function, class and assigned name in a Python file, methods also as Class.method."""
    names: set[str] = set()

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.update({child.name, prefix + child.name})
                visit(child, prefix + child.name + "." if isinstance(child, ast.ClassDef) else prefix)
            elif isinstance(child, (ast.Assign, ast.AnnAssign)):
                targets = child.targets if isinstance(child, ast.Assign) else [child.target]
                names.update(t.id for t in targets if isinstance(t, ast.Name))
                names.update(t.attr for t in targets if isinstance(t, ast.Attribute))  # self.wpe = ...
                visit(child, prefix)
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return names


def problems_in(text: str, where: str) -> list[str]:
    problems = []
    for cited, names in citations(text):
        path = ROOT / cited.rstrip("/")
        if "NN" in cited:  # a pattern: lectureNN.py stands for every lecture's file
            if not list(ROOT.glob(cited.replace("NN", "[0-9][0-9]"))):
                problems.append(f"{where} cites {cited}, which matches no file")
            continue
        if not path.exists():
            problems.append(f"{where} cites {cited}, which does not exist")
        elif names and path.suffix == ".py":
            defined = defined_names(path)
            problems += [f"{where} cites `{n}` in {cited}, which does not define it" for n in names
                         if n not in defined]
    return problems


@pytest.mark.parametrize("guide", GUIDES)
def test_every_cited_file_and_name_exists(guide):
    problems = problems_in((ROOT / guide).read_text(encoding="utf-8"), guide)
    assert not problems, "\n".join(problems)


def test_the_check_catches_a_stale_citation():
    assert problems_in("`minigrad/ops/nowhere.py`", "x") == ["x cites minigrad/ops/nowhere.py, which does not exist"]
    assert problems_in("`minigrad/core/autograd.py`（`backward`、`no_such_step`）", "x") == [
        "x cites `no_such_step` in minigrad/core/autograd.py, which does not define it"]
    assert problems_in("`minigpt/model.py`（`GPT.forward`、`Block`）", "x") == []


def read_next_targets(path: Path) -> list[str]:
    """The paths a module docstring's "Read next:" sentence names, in order."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    match = re.search(r"Read next:(.*)", doc, re.S)
    if not match:
        return []
    return re.findall(r"((?:\.\./)*[\w/]+(?:\.py|/))", match.group(1).split("\n\n")[0])


def resolve(path: Path, target: str) -> Path | None:
    """A "Read next" target, relative to the file's folder, to minigrad/, or to the checkout."""
    for base in (path.parent, ROOT / "minigrad", ROOT):
        candidate = (base / target).resolve()
        if candidate.exists():
            return candidate
    return None


SOURCES = sorted(p for package in ("minigrad", "minigpt") for p in (ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_read_next_target_exists(path):
    stale = [t for t in read_next_targets(path) if resolve(path, t) is None]
    assert not stale, f"{path.relative_to(ROOT)}: Read next names {stale}, which do not exist"


def test_the_readme_starts_the_reader_on_the_core_path():
    first_screen = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:45])
    for core in ("minigrad/tensor/tensor.py", "minigrad/core/function.py", "minigrad/core/autograd.py",
                 "minigrad/ops/elementwise.py", "minigrad/core/higher_order.py"):
        assert f"`{core}`" in first_screen, f"the README's first screen does not guide to {core}"
    assert "minigrad/kernels/" in first_screen and "minigrad/compat/" in first_screen  # where to stop
    order = [first_screen.index(f"`{f}`") for f in ("minigrad/core/function.py", "minigrad/core/autograd.py",
                                                    "minigrad/core/higher_order.py")]
    assert order == sorted(order)


def test_the_sizes_the_guide_states_are_true():
    first_screen = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:45])
    stated = re.findall(r"`((?:minigrad|minigpt)/[\w/]+\.py)` \((\d[\d,]*) lines", first_screen)
    assert len(stated) >= 5
    for path, lines in stated:
        actual = len((ROOT / path).read_text(encoding="utf-8").splitlines())
        assert abs(actual - int(lines.replace(",", ""))) <= 0.15 * actual, f"{path}: stated {lines}, has {actual}"
    # The core path's total counts every file the walk needs: the sum of the sizes stated beside them.
    total = int(re.search(r"is about ([\d,]+) lines, an afternoon", first_screen).group(1).replace(",", ""))
    listed = sum(int(n.replace(",", "")) for n in re.findall(r"` \((\d[\d,]*) lines\)", first_screen))
    assert abs(total - listed) <= 0.03 * listed, f"the core path is said to be {total} lines; its files add to {listed}"


def read_next_chain(path: Path) -> list[Path]:
    """The files met by following each file's first "Read next" target from `path`, until a file with none (a
    folder stands for its __init__.py) or a file met before (a loop)."""
    chain = [path]
    while targets := read_next_targets(chain[-1]):
        nxt = resolve(chain[-1], targets[0])
        nxt = nxt / "__init__.py" if nxt is not None and nxt.is_dir() else nxt
        if nxt is None or nxt in chain:
            chain.append(nxt)
            break
        chain.append(nxt)
    return chain


END_OF_READING = ROOT / "minigpt" / "model.py"


READERS = [path for path in SOURCES if read_next_targets(path)]


@pytest.mark.parametrize("path", READERS, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_read_next_chain_ends_at_the_model(path):
    """One reading order: wherever a reader starts, "Read next" leads on (kernels/ and compat/ back to their readable
    op) and ends at minigpt/model.py, the GPT the engine was built for, with no loop on the way."""
    chain = read_next_chain(path)
    shown = " -> ".join(p.relative_to(ROOT).as_posix() if p else "?" for p in chain)
    assert chain[-1] == END_OF_READING, f"the chain ends elsewhere: {shown}"


def test_the_reading_ends_at_the_model():
    assert END_OF_READING in SOURCES and not read_next_targets(END_OF_READING)
