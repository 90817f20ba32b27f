"""Reductions: sum, mean, max and (population) var over `axis` (None, an int, a tuple, negatives) with `keepdims`.

Read next: test_ops_shape.py.
"""

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
from minigrad.testing import strategies as S

# name: (NumPy function, torch function, the values it is smooth on). torch's dim=None means every axis;
# amax spells that dim=(). (torch 2.13's var with dim=() divides its gradient by 1, not n: avoid it.)
REDUCTIONS = {
    "sum": (np.sum, lambda x, dim, keepdim: torch.sum(x, dim, keepdim=keepdim), S.floats),
    "mean": (np.mean, lambda x, dim, keepdim: torch.mean(x, dim, keepdim=keepdim), S.floats),
    "max": (np.max, lambda x, dim, keepdim: torch.amax(x, () if dim is None else dim, keepdim=keepdim),
            S.distinct_floats),  # no ties
    "var": (np.var, lambda x, dim, keepdim: torch.var(x, dim, correction=0, keepdim=keepdim), S.floats),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@op_settings
@given(data=st.data(), keepdims=S.keepdims)
def test_reduction(name, device, data, keepdims):
    np_fn, torch_fn, values = REDUCTIONS[name]
    x = data.draw(values(data.draw(S.shapes())))
    axis = data.draw(S.axes(x.ndim))
    check_op(lambda t: getattr(t, name)(axis=axis, keepdims=keepdims),
             lambda a: np_fn(a, axis=axis, keepdims=keepdims), [x], device,
             torch_fn=lambda t: torch_fn(t, axis, keepdims))


def test_max_shares_the_gradient_among_ties(device):
    x = mg.tensor([[1.0, 3.0, 3.0], [2.0, 0.0, 1.0]], requires_grad=True, device=device)
    x.max(axis=1).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0.0, 0.5, 0.5], [1.0, 0.0, 0.0]])  # as torch.amax


def test_var_is_the_population_variance(device):
    x = mg.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    assert x.var().item() == pytest.approx(1.25)  # divides by n = 4, not n - 1


def test_axis_out_of_range_is_named():
    with pytest.raises(ValueError, match="axis 2 is out of range for a tensor with 2 dimensions"):
        mg.ones(2, 3).sum(axis=2)
