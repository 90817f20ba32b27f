"""第 04 讲练习的参考答案（题目在 tutorials/exercises/lecture04.py）。先自己做，再来对照。"""

import numpy as np


def frequencies(dim: int) -> np.ndarray:
    """omega_i = 10000^(-2i/dim) for the dim/2 pairs of dimensions."""
    return 10000.0 ** (-np.arange(0, dim, 2) / dim)


def sinusoidal_table(n_positions: int, dim: int) -> np.ndarray:
    angles = np.arange(n_positions)[:, None] * frequencies(dim)  # (P, dim/2)
    pe = np.zeros((n_positions, dim))
    pe[:, 0::2] = np.sin(angles)  # even dimensions: sine
    pe[:, 1::2] = np.cos(angles)  # odd dimensions: the cosine of the same angle
    return pe


def pe_dot(k: int, dim: int) -> float:
    # sum_i sin(p w) sin((p + k) w) + cos(p w) cos((p + k) w) = sum_i cos(k w): p drops out.
    return float(np.cos(k * frequencies(dim)).sum())


def rope(x: np.ndarray, position: int, base: float = 10000.0) -> np.ndarray:
    half = x.shape[-1] // 2
    angle = position * base ** (-np.arange(half) / half)  # (half,)
    cos, sin = np.cos(angle), np.sin(angle)
    x1, x2 = x[:half], x[half:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin])


def offset_matrix(k: int, dim: int) -> np.ndarray:
    # [sin(a + t), cos(a + t)] = [sin a, cos a] @ [[cos t, -sin t], [sin t, cos t]], one block per pair.
    M = np.zeros((dim, dim))
    for i, theta in enumerate(k * frequencies(dim)):
        M[2 * i : 2 * i + 2, 2 * i : 2 * i + 2] = [[np.cos(theta), -np.sin(theta)], [np.sin(theta), np.cos(theta)]]
    return M


def position_bias(n_head: int, train_length: int):
    import minigrad as mg

    class RelativeBias(mg.nn.Module):
        """One learnable number per head and distance i - j (T5's relative bias), distances past the longest seen
        in training sharing the last one: it depends only on how far back j is, never on where i is."""

        def __init__(self):
            super().__init__()
            self.table = mg.nn.Parameter(np.zeros((n_head, train_length)))

        def forward(self, T: int) -> mg.Tensor:
            distance = np.arange(T)[:, None] - np.arange(T)[None, :]  # i - j; negative ones are masked anyway
            return self.table[:, np.clip(distance, 0, train_length - 1)]  # (n_head, T, T)

    return RelativeBias()
