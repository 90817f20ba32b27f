"""第 02 讲练习的参考答案（题目在 tutorials/exercises/lecture02.py）。先自己做，再来对照。"""

import numpy as np

import minigrad as mg


def rnn_step(x: mg.Tensor, h: mg.Tensor, W_xh: mg.Tensor, W_hh: mg.Tensor, b: mg.Tensor) -> mg.Tensor:
    return (x @ W_xh + h @ W_hh + b).tanh()  # (B, H)


def gru_step(x: mg.Tensor, h: mg.Tensor, W_x: mg.Tensor, W_h: mg.Tensor, b_x: mg.Tensor,
             b_h: mg.Tensor) -> mg.Tensor:
    H = h.shape[-1]
    a, c = x @ W_x + b_x, h @ W_h + b_h  # (B, 3H) each: the [r | z | n] parts side by side
    r = (a[:, :H] + c[:, :H]).sigmoid()
    z = (a[:, H:2 * H] + c[:, H:2 * H]).sigmoid()
    n = (a[:, 2 * H:] + r * c[:, 2 * H:]).tanh()  # the reset gate scales only what comes from h
    return (1 - z) * n + z * h


def attention_context(s: mg.Tensor, enc: mg.Tensor, W_a: mg.Tensor) -> tuple[mg.Tensor, mg.Tensor]:
    query = s @ W_a  # (B, H)
    scores = (enc @ query[:, :, None])[:, :, 0]  # (B, L, H) @ (B, H, 1) -> (B, L)
    weights = scores.softmax(axis=-1)  # over the source positions j
    context = (weights[:, None, :] @ enc)[:, 0]  # (B, 1, L) @ (B, L, H) -> (B, H)
    return context, weights


def step_jacobian(h_new: np.ndarray, W_hh: np.ndarray) -> np.ndarray:
    # h_new[i] = tanh(... + sum_j h[j] W_hh[j, i]), so dh_new[i]/dh[j] = (1 - h_new[i]**2) * W_hh[j, i].
    return (1 - h_new**2)[:, None] * W_hh.T


def gradient_norms(jacobians: list[np.ndarray], g_last: np.ndarray) -> list[float]:
    g = g_last
    norms = [float(np.linalg.norm(g))]
    for J in reversed(jacobians):  # from the last step back to the first
        g = g @ J  # dL/dh_t[j] = sum_i dL/dh_{t+1}[i] * J[i, j]
        norms.append(float(np.linalg.norm(g)))
    return norms


def surviving_bias(ratio_at, target: float) -> float:
    low, high = -4.0, 1.0  # find a bracket: ratio_at(low) < target <= ratio_at(high)
    while ratio_at(high) < target:
        low, high = high, high * 2
    while high - low > 0.1:  # bisection: each measurement halves the interval
        middle = (low + high) / 2
        if ratio_at(middle) >= target:
            high = middle
        else:
            low = middle
    return high  # the smallest bias known to be enough
