"""Checkers for the ops of the learner's engine (0.12-0.26): each backward on its own, on NumPy arrays.

An op is run as the learner's backward walk runs it: `op = Op(**params)`, `y = op.forward(*arrays)`,
`op.backward(gy)`, and each gradient summed back to its input's shape by sum_to where broadcasting widened it.
Every case is compared with minigrad's gradient of the same function (to 1e-9 in float64) and with central
differences of sum(gy * forward(...)) (to 1e-5); the cases broadcast both ways, have size-1 axes and 0-d arrays,
and one more runs in float32, whose gradients must stay float32. A wrong gradient is named by its input, and
when it is off by a constant factor, has the wrong sign, is transposed, or lacks the upstream gradient, the
message says so. Read next: engine.py (the core's checkers).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import minigrad as mg
from minigrad.core.autograd import sum_to
from tutorials.exercises.checks.engine_guard import only_numpy
from tutorials.exercises.grading import Exercise, Wrong, compare

NAMES = ("a", "b")


@dataclass
class Case:
    """One trial of an op: its settings, its inputs (float64), and how the message names it."""

    what: str
    arrays: list[np.ndarray]
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.arrays = [np.array(a, dtype=np.float64) for a in self.arrays]  # arrays, 0-d ones included


@dataclass(frozen=True)
class OpSpec:
    """How an op is checked: minigrad's twin (a function of tensors and the op's settings), its cases, and hints for
    the mistakes its backward is known for: (what that mistake gives, from the arrays, gy and params; the message)."""

    twin: Callable[..., mg.Tensor]
    cases: Callable[[np.random.Generator], list[Case]]
    mistakes: tuple[tuple[Callable[..., list[np.ndarray]], str], ...] = ()
    remark: str = "通过"


def _run(op_class: Any, case: Case, gy: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """The learner's op on copies of the case's inputs: its output and its gradients, summed to each input's shape."""
    if not isinstance(op_class, type) or not hasattr(op_class, "backward"):
        raise Wrong(f"答案应是一个运算类（有 forward 和 backward），你的是 {type(op_class).__name__}")
    arrays = [a.copy() for a in case.arrays]
    op = op_class(**case.params)
    y = np.asarray(op.forward(*arrays))
    upstream = gy.copy()
    try:
        gxs = op.backward(upstream)
    except (ValueError, IndexError, TypeError) as error:  # most often two shapes that do not fit
        shapes = "、".join(f"{_name(i, len(arrays))} {a.shape}" for i, a in enumerate(arrays))
        raise Wrong(f"{case.what}：backward 出错（{type(error).__name__}: {' '.join(str(error).split())[:80]}）"
                    f"——对一对形状：gy {gy.shape}，{shapes}") from error
    if not np.array_equal(upstream, gy):
        raise Wrong("backward 原地修改了 gy：它可能还被别的运算用着，算出新数组再返回")
    if any(not np.array_equal(a, b) for a, b in zip(arrays, case.arrays)):
        raise Wrong("backward 修改了前向存下的输入")
    gxs = gxs if isinstance(gxs, tuple) else (gxs,)
    if len(gxs) != len(arrays):
        raise Wrong(f"backward 应按输入的顺序返回 {len(arrays)} 个梯度（一个元组），你返回了 {len(gxs)} 个")
    summed = []
    for i, (gx, a) in enumerate(zip(gxs, arrays)):
        name = _name(i, len(arrays))
        if gx is None or not isinstance(gx, (np.ndarray, np.generic, float, int)):
            raise Wrong(f"{name} 的梯度应是一个 NumPy 数组，你的是 {type(gx).__name__}")
        gx = np.asarray(gx)
        if gx.shape != a.shape:
            try:
                widened = np.broadcast_shapes(gx.shape, a.shape) == gx.shape
            except ValueError:
                widened = False
            if not widened:
                transposed = gx.ndim >= 2 and gx.shape[:-2] + gx.shape[-2:][::-1] == a.shape
                raise Wrong(f"{case.what}：{name} 的梯度形状是 {gx.shape}，应和 {name} 一样是 {a.shape}"
                            + ("（你的正好是转置过的形状）" if transposed else ""))
            gx = sum_to(gx, a.shape)
        summed.append(gx)
    return y, summed


def _name(i: int, n: int) -> str:
    return "x" if n == 1 else NAMES[i]


def _twin_grads(spec: OpSpec, case: Case, gy: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """minigrad's output and gradients for the same function (the checker may call minigrad; the answer may not)."""
    tensors = [mg.tensor(a, requires_grad=True, dtype="float64") for a in case.arrays]
    y = spec.twin(*tensors, **case.params)
    y.backward(mg.tensor(gy, dtype="float64"))
    return y.numpy(), [t.grad.numpy() if t.grad is not None else np.zeros(t.shape) for t in tensors]


def _numeric(op_class: Any, case: Case, gy: np.ndarray, eps: float = 1e-6) -> list[np.ndarray]:
    """Central differences of sum(gy * forward(*arrays)) with respect to each input, in float64."""
    def f(arrays: list[np.ndarray]) -> float:
        y = np.asarray(op_class(**case.params).forward(*arrays))
        return float((gy * np.where(np.isfinite(y), y, 0.0)).sum())  # a position filled with -inf is a constant

    grads = []
    for i, a in enumerate(case.arrays):
        g = np.zeros(a.shape)
        for index in np.ndindex(a.shape):
            shifted = [b.copy() for b in case.arrays]
            shifted[i][index] = a[index] + eps
            up = f(shifted)
            shifted[i][index] = a[index] - eps
            g[index] = (up - f(shifted)) / (2 * eps)
        grads.append(g)
    return grads


def diagnose(got: np.ndarray, expected: np.ndarray, who: str, what: str,
             others: list[tuple[np.ndarray, str]] = ()) -> None:
    """Wrong unless got matches expected; names the kind of mistake where the numbers show one."""
    if got.shape == expected.shape and np.allclose(got, expected, rtol=1e-9, atol=1e-10):
        return
    if got.shape == expected.shape and np.any(expected != 0) and np.allclose(got, -expected, rtol=1e-9, atol=1e-10):
        raise Wrong(f"{what}：{who}的符号反了")
    for candidate, hint in others:
        if candidate.shape == got.shape and np.allclose(got, candidate, rtol=1e-9, atol=1e-10):
            raise Wrong(f"{what}：{who}不对——{hint}")
    if got.shape == expected.shape and np.any(expected != 0):
        if not np.any(got):
            raise Wrong(f"{what}：{who}全是 0：梯度没有传过来")
        scale = float((got * expected).sum() / (expected * expected).sum())
        if np.allclose(got, scale * expected, rtol=1e-7, atol=1e-10):
            raise Wrong(f"{what}：{who}差了一个常数倍，是应有值的 {scale:.4g} 倍")
        if got.ndim >= 2 and got.shape[-1] == got.shape[-2] and np.allclose(got, expected.swapaxes(-1, -2)):
            raise Wrong(f"{what}：{who}是应有值的转置（最后两个轴反了）")
    compare(got, expected, f"{what}：{who}", atol=1e-10, rtol=1e-9)


def make_check(spec: OpSpec, number: str) -> Callable[[Any], str]:
    """The checker of one op: every case against minigrad and central differences, then float32's dtype."""
    def check(op_class: Any) -> str:
        rng = np.random.default_rng(int(number.split(".")[1]))
        for case in spec.cases(rng):
            shape = spec.twin(*[mg.tensor(a, dtype="float64") for a in case.arrays], **case.params).shape
            gy = _normal(rng, shape)
            expected_y, expected = _twin_grads(spec, case, gy)
            y, grads = _run(op_class, case, gy)
            _compare_forward(y, expected_y, case.what)
            _, local = _twin_grads(spec, case, np.ones_like(gy))  # the local derivatives alone (gy = 1)
            mistakes = [(make(*case.arrays, gy=gy, **case.params), hint) for make, hint in spec.mistakes]
            for i, (g, e, n) in enumerate(zip(grads, expected, _numeric(op_class, case, gy))):
                others = [(m[i], hint) for m, hint in mistakes if m[i] is not None]
                if not np.allclose(local[i], e):
                    others.append((local[i], "忘了乘上游梯度 gy（链式法则：本地导数 × gy）"))
                if len(grads) == 2 and expected[1 - i].shape == e.shape and not np.allclose(expected[1 - i], e):
                    others.append((expected[1 - i], "像是另一个输入的梯度：按输入的顺序返回（a 的在前）"))
                who = f"{_name(i, len(grads))} 的梯度"
                diagnose(g, e, who, case.what, others)
                compare(g, n, f"{case.what}：{who}（和中心差分比）", atol=1e-6, rtol=1e-5)
        _check_float32(op_class, spec, rng)
        return spec.remark

    return check


def _compare_forward(y: np.ndarray, expected: np.ndarray, what: str) -> None:
    finite = np.isfinite(expected)
    if y.shape == expected.shape and np.array_equal(y[~finite], expected[~finite]):
        y, expected = np.where(finite, y, 0.0), np.where(finite, expected, 0.0)
    compare(y, expected, f"{what}：前向的结果（forward 是写好的，别改它）", atol=1e-10, rtol=1e-9)


def _check_float32(op_class: Any, spec: OpSpec, rng: np.random.Generator) -> None:
    case = spec.cases(rng)[0]
    case32 = Case(case.what, [], case.params)
    case32.arrays = [a.astype(np.float32) for a in case.arrays]
    y = np.asarray(op_class(**case.params).forward(*case32.arrays))
    _, grads = _run(op_class, case32, _normal(rng, y.shape).astype(np.float32))
    for i, g in enumerate(grads):
        if g.dtype != np.float32:
            raise Wrong(f"float32 的输入，{_name(i, len(grads))} 的梯度却是 {g.dtype}：梯度要和 gy 同一个 dtype。"
                        "float64 的 NumPy 标量（np.sqrt(np.pi)）或整数数组的和（mask.sum()）参与运算，"
                        "会把 float32 变成 float64：用 Python 的数（np.pi ** 0.5），或 .astype(gy.dtype)")


# --------------------------------------------------------------------------------------------------
# The cases


def _normal(rng: np.random.Generator, shape: tuple) -> np.ndarray:
    return np.asarray(rng.standard_normal(shape), dtype=np.float64)  # an array even for shape ()


def _pairs(rng: np.random.Generator, positive_b: bool = False) -> list[Case]:
    shapes = [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)), ((3, 1), (1, 4)), ((2, 3, 4), (3, 1)),
              ((1, 3), (2, 1, 3)), ((), (2, 3)), ((2, 3), ()), ((), ())]
    cases = []
    for sa, sb in shapes:
        a, b = _normal(rng, sa), _normal(rng, sb)
        if positive_b:
            b = np.sign(b) * (0.5 + np.abs(b))  # away from 0
        cases.append(Case(f"a {sa}、b {sb}", [a, b]))
    return cases


def _unary(rng: np.random.Generator, low: float | None = None, **params: Any) -> list[Case]:
    cases = []
    for shape in ((), (5,), (2, 1, 3)):
        x = _normal(rng, shape) * 1.5
        if low is not None:
            x = low + np.abs(x)
        cases.append(Case(f"x {shape}", [x], dict(params)))
    return cases


def _pow_cases(rng: np.random.Generator) -> list[Case]:
    return [Case(f"x ** {p}，x {shape}", [0.5 + np.abs(_normal(rng, shape))], {"exponent": p})
            for p, shape in ((2.0, (3, 4)), (0.5, (5,)), (-1.0, (2, 1, 3)), (3.0, ()))]


REDUCTIONS = [((3, 4), None, False), ((3, 4), 0, False), ((3, 4), -1, True), ((2, 3, 4), (0, 2), False),
              ((2, 3, 4), 1, True), ((), None, False), ((4,), 0, True), ((2, 3, 4), None, True)]


def _reduce_cases(rng: np.random.Generator) -> list[Case]:
    return [Case(f"x {shape} 沿 axis={axis}、keepdims={keep}", [_normal(rng, shape)],
                 {"axis": axis, "keepdims": keep}) for shape, axis, keep in REDUCTIONS]


def _max_cases(rng: np.random.Generator) -> list[Case]:
    ties = Case("有并列最大值的 [[1, 3, 3], [2, 0, 2]] 沿 axis=-1", [np.array([[1.0, 3, 3], [2, 0, 2]])],
                {"axis": -1, "keepdims": True})
    return _reduce_cases(rng) + [ties]


def _reshape_cases(rng: np.random.Generator) -> list[Case]:
    return [Case(f"{a} 变成 {b}", [_normal(rng, a)], {"shape": b})
            for a, b in (((2, 3, 4), (6, 4)), ((3, 4), (12,)), ((2, 6), (3, 2, 2)), ((), (1, 1)))]


def _swap_cases(rng: np.random.Generator) -> list[Case]:
    return [Case(f"x {shape} 交换轴 {a1} 和 {a2}", [_normal(rng, shape)], {"axis1": a1, "axis2": a2})
            for shape, a1, a2 in (((2, 3, 4), 0, 2), ((2, 3, 4), 1, -1), ((2, 1, 3, 4), -1, -2), ((3, 3), 0, 1))]


def _index_cases(rng: np.random.Generator) -> list[Case]:
    rows = np.array([0, 2, 2, 4, 0])
    return [Case("x (5, 3) 按行号 [0, 2, 2, 4, 0] 查表（有重复）", [_normal(rng, (5, 3))], {"index": rows}),
            Case("x (4, 5) 取 x[arange(4), [1, 1, 3, 1]]", [_normal(rng, (4, 5))],
                 {"index": (np.arange(4), np.array([1, 1, 3, 1]))}),
            Case("x (5, 3) 按二维的行号 [[0, 1], [1, 1]] 查表", [_normal(rng, (5, 3))],
                 {"index": np.array([[0, 1], [1, 1]])}),
            Case("x (2, 6, 4) 取 x[:, :, 1:3]", [_normal(rng, (2, 6, 4))],
                 {"index": (slice(None), slice(None), slice(1, 3))}),
            Case("x (6, 3) 取 x[:4]", [_normal(rng, (6, 3))], {"index": slice(None, 4)}),
            Case("x (3, 4) 取 x[1]", [_normal(rng, (3, 4))], {"index": 1})]


def _mask_cases(rng: np.random.Generator) -> list[Case]:
    causal = np.triu(np.ones((3, 3), dtype=bool), k=1)
    return [Case("x (3, 4)、随机的遮罩、填 −inf", [_normal(rng, (3, 4))],
                 {"mask": rng.random((3, 4)) < 0.4, "value": -np.inf}),
            Case("x (2, 3, 3)、因果遮罩 (3, 3)、填 −inf", [_normal(rng, (2, 3, 3))],
                 {"mask": causal, "value": -np.inf}),
            Case("x (3,) 被遮罩 (2, 3) 广播、填 0.5", [_normal(rng, 3)],
                 {"mask": np.array([[True, False, False], [False, False, True]]), "value": 0.5})]


def _matmul_cases(rng: np.random.Generator) -> list[Case]:
    shapes = [((3, 3), (3, 3)), ((2, 3), (3, 4)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)), ((2, 1, 3, 4), (3, 4, 2)),
              ((2, 2, 3, 3), (2, 2, 3, 3))]
    return [Case(f"a {sa} @ b {sb}", [_normal(rng, sa), _normal(rng, sb)]) for sa, sb in shapes]


# --------------------------------------------------------------------------------------------------
# Typical mistakes, per op: what each gives (one candidate gradient per input, None where it says nothing)


def _scatter_by_assignment(x, gy, index):
    gx = np.zeros(x.shape)
    gx[index] += gy  # a repeated row keeps only one of its gradients
    return [gx]


def _max_to_all(x, gy, axis, keepdims):
    y = x.max(axis=axis, keepdims=True)
    g = gy if keepdims or axis is None else np.expand_dims(gy, axis)
    return [np.broadcast_to(g, x.shape) + 0 * y]


def _max_ties_not_shared(x, gy, axis, keepdims):
    y = x.max(axis=axis, keepdims=True)
    g = gy if keepdims or axis is None else np.expand_dims(gy, axis)
    return [g * (x == y)]


def _mask_passed_through(x, gy, mask, value):
    return [sum_to(np.broadcast_to(gy, np.broadcast_shapes(x.shape, mask.shape)) + 0.0, x.shape)]


def _matmul_untransposed(a, b, gy):
    if a.shape[-1] != a.shape[-2] or b.shape[-1] != b.shape[-2]:
        return [None, None]
    ga = gy @ b
    gb = a @ gy
    return [sum_to(ga, a.shape), sum_to(gb, b.shape)]


def _matmul_wrong_side(a, b, gy):
    if a.shape[-1] != a.shape[-2] or b.shape[-1] != b.shape[-2]:
        return [None, None]
    return [sum_to(b.swapaxes(-1, -2) @ gy, a.shape), sum_to(gy @ a.swapaxes(-1, -2), b.shape)]


SPECS: dict[str, tuple[str, str, int, OpSpec]] = {
    "0.12": ("Add", "加法的反向传播", 1, OpSpec(lambda a, b: a + b, _pairs, remark="通过：加法把梯度原样分给两个输入")),
    "0.13": ("Sub", "减法的反向传播", 1, OpSpec(lambda a, b: a - b, _pairs, remark="通过：减数收到的是 −gy")),
    "0.14": ("Mul", "乘法的反向传播（你自己的引擎）", 1, OpSpec(lambda a, b: a * b, _pairs,
                                                             remark="通过：每个输入乘上的是“另一个”输入")),
    "0.15": ("Div", "除法的反向传播（你自己的引擎）", 1, OpSpec(
        lambda a, b: a / b, lambda rng: _pairs(rng, positive_b=True),
        mistakes=((lambda a, b, gy: [None, gy * a / b**2], "∂(a/b)/∂b = −a/b²：符号反了"),
                  (lambda a, b, gy: [None, -gy / b**2], "漏了因子 a：∂(a/b)/∂b = −a/b²")),
        remark="通过：b 接近 0 时，b 的梯度按 1/b² 爆炸")),
    "0.16": ("Pow", "幂的反向传播", 2, OpSpec(
        lambda x, exponent: x**exponent, _pow_cases,
        mistakes=((lambda x, gy, exponent: [gy * x ** (exponent - 1)], "少了因子 p：d(xᵖ)/dx = p·xᵖ⁻¹"),
                  (lambda x, gy, exponent: [gy * exponent * x**exponent], "指数应减 1：d(xᵖ)/dx = p·xᵖ⁻¹")),
        remark="通过：x.sqrt() 就是 x ** 0.5，梯度 0.5/√x")),
    "0.17": ("Exp", "exp 的反向传播", 1, OpSpec(lambda x: x.exp(), _unary, remark="通过：exp 的导数是它自己")),
    "0.18": ("Log", "log 的反向传播", 1, OpSpec(
        lambda x: x.log(), lambda rng: _unary(rng, low=0.2),
        mistakes=((lambda x, gy: [gy * x], "log 的导数是 1/x：应除以 x"),), remark="通过：log 的导数是 1/x")),
    "0.19": ("Erf", "erf 的反向传播", 2, OpSpec(
        lambda x: x.erf(), _unary,
        mistakes=((lambda x, gy: [gy * np.exp(-x * x)], "少了因子 2/√π：erf(x) = 2/√π ∫₀ˣ exp(−t²) dt"),
                  (lambda x, gy: [gy * 2 / np.pi**0.5 * np.exp(x * x)], "被积函数是 exp(−t²)：指数上是 −x²")),
        remark="通过：对积分的上限求导，得到被积函数")),
    "0.20": ("Sum", "求和的反向传播", 2, OpSpec(
        lambda x, axis, keepdims: x.sum(axis=axis, keepdims=keepdims), _reduce_cases,
        remark="通过：和对每个加数的导数都是 1，梯度沿被求和的轴复制回去")),
    "0.21": ("Max", "最大值的反向传播", 3, OpSpec(
        lambda x, axis, keepdims: x.amax(dim=() if axis is None else axis, keepdim=keepdims), _max_cases,
        mistakes=((_max_to_all, "梯度只该给最大的那个元素，别的元素动一点点，最大值不变"),
                  (_max_ties_not_shared, "并列的最大值要平分梯度（除以并列的个数）")),
        remark="通过：梯度只流向最大的那个元素")),
    "0.22": ("Reshape", "改变形状的反向传播", 1, OpSpec(lambda x, shape: x.reshape(shape), _reshape_cases,
                                                    remark="通过：元素一一对应，梯度排回原来的形状")),
    "0.23": ("SwapAxes", "交换两轴的反向传播", 2, OpSpec(
        lambda x, axis1, axis2: x.swapaxes(axis1, axis2), _swap_cases,
        remark="通过：交换两次就回到原样")),
    "0.24": ("GetItem", "取下标的反向传播：查表的梯度", 3, OpSpec(
        lambda x, index: x[index], _index_cases,
        mistakes=((_scatter_by_assignment, "同一行被查了几次，就收到几份梯度，要加起来（np.add.at）；"
                                           "gx[index] += gy 遇到重复的下标只加一次"),),
        remark="通过：查表的梯度加回被查的那些行，查了几次就加几次")),
    "0.25": ("MaskedFill", "遮罩的反向传播", 2, OpSpec(
        lambda x, mask, value: x.masked_fill(mask, value) if mask.shape == x.shape or x.ndim >= mask.ndim
        else (x + mg.zeros(*mask.shape, dtype="float64")).masked_fill(mask, value), _mask_cases,
        mistakes=((_mask_passed_through, "被填掉的位置，输出是常数 value，和 x 无关：那里的梯度应是 0"),),
        remark="通过：被遮住的位置不再依赖 x，梯度是 0")),
    "0.26": ("MatMul", "矩阵乘法的反向传播（带批量）", 3, OpSpec(
        lambda a, b: a @ b, _matmul_cases,
        mistakes=((_matmul_untransposed, "忘了转置：ga 要乘的是 b 的转置，gb 是 a 的转置乘 gy"),
                  (_matmul_wrong_side, "乘的顺序反了：看形状，ga (…, n, k) 由 gy (…, n, m) 乘一个 (m, k) 得到")),
        remark="通过：ga = gy @ bᵀ，gb = aᵀ @ gy；被共用的权重，批量里每一段的梯度加起来")),
}

OP_EXERCISES = [Exercise(number, name, title, level, only_numpy(number, make_check(spec, number)), file="engine")
                for number, (name, title, level, spec) in SPECS.items()]
