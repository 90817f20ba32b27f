"""tinygrad's op tests (`test/test_ops.py`), ported: each case runs on minigrad and on PyTorch and must agree.

Every case is one call of `helper_test_op` (tests/op_port_helper.py): the inputs' shapes (or values) and the
function, written once when both libraries spell it the same (`op`), once against the library when only the
namespace differs (`lib_op`: `lib` is torch or minigrad, `F` its functional module), or twice when they differ.
Cases keep tinygrad's names, shapes and values where minigrad has the op, and follow its file's order; pooling,
convolution, padding, sorting and the ops minigrad lacks are left out. Each case runs in float32 and float64
(one whose inputs hold no float runs once, as `nofloat`) on every device of the `device` fixture. `REFUSED`
lists inputs both libraries refuse, and `WRONG` checks that the helper notices each kind of disagreement.

Read next: tests/op_port_helper.py for what one case checks.
"""

import math
from collections.abc import Callable
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

import minigrad as mg

INF, NAN = math.inf, math.nan

pytestmark = PORT_MARKS


# ---------------------------------------------------------------------------------------------------------
# Factories (test_zeros ... test_linspace): no inputs, forward only.
FACTORIES = [
    lib_op("zeros", [], lambda lib, F: lib.zeros(45, 65)),
    lib_op("zeros_0d", [], lambda lib, F: lib.zeros(())),
    lib_op("ones", [], lambda lib, F: lib.ones((45, 65))),
    lib_op("full", [], lambda lib, F: lib.full((45, 65), 4)),
    lib_op("full_float", [], lambda lib, F: lib.full((4, 5), 2.5)),
    lib_op("full_like_int", [], lambda lib, F: lib.full_like(lib.tensor([[1, 2, 3], [4, 5, 6]]), 4)),
    lib_op("zeros_like_int", [], lambda lib, F: lib.zeros_like(lib.tensor([[1, 2, 3], [4, 5, 6]]))),
    lib_op("ones_like_float", [], lambda lib, F: lib.ones_like(lib.tensor([[1.0, 2.0, 3.0]]))),
    lib_op("eye_10", [], lambda lib, F: lib.eye(10)),
    lib_op("eye_3x5", [], lambda lib, F: lib.eye(3, 5)),
    lib_op("eye_5x3", [], lambda lib, F: lib.eye(5, 3)),
    lib_op("eye_0", [], lambda lib, F: lib.eye(0)),
    lib_op("arange_10", [], lambda lib, F: lib.arange(10)),
    lib_op("arange_5_10_3", [], lambda lib, F: lib.arange(5, 10, 3)),
    lib_op("arange_10_5_neg3", [], lambda lib, F: lib.arange(10, 5, -3)),
    lib_op("arange_1_78_2", [], lambda lib, F: lib.arange(1, 78, 2)),
    lib_op("arange_float", [], lambda lib, F: lib.arange(5.5, 175.5, 2.5)),
    lib_op("arange_float_neg", [], lambda lib, F: lib.arange(-30.2, -0.3, 0.75)),
    lib_op("arange_float_neg_step", [], lambda lib, F: lib.arange(-50.3, -380.2, -2.25)),
    lib_op("linspace_5_10_3", [], lambda lib, F: lib.linspace(5, 10, 3)),
    lib_op("linspace_1_step", [], lambda lib, F: lib.linspace(5, 10, 1)),
    lib_op("linspace_0_steps", [], lambda lib, F: lib.linspace(5, 10, 0)),
    lib_op("linspace_30", [], lambda lib, F: lib.linspace(5, 10, 30)),
    lib_op("linspace_descending", [], lambda lib, F: lib.linspace(5.5, -5.5, 10)),
]

# ---------------------------------------------------------------------------------------------------------
# Arithmetic (test_add ... test_pow_zero_const, test_broadcast_full, test_topo_sort).
SQ = [(45, 65)]  # tinygrad's usual elementwise shape
ARITHMETIC = [
    op("add", [(45, 68), (45, 68)], lambda x, y: x + y),
    op("add_0d", [(), ()], lambda x, y: x + y),
    op("add3", SQ * 3, lambda x, y, z: x + y + z),
    op("broadcasted_add_column", [(45, 65), (45, 1)], lambda x, y: x + y),
    op("broadcasted_add_0d", [(45, 65), ()], lambda x, y: x + y),
    op("broadcasted_add_row", [(45, 65), (65,)], lambda x, y: x + y),
    op("sub", SQ * 2, lambda x, y: x - y),
    op("sub_0d", [(), ()], lambda x, y: x - y),
    op("scalar_sub", SQ, lambda x: x - 2),
    op("scalar_rsub", SQ, lambda x: 2 - x),
    op("scalar_rsub_0d", [()], lambda x: 2 - x),
    op("neg", SQ, lambda x: -x),
    op("neg_0d", [()], lambda x: -x),
    op("mul", [(64, 64), (64, 64)], lambda x, y: x * y),
    op("mul_0d", [(), ()], lambda x, y: x * y),
    op("scalar_mul", SQ, lambda x: x * 2),
    op("scalar_mul_neg", SQ, lambda x: x * -1),
    op("scalar_rmul", SQ, lambda x: 255 * x),
    op("scalar_mul_0d", [()], lambda x: 2 * x),
    op("div", SQ * 2, lambda x, y: x / y, low=0.5, high=2.0, atol=1e-4),
    op("div_0d", [(), ()], lambda x, y: x / y),
    op("scalar_div", SQ, lambda x: x / 255),
    op("scalar_div_1", SQ, lambda x: x / 1),
    op("scalar_rdiv", SQ, lambda x: 2 / x, low=0.5, high=2.0),
    op("scalar_rdiv_0d", [()], lambda x: 2 / x),
    op("broadcast_simple_div", [(45, 65), (45, 1)], lambda x, y: x / y, low=0.5, high=2.0),
    op("mul_inf", SQ, lambda x: x * INF),
    op("mul_neg_inf", SQ, lambda x: x * -INF),
    op("mul_nan", SQ, lambda x: x * NAN),
    op("div_inf", SQ, lambda x: x / INF),
    op("div_nan", SQ, lambda x: x / NAN),
    op("inf_div", SQ, lambda x: INF / x),
    op("neg_inf_div", SQ, lambda x: (-INF) / x),
    op("nan_div", SQ, lambda x: NAN / x),
    op("pow_full", SQ * 2, lambda x, y: x**y),
    op("pow_full_positive_base", SQ * 2, lambda x, y: x**y, low=0.5, high=2.0),
    op("pow_0", SQ, lambda x: x**0),
    op("pow_1", SQ, lambda x: x**1),
    op("pow_2", SQ, lambda x: x**2),
    op("pow_3", SQ, lambda x: x**3),
    op("pow_neg_2", SQ, lambda x: x**-2, low=0.5, high=2.0),
    op("pow_2_0d", [()], lambda x: x**2),
    op("pow_3_negative_base", SQ, lambda x: x**3, low=-30, high=-27),
    op("pow_0_2_negative_base", SQ, lambda x: x**0.2, low=-30, high=-27),
    op("pow_1_2_negative_base", SQ, lambda x: x**1.2, low=-30, high=-27),
    op("pow_1_1_at_0", None, lambda x: x**1.1, vals=[[0.0]]),
    op("pow_const_0_0", SQ, lambda x: x**0.0),
    op("pow_const_neg_1_0", SQ, lambda x: x**-1.0, low=0.5, high=2.0),
    op("pow_const_8_0", SQ, lambda x: x**8.0),
    op("pow_const_5_5", SQ, lambda x: x**5.5),
    op("pow_const_neg_5_5", SQ, lambda x: x**-5.5, low=0.5, high=2.0),
    op("rpow_1_0", SQ, lambda x: 1.0**x),
    op("rpow_5_5", SQ, lambda x: 5.5**x),
    op("rpow_neg_5_5", SQ, lambda x: (-5.5) ** x),
    op("rpow_2_0_0d", [()], lambda x: 2.0**x),
    op("rpow_0", None, lambda x: 0**x, vals=[[-2.0, -1, 0, 1, 2, 3]]),
    op("rpow_0_7", None, lambda x: 0.7**x, vals=[[-2.0, -1, 0, 1, 2, 3]]),
    op("rpow_neg_2", None, lambda x: (-2) ** x, vals=[[-2.0, -1, 0, 1, 2, 3]]),
    op("rpow_float_int_exponent", None, lambda x: 0.7**x, vals=[[-2, -1, 0, 1, 2, 3]], forward_only=True),
    op("pow_zero_tensor", None, lambda x, y: x**y, vals=[[0.0], [0.0]]),
    op("pow_zero_tensor_positive", None, lambda x, y: x**y, vals=[[0.0], [0.3]]),
    op("pow_zero_tensor_negative", None, lambda x, y: x**y, vals=[[0.0], [-0.3]]),
    op("pow_zero_const_0_3", None, lambda x: x**0.3, vals=[[0.0]]),
    op("pow_zero_const_0", None, lambda x: x**0.0, vals=[[0.0]]),
    op("pow_zero_const_neg_0_3", None, lambda x: x**-0.3, vals=[[0.0]]),
    op("pow_zero_const_neg_1", None, lambda x: x**-1.0, vals=[[-1.0, 0.0, 1.0]]),
    op("int_pow_0", None, lambda x: x**0, vals=[[-2, 0, 2]]),
    op("int_pow_2", None, lambda x: x**2, vals=[[-2, 0, 2]]),
    op("int_pow_7", None, lambda x: x**7, vals=[[11, 12, 13]]),
    op("int_pow_29", None, lambda x: x**29, vals=[[-2, 0, 2]]),
    op("topo_sort", SQ, lambda x: (x + x) * x),
    op("topo_sort_0d", [()], lambda x: (x + x) * x),
]
for _name, _fn in [("add", lambda x, y: x + y), ("sub", lambda x, y: x - y), ("mul", lambda x, y: x * y),
                   ("div", lambda x, y: x / y), ("pow", lambda x, y: x**y)]:
    _range = {"low": 0.5, "high": 3.0} if _name in ("div", "pow") else {}
    ARITHMETIC += [
        op(f"broadcast_full_{_name}", [(5, 3, 14, 16), (5, 1, 14, 1)], _fn, atol=1e-4, **_range),
        op(f"broadcast_full_{_name}_both_ways", [(1, 3, 1, 7, 1), (2, 1, 5, 1, 8)], _fn, **_range),
        op(f"broadcast_partial_{_name}", [(4, 1), (4, 5)], _fn, **_range),
    ]

# ---------------------------------------------------------------------------------------------------------
# Unary functions and activations (test_sqrt ... test_mish, test_clip).
SPECIALS = [[INF, -INF, NAN]]
UNARY = [
    op("sqrt", SQ, lambda x: x.sqrt(), low=0.1),
    op("sqrt_negative_is_nan", SQ, lambda x: x.sqrt()),
    op("sqrt_at_0", None, lambda x: x.sqrt(), vals=[[0.0]]),
    op("sqrt_0d", [()], lambda x: x.sqrt(), low=0.1),
    op("rsqrt", SQ, lambda x: x.rsqrt(), low=0.1, grad_rtol=1e-3),
    op("rsqrt_at_0", None, lambda x: x.rsqrt(), vals=[[0.0]]),
    op("square", SQ, lambda x: x.square()),
    op("sin", SQ, lambda x: x.sin()),
    op("sin_0d", [()], lambda x: x.sin()),
    op("sin_specials", None, lambda x: x.sin(), vals=[[NAN, INF, -INF, 0.0]]),
    op("sin_large", None, lambda x: x.sin(), vals=[[1e1, 1e2, 1e3, 1e4, 1e5, 1e6, -1e1, -1e3, -1e6]], atol=3e-3),
    op("cos", SQ, lambda x: x.cos()),
    op("cos_specials", None, lambda x: x.cos(), vals=[[NAN, INF, -INF, 0.0]]),
    op("cos_large", None, lambda x: x.cos(), vals=[[1e1, 1e2, 1e3, 1e4, 1e5, 1e6, -1e1, -1e3, -1e6]], atol=3e-3),
    op("relu", [(64, 64)], lambda x: x.relu()),
    op("relu_0d", [()], lambda x: x.relu()),
    op("relu_exact", None, lambda x: x.relu(), vals=[[-1.0, 0, 1]]),
    op("relu_maximum_exact", None, lambda x: torch.maximum(x, torch.zeros_like(x)), lambda x: mg.maximum(x, 0.0),
       vals=[[-1.0, 0, 1]]),
    lib_op("leaky_relu", SQ, lambda lib, F, x: F.leaky_relu(x, 0.01)),
    lib_op("leaky_relu_slope", SQ, lambda lib, F, x: F.leaky_relu(x, negative_slope=0.2)),
    lib_op("leaky_relu_0d", [()], lambda lib, F, x: F.leaky_relu(x)),
    lib_op("silu", SQ, lambda lib, F, x: F.silu(x)),
    lib_op("silu_0d", [()], lambda lib, F, x: F.silu(x)),
    op("abs", SQ, lambda x: x.abs()),
    op("abs_exact", None, lambda x: x.abs(), vals=[[-1.0, 0, 1]]),
    op("log", SQ, lambda x: x.log(), low=0.1),
    op("log_negative_is_nan", SQ, lambda x: x.log()),
    op("log_specials", None, lambda x: x.log(), vals=SPECIALS),
    op("log_0d", [()], lambda x: x.log(), low=0.1),
    op("exp", SQ, lambda x: x.exp()),
    op("exp_specials", None, lambda x: x.exp(), vals=SPECIALS),
    op("exp_0d", [()], lambda x: x.exp()),
    op("sign", SQ, lambda x: x.sign()),
    op("sign_exact", None, lambda x: x.sign(), vals=[[-1.0, 0, 1]]),
    op("sigmoid", SQ, lambda x: x.sigmoid()),
    op("sigmoid_0d", [()], lambda x: x.sigmoid()),
    op("sigmoid_extreme_positive", SQ, lambda x: x.sigmoid(), low=300, high=400),
    op("sigmoid_extreme_negative", SQ, lambda x: x.sigmoid(), low=-400, high=-300),
    op("sigmoid_log_at_minus_20", None, lambda x: x.sigmoid().log(), vals=[[-20.0, -30.0, -80.0]]),
    lib_op("softplus", SQ, lambda lib, F, x: F.softplus(x)),
    lib_op("softplus_beta_3", SQ, lambda lib, F, x: F.softplus(x, beta=3)),
    lib_op("softplus_beta_third", SQ, lambda lib, F, x: F.softplus(x, beta=1 / 3)),
    lib_op("softplus_extreme_positive", SQ, lambda lib, F, x: F.softplus(x), low=300, high=400),
    lib_op("softplus_extreme_negative", SQ, lambda lib, F, x: F.softplus(x), low=-400, high=-300),
    lib_op("softplus_threshold", None, lambda lib, F, x: F.softplus(x, beta=2, threshold=5),
           vals=[[-3.0, 2.4, 2.6, 5.0]]),
    op("erf", SQ, lambda x: x.erf()),
    op("erf_extreme_positive", SQ, lambda x: x.erf(), low=300, high=400),
    op("erf_extreme_negative", SQ, lambda x: x.erf(), low=-400, high=-300),
    op("erf_0d", [()], lambda x: x.erf()),
    lib_op("gelu_tanh", SQ, lambda lib, F, x: F.gelu(x, approximate="tanh")),
    lib_op("gelu_tanh_extreme", SQ, lambda lib, F, x: F.gelu(x, approximate="tanh"), low=300, high=400),
    lib_op("gelu_tanh_extreme_negative", SQ, lambda lib, F, x: F.gelu(x, approximate="tanh"), low=-400, high=-300),
    lib_op("gelu_exact", SQ, lambda lib, F, x: F.gelu(x)),
    lib_op("gelu_exact_wide", SQ, lambda lib, F, x: F.gelu(x), low=-8, high=8),
    lib_op("gelu_exact_extreme_negative", SQ, lambda lib, F, x: F.gelu(x), low=-400, high=-300),
    lib_op("quick_gelu", SQ, lambda lib, F, x: x * (1.702 * x).sigmoid()),
    lib_op("elu", SQ, lambda lib, F, x: F.elu(x)),
    lib_op("elu_alpha", SQ, lambda lib, F, x: F.elu(x, alpha=0.1)),
    lib_op("elu_0d", [()], lambda lib, F, x: F.elu(x)),
    op("tanh", SQ, lambda x: x.tanh()),
    op("tanh_extreme_negative", SQ, lambda x: x.tanh(), low=-300, high=-297),
    op("tanh_extreme_positive", SQ, lambda x: x.tanh(), low=300, high=303),
    lib_op("relu_module_functional", SQ, lambda lib, F, x: F.relu(x)),
    op("clip", SQ, lambda x: x.clip(-2.3, 1.2)),
    # x on a bound keeps its gradient, as in PyTorch 2.13 (CI's pinned oracle); PyTorch 2.14 gives it 0 instead
    op("clip_at_bounds", None, lambda x: x.clip(-2.5, 1.5), vals=[[-3.0, -2.5, 0, 1.5, 2]]),
    op("clip_0_0", SQ, lambda x: x.clip(0, 0)),
    op("clip_above", SQ, lambda x: x.clip(10, 100)),
    op("clip_narrow", SQ, lambda x: x.clip(0, 0.1)),
    op("clip_negative", SQ, lambda x: x.clip(-0.3, -0.2)),
    op("clip_min_above_max", SQ, lambda x: x.clip(3, 0)),
    op("clip_max_only", SQ, lambda x: x.clip(None, 0)),
    op("clamp_min_only", SQ, lambda x: x.clamp(min=0)),
    op("clamp_tensor_bounds", [(45, 65), (45, 1), (1, 65)], lambda x, lo, hi: x.clamp(lo - 1, hi + 1)),
]

# ---------------------------------------------------------------------------------------------------------
# Comparisons, where, maximum/minimum (test_cmp_*, test_where, test_maximum, test_minimum).
CMP = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "gt": lambda x, y: x > y,
       "ge": lambda x, y: x >= y, "lt": lambda x, y: x < y, "le": lambda x, y: x <= y}
SPECIAL_PAIRS = [[a for a in (0.0, 1.0, -1.0, INF, -INF, NAN) for _ in range(6)],
                 [b for _ in range(6) for b in (0.0, 1.0, -1.0, INF, -INF, NAN)]]
COMPARISONS = []
for _name, _fn in CMP.items():
    COMPARISONS += [
        op(f"cmp_{_name}_float", None, _fn, vals=[[0.0, 1, 2], [2.0, 1, 0]]),
        op(f"cmp_{_name}_int", None, _fn, vals=[[0, 1, 2], [2, 1, 0]]),
        op(f"cmp_{_name}_bool", None, _fn, vals=[[True, True, False], [False, True, False]]),
        op(f"cmp_{_name}_broadcast", [(3, 4, 5), (5,)], _fn),
        op(f"cmp_{_name}_const", None, lambda x, y, _fn=_fn: _fn(x, 2), vals=[[0.0, 1, 2], [2.0, 1, 0]]),
        op(f"cmp_{_name}_reverse_const", None, lambda x, y, _fn=_fn: _fn(2, y), vals=[[0.0, 1, 2], [2.0, 1, 0]]),
        op(f"cmp_{_name}_specials", None, _fn, vals=SPECIAL_PAIRS),
    ]
COMPARISONS += [
    op("cmp_ne_backwards", [(4,)], lambda x: x * (x != 0)),
    op("cmp_lt_backwards", [(4,)], lambda x: x * (x < 0)),
    lib_op("where_scalars", [(100,)], lambda lib, F, x: lib.where(x > 0.5, 4, 2)),
    lib_op("where_float_scalars", [(100,)], lambda lib, F, x: lib.where(x > 0.5, 4.0, -2.5)),
    lib_op("where_permute", [(5, 5)], lambda lib, F, x: lib.where(x > 0.5, 4, 2).permute((1, 0))),
    lib_op("where_broadcast_1", [(8,), (1,), (1,)], lambda lib, F, x, a, b: lib.where(x > 0.5, a, b)),
    lib_op("where_broadcast_rows", [(10, 10), (10,), (10,)], lambda lib, F, x, a, b: lib.where(x > 0.5, a, b)),
    lib_op("where_same_shape", [(10, 10)] * 3, lambda lib, F, x, a, b: lib.where(x > 0.5, a, b)),
    lib_op("where_tensor_and_scalar", [(10, 10)] * 2, lambda lib, F, x, a: lib.where(x > 0, a, 0.0)),
    lib_op("inf_where", None, lambda lib, F, x: lib.where(x < 0, x, 1.0), vals=[[INF, INF, -INF]]),
    lib_op("maximum", SQ * 2, lambda lib, F, x, y: lib.maximum(x, y)),
    lib_op("maximum_0d", [(), ()], lambda lib, F, x, y: lib.maximum(x, y)),
    lib_op("maximum_with_0d", None, lambda lib, F, x, y: lib.maximum(x, y), vals=[[1.0, 0.0, 3.0, -4.0], 3.0]),
    lib_op("maximum_ties", None, lambda lib, F, x, y: lib.maximum(x, y),
           vals=[[1.0, 0.0, 3.0, -4.0], [-1.0, -2.0, 3.0, 0.0]]),
    lib_op("maximum_int", None, lambda lib, F, x, y: lib.maximum(x, y),
           vals=[[-1234, 0, 1234, 2**31 - 1, -(2**31)], 2**31 - 1]),
    lib_op("maximum_bool", None, lambda lib, F, x, y: lib.maximum(x, y),
           vals=[[True, False, False], [True, True, False]]),
    lib_op("maximum_int_and_float", None, lambda lib, F, x, y: lib.maximum(x, y), vals=[[1, 2, 3], 1.2]),
    lib_op("maximum_bool_and_int", None, lambda lib, F, x, y: lib.maximum(x, y), vals=[[True, False, False], 3]),
    lib_op("minimum", SQ * 2, lambda lib, F, x, y: lib.minimum(x, y)),
    lib_op("minimum_0d", [(), ()], lambda lib, F, x, y: lib.minimum(x, y)),
    lib_op("minimum_ties", None, lambda lib, F, x, y: lib.minimum(x, y),
           vals=[[1.0, 0.0, 3.0, -4.0], [-1.0, -2.0, 3.0, 0.0]]),
    lib_op("minimum_int", None, lambda lib, F, x, y: lib.minimum(x, y),
           vals=[[-1234, 0, 1234, 2**31 - 1, -(2**31)], -(2**31)]),
    lib_op("minimum_bool_and_float", None, lambda lib, F, x, y: lib.minimum(x, y), vals=[[True, False, False], 1.2]),
    lib_op("maximum_method_0d", SQ, lambda lib, F, x: x.maximum(lib.tensor(0.5))),
]

# ---------------------------------------------------------------------------------------------------------
# Reductions (test_sum_* ... test_logsumexp, test_cumsum, test_argmax).
R4 = [(3, 4, 5, 6)]
BIG = [(15, 25, 35)]
EMPTY_AXES = [(1, 0, 3, 0, 5)]
REDUCTIONS = [
    op("sum_simple", None, lambda x: x.sum(), vals=[[1.0, 1.0]]),
    op("sum_full", [(16384,)], lambda x: x.sum(), atol=1e-4),
    op("sum_relu", [(3, 4, 5)], lambda x: x.relu().sum().relu()),
    op("sum_tiny", [(4, 2, 2)], lambda x: x.sum(dim=(0, 2))),
    op("sum", [(45, 3)], lambda x: x.sum()),
    op("sum_dim_3", R4, lambda x: x.sum(dim=3)),
    op("sum_dims_1_3", R4, lambda x: x.sum(dim=(1, 3))),
    op("sum_dims_0_2", R4, lambda x: x.sum(dim=(0, 2))),
    op("sum_dim_1_keepdim", R4, lambda x: x.sum(dim=1, keepdim=True)),
    op("sum_negative_dim", R4, lambda x: x.sum(-2)),
    op("sum_axis_alias", R4, lambda x: x.sum(dim=1), lambda x: x.sum(axis=1)),
    op("sum_0d", [()], lambda x: x.sum()),
    op("sum_0d_dim_0", [()], lambda x: x.sum(0)),
    op("sum_0d_dim_neg_1", [()], lambda x: x.sum(-1)),
    op("sum_0d_empty_dims", [()], lambda x: x.sum(())),
    op("sum_twice", [(4, 4, 4)], lambda x: x.sum((0, 1)).sum()),
    op("sum_zero_shape_0", [(4, 0)], lambda x: x.sum(dim=(0,))),
    op("sum_zero_shape_1", [(4, 0)], lambda x: x.sum(dim=(1,))),
    op("sum_zero_shape_both", [(4, 0)], lambda x: x.sum(dim=(0, 1))),
    op("sum_float64_dtype", [(45, 3)], lambda x: x.sum(dtype=torch.float64), lambda x: x.sum(dtype=np.float64)),
    op("prod", None, lambda x: x.prod(), vals=[[1.0, 2.0, 3.0]]),
    op("prod_dim_3", R4, lambda x: x.prod(dim=3)),
    op("prod_dim_1_keepdim", R4, lambda x: x.prod(dim=1, keepdim=True)),
    op("prod_with_a_zero", None, lambda x: x.prod(dim=1), vals=[[[1.0, 0.0, 3.0], [0.0, 0.0, 2.0]]]),
    op("prod_0d", [()], lambda x: x.prod(0)),
    op("min", [(3, 3)], lambda x: x.min()),
    op("min_mul", [(45, 3)], lambda x: x.min().mul(0.5), lambda x: x.min() * 0.5),
    op("min_0d", [()], lambda x: x.min()),
    op("min_int", None, lambda x: x.min(), vals=[[0, -(2**31)]]),
    op("min_bool", None, lambda x: x.min(), vals=[[False, True]]),
    op("min_dim", R4, lambda x: x.min(dim=2).values),
    op("max", [(45, 3)], lambda x: x.max()),
    op("max_ties", None, lambda x: x.max() * 0.5, vals=[[[1.0, 1.0, 0.0, 1.0]]]),
    op("max_dim", R4, lambda x: x.max(dim=1).values),
    op("max_dim_indices", R4, lambda x: x.max(dim=1).indices),
    op("max_dim_keepdim", R4, lambda x: x.max(-1, keepdim=True).values),
    op("max_dim_ties", None, lambda x: x.max(dim=1).values, vals=[[[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]]),
    op("max_0d", [()], lambda x: x.max()),
    op("max_int", None, lambda x: x.max(), vals=[[-(2**31), 0]]),
    op("max_bool", None, lambda x: x.max(), vals=[[True, False]]),
    op("max_with_nan", None, lambda x: x.max(dim=1).values, vals=[[[1.0, NAN, 3.0], [2.0, 5.0, 4.0]]]),
    lib_op("max_dont_collapse", [], lambda lib, F: lib.ones(256, 256).max(1).values),
    lib_op("const_reduce_sum", [(3, 3)], lambda lib, F, x: lib.full_like(x, 2).sum(), forward_only=True),
    op("amax", R4, lambda x: x.amax(1)),
    op("amax_dims", R4, lambda x: x.amax((0, 2), keepdim=True)),
    op("amax_ties", None, lambda x: x.amax(1), vals=[[[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]]]),
    op("amin", R4, lambda x: x.amin(-1)),
    op("mean", R4, lambda x: x.mean()),
    op("mean_0d", [()], lambda x: x.mean()),
    op("mean_axis", R4, lambda x: x.mean(dim=(1, 2))),
    op("mean_zero_axis", EMPTY_AXES, lambda x: x.mean(dim=(1, 3))),
    op("var", BIG, lambda x: x.var()),
    op("var_correction_0", BIG, lambda x: x.var(correction=0)),
    op("var_correction_5", BIG, lambda x: x.var(correction=5)),
    op("var_dim_0", BIG, lambda x: x.var(0)),
    op("var_dims", BIG, lambda x: x.var([1, 2])),
    op("var_dim_2_correction_0", BIG, lambda x: x.var(2, correction=0)),
    op("var_unbiased_false", BIG, lambda x: x.var(1, unbiased=False)),
    op("var_zero_in_axis", EMPTY_AXES, lambda x: x.var(dim=(1, 3))),
    op("var_zero_in_axis_correction_0", EMPTY_AXES, lambda x: x.var(dim=(1, 3), correction=0)),
    op("var_one_in_axis", [(1, 2, 3, 1, 5)], lambda x: x.var(dim=(0, 3))),
    op("var_one_in_axis_correction_0", [(1, 2, 3, 1, 5)], lambda x: x.var(dim=(0, 3), correction=0)),
    # correction > n: the value is nan in both; PyTorch's gradient is finite (-0) there, minigrad's nan (as tinygrad's)
    op("var_one_in_axis_correction_5", [(1, 2, 3, 1, 5)], lambda x: x.var(dim=(0, 3), correction=5),
       forward_only=True),
    op("var_single_element", [(1,)], lambda x: x.var(dim=(0,), correction=0)),
    op("var_keepdim", BIG, lambda x: x.var(keepdim=True)),
    op("std", BIG, lambda x: x.std()),
    op("std_correction_0", BIG, lambda x: x.std(correction=0)),
    op("std_dims", BIG, lambda x: x.std([1, 2])),
    op("std_zero_in_axis", EMPTY_AXES, lambda x: x.std(dim=(1, 3))),
    op("std_one_in_axis", [(1, 2, 3, 1, 5)], lambda x: x.std(dim=(0, 4))),
    op("std_one_in_axis_correction_0", [(1, 2, 3, 1, 5)], lambda x: x.std(dim=(0, 3), correction=0)),
    op("std_keepdim", BIG, lambda x: x.std(0, keepdim=True, correction=0)),
    op("softmax", SQ, lambda x: x.softmax(1)),
    op("softmax_1d", [(45,)], lambda x: x.softmax(0)),
    op("softmax_0d", [()], lambda x: x.softmax(0)),
    op("softmax_0d_neg", [()], lambda x: x.softmax(-1)),
    op("softmax_other_axis_0", [(10, 10, 10)], lambda x: x.softmax(0)),
    op("softmax_other_axis_1", [(10, 10, 10)], lambda x: x.softmax(1)),
    lib_op("softmax_functional", [(10, 10, 10)], lambda lib, F, x: F.softmax(x, dim=-1)),
    lib_op("softmax_with_neg_inf", None, lambda lib, F, x: F.softmax(x, dim=-1),
           vals=[[[0.0, -INF, 1.0], [2.0, 3.0, -INF]]]),
    lib_op("softmax_argmax", SQ, lambda lib, F, x: x.softmax(0).argmax()),
    op("log_softmax", SQ, lambda x: x.log_softmax(1)),
    op("log_softmax_1d", [(45,)], lambda x: x.log_softmax(0)),
    op("log_softmax_0d", [()], lambda x: x.log_softmax(-1)),
    op("log_softmax_other_axis_0", [(10, 10, 10)], lambda x: x.log_softmax(0)),
    lib_op("log_softmax_functional", [(10, 10, 10)], lambda lib, F, x: F.log_softmax(x, dim=2)),
    op("logsumexp", SQ, lambda x: x.logsumexp(0)),
    op("logsumexp_keepdim", SQ, lambda x: x.logsumexp(0, True)),
    op("logsumexp_dim_1", SQ, lambda x: x.logsumexp(1)),
    op("logsumexp_4d", [(6, 6, 6, 6)], lambda x: x.logsumexp(2)),
    op("logsumexp_1d", [(45,)], lambda x: x.logsumexp(0)),
    op("logsumexp_0d", [()], lambda x: x.logsumexp(-1)),
    op("logsumexp_large", SQ, lambda x: x.logsumexp(1), low=300, high=400),
    op("logsumexp_all_neg_inf", None, lambda x: x.logsumexp(1), vals=[[[-INF, -INF], [0.0, -INF]]]),
    op("cumsum_small", [(10,)], lambda x: x.cumsum(0)),
    op("cumsum_0d", [()], lambda x: x.cumsum(0)),
    op("cumsum_2d_dim_0", [(20, 30)], lambda x: x.cumsum(0)),
    op("cumsum_2d_dim_1", [(20, 30)], lambda x: x.cumsum(1)),
    op("cumsum_3d_neg", [(20, 30, 40)], lambda x: x.cumsum(-1), atol=1e-4),
    op("cumsum_zero_axis", [(2, 0, 4)], lambda x: x.cumsum(1)),
    op("cumsum_zero_other_axis", [(0, 3)], lambda x: x.cumsum(0)),
    op("argmax_first_of_ties", None, lambda x: x.argmax(), vals=[[2, 2]]),
    op("argmax_first_of_later_ties", None, lambda x: x.argmax(), vals=[[1, 2, 2]]),
    op("argmax", [(10, 20)], lambda x: x.argmax(), forward_only=True),
    op("argmax_dim_0", [(10, 20)], lambda x: x.argmax(0, False), forward_only=True),
    op("argmax_dim_1_keepdim", [(10, 20)], lambda x: x.argmax(1, True), forward_only=True),
    op("argmax_int_extremes", None, lambda x: x.argmax(), vals=[[0, -(2**31)]]),
    op("argmin_first_of_ties", None, lambda x: x.argmin(), vals=[[3, 2, 2]]),
    op("argmin", [(10, 20)], lambda x: x.argmin(), forward_only=True),
    op("argmin_dim_1", [(10, 20)], lambda x: x.argmin(1, False), forward_only=True),
    op("norm", SQ, lambda x: x.norm()),
    op("norm_dim", SQ, lambda x: x.norm(dim=1)),
    op("norm_p1_keepdim", SQ, lambda x: x.norm(p=1, dim=0, keepdim=True)),
    op("norm_inf", SQ, lambda x: x.norm(p=INF, dim=1)),
    op("norm_at_zero", None, lambda x: x.norm(dim=1), vals=[[[0.0, 0.0], [3.0, 4.0]]]),
]

# ---------------------------------------------------------------------------------------------------------
# Matrix products (test_dot_1d ... test_matvec). tinygrad spells it `Tensor.dot`; both here spell it `@`.
MATMUL = [
    op("dot_1d", [(65,), (65,)], lambda x, y: x @ y),
    op("dot_vector_matrix", [(65,), (65, 45)], lambda x, y: x @ y),
    op("dot_matrix_vector", [(45, 65), (65,)], lambda x, y: x @ y),
    op("dot_batched_matrix_vector", [(8, 45, 65), (65,)], lambda x, y: x @ y),
    op("dot_vector_batched_matrix", [(65,), (8, 65, 45)], lambda x, y: x @ y),
    op("dot", [(45, 65), (65, 100)], lambda x, y: x @ y, atol=1e-4),
    op("dot_batched", [(8, 45, 65), (8, 65, 100)], lambda x, y: x @ y, atol=1e-4),
    op("matmul_simple", [(4,), (4, 4)], lambda x, y: x @ y),
    op("matmul", [(64,), (64, 99)], lambda x, y: x @ y, atol=1e-4),
    op("matmul_batched", [(3,), (1, 3, 3, 5)], lambda x, y: x @ y),
    op("matmul_batched_vector", [(4, 3), (1, 3, 3, 5)], lambda x, y: x @ y),
    op("small_gemm", [(8, 8), (8, 8)], lambda x, y: x @ y),
    op("gemm_9", [(9, 9), (9, 9)], lambda x, y: x @ y),
    op("gemm", [(64, 64), (64, 64)], lambda x, y: x @ y, atol=1e-4),
    op("small_gemm_range", None, lambda x, y: x @ y,
       vals=[np.arange(0, 64.0).reshape(8, 8), np.arange(64, 128.0).reshape(8, 8)]),
    op("small_gemm_eye", None, lambda x, y: x @ y, vals=[np.eye(8), np.eye(8)]),
    op("gemm_zeros_shape_out_0", [(8, 8), (8, 0)], lambda x, y: x @ y),
    op("gemm_zeros_shape_in_0", [(0, 8), (8, 8)], lambda x, y: x @ y),
    op("gemm_zeros_shape_both", [(0, 8), (8, 0)], lambda x, y: x @ y),
    op("gemm_zeros_shape_inner", [(8, 0), (0, 8)], lambda x, y: x @ y),
    op("gemm_zeros_shape_vector", [(0,), (0, 8)], lambda x, y: x @ y),
    op("gemm_zeros_shape_dot", [(0,), (0,)], lambda x, y: x @ y),
    op("broadcastdot", [(10, 45, 65), (65, 45)], lambda x, y: x @ y, atol=1e-4),
    op("multidot", [(10, 45, 65), (10, 65, 45)], lambda x, y: x @ y, atol=1e-4),
    op("multidot_4d", [(3, 3, 45, 65), (3, 3, 65, 45)], lambda x, y: x @ y, atol=1e-4),
    op("matmul_broadcast_batch", [(2, 1, 4, 5), (3, 5, 6)], lambda x, y: x @ y),
    op("matvecmat", [(1, 128), (128, 128), (128, 128)], lambda x, y, z: (x @ y).relu() @ z, atol=1e-3),
    op("matvec", [(1, 128), (128, 128)], lambda x, y: (x @ y).relu(), atol=1e-4),
    lib_op("linear", [(4, 7, 5), (3, 5), (3,)], lambda lib, F, x, w, b: F.linear(x, w, b)),
    lib_op("linear_no_bias", [(4, 5), (3, 5)], lambda lib, F, x, w: F.linear(x, w)),
    op("mulacc_with_zero_strides", [(2, 4, 1), (1, 4, 1)],
       lambda x, y: (x.expand(2, 4, 3) * y.expand(2, 4, 3)).sum(-1)),
]

# ---------------------------------------------------------------------------------------------------------
# Shape ops (test_transpose ... test_repeat, test_cat, test_stack, test_split, test_chunk, test_tril, test_gather).
X4 = [(4, 3, 6, 6)]
GATHER_INDEX = np.random.default_rng(3).integers(0, 3, size=(3, 4, 5))


def gather(name: str, shape: tuple, dim: int) -> Case:
    return lib_op(name, [shape], lambda lib, F, x: x.gather(dim, lib.tensor(GATHER_INDEX)))


SHAPE = [
    op("transpose_T", [(3, 3)], lambda x: x.T),
    op("transpose_1_2", [(3, 3, 3)], lambda x: x.transpose(1, 2)),
    op("transpose_0_2", [(3, 4, 5)], lambda x: x.transpose(0, 2)),
    op("transpose_negative", [(3, 4, 5)], lambda x: x.transpose(-1, 0)),
    op("mT", [(2, 3, 4)], lambda x: x.mT),
    op("permute", [(1, 2, 3, 4)], lambda x: x.permute((3, 0, 2, 1))),
    op("permute_reverse", R4, lambda x: x.permute((3, 2, 1, 0))),
    op("permute_negative", R4, lambda x: x.permute((-2, -1, 1, 0))),
    op("permute_varargs", R4, lambda x: x.permute(1, 3, 0, 2)),
    op("permute_0d", [()], lambda x: x.permute(())),
    op("reshape", X4, lambda x: x.reshape((12, 6, 6))),
    op("reshape_infer", X4, lambda x: x.reshape((-1, 3, 6, 6))),
    op("reshape_infer_1", X4, lambda x: x.reshape((-1, 1, 6, 6))),
    op("reshape_varargs", X4, lambda x: x.reshape(4, 18, -1)),
    op("reshape_0d", [()], lambda x: x.reshape(())),
    op("reshape_to_0d", [(1,)], lambda x: x.reshape(())),
    op("reshape_from_0d", [()], lambda x: x.reshape((1, 1, 1))),
    op("view", X4, lambda x: x.view((12, 6, 6))),
    op("view_varargs", [(6,)], lambda x: x.view(2, 3)),
    op("view_list", [(6, 1)], lambda x: x.view([2, 3])),
    op("view_flat", [(3, 2)], lambda x: x.view(6)),
    op("flip_0", X4, lambda x: x.flip((0,))),
    op("flip_0_1", X4, lambda x: x.flip((0, 1))),
    op("flip_0_1_3", X4, lambda x: x.flip((0, 1, 3))),
    op("flip_twice", X4, lambda x: x.flip((0, 1, 3)).flip(0)),
    op("flip_negative", X4, lambda x: x.flip((-1,))),
    op("flip_none_0d", [()], lambda x: x.flip(())),
    op("flip_none", X4, lambda x: x.flip(())),
    op("squeeze_0", [(1, 3, 6, 6)], lambda x: x.squeeze(0)),
    op("squeeze_not_one", [(4, 3, 1, 6)], lambda x: x.squeeze(1)),
    op("squeeze_negative", [(4, 3, 6, 1)], lambda x: x.squeeze(-1)),
    op("squeeze_all", [(1, 3, 1, 6)], lambda x: x.squeeze()),
    op("squeeze_dims", [(1, 3, 1, 6)], lambda x: x.squeeze((0, 2))),
    op("squeeze_0d", [()], lambda x: x.squeeze(-1)),
    op("squeeze_0d_all", [()], lambda x: x.squeeze()),
    op("unsqueeze_0", X4, lambda x: x.unsqueeze(0)),
    op("unsqueeze_end", X4, lambda x: x.unsqueeze(4)),
    op("unsqueeze_negative", X4, lambda x: x.unsqueeze(-3)),
    op("unsqueeze_0d", [()], lambda x: x.unsqueeze(0)),
    op("flatten", X4, lambda x: x.flatten()),
    op("flatten_start", X4, lambda x: x.flatten(start_dim=2)),
    op("flatten_end", X4, lambda x: x.flatten(end_dim=1)),
    op("flatten_middle", X4, lambda x: x.flatten(start_dim=1, end_dim=2)),
    op("flatten_0d", [()], lambda x: x.flatten()),
    op("unflatten", X4, lambda x: x.unflatten(0, (2, 2))),
    op("unflatten_negative", X4, lambda x: x.unflatten(-1, (3, 2, 1))),
    op("unflatten_infer", X4, lambda x: x.unflatten(3, (-1, 2))),
    op("expand", [(4, 3, 1, 6)], lambda x: x.expand((4, 3, 2, 6))),
    op("expand_all_ones", [(1, 1, 1, 1)], lambda x: x.expand((4, 3, 2, 6))),
    op("expand_new_dims", [(4, 3, 1, 6)], lambda x: x.expand((6, 1, 4, 3, 2, 6))),
    op("expand_to_zero", [(4, 3, 1, 6)], lambda x: x.expand((4, 3, 0, 6))),
    op("expand_minus_one", [(4, 3, 1, 6)], lambda x: x.expand(-1, -1, 5, -1)),
    op("expand_0d", [()], lambda x: x.expand((4, 3, 2, 6))),
    op("expand_as", [(3, 1), (3, 4)], lambda x, y: x.expand_as(y) * y),
    op("repeat", [(4, 6, 3)], lambda x: x.repeat(2, 4, 3)),
    op("repeat_new_dims", [(4, 6, 3)], lambda x: x.repeat(3, 2, 2, 4, 3)),
    op("repeat_tuple", [(3, 3)], lambda x: x.repeat((3, 3, 4))),
    op("repeat_0d", [()], lambda x: x.repeat(2, 4, 3)),
    op("repeat_zero", [(4, 6, 3)], lambda x: x.repeat(2, 0, 4)),
    lib_op("cat", [(45, 65, 9)] * 3, lambda lib, F, x, y, z: lib.cat((x, y, z), 1)),
    lib_op("cat_negative", [(45, 65, 9)] * 3, lambda lib, F, x, y, z: lib.cat((x, y, z), -2)),
    lib_op("cat_last", [(5, 6, 9), (5, 6, 2)], lambda lib, F, x, y: lib.cat([x, y], dim=2)),
    lib_op("cat_zero_in_other_axis", [(45, 0, 9)] * 3, lambda lib, F, x, y, z: lib.cat((x, y, z), 0)),
    lib_op("cat_zero_in_cat_axis", [(45, 0, 9), (45, 1, 9), (45, 2, 9)], lambda lib, F, x, y, z: lib.cat((x, y, z), 1)),
    lib_op("multicat", [(45, 65)] * 3, lambda lib, F, x, y, z: lib.cat((x, y, z), -1)),
    lib_op("stack", [(5, 6, 3)] * 3, lambda lib, F, x, y, z: lib.stack((x, y, z), 0)),
    lib_op("stack_middle", [(5, 6, 3)] * 3, lambda lib, F, x, y, z: lib.stack((x, y, z), 2)),
    lib_op("stack_negative", [(5, 6, 3)] * 3, lambda lib, F, x, y, z: lib.stack((x, y, z), -1)),
    lib_op("stack_0d", [(), ()], lambda lib, F, x, y: lib.stack((x, y))),
    lib_op("stack_slice", [(4,)], lambda lib, F, x: lib.stack([x for _ in range(3)])[0, :]),
    lib_op("stack_slice_4d", [(4, 4)], lambda lib, F, x: lib.stack([x for _ in range(4)])[3]),
    lib_op("stack_max", None, lambda lib, F, x, y: lib.stack((x, y)).max(dim=0).values, vals=[[1.0], [2.0]]),
    op("split_equal", [(10,)], lambda x: x.split(5)),
    op("split_sections", [(10,)], lambda x: x.split([1, 4, 5])),
    op("split_uneven", [(10,)], lambda x: x.split(3)),
    op("split_dim_1", [(3, 4)], lambda x: x.split(1, dim=1)),
    op("split_sections_dim_1", [(4, 4)], lambda x: x.split([2, 2], dim=1)),
    op("split_big", [(10000,)], lambda x: x.split(2500)),
    op("chunk_dim_1", [(8, 13)], lambda x: x.chunk(6, 1)),
    op("chunk_dim_0", [(8, 13)], lambda x: x.chunk(6, 0)),
    op("chunk_negative", [(8, 13)], lambda x: x.chunk(3, -1)),
    op("chunk_3d", [(8, 3, 39)], lambda x: x.chunk(3, -2)),
    op("tril", [(3, 3)], lambda x: x.tril()),
    op("tril_1", [(3, 3)], lambda x: x.tril(1)),
    op("tril_neg_1", [(3, 3)], lambda x: x.tril(-1)),
    op("tril_wide_4", [(4, 5)], lambda x: x.tril(4)),
    op("tril_wide_neg_6", [(4, 5)], lambda x: x.tril(-6)),
    op("tril_batched", [(5, 3, 3)], lambda x: x.tril(1)),
    op("tril_empty", [(5, 0, 3)], lambda x: x.tril()),
    op("tril_bool", None, lambda x: x.tril(), vals=[[[True] * 3] * 3]),
    op("triu", [(3, 3)], lambda x: x.triu()),
    op("triu_2", [(3, 3)], lambda x: x.triu(2)),
    op("triu_neg_2", [(3, 3)], lambda x: x.triu(-2)),
    op("triu_wide_5", [(4, 5)], lambda x: x.triu(5)),
    op("triu_wide_neg_4", [(4, 5)], lambda x: x.triu(-4)),
    op("triu_batched", [(5, 3, 3)], lambda x: x.triu()),
    op("triu_bool", None, lambda x: x.triu(), vals=[[[True] * 3] * 3]),
    gather("gather_dim_0", (4, 5, 6), 0),
    gather("gather_dim_1", (4, 5, 6), 1),
    gather("gather_dim_2", (4, 5, 6), 2),
    gather("gather_same_shape", (3, 4, 5), 0),
    gather("gather_dim_neg_1", (4, 5, 6), -1),
    gather("gather_dim_neg_3", (4, 5, 6), -3),
    lib_op("gather_repeats", None, lambda lib, F, x: x.gather(0, lib.tensor([2, 1, 0, 1, 2])), vals=[[1.0, 2.0, 3.0]]),
    lib_op("gather_inf", None, lambda lib, F, x: x.gather(0, lib.tensor([2, 1, 0, 1, 2])), vals=[[-INF, 2.0, 3.0]]),
    lib_op("masked_fill_neg_inf", [(32, 10)], lambda lib, F, x: x.masked_fill((x > 0.1).detach(), -INF)),
    lib_op("masked_fill_broadcast", [(32, 10), (10,)], lambda lib, F, x, m: x.masked_fill(m > 0, 0.5)),
    op("detach", X4, lambda x: x.detach()),
    op("clone", X4, lambda x: x.clone()),
    op("contiguous", X4, lambda x: x.permute(3, 2, 1, 0).contiguous()),
]

# ---------------------------------------------------------------------------------------------------------
# Indexing (test_slice_* ... test_slice_fancy_indexing_*): the same index on both sides.
IDX = [  # tinygrad's _get_index_randoms, for an input of shape (2, 5, 6, 5, 3, 4)
    np.random.default_rng(4).integers(-1, 1, size=(2, 1, 1, 1, 1, 1)),
    np.random.default_rng(5).integers(0, 1, size=(1, 3, 1, 1, 1, 1)),
    np.random.default_rng(6).integers(-5, 5, size=(1, 1, 4, 1, 1, 1)),
    np.random.default_rng(7).integers(0, 4, size=(2, 1, 1, 5, 1, 1)),
    np.random.default_rng(8).integers(0, 1, size=(1, 1, 1, 1, 6, 1)),
]
X6 = [(2, 5, 6, 5, 3, 4)]


def fancy(name: str, fn: Callable) -> Case:
    """An advanced-indexing case: `fn(x, a, b, c, d, e)` with tinygrad's five random index tensors."""
    return lib_op(name, X6, lambda lib, F, x: fn(x, *[lib.tensor(i) for i in IDX]))


INDEXING = [
    op("slice_1d", [(3,)], lambda x: x[1:3]),
    op("slice_1d_negative_start", [(3,)], lambda x: x[-2:2]),
    op("slice_0d_none", [()], lambda x: x[None]),
    op("int_index", [(3,)], lambda x: x[2]),
    op("int_index_negative", [(3,)], lambda x: x[-3]),
    op("int_index_row", [(10, 10)], lambda x: x[1]),
    op("int_index_all_dims", [(3, 3, 3)], lambda x: x[1, 1, 1]),
    op("slice_multidim", [(3, 3, 3)], lambda x: x[1:2, 2]),
    op("slice_multidim_3", [(3, 3, 3)], lambda x: x[1:2, 1:2, 0:-1]),
    op("slice_with_none", [(3, 3, 3)], lambda x: x[1:2, None, 1:2]),
    op("slice_with_none_and_int", [(3, 3, 3)], lambda x: x[1:2, 1:2, None, -1]),
    op("slice_with_many_none", [(3, 3, 3)], lambda x: x[None, None, 1, None, 2, 0:2]),
    op("slice_list_index", [(3, 3, 3)], lambda x: x[:, [0], :]),
    lib_op("slice_tensor_index", [(3, 3, 3)], lambda lib, F, x: x[:, lib.tensor([0]), :]),
    op("slice_out_of_bounds_end", [(3, 3, 3)], lambda x: x[0:4]),
    op("slice_out_of_bounds_both", [(3, 3, 3)], lambda x: x[-6:4]),
    op("slice_out_of_bounds_mixed", [(3, 3, 3)], lambda x: x[1:50, 1:2, -1]),
    op("slice_stride", [(7, 5, 10)], lambda x: x[::2, ::3, ::4]),
    op("slice_stride_start", [(7, 5, 10)], lambda x: x[1:5:2, ::3, ::4]),
    op("slice_stride_int", [(7, 5, 10)], lambda x: x[1:5:2, 3, ::4]),
    op("slice_stride_none", [(7, 5, 10)], lambda x: x[1:5:2, None, None, 3, None, ::4]),
    op("slice_both_out_of_bounds", [(3, 3, 3)], lambda x: x[5:10]),
    op("slice_both_out_of_bounds_negative", [(3, 3, 3)], lambda x: x[-15:-7]),
    op("slice_start_gt_end", [(3, 3, 3)], lambda x: x[-2:-5]),
    op("slice_empty", [(10, 10)], lambda x: x[1:1]),
    op("slice_ellipsis_last", [(3, 3, 3, 3)], lambda x: x[..., 0]),
    op("slice_ellipsis_first", [(3, 3, 3, 3)], lambda x: x[0, ...]),
    op("slice_ellipsis_middle", [(3, 3, 3, 3)], lambda x: x[0, ..., 0]),
    op("slice_ellipsis_none", [(3, 3, 3, 3)], lambda x: x[None, 0:3, ..., 0, None]),
    op("double_slice", [(4, 4)], lambda x: x[:, 1:2][1:2]),
    op("double_slice_rows", [(4, 4)], lambda x: x[1:3][1:2]),
    op("double_slice_columns", [(4, 4)], lambda x: x[:, 1:2][:, 0:1]),
    fancy("fancy_no_dim_collapse", lambda x, a, b, c, d, e: x[a, b, c, d, e]),
    fancy("fancy_middle", lambda x, a, b, c, d, e: x[:, b, c, d, :]),
    fancy("fancy_leading_ellipsis", lambda x, a, b, c, d, e: x[a, b, ...]),
    fancy("fancy_split_by_ellipsis", lambda x, a, b, c, d, e: x[a, ..., e]),
    fancy("fancy_split_by_slice", lambda x, a, b, c, d, e: x[..., c, :, e]),
    fancy("fancy_int_collapse", lambda x, a, b, c, d, e: x[1, b, c, d, e]),
    fancy("fancy_int_collapse_middle", lambda x, a, b, c, d, e: x[a, b, 3, d, e]),
    fancy("fancy_ints_and_tensors", lambda x, a, b, c, d, e: x[1, b, 2, d, 2]),
    fancy("fancy_int_slice_step", lambda x, a, b, c, d, e: x[1, :, 3:11:2, d, 0:2]),
    fancy("fancy_none_first", lambda x, a, b, c, d, e: x[None, b, c, d, e]),
    fancy("fancy_none_last", lambda x, a, b, c, d, e: x[a, b, c, d, None]),
    fancy("fancy_none_between", lambda x, a, b, c, d, e: x[a, b, None, d, e]),
    fancy("fancy_none_and_slice", lambda x, a, b, c, d, e: x[a, :, None, d, e]),
    fancy("fancy_many_none", lambda x, a, b, c, d, e: x[None, None, b, c, None, None]),
    fancy("fancy_none_and_int", lambda x, a, b, c, d, e: x[1, b, None, d, 1]),
    fancy("fancy_ellipsis_int_none", lambda x, a, b, c, d, e: x[..., 1, d, None]),
    fancy("fancy_tuple_of_tuple", lambda x, a, b, c, d, e: x[((0,),)]),
    fancy("fancy_tuple_index", lambda x, a, b, c, d, e: x[(1, 0, -1), b, c, d, :]),
    fancy("fancy_tuple_repeats", lambda x, a, b, c, d, e: x[(1, 1), b, c, d, :]),
    fancy("fancy_tuple_with_tensors", lambda x, a, b, c, d, e: x[a, b, c, (1, 2, 3), ...]),
    fancy("fancy_nested_list", lambda x, a, b, c, d, e: x[a, b, c, [[1], [2], [3]], ...]),
    fancy("fancy_two_tuples", lambda x, a, b, c, d, e: x[a, (2, 1, 0), c, (-2, 1, 0), e]),
    fancy("fancy_tensor_in_tuple", lambda x, a, b, c, d, e: x[(a, (1, 1))]),
    lib_op("fancy_with_tensors_2d_and_0d", [(2, 3)],
           lambda lib, F, x: x[lib.tensor([[0, 0, 0], [0, 0, 0]]), lib.tensor(1)]),
    lib_op("fancy_with_tensors_broadcast", [(2, 3)],
           lambda lib, F, x: x[lib.tensor([1]), lib.tensor([[0, 0, 0], [0, 0, 0]])]),
    lib_op("fancy_with_negative_tensors", [(2, 3)],
           lambda lib, F, x: x[lib.tensor([[0, 1, -1], [-1, -2, 0]]), lib.tensor([2, 1, -1])]),
    lib_op("fancy_indexing_inf", None, lambda lib, F, x: x[lib.tensor([0, 1, 2, 2])], vals=[[INF, -INF, NAN]]),
    op("index_list_bool_and_int", [(5, 6)], lambda x: x[[True, False, 2]]),
    op("index_repeated_ints", [(3, 4)], lambda x: x[:, [1, 1, 3]]),
    op("index_bool_mask", [(5, 6)], lambda x: x[x > 0]),
    lib_op("index_bool_mask_rows", [(5, 6)], lambda lib, F, x: x[lib.tensor([True, False, True, True, False])]),
    op("index_bool_mask_and_slice", [(5, 6)], lambda x: x[x[:, 0] > 0, 1:3]),
]

# ---------------------------------------------------------------------------------------------------------
# Neural-network functions (test_binary_crossentropy ... test_one_hot, test_scaled_dot_product_attention).
CLASSES = np.random.default_rng(9).integers(0, 10, size=32)
CLASSES_3D = np.random.default_rng(10).integers(0, 10, size=(8, 3, 3))
WEIGHT = np.random.default_rng(11).uniform(0.1, 2.0, size=10)
SMALL_CLASSES = np.array([0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 3])
Q = [(2, 4, 16, 8)] * 3  # (B, nh, T, hs)


def targets(lib: Any, classes: np.ndarray = CLASSES) -> Any:
    return lib.tensor(classes)


def weights(lib: Any, x: Any) -> Any:
    """Per-class weights in x's dtype (PyTorch wants them so, and gives them no gradient)."""
    return lib.tensor(WEIGHT, dtype=x.dtype)


NN = [
    lib_op("bce", [(32, 10), (32, 10)], lambda lib, F, x, y: F.binary_cross_entropy(x.sigmoid(), y.clip(0, 1))),
    lib_op("bce_with_logits", [(32, 10), (32, 10)],
           lambda lib, F, x, y: F.binary_cross_entropy_with_logits(x, y.clip(0, 1))),
    lib_op("bce_with_logits_pos_weight", [(32, 10), (32, 10)], lambda lib, F, x, y: F.binary_cross_entropy_with_logits(
        x, y.clip(0, 1), pos_weight=weights(lib, x))),
    lib_op("bce_with_logits_weight", [(32, 10), (32, 10)],
           lambda lib, F, x, y: F.binary_cross_entropy_with_logits(x, y.clip(0, 1), weight=weights(lib, x))),
    lib_op("bce_weight", [(32, 10), (32, 10)],
           lambda lib, F, x, y: F.binary_cross_entropy(x.sigmoid(), y.clip(0, 1), weight=weights(lib, x))),
    lib_op("bce_with_logits_extreme", [(32, 10), (32, 10)],
           lambda lib, F, x, y: F.binary_cross_entropy_with_logits(x * 100, y.clip(0, 1))),
    lib_op("cross_entropy", [(32, 10)], lambda lib, F, x: F.cross_entropy(x, targets(lib))),
    lib_op("cross_entropy_weight", [(32, 10)], lambda lib, F, x: F.cross_entropy(x, targets(lib), weights(lib, x))),
    lib_op("cross_entropy_k_dim", [(8, 10, 3, 3)], lambda lib, F, x: F.cross_entropy(x, targets(lib, CLASSES_3D))),
    lib_op("cross_entropy_k_dim_none", [(8, 10, 3, 3)],
           lambda lib, F, x: F.cross_entropy(x, targets(lib, CLASSES_3D), reduction="none")),
    lib_op("cross_entropy_large_logits", [(32, 10)], lambda lib, F, x: F.cross_entropy(x * 1000, targets(lib))),
    lib_op("cross_entropy_combined_args", [(12, 10)], lambda lib, F, x: F.cross_entropy(
        x, targets(lib, SMALL_CLASSES), reduction="mean", ignore_index=0, label_smoothing=0.3)),
    lib_op("cross_entropy_weight_ignore_smoothing", [(12, 10)], lambda lib, F, x: F.cross_entropy(
        x, targets(lib, SMALL_CLASSES), weights(lib, x), ignore_index=1, label_smoothing=0.2)),
    lib_op("cross_entropy_all_ignored", [(4, 10)],
           lambda lib, F, x: F.cross_entropy(x, lib.tensor([-100, -100, -100, -100]))),
    lib_op("nll_loss", [(32, 10)], lambda lib, F, x: F.nll_loss(F.log_softmax(x, dim=1), targets(lib))),
    lib_op("nll_loss_3d", [(8, 10, 3, 3)],
           lambda lib, F, x: F.nll_loss(F.log_softmax(x, dim=1), targets(lib, CLASSES_3D))),
    lib_op("nll_loss_3d_weight_sum", [(8, 10, 3, 3)], lambda lib, F, x: F.nll_loss(
        F.log_softmax(x, dim=1), targets(lib, CLASSES_3D), weights(lib, x), reduction="sum")),
    lib_op("nll_loss_ignore_index", None, lambda lib, F, x: F.nll_loss(
        F.log_softmax(x, dim=1), lib.tensor([0, 1, 2]), ignore_index=1),
        vals=[[[2.0, 0.5, -1.0], [1.5, 2.5, -0.5], [0.0, -2.0, 1.0]]]),
    lib_op("mse_loss", [(32, 10), (32, 10)], lambda lib, F, x, y: F.mse_loss(x, y)),
    lib_op("mse_loss_broadcast_free_none", [(4, 5), (4, 5)], lambda lib, F, x, y: F.mse_loss(x, y, reduction="none")),
    lib_op("mse_loss_sum", [(4, 5), (4, 5)], lambda lib, F, x, y: F.mse_loss(x, y, reduction="sum")),
    lib_op("one_hot", [], lambda lib, F: F.one_hot(lib.tensor([1, 2, 4]), 6)),
    lib_op("one_hot_inferred", [], lambda lib, F: F.one_hot(lib.tensor([1, 2, 4]))),
    lib_op("one_hot_3d", [], lambda lib, F: F.one_hot(lib.tensor([[[1, 2, 3], [0, 3, 5]], [[1, 2, 3], [0, 3, 5]]]), 8)),
    lib_op("normalize", SQ, lambda lib, F, x: F.normalize(x)),
    lib_op("normalize_dim_0_p1", SQ, lambda lib, F, x: F.normalize(x, p=1.0, dim=0)),
    lib_op("normalize_zero_row", None, lambda lib, F, x: F.normalize(x, dim=-1), vals=[[[0.0, 0.0], [3.0, 4.0]]]),
    lib_op("layer_norm", [(4, 7, 16), (16,), (16,)], lambda lib, F, x, w, b: F.layer_norm(x, (16,), w, b)),
    lib_op("layer_norm_no_affine", [(4, 7, 16)], lambda lib, F, x: F.layer_norm(x, [16])),
    lib_op("layer_norm_two_dims", [(4, 7, 16), (7, 16), (7, 16)],
           lambda lib, F, x, w, b: F.layer_norm(x, (7, 16), w, b, eps=1e-3)),
    lib_op("embedding", [(10, 8)], lambda lib, F, w: F.embedding(lib.tensor([[1, 2, 4], [4, 3, 9]]), w)),
    lib_op("embedding_repeats", [(10, 8)], lambda lib, F, w: F.embedding(lib.tensor([1, 1, 1, 0]), w)),
    lib_op("dropout_p_0", SQ, lambda lib, F, x: F.dropout(x, p=0.0)),
    lib_op("dropout_eval", SQ, lambda lib, F, x: F.dropout(x, p=0.5, training=False)),
    lib_op("sdpa", Q, lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
    lib_op("sdpa_float_mask", Q + [(2, 4, 16, 16)],  # a constant mask: minigrad refuses one that requires grad
           lambda lib, F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m.detach())),
    lib_op("sdpa_bool_mask", Q + [(16, 16)],
           lambda lib, F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=(m > -1.5).detach())),
    lib_op("sdpa_causal", Q, lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
    lib_op("sdpa_scale", Q, lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v, scale=0.3)),
    lib_op("sdpa_mismatch_lengths", [(2, 4, 4, 8), (2, 4, 16, 8), (2, 4, 16, 8)],
           lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
    lib_op("sdpa_mismatch_lengths_causal", [(2, 4, 4, 8), (2, 4, 16, 8), (2, 4, 16, 8)],
           lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),
    lib_op("sdpa_3d", [(3, 16, 8)] * 3, lambda lib, F, q, k, v: F.scaled_dot_product_attention(q, k, v)),
]
for _r in ("mean", "sum", "none"):
    NN += [
        lib_op(f"bce_{_r}", [(32, 10), (32, 10)],
               lambda lib, F, x, y, r=_r: F.binary_cross_entropy(x.sigmoid(), y.clip(0, 1), reduction=r)),
        lib_op(f"bce_with_logits_{_r}", [(32, 10), (32, 10)],
               lambda lib, F, x, y, r=_r: F.binary_cross_entropy_with_logits(x, y.clip(0, 1), reduction=r)),
        lib_op(f"cross_entropy_{_r}", [(32, 10)],
               lambda lib, F, x, r=_r: F.cross_entropy(x, targets(lib), reduction=r)),
        lib_op(f"nll_loss_weight_{_r}", [(32, 10)], lambda lib, F, x, r=_r: F.nll_loss(
            F.log_softmax(x, dim=1), targets(lib), weights(lib, x), reduction=r)),
    ]
for _ls in (0.3, 0.7, 1.0):
    NN.append(lib_op(f"cross_entropy_smoothing_{_ls}", [(32, 10)],
                     lambda lib, F, x, ls=_ls: F.cross_entropy(x, targets(lib), label_smoothing=ls)))
for _i in (-1, 0, 3):
    NN.append(lib_op(f"cross_entropy_ignore_index_{_i}", [(12, 10)],
                     lambda lib, F, x, i=_i: F.cross_entropy(x, targets(lib, SMALL_CLASSES), ignore_index=i)))

# ---------------------------------------------------------------------------------------------------------
# Casts (test_cast): a float-to-integer cast leaves the graph, a float-to-float one stays in it.
CASTS = [
    op("cast_float", [(3, 3)], lambda x: x.float()),
    op("cast_double", [(3, 3)], lambda x: x.double()),
    op("cast_half_forward", [(3, 3)], lambda x: x.half(), forward_only=True),
    op("cast_half_then_float", [(3, 3)], lambda x: x.half().float(), atol=1e-3, rtol=1e-3),
    op("cast_int_leaves_graph", [(3, 3)], lambda x: (x * 3).int()),
    op("cast_long", [(3, 3)], lambda x: (x * 3).long()),
    op("cast_bool", [(3, 3)], lambda x: x.bool()),
    op("cast_int_to_float", None, lambda x: x.float(), vals=[[0, 1, 2, 3]]),
    op("cast_bool_to_float", None, lambda x: x.float(), vals=[[True, False]]),
    op("cast_to_dtype", [(3, 3)], lambda x: x.to(torch.float64), lambda x: x.to(np.float64)),
    op("int_float_promotion", None, lambda x, y: x * y, vals=[[1, 2, 3], [0.5, 1.5, 2.5]]),
    op("int_0d_float_promotion", None, lambda x, y: x + y, vals=[[1, 2, 3], 0.5]),
    op("int_mean", None, lambda x: x.float().mean(), vals=[[1, 2, 4]]),
    op("int_exp_is_float32", None, lambda x: x.exp(), vals=[[1, 2, 3]]),
]

CASES = FACTORIES + ARITHMETIC + UNARY + COMPARISONS + REDUCTIONS + MATMUL + SHAPE + INDEXING + NN + CASTS


@pytest.mark.parametrize("case, dtype", dtype_params(CASES))
def test_op(case: Case, dtype: Any, device: str) -> None:
    helper_test_op(case.shapes, *case.functions(device), dtype=dtype, device=device, **case.options)


# ---------------------------------------------------------------------------------------------------------
# Refused inputs (tinygrad's helper_test_exception cases, and a few more): both libraries raise; minigrad's
# error is the expected class, one line, and names the op or the problem (`match`). With torch_refuses=False,
# minigrad refuses on purpose what PyTorch lets through (several ellipses, float index lists, a mask with
# is_causal).
REFUSED = [
    refuse("int_pow_negative", None, lambda lib, F, x: x**-2, RuntimeError, "pow", vals=[[-2, 0, 2]]),
    refuse("cumsum_0d_dim_1", [()], lambda lib, F, x: x.cumsum(1), IndexError, "dim"),
    refuse("cumsum_dim_out_of_range", [(20,)], lambda lib, F, x: x.cumsum(1), IndexError, "dim"),
    refuse("cumsum_negative_dim_out_of_range", [(20,)], lambda lib, F, x: x.cumsum(-2), IndexError, "dim"),
    refuse("sum_dim_out_of_range", R4, lambda lib, F, x: x.sum(5), IndexError, "dim"),
    refuse("sum_0d_dim_1", [()], lambda lib, F, x: x.sum(1), IndexError, "dim"),
    refuse("sum_0d_dims_1", [()], lambda lib, F, x: x.sum((1,)), IndexError, "dim"),
    refuse("dot_1d_mismatch", [(4,), (1, 2)], lambda lib, F, x, y: x @ y, ValueError, "matmul"),
    refuse("dot_2d_1d_mismatch", [(2, 1), (4,)], lambda lib, F, x, y: x @ y, ValueError, "matmul"),
    refuse("dot_1d_1d_mismatch", [(1,), (4,)], lambda lib, F, x, y: x @ y, ValueError, "matmul"),
    refuse("dot_2d_mismatch", [(2, 4), (1, 3)], lambda lib, F, x, y: x @ y, ValueError, "matmul"),
    refuse("dot_0d", [(), ()], lambda lib, F, x, y: x @ y, ValueError, "matmul"),
    refuse("dot_0d_matrix", [(), (3, 3)], lambda lib, F, x, y: x @ y, ValueError, "matmul"),
    refuse("permute_too_few", R4, lambda lib, F, x: x.permute((0, 2)), RuntimeError, "permute"),
    refuse("permute_too_many", R4, lambda lib, F, x: x.permute((0, 1, 2, 3, 3, 3)), RuntimeError, "permute"),
    refuse("permute_repeated", R4, lambda lib, F, x: x.permute((0, 0, 1, 2)), RuntimeError, "permute"),
    refuse("reshape_two_minus_ones", [(3, 4)], lambda lib, F, x: x.reshape((-1, -1, 2)), ValueError, "(?i)reshape"),
    refuse("reshape_wrong_size", [(3, 4)], lambda lib, F, x: x.reshape((5, 2)), ValueError, "(?i)reshape"),
    refuse("flip_repeated", [(3, 4)], lambda lib, F, x: x.flip((0, 0)), RuntimeError, "flip"),
    refuse("flip_repeated_negative", [(3, 4)], lambda lib, F, x: x.flip((1, -1)), RuntimeError, "flip"),
    refuse("squeeze_out_of_range", X4, lambda lib, F, x: x.squeeze(50), IndexError, "dim"),
    refuse("squeeze_0d_out_of_range", [()], lambda lib, F, x: x.squeeze(1), IndexError, "dim"),
    refuse("squeeze_0d_negative_out_of_range", [()], lambda lib, F, x: x.squeeze(-2), IndexError, "dim"),
    refuse("expand_shrink", [(4, 3, 1, 6)], lambda lib, F, x: x.expand(4, 1, 1, 6), ValueError, "expand"),
    refuse("expand_wrong_size", [(4, 3, 1, 6)], lambda lib, F, x: x.expand(4, 6, 1, 6), ValueError, "expand"),
    refuse("expand_fewer_dims", [(4, 3, 1, 6)], lambda lib, F, x: x.expand(3, 1, 6), ValueError, "expand"),
    refuse("expand_to_zero", [(4, 3, 2, 6)], lambda lib, F, x: x.expand(4, 3, 0, 6), ValueError, "expand"),
    refuse("repeat_fewer_dims", [(4, 6, 3)], lambda lib, F, x: x.repeat(2, 4), ValueError, "repeat"),
    refuse("cat_0d", [(), ()], lambda lib, F, x, y: lib.cat((x, y)), RuntimeError, "cat"),
    refuse("cat_shapes_differ", [(2, 3), (2, 4)], lambda lib, F, x, y: lib.cat((x, y)), ValueError, "(?i)concat"),
    refuse("cat_dim_out_of_range", [(2, 3)] * 2, lambda lib, F, x, y: lib.cat((x, y), 2), IndexError, "cat"),
    refuse("stack_dim_out_of_range", [(4, 5)], lambda lib, F, x: lib.stack((x, x), dim=77), ValueError,
           "(?i)stack.*axis 77"),
    refuse("stack_shapes_differ", [(2, 3), (3, 2)], lambda lib, F, x, y: lib.stack((x, y)), ValueError, "(?i)stack"),
    refuse("index_too_many", [(4, 3)], lambda lib, F, x: x[1, 77, 77, 77], IndexError, "too many"),
    refuse("index_out_of_bounds", [(4, 3)], lambda lib, F, x: x[1, 3], IndexError, "out of bounds"),
    refuse("index_negative_out_of_bounds", [(4, 3)], lambda lib, F, x: x[1, -4], IndexError, "out of bounds"),
    refuse("index_two_ellipses", [(4, 3)], lambda lib, F, x: x[..., ...], IndexError, "ellipsis", torch_refuses=False),
    refuse("slice_step_0", [(4, 3)], lambda lib, F, x: x[::0, 1], ValueError, "step"),
    refuse("slice_0d", [()], lambda lib, F, x: x[:], IndexError, "0-d|dimension"),
    refuse("index_0d", [()], lambda lib, F, x: x[0], IndexError, "0-d|dimension"),
    refuse("index_float_tensor", [(10, 11)], lambda lib, F, x: x[lib.tensor(1.1)], IndexError, "integer|bool"),
    refuse("index_float_list", [(10, 11)], lambda lib, F, x: x[[1.1]], IndexError, "integer|bool", torch_refuses=False),
    refuse("index_bool_wrong_size", [(10, 11)], lambda lib, F, x: x[lib.tensor([True, False])], IndexError, "bool"),
    refuse("index_tensors_do_not_broadcast", [(10, 11, 12)],
           lambda lib, F, x: x[lib.tensor([[0], [1], [2]]), lib.tensor([[0, 1, 2, 3]]), lib.tensor([0, 1])],
           IndexError, "broadcast"),
    refuse("gather_index_fewer_dims", [(4, 5, 6)], lambda lib, F, x: x.gather(0, lib.tensor([1])), ValueError,
           "gather"),
    refuse("gather_index_too_big", [(2, 1, 1)], lambda lib, F, x: x.gather(0, lib.tensor(GATHER_INDEX)),
           ValueError, "gather"),
    refuse("gather_float_index", [(4, 5)], lambda lib, F, x: x.gather(0, x), TypeError, "gather"),
    refuse("sdpa_mask_and_causal", Q + [(2, 4, 16, 16)],
           lambda lib, F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, attn_mask=m, is_causal=True),
           RuntimeError, "scaled_dot_product_attention", torch_refuses=False),
    refuse("cross_entropy_target_shape", [(32, 10)],
           lambda lib, F, x: F.cross_entropy(x, lib.tensor(CLASSES[:, None])), ValueError, "cross_entropy"),
    refuse("cross_entropy_target_out_of_range", [(4, 10)],
           lambda lib, F, x: F.cross_entropy(x, lib.tensor([0, 1, 10, 2])), IndexError, "cross_entropy"),
    refuse("cross_entropy_reduction_typo", [(32, 10)],
           lambda lib, F, x: F.cross_entropy(x, targets(lib), reduction="typo"), ValueError, "reduction"),
    refuse("nll_loss_reduction_typo", [(32, 10)],
           lambda lib, F, x: F.nll_loss(x, targets(lib), reduction="typo"), ValueError, "reduction"),
    refuse("bce_not_probabilities", [(4, 5), (4, 5)],
           lambda lib, F, x, y: F.binary_cross_entropy(x, y.clip(0, 1)), RuntimeError, "binary_cross_entropy"),
    refuse("one_hot_float", [(4,)], lambda lib, F, x: F.one_hot(x, 3), TypeError, "one_hot"),
    refuse("softmax_int", None, lambda lib, F, x: x.softmax(-1), NotImplementedError, "softmax", vals=[[1, 2, 3]]),
    refuse("clip_no_bounds", [(4, 5)], lambda lib, F, x: x.clip(None, None), RuntimeError, "clamp"),
    refuse("linspace_negative_steps", [], lambda lib, F: lib.linspace(1, 2, -1), ValueError, "linspace"),
    refuse("max_dim_arithmetic", [(4, 5)], lambda lib, F, x: x.max(1) + 1, TypeError, "tuple"),
    refuse("list_operand", [(2,)], lambda lib, F, x: x + [1.0, 2.0], TypeError, "list"),
    refuse("item_of_many", [(2,)], lambda lib, F, x: x.item(), ValueError, "item|element"),
    refuse("bool_of_many", [(2,)], lambda lib, F, x: bool(x), RuntimeError, "ambiguous|bool"),
    refuse("int_requires_grad", [], lambda lib, F: lib.tensor([1, 2], requires_grad=True), TypeError, "float"),
]
assert len({case.name for case in REFUSED}) == len(REFUSED), "two refused cases share a name"


@pytest.mark.parametrize("case", REFUSED, ids=[case.name for case in REFUSED])
def test_refused(case: Case, device: str) -> None:
    helper_test_exception(case.shapes, *case.functions(device), device=device, **case.options)


# The helper itself: each of these minigrad functions differs from PyTorch's in one way, which it must catch.
def exp_then_write_into_the_input(x: Any) -> Any:
    y = x.exp()
    x.data[0] = 9.0
    return y


WRONG = {
    "value": (lambda x: x.exp(), lambda x: x.exp() + 1e-3),
    "shape": (lambda x: x.exp(), lambda x: x.exp()[None]),
    "dtype": (lambda x: x.exp(), lambda x: x.exp().double()),
    "requires_grad": (lambda x: x.exp(), lambda x: x.exp().detach()),
    "output_count": (lambda x: x.exp(), lambda x: (x.exp(), x.exp())),
    "gradient": (lambda x: x.exp(), lambda x: x.exp() + (x - x.detach())),  # the same values, gradient + 1
    # x.T's values with the identity's gradient: a sum's all-ones upstream gradient could not tell them apart
    "gradient_transposed": (lambda x: x.T, lambda x: x.T.detach() + (x - x.detach())),
    "mutation": (lambda x: x.exp(), exp_then_write_into_the_input),
}


@pytest.mark.parametrize("flaw", WRONG)
def test_the_helper_catches_a_wrong(flaw: str) -> None:
    with pytest.raises(AssertionError):
        helper_test_op([(3, 3)], *WRONG[flaw], dtype=np.float32, device="cpu")
