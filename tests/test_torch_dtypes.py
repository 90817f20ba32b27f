"""PyTorch's dtype names (mg.float32, mg.long, ...), the default dtype, finfo / iinfo, and inference_mode."""

import numpy as np
import pytest

import minigrad as mg

NAMES = ["float16", "half", "float32", "float", "float64", "double", "int8", "int16", "short", "int32", "int",
         "int64", "long", "uint8", "bool"]


@pytest.mark.parametrize("name", NAMES)
def test_dtype_names_match_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = getattr(mg, name), getattr(torch, name)
    assert isinstance(ours, mg.dtype)
    assert str(ours) == str(theirs).removeprefix("torch.")
    x = mg.zeros(2, dtype=ours)
    assert x.dtype == ours and x.dtype == getattr(mg, name)
    assert str(x.dtype) == str(torch.zeros(2, dtype=theirs).dtype).removeprefix("torch.")


def test_dtype_names_compare_with_tensor_dtypes():
    assert mg.tensor([1.5]).dtype == mg.float32 and mg.tensor([1.5]).dtype != mg.float64
    assert mg.tensor([1, 2]).dtype == mg.long
    assert mg.tensor([True]).dtype == mg.bool
    assert mg.tensor([1, 2], dtype=mg.float).dtype == np.float32  # NumPy spellings keep working
    assert mg.arange(3).to(mg.double).dtype == mg.float64
    assert mg.float is not float and float(1) == 1.0  # the package attribute does not shadow the builtin here


def test_default_dtype():
    torch = pytest.importorskip("torch")
    assert mg.get_default_dtype() == mg.float32
    assert str(mg.get_default_dtype()) == str(torch.get_default_dtype()).removeprefix("torch.")
    mg.set_default_dtype(mg.float32)
    with pytest.raises(TypeError):
        mg.set_default_dtype(mg.int64)
    assert mg.tensor(1.5).dtype == mg.float32


@pytest.mark.parametrize("name", ["float16", "float32", "float64"])
def test_finfo_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = mg.finfo(getattr(mg, name)), torch.finfo(getattr(torch, name))
    for field in ("eps", "max", "min", "tiny", "resolution", "bits"):
        assert float(getattr(ours, field)) == float(getattr(theirs, field)), field
    assert mg.finfo().eps == torch.finfo().eps


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8"])
def test_iinfo_matches_pytorch(name):
    torch = pytest.importorskip("torch")
    ours, theirs = mg.iinfo(getattr(mg, name)), torch.iinfo(getattr(torch, name))
    assert (ours.min, ours.max, ours.bits) == (theirs.min, theirs.max, theirs.bits)


def test_finfo_iinfo_refuse_the_other_kind():
    with pytest.raises(TypeError):
        mg.finfo(mg.int32)
    with pytest.raises(TypeError):
        mg.iinfo(mg.float32)


def test_inference_mode_is_no_grad():
    x = mg.ones(2, requires_grad=True)
    with mg.inference_mode():
        assert not mg.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert mg.is_grad_enabled()
    with mg.inference_mode(False):
        assert (x * 2).requires_grad

    @mg.inference_mode()
    def double(t):
        return t * 2

    assert not double(x).requires_grad and mg.is_grad_enabled()


def test_set_grad_enabled_as_call_and_context():
    x = mg.ones(2, requires_grad=True)
    with mg.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert mg.is_grad_enabled()
    mg.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        mg.set_grad_enabled(True)
    assert (x * 2).requires_grad
