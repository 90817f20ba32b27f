"""The edges tinygrad's op tests do not reach, through the same helper: integer and boolean inputs, nan and
infinities in every elementwise function and reduction, float16, and dtype= arguments. Each case found a
defect or guards one (see the commit log); the few places where minigrad still differs on purpose, or at
nan and infinity only, are written down beside their cases.

Read next: test_torch_ops_port.py for the cases tinygrad has, and tests/op_port_helper.py for the checks.
"""

import math
from typing import Any

import numpy as np
import pytest
from op_port_helper import (
    PORT_MARKS,
    Case,
    dtype_params,
    helper_test_exception,
    helper_test_op,
    lib_op,
    op,
    refuse,
    torch,
)

INF, NAN = math.inf, math.nan

pytestmark = [
    *PORT_MARKS,
    pytest.mark.filterwarnings("ignore:.*deprecated:UserWarning"),  # x.T of a 0-d or 1-d tensor, in both
    pytest.mark.filterwarnings("ignore:Using a target size:UserWarning"),  # mse_loss broadcasting, in PyTorch
]


def dtype_arg(lib: Any, name: str) -> Any:
    """A dtype= argument in the library's spelling: torch.float64, or NumPy's float64 for minigrad."""
    return getattr(torch, name) if lib is torch else np.dtype(name)


# ---------------------------------------------------------------------------------------------------------
# Integer and boolean inputs: PyTorch's result dtypes (forward only: no gradient flows through them).
INTEGER_INPUTS = {"bool": [True, False, True], "int64": [-2, 0, 3], "int32": np.array([-2, 0, 3], np.int32)}
INTEGER_FUNCTIONS = {
    "exp": lambda x: x.exp(), "sqrt": lambda x: x.sqrt(), "sigmoid": lambda x: x.sigmoid(), "abs": lambda x: x.abs(),
    "square": lambda x: x.square(), "sign": lambda x: x.sign(), "sum": lambda x: x.sum(), "max": lambda x: x.max(),
    "cumsum": lambda x: x.cumsum(0), "prod": lambda x: x.prod(), "pow_2": lambda x: x**2, "pow_half": lambda x: x**0.5,
    "div": lambda x: x / 2, "mul_float": lambda x: x * 2.5, "add_int": lambda x: x + 1, "gt_float": lambda x: x > 1.5,
    "clamp": lambda x: x.clamp(0, 1), "clamp_float": lambda x: x.clamp(0.5, 2.5), "flip": lambda x: x.flip(0),
    "maximum": lambda x: x.maximum(x), "float_mean": lambda x: x.float().mean(),
}
NOT_FOR_BOOL = {"abs"}  # PyTorch refuses abs of booleans; minigrad allows it
INTEGERS = [op(f"{name}_{kind}", None, fn, vals=[values])
            for name, fn in INTEGER_FUNCTIONS.items() for kind, values in INTEGER_INPUTS.items()
            if not (kind == "bool" and name in NOT_FOR_BOOL)]
INTEGERS += [
    op("uint8_wraps", None, lambda x: x + 300, vals=[np.array([1, 2], np.uint8)]),
    op("int_matmul", None, lambda x, y: x @ y, vals=[[[1, 2], [3, 4]], [[1, 0], [0, 1]]]),
    op("int_div_int", None, lambda x, y: x / y, vals=[[1, 2, 3], [2, 2, 2]]),
    op("int_max_dim", None, lambda x: x.max(0).values, vals=[[[1, 5], [3, 2]]]),
    lib_op("where_int_and_float", None, lambda lib, F, c, a, b: lib.where(c, a, b),
           vals=[[True, False], [1, 2], [0.5, 1.5]]),
    lib_op("where_int_and_number", None, lambda lib, F, c, a: lib.where(c, a, 1.5), vals=[[True, False], [1, 2]]),
    lib_op("sum_int_as_float32", None, lambda lib, F, x: x.sum(dtype=dtype_arg(lib, "float32")), vals=[[1, 2, 3]]),
    lib_op("cumsum_int_as_float32", None, lambda lib, F, x: x.cumsum(0, dtype=dtype_arg(lib, "float32")),
           vals=[[1, 2, 3]]),
    lib_op("prod_int_as_float64", None, lambda lib, F, x: x.prod(dtype=dtype_arg(lib, "float64")), vals=[[1, 2, 3]]),
]

# ---------------------------------------------------------------------------------------------------------
# nan and infinities, through every elementwise function and reduction, forward and backward.
SPECIAL_VALUES = {"mixed": [-INF, -1.0, 0.0, 1.0, INF, NAN], "inf": [INF, 1.0], "neg_inf": [-INF, -INF],
                  "nan": [NAN, 1.0]}
SPECIAL_FUNCTIONS = {
    "sigmoid": lambda lib, F, x: x.sigmoid(), "tanh": lambda lib, F, x: x.tanh(),
    "softplus": lambda lib, F, x: F.softplus(x),
    "gelu": lambda lib, F, x: F.gelu(x), "gelu_tanh": lambda lib, F, x: F.gelu(x, approximate="tanh"),
    "silu": lambda lib, F, x: F.silu(x), "erf": lambda lib, F, x: x.erf(), "elu": lambda lib, F, x: F.elu(x),
    "leaky_relu": lambda lib, F, x: F.leaky_relu(x), "relu": lambda lib, F, x: x.relu(),
    "abs": lambda lib, F, x: x.abs(),
    "exp": lambda lib, F, x: x.exp(), "log": lambda lib, F, x: x.log(), "sqrt": lambda lib, F, x: x.sqrt(),
    "rsqrt": lambda lib, F, x: x.rsqrt(), "reciprocal": lambda lib, F, x: 1 / x, "square": lambda lib, F, x: x.square(),
    "sin": lambda lib, F, x: x.sin(), "sign": lambda lib, F, x: x.sign(), "clamp": lambda lib, F, x: x.clamp(-0.5, 0.5),
    "pow_2": lambda lib, F, x: x**2, "pow_half": lambda lib, F, x: x**0.5, "pow_neg_1": lambda lib, F, x: x**-1,
    "rpow": lambda lib, F, x: 2.0**x, "max": lambda lib, F, x: x.max(), "amax": lambda lib, F, x: x.amax(0),
    "min": lambda lib, F, x: x.min(), "sum": lambda lib, F, x: x.sum(), "mean": lambda lib, F, x: x.mean(),
    "var": lambda lib, F, x: x.var(), "std": lambda lib, F, x: x.std(), "norm": lambda lib, F, x: x.norm(),
    "norm_1": lambda lib, F, x: x.norm(p=1), "norm_inf": lambda lib, F, x: x.norm(p=INF),
    "prod": lambda lib, F, x: x.prod(), "cumsum": lambda lib, F, x: x.cumsum(0),
    "logsumexp": lambda lib, F, x: x.logsumexp(0), "softmax": lambda lib, F, x: x.softmax(0),
    "log_softmax": lambda lib, F, x: x.log_softmax(0), "normalize": lambda lib, F, x: F.normalize(x, dim=0),
    "maximum": lambda lib, F, x: lib.maximum(x, lib.zeros_like(x)), "where": lambda lib, F, x: lib.where(x > 0, x, 0.0),
}
# Gradients that still differ, at infinities and nan only: PyTorch's come from its formulas' 0 * inf there.
# pow_half at -inf: PyTorch nan, minigrad 0 (0.5 * (-inf) ** -0.5 = 0). prod with inf or nan: PyTorch's
# prod / x is nan, minigrad's product of the others is the true derivative.
GRADIENT_DIFFERS = {("pow_half", "mixed"), ("pow_half", "neg_inf"), ("prod", "inf"), ("prod", "neg_inf"),
                    ("prod", "nan")}
SPECIALS = [lib_op(f"{name}_at_{kind}", None, fn, vals=[values], forward_only=(name, kind) in GRADIENT_DIFFERS)
            for name, fn in SPECIAL_FUNCTIONS.items() for kind, values in SPECIAL_VALUES.items()]
SPECIALS += [
    # binary_cross_entropy's target gradient, log(1 - x) - log(x), uses the logs clamped at -100, as its value
    # does; PyTorch's is +-inf at x = 0 or 1. The input's gradient agrees.
    # At x = 0 or 1 the input's gradient is (x - t) / 1e-12, PyTorch's 1e-12 a float32 constant: rtol 1e-8.
    lib_op("bce_at_0_and_1", None, lambda lib, F, x, y: F.binary_cross_entropy(x, y.detach()),
           vals=[[0.0, 1.0, 0.0, 1.0, 0.5], [0.0, 0.0, 1.0, 1.0, 0.3]], grad_rtol=1e-8),
    lib_op("bce_with_logits_at_infinities", None, lambda lib, F, x, y: F.binary_cross_entropy_with_logits(x, y),
           vals=[[INF, -INF, INF, -INF, 30.0], [0.0, 0.0, 1.0, 1.0, 0.3]]),
    lib_op("cross_entropy_neg_inf_logits", None, lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 1])),
           vals=[[[0.0, -INF, 1.0], [-INF, 2.0, 0.0]]]),
    lib_op("cross_entropy_neg_inf_at_the_target", None, lambda lib, F, x: F.cross_entropy(x, lib.tensor([1, 1])),
           vals=[[[0.0, -INF, 1.0], [-INF, 2.0, 0.0]]]),
    lib_op("mse_loss_inf", None, lambda lib, F, x, y: F.mse_loss(x, y), vals=[[INF, 1.0], [1.0, 2.0]]),
    # x far from 0: both lose digits to float32's spacing at 1e4 (minigrad slightly fewer)
    lib_op("layer_norm_far_from_zero", [(4, 16)], lambda lib, F, x: F.layer_norm(x + 1e4, (16,)), atol=3e-3,
           grad_atol=3e-3),
    lib_op("log_softmax_huge", [(4, 16)], lambda lib, F, x: (x * 1e4).log_softmax(-1)),
]

# ---------------------------------------------------------------------------------------------------------
# Shapes at their edges: empty dims, 0-d tensors, single elements.
EDGES = [
    op("sum_keepdim_every_dim", [(3, 4)], lambda x: x.sum(dim=(0, 1), keepdim=True)),
    op("mean_keepdim_every_dim", [(3, 4)], lambda x: x.mean(dim=(0, 1), keepdim=True)),
    op("std_of_one_element", [(1,)], lambda x: x.std()),
    op("std_of_one_element_per_row", [(3, 1)], lambda x: x.std(1)),
    op("logsumexp_two_dims", [(3, 4, 5)], lambda x: x.logsumexp((0, 2))),
    op("norm_p3", [(3, 4)], lambda x: x.norm(p=3)),
    op("norm_p_half", [(3, 4)], lambda x: x.norm(p=0.5, dim=1), low=0.1),
    op("reshape_empty", [(0, 3)], lambda x: x.reshape(-1)),
    op("unsqueeze_0d_negative", [()], lambda x: x.unsqueeze(-1)),
    op("T_of_1d", [(3,)], lambda x: x.T),
    op("T_of_0d", [()], lambda x: x.T),
    op("transpose_a_dim_with_itself", [(3, 4)], lambda x: x.transpose(0, 0)),
    op("chunk_more_than_the_size", [(2, 3)], lambda x: x.chunk(3)),
    op("chunk_uneven", [(5,)], lambda x: x.chunk(3)),
    op("split_an_empty_section", [(5,)], lambda x: x.split([0, 5])),
    op("squeeze_a_tuple", [(1, 3, 1)], lambda x: x.squeeze((0, 1))),
    op("expand_0d_to_1", [()], lambda x: x.expand(1)),
    op("repeat_1d_into_2d", [(3,)], lambda x: x.repeat(2, 2)),
    lib_op("softmax_over_no_rows", [(0, 3)], lambda lib, F, x: F.softmax(x, -1)),
    lib_op("softmax_over_an_empty_dim", [(3, 0)], lambda lib, F, x: F.softmax(x, -1)),
    lib_op("log_softmax_over_an_empty_dim", [(3, 0)], lambda lib, F, x: F.log_softmax(x, -1)),
    lib_op("logsumexp_over_an_empty_dim", [(3, 0)], lambda lib, F, x: x.logsumexp(-1)),
    lib_op("masked_fill_with_a_0d_tensor", [(3, 4)], lambda lib, F, x: x.masked_fill(x > 0, lib.tensor(2.0))),
    lib_op("masked_fill_with_a_learned_value", [(3, 4), ()], lambda lib, F, x, v: x.masked_fill(x > 0, v)),
    lib_op("where_condition_broadcasts", [(3, 4), (3, 1)], lambda lib, F, x, c: lib.where(c > 0, x, -x)),
    lib_op("maximum_nan", None, lambda lib, F, x, y: lib.maximum(x, y), vals=[[NAN, 1.0], [0.0, NAN]]),
    lib_op("maximum_broadcast", [(3, 1), (1, 4)], lambda lib, F, x, y: lib.maximum(x, y)),
    lib_op("clamp_with_a_tensor_min", [(3, 4), (4,)], lambda lib, F, x, m: x.clamp(min=m)),
    lib_op("normalize_negative_dim", [(3, 4)], lambda lib, F, x: F.normalize(x, dim=-1)),
    lib_op("embedding_padding_idx", [(10, 4)],
           lambda lib, F, w: F.embedding(lib.tensor([[0, 2], [2, 5]]), w, padding_idx=2)),
    lib_op("cross_entropy_unbatched", [(5,)], lambda lib, F, x: F.cross_entropy(x, lib.tensor(3))),
    lib_op("nll_loss_unbatched", [(5,)], lambda lib, F, x: F.nll_loss(x, lib.tensor(3))),
    lib_op("cross_entropy_k_dim_weight_ignore", [(2, 5, 3)], lambda lib, F, x: F.cross_entropy(
        x, lib.tensor([[0, 1, -100], [4, -100, 2]]), lib.tensor([1.0, 2, 3, 4, 5], dtype=x.dtype))),
    lib_op("elu_alpha_0", [(3, 4)], lambda lib, F, x: F.elu(x, alpha=0.0)),
    lib_op("softplus_beta_50", [(3, 4)], lambda lib, F, x: F.softplus(x, beta=50)),
    lib_op("linear_1d_input", [(3,), (4, 3), (4,)], lambda lib, F, x, w, b: F.linear(x, w, b)),
    lib_op("mse_loss_broadcast", [(3, 4), (4,)], lambda lib, F, x, y: F.mse_loss(x, y)),
    lib_op("bce_with_logits_0d_pos_weight", [(3, 4), (3, 4)], lambda lib, F, x, y: F.binary_cross_entropy_with_logits(
        x, y.clip(0, 1), pos_weight=lib.tensor(2.0, dtype=x.dtype))),
    lib_op("layer_norm_big_eps", [(3, 4)], lambda lib, F, x: F.layer_norm(x, (4,), eps=10.0)),
    lib_op("layer_norm_constant_row", None, lambda lib, F, x: F.layer_norm(x, (3,)),
           vals=[[[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]]]),
    lib_op("sdpa_rows_masked_from_every_key", [(1, 3, 4)] * 3, lambda lib, F, q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=lib.tensor([[True, False, False], [False, False, False], [True, True, True]]))),
    lib_op("sdpa_causal_more_queries_than_keys", [(1, 5, 4), (1, 3, 4), (1, 3, 4)],
           lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
    lib_op("sdpa_value_width_differs", [(1, 3, 4), (1, 5, 4), (1, 5, 6)],
           lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
    lib_op("sdpa_batch_dims_broadcast", [(2, 1, 3, 4), (1, 2, 5, 4), (1, 2, 5, 4)],
           lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
    lib_op("softmax_as_float64", [(3, 4)], lambda lib, F, x: F.softmax(x, -1, dtype=dtype_arg(lib, "float64"))),
    lib_op("mean_as_float64", [(3, 4)], lambda lib, F, x: x.mean(dtype=dtype_arg(lib, "float64"))),
    op("half_and_back", [(3, 4)], lambda x: x.half().float() * 2, atol=1e-3, rtol=1e-3),
    op("index_0d_int_tensor", [(4, 5)], lambda x: x[torch.tensor(2)], lambda x: x[np.int64(2)]),
    op("index_true", [(4, 5)], lambda x: x[True]),
    op("index_false", [(4, 5)], lambda x: x[False]),
    op("index_ellipsis_alone", [(4, 5)], lambda x: x[...]),
    op("index_empty_list", [(4, 5)], lambda x: x[[]]),
    op("index_two_lists", [(4, 5)], lambda x: x[[0, 1], [2, 3]]),
    op("index_lists_around_a_slice", [(4, 5, 6)], lambda x: x[[0, 1], :, [2, 3]]),
    op("index_bool_list", [(4, 5)], lambda x: x[[True, False, True, False]]),
    op("index_mask_selecting_nothing", [(4, 5)], lambda x: x[x > 100]),
    op("index_negative_list", [(4, 5)], lambda x: x[[-1, -4]]),
    op("index_0d_with_none_and_ellipsis", [()], lambda x: x[None, ...]),
]
FLOAT16 = [  # float16 data, whatever the case's dtype: half precision tolerances
    lib_op(name, None, fn, vals=[np.asarray(values, np.float16)], atol=1e-2, rtol=1e-2, forward_only=True)
    for name, fn, values in [
        ("half_exp_sum", lambda lib, F, x: (x * 2 + 1).exp().sum(), [0.1, 0.2]),
        ("half_matmul", lambda lib, F, x: x @ x, np.eye(3)),
        ("half_softmax", lambda lib, F, x: x.softmax(-1), [0.1, 0.2, 3.0]),
        ("half_layer_norm_whose_variance_overflows", lambda lib, F, x: F.layer_norm(x, (3,)), [[100.0, 200.0, 300.0]]),
        ("half_sum", lambda lib, F, x: x.sum(), np.ones(5000)),
        ("half_mean", lambda lib, F, x: x.mean(), np.full(5000, 10.0)),
        ("half_cross_entropy", lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 1])), [[1.0, 2.0], [3.0, 1.0]]),
    ]
]

@pytest.mark.parametrize("case, dtype", dtype_params(INTEGERS + SPECIALS + EDGES + FLOAT16))
def test_op(case: Case, dtype: Any, device: str) -> None:
    helper_test_op(case.shapes, *case.functions(device), dtype=dtype, device=device, **case.options)


# ---------------------------------------------------------------------------------------------------------
# Where minigrad refuses on purpose what PyTorch accepts, each with a one-line error.
REFUSED = [
    refuse("norm_p0", [(3, 4)], lambda lib, F, x: x.norm(p=0, dim=1), NotImplementedError, "norm: p=0",
           torch_refuses=False),
    refuse("norm_neg_inf", [(3, 4)], lambda lib, F, x: x.norm(p=-INF, dim=1), NotImplementedError, "norm: p=-inf",
           torch_refuses=False),
    refuse("softmax_without_dim", [(3, 4)], lambda lib, F, x: F.softmax(x), TypeError, "softmax: pass dim",
           torch_refuses=False),
    refuse("dropout_p_1", [(3, 4)], lambda lib, F, x: F.dropout(x, p=1.0), ValueError, "dropout: p must be in",
           torch_refuses=False),
    refuse("linear_1d_weight", [(2, 3), (3,)], lambda lib, F, x, w: F.linear(x, w), ValueError, "linear: weight",
           torch_refuses=False),
    refuse("index_list_of_lists", [(4, 5)], lambda lib, F, x: x[[[0, 1], [2, 3]]], IndexError, "ambiguous",
           torch_refuses=False),
    refuse("int_to_negative_int_tensor_powers", None, lambda lib, F, x: 2**x, ValueError, "negative integer powers",
           vals=[[-2, 0, 3]], torch_refuses=False),
    refuse("several_ellipses", [(4, 3)], lambda lib, F, x: x[..., ...], IndexError, "ellipsis", torch_refuses=False),
]


@pytest.mark.parametrize("case", REFUSED, ids=[case.name for case in REFUSED])
def test_refused(case: Case, device: str) -> None:
    helper_test_exception(case.shapes, *case.functions(device), device=device, **case.options)
