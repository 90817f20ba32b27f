"""第 08 讲练习的参考答案（题目在 tutorials/exercises/lecture08.py）。先自己做，再来对照。"""

import numpy as np


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
