"""`x.shape` and `x.size()` as PyTorch's `torch.Size`: a tuple that prints as one, keeps its type, and is checked.

Each case runs under both libraries; the printed form differs by the library's name only.
Read next: test_torch_device.py.
"""

import numpy as np
import pytest

import minigrad as mg

torch = pytest.importorskip("torch")

CASES = [
    lambda t: t.zeros(6, 2).shape,
    lambda t: t.zeros(6, 2).size(),
    lambda t: t.tensor(1.0).shape,
    lambda t: t.zeros(2, 3, 4).shape[1:],
    lambda t: t.zeros(2, 3).shape[::-1],
    lambda t: (1,) + t.zeros(2, 3).shape,
    lambda t: t.zeros(2, 3).shape + (4,),
    lambda t: t.zeros(2, 3).shape * 2,
    lambda t: 2 * t.zeros(2, 3).shape,
    lambda t: t.Size([2, 3]),
    lambda t: t.Size(),
    lambda t: t.Size((2, -1)),
    lambda t: t.Size(np.array([4, 5])),
    lambda t: t.Size([True, 2]),
    lambda t: t.zeros(2, 3).view(t.Size([3, 2])).shape,
    lambda t: t.zeros(t.Size([2, 1])).shape,
    lambda t: t.zeros(2, 3)[0].shape,
]


@pytest.mark.parametrize("make", CASES)
def test_a_shape_is_pytorchs_size(make):
    ours, theirs = make(mg), make(torch)
    assert type(ours) is mg.Size and type(theirs) is torch.Size
    assert tuple(ours) == tuple(theirs) and ours == theirs and hash(ours) == hash(tuple(theirs))
    assert repr(ours) == repr(theirs).replace("torch.", "minigrad.")
    assert str(ours) == str(theirs).replace("torch.", "minigrad.") == f"{ours}"
    assert ours.numel() == theirs.numel()


def test_what_stays_a_plain_value():
    for lib in (mg, torch):
        shape = lib.zeros(2, 3).shape
        assert shape[0] == 2 and type(shape[0]) is int and lib.zeros(2, 3).size(1) == 3
        assert shape == (2, 3) and shape != [2, 3] and list(shape) == [2, 3]
        assert shape.count(3) == 1 and shape.index(3) == 1


@pytest.mark.parametrize("bad, message", [([2.0], "item 0 is 'float'"), ([2, "3"], "item 1 is 'str'")])
def test_a_size_of_something_else_is_refused_as_pytorch_does(bad, message):
    for lib in (mg, torch):
        with pytest.raises(TypeError, match=message):
            lib.Size(bad)
    with pytest.raises(TypeError):
        mg.zeros(2, 3).shape + [4]  # noqa: B018 (PyTorch: can only concatenate tuple)


def test_a_shape_prints_inside_a_message_as_pytorch_prints_it():
    x = mg.zeros(6, 2)
    assert f"{x.shape}" == "minigrad.Size([6, 2])" and f"{tuple(x.shape)}" == "(6, 2)"
