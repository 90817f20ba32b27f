"""`.data` is PyTorch's: the tensor without its history, sharing its memory; the raw array is `.array`.

A PyTorch program reads `.data` as a tensor (`x.data.clone()`, `(x * 2).data.sum()`, `w.data -= lr * w.grad`,
`x.data = t`), so here it is one, held against PyTorch; the backend array an op computes on has its own name.
Read next: test_torch_tensor_methods.py.
"""

import numpy as np
import pytest
from helpers import torch

import minigrad as mg


def test_data_is_a_detached_tensor_sharing_memory(device):
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    y = x * 2
    d = y.data
    assert isinstance(d, mg.Tensor) and not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert d.shape == y.shape and d.dtype == y.dtype and d.device == y.device
    d[0] = 10.0  # a write through .data is seen by the tensor it came from
    assert y.numpy().tolist() == [10.0, 4.0, 6.0]
    assert isinstance(y.data.sum(), mg.Tensor) and y.data.clone().numpy().tolist() == [10.0, 4.0, 6.0]


def test_array_is_the_backend_array_itself():
    x = mg.tensor([1.0, 2.0])
    assert isinstance(x.array, np.ndarray) and x.array is x.array
    x.array[1] = 7.0
    assert x.tolist() == [1.0, 7.0]
    assert np.shares_memory(x.data.array, x.array)


def test_an_sgd_step_through_data_updates_in_place_and_records_nothing():
    w = mg.tensor([1.0, -2.0], requires_grad=True)
    (w * w).sum().backward()
    before = w.array
    w.data -= 0.5 * w.grad
    assert w.array is before and w.tolist() == [0.0, 0.0]  # in place, as PyTorch's update
    assert w.requires_grad and w.is_leaf and w.grad_fn is None


def test_assigning_data_replaces_the_values_and_keeps_the_history():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.data = mg.tensor([5.0, 6.0])
    assert y.tolist() == [5.0, 6.0] and y.grad_fn is not None
    with pytest.raises(TypeError, match="must be a Tensor, not list"):
        x.data = [1.0, 2.0]


@pytest.mark.skipif(torch is None, reason="PyTorch is the oracle here")
def test_a_program_using_data_gives_pytorchs_results():
    """The idioms a program writes with `.data`, run under both libraries with the same values."""
    def program(lib):
        w = lib.tensor([0.5, -1.5, 2.0], requires_grad=True)
        for _ in range(3):
            loss = ((w * w).sum() - 1) ** 2
            loss.backward()
            w.data -= 0.05 * w.grad.data  # SGD by hand, as older PyTorch code does it
            w.grad = None
        snapshot = w.data.clone()
        w.data[0] = 9.0  # not recorded: the next forward just sees the new value
        doubled = (w * 2).data.sum()
        out = w.sigmoid()
        w.data.mul_(0.5)  # a write through .data bypasses the version counter, in PyTorch too
        out.sum().backward()
        return snapshot, doubled, w.data, w.grad

    for ours, theirs in zip(program(mg), program(torch)):
        assert isinstance(ours, mg.Tensor)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)
