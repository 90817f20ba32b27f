"""dtypes as PyTorch has them: the result dtype of a binary op (`torch.result_type`), conversions (`to`,
`float()`, `long()`, ...) and which of them pass a gradient, and the dtypes the factories infer.

Read next: test_tensor_protocol.py.
"""

import operator

import numpy as np
import pytest
from helpers import op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from minigrad.core.dtypes import result_type
from minigrad.testing import strategies as S

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


# Type promotion ------------------------------------------------------------------------------------------------
def test_integer_tensors_keep_their_dtype_with_python_ints():
    """Defect: NumPy's promotion turned int32 * 2 and uint8 * 3 into int64 (PyTorch keeps int32 and uint8)."""
    assert (mg.tensor([1, 2], dtype="int32") * 2).dtype == np.int32
    assert (mg.tensor([1, 2], dtype="uint8") * 3).dtype == np.uint8
    assert (2 + mg.tensor([1, 2], dtype="int16")).dtype == np.int16
    assert (mg.tensor([1], dtype="uint8") * 300).tolist() == [44]  # wraps around, as in PyTorch


def test_the_category_decides_then_the_dimensioned_operands():
    assert (mg.tensor([1, 2], dtype="int32") * 2.5).dtype == np.float32  # a float number: the default float
    assert (mg.ones(2) + mg.tensor(1.0, dtype="float64")).dtype == np.float32  # a 0-d tensor does not widen
    assert (mg.tensor([1, 2], dtype="int32") + mg.tensor(1.0, dtype="float64")).dtype == np.float64
    assert (mg.tensor([True]) + 1).dtype == np.int64
    assert (mg.ones(2, dtype="float16") * np.float64(2.0)).dtype == np.float16  # NumPy scalars are numbers
    assert (mg.tensor([1, 2]) / mg.tensor([1, 2])).dtype == np.float32  # true division of integers


def np_dtype_to_torch(name: str):
    return getattr(torch, name)


operands = st.one_of(
    st.tuples(st.sampled_from(DTYPES), st.sampled_from([(), (2,)])),  # a tensor: dtype and shape
    st.sampled_from([True, 3, 2.5]),  # a Python number
)


def make(operand, library):
    """The operand as a minigrad or torch tensor (a number stays a number)."""
    if not isinstance(operand, tuple):
        return operand
    dtype, shape = operand
    if library == "torch":
        return torch.ones(shape, dtype=np_dtype_to_torch(dtype))
    return mg.ones(*shape, dtype=dtype)


@pytest.mark.torch
@op_settings
@given(a=operands, b=operands)
def test_result_type_is_torch_result_type(a, b):
    pytest.importorskip("torch")
    if not (isinstance(a, tuple) or isinstance(b, tuple)):
        a = (DTYPES[5], ())  # a binary op has at least one tensor
    expected = torch.result_type(make(a, "torch"), make(b, "torch"))
    assert str(result_type(make(a, "mg"), make(b, "mg"))) == str(expected).removeprefix("torch.")


@pytest.mark.torch
@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv],
                         ids=["add", "sub", "mul", "truediv"])
@op_settings
@given(a=operands, b=operands)
def test_binary_ops_give_torchs_dtype_and_values(op, a, b):
    pytest.importorskip("torch")
    if not isinstance(a, tuple):
        a, b = b, a
    if not isinstance(a, tuple):
        a = ("int64", (2,))
    if op is operator.sub and "bool" in (a[0], b[0] if isinstance(b, tuple) else type(b).__name__):
        return  # torch refuses to subtract bools
    expected = op(make(a, "torch"), make(b, "torch"))
    got = op(make(a, "mg"), make(b, "mg"))
    assert str(got.dtype) == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.numpy().astype(float), expected.numpy().astype(float))


def test_mixed_float_dtypes_pass_the_gradient_back_in_each_dtype():
    a = mg.ones(2, dtype="float32", requires_grad=True)
    b = mg.ones(2, dtype="float64", requires_grad=True)
    (a * b).sum().backward()
    assert a.grad.dtype == np.float32 and b.grad.dtype == np.float64


def test_matmul_wants_one_dtype_as_in_pytorch():
    with pytest.raises(TypeError, match="matmul: both operands must have the same dtype, got float32 and float64"):
        mg.ones(2, 2) @ mg.ones(2, 2, dtype="float64")


# Conversions ---------------------------------------------------------------------------------------------------
def test_a_cast_to_an_integer_passes_no_gradient():
    """Defect: a float-to-integer cast kept requires_grad=True and passed gradients through."""
    x = mg.tensor([1.5, 2.5], requires_grad=True)
    for cast in (lambda t: t.to("int64"), lambda t: t.long(), lambda t: t.astype(np.int32), lambda t: t.bool()):
        y = cast(x)
        assert not y.requires_grad and y.grad_fn is None
    z = x * 2 + x.long()  # the integer branch is a constant
    z.sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


@op_settings
@given(x=S.floats(S.shapes()), down=st.sampled_from(["float16", "float32"]))
def test_casts_between_floats_pass_the_gradient_back_in_the_source_dtype(device, x, down):
    """(Finite differences cannot see through float32 rounding, so the gradient is checked directly.)"""
    t = mg.tensor(x, dtype="float64", requires_grad=True, device=device)
    y = t.to(down)
    upstream = np.random.default_rng(0).standard_normal(x.shape).astype(down)
    y.backward(upstream)
    assert y.dtype == down and t.grad.dtype == np.float64
    np.testing.assert_array_equal(t.grad.numpy(), upstream.astype(np.float64))


@pytest.mark.parametrize("method, dtype", [("float", "float32"), ("double", "float64"), ("half", "float16"),
                                           ("long", "int64"), ("int", "int32"), ("bool", "bool")])
def test_dtype_shorthands(method, dtype):
    assert getattr(mg.tensor([0.0, 1.5]), method)().dtype == dtype


def test_to_takes_a_device_a_dtype_both_or_a_tensor():
    x = mg.tensor([1.0, 2.0])
    assert x.to(np.float32) is x and x.to("cpu") is x  # nothing to do: the tensor itself, as in PyTorch
    assert x.to("float64").dtype == np.float64
    both = x.to("strict", "float64")
    assert both.device == "strict" and both.dtype == np.float64
    assert x.to(both).device == "strict" and x.to(both).dtype == np.float64
    assert x.to(device="strict", dtype="int64").dtype == np.int64


def test_size_dim_item_tolist_requires_grad_():
    x = mg.zeros(2, 3)
    assert x.size() == (2, 3) and x.size(-1) == 3 and x.dim() == 2
    assert mg.tensor([[1, 2]]).tolist() == [[1, 2]] and mg.tensor(3).tolist() == 3 and mg.tensor([2.5]).item() == 2.5
    assert x.requires_grad_() is x and x.requires_grad
    with pytest.raises(RuntimeError, match="only leaf tensors can change requires_grad"):
        (x * 2).requires_grad_(False)
    with pytest.raises(TypeError, match="only float tensors can require grad, not int64"):
        mg.arange(3).requires_grad_()


# Factories -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("make_mg, make_torch", [
    (lambda: mg.arange(5), lambda: torch.arange(5)),
    (lambda: mg.arange(1, 4), lambda: torch.arange(1, 4)),
    (lambda: mg.arange(0, 1, 0.25), lambda: torch.arange(0, 1, 0.25)),
    (lambda: mg.arange(3.0), lambda: torch.arange(3.0)),
    (lambda: mg.arange(5, 0, -2), lambda: torch.arange(5, 0, -2)),
    (lambda: mg.full((2, 3), 7), lambda: torch.full((2, 3), 7)),
    (lambda: mg.full((2,), 0.5), lambda: torch.full((2,), 0.5)),
    (lambda: mg.full((2,), True), lambda: torch.full((2,), True)),
    (lambda: mg.eye(3), lambda: torch.eye(3)),
    (lambda: mg.eye(2, 3), lambda: torch.eye(2, 3)),
    (lambda: mg.linspace(0, 1, 5), lambda: torch.linspace(0, 1, 5)),
    (lambda: mg.linspace(-2, 3, 7), lambda: torch.linspace(-2, 3, 7)),
    (lambda: mg.zeros_like(mg.ones(2, dtype="int32")), lambda: torch.zeros_like(torch.ones(2, dtype=torch.int32))),
    (lambda: mg.ones_like(mg.zeros(2, 2)), lambda: torch.ones_like(torch.zeros(2, 2))),
    (lambda: mg.full_like(mg.zeros(2), 3), lambda: torch.full_like(torch.zeros(2), 3)),
], ids=lambda f: "")
@pytest.mark.torch
def test_factories_match_pytorch(make_mg, make_torch):
    pytest.importorskip("torch")
    got, expected = make_mg(), make_torch()
    assert str(got.dtype) == str(expected.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.numpy().astype(float), expected.numpy().astype(float), rtol=1e-6)


def test_randn_like_and_the_like_factories_keep_device_and_dtype():
    like = mg.zeros(2, 3, dtype="float64", device="strict")
    for made in (mg.randn_like(like), mg.zeros_like(like), mg.full_like(like, 2.0)):
        assert made.shape == (2, 3) and made.dtype == np.float64 and made.device == "strict"
    assert mg.ones_like(like, requires_grad=True).requires_grad
    with pytest.raises(TypeError, match="randn_like: normal samples need a float dtype, not int64"):
        mg.randn_like(mg.arange(3))


def test_where_with_two_numbers_has_pytorchs_dtype():
    cond = np.array([True, False])
    assert mg.where(cond, 1.0, 0.0).dtype == np.float32 and mg.where(cond, 1.0, 0.0).tolist() == [1.0, 0.0]
    assert mg.where(cond, 1, 0).dtype == np.int64
    assert mg.where(mg.tensor(cond), 1, 0.5).tolist() == [1.0, 0.5]
    assert mg.where(cond, mg.ones(2, dtype="float64"), 0).dtype == np.float64


def test_booleans_square_pow_clamp_and_sign_as_in_pytorch():
    """square, ** and clamp on booleans are integer ops (int64), and sign keeps them boolean; NumPy gave
    bool, int8 and bool, and its sign has no boolean loop at all."""
    flags = mg.tensor([True, False])
    assert flags.square().dtype == np.int64 and flags.square().tolist() == [1, 0]
    assert (flags**2).dtype == np.int64 and (flags**2).tolist() == [1, 0]
    assert flags.clamp(0, 1).dtype == np.int64 and flags.clamp(max=0).tolist() == [0, 0]
    assert flags.sign().dtype == np.bool_ and flags.sign().tolist() == [True, False]
    assert (mg.tensor([1, 2], dtype="int32") ** 2).dtype == np.int32  # integers keep their width
    assert mg.tensor([1, 2], dtype="int32").clamp(0, 1).dtype == np.int32
    assert mg.ones(2).clamp(min=mg.zeros(2, dtype="float64")).dtype == np.float64  # a float64 bound widens, as ops do
    if torch is not None:
        t = torch.tensor([True, False])
        assert (t.square().dtype, (t**2).dtype, t.clamp(0, 1).dtype, t.sign().dtype) == (
            torch.int64, torch.int64, torch.int64, torch.bool)
