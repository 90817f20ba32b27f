"""Property-based gradient checks, on every device (cpu and the strict stand-in), for the differentiable names
added for PyTorch programs: F.rms_norm / nn.RMSNorm and nn.MultiheadAttention (with a float attn_mask that
gets its gradient), each also against PyTorch through check_op."""

import numpy as np
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
