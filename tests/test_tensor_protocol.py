"""A Tensor as a Python value, as in PyTorch: truth, float(), int(), use as an index, len(), np.asarray; and
in-place updates (`+=`, `zero_()`, ...) that really are in place, with PyTorch's refusals.

Read next: test_ops_shape.py.
"""

import operator

import numpy as np
import pytest

import minigrad as mg


# Python's protocols ----------------------------------------------------------------------------------------------
def test_truth_of_a_one_element_tensor():
    """Defect: with no __bool__, bool(mg.tensor([0.])) was True (Python's default for objects with a length)."""
    assert not bool(mg.tensor([0.0])) and bool(mg.tensor(2.0))
    loss, best = mg.tensor(1.0), mg.tensor(2.0)
    assert (loss < best) and not (loss > best)  # `if loss < best:` on 0-d tensors raised IndexError
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(mg.zeros(2))
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with no values is ambiguous"):
        bool(mg.zeros(0))


def test_float_int_and_index(device):
    assert float(mg.tensor([2.5], device=device)) == 2.5
    assert int(mg.tensor([2.7], device=device)) == 2
    assert [10, 20, 30][mg.tensor(1, device=device)] == 20
    assert list(range(mg.tensor([3]))) == [0, 1, 2]
    with pytest.raises(ValueError, match=r"float\(\): only one-element tensors .* not shape minigrad\.Size\(\[2\]\)"):
        float(mg.zeros(2))
    with pytest.raises(TypeError, match="only integer tensors of a single element can be converted to an index"):
        [10, 20][mg.tensor(1.0)]


def test_len_and_iteration_of_a_0d_tensor_are_type_errors():
    assert len(mg.zeros(3, 2)) == 3
    with pytest.raises(TypeError, match="len\\(\\) of a 0-d tensor"):
        len(mg.tensor(1.0))
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(mg.tensor(1.0))  # was [], silently
    assert np.zeros(mg.tensor(2)).shape == (2,)  # NumPy reads a 0-d integer tensor as an int


def test_iterating_gives_the_rows_and_their_gradients():
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    rows = list(x)
    assert [r.tolist() for r in rows] == [[1, 2], [3, 4]]
    (rows[1] * 2).sum().backward()
    assert x.grad.tolist() == [[0, 0], [2, 2]]


def test_numpy_asarray_gives_the_data():
    """Defect: np.asarray(t) made a 0-d object array holding the tensor."""
    t = mg.tensor([[1.0, 2.0]])
    array = np.asarray(t)
    assert array.dtype == np.float32 and array.tolist() == [[1.0, 2.0]]
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert np.asarray(mg.tensor([1, 2])).dtype == np.int64
    with pytest.raises(RuntimeError, match=r"Can't call numpy\(\) on Tensor that requires grad. Use tensor.detach"):
        np.asarray(mg.ones(2, requires_grad=True))
    with pytest.raises(TypeError, match="implicit conversion of a tensor on device 'strict' to a NumPy array"):
        np.asarray(mg.ones(2, device="strict"))


def test_numpy_operands_still_meet_the_tensor_operators():
    """`ndarray + tensor` must call Tensor.__radd__, not turn the tensor into an array (now that it can)."""
    for result in (np.ones(2) + mg.ones(2), np.float64(2.0) * mg.ones(2), np.ones(2) @ mg.ones(2)):
        assert isinstance(result, mg.Tensor)


# In-place updates ------------------------------------------------------------------------------------------------
def test_in_place_operators_update_every_reference():
    """Defect: `w -= ...` rebound the name to a new tensor, so a model holding w never saw the update."""
    layer = mg.nn.Linear(2, 1)
    w = layer.weight
    before = w.numpy()
    (layer(mg.ones(3, 2)).sum()).backward()
    with mg.no_grad():
        w -= 0.1 * w.grad
    assert w is layer.weight
    np.testing.assert_allclose(layer.weight.numpy(), before - 0.1 * layer.weight.grad.numpy())
    x = mg.ones(2)
    alias = x
    x += 1
    x *= 3
    x /= 2
    x -= mg.tensor([0.0, 1.0])
    assert alias is x and alias.tolist() == [3.0, 2.0]


def test_in_place_methods():
    x = mg.ones(3)
    assert x.add_(2, alpha=2).tolist() == [5, 5, 5]
    assert x.sub_(mg.ones(3)).mul_(2).div_(4).tolist() == [2, 2, 2]
    assert x.fill_(7).tolist() == [7, 7, 7] and x.zero_().tolist() == [0, 0, 0]
    assert x.copy_(np.array([1.0, 2.0, 3.0])).tolist() == [1, 2, 3]
    assert x.copy_(mg.tensor(4)).tolist() == [4, 4, 4]  # broadcast and converted, as torch's copy_
    with mg.no_grad():
        assert mg.ones(2, requires_grad=True).zero_().tolist() == [0, 0]


def test_in_place_on_a_leaf_that_requires_grad_needs_no_grad():
    w = mg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in an in-place"):
        w -= 1
    with pytest.raises(RuntimeError, match="fill_: a leaf Variable that requires grad"):
        w.zero_()


def test_in_place_on_a_tensor_in_a_graph_is_recorded():
    """`y += 1` on a tensor an op computed is recorded, as in PyTorch (tests/test_inplace_graph.py has more)."""
    w = mg.ones(2, requires_grad=True)
    y = w * 2
    y += 1
    y *= w
    assert y.grad_fn is not None and y.tolist() == [3.0, 3.0]
    y.sum().backward()
    assert w.grad.tolist() == [5.0, 5.0]  # d(w * (2w + 1))/dw = 4w + 1


def test_backward_refuses_an_input_changed_in_place_after_its_op_used_it():
    """Mul saved `c` for backward; changing c in place afterwards would silently change w's gradient."""
    w = mg.ones(2, requires_grad=True)
    c = mg.tensor([1.0, 2.0])
    y = (w * c).sum()
    c += 1
    with pytest.raises(RuntimeError, match=r"one of the variables needed for gradient computation has been modified "
                       r"by an inplace operation: input 1 of Mul \(shape minigrad\.Size\(\[2\]\)\) is at version 1; "
                       r"expected version 0"):
        y.backward()


def test_in_place_keeps_the_dtype_and_refuses_what_it_cannot_hold():
    ids = mg.tensor([1, 2])
    ids += 1
    assert ids.dtype == np.int64 and ids.tolist() == [2, 3]
    half = mg.ones(2, dtype="float16")
    half += mg.ones(2, dtype="float64")
    assert half.dtype == np.float16
    with pytest.raises(RuntimeError, match="result type float32 can't be cast to the desired output type int64"):
        ids /= 2
    with pytest.raises(RuntimeError, match="result type float32 can't be cast"):
        ids += 0.5
    with pytest.raises(RuntimeError, match=r"the result's shape minigrad\.Size\(\[2, 2\]\) does not match "
                       r"this tensor's minigrad\.Size\(\[2\]\)"):
        mg.ones(2).add_(mg.ones(2, 2))
    with pytest.raises(RuntimeError, match="cannot write into this tensor"):
        mg.ones(1, 2).expand(3, 2).zero_()  # a read-only view


def test_data_updates_write_into_the_parameter():
    """Defect: makemore's `p.data += -lr * p.grad` once made p.data a new object, so p was never updated. It writes
    into p's array, as PyTorch's updates p in place; `.data` is PyTorch's (a detached tensor sharing p's memory)."""
    p = mg.tensor([1.0, 2.0], requires_grad=True)
    (p * p).sum().backward()
    array = p.array
    p.data += -0.1 * p.grad
    p.data -= 0.5 * p.grad
    p.data *= mg.tensor(2.0)
    assert p.array is array and isinstance(p.data, mg.Tensor) and p.requires_grad
    np.testing.assert_allclose(p.numpy(), 2 * (np.array([1.0, 2.0]) - 0.6 * np.array([2.0, 4.0])), rtol=1e-6)
    assert (np.ones(2) < mg.tensor([0.0, 2.0])).tolist() == [False, True]  # NumPy on the left: still a Tensor
    assert isinstance(np.float32(2) - mg.ones(2), mg.Tensor)


# Python's binary operators, every one of them (the operator module's names), with an array on either side.
BINARY_OPERATORS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and_", "or_", "xor",
                    "lshift", "rshift", "lt", "le", "eq", "ne", "ge", "gt"]
BITWISE = {"and_", "or_", "xor", "lshift", "rshift"}


@pytest.mark.parametrize("requires_grad", [False, True])
@pytest.mark.parametrize("array_on_the_left", [True, False])
@pytest.mark.parametrize("name", BINARY_OPERATORS)
def test_every_operator_between_an_array_and_a_tensor_gives_the_tensors_result(name, array_on_the_left,
                                                                              requires_grad):
    """`ndarray <op> tensor` is the tensor's operator (a Tensor, as PyTorch's __array_priority__ makes it), never
    NumPy's on the tensor read as an array: `ndarray / tensor` once returned an ndarray under NumPy 2."""
    op = getattr(operator, name)
    if name in BITWISE:
        array, data, requires_grad = np.array([[1, 2], [3, 1]]), np.array([[1, 2], [0, 1]]), False
    else:
        array, data = np.array([[1.0, -2.5], [3.0, 0.5]]), np.array([[2.0, 1.5], [-1.0, 4.0]])
        if name == "pow":  # a negative base to a fractional power is NaN: keep to real results
            array, data = np.abs(array), np.abs(data)
    t = mg.tensor(data, dtype=data.dtype, requires_grad=requires_grad)
    result = op(array, t) if array_on_the_left else op(t, array)
    assert isinstance(result, mg.Tensor), type(result)
    expected = op(array, data) if array_on_the_left else op(data, array)
    np.testing.assert_allclose(result.detach().numpy(), expected)
    assert result.dtype == expected.dtype
    if requires_grad and result.dtype.kind == "f" and name not in {"floordiv"}:
        result.sum().backward()
        assert t.grad is not None and t.grad.shape == t.shape


def test_the_operator_table_is_numpys_own():
    """The ufunc behind each operator is asked of NumPy (NumPy 2 renamed true_divide to divide), none missing."""
    from minigrad.tensor.convert import _OPERATORS

    assert np.divide in _OPERATORS and np.floor_divide in _OPERATORS and np.bitwise_xor in _OPERATORS
    assert len(_OPERATORS) == len(BINARY_OPERATORS)


def test_numpy_functions_on_a_tensor_still_read_it_as_an_array():
    t = mg.tensor([0.0, 1.0])
    assert isinstance(np.exp(t), np.ndarray) and np.allclose(np.exp(t), [1.0, np.e])
    array = np.zeros(2)
    array += t  # into the array, in place (makemore's p.data += -lr * p.grad)
    assert isinstance(array, np.ndarray) and array.tolist() == [0.0, 1.0]
    with pytest.raises(RuntimeError, match="requires grad"):
        np.exp(mg.tensor([1.0], requires_grad=True))
