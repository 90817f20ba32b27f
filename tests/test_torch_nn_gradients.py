"""Property-based gradient checks, on every device (cpu and the strict stand-in), for the differentiable names
added for PyTorch programs: F.rms_norm / nn.RMSNorm, nn.MultiheadAttention (with a float attn_mask that gets its
gradient), F.pad, F.kl_div and the L1 losses, each also against PyTorch through check_op."""

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from minigrad.testing import strategies as S


@op_settings
@given(data=st.data())
def test_rms_norm(device, data):
    shape = data.draw(S.shapes(min_dims=1, max_dims=3).filter(lambda s: s[-1] >= 2))
    x = data.draw(S.distinct_floats(shape))
    w = data.draw(S.floats(shape[-1:]))

    def np_rms_norm(a, weight):
        return a / np.sqrt((a * a).mean(-1, keepdims=True) + 1e-6) * weight

    check_op(lambda a, weight: F.rms_norm(a, a.shape[-1:], weight, 1e-6), np_rms_norm, [x, w], device,
             torch_fn=lambda a, weight: torch.nn.functional.rms_norm(a, a.shape[-1:], weight, 1e-6))


def test_rms_norm_module_on_the_device(device):
    norm = nn.RMSNorm(4, device=device)
    x = mg.tensor(np.arange(8.0).reshape(2, 4), requires_grad=True, device=device)
    y = norm(x)
    assert y.device == x.device and norm.weight.device == x.device
    y.sum().backward()
    assert norm.weight.grad.shape == (4,) and x.grad.device == x.device


@op_settings
@given(data=st.data(), batch_first=st.booleans())
def test_multihead_attention_gradients(device, data, batch_first):
    E, nh = data.draw(st.sampled_from([(4, 1), (4, 2), (6, 3)]))
    B, L = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 4))
    mg.manual_seed(data.draw(st.integers(0, 100)))
    attention = nn.MultiheadAttention(E, nh, batch_first=batch_first, dtype=mg.float64, device=device)
    x = data.draw(S.floats((B, L, E) if batch_first else (L, B, E)))
    bias = data.draw(S.floats((L, L)))
    w_in, b_in, w_out, b_out = (p.numpy() for p in attention.parameters())

    def theirs(q, mask):
        module = torch.nn.MultiheadAttention(E, nh, batch_first=batch_first, dtype=torch.float64)
        with torch.no_grad():
            for p, value in zip(module.parameters(), (w_in, b_in, w_out, b_out)):
                p.copy_(torch.tensor(value))
        return module(q, q, q, attn_mask=mask)[0]

    def reference(q, mask):
        q = q if batch_first else q.swapaxes(0, 1)  # (B, L, E)
        qkv = q @ w_in.T + b_in
        hs = E // nh
        q_, k, v = (qkv[..., i * E:(i + 1) * E].reshape(B, L, nh, hs).swapaxes(1, 2) for i in range(3))
        scores = q_ @ k.swapaxes(-1, -2) / np.sqrt(hs) + mask  # (B, nh, L, L)
        probs = np.exp(scores - scores.max(-1, keepdims=True))
        probs /= probs.sum(-1, keepdims=True)
        y = (probs @ v).swapaxes(1, 2).reshape(B, L, E) @ w_out.T + b_out
        return y if batch_first else y.swapaxes(0, 1)

    # The input and the float mask (a learned bias) are checked here; the weights' gradients against PyTorch in
    # test_nn_modules.py.
    check_op(lambda q, mask: attention(q, q, q, attn_mask=mask)[0], reference, [x, bias], device,
             torch_fn=theirs, atol=1e-8)


@op_settings
@given(data=st.data(), value=st.sampled_from([0.0, -1.5]))
def test_pad_constant(device, data, value):
    shape = data.draw(S.shapes(min_dims=1, max_dims=3))
    x = data.draw(S.floats(shape))
    pad = tuple(data.draw(st.integers(0, 2)) for _ in range(2 * data.draw(st.integers(1, len(shape)))))

    def np_pad(a):
        widths = [(0, 0)] * a.ndim
        for i in range(len(pad) // 2):  # PyTorch's order: the last dim's (left, right) first
            widths[a.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
        return np.pad(a, widths, constant_values=value)

    check_op(lambda a: F.pad(a, pad, value=value), np_pad, [x], device,
             torch_fn=lambda a: torch.nn.functional.pad(a, pad, value=value))


@pytest.mark.filterwarnings("ignore:reduction.*'mean' divides:UserWarning")  # PyTorch's note on 'mean'
@op_settings
@given(data=st.data(), reduction=st.sampled_from(["mean", "sum", "none", "batchmean"]), log_target=st.booleans())
def test_kl_div(device, data, reduction, log_target):
    shape = data.draw(S.shapes(min_dims=1, max_dims=3))
    log_q = data.draw(S.floats(shape))
    p = data.draw(S.positive_floats(shape)) if not log_target else data.draw(S.floats(shape))

    def np_kl_div(inp, target):
        pointwise = np.exp(target) * (target - inp) if log_target else target * (np.log(target) - inp)
        if reduction == "none":
            return pointwise
        total = pointwise.sum()
        return {"sum": total, "mean": total / pointwise.size, "batchmean": total / shape[0]}[reduction]

    check_op(lambda inp, target: F.kl_div(inp, target, reduction=reduction, log_target=log_target), np_kl_div,
             [log_q, p], device,
             torch_fn=lambda inp, target: torch.nn.functional.kl_div(inp, target, reduction=reduction,
                                                                     log_target=log_target))


@op_settings
@given(data=st.data(), reduction=st.sampled_from(["mean", "sum", "none"]),
       loss=st.sampled_from([("l1_loss", {}), ("smooth_l1_loss", {"beta": 0.5}), ("huber_loss", {"delta": 0.7})]))
def test_the_l1_losses(device, data, reduction, loss):
    name, options = loss
    shape = data.draw(S.shapes(min_dims=0, max_dims=3))
    x, target = data.draw(S.floats(shape)), data.draw(S.floats(shape))
    target = x + np.where(np.abs(target - x) < 0.05, 0.1, target - x)  # |d| never within a step of l1's kink

    def np_loss(a, b):
        d = np.abs(a - b)
        if name == "l1_loss":
            pointwise = d
        elif name == "smooth_l1_loss":
            pointwise = np.where(d < 0.5, 0.5 * d * d / 0.5, d - 0.5 * 0.5)
        else:
            pointwise = np.where(d < 0.7, 0.5 * d * d, 0.7 * (d - 0.5 * 0.7))
        return {"none": pointwise, "sum": pointwise.sum(), "mean": pointwise.mean()}[reduction]

    check_op(lambda a, b: getattr(F, name)(a, b, reduction=reduction, **options), np_loss, [x, target], device,
             torch_fn=lambda a, b: getattr(torch.nn.functional, name)(a, b, reduction=reduction, **options))
