"""Write docs/torch_names.md: the table of PyTorch names that minigrad covers, generated from the code itself.

    python -m scripts.torch_names            # rewrite the table (run from the repository root)
    python -m scripts.torch_names --check    # exit 1 if the table is stale (tests/test_torch_names.py does this)
    python -m scripts.torch_names --programs # the names real PyTorch programs use: covered, refused or missing

The names real programs use (nanoGPT, minGPT, makemore, the build-GPT lecture, d2l-zh's PyTorch chapters) are
kept in tests/data/torch_programs_names.json, each with the files it was read in; `classify` says of each whether
minigrad has it, refuses it in one line naming what to use instead, or lacks it, reaching each name the two ways a
program does (an attribute chain from the package, and `from module import name`).

Each namespace of minigrad stands for one of PyTorch's (`minigrad.nn.init` for `torch.nn.init`, ...). Its public
names are its `__all__` (or, without one, the functions and classes defined in it); every one is listed under the
PyTorch name it stands for, except those in MINIGRAD_ONLY (minigrad's own, listed apart) and those in ELSEWHERE
(PyTorch keeps them in another namespace). The test holds the two sets against an installed PyTorch, so a name
cannot claim a PyTorch meaning that PyTorch does not have.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import sys
from pathlib import Path

import numpy as np

from minigrad.compat.missing import GAPS, RefusedModule, refuse

TABLE = Path(__file__).resolve().parent.parent / "docs" / "torch_names.md"
PROGRAM_NAMES = Path(__file__).resolve().parent.parent / "tests" / "data" / "torch_programs_names.json"

# minigrad namespace -> the PyTorch namespace it mirrors (for a class: its methods and attributes)
NAMESPACES = {
    "minigrad": "torch",
    "minigrad.Tensor": "torch.Tensor",
    "minigrad.autograd": "torch.autograd",
    "minigrad.nn": "torch.nn",
    "minigrad.nn.Module": "torch.nn.Module",
    "minigrad.nn.functional": "torch.nn.functional",
    "minigrad.nn.init": "torch.nn.init",
    "minigrad.nn.utils": "torch.nn.utils",
    "minigrad.optim": "torch.optim",
    "minigrad.optim.Optimizer": "torch.optim.Optimizer",
    "minigrad.optim.lr_scheduler": "torch.optim.lr_scheduler",
    "minigrad.utils.data": "torch.utils.data",
}

# Public names kept out of __all__: PyTorch's dtype aliases that share a name with a Python builtin, and the
# memory setting minigrad/__init__.py applies on import.
EXTRA = {"minigrad": ["bool", "float", "int", "keep_freed_host_memory"]}

# Names PyTorch has, but in another namespace.
ELSEWHERE = {
    "minigrad.detect_anomaly": "torch.autograd.detect_anomaly",
    "minigrad.grad": "torch.autograd.grad",
    "minigrad.gradcheck": "torch.autograd.gradcheck",
    "minigrad.gradgradcheck": "torch.autograd.gradgradcheck",
}

# minigrad's own names, with no PyTorch counterpart.
MINIGRAD_ONLY = {
    "minigrad.AnomalyError", "minigrad.CheckpointError", "minigrad.Function", "minigrad.GradcheckError",
    "minigrad.ShapeError", "minigrad.keep_freed_host_memory", "minigrad.load_metadata", "minigrad.viz",
    "minigrad.Tensor.array", "minigrad.Tensor.astype", "minigrad.Tensor.gelu", "minigrad.Tensor.zero_grad",
    "minigrad.nn.Module.num_parameters", "minigrad.nn.functional.attention_probs", "minigrad.nn.init.linear_default_",
    "minigrad.optim.constant_with_warmup", "minigrad.optim.cosine_with_warmup", "minigrad.optim.flatten_state_dict",
    "minigrad.optim.linear_with_warmup", "minigrad.optim.set_lr", "minigrad.optim.unflatten_state_dict",
}


def owner(namespace: str) -> object:
    """The module, or the class (minigrad.Tensor, minigrad.nn.Module, ...), that a namespace names."""
    try:
        return importlib.import_module(namespace)
    except ImportError:
        module_name, _, class_name = namespace.rpartition(".")
        return getattr(importlib.import_module(module_name), class_name)


def public_names(namespace: str) -> list[str]:
    """The public names of a minigrad namespace: __all__ (plus EXTRA), what the module itself defines, or a
    class's public attributes."""
    module = owner(namespace)
    if inspect.isclass(module):
        return sorted(name for name in dir(module) if not name.startswith("_"))
    if hasattr(module, "__all__"):
        return sorted({*module.__all__, *EXTRA.get(namespace, [])})
    return sorted(name for name, value in vars(module).items()
                  if not name.startswith("_") and not inspect.ismodule(value)
                  and getattr(value, "__module__", None) == module.__name__)


def summary(namespace: str, name: str) -> str:
    """What kind of thing the name is (class, function, method, attribute, dtype, module). Only the kind, not the
    docstring: the table then changes when a name comes or goes, never when a docstring is reworded."""
    where = owner(namespace)
    value = inspect.getattr_static(where, name) if inspect.isclass(where) else getattr(where, name)
    if isinstance(value, np.dtype):
        return f"dtype ({value})"
    if inspect.ismodule(value):
        return "module"
    if inspect.isclass(value):
        return "class"
    if inspect.isclass(where):
        return "method" if inspect.isroutine(value) or isinstance(value, (staticmethod, classmethod)) else "attribute"
    return "function" if callable(value) else "value"


def rows() -> tuple[list[tuple[str, str, str]], list[tuple[str, str]]]:
    """(torch name, minigrad name, kind) for every covered name, and (minigrad name, kind) for the rest."""
    covered, own = [], []
    for namespace, torch_namespace in NAMESPACES.items():
        for name in public_names(namespace):
            full = f"{namespace}.{name}"
            if full in MINIGRAD_ONLY:
                own.append((full, summary(namespace, name)))
            else:
                covered.append((ELSEWHERE.get(full, f"{torch_namespace}.{name}"), full, summary(namespace, name)))
    return covered, own


def render() -> str:
    covered, own = rows()
    lines = [
        "# PyTorch names in minigrad",
        "",
        "Generated by `python -m scripts.torch_names` from the code (do not edit by hand; a test fails when this",
        "table is stale). Each name below means in minigrad what it means in PyTorch, or raises a clear error",
        "for the cases minigrad does not cover. Random streams are reproducible within minigrad, but they are",
        "not PyTorch's: the same seed gives different numbers under the two libraries.",
        "",
        f"## Covered: {len(covered)} names",
        "",
        "| PyTorch | minigrad | kind |",
        "|---|---|---|",
        *(f"| `{torch_name}` | `{name}` | {text} |" for torch_name, name, text in covered),
        "",
        f"## minigrad's own names: {len(own)}",
        "",
        "| minigrad | kind |",
        "|---|---|",
        *(f"| `{name}` | {text} |" for name, text in own),
        "",
        f"## Not in minigrad: {sum(len(names) for names in GAPS.values())} names refused with a reason",
        "",
        "These raise AttributeError at the call, in one line saying why and what to use instead",
        "(minigrad/compat/missing.py); any other missing name points back to this table.",
        "",
        "| PyTorch | why, and what to use instead |",
        "|---|---|",
        *(f"| `{refuse(module, name).args[0].split(': ', 1)[0]}` | {refuse(module, name).args[0].split(': ', 1)[1]} |"
          for module, names in GAPS.items() for name in names),
        "",
    ]
    return "\n".join(lines)


def program_names() -> dict[str, list[str]]:
    """The torch names the listed programs use, each with the files it appears in."""
    return json.loads(PROGRAM_NAMES.read_text(encoding="utf-8"))["names"]


def classify(torch_name: str) -> tuple[str, str]:
    """("covered", ""), ("refused", the one-line message) or ("missing", Python's message) for a torch name.

    The name is resolved the two ways a program reaches it, with `torch` spelled `minigrad`: as an attribute chain
    from the package (`torch.autograd.grad` is `minigrad` . autograd . grad) and by `from torch.autograd import
    grad` (the module is the name's path up to its first class: `torch.nn.Module.zero_grad` is imported as `from
    torch.nn import Module`). A name is covered only when both work, so a module that moved cannot pass; an
    optimizer's attributes are looked up on an optimizer, as they are set when it is made."""
    parts = ["minigrad", *torch_name.split(".")[1:]]
    verdicts = [_by_attributes(parts), _by_import(parts)]
    for kind in ("missing", "refused"):
        for verdict in verdicts:
            if verdict[0] == kind:
                return verdict
    return "covered", ""


def _by_attributes(parts: list[str]) -> tuple[str, str]:
    """The name reached as `minigrad.a.b.c`, one getattr at a time from the package."""
    import minigrad as mg

    where, rest = importlib.import_module("minigrad"), parts[1:]
    if parts[:3] == ["minigrad", "optim", "Optimizer"] and len(parts) == 4:
        where, rest = mg.optim.SGD([mg.nn.Parameter(mg.zeros(1))], lr=0.1), parts[3:]
    owner = "minigrad"
    for part in rest:
        try:
            where = getattr(where, part)
        except AttributeError as error:
            if part in GAPS.get(owner, {}):  # refused on a class (minigrad.Tensor.unique)
                return "refused", str(refuse(owner, part))
            return ("refused", str(error)) if is_refusal(error) else ("missing", str(error))
        owner = f"{owner}.{part}"
    if isinstance(where, RefusedModule):  # a module that exists only to refuse what is read from it
        return "refused", str(refuse(where.__name__.rpartition(".")[0], where.__name__.rpartition(".")[2]))
    refusal = getattr(where, "__refusal__", None)  # a method that exists only to say it is not there
    return ("refused", refusal) if refusal else ("covered", "")


def _by_import(parts: list[str]) -> tuple[str, str]:
    """The name reached by `from minigrad.a.b import c` (c the first class on the path, or the last name)."""
    first_class = next((i for i, part in enumerate(parts[1:-1], 1) if part[:1].isupper()), len(parts) - 1)
    module, name = ".".join(parts[:first_class]), parts[first_class]
    try:
        exec(f"from {module} import {name}", {})  # the statement itself: its lookups are the ones a program makes
    except ImportError as error:
        return ("refused", str(error)) if is_refusal(error) else ("missing", str(error))
    return "covered", ""


def is_refusal(error: Exception) -> bool:
    """Whether an AttributeError is one of minigrad's one-line refusals rather than Python's bare one."""
    return "minigrad has no" in str(error) or "minigrad does not" in str(error)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/torch_names.md is stale")
    parser.add_argument("--programs", action="store_true", help="classify the names real PyTorch programs use")
    args = parser.parse_args()
    if args.programs:
        verdicts = {name: classify(name) for name in program_names()}
        for kind in ("missing", "refused"):
            for name, (verdict, why) in verdicts.items():
                if verdict == kind:
                    print(f"{kind:8} {name}: {why}")
        counts = {kind: sum(v == kind for v, _ in verdicts.values()) for kind in ("covered", "refused", "missing")}
        print(f"{len(verdicts)} names: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
        return 1 if counts["missing"] else 0
    text = render()
    if args.check:
        if not TABLE.exists() or TABLE.read_text(encoding="utf-8") != text:
            print(f"{TABLE} is stale: run python -m scripts.torch_names", file=sys.stderr)
            return 1
        return 0
    TABLE.write_text(text, encoding="utf-8")
    print(f"wrote {TABLE} ({text.count(chr(10))} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
