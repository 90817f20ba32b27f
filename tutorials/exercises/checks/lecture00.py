"""Checkers for lecture 00's exercises (tutorials/exercises/lecture00.py): derivatives and backward passes.

Read next: lecture01.py.
"""

from __future__ import annotations

import math

import numpy as np

import minigrad as mg
from minigrad.core.autograd import sum_to as engine_sum_to
from tutorials.exercises.checks.engine_guard import only_numpy
from tutorials.exercises.grading import (
    Exercise,
    Wrong,
    compare,
    compare_number,
    expect_gradcheck,
    function_backward,
)


def check_central_difference(central_difference) -> str:
    def f(x):
        return x**3 - 2 * x + 1

    for x, h in ((1.5, 1e-3), (-0.7, 1e-2)):
        # For a cubic the central difference is exactly f'(x) + h**2 * f'''/6 = 3x^2 - 2 + h^2.
        expected = 3 * x**2 - 2 + h**2
        forward = (f(x + h) - f(x)) / h
        compare_number(central_difference(f, x, h), expected, f"f(x) = x³ − 2x + 1 在 x = {x}、h = {h} 处的估计",
                       suspects=[(forward, "这是前向差分 (f(x+h) − f(x))/h，误差与 h 同阶；"
                                           "中心差分是 (f(x+h) − f(x−h))/(2h)"),
                                 (2 * expected, "恰好是正确值的 2 倍：x + h 与 x − h 相距 2h，分母应是 2h")],
                       rtol=1e-9)
    compare_number(central_difference(math.sin, 0.3), math.cos(0.3), "不给 h 时（默认 h = 1e-5），sin 在 0.3 处的导数",
                   rtol=1e-9)
    return "通过：同样的 h，中心差分的误差 ∝ h²，前向差分的 ∝ h"


def _inputs(shape=(3, 4), seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal(shape), rng.standard_normal(shape), rng.standard_normal(shape)


def check_mul(Mul) -> str:
    a, b, gy = _inputs()
    ga, gb = function_backward(Mul, [a, b], gy)
    compare(ga, gy * b, "a 的梯度", suspects=[(gy * a, "a 的梯度应是 gy·b：乘上的是“另一个”输入 b，不是 a 自己"),
                                             (b, "忘了乘上游梯度 gy（链式法则：本地导数 × gy）")])
    compare(gb, gy * a, "b 的梯度", suspects=[(gy * b, "b 的梯度应是 gy·a：乘上的是“另一个”输入 a，不是 b 自己"),
                                             (a, "忘了乘上游梯度 gy（链式法则：本地导数 × gy）")])
    expect_gradcheck(lambda a, b: Mul.apply(a, b), [a, b], "a、b 同形状")
    expect_gradcheck(lambda a, b: Mul.apply(a, b), [a, b[0]], "b 的形状 (4,) 广播到 (3, 4)")
    return "通过：mg.gradcheck 也认可，广播的情况由引擎的 sum_to 处理"


def check_tanh(Tanh) -> str:
    x, gy, _ = _inputs((4, 5), seed=1)
    x = 1.5 * x
    y = np.tanh(x)
    (gx,) = function_backward(Tanh, [x], gy)
    compare(gx, gy * (1 - y**2), "x 的梯度",
            suspects=[(gy * (1 - y), "导数应是 1 − y²（y 的平方），你的像是 1 − y"),
                      (1 - y**2, "忘了乘上游梯度 gy（链式法则：本地导数 × gy）"),
                      (gy / np.cosh(y) ** 2, "把 y 当成了 x：1/cosh²(x) 用输出表示就是 1 − y²，这里 y = tanh(x)"),
                      (gy * (1 - x**2), "导数是 1 − y²（y = tanh(x) 是输出），不是 1 − x²")])
    expect_gradcheck(lambda x: Tanh.apply(x), [x], "tanh")
    return "通过：反向传播只用到前向存下的 y，不必再算一次 tanh"


SUM_TO_CASES = [((4, 3), (3,)), ((2, 3, 4), (3, 1)), ((2, 3, 4), (1, 3, 1)), ((2, 3, 4), (2, 3, 4)),
                ((5,), ()), ((3, 4), (1,)), ((2, 1, 4), (2, 1, 1))]


def check_sum_to(sum_to) -> str:
    rng = np.random.default_rng(2)
    for g_shape, shape in SUM_TO_CASES:
        g = rng.standard_normal(g_shape)
        before = g.copy()
        got = sum_to(g, shape)
        if not np.array_equal(g, before):
            raise Wrong("不要原地修改 g：它可能还被别的地方用着")
        lead = tuple(range(g.ndim - len(shape)))
        expected = engine_sum_to(g, shape)
        compare(got, expected, f"sum_to(形状为 {g_shape} 的 g, {shape})", suspects=[
            (g.sum(axis=lead), f"大小为 1 的轴也被广播过（{shape} → {g_shape}）："
                               "这些轴也要求和，并保留这一轴（keepdims=True）"),
            (expected / (g.size / max(1, expected.size)),
             "你求的是平均？每份拷贝都用到了同一个输入，它们的梯度要加起来"),
        ])
    return "通过：广播在前向里复制，在反向里求和"


def check_div(Div) -> str:
    a, b, gy = _inputs((3, 4), seed=3)
    b = np.sign(b) * (0.5 + np.abs(b))  # away from zero, where a / b blows up
    ga, gb = function_backward(Div, [a, b], gy)
    compare(ga, gy / b, "a 的梯度", suspects=[(gy * b, "∂(a/b)/∂a = 1/b：是除以 b，不是乘以 b"),
                                             (1 / b, "忘了乘上游梯度 gy（链式法则：本地导数 × gy）")])
    compare(gb, -gy * a / b**2, "b 的梯度", suspects=[
        (gy * a / b**2, "b 的梯度符号反了：∂(a/b)/∂b = −a/b²"),
        (-gy / b**2, "漏了因子 a：∂(a/b)/∂b = −a/b²"),
        (-gy * a / b, "应除以 b²：a/b = a·b⁻¹，对 b 求导得 −a·b⁻²"),
        (-a / b**2, "忘了乘上游梯度 gy（链式法则：本地导数 × gy）"),
    ])
    expect_gradcheck(lambda a, b: Div.apply(a, b), [a, b], "a、b 同形状")
    expect_gradcheck(lambda a, b: Div.apply(a, b), [a, b[:1]], "b 的形状 (1, 4) 广播到 (3, 4)")
    return "通过：想一想，b 接近 0 时，b 的梯度为什么会爆炸？"


# f, its name, and its n-th derivative in closed form (n = 0 gives f itself).
NTH_DERIVATIVE_CASES = [
    (lambda t: t.sin() * t, "x·sin(x)",
     lambda x, n: x * np.sin(x + n * np.pi / 2) + n * np.sin(x + (n - 1) * np.pi / 2)),
    (lambda t: (2 * t).exp(), "exp(2x)", lambda x, n: 2.0**n * np.exp(2 * x)),
]

NTH_DERIVATIVE_HINTS = {
    "does not require grad": "再求一次导时，上一次得到的导数已经没有计算图了：每次 mg.grad 都要加 create_graph=True",
    "can be omitted only for a scalar output": "x 有多个元素，f(x) 不是标量：先 .sum() 再求导"
                                               "（f 逐元素作用，和对 x_i 的导数就是 f 在 x_i 处的导数）",
}


def check_nth_derivative(nth_derivative) -> str:
    points = np.linspace(-2, 2, 9)
    for f, name, exact in NTH_DERIVATIVE_CASES:
        for n in (1, 2, 3):
            x = mg.tensor(points, requires_grad=True, dtype="float64")
            try:
                got = nth_derivative(f, x, n)
            except RuntimeError as error:  # minigrad's own words for the two usual slips: say what they mean
                hints = [hint for cause, hint in NTH_DERIVATIVE_HINTS.items() if cause in str(error)]
                if not hints:
                    raise
                raise Wrong(hints[0]) from error
            compare(got, exact(points, n), f"{name} 的 {n} 阶导数", suspects=[
                (exact(points, n - 1), "差了一阶：你的结果是 n − 1 阶导数，要恰好求 n 次导"),
                (exact(points, n + 1), "差了一阶：你的结果是 n + 1 阶导数，要恰好求 n 次导"),
            ])
    return "通过：导数也是带计算图的张量，所以能一直求下去；图也一阶比一阶大"


# --------------------------------------------------------------------------------------------------
# 0.7, an open task: the fastest fixed learning rate, found by experiment

LR_BUDGET = 60  # runs of gradient descent allowed per valley
LR_SLACK = 1.15  # the learner's learning rate may take this many times the fewest steps found by a fine scan
VALLEYS = [(1.0, 0.5, 5.0), (2.0, 1.0, 2.0), (0.5, 0.2, 8.0)]  # f(x) = cosh(a x) - b x, from x0 (lecture 00 §7: a=1)


def _descent_steps(a: float, b: float, x0: float, lr: float, tol: float = 1e-10, max_steps: int = 3000) -> int | None:
    """Steps of x <- x - lr f'(x) until |x - x*| <= tol on f(x) = cosh(a x) - b x; None if it diverges or stalls."""
    x_star, x = math.asinh(b / a) / a, x0
    for n in range(max_steps + 1):
        if abs(x - x_star) <= tol:
            return n
        if abs(x - x_star) > 50 or not math.isfinite(x):
            return None
        x -= lr * (a * math.sinh(a * x) - b)
    return None


def _fewest_steps(a: float, b: float, x0: float) -> int:
    """The checker's fine scan: 600 learning rates up to 3 / a**2, past the edge where descent diverges."""
    steps = [_descent_steps(a, b, x0, lr) for lr in np.linspace(0, 3, 601)[1:] / (a * a)]
    return min(s for s in steps if s is not None)


def check_fastest_learning_rate(fastest_learning_rate) -> str:
    found = []
    for a, b, x0 in VALLEYS:
        calls = []

        def steps_with(lr: float, a=a, b=b, x0=x0, calls=calls) -> int | None:
            if len(calls) >= LR_BUDGET:
                raise Wrong(f"在一个山谷上试了 {LR_BUDGET} 次还没停：先按倍数找到发散的边界，再在边界下面细找")
            calls.append(lr)
            return _descent_steps(a, b, x0, float(lr))

        lr = fastest_learning_rate(steps_with)
        if isinstance(lr, bool) or not isinstance(lr, (int, float, np.floating)) or not lr > 0:
            raise Wrong(f"应返回一个正数（学习率），你的是 {lr!r}")
        steps, best = _descent_steps(a, b, x0, float(lr)), _fewest_steps(a, b, x0)
        valley = f"在 cosh({a:g}x) − {b:g}x 上（从 x = {x0:g} 出发）"
        if steps is None:
            raise Wrong(f"{valley}学习率 {lr:.4g} 发散了：最快的学习率就在发散的边界下面，别越过它")
        if steps > LR_SLACK * best:
            raise Wrong(f"{valley}学习率 {lr:.4g} 要 {steps} 步，最快的只要 {best} 步：还能再大一些"
                        "（步数随学习率先降，到发散的边界附近最少）")
        found.append(f"{steps} 步（细扫的最少是 {best}）")
    return "通过：三个山谷上 " + "、".join(found)


EXERCISES = [
    Exercise("0.1", "central_difference", "中心差分估计导数", 1, check_central_difference),
    Exercise("0.2", "Mul", "乘法的反向传播", 1, check_mul),
    Exercise("0.3", "Tanh", "tanh 的反向传播", 2, check_tanh),
    Exercise("0.4", "sum_to", "sum_to：把广播过的梯度加回去", 2, only_numpy("0.4", check_sum_to), file="engine"),
    Exercise("0.5", "Div", "除法的反向传播", 3, check_div),
    Exercise("0.6", "nth_derivative", "n 阶导数：对导数再求导", 2, check_nth_derivative),
    Exercise("0.7", "fastest_learning_rate", "开放题：用实验找最快的学习率", 3, check_fastest_learning_rate, open=True),
]


def _engine_exercises() -> list[Exercise]:
    """0.8-0.26, your own engine (tutorials/exercises/engine.py): checks/engine.py, which uses check_sum_to above."""
    from tutorials.exercises.checks import engine

    return engine.EXERCISES


EXERCISES += _engine_exercises()
