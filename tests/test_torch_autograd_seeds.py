"""mg.grad with several outputs sums every output's seed, as torch.autograd.grad does, also when one output
appears twice (a version that kept only the last seed given for a tensor would fail here)."""

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")


def both(build, seeds):
    x_np = np.array([1.0, -2.0, 0.5])
    xm, xt = mg.tensor(x_np, dtype=mg.float64, requires_grad=True), torch.tensor(x_np, requires_grad=True)
    outs_m, outs_t = build(xm, mg), build(xt, torch)
    seeds_m = None if seeds is None else [mg.tensor(s, dtype=mg.float64) for s in seeds]
    seeds_t = None if seeds is None else [torch.tensor(s) for s in seeds]
    (gm,) = mg.grad(outs_m, xm, grad_outputs=seeds_m)
    (gt,) = torch.autograd.grad(outs_t, xt, grad_outputs=seeds_t)
    np.testing.assert_allclose(gm.numpy(), gt.numpy(), rtol=1e-12)
    return gm.numpy()


def test_the_same_output_twice_sums_both_seeds():
    g = both(lambda x, lib: [x * 3] * 2, [np.ones(3), np.full(3, 2.0)])
    np.testing.assert_allclose(g, np.full(3, 9.0))  # 3 * 1 + 3 * 2, not 3 * 2


def test_a_scalar_output_twice_without_seeds():
    g = both(lambda x, lib: [(x * x).sum()] * 2, None)
    np.testing.assert_allclose(g, 4 * np.array([1.0, -2.0, 0.5]))


def test_outputs_sharing_a_graph():
    both(lambda x, lib: [x.exp(), x.exp() * x, x.tanh()], [np.ones(3), np.arange(3.0), np.full(3, -1.0)])
