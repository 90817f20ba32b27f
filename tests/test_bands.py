"""The bands' rules, as a test: every import in minigrad/ points down.

minigrad is built in bands (minigrad/__init__.py lists them). A learner reads the engine (core/, tensor/, ops/)
and stops before kernels/ and compat/; so the engine must not need what comes after it. The rules:
- core/, tensor/ and ops/ import nothing from compat/, tools/, viz/, nn/, optim/, distributed/, nor the package
  face (`minigrad.Tensor`, `from minigrad import x`: names that minigrad/__init__.py gathers from every band);
  of kernels/ only the one selection point, the kernels package itself (`from minigrad.kernels import blas`);
- fused/ imports nothing from compat/;
- kernels/ imports nothing above the backend (core/backend.py): a kernel knows arrays, not tensors;
- compat/ may use everything below it.
An import counts wherever it is written (inside a function too), and so does a chain `minigrad.name` after
`import minigrad`, the lazy route to another band. Read with ast, so a docstring's mention is no import.
Read next: test_code_size.py.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "minigrad"
ENGINE = ("core", "tensor", "ops")
# What the engine may reach, by the first name after `minigrad.`: the engine itself, the hand-derived ops (a
# tensor's softmax method calls one), the constructors and F's where (factories.py, functional.py), the random
# generators, and the kernels package as the one selection point.
ENGINE_MAY_USE = {"core", "tensor", "ops", "fused", "factories", "functional", "random", "kernels"}
# The Tensor class's method files (math.py, shape.py, ...) are imported by tensor.py before the class exists, so
# they reach their own class, and its error, by the lazy route through the package: tensor/'s own names only.
TENSOR_OWN_NAMES = {"Tensor", "ShapeError"}
KERNELS_MAY_USE = {"minigrad.kernels", "minigrad.core.backend"}


def references(source: str) -> list[tuple[str, bool]]:
    """Every minigrad module or name a source reaches: `import a.b`, `from a.b import c` (as `a.b.c`), and each
    attribute chain starting at the name `minigrad` (`minigrad.ops.elementwise.Add`, as `minigrad.ops`), at any
    depth, each with whether it is such a chain (read when the code runs, not when the file is imported).
    Relative imports are resolved by the caller's folder, so they are not read here (minigrad has none)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(alias.name, False) for alias in node.names if alias.name != "minigrad"]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found += [(f"{node.module}.{alias.name}", False) for alias in node.names]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "minigrad":
            found.append((f"minigrad.{node.attr}", True))
    return [(name, chain) for name, chain in found if name.startswith("minigrad.")]


def broken_rules(band: str, source: str) -> list[str]:
    """The references of a file of `band` that break the band's rules, each with the rule it breaks."""
    problems = []
    for name, chain in references(source):
        parts = name.split(".")
        if band in ENGINE:
            if band == "tensor" and chain and len(parts) == 2 and parts[1] in TENSOR_OWN_NAMES:
                continue
            if parts[1] not in ENGINE_MAY_USE:
                where = f"{parts[1]}/" if (PACKAGE / parts[1]).is_dir() else "the package face"
                problems.append(f"{name}: the engine imports nothing from {where}")
            elif parts[1] == "kernels" and len(parts) > 3:
                problems.append(f"{name}: the engine reaches kernels/ only through the kernels package")
        elif band == "fused" and parts[1] == "compat":
            problems.append(f"{name}: fused/ imports nothing from compat/")
        elif band == "kernels" and not any(name == use or name.startswith(use + ".") for use in KERNELS_MAY_USE):
            problems.append(f"{name}: kernels/ imports nothing above the backend")
    return sorted(set(problems))


def band_files() -> list[Path]:
    return sorted(path for band in (*ENGINE, "fused", "kernels") for path in (PACKAGE / band).glob("*.py"))


@pytest.mark.parametrize("path", band_files(), ids=lambda path: path.relative_to(PACKAGE).as_posix())
def test_every_import_points_down(path):
    band = path.relative_to(PACKAGE).parts[0]
    problems = broken_rules(band, path.read_text(encoding="utf-8"))
    assert not problems, f"{path.relative_to(PACKAGE)}: " + "; ".join(problems)


def test_the_rules_bite():
    """Each of the imports that once broke the bands is caught (the Tensor class's base from compat/, the core's
    import of a tool and of the package face), and so is every other route a rule names; the allowed ones pass."""
    broken = {
        "tensor": ["from minigrad.compat.moremath import CompatMathMethods",
                   "def f():\n    from minigrad.compat.mathops import einsum\n",
                   "import minigrad\nx = minigrad.full(3, 0.0)", "from minigrad import Tensor",
                   "import minigrad.viz", "from minigrad.kernels.select import compiled"],
        "core": ["from minigrad.tools.anomaly import AnomalyError", "import minigrad\nminigrad.Tensor._make(g, False)",
                 "from minigrad.nn import Module", "import minigrad\nminigrad.full(3, 0.0)"],
        "ops": ["import minigrad\nminigrad.compat.mathops.einsum"],
        "fused": ["from minigrad.compat import moremath"],
        "kernels": ["from minigrad.tensor import Tensor", "from minigrad.core.function import Function",
                    "import minigrad.ops"],
    }
    for band, sources in broken.items():
        for source in sources:
            assert broken_rules(band, source), (band, source)
    allowed = {
        "tensor": ["import minigrad\nminigrad.ops.elementwise.Add", "from minigrad.core import autograd",
                   "import minigrad\nisinstance(x, minigrad.Tensor)",
                   "from minigrad.factories import ones_like", '"""minigrad.compat is not read here."""'],
        "ops": ["from minigrad.kernels import blas", "from minigrad.core.function import Function"],
        "fused": ["from minigrad.kernels.select import compiled", "from minigrad.ops import elementwise"],
        "kernels": ["from minigrad.core.backend import get_array_module", "from minigrad.kernels import blas"],
    }
    for band, sources in allowed.items():
        for source in sources:
            assert not broken_rules(band, source), (band, source)
