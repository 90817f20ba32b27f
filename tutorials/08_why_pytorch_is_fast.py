# ---
# jupyter:
#   jupytext:
#     formats: py:percent
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 08 附录：PyTorch 为什么快——数一数内存被读了几遍
#
# `minigrad` 的每个运算都是几行 NumPy：好读、好改、和公式一一对应。同样的 GPT，PyTorch 在 CPU 上却快不少。
# 差在哪里？不是 PyTorch 的乘法更聪明，而是**数据在内存和处理器之间搬了几趟**。这一讲拿一个运算——
# MLP 里的精确 GELU——量个明白：
#
# 1. **一次 NumPy 调用的代价**：把整个数组从内存读一遍、写一遍，在一个核上；
# 2. **数一数**：`minigrad` 的精确 GELU 要调用 NumPy 多少次，一共读写多少字节（用 NumPy 自己的钩子数，不靠猜）；
# 3. **量出这台机器的内存带宽**：拷贝一个大数组，每秒搬多少字节，这就是“屋顶”；
#    再读出末级缓存（last-level cache）有多大；
# 4. **三种 GELU 比快慢**：整个数组一遍一遍地算（36 遍）、切成放得进缓存的小块再算（还是 36 遍，但在缓存里）、
#    编译成一遍（融合（fusion）成一个循环，PyTorch 的做法）；画出耗时随数组大小的变化，屋顶和缓存大小都标在图上。
#
# 运行：`python tutorials/08_why_pytorch_is_fast.py`（完整版）；
# `TUTORIAL_QUICK=1 python tutorials/08_why_pytorch_is_fast.py`（快速版：数组小一些，断言的余量放宽）。
# 图片写到 `figures/`。编译版要用 numba（`pip install -e ".[fast]"`）；
# 没有 numba 时，这一讲照样能跑完，只是少了编译版那条线，断言也换成没有它时能证明的结论。
# 术语的写法见 [术语表](术语表.md)。这一讲不用前面各讲的记录，可以单独运行。

# %% [markdown]
# **学完这一讲，你能**：说出一次逐元素的 NumPy 调用在内存上花了什么；数出一个运算调用 NumPy 的次数和它搬动的字节数；
# 量出一台机器的内存带宽，用它预言一个“搬运为主”的运算要多久；解释分块和编译融合各省下了什么、省不下什么。
#
# **用时**：运行本讲的耗时见 `tutorials/README.md` 的表（计时实验本身就是这一讲的内容）；最后有 4 道练习。

# %%
from tutorials.course import FIGURES, QUICK, T_START, label, show_figure  # 放在最前：限定 BLAS 线程数

# isort: split
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np

from minigrad.fused.gelu import gelu_and_slope
from minigrad.kernels import numba_gelu
from minigrad.kernels.threads import BLOCK_SIZE

rng = np.random.default_rng(0)
FUSED = numba_gelu.ready()  # 装了 numba、内核编译好了才是 True（第一次编译约 15 秒）
print("编译版 GELU（numba）：", "有" if FUSED else "没有（pip install -e \".[fast]\" 装上 numba 后再运行，就多一条线）")

# %% [markdown]
# ## 1. 一次 NumPy 调用花了什么
#
# `y = x * 2` 在 NumPy 里是一个用 C 写好的循环：从内存读出 `x` 的每个数，乘 2，写进新数组 `y`。
# 它只在一个核上跑，而且一口气走完整个数组才返回。所以一行 NumPy 代码的代价，大致是**把数组读一遍、写一遍**。
#
# 下面量一量：数组大到一定程度以后，每个元素的耗时几乎不变——时间和数组的字节数成正比。
#
# 怎么计时：这一讲量的是**处理器时间**（`time.process_time`，这个进程真正占用核的时间），不是墙上的钟。
# 在一台同时跑着别的程序的机器上，墙钟时间里混着排队等核的时间，忽长忽短；处理器时间只算我们自己的活，
# 等内存的那些时钟周期也算在里面（核在等，但核是我们的）。每个测量重复几次取最快的一次。

# %%
def best_time(fn: Callable[[], object], repeats: int) -> float:
    """fn() 运行 repeats 次里最快的一次的处理器时间（秒）：干扰只会让它变慢，最快的一次最接近它本来的速度。"""
    best = math.inf
    for _ in range(repeats):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


for n in (2**16, 2**20, 2**22):
    x = rng.standard_normal(n, dtype=np.float32)
    seconds = best_time(lambda x=x: x * 2, 5)
    print(f"{n:>9,} 个 float32（{x.nbytes / 2**20:5.2f} MiB）：x * 2 用 {seconds * 1e3:6.3f} 毫秒，"
          f"每个元素 {seconds / n * 1e9:.2f} 纳秒")

# %% [markdown]
# ## 2. 数一数：精确 GELU 调用了多少次 NumPy
#
# `minigrad/fused/gelu.py` 的 `gelu_and_slope` 一次算出 GELU 的值 $x\,\Phi(x)$ 和它的导数
# $\Phi(x) + x\,\varphi(x)$（反向传播要用）。$\Phi$ 没有现成的 NumPy 函数，`minigrad/kernels/special.py` 的
# `normal_cdf_and_density` 用一个 `exp` 和一个 8 次多项式拼出来。读代码能数出调用次数：取绝对值、截断、平方、
# 乘 $-1/2$、`exp`……多项式用秦九韶（Horner）法，每一次都是“乘一遍、加一遍”。
#
# 读代码容易数漏。更可靠的办法是让 NumPy 自己报数：NumPy 允许数组的子类接管所有逐元素运算（`__array_ufunc__`，
# NumPy 公开的协议）。下面的 `Counted` 数组每做一次运算，就记下运算的名字和读写了多少字节，再照常把结果算出来。
#
# **先猜一猜**：算一次精确 GELU（值和导数），NumPy 要把数组过多少遍？10 遍、20 遍，还是更多？
#
# 下一格记下你的猜测：先把其中的“还没猜”换成你自己的猜测，再往下运行（不猜也能运行，但不计分）；
# 揭晓时实测值会印在它旁边，讲末给出校准得分。

# %%
from tutorials.predictions import Predictions

my_guesses = Predictions("08", folder=FIGURES)  # 本讲的先猜一猜都记在这里（figures/guesses_08.json）
my_guesses.guess("gelu_passes", "还没猜", "精确 GELU（值和导数）NumPy 要把数组过几遍")  # 换成你的猜测

# %%
class Counted(np.ndarray):
    """一个 NumPy 数组，它记下自己参与的每个逐元素运算：(运算名, 读的字节数, 写的字节数)。"""

    log: list[tuple[str, int, int]] = []

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        plain = [a.view(np.ndarray) if isinstance(a, Counted) else a for a in inputs]
        if out is not None:
            kwargs["out"] = tuple(a.view(np.ndarray) if isinstance(a, Counted) else a for a in out)
        result = getattr(ufunc, method)(*plain, **kwargs)
        results = result if isinstance(result, tuple) else (result,)
        read = sum(a.nbytes for a in plain if isinstance(a, np.ndarray) and a.ndim > 0)  # 标量不算
        Counted.log.append((ufunc.__name__, read, sum(r.nbytes for r in results)))
        if isinstance(result, tuple):
            return tuple(r.view(Counted) for r in result)
        return result.view(Counted)

    def astype(self, dtype, **kwargs):
        """类型转换不是 ufunc，也要读一遍、写一遍：一样记下来。"""
        result = self.view(np.ndarray).astype(dtype, **kwargs)
        Counted.log.append(("astype", self.nbytes, result.nbytes))
        return result.view(Counted)


x = rng.standard_normal(1000, dtype=np.float32)
Counted.log.clear()
y_counted, slope_counted = gelu_and_slope(x.view(Counted))
y_plain, slope_plain = gelu_and_slope(x)
PASSES = len(Counted.log)
BYTES_NUMPY = sum(read + written for _, read, written in Counted.log) / x.size  # 每个元素读写的字节数
BYTES_FUSED = 4 + 4 + 4  # 一遍：读 x，写 y 和导数，各一个 float32
print(f"精确 GELU 调用了 {PASSES} 次 NumPy：")
print("  " + " → ".join(name for name, _, _ in Counted.log))
print(f"每个元素一共读写 {BYTES_NUMPY:.1f} 字节；编译成一遍的话只要 {BYTES_FUSED} 字节"
      f"（少 {BYTES_NUMPY / BYTES_FUSED:.1f} 倍）")
assert np.array_equal(y_counted.view(np.ndarray), y_plain)  # 数的时候，算出来的还是同一个结果
assert np.array_equal(slope_counted.view(np.ndarray), slope_plain)
assert PASSES == 36, PASSES
my_guesses.reveal("gelu_passes", PASSES)
assert 330 < BYTES_NUMPY < 345, BYTES_NUMPY

# %% [markdown]
# 36 遍。其中 18 遍是那个 8 次多项式（每个系数一次乘、一次加），`exp` 只占一遍。
# 注意“遍数”和“字节数”不是一回事：有的运算读两个数组（`x * x`），有的只读一个；
# 比较运算写出的布尔数组每个元素只占 1 字节。
# 按字节算，36 遍一共读写了约 340 字节每元素，是一遍的 12 字节的 28 倍左右。所以数组放不进缓存、时间全花在搬运上时，
# 编译成一遍最多快 28 倍左右，而不是 36 倍；实际快多少，还要看一遍的版本自己是不是也被搬运卡住。
#
# ## 3. 这台机器的内存带宽和缓存
#
# 处理器不直接在内存上算：数据先搬进缓存（cache）——离核很近、很快、但很小的存储。一个核有自己的 L2 缓存（通常
# 1–2 MiB），几个核共用一个大一些的末级缓存（L3，几十到几百 MiB）。数组放得进缓存时，36 遍都在缓存里来回；
# 放不进时，每一遍都要从内存读、往内存写，速度就由**内存带宽**（memory bandwidth，每秒能搬多少字节）决定。
#
# Linux 把缓存的大小写在 `/sys/devices/system/cpu/cpu0/cache/` 下；
# 读不到时（别的系统、容器里）用一个常见的值代替，并打印出来。

# %%
def cache_sizes() -> dict[int, int]:
    """{缓存级别: 字节数}，从 Linux 的 sysfs 读；读不到就是空字典。"""
    sizes = {}
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            text = (index / "size").read_text().strip()  # 例如 "2048K"
        except (OSError, ValueError):
            continue
        if kind == "Instruction" or not text:
            continue
        units = {"K": 2**10, "M": 2**20, "G": 2**30}
        sizes[level] = int(text[:-1]) * units[text[-1]] if text[-1] in units else int(text)
    return sizes


SIZES = cache_sizes()
L2 = SIZES.get(2, 2**20)
LLC = SIZES[max(SIZES)] if SIZES else 32 * 2**20
print("缓存：", ", ".join(f"L{level} {size / 2**20:g} MiB" for level, size in sorted(SIZES.items()))
      if SIZES else "读不到 sysfs，按 L2 1 MiB、末级缓存 32 MiB 估计")
print(f"末级缓存（last-level cache）：{LLC / 2**20:g} MiB，即 {LLC // 4:,} 个 float32")

# %% [markdown]
# 要越过末级缓存，数组得比它大。但精确 GELU 在算的时候会同时留着好几个临时数组，所以数组也不能大到装不下内存：
# 下面从 `/proc/meminfo` 读出可用内存，最大的数组只用它的一小部分（云主机上末级缓存有时有几百 MiB，
# 而它其实和别的虚拟机共用，这台虚拟机能用上的要小得多）。

# %%
def available_memory() -> int:
    """可用内存（字节），读 /proc/meminfo；读不到时假定 4 GiB。"""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 4 * 2**30


# 最大的数组：刚好超过末级缓存的 2 的幂个元素（至少 64 MiB）；算 GELU 时连临时数组约占它的 10 倍，只用可用内存的 1/4。
LARGEST = max(2**24, 2 ** math.ceil(math.log2(LLC / 4 + 1)))
while LARGEST * 4 * 10 > available_memory() / 4 and LARGEST > 2**22:
    LARGEST //= 2
if QUICK:
    LARGEST = 2**24  # 快速版：64 MiB，在大多数机器上已经越过末级缓存
EXPONENTS = list(range(12, int(math.log2(LARGEST)) + 1, 2 if QUICK else 1))
if EXPONENTS[-1] != int(math.log2(LARGEST)):
    EXPONENTS.append(int(math.log2(LARGEST)))
BEYOND_CACHE = LARGEST * 4 > LLC
print(f"数组从 {2**EXPONENTS[0] * 4 / 2**10:g} KiB 到 {LARGEST * 4 / 2**20:g} MiB；"
      f"最大的{'超过' if BEYOND_CACHE else '没有超过'}末级缓存")

# %% [markdown]
# 带宽用最简单的两件事量：拷贝（`np.copyto`：读一遍、写一遍，搬 8 字节每元素）和求和（只读一遍，4 字节每元素）。
# 拷贝就是逐元素运算能达到的**屋顶**：一遍运算至少要读一遍、写一遍，不可能比拷贝还快。
#
# **先猜一猜**：一个核每秒能从内存搬多少字节？数组放得进缓存时呢，快几倍？

# %%
my_guesses.guess("bandwidth_gbs", "还没猜", "一个核拷贝放不进缓存的数组，每秒搬多少 GB")  # 换成你的猜测
my_guesses.guess("cache_speedup", "还没猜", "放得进缓存的数组拷贝起来快几倍")

# %%
def measure_copy_and_sum(n: int, repeats: int) -> tuple[float, float]:
    """(拷贝, 求和) n 个 float32 的最快耗时（秒）。"""
    x = rng.standard_normal(n, dtype=np.float32)
    out = np.empty_like(x)
    np.copyto(out, x)  # 先写一遍，让系统把内存页真正分配好，不把分配算进拷贝的时间
    return best_time(lambda: np.copyto(out, x), repeats), best_time(lambda: x.sum(), repeats)


def repeats_for(n: int) -> int:
    """小数组多测几次（每次很快，噪声大），大数组少测几次（每次几秒）。"""
    return 2 if n >= 2**24 else (3 if n >= 2**20 else 7)


copy_seconds, sum_seconds = {}, {}
for e in EXPONENTS:
    copy_seconds[e], sum_seconds[e] = measure_copy_and_sum(2**e, repeats_for(2**e))
    n = 2**e
    print(f"{n * 4 / 2**20:9.3f} MiB：拷贝 {8 * n / copy_seconds[e] / 1e9:6.1f} GB/s，"
          f"求和 {4 * n / sum_seconds[e] / 1e9:6.1f} GB/s")
BANDWIDTH = 8 * LARGEST / copy_seconds[EXPONENTS[-1]]  # 字节每秒：最大的数组上拷贝的速度
print(f"内存带宽（屋顶）：{BANDWIDTH / 1e9:.1f} GB/s（一个核，拷贝 {LARGEST * 4 / 2**20:g} MiB）")
in_cache = max(8 * 2**e / copy_seconds[e] for e in EXPONENTS if 2**e * 8 <= L2)  # 两个数组都在 L2 里时最快的一次
my_guesses.reveal("bandwidth_gbs", BANDWIDTH / 1e9)
my_guesses.reveal("cache_speedup", in_cache / BANDWIDTH)

# %% [markdown]
# 有了带宽和字节数，就能**预言**：数组放不进缓存时，36 遍的 GELU 至少要 $340\ \text{字节} \times n / \text{带宽}$。
#
# ## 4. 三种 GELU
#
# - **NumPy，整个数组**：`gelu_and_slope(x)`，36 遍，每一遍都走完整个数组。
# - **NumPy，分块**：把数组切成 $2^{16}$ 个元素（256 KiB）的小块，每块做完 36 遍再做下一块。还是 36 次调用每块，
#   一次不少；但一块放得进 L2 缓存，36 遍里只有读 `x` 和写结果要碰内存。`minigrad` 的 `GELU` 运算实际就是这样做的
#   （`minigrad/kernels/threads.py` 的 `in_chunks`），下面把它写成几行，让你看清它做了什么。
# - **编译，一遍**：`minigrad/kernels/numba_gelu.py` 把同样的公式写成一个循环，numba 把它编译成机器码：
#   每个元素读一次 `x`，在寄存器里算完全部 36 步，写出值和导数。这就是 PyTorch 的做法——它的 GELU 是一个 C++ 循环，
#   不是 36 次调用。
#
# 为什么不直接用 Python 写那个循环？因为 Python 每执行一步都要解释一次，比 NumPy 的 C 循环慢几十到上百倍：
# 一遍的好处，要靠编译才拿得到。先量这一点。

# %%
def gelu_python_loop(x: np.ndarray) -> np.ndarray:
    """一遍的 GELU，但用 Python 解释执行：每个元素单独算 x Phi(x)（只算值，不算导数）。"""
    y = np.empty_like(x)
    for i in range(x.size):
        xi = float(x[i])
        y[i] = xi * 0.5 * math.erfc(-xi / math.sqrt(2))
    return y


x = rng.standard_normal(2**14, dtype=np.float32)
python_seconds = best_time(lambda: gelu_python_loop(x), 2)
numpy_seconds = best_time(lambda: gelu_and_slope(x), 5)
print(f"{x.size:,} 个元素：Python 一遍 {python_seconds * 1e3:.1f} 毫秒，NumPy 36 遍 {numpy_seconds * 1e3:.2f} 毫秒"
      f"（Python 慢 {python_seconds / numpy_seconds:.0f} 倍，而且它还没算导数）")
assert np.allclose(gelu_python_loop(x), gelu_and_slope(x)[0], rtol=1e-5, atol=1e-6)
assert python_seconds > 5 * numpy_seconds

# %% [markdown]
# 分块的 GELU：结果数组一次分配好，每一块算出来就拷进去。

# %%
def gelu_in_blocks(x: np.ndarray, block: int = BLOCK_SIZE) -> tuple[np.ndarray, np.ndarray]:
    """gelu_and_slope(x)，但一块一块地算：每块 block 个元素，36 遍都在缓存里。"""
    flat = x.reshape(-1)
    y, slope = np.empty_like(flat), np.empty_like(flat)
    for start in range(0, flat.size, block):
        part = slice(start, start + block)
        y[part], slope[part] = gelu_and_slope(flat[part])
    return y.reshape(x.shape), slope.reshape(x.shape)


VARIANTS: dict[str, Callable[[np.ndarray], object]] = {"numpy": gelu_and_slope, "blocks": gelu_in_blocks}
if FUSED:
    VARIANTS["fused"] = numba_gelu.gelu_forward
x = rng.standard_normal(3 * BLOCK_SIZE + 5, dtype=np.float32)
reference = gelu_and_slope(x)
for gelu in VARIANTS.values():
    y, slope = gelu(x)
    assert np.allclose(y, reference[0], rtol=1e-5, atol=1e-6) and np.allclose(slope, reference[1], rtol=1e-5, atol=1e-6)
print("每种写法都算出同样的值和导数（到 float32 的舍入误差）：", ", ".join(VARIANTS))

# %% [markdown]
# **先猜一猜**：数组放不进末级缓存时，36 遍的 NumPy GELU 比编译成一遍的慢多少倍？照上面的字节数，搬运最多差 28 倍左右；
# 实际会更多还是更少？分块呢，它和整个数组相比能快多少？
#
# 下面在每个大小上把几种写法轮流各跑几次（轮流跑，机器忙闲对它们的影响差不多），取各自最快的一次。

# %%
my_guesses.guess("blocks_speedup", "还没猜", "放不进末级缓存时，分块比整个数组的 NumPy GELU 快几倍")  # 换成你的猜测
my_guesses.guess("fused_speedup", "还没猜", "放不进末级缓存时，编译成一遍比 36 遍的 NumPy 快几倍（要装 numba 才量）")

# %%
def measure_gelus(n: int, repeats: int) -> dict[str, float]:
    """每种 GELU 在 n 个 float32 上最快的处理器时间（秒），几种写法轮流跑。"""
    x = rng.standard_normal(n, dtype=np.float32)
    best = dict.fromkeys(VARIANTS, math.inf)
    for _ in range(repeats):
        for name, gelu in VARIANTS.items():
            start = time.process_time()
            gelu(x)
            best[name] = min(best[name], time.process_time() - start)
    return best


gelu_seconds = {}
for e in EXPONENTS:
    gelu_seconds[e] = measure_gelus(2**e, repeats_for(2**e))
    ratios = "，".join(f"{name} {gelu_seconds[e]['numpy'] / s:.1f}x"
                      for name, s in gelu_seconds[e].items() if name != "numpy")
    print(f"{2**e * 4 / 2**20:9.3f} MiB：NumPy {gelu_seconds[e]['numpy'] * 1e3:9.2f} 毫秒；比它快：{ratios}")

# %% [markdown]
# 画成图。左图是每个元素的耗时（纳秒，对数坐标）：虚线是用测得的带宽算出的“只搬运、不计算”的下限——
# 36 遍的约 340 字节，和一遍的 12 字节；最下面的实线是拷贝本身，屋顶。竖线是 L2 和末级缓存的大小。
# 右图把耗时换算成每秒搬了多少字节（每种写法按它**必须**搬的字节数算：NumPy 340 字节，分块和编译 12 字节），横线是屋顶。

# %%
sizes = np.array([2**e * 4 for e in EXPONENTS], dtype=float)  # 数组的字节数
elements = np.array([2**e for e in EXPONENTS], dtype=float)
colors = {"numpy": "C3", "blocks": "C1", "fused": "C2"}
names = {"numpy": label("NumPy，整个数组（36 遍）", "NumPy, whole array (36 passes)"),
         "blocks": label("NumPy，分块（36 遍，在缓存里）", "NumPy, in blocks (36 passes, in cache)"),
         "fused": label("编译，一遍（numba）", "compiled, one pass (numba)")}
bytes_moved = {"numpy": BYTES_NUMPY, "blocks": BYTES_FUSED, "fused": BYTES_FUSED}
fig, (left, right) = plt.subplots(1, 2, figsize=(13, 5))
for name in VARIANTS:
    seconds = np.array([gelu_seconds[e][name] for e in EXPONENTS])
    left.plot(sizes, seconds / elements * 1e9, "o-", color=colors[name], label=names[name])
    right.plot(sizes, bytes_moved[name] * elements / seconds / 1e9, "o-", color=colors[name], label=names[name])
copy_ns = np.array([copy_seconds[e] for e in EXPONENTS]) / elements * 1e9
left.plot(sizes, copy_ns, "k-", label=label("拷贝（屋顶）", "copy (the roof)"))
right.plot(sizes, 8 * elements / np.array([copy_seconds[e] for e in EXPONENTS]) / 1e9, "k-",
           label=label("拷贝", "copy"))
for per_element, style in ((BYTES_NUMPY, "C3"), (BYTES_FUSED, "C2")):
    left.axhline(per_element / BANDWIDTH * 1e9, color=style, ls="--", lw=1,
                 label=label(f"搬 {per_element:.0f} 字节的下限", f"moving {per_element:.0f} B: the floor"))
right.axhline(BANDWIDTH / 1e9, color="k", ls="--", lw=1, label=label("内存带宽", "memory bandwidth"))
for ax in (left, right):
    for size, text in ((L2, "L2"), (LLC, label("末级缓存", "LLC"))):
        ax.axvline(size, color="gray", ls=":")
        ax.text(size, 0.98, f" {text}", transform=ax.get_xaxis_transform(), va="top", color="gray")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel(label("数组大小（字节）", "array size (bytes)"))
left.set_ylabel(label("每个元素的耗时（纳秒）", "time per element (ns)"))
right.set_ylabel(label("GB/s（按必须搬运的字节算）", "GB/s (bytes that must move)"))
legend = {}  # 两张图共用一个图例，放在下面，不挡住曲线
for ax in (left, right):
    for handle, text in zip(*ax.get_legend_handles_labels()):
        legend.setdefault(text, handle)
fig.legend(legend.values(), legend.keys(), loc="lower center", ncol=4, fontsize=8)
fig.suptitle(label("精确 GELU：36 遍 NumPy、分块、编译成一遍",
                   "Exact GELU: 36 NumPy passes, in blocks, one compiled pass"))
fig.tight_layout(rect=(0, 0.1, 1, 1))
show_figure(fig, "08_roofline.png")

# %% [markdown]
# 读图（你的机器上的数由上面的代码打印出来）：
#
# - 数组放得进缓存时，两条虚线并不适用（数据不出缓存）：NumPy 的 36 遍比“从内存搬 340 字节”还快。这时的差距来自
#   调用次数：每次调用 NumPy 都有一笔固定的开销，每一遍都要从缓存读、往缓存写；编译版在这里已经快好几倍。
# - 数组越过缓存以后，整个数组的 NumPy GELU 落到它自己的下限上方：它不是算得慢，是**搬得多**——
#   每一遍都把数组从内存读一遍、写一遍。
#   它每次还要新分配十来个临时数组。超过 32 MiB 的数组，C 库（glibc）每次都直接向操作系统要新的内存页、用完就还，
#   每一页第一次被写时，操作系统先要把它清零：又是一遍写内存，还算在操作系统的账上。拷贝用的是事先分配好的数组，
#   没有这笔开销；下面一格打印出最大的数组上这部分占了多少。
# - 分块的版本越过缓存以后仍然比整个数组快：36 遍都在 L2 缓存里，内存只碰一次。但它还是 36 次调用每块，每次调用都要
#   从缓存读、往缓存写，所以它比编译版慢。分块省下的是**搬运**，省不下**调用次数**。
# - 编译版把 36 步放进寄存器，一个元素只读一次、写一次：这就是融合。PyTorch 的每个运算都是这样的编译好的循环，
#   常用的组合（LayerNorm、softmax、注意力）各是一个融合好的运算；NumPy 只能一个运算一遍。
#
# 最后把结论写成断言。完整版：数组超过末级缓存时，编译版至少比 36 遍的 NumPy 快 3 倍（没有 numba 时，
# 断言分块至少快 1.5 倍）；快速版的数组小一些、机器可能很忙，只要求 2 倍（分块 1.2 倍）。

# %%
last = gelu_seconds[EXPONENTS[-1]]
blocks_speedup = last["numpy"] / last["blocks"]
print(f"{LARGEST * 4 / 2**20:g} MiB 的数组（末级缓存 {LLC / 2**20:g} MiB）：分块比整个数组快 {blocks_speedup:.1f} 倍")
my_guesses.reveal("blocks_speedup", blocks_speedup)
predicted = BYTES_NUMPY * LARGEST / BANDWIDTH
print(f"按带宽预言 NumPy GELU 至少要 {predicted * 1e3:.0f} 毫秒，实测 {last['numpy'] * 1e3:.0f} 毫秒")
big = rng.standard_normal(LARGEST, dtype=np.float32)
before = os.times()
gelu_and_slope(big)
after = os.times()
user, system = after.user - before.user, after.system - before.system
print(f"再算一次：其中操作系统（给新数组找页、清零）占 {system / max(user + system, 1e-9):.0%}")
del big  # 最大的数组占几百 MiB：用完就还
if FUSED:
    fused_speedup = last["numpy"] / last["fused"]
    print(f"编译成一遍比 36 遍的 NumPy 快 {fused_speedup:.1f} 倍，比分块快 {last['blocks'] / last['fused']:.1f} 倍")
    my_guesses.reveal("fused_speedup", fused_speedup)
    if BEYOND_CACHE or QUICK:
        assert fused_speedup >= (2 if QUICK else 3), fused_speedup
else:
    print("没有 numba：编译版没有量（pip install -e \".[fast]\" 之后再运行这一讲）")
if BEYOND_CACHE or QUICK:
    assert blocks_speedup >= (1.2 if QUICK else 1.5), blocks_speedup
else:
    print("这台机器的内存装不下比末级缓存更大的数组：不作断言")

# %% [markdown]
# ## 小结
#
# | 问题 | 办法 | 名字 | 在代码里 |
# |---|---|---|---|
# | 一行 NumPy 就是把数组读写一遍 | 数出调用次数和字节数 | 遍数、内存带宽 | `Counted`（本讲第 2 节） |
# | 36 遍都要从内存搬 | 切成放得进缓存的小块 | 分块 | `minigrad/kernels/threads.py: in_chunks` |
# | 分块还是 36 次调用 | 把整个公式写成一个编译好的循环 | 融合 | `minigrad/kernels/numba_gelu.py` |
# | 纯 Python 的一遍太慢 | 编译成机器码 | numba、PyTorch 的 C++ 运算 | `minigrad/kernels/numba_setup.py` |
#
# `minigrad` 的原则是：NumPy 的写法是规格，是你读的那一份；编译版是同一个运算的第二种实现，测试保证两者一致。

# %%
my_guesses.calibration()  # 本讲的先猜一猜：数值猜测差几倍

# %%
print(f"本讲用时 {time.time() - T_START:.1f} 秒")

# %% [markdown]
# ## 练习
#
# 4 道练习在 `tutorials/exercises/lecture08.py` 里：屋顶线，一个运算至少要多久（8.1）；
# 分块计算，每块都放得进缓存（8.2）；只新建一个数组、正好 2d 遍的多项式（8.3，检查器会数你的 NumPy 调用）。
# 最后一道是开放题（8.4）：`gelu_and_slope` 算的时候同时占着 5 个和输入一样大的数组，写一个最多占 3 个、
# 又不比它慢很多的精确 GELU。检查器用 `tracemalloc`（Python 自带的内存记账）量内存、用秒表量时间：
# 分块能做到，原地运算加 `out=` 也能做到，怎么做由你。
# 写好后运行下面这一格，或在终端里运行 `python -m tutorials.exercises check 08`。

# %%
from tutorials.exercises import check

check("08")
