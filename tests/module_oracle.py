"""`check_module`: a minigrad module against its torch.nn twin, from the same weights, in float64.

    check_module(nn.GRU(3, 5, dtype=mg.float64), torch.nn.GRU(3, 5, dtype=torch.float64), [x, h0])

copies PyTorch's state_dict into ours (so the parameter names must match), runs both on the same arrays, and
checks every output (tuples flattened: output, h_n, c_n), then, after one backward of the same random upstream
gradient on every output, the gradient of every float input and of every parameter. Float arrays among the
positional inputs are leaves that require grad; boolean arrays (masks) and everything in `options` are passed as
they are, converted to each library's tensor. Used by test_torch_recurrent.py and test_torch_transformer.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minigrad as mg

TOL = 1e-10


def copy_weights(ours: mg.nn.Module, theirs: Any) -> None:
    """PyTorch's state_dict loaded into ours, strictly (every name and shape must match)."""
    ours.load_state_dict({name: mg.tensor(value.detach().numpy(), dtype=mg.float64)
                          for name, value in theirs.state_dict().items()})


def _convert(value: Any, torch: Any, leaves: list | None) -> Any:
    """An array as a tensor of minigrad (torch=None) or PyTorch; a float array is a leaf requiring grad when
    `leaves` collects them. Tuples are converted element by element; anything else passes as it is."""
    if isinstance(value, tuple):
        return tuple(_convert(v, torch, leaves) for v in value)
    if not isinstance(value, np.ndarray):
        return value
    grad = leaves is not None and value.dtype == np.float64
    tensor = (torch.tensor(value, requires_grad=grad) if torch is not None
              else mg.tensor(value, dtype=value.dtype, requires_grad=grad))
    if grad:
        leaves.append(tensor)
    return tensor


def _flat(out: Any) -> list:
    return [t for o in out for t in _flat(o)] if isinstance(out, (tuple, list)) else [out]


def check_module(ours: mg.nn.Module, theirs: Any, inputs: list, options: dict | None = None, seed: int = 0,
                 tol: float = TOL) -> tuple[list, list]:
    """Outputs and gradients of `ours` equal to `theirs`'s (see the module docstring); returns both outputs."""
    import torch

    copy_weights(ours, theirs)
    options = options or {}
    leaves_m: list = []
    leaves_t: list = []
    outs_m = _flat(ours(*_convert(tuple(inputs), None, leaves_m), **_convert_options(options, None)))
    outs_t = _flat(theirs(*_convert(tuple(inputs), torch, leaves_t), **_convert_options(options, torch)))
    assert len(outs_m) == len(outs_t)
    rng = np.random.default_rng(seed)
    loss_m, loss_t = 0, 0
    for i, (out_m, out_t) in enumerate(zip(outs_m, outs_t)):
        assert out_m.shape == tuple(out_t.shape), f"output {i}: shape {out_m.shape}, PyTorch's {tuple(out_t.shape)}"
        np.testing.assert_allclose(out_m.numpy(), out_t.detach().numpy(), rtol=tol, atol=tol, err_msg=f"output {i}")
        gy = rng.standard_normal(out_m.shape)
        loss_m = loss_m + (out_m * mg.tensor(gy, dtype=mg.float64)).sum()
        loss_t = loss_t + (out_t * torch.tensor(gy)).sum()
    loss_m.backward()
    loss_t.backward()
    for i, (leaf_m, leaf_t) in enumerate(zip(leaves_m, leaves_t)):
        np.testing.assert_allclose(leaf_m.grad.numpy(), leaf_t.grad.numpy(), rtol=tol, atol=tol,
                                   err_msg=f"gradient of input {i}")
    params_t = dict(theirs.named_parameters())
    assert [name for name, _ in ours.named_parameters()] == list(params_t)
    for name, param in ours.named_parameters():
        np.testing.assert_allclose(param.grad.numpy(), params_t[name].grad.numpy(), rtol=tol, atol=tol,
                                   err_msg=f"gradient of {name}")
    return outs_m, outs_t


def _convert_options(options: dict, torch: Any) -> dict:
    return {name: _convert(value, torch, None) for name, value in options.items()}
