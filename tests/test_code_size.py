"""Size is a decision, not a drift: the line caps on the code a learner reads, and the budgets of its bands.

minigrad is built in bands, each a folder (core/, tensor/, ops/, fused/, kernels/, compat/, ...; minigrad/__init__.py
says what each holds). Each band has a line budget, and so has the package as a whole (BAND_BUDGETS,
PACKAGE_BUDGET): per-file caps alone let a package grow 53% in a round while every file passed. A budget is raised
only in a commit that says why (a new kernel or torch name is then a decision, as in tinygrad's line gate).
A file in minigrad/ or minigpt/ has at most 400 lines; the core files (core/function.py, core/autograd.py and the
Tensor class, tensor/tensor.py) at most 350, or their FILE_CAPS entry; a function at most 60. The few functions that
are longer today are listed in LONG_FUNCTIONS with a cap at their current length, so they can only shrink; the table
stays small (at most three) and has no stale entries. The caps are kept honest by the line-length limit (120, in
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
CORE_FILES = ("minigrad/core/function.py", "minigrad/core/autograd.py", "minigrad/tensor/tensor.py")
# The walk is the file a learner reads most closely: the chain rule and nothing that hides it.
FILE_CAPS: dict[str, int] = {"minigrad/core/autograd.py": 250}  # the walk in DeZero's shape, and nothing else
FUNCTION_CAP = 60
LINE_LENGTH = 120
TOP_LEVEL_FILES_CAP = 4  # .py files directly in minigrad/: __init__, factories, functional (F), random

# Lines of .py per band of minigrad/ (its folders; "." is the files at the top level), and of the whole package.
# The core path (core/, tensor/, ops/) is no larger than before the reading edition (12,886 lines in all then).
# 12,886 until the walk took DeZero's shape (+55: each op declares its double backward and raises its own shape
# errors, instead of Function.apply) and issue 40 measured the names real PyTorch programs use (moremath, refusals);
# 13,530 until all eight Learn the Basics pages joined those programs (+44: scatter_ and scatter_add_ in place,
# PyTorch's 0-d scatter index, nn.NLLLoss, the accelerator and onnx refusals; +2 keyword-only loss settings).
PACKAGE_BUDGET = 13_582  # +9: Tensor.array, until .data is renamed to it (issue 47)
BAND_BUDGETS = {
    # Function, the backward walk, grad mode, double backward, devices, dtypes; and since the walk took DeZero's
    # shape, what stands at its edges: observers.py (tensor hooks, anomaly, drawing, as one mechanism; the hook
    # runner came from tensor/) and gradients.py (the aliasing rule, and the slice gradient that came from ops/),
    # and function.py's shape checks for the ops (check_broadcast, shapes_refused) and `Tensors`.
    "core": 1_403,
    # the Tensor class and its method groups (+ the operator table asked of NumPy; +13: scatter_, scatter_add_ in
    # place and a 0-d scatter index, which PyTorch's transforms tutorial one-hot encodes with)
    "tensor": 1_893,  # +9: Tensor.array, the raw array's new name, until .data becomes PyTorch's
    "ops": 1_513,  # the primitives, one class each, each declaring its double backward (+66) and its shape errors
    "fused": 816,  # the hand-derived ops and their composed twins (+7: each op's double_backward)
    "kernels": 1_540,  # BLAS sums, attention row blocks, the numba kernels, threads: a floor under the math
    # names that exist so PyTorch programs run: they teach nothing new. 1,095 until the programs learners run
    # (tests/data/torch_programs_names.json: 243 names) were measured: their math (moremath.py) and refusals;
    # 1,555 until Learn the Basics joined them (254 names): nn.NLLLoss (nll_loss.py, 27 lines), two refusals
    "compat": 1_577,
    "nn": 992,  # (+2: the loss modules' settings keyword-only, where PyTorch's positions hold deprecated ones)
    "optim": 500,
    "viz": 1_190,
    "distributed": 550,
    "tools": 601,  # gradcheck, anomaly detection, save/load
    "testing": 150,
    "utils": 20,  # torch.utils' path: a re-export of compat/data.py
    ".": 870,  # __init__ (the public names), factories, functional, random
}

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
    cap = FILE_CAPS.get(name(path), CORE_FILE_CAP if name(path) in CORE_FILES else FILE_CAP)
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


def band_sizes(package: Path) -> dict[str, int]:
    """{band: lines of .py} for each folder directly under `package`, and "." for the files at its top level."""
    sizes: dict[str, int] = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(package).parts
        band = parts[0] if len(parts) > 1 else "."
        sizes[band] = sizes.get(band, 0) + len(path.read_text(encoding="utf-8").splitlines())
    return sizes


def over_budget(sizes: dict[str, int], budgets: dict[str, int], package_budget: int) -> list[str]:
    """What passes its budget, in words: a band over its budget, a band with none, or the package over its own."""
    problems = [f"{band}/ has {n} lines, over its budget of {budgets[band]}" for band, n in sorted(sizes.items())
                if band in budgets and n > budgets[band]]
    problems += [f"{band}/ has no budget: add it to BAND_BUDGETS (a new band is a decision)"
                 for band in sorted(sizes) if band not in budgets]
    total = sum(sizes.values())
    if total > package_budget:
        problems.append(f"minigrad has {total} lines, over its budget of {package_budget}")
    return problems


def test_every_band_and_the_package_keep_their_budgets():
    problems = over_budget(band_sizes(ROOT / "minigrad"), BAND_BUDGETS, PACKAGE_BUDGET)
    assert not problems, "; ".join(problems) + ": shrink it, or raise the budget in a commit that says why"


def test_the_budgets_bite(tmp_path):
    """The check above fails for a band one line over budget, an unbudgeted band and a package over its total."""
    (tmp_path / "core").mkdir()
    (tmp_path / "core" / "a.py").write_text("x = 1\n" * 11)
    (tmp_path / "extra").mkdir()
    (tmp_path / "extra" / "b.py").write_text("y = 2\n")
    sizes = band_sizes(tmp_path)
    assert sizes == {"core": 11, "extra": 1}
    assert over_budget(sizes, {"core": 11, "extra": 1}, 12) == []
    assert over_budget(sizes, {"core": 10, "extra": 1}, 12) == ["core/ has 11 lines, over its budget of 10"]
    assert over_budget(sizes, {"core": 11}, 12) == ["extra/ has no budget: add it to BAND_BUDGETS (a new band is "
                                                    "a decision)"]
    assert over_budget(sizes, {"core": 11, "extra": 1}, 11) == ["minigrad has 12 lines, over its budget of 11"]


def test_the_bands_exist_and_the_core_path_is_no_larger_than_before():
    """What a learner reads (core/, tensor/, ops/) is no larger than before the reading edition (1,312 + 1,847 +
    1,602 lines, erf included), counting core/ without the strict stand-in device, which the guide never sends a
    reader to (it moved into core/ from testing/ so that backend.py imports no test helper)."""
    sizes = band_sizes(ROOT / "minigrad")
    assert {"core", "kernels", "compat"} <= set(sizes)
    strict = len((ROOT / "minigrad" / "core" / "strict_device.py").read_text(encoding="utf-8").splitlines())
    assert sizes["core"] - strict + sizes["tensor"] + sizes["ops"] <= 1_312 + 1_847 + 1_602
