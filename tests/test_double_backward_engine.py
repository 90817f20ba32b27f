"""`mg.grad` and `create_graph=True` with the rest of the engine: PyTorch's meanings and errors, derivatives of any
order, anomaly detection, no_grad, retain_graph and drawing on recorded gradients, `gradgradcheck` catching a wrong
second derivative, and PyTorch agreeing on Hessian-vector products and on second derivatives of an MLP and of a
one-block GPT's loss.

Read next: test_double_backward.py (every op class under gradgradcheck).
"""

import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT
from minigrad import nn
from minigrad.core.function import Tensors


def tensor(values, device="cpu", requires_grad=True):
    return mg.tensor(values, dtype=np.float64, device=device, requires_grad=requires_grad)


# ----------------------------------------------------------------------------------------------------
# mg.grad, as torch.autograd.grad


def test_grad_returns_a_tuple_and_leaves_dot_grad_alone(device):
    x, w = tensor([1.0, 2.0], device), tensor([3.0, -1.0], device)
    gx, gw = mg.grad((x * w).sum(), [x, w])
    assert gx.numpy().tolist() == [3.0, -1.0] and gw.numpy().tolist() == [1.0, 2.0]
    assert x.grad is None and w.grad is None
    assert not gx.requires_grad and gx.grad_fn is None  # without create_graph: plain values
    (only,) = mg.grad((x * x).sum(), x)  # one input, given alone: still a tuple
    assert only.numpy().tolist() == [2.0, 4.0]


def test_grad_takes_grad_outputs_several_outputs_and_intermediate_inputs(device):
    x = tensor([1.0, 2.0, 3.0], device)
    h = x * x  # an intermediate tensor: its gradient, not x's
    y = h * 3
    (gh,) = mg.grad(y, h, grad_outputs=np.array([1.0, 0.0, 2.0]), retain_graph=True)
    assert gh.numpy().tolist() == [3.0, 0.0, 6.0]
    # Two outputs: their gradients add up, as if they were summed; h and x both wanted, x through h too.
    gh, gx = mg.grad([y.sum(), h[0]], [h, x], retain_graph=True)
    assert gh.numpy().tolist() == [4.0, 3.0, 3.0] and gx.numpy().tolist() == [8.0, 12.0, 18.0]
    gx_twice = mg.grad(y.sum(), [x, x])
    assert [g.numpy().tolist() for g in gx_twice] == [[6.0, 12.0, 18.0]] * 2


def test_grad_errors_are_pytorchs(device):
    x, unused = tensor([1.0, 2.0], device), tensor([5.0], device)
    y = (x * x).sum()
    with pytest.raises(RuntimeError, match=r"grad: input 1 \(shape minigrad\.Size\(\[1\]\)\) was not used "
                       r".* allow_unused=True"):
        mg.grad(y, [x, unused], retain_graph=True)
    gx, none = mg.grad(y, [x, unused], allow_unused=True, retain_graph=True)
    assert none is None and gx.numpy().tolist() == [2.0, 4.0]
    with pytest.raises(RuntimeError, match=r"grad: input 0 \(shape minigrad\.Size\(\[2\]\)\) does not require grad"):
        mg.grad(y, tensor([1.0, 2.0], device, requires_grad=False))
    with pytest.raises(RuntimeError, match="grad: output 0 does not require grad"):
        mg.grad(x.detach().sum(), x)
    with pytest.raises(RuntimeError, match=r"grad: grad_outputs\[0\] can be omitted only for a scalar output"):
        mg.grad(x * x, x)
    with pytest.raises(mg.ShapeError, match=r"grad: grad_outputs\[0\] has shape \(3,\), the tensor \(2,\)"):
        mg.grad(x * x, x, np.ones(3))
    with pytest.raises(ValueError, match="2 grad_outputs for 1 outputs"):
        mg.grad(x * x, x, [np.ones(2), np.ones(2)])


def test_what_cannot_be_differentiated_says_why(device):
    x = tensor([0.5, -1.0, 2.0], device)
    with pytest.raises(RuntimeError, match="output 0 does not require grad: it is int64, and integers and bools"):
        mg.grad(x.argmax(), x)
    values, indices = x.max(0)
    with pytest.raises(RuntimeError, match="input 0 .* does not require grad.*a int64 tensor has no gradient"):
        mg.grad(values, indices)
    (g,) = mg.grad(x.relu().sum(), x, create_graph=True)  # 1 where x > 0: a constant, with no graph
    assert g.numpy().tolist() == [1.0, 0.0, 1.0] and not g.requires_grad
    with pytest.raises(RuntimeError, match=r"does not require grad: .*relu's or a linear function's"):
        mg.grad(g.sum(), x)
    (g,) = mg.grad(values**2, x, create_graph=True)  # but max(dim)'s values differentiate twice
    assert g.numpy().tolist() == [0.0, 0.0, 4.0] and mg.grad(g.sum(), x)[0].numpy().tolist() == [0.0, 0.0, 2.0]


def test_a_freed_graph_refuses_a_second_grad_and_retain_graph_keeps_it(device):
    x = tensor([0.5, 1.0], device)
    y = x.tanh().sum()
    mg.grad(y, x)  # retain_graph defaults to create_graph, False here: the buffers are freed
    with pytest.raises(RuntimeError, match="backward through the graph a second time.*retain_graph=True"):
        mg.grad(y, x)
    y = x.tanh().sum()
    first = mg.grad(y, x, retain_graph=True)[0].numpy()
    np.testing.assert_array_equal(mg.grad(y, x)[0].numpy(), first)


def test_grad_runs_only_the_ops_on_a_path_to_its_inputs(device):
    a, c = tensor([1.0, 2.0], device), tensor([0.5, 0.1], device)
    h = c.exp()
    h.sum().backward()  # frees Exp's buffers
    y = (a * 2 + h).sum()
    assert mg.grad(y, a, retain_graph=True)[0].numpy().tolist() == [2.0, 2.0]  # Exp is not on the way to a
    with pytest.raises(RuntimeError, match="second time"):
        mg.grad(y, c)


def test_returned_gradients_never_alias_what_came_in(device):
    x = tensor([1.0, 2.0], device)
    v = tensor([5.0, 7.0], device, requires_grad=False)
    (g,) = mg.grad(x.clone(), x, v)  # clone hands gy straight through
    g.array += 1
    assert v.numpy().tolist() == [5.0, 7.0]
    (g,) = mg.grad(x.clone(), x, v, create_graph=True)
    assert g.array is not v.array


# ----------------------------------------------------------------------------------------------------
# create_graph: derivatives of derivatives


def test_backward_with_create_graph_gives_grads_that_have_a_graph(device):
    x = tensor([0.5, -1.0], device)
    (x**3).sum().backward(create_graph=True)
    g = x.grad  # 3 x**2, with its own graph
    assert g.grad_fn is not None and g.numpy().tolist() == [0.75, 3.0]
    x.grad = None
    g.sum().backward()  # d/dx sum(3 x**2) = 6 x
    assert x.grad.numpy().tolist() == [3.0, -6.0]
    y = (x**3).sum()
    y.backward(create_graph=True)
    y.backward(create_graph=True)  # allowed: with create_graph, retain_graph defaults to True
    assert x.grad.grad_fn is not None  # accumulated out of place, keeping the graph
    np.testing.assert_allclose(x.grad.numpy(), [3.0 + 2 * 0.75, -6.0 + 2 * 3.0])


def test_tanh_to_the_fourth_derivative(device):
    x = tensor(np.linspace(-2, 2, 7), device)
    t = np.tanh(x.numpy())
    expected = [1 - t**2, -2 * t * (1 - t**2), (1 - t**2) * (6 * t**2 - 2), 8 * t * (1 - t**2) * (2 - 3 * t**2)]
    y = x.tanh()
    for order, want in enumerate(expected, start=1):
        (y,) = mg.grad(y.sum(), x, create_graph=True)
        np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12, err_msg=f"derivative {order}")


def third_derivative_check(fn, arrays, device):
    """gradgradcheck of fn's gradient: fn's third derivatives, so every route's backward-on-tensors is
    differentiated once more (a Transposed op flips back; a composed twin's graph is differentiated twice)."""
    xs = [tensor(a, device) for a in arrays]

    def gradient(*xs):
        return mg.concat([g.reshape(-1) for g in mg.grad(fn(*xs).sum(), xs, create_graph=True)])
    assert mg.gradgradcheck(gradient, xs)


@pytest.mark.parametrize("name", ["index and sum", "expand and permute", "embedding", "gelu", "layer_norm",
                                  "attention", "cross_entropy", "matmul", "std"])
def test_third_derivatives(device, name):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((3, 4)), rng.standard_normal((4, 3))
    fns = {
        "index and sum": lambda x: (x[[0, 2, 2]] ** 3).sum(1),
        "expand and permute": lambda x: (x.reshape(3, 1, 4).expand(3, 2, 4).permute(2, 0, 1) ** 3),
        "embedding": lambda w: F.embedding(np.array([0, 2, 2, 1]), w).tanh(),
        "gelu": F.gelu,
        "layer_norm": lambda x: F.layer_norm(x, (4,)) ** 2,
        "attention": lambda x: F.scaled_dot_product_attention(x, x * 2, x, is_causal=True) ** 2,
        "cross_entropy": lambda x: F.cross_entropy(x, np.array([1, 0, 3]), label_smoothing=0.1),
        "matmul": lambda x, w: (x @ w).sin(),
        "std": lambda x: x.std(1),
    }
    third_derivative_check(fns[name], [x, w] if name == "matmul" else [w] if name == "embedding" else [x], device)


def test_gradgradcheck_finds_a_wrong_second_derivative():
    class Cube(mg.Function):
        """y = x**3; dy/dx = 3 x**2, from a buffer wrongly declared constant: its second derivative comes out 0."""

        double_backward = Tensors()
        constants = ("x_squared",)

        def forward(self, x):
            self.x_squared = x * x
            return x**3

        def backward(self, gy):
            return gy * 3 * self.x_squared

    x = tensor([0.5, -1.5])
    assert mg.gradcheck(Cube.apply, [x])  # the first derivative is right
    with pytest.raises(mg.GradcheckError, match=r"gradgradcheck: second derivative.*input 0 \(shape \(2,\)\) is "
                                                r"wrong at element \(\d,\): analytic 0, numeric -?[\d.]+"):
        mg.gradgradcheck(Cube.apply, [x])
    assert mg.gradgradcheck(lambda t: t**3, [x])  # the op itself differentiates twice


def test_an_op_whose_derived_buffer_is_undeclared_is_refused():
    class SoftSign(mg.Function):
        """y = x / (1 + |x|); dy/dx = 1 / (1 + |x|)**2, from a derived buffer that double backward cannot see."""

        double_backward = Tensors(x=0)

        def forward(self, x):
            self.denominator = 1 + np.abs(x)
            return x / self.denominator

        def backward(self, gy):
            return gy / (self.denominator * self.denominator)

    x = tensor([0.5, -2.0])
    mg.grad(SoftSign.apply(x).sum(), x)  # the ordinary backward is fine
    with pytest.raises(RuntimeError, match="SoftSign: cannot run its backward on tensors .* `denominator`"):
        mg.grad(SoftSign.apply(x).sum(), x, create_graph=True)


def test_an_op_that_declares_no_double_backward_is_refused_and_nothing_is_inferred_from_names():
    class Square(mg.Function):
        """y = x**2; dy/dx = 2 x, from a buffer named like forward's argument: a name alone declares nothing."""

        def forward(self, x):
            self.x = x
            return x * x

        def backward(self, gy):
            return gy * 2 * self.x

    x = tensor([0.5, -2.0])
    np.testing.assert_allclose(mg.grad(Square.apply(x).sum(), x)[0].numpy(), [1.0, -4.0])
    with pytest.raises(RuntimeError, match=r"Square: cannot be differentiated twice .* declares no double_backward"):
        mg.grad(Square.apply(x).sum(), x, create_graph=True)
    Square.double_backward = Tensors(x=0)  # self.x is input 0
    (g,) = mg.grad(Square.apply(x).sum(), x, create_graph=True)
    np.testing.assert_allclose(mg.grad(g.sum(), x)[0].numpy(), [2.0, 2.0])


# ----------------------------------------------------------------------------------------------------
# The rest of the engine, on recorded gradients


def test_no_grad_and_create_graph(device):
    x = tensor([0.5, 2.0], device)
    with mg.no_grad():
        y = (x * x).sum()
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.grad(y, x, create_graph=True)
    y = (x * x * x).sum()
    with mg.no_grad():  # as in PyTorch, create_graph records the gradients' graph even inside no_grad
        (g,) = mg.grad(y, x, create_graph=True)
        step = x - 0.1 * g  # but ordinary ops there record nothing
    assert g.grad_fn is not None and step.grad_fn is None
    assert mg.is_grad_enabled()


def test_retain_graph_false_with_create_graph_frees_the_first_graph():
    x = tensor([0.5, 2.0])
    (g,) = mg.grad(x.tanh().sum(), x, create_graph=True, retain_graph=False)
    with pytest.raises(RuntimeError, match="second time"):  # 1 - tanh(x)**2 needs Tanh's output, whose op is freed
        mg.grad(g.sum(), x)
    (g,) = mg.grad((x**3).sum(), x, create_graph=True, retain_graph=False)
    np.testing.assert_allclose(mg.grad(g.sum(), x)[0].numpy(), [3.0, 12.0])  # 3 x**2 needs no freed buffer


def test_anomaly_detection_names_the_backward_that_made_an_inf(device):
    x = tensor([0.0, 1.0], device)
    with mg.detect_anomaly():
        y = x.sqrt().sum()
        with pytest.raises(mg.AnomalyError, match="produced inf") as error:
            mg.grad(y, x, create_graph=True)  # 0.5 / sqrt(0), computed on tensors
    assert "in the backward of Sqrt" in str(error.value) and "test_double_backward_engine.py" in str(error.value)
    with mg.detect_anomaly():
        (g,) = mg.grad((x**1.5).sum(), x, create_graph=True)  # 1.5 x**0.5: finite at 0
        with pytest.raises(mg.AnomalyError, match="PowScalar produced inf in the gradient") as error:
            mg.grad(g.sum(), x)  # 0.75 x**-0.5: infinite at 0
    assert "test_double_backward_engine.py" in str(error.value)  # where the gradient's op was recorded


def test_recorded_gradients_can_be_drawn():
    x = tensor([0.5])
    x.name = "x"
    (g,) = mg.grad(x.tanh().sum(), x, create_graph=True)
    (g2,) = mg.grad(g.sum(), x, create_graph=True)
    small, large = mg.viz.to_dot(g), mg.viz.to_dot(g2)
    assert "Tanh" in small and "Mul" in small
    assert large.count("->") > small.count("->")  # the second derivative's graph is larger
    (gs,) = mg.grad((x.reshape(1, 1).expand(2, 3) ** 2).sum(), x, create_graph=True)
    assert "Expand.backward" in mg.viz.to_dot(gs)  # a linear op's backward, run as an op
    steps = mg.viz.gradient_norms(g2.sum())  # the backward animation's pass, through the gradient's graph
    assert steps[-1].tensor is x and abs(steps[-1].norm - abs(mg.grad(g2.sum(), x)[0].item())) < 1e-12


def test_masks_combine_with_and_or_not_as_in_pytorch(device):
    x = mg.tensor([-1.0, 0.5, 2.0], device=device)
    inside, far = (x > 0) & (x < 1), (x < -0.5) | (x > 1.5)
    assert inside.numpy().tolist() == [False, True, False] and far.numpy().tolist() == [True, False, True]
    assert (~inside).numpy().tolist() == [True, False, True] and inside.dtype == np.bool_
    ints = mg.tensor([6, 3], device=device)
    assert (ints & 5).numpy().tolist() == [4, 1] and (ints | 1).numpy().tolist() == [7, 3]  # bitwise, as PyTorch
    assert (~ints).numpy().tolist() == [-7, -4]
    with pytest.raises(TypeError, match="bitwise_and: only bool and integer tensors"):
        x & x


# ----------------------------------------------------------------------------------------------------
# Against PyTorch, in float64


def hvp_minigrad(f, params, vectors):
    """H v for the scalar f(params): the gradient of (gradient . v), by double backward."""
    grads = mg.grad(f(*params), params, create_graph=True)
    dot = sum((g * v).sum() for g, v in zip(grads, vectors))
    return [g.numpy() for g in mg.grad(dot, params, allow_unused=True) if g is not None]


def hvp_torch(torch, f, params, vectors):
    grads = torch.autograd.grad(f(*params), params, create_graph=True)
    dot = sum((g * v).sum() for g, v in zip(grads, vectors))
    return [g.detach().numpy() for g in torch.autograd.grad(dot, params)]


@pytest.mark.torch
def test_hessian_vector_products_equal_pytorchs(device):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal((3, 4)), rng.standard_normal((4, 5)), rng.standard_normal(5)]
    vectors = [rng.standard_normal(a.shape) for a in arrays]

    def f(x, w, b, lib):
        z = x @ w + b
        return (lib.tanh(z) ** 2).sum() + (z.exp() / (1 + z * z)).mean() + (x * x).sum().sqrt()

    ours = hvp_minigrad(lambda *p: f(*p, mg), [tensor(a, device) for a in arrays],
                        [tensor(v, device, False) for v in vectors])
    theirs = hvp_torch(torch, lambda *p: f(*p, torch), [torch.tensor(a, requires_grad=True) for a in arrays],
                       [torch.tensor(v) for v in vectors])
    for i, (a, b) in enumerate(zip(ours, theirs)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=f"H v for input {i}")


@pytest.mark.torch
def test_second_derivatives_of_a_small_mlp_equal_pytorchs(device):
    torch = pytest.importorskip("torch")
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 5), nn.GELU(), nn.Linear(5, 2)).to(dtype=np.float64).to(device)
    reference = torch.nn.Sequential(torch.nn.Linear(3, 5), torch.nn.GELU(), torch.nn.Linear(5, 2)).double()
    with torch.no_grad():
        for p, q in zip(model.parameters(), reference.parameters()):
            q.copy_(torch.tensor(p.numpy()))
    x, targets = np.random.default_rng(1).standard_normal((4, 3)), np.array([0, 1, 1, 0])
    params = list(model.parameters())
    # The full Hessian of the loss with respect to the first layer's weight (15 x 15), one row per backward.
    (g,) = mg.grad(F.cross_entropy(model(tensor(x, device, False)), targets), params[0], create_graph=True)
    hessian = np.stack([mg.grad(g.reshape(-1)[i], params[0], retain_graph=True)[0].numpy().reshape(-1)
                        for i in range(g.numel())])
    ref_params = list(reference.parameters())
    loss = torch.nn.functional.cross_entropy(reference(torch.tensor(x)), torch.tensor(targets))
    (ref_g,) = torch.autograd.grad(loss, ref_params[0], create_graph=True)
    ref_hessian = np.stack([torch.autograd.grad(ref_g.reshape(-1)[i], ref_params[0], retain_graph=True)[0]
                            .numpy().reshape(-1) for i in range(ref_g.numel())])
    np.testing.assert_allclose(hessian, ref_hessian, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(hessian, hessian.T, rtol=1e-9, atol=1e-12)  # a Hessian is symmetric


@pytest.mark.torch
def test_hessian_vector_product_of_a_one_block_gpt_loss_equals_pytorchs(device):
    torch = pytest.importorskip("torch")
    from gpt_helpers import random_ids, tiny

    from minigpt.testing.torch_gpt import load_minigpt

    model = GPT(tiny(n_layer=1)).to(dtype=np.float64)
    reference = load_minigpt(model)
    model.to(device)
    idx, targets = random_ids((2, 6)), random_ids((2, 6), seed=1)
    names = [name for name, _ in model.named_parameters()]
    rng = np.random.default_rng(2)
    vectors = {name: rng.standard_normal(p.shape) for name, p in model.named_parameters()}
    ours = hvp_minigrad(lambda *p: model(idx, targets)[1], [p for _, p in model.named_parameters()],
                        [tensor(vectors[name], device, False) for name in names])
    ref_params = dict(reference.named_parameters())
    with torch.nn.attention.sdpa_kernel(torch.nn.attention.SDPBackend.MATH):  # the one PyTorch differentiates twice
        theirs = hvp_torch(torch, lambda *p: reference(torch.from_numpy(idx), torch.from_numpy(targets))[1],
                           [ref_params[name] for name in names], [torch.tensor(vectors[name]) for name in names])
    assert len(ours) == len(theirs) == len(names)
    for name, a, b in zip(names, ours, theirs):
        assert np.abs(b).max() > 1e-6, name  # every parameter's H v is far from 0: the check has teeth
        np.testing.assert_allclose(a, b, rtol=1e-8, atol=1e-11, err_msg=name)
    assert math.isfinite(float(sum(np.abs(a).sum() for a in ours)))
