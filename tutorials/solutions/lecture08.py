"""第 08 讲练习的参考答案（题目在 tutorials/exercises/lecture08.py）。先自己做，再来对照。"""

import numpy as np

from minigrad.fused.gelu import gelu_and_slope


def roofline_seconds(n: int, bytes_per_element: float, flops_per_element: float, bandwidth: float,
                     flops_per_second: float) -> float:
    moving = n * bytes_per_element / bandwidth  # the time to read and write the data once
    computing = n * flops_per_element / flops_per_second  # the time to do the arithmetic
    return max(moving, computing)  # they overlap: the slower of the two sets the pace


def in_blocks(f, x: np.ndarray, block: int) -> tuple[np.ndarray, ...]:
    flat = x.reshape(-1)
    outputs = None
    for start in range(0, flat.size, block):
        parts = f(flat[start:start + block])  # at most block elements: they stay in the cache
        if outputs is None:  # the first block tells how many results there are, and their dtypes
            outputs = tuple(np.empty(flat.size, dtype=part.dtype) for part in parts)
        for output, part in zip(outputs, parts):
            output[start:start + block] = part
    return tuple(output.reshape(x.shape) for output in outputs)


def horner(coefficients: list[float], s: np.ndarray) -> np.ndarray:
    *lower, next_to_last, last = coefficients
    y = s * last  # the one new array
    y += next_to_last
    for c in reversed(lower):
        y *= s
        y += c
    return y


def gelu_lean(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    block = 2**14  # 64 KiB a block: its temporaries stay in the L2 cache and are tiny next to x
    flat = x.reshape(-1)
    y, slope = np.empty_like(flat), np.empty_like(flat)  # the two results: the only arrays as large as x
    for start in range(0, flat.size, block):
        y[start:start + block], slope[start:start + block] = gelu_and_slope(flat[start:start + block])
    return y.reshape(x.shape), slope.reshape(x.shape)
