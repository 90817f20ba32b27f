"""`mg.device` and the constants, held against PyTorch: `torch.device("cuda:0")`'s type, index, str and repr;
a device accepted wherever a device string is; `cuda.device_count()`; `torch.inf`, `pi`, `nan`, `e`."""

import copy
import math

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

SPECS = [("cpu",), ("cuda",), ("cuda:0",), ("cuda:3",), ("cuda", 1), ("cpu", 0)]


def test_the_constants_are_pytorchs():
    assert (mg.inf, mg.pi, mg.e) == (torch.inf, torch.pi, torch.e)
    assert math.isnan(mg.nan) and type(mg.nan) is type(torch.nan) is float
    scores = mg.tensor([[0.0, 1.0], [2.0, 3.0]]).masked_fill(mg.tensor([[False, True], [False, False]]), -mg.inf)
    assert scores.softmax(-1).tolist() == [[1.0, 0.0], [pytest.approx(0.2689414), pytest.approx(0.7310586)]]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_a_device_has_pytorchs_type_index_str_and_repr(spec):
    ours, theirs = mg.device(*spec), torch.device(*spec)
    assert (ours.type, ours.index, str(ours), repr(ours)) == (theirs.type, theirs.index, str(theirs), repr(theirs))
    assert mg.device(ours) == ours and repr(copy.deepcopy(ours)) == repr(theirs)


def test_a_device_equals_its_string_and_devices_of_other_names_differ():
    assert mg.device("cpu") == "cpu" and mg.device("cuda", 1) == "cuda:1"
    assert mg.device("cuda") != mg.device("cuda:0")  # as PyTorch: no index is not index 0
    assert torch.device("cuda") != torch.device("cuda:0")
    assert {mg.device("cpu"): 1}["cpu"] == 1
    assert mg.device(2) == "cuda:2"  # an int is a GPU's number (PyTorch needs a GPU to make one)


@pytest.mark.parametrize("bad", ["gpu", "cuda:x", "cuda:-1", "mps"])
def test_an_unknown_device_is_refused_in_one_line(bad):
    with pytest.raises(RuntimeError) as error:
        mg.device(bad)
    assert "\n" not in str(error.value) and repr(bad) in str(error.value)
    with pytest.raises(RuntimeError, match="index"):
        mg.device("cuda:1", 1)


def test_a_device_is_accepted_wherever_a_device_string_is():
    cpu = mg.device("cpu")
    made = [mg.tensor([1.0], device=cpu), mg.zeros(2, device=cpu), mg.ones(2, device=cpu), mg.arange(3, device=cpu),
            mg.full((2,), 1.0, device=cpu), mg.randn(2, device=cpu), mg.tensor([1.0]).to(cpu),
            mg.tensor([1.0]).to(cpu, mg.float64), mg.zeros_like(mg.ones(2), device=cpu)]
    assert all(t.device == "cpu" and repr(t.device) == "device(type='cpu')" for t in made)
    model = mg.nn.Linear(2, 3).to(cpu)
    assert model.weight.device.type == torch.nn.Linear(2, 3).weight.device.type == "cpu"
    strict = mg.device("strict")  # the test suite's stand-in GPU: a real move, and back
    moved = mg.tensor([1.0, 2.0], requires_grad=True).to(strict)
    assert moved.device == strict and moved.device.type == "strict"
    (moved * 3).sum().backward()
    assert np.array_equal(moved.to(mg.device("cpu")).numpy(), [1.0, 2.0])


def test_a_tensors_device_answers_as_pytorchs():
    ours, theirs = mg.zeros(2).device, torch.zeros(2).device
    assert (ours.type, ours.index, str(ours), repr(ours)) == (theirs.type, theirs.index, str(theirs), repr(theirs))
    assert mg.zeros(1).device is mg.zeros(1).device  # one object per name: reading .device allocates nothing


def test_the_training_script_idiom_runs():
    device = mg.device("cuda" if mg.cuda.is_available() else "cpu")
    assert mg.cuda.device_count() == (1 if mg.cuda.is_available() else 0) or mg.cuda.device_count() > 1
    assert isinstance(mg.cuda.device_count(), int)
    x = mg.randn(4, 3).to(device)
    assert x.device == device and (x @ x.T).device == device
