"""PyTorch's module paths, reached by every form a program uses: `import torch.X.Y`, `from torch.X.Y import name`,
`import torch.X.Y as m` and the attribute chain `torch.X.Y.name`, each compared with PyTorch's answer; and what
is found there (torch.autograd's grad, backward, Function, gradcheck) gives PyTorch's values and gradients."""

import importlib

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

# (module path under torch, a name found there): each must be reached the same four ways under both packages.
PATHS = [
    ("autograd", "grad"), ("autograd", "Function"), ("autograd", "gradcheck"), ("autograd", "backward"),
    ("autograd", "no_grad"), ("utils.data.dataloader", "DataLoader"), ("utils.data.dataloader", "default_collate"),
    ("utils.data.dataset", "Dataset"), ("utils.data.dataset", "TensorDataset"), ("utils.data.dataset", "Subset"),
    ("utils.data.dataset", "random_split"), ("utils.data", "DataLoader"), ("nn.functional", "relu"),
    ("nn.modules", "Linear"), ("nn.modules.module", "Module"), ("nn.modules.linear", "Linear"),
    ("nn.modules.loss", "CrossEntropyLoss"), ("nn.modules.activation", "GELU"), ("nn.modules.container", "Sequential"),
    ("nn.modules.sparse", "Embedding"), ("nn.modules.normalization", "LayerNorm"), ("nn.modules.dropout", "Dropout"),
    ("nn.utils", "clip_grad_norm_"), ("nn.init", "normal_"), ("optim.lr_scheduler", "StepLR"),
    ("cuda", "is_available"), ("cuda", "device_count"),
]


def reach_every_way(package, path, name):
    """The object at package.path.name, found four ways; all four must give the same object."""
    dotted = f"{package}.{path}"
    scope = {}
    exec(f"import {dotted}\nfrom {dotted} import {name} as by_from\nimport {dotted} as alias", scope)
    by_attribute = importlib.import_module(package)
    for part in [*path.split("."), name]:
        by_attribute = getattr(by_attribute, part)
    found = {id(scope["by_from"]), id(getattr(scope["alias"], name)), id(by_attribute),
             id(getattr(importlib.import_module(dotted), name))}
    assert len(found) == 1, f"{dotted}.{name} is not one object by every path"
    return by_attribute


@pytest.mark.parametrize("path, name", PATHS, ids=lambda p: str(p))
def test_every_import_form_reaches_the_name_as_in_pytorch(path, name):
    ours, theirs = reach_every_way("minigrad", path, name), reach_every_way("torch", path, name)
    assert callable(ours) == callable(theirs) and isinstance(ours, type) == isinstance(theirs, type)


def test_autograd_grad_by_its_pytorch_path_gives_pytorchs_gradient():
    """The regression: `torch.autograd.grad` failed under `import minigrad as torch` once autograd moved."""
    values = np.array([0.5, -1.0, 2.0], dtype=np.float32)
    grads = []
    for lib in (mg, torch):
        x = lib.tensor(values, requires_grad=True)
        (gx,) = lib.autograd.grad((x.tanh() * x).sum(), [x], create_graph=True)
        (ggx,) = lib.autograd.grad(gx.sum(), [x])
        grads.append((gx.detach().numpy(), ggx.numpy()))
    np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-6)
    np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-5)


def test_autograd_backward_sums_the_outputs_gradients_as_pytorchs():
    found = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * x
        lib.autograd.backward([y.sum(), (y * 3).sum()], [lib.tensor(1.0), lib.tensor(2.0)])
        found.append(x.grad.numpy())
    np.testing.assert_allclose(*found)


def custom_exp(lib):
    """PyTorch's documented custom Function, word for word: the output saved for backward."""

    class Exp(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            result = i.exp()
            ctx.save_for_backward(result)
            return result

        @staticmethod
        def backward(ctx, grad_output):
            (result,) = ctx.saved_tensors
            return grad_output * result

    return Exp


def custom_scale(lib):
    """A custom Function with a non-tensor argument, whose gradient is None, and needs_input_grad."""

    class Scale(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w, k):
            ctx.save_for_backward(x, w)
            ctx.k = k
            return x * w * k

        @staticmethod
        def backward(ctx, gy):
            x, w = ctx.saved_tensors
            return (gy * w * ctx.k if ctx.needs_input_grad[0] else None), gy * x * ctx.k, None

    return Scale


def test_a_custom_autograd_function_gives_pytorchs_values_and_gradients():
    found = []
    for lib in (mg, torch):
        x = lib.tensor([[0.1, -0.4], [1.2, 0.3]], requires_grad=True)
        w = lib.tensor([0.5, 2.0], requires_grad=True)
        y = custom_exp(lib).apply(x)
        z = custom_scale(lib).apply(y, w, 3.0)
        (z * z).sum().backward()
        found.append([y.detach().numpy(), z.detach().numpy(), x.grad.numpy(), w.grad.numpy()])
    for ours, theirs in zip(*found):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert "ExpBackward" in repr(custom_exp(mg).apply(mg.ones(1, requires_grad=True)))


def test_a_custom_function_records_nothing_when_no_input_needs_a_gradient():
    y = custom_exp(mg).apply(mg.tensor([1.0]))
    assert y.grad_fn is None and not y.requires_grad
    with mg.no_grad():
        assert custom_exp(mg).apply(mg.tensor([1.0], requires_grad=True)).grad_fn is None


def test_autograd_gradcheck_by_its_pytorch_path():
    x = mg.tensor(np.array([0.3, -0.7]), dtype=mg.float64, requires_grad=True)
    assert mg.autograd.gradcheck(lambda t: custom_exp(mg).apply(t), [x])
    assert torch.autograd.gradcheck(lambda t: custom_exp(torch).apply(t),
                                    [torch.tensor([0.3, -0.7], dtype=torch.float64, requires_grad=True)])


def test_import_onnx_at_the_top_of_a_script_that_never_exports_runs():
    scope = {}
    exec("import minigrad as torch\nimport minigrad.onnx\nx = torch.ones(2)\ny = (x * 2).sum().item()", scope)
    assert scope["y"] == 4.0
