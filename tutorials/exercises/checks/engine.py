"""Checkers for the learner's tensor engine (tutorials/exercises/engine.py, lecture 00's exercises 0.8-0.26).

The core (Tensor, apply, the topological order, the backward walk) is checked on graphs the checker builds: a
chain, a diamond, a tensor used three times, a shared subexpression, a 10,000-op chain, two backward calls in a
row, a graph partly built under no_grad. Each part is checked with what the earlier parts gave (the walk with the
learner's own Tensor, apply and order) once those have passed their own checks, and says which to fix first.
Each op's backward is checked on its own, on NumPy arrays (ops_check.py): against minigrad's gradient and against
central differences in float64, over shapes that broadcast both ways, size-1 axes and 0-d arrays, and in float32
for its dtype. Everything runs under `only_numpy` (engine_guard.py). Read next: ops_check.py.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from tutorials.exercises.checks.engine_guard import namespace_of, only_numpy
from tutorials.exercises.checks.engine_ops import OP_EXERCISES
from tutorials.exercises.grading import Exercise, Wrong, compare

CHAIN = 10_000  # ops in the long chain: ten times Python's recursion limit
# Seconds the 10,000-op chain may take: a linear order or walk takes a fraction of one; the margin is for a busy
# machine (and the grader's profile hook), so only a far worse one, a tensor handled again and again, is refused.
SLOW = 60.0


# --------------------------------------------------------------------------------------------------
# 0.8 the Tensor


def check_tensor(Tensor) -> str:
    if not isinstance(Tensor, type):
        raise Wrong(f"Tensor 应是一个类，你的是 {type(Tensor).__name__}")
    x32 = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = Tensor(x32)
    if not hasattr(t, "array"):
        raise Wrong("Tensor 的数组要放在 self.array 里（你的 GPT 和 Tensor 的其余方法都读它）")
    if not isinstance(t.array, np.ndarray):
        raise Wrong(f"self.array 应是 NumPy 数组，你的是 {type(t.array).__name__}")
    if t.array.dtype != np.float32:
        raise Wrong(f"float32 的数组进去，self.array 应还是 float32，你的是 {t.array.dtype}：浮点数组不要改 dtype")
    if not np.shares_memory(t.array, x32):
        raise Wrong("浮点数组应原样留着（np.asarray 不复制）：你的 Tensor 复制了它，参数更新会写不到它身上")
    for value, what in ((3.0, "Python 的数 3.0"), ([1, 2], "列表 [1, 2]"), (np.arange(3), "整数数组")):
        array = Tensor(value).array
        if not isinstance(array, np.ndarray) or array.dtype != np.float64:
            got = array.dtype if isinstance(array, np.ndarray) else type(array).__name__
            raise Wrong(f"Tensor({what}).array 应是 float64 的 NumPy 数组，你的是 {got}")
        compare(array, np.asarray(value, dtype=np.float64), f"Tensor({what}).array")
    for requires_grad in (False, True):
        t = Tensor(x32, requires_grad=requires_grad)
        if getattr(t, "requires_grad", None) is not requires_grad:
            raise Wrong(f"Tensor(..., requires_grad={requires_grad}).requires_grad 应是 {requires_grad}")
        if getattr(t, "grad", 0) is not None or getattr(t, "op", 0) is not None:
            raise Wrong("新的 Tensor 的 .grad 和 .op 都应是 None：还没有梯度，也不是哪个运算算出来的（叶子）")
    if Tensor(x32).requires_grad is not False:
        raise Wrong("不写 requires_grad 时应是 False")
    return "通过：一个张量 = 数组 + 梯度 + 算出它的运算"


# --------------------------------------------------------------------------------------------------
# The checker's own ops for the core's checks: forward and backward on arrays, known to be right


class _Op:
    def __init__(self, **params: Any) -> None:
        for name, value in params.items():
            setattr(self, name, value)


class _Mul(_Op):
    def forward(self, a, b):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)):
            raise Wrong(f"op.forward 收到的应是数组（x.array），不是 {type(a).__name__}")
        self.a, self.b = a, b
        return a * b

    def backward(self, gy):
        return gy * self.b, gy * self.a


class _Add(_Op):
    def forward(self, *xs):
        return sum(xs[1:], xs[0])

    def backward(self, gy):
        return (gy,) * self.n


class _Tanh(_Op):
    def forward(self, x):
        self.y = np.tanh(x)
        return self.y

    def backward(self, gy):
        return gy * (1 - self.y**2)  # one input: the gradient alone, not a tuple (the walk must take both)


class _Node:
    """A tensor as the topological order sees it: its name (for messages), whether it needs a gradient, its op."""

    def __init__(self, name: str, inputs: tuple = (), requires_grad: bool | None = None) -> None:
        self.name = name
        self.requires_grad = any(x.requires_grad for x in inputs) if requires_grad is None else requires_grad
        self.op = None
        if inputs and self.requires_grad:
            self.op = _Op()
            self.op.inputs = inputs


def _dependency(answer: Any, name: str, number: str, check: Any) -> Any:
    """The learner's part `name` (exercise `number`) from the answer's own file, once it passes its check."""
    space = namespace_of(answer) or {}
    part = space.get(name)
    if part is None:
        raise Wrong(f"在你的文件里找不到 {name}（练习 {number}）：这一题要用它")
    try:
        check(part)
    except NotImplementedError:  # reported as not done yet (·), with what to write first
        raise NotImplementedError(f"还没法检查：这一题要用 {name}（练习 {number}），它还没写，先写它") from None
    except Exception as error:
        raise Wrong(f"这一题要用 {name}（练习 {number}），它还没通过检查：先让 {number} 通过"
                    f"（python -m tutorials.exercises check {number}）") from error
    return part


# --------------------------------------------------------------------------------------------------
# 0.9 apply


def check_apply(apply) -> str:
    Tensor = _dependency(apply, "Tensor", "0.8", check_tensor)
    space = namespace_of(apply)
    a, b = np.array([1.0, -2.0, 3.0]), np.array([0.5, 4.0, -1.0])
    x, w = Tensor(a.copy(), requires_grad=True), Tensor(b.copy())
    op = _Mul()
    y = apply(op, x, w)
    if not isinstance(y, Tensor):
        raise Wrong(f"apply 应返回一个 Tensor（把 op.forward 的结果包起来），你的是 {type(y).__name__}")
    compare(y.array, a * b, "apply(Mul(), x, w).array")
    if not np.array_equal(x.array, a) or not np.array_equal(w.array, b):
        raise Wrong("apply 改动了输入的数组")
    if y.requires_grad is not True or y.op is not op:
        raise Wrong("有一个输入需要梯度时，输出也需要梯度（requires_grad = True），它的 .op 是这个运算（同一个对象）")
    if not isinstance(getattr(op, "inputs", None), (tuple, list)) or len(op.inputs) != 2 \
            or op.inputs[0] is not x or op.inputs[1] is not w:
        raise Wrong("op.inputs 应按顺序记下输入的张量本身 (x, w)：反向传播要沿着它们往回走")
    p, q = Tensor(a), Tensor(b)
    z = apply(_Mul(), p, q)
    if z.requires_grad or z.op is not None:
        raise Wrong("没有一个输入需要梯度时，什么都不用记：输出的 requires_grad 是 False，.op 是 None")
    no_grad = space.get("no_grad")
    if no_grad is None:
        raise Wrong("你的文件里找不到 no_grad（它是写好的，别删掉）")
    with no_grad():
        z = apply(_Mul(), x, w)
    if z.requires_grad or z.op is not None:
        raise Wrong("在 with no_grad(): 里，apply 什么都不记（看 grad_enabled）：求值、采样时不建计算图")
    compare(z.array, a * b, "no_grad 下的结果")
    if apply(_Mul(), x, w).op is None:
        raise Wrong("离开 no_grad 之后，apply 又要记录了（no_grad 结束时把开关放回原来的值）")
    return "通过：每个运算在前向时把自己和输入记下来，计算图就这样长出来"


# --------------------------------------------------------------------------------------------------
# 0.10 the topological order


def _graphs() -> list[tuple[str, _Node, list[_Node]]]:
    """(what, root, the nodes that must be in the order) for a few small graphs."""
    a, b = _Node("a", requires_grad=True), _Node("b", requires_grad=True)
    k = _Node("k", requires_grad=False)  # a constant: no gradient, never in the order
    chain = _Node("c", (_Node("b1", (_Node("a1", (a,)),)),))
    left, right = _Node("l", (a,)), _Node("r", (a, k))
    diamond = _Node("d", (left, right))
    thrice = _Node("t", (a, a, a))
    s = _Node("s", (a, b))
    shared = _Node("y", (s, _Node("h", (s, k))))
    return [("一条链 a → a1 → b1 → c", chain, [a, chain.op.inputs[0].op.inputs[0], chain.op.inputs[0], chain]),
            ("菱形：a 分两路（l、r）再汇合到 d", diamond, [a, left, right, diamond]),
            ("a 被同一个运算用了三次", thrice, [a, thrice]),
            ("共享的子表达式：s = f(a, b)，y = g(s, h(s))", shared, [a, b, s, shared.op.inputs[1], shared])]


def _check_order(order: Any, what: str, needed: list[_Node]) -> None:
    if not isinstance(order, list) or not all(isinstance(t, _Node) for t in order):
        raise Wrong(f"应返回一个列表，里面是张量（{what}），你的是 {type(order).__name__}")
    names = [t.name for t in order]
    for t in needed:
        count = sum(u is t for u in order)
        if count == 0:
            raise Wrong(f"{what}：少了 {t.name}")
        if count > 1:
            raise Wrong(f"{what}：{t.name} 出现了 {count} 次——用一个集合记住见过的张量（按 id），每个只排一次")
    extra = [t.name for t in order if not any(t is n for n in needed)]
    if extra:
        raise Wrong(f"{what}：{extra[0]} 不需要梯度，不该出现在顺序里")
    position = {id(t): i for i, t in enumerate(order)}
    for t in order:
        for x in t.op.inputs if t.op is not None else ():
            if x.requires_grad and position[id(x)] > position[id(t)]:
                raise Wrong(f"{what}：{t.name} 排在了它的输入 {x.name} 前面（你的顺序：{'、'.join(names)}）；"
                            "每个张量都要排在它的所有输入之后")


def _long_chain() -> tuple[_Node, _Node]:
    leaf = node = _Node("x0", requires_grad=True)
    for i in range(CHAIN):
        node = _Node(f"x{i + 1}", (node,))
    return leaf, node


def check_topological_order(topological_order) -> str:
    for what, root, needed in _graphs():
        _check_order(topological_order(root), what, needed)
    leaf, root = _long_chain()
    start = time.perf_counter()
    try:
        order = topological_order(root)
    except RecursionError:
        raise Wrong(f"{CHAIN:,} 个运算的链上超过了 Python 的递归深度：不要递归，用一个显式的栈（列表）") from None
    seconds = time.perf_counter() - start
    if not isinstance(order, list) or len(order) != CHAIN + 1 or order[0] is not leaf or order[-1] is not root:
        raise Wrong(f"{CHAIN:,} 个运算的链：顺序应从 x0 排到 x{CHAIN}，共 {CHAIN + 1:,} 个")
    if seconds > SLOW:
        raise Wrong(f"{CHAIN:,} 个运算的链用了 {seconds:.1f} 秒：每个张量只该展开一次；“见过没有”用集合查（按 id）")
    return f"通过：{CHAIN:,} 个运算的链也排得出来（{seconds * 1000:.0f} 毫秒），每个张量都排在它的输入之后"


# --------------------------------------------------------------------------------------------------
# 0.11 the backward walk


def _walk_parts(backward: Any) -> tuple[Any, Any, Any]:
    from tutorials.exercises.checks.lecture00 import check_sum_to

    _dependency(backward, "topological_order", "0.10", check_topological_order)
    _dependency(backward, "sum_to", "0.4", check_sum_to)
    Tensor = _dependency(backward, "Tensor", "0.8", check_tensor)
    apply = _dependency(backward, "apply", "0.9", check_apply)
    return Tensor, apply, namespace_of(backward)["no_grad"]


def _grad(t: Any, name: str, Tensor: type, shape: tuple) -> np.ndarray:
    if t.grad is None:
        raise Wrong(f"{name} 没有得到梯度（.grad 还是 None）：从 root 出发，按拓扑序的**逆序**把梯度传到每一个叶子")
    if not isinstance(t.grad, Tensor):
        raise Wrong(f"{name}.grad 应是一个 Tensor（把梯度数组包成 Tensor(g)），你的是 {type(t.grad).__name__}")
    g = t.grad.array
    if g.shape != shape:
        hint = "：广播过的输入要用 sum_to 把梯度加回它自己的形状" if len(g.shape) >= len(shape) else ""
        raise Wrong(f"{name}.grad 的形状应是 {shape}，你的是 {g.shape}{hint}")
    return g


def _expect(got: np.ndarray, expected: np.ndarray, name: str, what: str, used: int = 1) -> None:
    if np.allclose(got, expected, rtol=1e-9, atol=1e-12):
        return
    scale = float((got * expected).sum() / (expected * expected).sum())
    if np.allclose(got, scale * expected, rtol=1e-9, atol=1e-12):
        if used > 1 and np.isclose(scale, 1 / used):
            raise Wrong(f"{what}：{name} 的梯度只有应有值的 1/{used}——{name} 被用了 {used} 次，"
                        "几份梯度要加起来，你的像是后来的一份覆盖了前面的")
        raise Wrong(f"{what}：{name} 的梯度是应有值的 {scale:.4g} 倍")
    compare(got, expected, f"{what}：{name} 的梯度")


def check_backward(backward) -> str:
    Tensor, apply, no_grad = _walk_parts(backward)
    rng = np.random.default_rng(8)
    av, bv = rng.standard_normal(3), rng.standard_normal(3)

    def leaves() -> tuple[Any, Any]:
        return Tensor(av.copy(), requires_grad=True), Tensor(bv.copy(), requires_grad=True)

    gy = rng.standard_normal(3)
    # a tensor used three times by one op
    a, _ = leaves()
    backward(apply(_Add(n=3), a, a, a), gy.copy())
    _expect(_grad(a, "a", Tensor, (3,)), 3 * gy, "a", "y = a + a + a（一个运算用了 a 三次）", used=3)
    # a diamond: d = a·a + tanh(a)
    a, _ = leaves()
    d = apply(_Add(n=2), apply(_Mul(), a, a), apply(_Tanh(), a))
    backward(d, gy.copy())
    _expect(_grad(a, "a", Tensor, (3,)), gy * (2 * av + 1 - np.tanh(av) ** 2), "a", "d = a·a + tanh(a)", used=3)
    if d.grad is not None:
        raise Wrong("只有叶子（没有 op 的张量，例如参数）的 .grad 要填；中间结果的梯度用完就丢")
    # a shared subexpression
    a, b = leaves()
    s = apply(_Mul(), a, b)
    backward(apply(_Add(n=2), apply(_Mul(), s, s), s), gy.copy())
    ds = gy * (2 * av * bv + 1)
    _expect(_grad(a, "a", Tensor, (3,)), ds * bv, "a", "s = a·b，y = s·s + s（共享的 s）", used=2)
    _expect(_grad(b, "b", Tensor, (3,)), ds * av, "b", "s = a·b，y = s·s + s（共享的 s）", used=2)
    _check_broadcast(backward, Tensor, apply, rng)
    _check_accumulation(backward, Tensor, apply, leaves, gy)
    _check_no_grad(backward, Tensor, apply, no_grad, leaves, gy)
    seconds = _check_chain(backward, Tensor, apply)
    return (f"通过：用了几次就加几次，广播的加回去，叶子的梯度跨调用累加；{CHAIN:,} 个运算的链 "
            f"{seconds:.2f} 秒")


def _check_broadcast(backward: Any, Tensor: type, apply: Any, rng: np.random.Generator) -> None:
    x = Tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = Tensor(rng.standard_normal(3), requires_grad=True)
    c = Tensor(rng.standard_normal((2, 1, 1)), requires_grad=True)
    gy = rng.standard_normal((2, 4, 3))
    backward(apply(_Add(n=2), apply(_Mul(), x, w), c), gy.copy())
    what = "y = x·w + c，x (4, 3)，w (3,)，c (2, 1, 1)"
    _expect(_grad(w, "w", Tensor, (3,)), (gy * x.array).sum(axis=(0, 1)), "w", what)
    _expect(_grad(c, "c", Tensor, (2, 1, 1)), gy.sum(axis=(1, 2), keepdims=True), "c", what)
    _expect(_grad(x, "x", Tensor, (4, 3)), (gy * w.array).sum(axis=0), "x", what)


def _check_accumulation(backward: Any, Tensor: type, apply: Any, leaves: Any, gy: np.ndarray) -> None:
    a, b = leaves()
    seed = gy.copy()
    backward(apply(_Add(n=2), a, b), seed)
    first = _grad(a, "a", Tensor, (3,)).copy()
    if np.shares_memory(a.grad.array, b.grad.array) or np.shares_memory(a.grad.array, seed):
        raise Wrong("y = a + b 之后，a.grad 和 b.grad（或传进来的 grad）共用了同一块内存：以后加一个，另一个也跟着变。"
                    "叶子第一次得到梯度时存一份拷贝（np.array(g)）")
    backward(apply(_Mul(), a, b), gy.copy())
    _expect(_grad(a, "a", Tensor, (3,)), first + gy * b.array, "a",
            "先 backward(a + b)，再 backward(a·b)：两次的梯度应加起来（直到把 .grad 设回 None）")
    if not np.allclose(b.grad.array, gy + gy * a.array):
        raise Wrong("两次 backward 之后，b.grad 应是两次的梯度之和：叶子的 .grad 要加上去，不覆盖")
    a.grad = None
    backward(apply(_Mul(), a, b), gy.copy())
    _expect(_grad(a, "a", Tensor, (3,)), gy * b.array, "a", "把 a.grad 设回 None 之后再 backward")


def _check_no_grad(backward: Any, Tensor: type, apply: Any, no_grad: Any, leaves: Any, gy: np.ndarray) -> None:
    a, b = leaves()
    k = Tensor(np.full(3, 2.0))  # a constant: no gradient
    with no_grad():
        z = apply(_Mul(), a, b)  # computed, not recorded: a number like k as far as the graph knows
    y = apply(_Mul(), apply(_Mul(), z, a), k)
    backward(y, gy.copy())
    _expect(_grad(a, "a", Tensor, (3,)), 2 * gy * z.array, "a", "z = a·b 在 no_grad 里算，y = z·a·k")
    if b.grad is not None or k.grad is not None:
        raise Wrong("z 在 no_grad 里算的，梯度不经过它：b 不该得到梯度；常数 k（不需要梯度）也不该得到")


def _check_chain(backward: Any, Tensor: type, apply: Any) -> float:
    x = Tensor(np.array([1.0, 2.0]), requires_grad=True)
    factor = Tensor(np.full(2, 1.0001))
    y = x
    for _ in range(CHAIN):
        y = apply(_Mul(), y, factor)
    start = time.perf_counter()
    try:
        backward(y, np.ones(2))
    except RecursionError:
        raise Wrong(f"{CHAIN:,} 个运算的链上超过了 Python 的递归深度：反向传播里不要递归") from None
    seconds = time.perf_counter() - start
    _expect(_grad(x, "x", Tensor, (2,)), np.full(2, 1.0001**CHAIN), "x", f"{CHAIN:,} 个运算的链")
    if seconds > SLOW:
        raise Wrong(f"{CHAIN:,} 个运算的链的反向传播用了 {seconds:.1f} 秒：太慢了（每个张量只该处理一次）")
    return seconds


CORE_EXERCISES = [
    Exercise("0.8", "Tensor", "Tensor：数组、梯度、算出它的运算", 1, only_numpy("0.8", check_tensor), file="engine"),
    Exercise("0.9", "apply", "apply：前向时把运算记下来", 2, only_numpy("0.9", check_apply), file="engine"),
    Exercise("0.10", "topological_order", "拓扑序（不用递归）", 3, only_numpy("0.10", check_topological_order),
             file="engine"),
    Exercise("0.11", "backward", "反向传播：逆序走一遍", 3, only_numpy("0.11", check_backward), file="engine"),
]
EXERCISES = CORE_EXERCISES + OP_EXERCISES
