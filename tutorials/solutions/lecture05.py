"""第 05 讲练习的参考答案（题目在 tutorials/exercises/lecture05.py）。先自己做，再来对照。"""

import math

import numpy as np

import minigrad as mg
import minigrad.functional as F


def block_parameters(n_embd: int) -> int:
    C = n_embd
    attention = (C * 3 * C + 3 * C) + (C * C + C)  # c_attn and c_proj, weights and biases
    mlp = (C * 4 * C + 4 * C) + (4 * C * C + C)  # c_fc and c_proj
    layer_norms = 2 * (2 * C)  # ln_1 and ln_2, each a gain and a bias
    return attention + mlp + layer_norms  # = 12 C^2 + 13 C


def layer_norm(x: mg.Tensor, weight: mg.Tensor, bias: mg.Tensor, eps: float = 1e-5) -> mg.Tensor:
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).mean(axis=-1, keepdims=True)  # the biased variance: divide by n
    return centred / (variance + eps).sqrt() * weight + bias


def split_heads(x: mg.Tensor, n_head: int) -> mg.Tensor:
    B, T, C = x.shape
    return x.reshape(B, T, n_head, C // n_head).swapaxes(1, 2)  # (B, T, nh, hs) -> (B, nh, T, hs)


def causal_self_attention(x: mg.Tensor, c_attn_weight: mg.Tensor, c_attn_bias: mg.Tensor, c_proj_weight: mg.Tensor,
                          c_proj_bias: mg.Tensor, n_head: int) -> mg.Tensor:
    B, T, C = x.shape
    qkv = F.linear(x, c_attn_weight, c_attn_bias)  # (B, T, 3C)
    q, k, v = (split_heads(qkv[:, :, i * C:(i + 1) * C], n_head) for i in range(3))  # (B, nh, T, hs) each
    hs = C // n_head
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(hs)  # (B, nh, T, T)
    future = np.triu(np.ones((T, T), dtype=bool), k=1)
    y = scores.masked_fill(future, -np.inf).softmax(axis=-1) @ v  # (B, nh, T, hs)
    y = y.swapaxes(1, 2).reshape(B, T, C)  # heads side by side again
    return F.linear(y, c_proj_weight, c_proj_bias)


class LayerNorm(mg.Function):
    """y = (x - mean) / sqrt(var + eps); dx = rstd * (gy - mean(gy) - xhat * mean(gy * xhat))."""

    def forward(self, x):
        centred = x - x.mean(axis=-1, keepdims=True)
        self.rstd = 1 / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-5)
        self.xhat = centred * self.rstd
        return self.xhat

    def backward(self, gy):
        # Three paths from x to y: directly, through the mean, and through the standard deviation.
        xhat = self.xhat
        return self.rstd * (gy - gy.mean(axis=-1, keepdims=True) - xhat * (gy * xhat).mean(axis=-1, keepdims=True))


def post_ln_block(x: mg.Tensor, w: dict, n_head: int) -> mg.Tensor:
    def mlp(h):
        return F.linear(F.gelu(F.linear(h, w["mlp.c_fc.weight"], w["mlp.c_fc.bias"])),
                        w["mlp.c_proj.weight"], w["mlp.c_proj.bias"])  # C -> 4C -> C

    C = x.shape[-1]
    attention = causal_self_attention(x, w["attn.c_attn.weight"], w["attn.c_attn.bias"], w["attn.c_proj.weight"],
                                      w["attn.c_proj.bias"], n_head)
    x = F.layer_norm(x + attention, C, w["ln_1.weight"], w["ln_1.bias"])  # normalise after the residual sum
    return F.layer_norm(x + mlp(x), C, w["ln_2.weight"], w["ln_2.bias"])


class ResidualStack(mg.nn.Module):
    """x <- x + tanh(W x + b), depth times, then a linear readout: each layer adds to x instead of replacing it,
    so the gradient reaches the first layer along the sum (lecture 05, section 5)."""

    def __init__(self, depth: int, width: int):
        super().__init__()
        self.layers = mg.nn.ModuleList([mg.nn.Linear(width, width) for _ in range(depth)])
        self.readout = mg.nn.Linear(width, 1)

    def forward(self, x: mg.Tensor) -> mg.Tensor:
        for layer in self.layers:
            x = x + layer(x).tanh()
        return self.readout(x)


def deep_net(depth: int, width: int) -> mg.nn.Module:
    return ResidualStack(depth, width)
