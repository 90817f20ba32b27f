"""Every error a user is likely to meet says what went wrong, naming the op, the shapes or the bad value.

Read next: the op tests (test_ops_*.py), which show what works.
"""

import operator

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F


def test_matmul_shape_mismatch_names_both_shapes(device):
    with pytest.raises(mg.ShapeError, match=r"matmul: \(2, 3\) @ \(4, 5\)"):
        mg.ones(2, 3, device=device) @ mg.ones(4, 5, device=device)


def test_batched_matmul_with_unbroadcastable_batches_names_both_shapes(device):
    with pytest.raises(mg.ShapeError, match=r"MatMul: input shapes \(2, 2, 3\), \(3, 3, 4\)"):
        mg.ones(2, 2, 3, device=device) @ mg.ones(3, 3, 4, device=device)


@pytest.mark.parametrize("op, name", [(operator.add, "Add"), (operator.sub, "Sub"), (operator.mul, "Mul"),
                                      (operator.truediv, "Div"), (operator.pow, "Pow")])
def test_broadcasting_mismatch_names_the_op_and_both_shapes(device, op, name):
    a, b = mg.ones(2, 3, device=device), mg.ones(4, device=device)
    with pytest.raises(mg.ShapeError, match=rf"{name}: input shapes \(2, 3\), \(4,\)"):
        op(a, b)


def test_out_of_range_class_id_names_the_value_and_the_valid_range(device):
    logits = mg.zeros(2, 5, device=device)
    with pytest.raises(IndexError, match=r"cross_entropy: target 7 is out of range; valid targets are 0\.\.4"):
        F.cross_entropy(logits, np.array([1, 7]))
    with pytest.raises(IndexError, match="target -3 is out of range"):
        F.cross_entropy(logits, np.array([-3, 1]), ignore_index=-100)


def test_out_of_range_embedding_id_names_the_value_and_the_valid_range(device):
    weight = mg.zeros(10, 4, device=device)
    with pytest.raises(IndexError, match=r"embedding: id 10 is out of range; valid ids are 0\.\.9"):
        F.embedding(np.array([[3, 10]]), weight)


def test_non_integer_targets_and_ids_are_refused(device):
    with pytest.raises(TypeError, match="cross_entropy: target must be integer class ids, not float"):
        F.cross_entropy(mg.zeros(2, 3, device=device), np.array([0.0, 1.0]))
    with pytest.raises(TypeError, match="embedding: input must be integer ids, not float"):
        F.embedding(np.array([0.0, 1.0]), mg.zeros(3, 2, device=device))


def test_embedding_with_its_arguments_swapped_says_so(device):
    """PyTorch's order is (input, weight); minigrad's used to be (weight, ids): a clear error, never a guess."""
    with pytest.raises(TypeError, match=r"embedding: the arguments are \(input, weight\), as in PyTorch"):
        F.embedding(mg.zeros(3, 2, device=device), np.array([0, 1]))


def test_targets_of_the_wrong_shape_are_named(device):
    with pytest.raises(mg.ShapeError, match=r"input \(2, 5, 3\) needs target shape \(2, 3\), got \(6,\)"):
        F.cross_entropy(mg.zeros(2, 5, 3, device=device), np.zeros(6, dtype=np.int64))


def test_cross_entropy_on_gpt_shaped_logits_says_to_reshape(device):
    """(B, T, C) logits with (B, T) targets: PyTorch reads dim 1 as the classes, so this is an error that says
    how nanoGPT reshapes, never a silent loss over the wrong axis."""
    with pytest.raises(mg.ShapeError, match=r"the classes are on dim 1.*logits.reshape\(-1, C\)"):
        F.cross_entropy(mg.zeros(2, 3, 5, device=device), np.zeros((2, 3), dtype=np.int64))


def test_unsupported_dtype_is_named():
    with pytest.raises(TypeError, match="unsupported dtype complex128"):
        mg.tensor(np.ones(2, dtype=complex))
    with pytest.raises(TypeError, match="unsupported dtype complex64"):
        mg.zeros(2, dtype="complex64")


def test_only_float_tensors_can_require_grad():
    with pytest.raises(TypeError, match="only float tensors can require grad, not int64"):
        mg.tensor([1, 2], requires_grad=True)


def test_unknown_device_is_named():
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        mg.ones(2, device="tpu")
    with pytest.raises(ValueError, match="unknown device 'cpu:1'"):
        mg.ones(2).to("cpu:1")


def test_backward_needs_a_gradient_of_the_right_shape(device):
    y = mg.ones(2, 3, requires_grad=True, device=device) * 2
    with pytest.raises(RuntimeError, match=r"grad can be omitted only for a scalar output, "
                       r"not shape minigrad\.Size\(\[2, 3\]\)"):
        y.backward()
    with pytest.raises(mg.ShapeError, match=r"grad has shape \(3, 2\), the tensor \(2, 3\)"):
        y.backward(np.ones((3, 2)))


def test_item_of_a_tensor_with_many_elements():
    with pytest.raises(ValueError, match=r"only a one-element tensor has an item, not shape minigrad\.Size\(\[2\]\)"):
        mg.ones(2).item()


def test_a_value_error_about_values_is_not_relabelled_as_a_shape_error():
    """Defect: Function.apply called every ValueError "input shapes ...", hiding NumPy's real complaint."""
    with pytest.raises(ValueError, match="Integers to negative integer powers are not allowed") as raised:
        mg.tensor([2]) ** mg.tensor([-2])
    assert not isinstance(raised.value, mg.ShapeError) and "input shapes" not in str(raised.value)


@pytest.mark.parametrize("other", [[1.0, 2.0, 3.0], (1.0, 2.0, 3.0)])
def test_a_list_or_tuple_operand_is_refused_as_in_pytorch(other):
    """PyTorch: `torch.ones(3) + [1, 2, 3]` is a TypeError; minigrad used to turn the list into a tensor."""
    x = mg.ones(3)
    for apply in (operator.add, operator.sub, operator.mul, operator.truediv):
        with pytest.raises(TypeError, match="make it a tensor first"):
            apply(x, other)
        with pytest.raises(TypeError, match="make it a tensor first"):
            apply(other, x)


def test_max_along_a_dim_is_a_named_tuple_and_arithmetic_on_it_says_so():
    """NumPy's habit `x - x.max(axis=-1, keepdims=True)` meets PyTorch's (values, indices): a clear error, never
    the silent (2, 2, 3) broadcast of both tuple members that it used to give."""
    x = mg.randn(2, 3)
    with pytest.raises(TypeError, match=r"use x\.max\(dim\)\.values"):
        x - x.max(axis=-1, keepdims=True)
    assert (x - x.max(dim=-1, keepdim=True).values).shape == (2, 3)
