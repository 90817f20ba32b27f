"""Each fused op (minigrad/fused/, and ops/reduce.py's logsumexp) equals its composed twin (minigrad/fused/twins.py),
forward and backward.

The fused op's backward is derived by hand; the twin's comes from the chain rule through primitive ops.
Agreement in float64 shows the derivation is right (and gradcheck in test_ops_nn.py shows both are).
Read next: test_engine.py.
"""

import numpy as np
import pytest
from helpers import op_settings
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.functional as F
from minigrad.fused import twins as reference
from minigrad.testing import strategies as S


def assert_twins(fused, composed, arrays, device):
    """The same outputs, and the same input gradients for one random upstream gradient."""
    results = []
    for fn in (fused, composed):
        xs = [mg.tensor(a, dtype=np.float64, device=device, requires_grad=True) for a in arrays]
        y = fn(*xs)
        y.backward(np.random.default_rng(0).standard_normal(y.shape))
        results.append((y.numpy(), [x.grad.numpy() for x in xs]))
    (y_fused, grads_fused), (y_composed, grads_composed) = results
    np.testing.assert_allclose(y_fused, y_composed, rtol=1e-10, atol=1e-12, err_msg="forward")
    for i, (g_fused, g_composed) in enumerate(zip(grads_fused, grads_composed)):
        np.testing.assert_allclose(g_fused, g_composed, rtol=1e-9, atol=1e-12, err_msg=f"gradient of input {i}")


@op_settings
@given(data=st.data())
def test_softmax_and_log_softmax(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    assert_twins(lambda t: F.softmax(t, axis), lambda t: reference.softmax(t, axis), [x], device)
    assert_twins(lambda t: F.log_softmax(t, axis), lambda t: reference.log_softmax(t, axis), [x], device)


@op_settings
@given(data=st.data(), keepdim=S.keepdims)
def test_logsumexp(device, data, keepdim):
    x = data.draw(S.floats(S.shapes()))
    dim = data.draw(S.axes(x.ndim))
    assert_twins(lambda t: t.logsumexp(dim, keepdim), lambda t: reference.logsumexp(t, dim, keepdim), [x], device)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@op_settings
@given(drawn=S.logits_and_targets(), weighted=st.booleans(), smoothing=st.sampled_from([0.0, 0.2]))
def test_cross_entropy(device, reduction, drawn, weighted, smoothing):
    logits, targets = drawn
    weight = mg.tensor(np.linspace(0.5, 2.0, logits.shape[1]), dtype="float64", device=device) if weighted else None
    assert_twins(lambda z: F.cross_entropy(z, targets, weight, reduction=reduction, label_smoothing=smoothing),
                 lambda z: reference.cross_entropy(z, targets, weight, reduction=reduction, label_smoothing=smoothing),
                 [logits], device)


@pytest.mark.parametrize("reduction", ["mean", "none"])
@op_settings
@given(drawn=S.logits_and_targets(), weighted=st.booleans())
def test_nll_loss(device, reduction, drawn, weighted):
    log_probs, targets = drawn
    weight = mg.tensor(np.linspace(0.5, 2.0, log_probs.shape[1]), dtype="float64", device=device) if weighted else None
    assert_twins(lambda x: F.nll_loss(x, targets, weight, reduction=reduction),
                 lambda x: reference.nll_loss(x, targets, weight, reduction=reduction), [log_probs], device)


@op_settings
@given(data=st.data())
def test_binary_cross_entropy(device, data):
    shape = data.draw(S.shapes())
    p, t = data.draw(S.floats(shape, 0.05, 0.95)), data.draw(S.floats(shape, 0.0, 1.0))
    assert_twins(lambda a, b: F.binary_cross_entropy(a, b, reduction="none"), reference.binary_cross_entropy,
                 [p, t], device)


@pytest.mark.parametrize("affine", [0, 1, 2], ids=["none", "weight", "weight and bias"])
@op_settings
@given(data=st.data())
def test_layer_norm(device, affine, data):
    shape = data.draw(S.shapes(min_dims=1, max_dims=3))
    arrays = [data.draw(S.floats(shape))] + [data.draw(S.floats(shape[-1:])) for _ in range(affine)]
    assert_twins(lambda t, *wb: F.layer_norm(t, t.shape[-1], *wb), reference.layer_norm, arrays, device)


@op_settings
@given(x=S.floats(S.shapes()))
def test_gelu(device, x):
    assert_twins(F.gelu, reference.gelu, [x], device)
    assert_twins(lambda t: F.gelu(t, approximate="tanh"), reference.gelu_tanh, [x], device)


@pytest.mark.parametrize("kind", ["plain", "causal", "boolean mask", "additive mask"])
@op_settings
@given(data=st.data())
def test_scaled_dot_product_attention(device, kind, data):
    q, k, v, mask = data.draw(S.attention_inputs(kind))
    causal = kind == "causal"
    assert_twins(lambda *qkv: F.scaled_dot_product_attention(*qkv, attn_mask=mask, is_causal=causal),
                 lambda *qkv: reference.scaled_dot_product_attention(*qkv, attn_mask=mask, is_causal=causal),
                 [q, k, v], device)


@op_settings
@given(data=st.data())
def test_embedding(device, data):
    """Repeated ids included: both must collect every gradient of a row that is picked twice."""
    num, dim = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 4))
    weight = data.draw(S.floats((num, dim)))
    ids = np.array(data.draw(st.lists(st.integers(0, num - 1), min_size=1, max_size=6)))
    assert_twins(lambda w: F.embedding(ids, w), lambda w: reference.embedding(ids, w), [weight], device)
