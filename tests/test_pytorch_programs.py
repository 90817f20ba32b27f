"""Whole programs written for PyTorch, run twice: under PyTorch and under minigrad, with only the import lines
different (`imports` does them for either package name). A deterministic program starts both from the same
weights and must give the same losses to float rounding; one that draws its own randomness (minigrad's streams
are not PyTorch's) must learn under both, by the margin it states.

More programs in the same form: test_pytorch_programs_makemore.py (makemore's two MLPs) and
test_pytorch_programs_gpt.py (a lecture-style character GPT, a GPT in nanoGPT's idiom).
"""

import importlib
from types import SimpleNamespace

import numpy as np
import pytest

torch_installed = importlib.util.find_spec("torch") is not None
needs_torch = [pytest.mark.torch, pytest.mark.skipif(not torch_installed, reason="needs PyTorch as the oracle")]
PACKAGES = ["minigrad", pytest.param("torch", marks=needs_torch)]  # every program runs under both


@pytest.fixture
def one_torch_thread():
    """PyTorch's threads only compete with each other at these tiny sizes (ten times slower on a busy machine)."""
    if not torch_installed:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def imports(package):
    """`import torch; import torch.nn as nn; import torch.nn.functional as F; import torch.utils.data as data`,
    for `package` "torch" or "minigrad"."""
    return SimpleNamespace(
        torch=importlib.import_module(package), nn=importlib.import_module(f"{package}.nn"),
        F=importlib.import_module(f"{package}.nn.functional"), data=importlib.import_module(f"{package}.utils.data"),
    )


def two_moons(n=100, seed=0):
    """A toy 2-D dataset of two interleaved half circles, labels -1 and 1 (as in micrograd's demo)."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0, np.pi, n)
    upper = rng.integers(0, 2, n)
    x = np.where(upper, np.cos(angle), 1 - np.cos(angle))
    y = np.where(upper, np.sin(angle), 0.5 - np.sin(angle))
    points = np.stack([x, y], axis=1) + rng.normal(0, 0.1, (n, 2))
    return points.astype(np.float32), (2 * upper - 1).astype(np.float32)


# ---------------------------------------------------------------------------------------------------------------
# 1. A micrograd-style MLP on a toy 2-D dataset: max-margin loss with L2, manual SGD under no_grad. Deterministic.
def micrograd_mlp(torch, nn, F, weights, steps=25):
    X_np, y_np = two_moons()
    X, y = torch.tensor(X_np), torch.tensor(y_np)
    model = nn.Sequential(nn.Linear(2, 16), nn.ReLU(), nn.Linear(16, 16), nn.ReLU(), nn.Linear(16, 1))
    model.load_state_dict({name: torch.tensor(value) for name, value in weights.items()})
    losses, accuracies = [], []
    for k in range(steps):
        # forward
        scores = model(X).reshape(-1)
        data_loss = F.relu(1 - y * scores).mean()
        reg_loss = 1e-4 * sum((p * p).sum() for p in model.parameters())
        loss = data_loss + reg_loss
        accuracies.append(((scores > 0) == (y > 0)).float().mean().item())
        # backward
        model.zero_grad()
        loss.backward()
        # update
        learning_rate = 1.0 - 0.9 * k / 100
        with torch.no_grad():
            for p in model.parameters():
                p -= learning_rate * p.grad
        losses.append(loss.item())
    return losses, accuracies


def initial_weights(seed=0):
    """One set of weights for both libraries (PyTorch's default Linear initialisation, drawn with NumPy)."""
    rng = np.random.default_rng(seed)
    weights = {}
    for i, (fan_in, fan_out) in zip((0, 2, 4), [(2, 16), (16, 16), (16, 1)]):
        bound = 1 / np.sqrt(fan_in)
        weights[f"{i}.weight"] = rng.uniform(-bound, bound, (fan_out, fan_in)).astype(np.float32)
        weights[f"{i}.bias"] = rng.uniform(-bound, bound, fan_out).astype(np.float32)
    return weights


def test_micrograd_mlp_learns_under_minigrad():
    ns = imports("minigrad")
    losses, accuracies = micrograd_mlp(ns.torch, ns.nn, ns.F, initial_weights())
    assert losses[-1] < 0.5 * losses[0] and accuracies[-1] >= 0.8


@pytest.mark.torch
@pytest.mark.skipif(not torch_installed, reason="needs PyTorch as the oracle")
def test_micrograd_mlp_gives_pytorchs_losses():
    runs = []
    for package in ("torch", "minigrad"):
        ns = imports(package)
        runs.append(micrograd_mlp(ns.torch, ns.nn, ns.F, initial_weights()))
    (theirs, their_accuracy), (ours, our_accuracy) = runs
    np.testing.assert_allclose(ours, theirs, rtol=1e-4)
    assert our_accuracy == their_accuracy


# ---------------------------------------------------------------------------------------------------------------
# 2. A d2l-style loop: random_split, DataLoader with a shuffling Generator, nn.Sequential(Flatten, Linear) with
#    apply(init_weights), CrossEntropyLoss, SGD with momentum and a StepLR schedule, train()/eval(), no_grad.
def d2l_softmax_regression(torch, nn, data, epochs=6):
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(0)
    X = torch.randn(512, 1, 4, 4, generator=generator)  # 512 tiny "images"
    true_w = torch.randn(16, 3, generator=generator)
    y = (X.reshape(512, 16) @ true_w).argmax(dim=1)  # three classes, linearly separable
    train, val = data.random_split(data.TensorDataset(X, y), [0.75, 0.25], generator=generator)
    train_iter = data.DataLoader(train, batch_size=32, shuffle=True, generator=generator)
    val_iter = data.DataLoader(val, batch_size=64)

    net = nn.Sequential(nn.Flatten(), nn.Linear(16, 3))

    def init_weights(m):
        if type(m) is nn.Linear:
            nn.init.normal_(m.weight, std=0.01)
            nn.init.zeros_(m.bias)

    net.apply(init_weights)
    loss = nn.CrossEntropyLoss()
    trainer = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.StepLR(trainer, step_size=2, gamma=0.5)
    epoch_losses, accuracy = [], 0.0
    for _ in range(epochs):
        net.train()
        total, count = 0.0, 0
        for X_batch, y_batch in train_iter:
            batch_loss = loss(net(X_batch), y_batch)
            trainer.zero_grad()
            batch_loss.backward()
            trainer.step()
            total, count = total + batch_loss.item() * len(y_batch), count + len(y_batch)
        scheduler.step()
        epoch_losses.append(total / count)
        net.eval()
        correct = 0.0
        with torch.no_grad():
            for X_batch, y_batch in val_iter:
                correct += (net(X_batch).argmax(dim=1) == y_batch).float().sum().item()
        accuracy = correct / len(val)
    return epoch_losses, accuracy, scheduler.get_last_lr()


@pytest.mark.parametrize("package", ["minigrad", pytest.param("torch", marks=[
    pytest.mark.torch, pytest.mark.skipif(not torch_installed, reason="needs PyTorch as the oracle")])])
def test_d2l_softmax_regression_learns(package):
    ns = imports(package)
    losses, accuracy, last_lr = d2l_softmax_regression(ns.torch, ns.nn, ns.data)
    assert losses[-1] < 0.5 * losses[0], losses  # the loss at least halves over six epochs
    assert accuracy > 0.85
    assert last_lr == pytest.approx([0.1 * 0.5**3])


# ---------------------------------------------------------------------------------------------------------------
# 3. The official tutorials' Learn the Basics, the parts that need no torchvision: autograd's quickstart (a one-layer
#    net's gradients, backward with a gradient twice and after zero_), the one-hot target transform (scatter_ with
#    a 0-d index), and the loss functions and accuracy of the optimization page (LogSoftmax, NLLLoss, .type).
def learn_the_basics(torch, nn, w_init, b_init):
    x = torch.ones(5)  # input tensor
    y = torch.zeros(3)  # expected output
    w = torch.tensor(w_init, requires_grad=True)
    b = torch.tensor(b_init, requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = torch.nn.functional.binary_cross_entropy_with_logits(z, y)
    loss.backward()
    assert z.grad_fn is not None and z.requires_grad and not z.detach().requires_grad

    inp = torch.eye(4, 5, requires_grad=True)
    out = (inp + 1).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    out.backward(torch.ones_like(out), retain_graph=True)
    accumulated = inp.grad.clone()
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)

    one_hot = torch.zeros(10, dtype=torch.float).scatter_(dim=0, index=torch.tensor(3), value=1)
    log_probs = nn.LogSoftmax(dim=1)(torch.matmul(torch.ones(2, 5), w))
    targets = torch.tensor([2, 0])
    nll = nn.NLLLoss()(log_probs, targets)
    correct = (log_probs.argmax(1) == targets).type(torch.float).sum().item()
    return [loss.item(), w.grad.numpy(), b.grad.numpy(), accumulated.numpy(), inp.grad.numpy(), one_hot.numpy(),
            nll.item(), correct]


@pytest.mark.torch
@pytest.mark.skipif(not torch_installed, reason="needs PyTorch as the oracle")
def test_learn_the_basics_gives_pytorchs_results():
    rng = np.random.default_rng(0)
    w_init, b_init = rng.standard_normal((5, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    ours, theirs = (learn_the_basics(ns.torch, ns.nn, w_init, b_init) for ns in map(imports, ("minigrad", "torch")))
    for mine, pytorchs in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(mine, pytorchs, rtol=1e-6, atol=1e-7)
