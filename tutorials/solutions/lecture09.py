"""第 09 讲练习的参考答案（题目在 tutorials/exercises/lecture09.py）。先自己做，再来对照。"""

import math

import numpy as np

import minigrad as mg


def embed(idx: np.ndarray, wte: mg.Tensor, wpe: mg.Tensor) -> mg.Tensor:
    T = idx.shape[-1]
    return wte[idx] + wpe[:T]  # (B, T, C) + (T, C): every row of the batch gets the same positions


def mlp(x: mg.Tensor, c_fc_weight: mg.Tensor, c_fc_bias: mg.Tensor, c_proj_weight: mg.Tensor,
        c_proj_bias: mg.Tensor) -> mg.Tensor:
    h = x @ c_fc_weight.swapaxes(-1, -2) + c_fc_bias  # (B, T, 4C): Linear weights are (out, in)
    h = 0.5 * h * (1 + (h / math.sqrt(2)).erf())  # the exact GELU, x·Φ(x)
    return h @ c_proj_weight.swapaxes(-1, -2) + c_proj_bias  # (B, T, C)


def block(x: mg.Tensor, ln_1, attn, ln_2, mlp) -> mg.Tensor:
    x = x + attn(ln_1(x))  # pre-LN: normalise what goes into the sublayer, add its output to the stream
    x = x + mlp(ln_2(x))
    return x


def lm_loss(logits: mg.Tensor, targets: np.ndarray) -> mg.Tensor:
    B, T, V = logits.shape
    z = logits.reshape(B * T, V)  # one row per position
    z = z - z.max(dim=-1, keepdim=True).values.detach()  # the shift changes nothing but keeps exp from overflowing
    log_probs = z - z.exp().sum(axis=-1, keepdims=True).log()  # log-softmax
    picked = log_probs[np.arange(B * T), np.asarray(targets).ravel()]  # (B·T,): log p(answer) at each position
    return -picked.mean()


def lr_at(step: int, max_lr: float, warmup_iters: int, decay_iters: int, min_lr: float) -> float:
    if step < warmup_iters:
        return max_lr * (step + 1) / (warmup_iters + 1)
    if step > decay_iters:
        return min_lr
    ratio = (step - warmup_iters) / (decay_iters - warmup_iters)
    return min_lr + 0.5 * (1 + math.cos(math.pi * ratio)) * (max_lr - min_lr)


def adamw_update(p: np.ndarray, g: np.ndarray, m: np.ndarray, v: np.ndarray, t: int, lr: float,
                 betas: tuple = (0.9, 0.99), eps: float = 1e-8, weight_decay: float = 0.0) -> None:
    beta1, beta2 = betas
    p *= 1 - lr * weight_decay  # decoupled weight decay, before the Adam step
    m *= beta1
    m += (1 - beta1) * g
    v *= beta2
    v += (1 - beta2) * g * g
    m_hat = m / (1 - beta1**t)  # bias corrections: m and v start at 0
    v_hat = v / (1 - beta2**t)
    p -= lr * m_hat / (np.sqrt(v_hat) + eps)


def train_step(model, x: np.ndarray, y: np.ndarray, state: dict, lr: float,
               grad_clip: float = 1.0, weight_decay: float = 0.1) -> float:
    # forward
    _, loss = model(x, y)
    # backward
    params = list(model.named_parameters())
    for _, p in params:
        p.grad = None  # gradients add up across backward calls: start from none
    loss.backward()
    params = [(name, p) for name, p in params if p.grad is not None]  # a parameter the loss never used stays
    grads = [p.grad.numpy() for _, p in params]
    norm = math.sqrt(sum(float((g * g).sum()) for g in grads))  # one norm over all gradients together
    scale = min(1.0, grad_clip / (norm + 1e-6))
    # update
    state["t"] = state.get("t", 0) + 1
    for (name, p), g in zip(params, grads):
        m = state.setdefault("m", {}).setdefault(name, np.zeros_like(p.array))
        v = state.setdefault("v", {}).setdefault(name, np.zeros_like(p.array))
        decay = weight_decay if p.ndim >= 2 else 0.0  # the matrices decay; biases and LayerNorm gains do not
        adamw_update(p.array, (g * scale).astype(p.array.dtype), m, v, state["t"], lr, weight_decay=decay)
    return loss.item()
