"""docs/torch_names.md, the table of covered PyTorch names, is generated from the code: this test fails when
it is stale, when a public name of minigrad is missing from it, or (with PyTorch installed) when a name claims
a PyTorch counterpart that PyTorch does not have, or a minigrad-only name turns out to be PyTorch's."""

import importlib
import inspect
import runpy
from pathlib import Path

import pytest

import minigrad as mg

ROOT = Path(__file__).resolve().parent.parent
script = runpy.run_path(str(ROOT / "scripts" / "torch_names.py"))  # its functions, without running main()
TABLE = (ROOT / "docs" / "torch_names.md").read_text(encoding="utf-8")


def test_the_table_is_current():
    assert TABLE == script["render"](), "docs/torch_names.md is stale: run python -m scripts.torch_names"


def public_dir_names(module):
    """What a user sees with dir(): public names that are not submodules and come from minigrad."""
    names = []
    for name in dir(module):
        value = getattr(module, name)
        if name.startswith("_") or inspect.ismodule(value):
            continue
        if getattr(value, "__module__", "").startswith("minigrad") or isinstance(value, mg.dtype):
            names.append(name)
    return names


@pytest.mark.parametrize("namespace", ["minigrad", "minigrad.nn", "minigrad.optim"])
def test_every_public_name_is_in_the_table(namespace):
    module = importlib.import_module(namespace)
    listed = set(module.__all__) | set(public_dir_names(module))
    missing = [name for name in sorted(listed) if f"`{namespace}.{name}`" not in TABLE]
    assert not missing, f"not in docs/torch_names.md: {missing}"


@pytest.mark.parametrize("namespace", ["minigrad.nn.functional", "minigrad.nn.init", "minigrad.optim.lr_scheduler",
                                       "minigrad.utils.data"])
def test_every_name_of_the_submodules_is_in_the_table(namespace):
    module = importlib.import_module(namespace)
    missing = [name for name in module.__all__ if f"`{namespace}.{name}`" not in TABLE]
    assert not missing, f"not in docs/torch_names.md: {missing}"
    assert f"`{namespace}.Tensor`" not in TABLE  # imported helpers are not listed as the module's own


def test_tensor_methods_are_in_the_table():
    missing = [name for name in dir(mg.Tensor) if not name.startswith("_") and f"`minigrad.Tensor.{name}`" not in TABLE]
    assert not missing


def resolve(dotted):
    module_name, _, attribute = dotted.rpartition(".")
    try:
        return getattr(importlib.import_module(module_name), attribute)
    except ImportError:
        return getattr(resolve(module_name), attribute)


def test_every_covered_name_exists_in_pytorch():
    pytest.importorskip("torch")
    covered, own = script["rows"]()
    absent = []
    for torch_name, _, _ in covered:
        try:
            resolve(torch_name)
        except AttributeError:
            absent.append(torch_name)
    assert not absent, f"listed as PyTorch names, but PyTorch has none: {absent}"
    for name, _ in own:
        namespace, _, attribute = name.rpartition(".")
        torch_namespace = script["NAMESPACES"][namespace]
        with pytest.raises(AttributeError):
            resolve(f"{torch_namespace}.{attribute}")
