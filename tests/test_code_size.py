"""Size is a decision, not a drift: the line caps on the code a learner reads.

A file in minigrad/ or minigpt/ has at most 400 lines; the three core files (function.py, autograd.py and the
Tensor class, tensor/tensor.py) at most 350; a function at most 60. The few functions that are longer today are
listed in LONG_FUNCTIONS with a cap at their current length, so they can only shrink; the table stays small
(at most three) and has no stale entries. The caps are kept honest by the line-length limit (120, in
pyproject.toml): a file cannot meet them by golfing its lines longer.
Read next: test_readme.py.
"""

import ast
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("minigrad", "minigpt")
FILE_CAP = 400
CORE_FILE_CAP = 350
CORE_FILES = ("minigrad/function.py", "minigrad/autograd.py", "minigrad/tensor/tensor.py")
FUNCTION_CAP = 60
LINE_LENGTH = 120
TOP_LEVEL_FILES_CAP = 16  # .py files directly in minigrad/: the engine's steps and a few public names' homes

# "path:qualified name" -> its cap: today's length, to be lowered as the function shrinks, never raised.
# Empty since train() (56 lines) and build_parser (13) were split into named steps.
LONG_FUNCTIONS: dict[str, int] = {}


def source_files() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def function_lengths(path: Path) -> dict[str, int]:
    """{qualified name: lines from `def` to its last line} for every function and method in the file."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                qualname = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    lengths[qualname] = child.end_lineno - child.lineno + 1
                visit(child, qualname + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return lengths


def all_function_lengths() -> dict[str, int]:
    return {f"{name(path)}:{qualname}": n for path in source_files() for qualname, n in function_lengths(path).items()}


@pytest.mark.parametrize("path", source_files(), ids=name)
def test_no_file_passes_its_line_cap(path):
    cap = CORE_FILE_CAP if name(path) in CORE_FILES else FILE_CAP
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= cap, f"{name(path)} has {lines} lines, over its cap of {cap}: split it by job"


def test_the_core_files_exist():
    """A renamed core file must be renamed here too, or its tighter cap would silently stop applying."""
    assert all((ROOT / core).is_file() for core in CORE_FILES)


def test_no_function_passes_its_line_cap():
    too_long = {key: n for key, n in all_function_lengths().items() if n > LONG_FUNCTIONS.get(key, FUNCTION_CAP)}
    assert not too_long, (f"functions over their cap ({FUNCTION_CAP} lines, or their LONG_FUNCTIONS entry): "
                          f"{too_long}; split them into named steps")


def test_the_long_function_table_is_small_and_has_no_stale_entries():
    lengths = all_function_lengths()
    assert len(LONG_FUNCTIONS) <= 3
    stale = [key for key in LONG_FUNCTIONS if key not in lengths or lengths[key] <= FUNCTION_CAP]
    assert not stale, f"LONG_FUNCTIONS entries for functions gone or now within {FUNCTION_CAP} lines: {stale}"


def test_the_line_length_limit_stays_120():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert config["tool"]["ruff"]["line-length"] == LINE_LENGTH


def test_minigrad_has_at_most_16_top_level_files():
    top_level = sorted(path.name for path in (ROOT / "minigrad").glob("*.py"))
    assert len(top_level) <= TOP_LEVEL_FILES_CAP, f"{len(top_level)} files at minigrad/'s top level: {top_level}"
