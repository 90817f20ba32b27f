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


def test_every_name_the_listed_programs_use_is_covered_or_refused_in_one_line():
    """tests/data/torch_programs_names.json: the torch names nanoGPT, minGPT, makemore, the build-GPT lecture and
    d2l-zh's PyTorch chapters use. Each is minigrad's, or a one-line refusal naming what to use instead."""
    names = script["program_names"]()
    assert len(names) > 200
    verdicts = {name: script["classify"](name) for name in names}
    missing = sorted(name for name, (verdict, _) in verdicts.items() if verdict == "missing")
    assert not missing, f"names real programs use that minigrad neither has nor refuses: {missing}"
    for name, (verdict, why) in verdicts.items():
        assert verdict == "covered" or ("minigrad has no" in why and "\n" not in why), (name, why)


@pytest.mark.parametrize("reach", [
    lambda: mg.tensor([1.0]).unique, lambda: mg.tensor([1.0]).t_, lambda: mg.accelerator.is_available,
    lambda: mg.onnx.export,
    lambda: mg.nn.Linear(2, 2).register_forward_hook, lambda: mg.optim.lr_scheduler.ReduceLROnPlateau,
    lambda: mg.nn.utils.parameters_to_vector, lambda: mg.cuda.amp.autocast, lambda: mg.utils.data.IterableDataset])
def test_a_refused_name_says_so_wherever_it_is_reached(reach):
    with pytest.raises(AttributeError, match="minigrad has no"):
        reach()


def test_backward_takes_pytorchs_gradient_keyword():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    (x * 3).backward(gradient=mg.tensor([1.0, 10.0]))
    assert x.grad.tolist() == [3.0, 30.0]
    (x * 3).backward(grad=mg.tensor([1.0, 1.0]))  # minigrad's own spelling stays
    assert x.grad.tolist() == [6.0, 33.0]


def test_a_name_counts_as_covered_only_where_a_program_reaches_it(monkeypatch):
    """The coverage check resolves `torch.autograd.grad` as `torch.autograd.grad` and by `from torch.autograd import
    grad`: with the module gone from its PyTorch path (the object still importable elsewhere) it is missing."""
    import sys

    assert script["classify"]("torch.autograd.grad") == ("covered", "")
    assert script["classify"]("torch.utils.data.dataloader.DataLoader") == ("covered", "")
    monkeypatch.delattr(mg, "autograd")
    monkeypatch.delitem(sys.modules, "minigrad.autograd")
    verdict, why = script["classify"]("torch.autograd.grad")
    assert verdict == "missing" and "autograd" in why
    assert mg.grad  # the function itself is still there, under minigrad's own name


def test_a_name_found_by_attribute_but_not_by_import_is_missing(monkeypatch):
    import sys

    monkeypatch.delitem(sys.modules, "minigrad.cuda")  # mg.cuda is there; `from minigrad.cuda import ...` is not
    verdict, why = script["classify"]("torch.cuda.is_available")
    assert verdict == "missing" and "minigrad.cuda" in why


def test_a_refused_module_is_refused_not_covered():
    verdict, why = script["classify"]("torch.onnx")
    assert verdict == "refused" and why.startswith("torch.onnx: minigrad has no ONNX export")
    assert script["classify"]("torch.backends.cudnn.benchmark")[0] == "refused"
