"""Matrix multiplication: 2-D, 1-D (row or column vector), batched, with broadcast batch axes.

Read next: test_ops_nn.py.
"""

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.functional as F
from minigrad.testing import strategies as S


@st.composite
def matmul_operands(draw):
    """Two arrays that `@` accepts: (K,) or (..., M, K) on the left, (K,) or (..., K, N) on the right."""
    m, k, n = (draw(st.integers(1, 3)) for _ in range(3))
    batch_a, batch_b = draw(S.broadcastable_shapes(2, max_dims=2, max_side=2))
    a_shape = draw(st.sampled_from([(k,), (m, k), (*batch_a, m, k)]))
    b_shape = draw(st.sampled_from([(k,), (k, n), (*batch_b, k, n)]))
    return draw(S.floats(a_shape)), draw(S.floats(b_shape))


@op_settings
@given(operands=matmul_operands())
def test_matmul(device, operands):
    matmul = lambda a, b: a @ b
    check_op(matmul, matmul, list(operands), device, torch_fn=matmul)


def test_matmul_of_two_vectors_is_their_dot_product(device):
    a = mg.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    b = mg.tensor([4.0, 5.0, 6.0], requires_grad=True, device=device)
    y = a @ b
    y.backward()
    assert y.shape == () and y.item() == 32.0
    np.testing.assert_array_equal(a.grad.numpy(), [4.0, 5.0, 6.0])
    np.testing.assert_array_equal(b.grad.numpy(), [1.0, 2.0, 3.0])


def test_matmul_with_a_numpy_operand(device):
    a = mg.tensor([[1.0, 2.0]], requires_grad=True, device=device)
    assert (a @ np.array([[3.0], [4.0]])).item() == 11.0
    assert (np.array([[3.0, 4.0]]) @ a.T).item() == 11.0


def test_batched_times_matrix_gives_the_weight_one_summed_gradient(device):
    """(B, T, K) @ (K, N), as in a Linear layer: the weight's gradient sums over every row of every batch."""
    x = np.arange(12.0).reshape(2, 3, 2)
    w = mg.tensor(np.ones((2, 4)), requires_grad=True, device=device)
    (mg.tensor(x, device=device) @ w).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(), x.reshape(-1, 2).sum(axis=0)[:, None].repeat(4, axis=1))


@st.composite
def linear_operands(draw):
    """x (..., in), weight (out, in) and, sometimes, bias (out,)."""
    n_in, n_out = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    batch = draw(st.sampled_from([(), (2,), (2, 3)]))
    arrays = [draw(S.floats((*batch, n_in))), draw(S.floats((n_out, n_in)))]
    if draw(st.booleans()):
        arrays.append(draw(S.floats((n_out,))))
    return arrays


@op_settings
@given(operands=linear_operands())
def test_linear(device, operands):
    """F.linear(x, w, b) = x @ w.T + b, as torch.nn.functional.linear."""
    reference = lambda x, w, b=None: x @ w.T if b is None else x @ w.T + b
    check_op(F.linear, reference, operands, device, torch_fn=torch and torch.nn.functional.linear)


def test_linear_names_the_shapes_that_do_not_fit(device):
    with pytest.raises(ValueError, match=r"linear: input \(2, 3\) does not fit weight \(4, 5\)"):
        F.linear(mg.zeros(2, 3, device=device), mg.zeros(4, 5, device=device))
    for weight in (mg.zeros(3, device=device), mg.zeros(2, 3, 3, device=device)):  # was IndexError, or garbage
        with pytest.raises(ValueError, match=r"linear: weight must be 2-D \(out_features, in_features\), not"):
            F.linear(mg.zeros(2, 3, device=device), weight)
