"""Each fused op (minigrad/ops/nn.py) equals its composed twin (minigrad/reference.py), forward and backward.

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
from minigrad import reference
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
@given(drawn=S.logits_and_targets(), use_ignore_index=st.booleans())
def test_cross_entropy(device, drawn, use_ignore_index):
    logits, targets = drawn
    ignore_index = -100 if use_ignore_index else None
    targets = targets if use_ignore_index else np.maximum(targets, 0)
    assert_twins(lambda z: F.cross_entropy(z, targets, ignore_index), lambda z: reference.cross_entropy(
        z, targets, ignore_index), [logits], device)


@pytest.mark.parametrize("affine", [0, 1, 2], ids=["none", "weight", "weight and bias"])
@op_settings
@given(data=st.data())
def test_layer_norm(device, affine, data):
    shape = data.draw(S.shapes(min_dims=1, max_dims=3))
    arrays = [data.draw(S.floats(shape))] + [data.draw(S.floats(shape[-1:])) for _ in range(affine)]
    assert_twins(F.layer_norm, reference.layer_norm, arrays, device)


@op_settings
@given(x=S.floats(S.shapes()))
def test_gelu(device, x):
    assert_twins(F.gelu, reference.gelu, [x], device)


@pytest.mark.parametrize("kind", ["plain", "causal", "boolean mask", "additive mask"])
@op_settings
@given(data=st.data())
def test_scaled_dot_product_attention(device, kind, data):
    q, k, v, mask = data.draw(S.attention_inputs(kind))
    causal = kind == "causal"
    assert_twins(lambda *qkv: F.scaled_dot_product_attention(*qkv, is_causal=causal, mask=mask),
                 lambda *qkv: reference.scaled_dot_product_attention(*qkv, is_causal=causal, mask=mask),
                 [q, k, v], device)


@op_settings
@given(data=st.data())
def test_embedding(device, data):
    """Repeated ids included: both must collect every gradient of a row that is picked twice."""
    num, dim = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 4))
    weight = data.draw(S.floats((num, dim)))
    ids = np.array(data.draw(st.lists(st.integers(0, num - 1), min_size=1, max_size=6)))
    assert_twins(lambda w: F.embedding(w, ids), lambda w: reference.embedding(w, ids), [weight], device)
