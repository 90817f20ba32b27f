"""Where code lives: the course's code lives in the course.

A script in scripts/ or a benchmark in benchmarks/ measures or maintains minigrad and minigpt; one that needs the
course (a record builder that imports tutorials.scaling, say) belongs in tutorials/ (tutorials/builders/, run as
`python -m tutorials.builders.NAME`). The imports are read with ast, so a mention in a docstring or a comment is
no import, and `import tutorials`, `import tutorials.x as y` and `from tutorials.x import y` all are.
Read next: test_code_size.py.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OUTSIDE_THE_COURSE = ("scripts", "benchmarks")


def imported_modules(source: str) -> list[str]:
    """Every module a Python source imports, at any depth (inside functions too), as written."""
    modules = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            modules.append(node.module)
    return modules


def imports_the_course(source: str) -> bool:
    return any(module == "tutorials" or module.startswith("tutorials.") for module in imported_modules(source))


def test_the_check_sees_every_way_of_importing_the_course():
    for source in ("import tutorials", "import tutorials.scaling as s", "from tutorials import ablation",
                   "from tutorials.machine import cpu_model", "def f():\n    from tutorials import yardstick\n"):
        assert imports_the_course(source), source
    for source in ('"""Run python -m tutorials.builders.x."""', "# from tutorials import x", "import tutorialsx",
                   "from minigpt import GPT", "from . import tutorials"):
        assert not imports_the_course(source), source


@pytest.mark.parametrize("folder", OUTSIDE_THE_COURSE)
def test_no_script_or_benchmark_imports_the_course(folder):
    paths = sorted((ROOT / folder).rglob("*.py"))
    assert paths, f"{folder}/ holds no Python file: the check would pass vacuously"
    offenders = [path.relative_to(ROOT).as_posix() for path in paths
                 if imports_the_course(path.read_text(encoding="utf-8"))]
    assert not offenders, f"these import tutorials; move them under tutorials/ (e.g. tutorials/builders/): {offenders}"
