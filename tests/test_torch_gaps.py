"""A torch name outside minigrad's scope fails at the call, in one line that says so and what to use instead
(minigrad/compat/missing.py); any other missing name fails as Python's AttributeError, pointing at the table."""

import importlib

import pytest

import minigrad as mg
from minigrad.compat.missing import GAPS, refused_modules

TORCH_MODULE = {"minigrad": "torch", "minigrad.nn": "torch.nn", "minigrad.functional": "torch.nn.functional",
                "minigrad.optim": "torch.optim", "minigrad.Tensor": "torch.Tensor",
                "minigrad.nn.Module": "torch.nn.Module",
                "minigrad.nn.utils": "torch.nn.utils", "minigrad.nn.utils.rnn": "torch.nn.utils.rnn",
                "minigrad.cuda": "torch.cuda", "minigrad.backends": "torch.backends",
                "minigrad.nn.modules": "torch.nn.modules",
                "minigrad.utils.data": "torch.utils.data", "minigrad.optim.lr_scheduler": "torch.optim.lr_scheduler"}
# Where a refusal is reached: a module, or an instance of the class (its attributes are looked up on the object).
REACH = {"minigrad.Tensor": lambda: mg.tensor([1.0]), "minigrad.nn.Module": lambda: mg.nn.Linear(2, 2),
         "minigrad.cuda": lambda: mg.cuda}
CASES = [(module, name) for module, names in GAPS.items() for name in names]
NAMES = [case for case in CASES if ".".join(case) not in refused_modules()]
MODULES = [case for case in CASES if ".".join(case) in refused_modules()]


@pytest.mark.parametrize("module, name", NAMES)
def test_a_name_minigrad_does_not_have_is_refused_with_a_reason(module, name):
    namespace = REACH[module]() if module in REACH else importlib.import_module(module)
    with pytest.raises(AttributeError) as error:
        getattr(namespace, name)
    message = str(error.value)
    assert message.startswith(f"{TORCH_MODULE[module]}.{name}: minigrad has no ")
    assert "\n" not in message
    assert not hasattr(namespace, name)  # hasattr, which catches AttributeError, still answers False
    if module not in REACH:  # a module's name: `from module import name` gives the same line, as an ImportError
        with pytest.raises(ImportError) as imported:
            exec(f"from {module} import {name}", {})
        assert str(imported.value) == message


@pytest.mark.parametrize("module, name", MODULES)
def test_a_module_minigrad_does_not_have_imports_and_refuses_each_name_in_one_line(module, name):
    """`import torch.onnx` at the top of a script that never exports runs; what is read from it is refused."""
    refused = importlib.import_module(f"{module}.{name}")
    assert getattr(importlib.import_module(module), name) is refused
    expected = f"{TORCH_MODULE[module]}.{name}.export: minigrad has no "
    with pytest.raises(AttributeError) as error:
        refused.export  # noqa: B018
    assert str(error.value).startswith(expected) and "\n" not in str(error.value)
    with pytest.raises(ImportError) as imported:
        exec(f"from {module}.{name} import export", {})
    assert str(imported.value) == str(error.value)
    assert not hasattr(refused, "__path__")  # Python's own probes get a plain answer


def test_the_script_spellings_reach_the_same_refusals():
    import minigrad.nn.functional as F

    from minigrad import nn, optim

    for reach in (lambda: mg.compile, lambda: nn.Conv2d, lambda: F.conv2d, lambda: optim.RMSprop,
                  lambda: mg.complex64, lambda: nn.Conv1d):
        with pytest.raises(AttributeError, match="minigrad has no"):
            reach()
    with pytest.raises(ImportError, match=r"^torch\.nn\.Conv2d: minigrad has no convolutions"):
        exec("from minigrad.nn import Conv2d", {})


def test_an_unknown_name_is_pythons_attribute_error_pointing_at_the_table():
    with pytest.raises(AttributeError, match=r"module 'minigrad' has no attribute 'tensr' \(.*docs/torch_names.md"):
        mg.tensr  # noqa: B018


def test_the_refusals_do_not_hide_what_minigrad_has():
    assert mg.tensor([1.0, 2.0]).sum().item() == 3.0
    assert mg.nn.Linear and mg.functional.gelu and mg.optim.AdamW and mg.float32


@pytest.mark.torch
@pytest.mark.parametrize("module, name", CASES)
def test_every_refused_name_is_a_real_pytorch_name(module, name):
    pytest.importorskip("torch")
    torch_module, _, torch_class = TORCH_MODULE[module].rpartition(".")
    if torch_class in ("Tensor", "Module"):  # a class's attribute
        namespace = getattr(importlib.import_module(torch_module), torch_class)
    else:
        namespace = importlib.import_module(TORCH_MODULE[module])
    assert hasattr(namespace, name), f"{TORCH_MODULE[module]}.{name} is not a PyTorch name: drop it from GAPS"


FORMS = {  # one refused name reached by each form a program writes; every one must give the same single line
    "attribute": "import minigrad as torch\ntorch.nn.Conv2d",
    "module alias": "import minigrad.nn as nn\nnn.Conv2d",
    "from package": "from minigrad.nn import Conv2d",
    "from, among found names": "from minigrad.nn import Linear, Conv2d",
    "from F's PyTorch path": "from minigrad.nn.functional import conv2d",
    "F's attribute": "import minigrad.nn.functional as F\nF.conv2d",
    "from the top": "from minigrad import compile",
    "a refused module's name": "import minigrad.onnx\nminigrad.onnx.export",
    "from a refused module": "from minigrad.onnx import export",
    "from a refused submodule": "from minigrad.cuda.amp import autocast",
    "a refused module's name by alias": "import minigrad.linalg as LA\nLA.norm",
    "from a real module, refused name": "from minigrad.optim import LBFGS",
}


@pytest.mark.parametrize("form", FORMS)
def test_a_refusal_survives_every_access_and_import_form(form):
    with pytest.raises((AttributeError, ImportError)) as error:
        exec(FORMS[form], {})
    message = str(error.value)
    assert "minigrad has no" in message and "\n" not in message, message
    assert "cannot import name" not in message
    assert isinstance(error.value, ImportError) == (form.startswith("from")), type(error.value)
