"""`helper_test_op`: one op, run by minigrad and by PyTorch on the same inputs, forward and backward.

The pattern is tinygrad's (`test/test_ops.py`), written again here for minigrad:

    helper_test_op([(45, 65), (45, 1)], lambda x, y: x + y, dtype=np.float32, device="cpu")

draws one uniform array per shape (or takes `vals`), makes a torch tensor and a minigrad tensor of each,
runs `torch_fn` on the torch ones and `mg_fn` (by default the same function) on the minigrad ones, and checks:
1. forward: the same shape, dtype and values (floats within the dtype's tolerance, the rest exactly), and
   the same `requires_grad`;
2. backward: the gradient of every input, with its shape and dtype, against PyTorch's;
3. the inputs are unchanged.
tinygrad backpropagates `out.sum()`; a sum's gradient is all ones, which cannot tell a permutation from
another, so here the upstream gradient is a fixed random array instead.

`helper_test_exception` checks that both frameworks refuse an input, each with its own error.
`Case`, `op` and `lib_op` describe one case, so that a test module can hold a table of them.
Read next: test_torch_ops_port.py, the cases themselves.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F

torch = pytest.importorskip("torch")  # this whole comparison needs the oracle: pip install -e '.[oracle]'
TF = torch.nn.functional

# Every port module's marks: it needs torch, and its cases at nan, inf, 0 ** -1 and empty slices compute them
# on purpose, in both libraries (so NumPy's and PyTorch's warnings about them are expected).
PORT_MARKS = [
    pytest.mark.torch,
    pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning"),
]

# Per dtype: forward (atol, rtol), backward (atol, rtol). float32 leaves room for a different summation
# order (BLAS against PyTorch's kernels); float64 is close to exact.
TOLERANCES = {
    np.dtype(np.float32): ((1e-5, 1e-5), (1e-5, 1e-4)),
    np.dtype(np.float64): ((1e-12, 1e-10), (1e-12, 1e-10)),
}


def make_inputs(shapes: Sequence[tuple[int, ...]] | None, vals: Sequence[Any] | None, dtype: np.dtype,
                low: float, high: float) -> list[np.ndarray]:
    """One array per shape, uniform in [low, high) (seeded), or `vals` with their floats in `dtype`."""
    if shapes is not None:
        rng = np.random.default_rng(0)
        return [rng.uniform(low, high, size=shape).astype(dtype) for shape in shapes]
    arrays = [np.asarray(v) for v in vals]
    return [a.astype(dtype) if a.dtype.kind == "f" else a for a in arrays]


def as_outputs(out: Any) -> list:
    """An op's result as a list of tensors (split and chunk return several)."""
    return list(out) if isinstance(out, (tuple, list)) else [out]


def torch_dtype(t: Any) -> np.dtype:
    return torch.empty(0, dtype=t.dtype).numpy().dtype


def compare(what: str, ours: np.ndarray, ours_dtype: Any, theirs: Any, atol: float, rtol: float) -> None:
    """Shape, dtype and values of a minigrad array against a torch tensor (floats approximately)."""
    expected = theirs.detach().numpy()
    assert ours.shape == expected.shape, f"{what}: shape {ours.shape}, torch {expected.shape}"
    assert np.dtype(ours_dtype) == expected.dtype, f"{what}: dtype {np.dtype(ours_dtype)}, torch {expected.dtype}"
    if expected.dtype.kind in "fc":
        np.testing.assert_allclose(ours, expected, atol=atol, rtol=rtol, err_msg=what)
    else:
        np.testing.assert_array_equal(ours, expected, err_msg=what)


def helper_test_op(shapes: Sequence[tuple[int, ...]] | None, torch_fn: Callable, mg_fn: Callable | None = None, *,
                   dtype: Any, device: str, atol: float | None = None, rtol: float | None = None,
                   grad_atol: float | None = None, grad_rtol: float | None = None, forward_only: bool = False,
                   vals: Sequence[Any] | None = None, low: float = -2.0, high: float = 2.0) -> None:
    """Run `torch_fn` and `mg_fn` (default: `torch_fn`) on the same inputs; compare forward and backward.

    Inputs are `shapes` drawn uniformly in [low, high), or `vals` (lists, arrays or numbers; their floats
    are cast to `dtype`, integers and booleans kept). Float inputs require grad unless `forward_only`.
    Tolerances default to the dtype's (TOLERANCES); a case may loosen them.
    """
    mg_fn = torch_fn if mg_fn is None else mg_fn
    dtype = np.dtype(dtype)
    (f_atol, f_rtol), (g_atol, g_rtol) = TOLERANCES[dtype]
    atol, rtol = f_atol if atol is None else atol, f_rtol if rtol is None else rtol
    grad_atol, grad_rtol = g_atol if grad_atol is None else grad_atol, g_rtol if grad_rtol is None else grad_rtol

    arrays = make_inputs(shapes, vals, dtype, low, high)
    originals = [a.copy() for a in arrays]
    grads_wanted = [not forward_only and a.dtype.kind == "f" for a in arrays]
    ts = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads_wanted)]
    # minigrad makes a float64 NumPy array float32 unless told (API.md); PyTorch keeps it: say the dtype.
    xs = [mg.tensor(a, dtype=a.dtype, device=device, requires_grad=g) for a, g in zip(arrays, grads_wanted)]

    # 1. forward
    theirs, ours = as_outputs(torch_fn(*ts)), as_outputs(mg_fn(*xs))
    assert len(ours) == len(theirs), f"{len(ours)} outputs, torch {len(theirs)}"
    for i, (y, t) in enumerate(zip(ours, theirs)):
        compare(f"forward, output {i}", y.numpy(), y.dtype, t, atol, rtol)
        assert y.device == device, f"output {i} on {y.device}, inputs on {device}"
        if any(grads_wanted):
            assert y.requires_grad == t.requires_grad, (
                f"output {i}: requires_grad {y.requires_grad}, torch's {t.requires_grad}")

    # 2. backward, through a fixed random weighting of every output that requires grad (comparisons have none)
    if any(t.requires_grad for t in theirs):
        rng = np.random.default_rng(1)
        weights = [rng.standard_normal(t.shape).astype(torch_dtype(t)) for t in theirs]
        pairs = [(y, t, w) for y, t, w in zip(ours, theirs, weights) if t.requires_grad]
        their_loss = sum((t * torch.tensor(w)).sum() for _, t, w in pairs)
        inputs = [t for t in ts if t.requires_grad]
        their_grads = iter(torch.autograd.grad(their_loss, inputs, allow_unused=True))
        our_loss = sum((y * mg.tensor(w, dtype=w.dtype, device=device)).sum() for y, _, w in pairs)
        our_loss.backward()
        for i, (x, t) in enumerate(zip(xs, ts)):
            if not t.requires_grad:
                continue
            expected = next(their_grads)
            expected = torch.zeros_like(t) if expected is None else expected
            assert x.grad is None or x.grad.device == device, f"gradient of input {i} on {x.grad.device}"
            got = np.zeros(x.shape, x.dtype) if x.grad is None else x.grad.numpy()
            compare(f"backward, input {i}", got, x.dtype if x.grad is None else x.grad.dtype, expected,
                    grad_atol, grad_rtol)

    # 3. no mutation
    for i, (a, x, original) in enumerate(zip(arrays, xs, originals)):
        np.testing.assert_array_equal(a, original, err_msg=f"input array {i} was modified")
        np.testing.assert_array_equal(x.numpy(), original, err_msg=f"input tensor {i} was modified")


def helper_test_exception(shapes: Sequence[tuple[int, ...]] | None, torch_fn: Callable,
                          mg_fn: Callable | None = None, *, expected: Any, match: str | None = None,
                          dtype: Any = np.float32, device: str = "cpu", vals: Sequence[Any] | None = None,
                          low: float = -2.0, high: float = 2.0, torch_refuses: bool = True) -> None:
    """Both frameworks refuse the input: PyTorch with some error, minigrad with `expected` (matching `match`).

    torch_refuses=False: an input minigrad refuses on purpose although PyTorch accepts it.
    """
    mg_fn = torch_fn if mg_fn is None else mg_fn
    arrays = make_inputs(shapes, vals, np.dtype(dtype), low, high)
    if torch_refuses:
        with pytest.raises(Exception):  # noqa: B017 - PyTorch's error class is its business; only that it refuses
            torch_fn(*[torch.tensor(a) for a in arrays])
    with pytest.raises(expected, match=match) as caught:
        mg_fn(*[mg.tensor(a, dtype=a.dtype, device=device) for a in arrays])
    message = str(caught.value)
    assert message and "\n" not in message.strip(), f"not a clear one-line error: {message!r}"


@dataclass(frozen=True)
class Case:
    """One call of helper_test_op: its inputs (`shapes`, or `vals` among the options) and its functions."""

    name: str
    shapes: Any  # a list of shapes, or None when options["vals"] gives the inputs
    torch_fn: Callable | None = None
    mg_fn: Callable | None = None
    lib_fn: Callable | None = None  # fn(lib, F, *inputs), for both libraries
    options: dict = field(default_factory=dict)

    @property
    def has_float_inputs(self) -> bool:
        if self.shapes is not None:
            return len(self.shapes) > 0
        return any(np.asarray(v).dtype.kind == "f" for v in self.options["vals"])

    def functions(self, device: str) -> tuple[Callable, Callable]:
        """The torch function and the minigrad one, whose own tensors (factories, ids, masks) go to `device`."""
        if self.lib_fn is None:
            return self.torch_fn, self.mg_fn or self.torch_fn
        return partial(self.lib_fn, torch, TF), partial(self.lib_fn, OnDevice(device), F)


def op(name: str, shapes: Any, torch_fn: Callable, mg_fn: Callable | None = None, **options: Any) -> Case:
    """A case: `torch_fn` on torch tensors, `mg_fn` (by default the same function) on minigrad ones."""
    return Case(name, shapes, torch_fn, mg_fn, options=options)


def lib_op(name: str, shapes: Any, fn: Callable, **options: Any) -> Case:
    """A case written once against a library: `fn(lib, F, *inputs)`, `lib` torch or minigrad, `F` its functional."""
    return Case(name, shapes, lib_fn=fn, options=options)


def refuse(name: str, shapes: Any, fn: Callable, expected: Any, match: str, **options: Any) -> Case:
    """An input both libraries refuse (or, with torch_refuses=False, minigrad alone), for helper_test_exception;
    `fn(lib, F, *inputs)` as in lib_op."""
    return lib_op(name, shapes, fn, expected=expected, match=match, **options)


DTYPES = {"float32": np.float32, "float64": np.float64}


def dtype_params(cases: Sequence[Case]) -> list:
    """pytest params (case, dtype): each case in float32 and float64, or once ("nofloat") if no input is float."""
    assert len({case.name for case in cases}) == len(cases), "two cases share a name"
    return [pytest.param(case, dtype, id=f"{case.name}-{name}")
            for case in cases
            for name, dtype in (DTYPES.items() if case.has_float_inputs else [("nofloat", np.float32)])]


class OnDevice:
    """minigrad as a case sees it: its factories make their tensors on `device`, where the inputs are."""

    FACTORIES = ("tensor", "zeros", "ones", "full", "eye", "arange", "linspace")

    def __init__(self, device: str) -> None:
        self.device = device

    def __getattr__(self, name: str) -> Any:
        value = getattr(mg, name)
        return partial(value, device=self.device) if name in self.FACTORIES else value
