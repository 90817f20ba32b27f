"""The compiled kernels behind the public API (minigrad/kernels/select.py): F.gelu, F.layer_norm, F.softmax,
F.log_softmax, F.cross_entropy, Adam(W), F.embedding and causal attention give the NumPy reference's values and
gradients within float32 rounding with the kernels on; a backward on tensors (create_graph) takes the reference;
MINIGRAD_KERNELS=numpy and a missing numba give the reference; a tiny GPT trains to the same loss either way.

tests/test_kernels.py holds each kernel to its NumPy op directly. Read next: test_fused.py.
"""

import json
import os
import subprocess
import sys

import numpy as np
import pytest
from gpt_helpers import tiny

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT
from minigrad import kernels, optim
from minigrad.kernels import select

needs_numba = pytest.mark.skipif(not select.numba_installed(), reason="needs numba: pip install -e '.[fast]'")
RTOL, ATOL = 2e-5, 2e-6  # float32 rounding (tests/test_kernels.py's), looser for LayerNorm's rstd below


def calls(name):
    """How many times the kernel `name` has run in this process."""
    return kernels.report()["ran"].get(name, 0)


def both_ways(name, fn, rtol=RTOL, atol=ATOL):
    """fn() (a list of arrays) with the NumPy reference, then with the kernels; equal within rtol and atol, and the
    kernel `name` ran in the second run only."""
    outs = {}
    for implementation in ("numpy", "numba"):
        before = calls(name)
        with kernels.using(implementation):
            outs[implementation] = [np.asarray(a) for a in fn()]
        assert (calls(name) > before) == (implementation == "numba"), (name, implementation)
    for i, (got, expected) in enumerate(zip(outs["numba"], outs["numpy"])):
        assert got.dtype == expected.dtype and got.shape == expected.shape, (name, i)
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol, err_msg=f"{name}, output {i}")


def leaf(*shape, seed=0, scale=1.0):
    data = np.random.default_rng(seed).standard_normal(shape) * scale
    return mg.tensor(data.astype(np.float32), requires_grad=True)


def value_and_grads(y, *inputs, seed=1):
    """[y, and each input's gradient for a random upstream gradient]."""
    for t in inputs:
        t.grad = None
    y.backward(mg.tensor(np.random.default_rng(seed).standard_normal(y.shape).astype(np.float32)))
    return [y.numpy()] + [t.grad.numpy() for t in inputs]


@needs_numba
def test_gelu():
    x = leaf(3, 4, 33, scale=3.0)
    both_ways("gelu", lambda: value_and_grads(F.gelu(x), x))


@needs_numba
@pytest.mark.parametrize("affine", ["weight and bias", "weight", "none"])
def test_layer_norm(affine):
    x, w, b = leaf(2, 5, 24, scale=2.0), leaf(24, seed=2), leaf(24, seed=3)
    params = {"weight and bias": [w, b], "weight": [w], "none": []}[affine]
    both_ways("layernorm", lambda: value_and_grads(F.layer_norm(x, (24,), *params), x, *params),
              rtol=1e-4, atol=1e-5)


@needs_numba
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("fn", [F.softmax, F.log_softmax])
def test_softmax_and_log_softmax(fn, dim):
    x = leaf(3, 4, 6, scale=3.0)
    both_ways("softmax", lambda: value_and_grads(fn(x, dim=dim), x))


@needs_numba
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("layout", ["(N, C)", "(N, C, d)"])
def test_cross_entropy(reduction, layout):
    shape, target_shape = ((12, 7), (12,)) if layout == "(N, C)" else ((3, 7, 4), (3, 4))
    logits = leaf(*shape, scale=2.0)
    targets = np.random.default_rng(4).integers(0, 7, target_shape)
    targets.reshape(-1)[1] = -1  # one ignored target
    weight = mg.tensor(np.linspace(0.5, 2.0, 7).astype(np.float32))
    loss = lambda: F.cross_entropy(logits, targets, weight=weight, ignore_index=-1, reduction=reduction,
                                   label_smoothing=0.1)
    both_ways("cross_entropy", lambda: value_and_grads(loss(), logits), rtol=1e-4, atol=1e-6)


@needs_numba
@pytest.mark.parametrize("padding_idx", [None, 2])
def test_embedding(padding_idx):
    weight = leaf(5, 8)
    ids = np.array([[0, 2, 2, 4], [4, 4, 1, 2]])  # repeated ids collect every row's gradient
    both_ways("embedding", lambda: value_and_grads(F.embedding(ids, weight, padding_idx=padding_idx), weight))


@needs_numba
@pytest.mark.parametrize("t", [33, 64, 70])
def test_causal_attention_row_blocks(t):
    """causal_rows.py's blocks (T > 32) with their softmax steps compiled: the same values and gradients."""
    q, k, v = leaf(2, 3, t, 8, seed=5), leaf(2, 3, t, 8, seed=6), leaf(2, 3, t, 8, seed=7)
    both_ways("softmax", lambda: value_and_grads(F.scaled_dot_product_attention(q, k, v, is_causal=True), q, k, v),
              rtol=1e-4, atol=1e-5)


@needs_numba
def test_log_softmax_and_cross_entropy_of_huge_logits():
    """log p = (z - max) - log(sum): done in another order (z - (max + log(sum)), as fast-math reassociation may),
    logits near 1000 lose four digits of the result."""
    x = mg.tensor(np.array([[1000, 1000, -1000, -1000], [1000, 999.5, 0, -3]], np.float32), requires_grad=True)
    both_ways("softmax", lambda: value_and_grads(F.log_softmax(x, dim=-1), x))
    targets = np.array([[0, 1], [1, 1], [2, 1], [3, 1]])  # every class of the huge row, in turn
    loss = lambda: F.cross_entropy(x[[0, 1, 0, 1, 0, 1, 0, 1]], targets.reshape(-1), label_smoothing=0.1,
                                   reduction="none")
    both_ways("cross_entropy", lambda: value_and_grads(loss(), x))


@needs_numba
@pytest.mark.parametrize("cls", [optim.AdamW, optim.Adam])
def test_adam_and_adamw_steps(cls):
    def steps():
        params = [leaf(5, 3, seed=5), leaf(7, seed=6), leaf(2, 3, 4, seed=7)]
        opt, rng = cls(params, lr=0.01, weight_decay=0.1), np.random.default_rng(8)
        for _ in range(5):
            for p in params:
                p.grad = mg.tensor(rng.standard_normal(p.shape).astype(np.float32))
            opt.step()
        return [p.numpy() for p in params] + [opt.state[p][key] for p in params for key in ("exp_avg", "exp_avg_sq")]

    both_ways("adamw", steps)


@needs_numba
@pytest.mark.parametrize("op", ["gelu", "layer_norm", "softmax", "log_softmax", "cross_entropy"])
def test_create_graph_on_float32_takes_the_reference(op):
    """Forward runs the kernel; the backward on tensors (create_graph=True) runs the twins or the NumPy formula,
    never a kernel; and the second derivative equals the reference's."""
    targets = np.array([0, 2, 1, 3])
    fns = {"gelu": ("gelu", F.gelu), "layer_norm": ("layernorm", lambda x: F.layer_norm(x, (5,))),
           "softmax": ("softmax", lambda x: F.softmax(x, dim=-1)),
           "log_softmax": ("softmax", lambda x: F.log_softmax(x, dim=-1)),
           "cross_entropy": ("cross_entropy", lambda x: F.cross_entropy(x, targets))}
    name, fn = fns[op]
    x = leaf(4, 5, scale=2.0)
    second = {}
    for implementation in ("numpy", "numba"):
        with kernels.using(implementation):
            x.grad = None
            before = calls(name)
            y = fn(x)
            assert calls(name) == before + (implementation == "numba")  # the forward: the kernel, when on
            (g,) = mg.grad((y * y).sum(), [x], create_graph=True)
            assert calls(name) == before + (implementation == "numba")  # the backward on tensors: no kernel
            (g * g).sum().backward()
            second[implementation] = x.grad.numpy()
    np.testing.assert_allclose(second["numba"], second["numpy"], rtol=1e-4, atol=1e-5)


@needs_numba
def test_the_same_loss_after_200_sgd_steps_of_a_tiny_gpt():
    """Kernels on and off, the same tiny GPT, batches and SGD: the losses agree within 1e-4 relative at every
    step (float32 rounding in the kernels' sums grows a little over 200 steps; measured: 2.5e-6 at most)."""
    losses = {}
    for implementation in ("numpy", "numba"):
        with kernels.using(implementation):
            before = calls("gelu"), calls("layernorm"), calls("cross_entropy")
            mg.manual_seed(0)
            model = GPT(tiny(dropout=0.0))
            opt = optim.SGD(model.parameters(), lr=0.1)
            curve, rng = [], np.random.default_rng(0)
            for _ in range(200):
                idx = (np.arange(9) + rng.integers(0, 11, (4, 1))) % 11  # (B, T + 1): count up from anywhere
                _, loss = model(idx[:, :-1], idx[:, 1:])  # forward
                opt.zero_grad()
                loss.backward()  # backward
                opt.step()  # update
                curve.append(loss.item())
            losses[implementation] = np.array(curve)
            after = calls("gelu"), calls("layernorm"), calls("cross_entropy")
            assert all((a > b) == (implementation == "numba") for a, b in zip(after, before)), implementation
    assert losses["numpy"][-1] < 0.5 * losses["numpy"][0]  # it trained
    print("largest relative difference of the losses:", np.max(np.abs(losses["numba"] / losses["numpy"] - 1)))
    np.testing.assert_allclose(losses["numba"], losses["numpy"], rtol=1e-4)


# Every wired op once, forward and backward, and one AdamW step; then which implementation ran, as JSON.
EVERY_OP = """
import json, sys
import numpy as np
import minigrad as mg, minigrad.functional as F
from minigrad import optim
from minigrad import kernels
x = mg.tensor(np.random.default_rng(0).standard_normal((4, 6)).astype(np.float32), requires_grad=True)
loss = (F.gelu(x).sum() + F.layer_norm(x, (6,)).sum() + F.softmax(x, dim=-1).sum()
        + F.log_softmax(x, dim=0).sum() + F.cross_entropy(x, np.array([0, 1, 2, 5]))
        + F.embedding(np.array([[1, 3], [3, 0]]), x).sum())
loss.backward()
optim.AdamW([x]).step()
print(json.dumps({**kernels.report(), "numba imported": sys.modules.get("numba") is not None}))
"""


def _run(code, **env):
    """code in a fresh Python process, from the checkout's root, with `env` on top of this one's environment."""
    environment = {key: value for key, value in os.environ.items() if key != "MINIGRAD_KERNELS"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return subprocess.run([sys.executable, "-c", code], env={**environment, **env}, capture_output=True, text=True,
                          timeout=600, cwd=root)


def test_minigrad_kernels_numpy_forces_the_reference_and_never_imports_numba():
    result = _run(EVERY_OP, MINIGRAD_KERNELS="numpy")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"implementation": "numpy", "ran": {}, "numba imported": False}


@needs_numba
def test_by_default_every_wired_kernel_runs():
    result = _run(EVERY_OP)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["implementation"] == "numba" and report["numba imported"]
    assert sorted(report["ran"]) == sorted(select.KERNELS), report


def test_an_unknown_minigrad_kernels_value_is_refused():
    result = _run(EVERY_OP, MINIGRAD_KERNELS="fast")
    assert result.returncode != 0
    assert "MINIGRAD_KERNELS must be 'numpy' or 'numba'" in result.stderr


HIDE_NUMBA = "import sys; sys.modules['numba'] = None  # an import of numba now fails, as when it is missing\n"


def test_without_numba_the_reference_runs_silently():
    result = _run(HIDE_NUMBA + EVERY_OP)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"implementation": "numpy", "ran": {}, "numba imported": False}
    assert result.stderr == ""


def test_without_numba_asking_for_it_says_so_in_one_line():
    result = _run(HIDE_NUMBA + EVERY_OP, MINIGRAD_KERNELS="numba")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["implementation"] == "numpy"
    warning = [line for line in result.stderr.splitlines() if "numba is not installed" in line]
    assert len(warning) == 1, result.stderr


def test_set_implementation_refuses_an_unknown_name():
    with pytest.raises(ValueError, match="'numpy' or 'numba'"):
        kernels.set_implementation("cuda")


def test_using_restores_the_implementation_before_it():
    before = kernels.implementation()
    with kernels.using("numpy"):
        assert kernels.implementation() == "numpy"
    assert kernels.implementation() == before
