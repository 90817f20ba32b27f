"""Checkers for lecture 08's exercises (tutorials/exercises/lecture08.py): what an elementwise op costs.

Read next: ../grading.py, or the tests that hold every checker to its solution (tests/test_exercises.py).
"""

from __future__ import annotations

import itertools
import math
import time
import tracemalloc

import numpy as np
from numpy.polynomial import polynomial

from minigrad.fused.gelu import gelu_and_slope
from tutorials.exercises.grading import Exercise, Wrong, as_array, compare, compare_number

_calls = itertools.count()  # a new input for every grading: no answer can pass on an earlier answer's leftovers


def check_roofline_seconds(roofline_seconds) -> str:
    # The exact GELU beyond the cache (memory-bound), then a long polynomial on few bytes (compute-bound).
    for n, nbytes, flops, bandwidth, rate, bound in ((2**26, 338.0, 60.0, 8e9, 2e10, "搬运"),
                                                     (2**20, 12.0, 400.0, 2e10, 1e10, "计算")):
        moving, computing = n * nbytes / bandwidth, n * flops / rate
        what = f"{bound}为主的情形（n = {n:,}，每元素 {nbytes:g} 字节、{flops:g} 次运算）"
        compare_number(roofline_seconds(n, nbytes, flops, bandwidth, rate), max(moving, computing), what, suspects=[
            (min(moving, computing), "搬运和计算同时进行：较慢的那个决定时间，应取 max 而不是 min"),
            (moving + computing, "搬运和计算是同时进行的，不是一个接一个：取两者中较大的，不是相加"),
            (n * nbytes * bandwidth, "时间是字节数除以带宽（字节每秒），不是乘"),
            (nbytes / bandwidth if bound == "搬运" else flops / rate, "别忘了乘元素个数 n"),
        ])
    gelu = 2**26 * 338.0 / 8e9
    return f"通过：64M 个元素的精确 GELU（338 字节每元素），在 8 GB/s 的带宽上至少要 {gelu:.1f} 秒"


def _recording(log: list[int]):
    """gelu_and_slope that records the size of every block it is called on."""
    def f(part):
        log.append(part.size)
        return gelu_and_slope(part)
    return f


def check_in_blocks(in_blocks) -> str:
    rng = np.random.default_rng(next(_calls))
    for shape, block in (((3, 1000), 256), ((5000,), 1024), ((7, 9), 100), ((2, 3, 4), 5)):
        x = rng.standard_normal(shape, dtype=np.float32)
        original = x.copy()
        expected = gelu_and_slope(x)
        sizes = []
        got = in_blocks(_recording(sizes), x, block)
        if not isinstance(got, tuple) or len(got) != 2:
            raise Wrong(f"应返回和 f(x) 一样的一组数组（这里是 (值, 导数) 两个），你的是 {type(got).__name__}")
        if not np.array_equal(x, original):
            raise Wrong("不要修改输入 x")
        where = f"形状 {shape}、block = {block} 时"
        if max(sizes, default=0) > block:
            raise Wrong(f"{where}有一块有 {max(sizes)} 个元素，超过了 block：切片应是 [start:start + block]")
        if len(sizes) != math.ceil(x.size / block) or sum(sizes) != x.size:
            raise Wrong(f"{where}应调用 f {math.ceil(x.size / block)} 次、一共 {x.size} 个元素，"
                        f"你的调用了 {len(sizes)} 次、一共 {sum(sizes)} 个：每个元素正好算一次")
        for name, part, want in zip(("值", "导数"), got, expected):
            if as_array(part, name).shape != shape:
                raise Wrong(f"{where}{name}的形状应为 {shape}（和 x 一样），"
                            f"你的是 {np.shape(part)}：最后要 reshape 回去")
            compare(part, want, f"{where}的{name}")
    return "通过：每块都放得进缓存，结果和一次算完整个数组一样"


class _Counted(np.ndarray):
    """An array that counts the NumPy operations done on it, and how many of them made a new array."""

    operations = 0
    new_arrays = 0

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        _Counted.operations += 1
        _Counted.new_arrays += out is None
        plain = [a.view(np.ndarray) if isinstance(a, _Counted) else a for a in inputs]
        if out is not None:
            kwargs["out"] = tuple(a.view(np.ndarray) if isinstance(a, _Counted) else a for a in out)
        return getattr(ufunc, method)(*plain, **kwargs).view(_Counted)


def check_horner(horner) -> str:
    rng = np.random.default_rng(next(_calls))
    for degree in (1, 3, 8):
        c = [float(v) for v in rng.uniform(-2, 2, degree + 1)]
        s = rng.uniform(-1, 1, 50)
        original = s.copy()
        _Counted.operations = _Counted.new_arrays = 0
        got = as_array(np.asarray(horner(list(c), s.view(_Counted))).view(np.ndarray), "结果")
        if not np.array_equal(s, original):
            raise Wrong("不要修改 s：先用 s * c[d] 新建一个数组，之后只原地修改它")
        compare(got, polynomial.polyval(s, c), f"{degree} 次多项式的值", suspects=[
            (polynomial.polyval(s, c[::-1]), "系数的顺序反了：c[0] 是常数项，从最高次的 c[d] 开始乘"),
        ])
        if _Counted.new_arrays != 1:
            raise Wrong(f"{degree} 次多项式新建了 {_Counted.new_arrays} 个数组，应只有 1 个：之后用 *= 和 += 原地计算")
        if _Counted.operations != 2 * degree:
            raise Wrong(f"{degree} 次多项式用了 {_Counted.operations} 次 NumPy 运算，应正好 {2 * degree} 次"
                        "（每个系数一次乘、一次加）")
    return "通过：8 次多项式 16 遍——精确 GELU 的 36 遍里有 18 遍就是它（多出的 2 遍把自变量变换到 [-1, 1]）"


def _best_seconds(f, x: np.ndarray, repeats: int = 3) -> float:
    best = math.inf
    for _ in range(repeats):
        start = time.perf_counter()
        f(x)
        best = min(best, time.perf_counter() - start)
    return best


def _peak_arrays(f, x: np.ndarray) -> tuple[tuple, float]:
    """f(x), and the peak of the memory it allocated while running, in arrays as large as x (NumPy reports its
    arrays' memory to tracemalloc, so no array escapes the count, whatever made it)."""
    tracing = tracemalloc.is_tracing()
    if not tracing:
        tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        before = tracemalloc.get_traced_memory()[0]
        result = f(x)
        peak = tracemalloc.get_traced_memory()[1] - before
    finally:
        if not tracing:
            tracemalloc.stop()
    return result, peak / x.nbytes


LEAN_ARRAYS = 3.0  # the two results and at most one more array as large as x


def check_lean_gelu(gelu_lean) -> str:
    rng = np.random.default_rng(next(_calls))
    small = rng.standard_normal(2**14, dtype=np.float32)
    # A Python loop over the elements is slower than the 36 passes by a factor of 50 or more: refused before the
    # large array, which it would take minutes over.
    mine, reference = _best_seconds(gelu_lean, small), _best_seconds(gelu_and_slope, small)
    if mine > 10 * reference + 2e-3:
        raise Wrong(f"太慢了：16384 个元素用了 {mine * 1e3:.1f} 毫秒，36 遍的 NumPy 只要 {reference * 1e3:.1f} 毫秒。"
                    "是不是用了 Python 的循环？每一遍都要交给 NumPy（或编译好的循环）")
    x = rng.standard_normal((1024, 1031), dtype=np.float32) * 3  # 4 MiB, past most L2 caches
    x[0, :4] = (0.0, -30.0, 30.0, -0.5)
    original = x.copy()
    got, arrays = _peak_arrays(gelu_lean, x)
    if not np.array_equal(x, original):
        raise Wrong("不要修改输入 x：值和导数要写进新的数组")
    if not isinstance(got, tuple) or len(got) != 2:
        raise Wrong(f"应返回 (值, 导数) 两个数组，你的是 {type(got).__name__}")
    tanh_gelu = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    suspects = {"值": [(tanh_gelu, "这是 GPT-2 的 tanh 近似，不是精确的 GELU（x Φ(x)）")], "导数": []}
    for name, part, want in zip(("值", "导数"), got, gelu_and_slope(x)):
        if not isinstance(part, np.ndarray) or part.shape != x.shape or part.dtype != np.float32:
            raise Wrong(f"{name}应是和 x 一样形状的 float32 NumPy 数组（{x.shape}），你的是 "
                        f"{getattr(part, 'shape', '?')} 的 {getattr(part, 'dtype', type(part).__name__)}")
        compare(part, want, f"精确 GELU 的{name}", suspects=suspects[name])
    if arrays > LEAN_ARRAYS:
        raise Wrong(f"算的时候最多同时占了 {arrays:.1f} 个和 x 一样大的数组（gelu_and_slope 本身是 5 个：结果 2 个，"
                    f"临时数组 3 个）；目标是不超过 {LEAN_ARRAYS:g} 个。分块（8.2）让临时数组只有一块大，"
                    "或者用 out= 和原地运算少建几个")
    return (f"通过：最多同时占 {arrays:.2f} 个数组（36 遍的写法是 5 个）；"
            f"16384 个元素 {mine * 1e3:.2f} 毫秒，36 遍的写法 {reference * 1e3:.2f} 毫秒")


EXERCISES = [
    Exercise("8.1", "roofline_seconds", "屋顶线：一个运算至少要多久", 1, check_roofline_seconds),
    Exercise("8.2", "in_blocks", "分块计算", 2, check_in_blocks),
    Exercise("8.3", "horner", "少几遍的多项式", 2, check_horner),
    Exercise("8.4", "gelu_lean", "开放题：少占内存的精确 GELU", 3, check_lean_gelu, open=True),
]
