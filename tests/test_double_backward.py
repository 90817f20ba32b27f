"""Every op differentiates twice: `mg.gradgradcheck` on each op class, on the cpu and the strict stand-in device.

`CASES` has one entry per op class in minigrad/ops/: a function that draws (with hypothesis) the op's inputs and
returns `(fn, arrays)`, fn calling the op. `check_double_backward` then checks that
1. the gradients that create_graph=True records have the values of the ordinary ones (and their shapes, dtypes,
   devices): the backward on tensors (minigrad/core/higher_order.py) computes the same thing;
2. `mg.gradgradcheck` passes: the graph of those gradients has the right derivatives, with respect to the inputs
   (second derivatives) and to the upstream gradient.
`test_every_op_class_has_a_case` fails for an op class that is not in the table, so a new op must show that it
differentiates twice. The values are drawn where each op is smooth, as in the first-derivative tests.
Read next: test_double_backward_engine.py (mg.grad, create_graph with the rest of the engine, PyTorch).
"""

from __future__ import annotations

import inspect
import operator

import numpy as np
import pytest
from helpers import op_settings
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.functional as F
from minigrad import fused, ops
from minigrad.core.autograd import topological_order
from minigrad.testing import strategies as S


def check_double_backward(op, fn, arrays, device):
    """fn uses `op`; the recorded gradients equal the ordinary ones; gradgradcheck passes (the module docstring)."""
    xs = [mg.tensor(a, dtype=np.float64, device=device, requires_grad=True) for a in arrays]
    out = fn(*xs)
    assert any(isinstance(t.grad_fn, op) for t in topological_order(out)), f"the case does not use {op.__name__}"
    v = mg.tensor(np.random.default_rng(2).standard_normal(out.shape), dtype=np.float64, device=device)
    plain = mg.grad(out, xs, v, allow_unused=True)
    recorded = mg.grad(fn(*xs), xs, v, create_graph=True, allow_unused=True)
    for i, (g, r) in enumerate(zip(plain, recorded)):
        if g is None:
            assert r is None, f"input {i}: create_graph found a gradient the ordinary backward did not"
            continue
        assert (r.shape, r.dtype, r.device) == (g.shape, g.dtype, g.device), f"input {i}'s recorded gradient"
        np.testing.assert_allclose(r.numpy(), g.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=f"create_graph changed the gradient of input {i}")
    assert mg.gradgradcheck(fn, xs)


def shapes(**kwargs):
    """Smaller shapes than the first-derivative tests draw (sides of at most 2): gradgradcheck perturbs every
    element of the inputs and of the upstream gradient, each time running a forward and a backward."""
    return S.shapes(**{"max_side": 2, **kwargs})


def unary(fn, values=S.floats):
    return lambda data: (fn, [data.draw(values(data.draw(shapes())))])


def binary(fn, a_values=S.floats, b_values=S.floats):
    def draw(data):
        shape_a, shape_b = data.draw(S.broadcastable_shapes(2, max_side=2))
        return fn, [data.draw(a_values(shape_a)), data.draw(b_values(shape_b))]
    return draw


def away_from(*points, gap=0.1):
    return lambda shape: S.floats(shape, avoid=points, gap=gap)


def positive(shape):
    return S.positive_floats(shape, low=0.3)


def reduction(method, values=S.floats, unbiased=False):
    """x.method(dim, keepdim) over drawn dims (each slice with two elements or more when `unbiased`)."""
    def draw(data):
        x = data.draw(values(data.draw(shapes(min_dims=int(unbiased), min_side=1 + unbiased))))
        dim, keepdim = data.draw(S.axes(x.ndim)), data.draw(S.keepdims)
        return (lambda t: getattr(t, method)(dim, keepdim=keepdim)), [x]
    return draw


def power_scalar(data):
    exponent = data.draw(st.sampled_from([2, 3, -1, 0.5, 0]))
    values = S.floats if exponent in (2, 3, 0) else positive
    return (lambda t: t**exponent), [data.draw(values(data.draw(shapes())))]


def maximum_or_minimum(name):
    def draw(data):
        shape_a, shape_b = data.draw(S.broadcastable_shapes(2, max_side=2))
        a, b = data.draw(S.floats(shape_a, avoid=(0,), gap=0.2)), data.draw(S.floats(shape_b, -0.1, 0.1))  # no ties
        return (lambda x, y: getattr(x, name)(y) * x), [a, b]
    return draw


def clamp(data):
    x = data.draw(S.floats(shapes(), avoid=(-1.0, 1.0), gap=0.3))
    low, high = data.draw(S.floats((), -1.1, -0.9)), data.draw(S.floats((), 0.9, 1.1))  # no ties with x
    return (lambda t, lo, hi: t.clamp(lo, hi) * t), [x, low, high]


def masked_fill(data):
    x = data.draw(S.floats(shapes(min_dims=1)))
    mask = data.draw(S.masks(S.shapes_broadcasting_to(x.shape)))
    return (lambda t: t.masked_fill(mask, -1.5) * t), [x]


def where(data):
    shape_c, shape_a, shape_b = data.draw(S.broadcastable_shapes(3, max_side=2))
    cond = data.draw(S.masks(shape_c))
    return (lambda a, b: mg.where(cond, a * b, b)), [data.draw(S.floats(shape_a)), data.draw(S.floats(shape_b))]


def cast(data):  # float64 to float64: a float32 round trip would be too coarse for finite differences
    return (lambda t: ops.elementwise.Cast.apply(t, dtype=np.dtype(np.float64)) * t), [data.draw(S.floats(shapes()))]


def to_device(data):
    def fn(t):
        other = "strict" if t.device == "cpu" else "cpu"
        return (t.to(other) * t.to(other)).to(t.device)
    return fn, [data.draw(S.floats(shapes()))]


def take_along_dim(data):
    x = data.draw(S.distinct_floats(data.draw(shapes(min_dims=1))))
    dim, keepdim = data.draw(st.integers(-x.ndim, x.ndim - 1)), data.draw(S.keepdims)
    return (lambda t: t.max(dim, keepdim).values ** 2), [x]


def prod(data):
    x = data.draw(S.floats(data.draw(shapes())))
    dim = None if x.ndim == 0 or data.draw(st.booleans()) else data.draw(st.integers(-x.ndim, x.ndim - 1))
    keepdim = data.draw(S.keepdims)
    return (lambda t: t.prod(dim, keepdim=keepdim)), [x]


def cumsum(data):
    x = data.draw(S.floats(data.draw(shapes(min_dims=1))))
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    return (lambda t: t.cumsum(dim) * t), [x]


def norm(data):
    p = data.draw(st.sampled_from([1, 2, 3, float("inf")]))
    shape = data.draw(shapes())
    if p == float("inf"):  # distinct magnitudes: no ties for the largest
        magnitudes = data.draw(S.distinct_floats(shape))
        x = (magnitudes - magnitudes.min() + 0.5) * data.draw(S.floats(shape).map(np.sign).map(lambda a: a + (a == 0)))
    else:
        x = data.draw(S.floats(shape, avoid=(0,), gap=0.2))
    dim, keepdim = data.draw(S.axes(x.ndim)), data.draw(S.keepdims)
    return (lambda t: t.norm(p, dim, keepdim)), [x]


def reshape(data):
    x = data.draw(S.floats(shapes()))
    return (lambda t: t.reshape(-1) * t.reshape(-1)), [x]


def permute(data):
    x = data.draw(S.floats(shapes()))
    dims = data.draw(st.permutations(range(x.ndim)))
    return (lambda t: t.permute(*dims) ** 2), [x]


def expand(data):
    x = data.draw(S.floats(shapes(max_dims=3, max_side=2)))
    sizes = [2, *(2 if n == 1 else n for n in x.shape)]
    return (lambda t: t.expand(*sizes) ** 2), [x]


def repeat(data):
    x = data.draw(S.floats(shapes(max_dims=2, max_side=2)))
    repeats = [data.draw(st.integers(1, 2)) for _ in range(x.ndim + data.draw(st.integers(0, 1)))]
    return (lambda t: t.repeat(*repeats) ** 2), [x]


def flip(data):
    x = data.draw(S.floats(shapes(min_dims=1)))
    dims = data.draw(st.lists(st.integers(0, x.ndim - 1), min_size=1, unique=True))
    return (lambda t: t.flip(dims) * t), [x]


def triangle(method):
    def draw(data):
        x = data.draw(S.floats(shapes(min_dims=2)))
        diagonal = data.draw(st.integers(-2, 2))
        return (lambda t: getattr(t, method)(diagonal) * t), [x]
    return draw


def concat(data):
    x = data.draw(S.floats(shapes(min_dims=1, max_side=2)))
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    y_shape = tuple(data.draw(st.integers(1, 2)) if d == dim % x.ndim else n for d, n in enumerate(x.shape))
    y = data.draw(S.floats(y_shape))
    return (lambda a, b: mg.concat([a * b.sum(), b, a], dim)), [x, y]


def stack(data):
    shape = data.draw(shapes(max_side=2))
    dim = data.draw(st.integers(-len(shape) - 1, len(shape)))
    return (lambda a, b: mg.stack([a * b, b], dim)), [data.draw(S.floats(shape)), data.draw(S.floats(shape))]


def clone(data):
    return (lambda t: t.clone() * t), [data.draw(S.floats(shapes()))]


def get_item(data):
    x = data.draw(S.floats(shapes(min_dims=1)))
    index = (data.draw(S.integer_ids((3,), x.shape[0])), Ellipsis)  # repeats are likely: gradients add up
    return (lambda t: t[index] ** 2), [x]


def set_item(data):
    x = data.draw(S.floats(shapes(min_dims=1)))
    # Distinct rows: a row written twice holds one value, yet PyTorch (and minigrad) send gy to both writes.
    rows = data.draw(st.lists(st.integers(0, x.shape[0] - 1), min_size=1, max_size=2, unique=True))
    value = data.draw(S.floats(x.shape[1:]))  # broadcast over the rows written

    def fn(a, b):
        y = a * 1.0  # a non-leaf: x[...] = ... on a leaf that requires grad is refused, as in PyTorch
        y[rows] = b
        return y**2
    return fn, [x, value]


def gather(data):
    x = data.draw(S.floats(shapes(min_dims=1)))
    dim = data.draw(st.integers(0, x.ndim - 1))
    index = data.draw(S.integer_ids(x.shape, x.shape[dim]))
    return (lambda t: t.gather(dim, index) ** 2), [x]


def distinct_index(data, shape, dim):
    """An int64 index for scatter along `dim` into `shape`: no position named twice (each column a part of a
    permutation), so that every written element counts; its size along dim may be smaller than the target's."""
    size = data.draw(st.integers(1, shape[dim]))
    keys = data.draw(S.distinct_floats(shape))
    order = np.argsort(keys, axis=dim, kind="stable")
    return np.take(order, np.arange(size), axis=dim)


def scatter(op):
    def case(data):
        x = data.draw(S.floats(data.draw(shapes(min_dims=1))))
        dim = data.draw(st.integers(0, x.ndim - 1))
        index = distinct_index(data, x.shape, dim)
        src = data.draw(S.floats(index.shape))
        return (lambda t, s: getattr(t, op)(dim, index, s) ** 2), [x, src]
    return case


def cumprod(data):
    x = data.draw(S.floats(data.draw(shapes(min_dims=1))))
    dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
    return (lambda t: t.cumprod(dim) * t), [x]


def einsum(data):
    equation = data.draw(st.sampled_from(["bij,bjk->bik", "bhqd,bhkd->bhqk", "...ij->...ji", "ij,j->i", "ij->"]))
    sizes = {c: data.draw(st.integers(1, 2)) for c in "bhijkqd"}
    batch = data.draw(shapes(max_dims=2))
    arrays = [data.draw(S.floats(batch + tuple(sizes[c] for c in sub.replace("...", ""))
                                 if "..." in sub else tuple(sizes[c] for c in sub)))
              for sub in equation.split("->")[0].split(",")]
    return (lambda *ts: mg.einsum(equation, *ts) ** 2), arrays


def matmul(data):
    m, k, n = (data.draw(st.integers(1, 3)) for _ in range(3))
    batch_a, batch_b = data.draw(S.broadcastable_shapes(2, max_dims=2, max_side=2))
    a_shape = data.draw(st.sampled_from([(k,), (m, k), (*batch_a, m, k)]))
    b_shape = data.draw(st.sampled_from([(k,), (k, n), (*batch_b, k, n)]))
    return operator.matmul, [data.draw(S.floats(a_shape)), data.draw(S.floats(b_shape))]


def linear(data):
    n_in, n_out = data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))
    batch = data.draw(st.sampled_from([(), (2,), (2, 2)]))
    arrays = [data.draw(S.floats((*batch, n_in))), data.draw(S.floats((n_out, n_in)))]
    if data.draw(st.booleans()):
        arrays.append(data.draw(S.floats((n_out,))))
    return (lambda *xwb: F.linear(*xwb) ** 2), arrays


def softmax(method):
    def draw(data):
        x = data.draw(S.floats(shapes(min_dims=1)))
        dim = data.draw(st.integers(-x.ndim, x.ndim - 1))
        return (lambda t: getattr(t, method)(dim)), [x]
    return draw


def layer_norm(data):
    shape = data.draw(shapes(min_dims=1, max_dims=3).filter(lambda s: s[-1] >= 2))
    x = data.draw(S.distinct_floats(shape))  # spread-out rows: variance well above eps
    params = [data.draw(S.floats(shape[-1:])) for _ in range(data.draw(st.integers(0, 2)))]
    return (lambda a, *wb: F.layer_norm(a, a.shape[-1:], *wb)), [x, *params]


def embedding(data):
    weight = data.draw(S.floats((data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3)))))
    ids = data.draw(S.integer_ids(shapes(max_dims=2), weight.shape[0]))
    return (lambda w: F.embedding(ids, w) ** 2), [weight]


def dropout(data):  # the op itself, with a fixed mask: F.dropout draws a new one on every call
    x = data.draw(S.floats(shapes()))
    keep = data.draw(S.masks(x.shape)).astype(np.float64) * 2.0
    return (lambda t: fused.dropout.Dropout.apply(t, keep=mg.tensor(keep, device=t.device).array) ** 2), [x]


def attention(data):
    kind = data.draw(st.sampled_from(["plain", "causal", "boolean mask", "additive mask", "dropout"]))
    q, k, v, mask = data.draw(S.attention_inputs("plain" if kind == "dropout" else kind))
    if kind == "dropout":  # the op itself, with a fixed mask over the probabilities
        keep = data.draw(S.masks((*q.shape[:-1], k.shape[-2]))).astype(np.float64) * 2.0
        return (lambda *qkv: fused.attention.ScaledDotProductAttention.apply(
            *qkv, is_causal=False, mask=None, scale=0.7, keep=mg.tensor(keep, device=qkv[0].device).array)), [q, k, v]
    return (lambda *qkv: F.scaled_dot_product_attention(*qkv, attn_mask=mask, is_causal=kind == "causal")), [q, k, v]


def cross_entropy(data):
    logits, targets = data.draw(S.logits_and_targets())
    reduction = data.draw(st.sampled_from(["mean", "sum", "none"]))
    smoothing = data.draw(st.sampled_from([0.0, 0.2]))
    weight = np.linspace(0.5, 2.0, logits.shape[1]) if data.draw(st.booleans()) else None

    def fn(z):
        w = None if weight is None else mg.tensor(weight, dtype="float64", device=z.device)
        return F.cross_entropy(z, targets, w, reduction=reduction, label_smoothing=smoothing)
    return fn, [logits]


def nll_loss(data):
    log_probs, targets = data.draw(S.logits_and_targets())
    return (lambda x: F.nll_loss(x * x, targets)), [log_probs]


def binary_cross_entropy(data):
    shape = data.draw(shapes())
    p, t = data.draw(S.floats(shape, 0.05, 0.95)), data.draw(S.floats(shape, 0.0, 1.0))
    return (lambda a, b: F.binary_cross_entropy(a, b, reduction="sum")), [p, t]


E, A, R, SH, I, L, SC = ops.elementwise, ops.activations, ops.reduce, ops.shape, ops.indexing, ops.linalg, ops.scatter
SM, LN, GE, EM, DR, AT, LO = (fused.softmax, fused.layer_norm, fused.gelu, fused.embedding, fused.dropout,
                              fused.attention, fused.cross_entropy)
CASES = {
    E.Add: binary(lambda a, b: (a + b) * a), E.Sub: binary(lambda a, b: (a - b) * b), E.Mul: binary(operator.mul),
    E.Div: binary(operator.truediv, b_values=away_from(0, gap=0.3)), E.Neg: unary(lambda t: -t * t),
    E.PowScalar: power_scalar,  # (exponent 0 is special-cased, as in PyTorch: d/db of the base's gradient is 0 there)
    E.Pow: binary(operator.pow, lambda s: S.positive_floats(s, 0.5, 2.0), lambda s: S.floats(s, -2, 2, avoid=(0,))),
    E.Exp: unary(lambda t: t.exp()), E.Log: unary(lambda t: t.log(), positive),
    E.Sqrt: unary(lambda t: t.sqrt(), positive), E.Rsqrt: unary(lambda t: t.rsqrt(), positive),
    E.Square: unary(lambda t: t.square()), E.Abs: unary(lambda t: t.abs() * t, away_from(0)),
    E.Sign: unary(lambda t: t.sign() * t, away_from(0)), E.Sin: unary(lambda t: t.sin()),
    E.Cos: unary(lambda t: t.cos()), E.Erf: unary(lambda t: t.erf()),
    E.Maximum: maximum_or_minimum("maximum"), E.Minimum: maximum_or_minimum("minimum"), E.Clamp: clamp,
    E.MaskedFill: masked_fill, E.Where: where, E.Cast: cast,
    A.Tanh: unary(lambda t: t.tanh()), A.Sigmoid: unary(lambda t: t.sigmoid()),
    A.ReLU: unary(lambda t: t.relu() * t, away_from(0)),
    A.LeakyReLU: unary(lambda t: F.leaky_relu(t, 0.2) * t, away_from(0)),
    A.ELU: unary(lambda t: F.elu(t, 1.5), away_from(0)), A.SiLU: unary(F.silu),
    A.Softplus: unary(lambda t: F.softplus(t, beta=2, threshold=1) + F.softplus(t), away_from(0.5)),
    GE.GELU: unary(F.gelu), GE.GELUTanh: unary(lambda t: F.gelu(t, approximate="tanh")),
    R.Sum: reduction("sum"), R.Mean: reduction("mean"), R.Amax: reduction("amax", S.distinct_floats),
    R.TakeAlongDim: take_along_dim, R.Var: reduction("var", unbiased=True),
    R.Std: reduction("std", S.distinct_floats, unbiased=True), R.Prod: prod, R.CumSum: cumsum,
    R.LogSumExp: reduction("logsumexp"), R.Norm: norm,
    SH.Reshape: reshape, SH.Permute: permute, SH.Expand: expand, SH.Repeat: repeat, SH.Flip: flip,
    SH.Tril: triangle("tril"), SH.Triu: triangle("triu"), SH.Concat: concat, SH.Stack: stack, SH.Clone: clone,
    SH.ToDevice: to_device, I.GetItem: get_item, I.SetItem: set_item, I.Gather: gather, L.MatMul: matmul,
    L.Linear: linear, SC.Scatter: scatter("scatter"), SC.ScatterAdd: scatter("scatter_add"), R.CumProd: cumprod,
    L.Einsum: einsum,
    SM.Softmax: softmax("softmax"), SM.LogSoftmax: softmax("log_softmax"), LN.LayerNorm: layer_norm,
    EM.Embedding: embedding, DR.Dropout: dropout, AT.ScaledDotProductAttention: attention,
    LO.CrossEntropy: cross_entropy, LO.NLLLoss: nll_loss, LO.BinaryCrossEntropy: binary_cross_entropy,
}


def op_classes():
    """Every Function subclass defined in minigrad/ops/ and minigrad/fused/."""
    return sorted({cls for package in (ops, fused) for module in vars(package).values() if inspect.ismodule(module)
                   for cls in vars(module).values()
                   if inspect.isclass(cls) and issubclass(cls, mg.Function) and cls.__module__ == module.__name__},
                  key=lambda cls: cls.__qualname__)


def test_every_op_class_has_a_case():
    missing = [cls.__name__ for cls in op_classes() if cls not in CASES]
    assert not missing, f"op classes without a double-backward case in this file: {missing}"
    assert len(op_classes()) == len(CASES) > 60
    undeclared = [cls.__name__ for cls in op_classes() if cls.double_backward is None]
    assert not undeclared, f"op classes that declare no double_backward (higher_order.py): {undeclared}"
    composed = [cls.__name__ for cls in op_classes() if cls.double_backward == "composed"
                and not hasattr(cls, "composed")]
    assert not composed, f"op classes declared composed without a composed method: {composed}"


@pytest.mark.parametrize("op", list(CASES), ids=lambda cls: cls.__name__)
@op_settings
@given(data=st.data())
def test_double_backward(op, device, data):
    fn, arrays = CASES[op](data)
    check_double_backward(op, fn, arrays, device)
