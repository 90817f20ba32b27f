"""The neural-network functions: softmax, log_softmax, cross_entropy, embedding, layer_norm, dropout and
scaled_dot_product_attention (F.gelu is with the elementwise ops).

Read next: test_fused.py, which shows each fused op equals its composed twin in minigrad/reference.py.
"""

import numpy as np
import pytest
from helpers import check_op, op_settings, torch
from hypothesis import given
from hypothesis import strategies as st

import minigrad as mg
import minigrad.functional as F
from minigrad.testing import strategies as S


def np_log_softmax(x, axis):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def np_softmax(x, axis):
    return np.exp(np_log_softmax(x, axis))


@op_settings
@given(data=st.data())
def test_softmax_and_log_softmax(device, data):
    x = data.draw(S.floats(S.shapes(min_dims=1)))
    axis = data.draw(st.integers(-x.ndim, x.ndim - 1))
    check_op(lambda t: t.softmax(axis), lambda a: np_softmax(a, axis), [x], device,
             torch_fn=lambda t: t.softmax(axis))
    check_op(lambda t: F.log_softmax(t, axis), lambda a: np_log_softmax(a, axis), [x], device,
             torch_fn=lambda t: t.log_softmax(axis))


def test_softmax_of_huge_logits_does_not_overflow(device):
    x = mg.tensor([1000.0, 1000.0, -1000.0], device=device)
    np.testing.assert_allclose(F.softmax(x).numpy(), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(x.log_softmax().numpy(), [-np.log(2), -np.log(2), -2000 - np.log(2)])


# cross_entropy --------------------------------------------------------------------------------------------------
def np_cross_entropy(logits, targets, ignore_index=None):
    z, t = logits.reshape(-1, logits.shape[-1]), targets.reshape(-1)
    counted = np.ones(t.shape, bool) if ignore_index is None else t != ignore_index
    picked = np_log_softmax(z, -1)[np.arange(len(t)), np.where(counted, t, 0)]
    return -(picked * counted).sum() / counted.sum()


@op_settings
@given(drawn=S.logits_and_targets(), use_ignore_index=st.booleans())
def test_cross_entropy(device, drawn, use_ignore_index):
    logits, targets = drawn
    if not use_ignore_index:
        targets = np.maximum(targets, 0)
    ignore_index = -100 if use_ignore_index else None
    check_op(lambda z: F.cross_entropy(z, targets, ignore_index=ignore_index),
             lambda z: np_cross_entropy(z, targets, ignore_index), [logits], device,
             torch_fn=lambda z: torch.nn.functional.cross_entropy(
                 z.reshape(-1, z.shape[-1]), torch.tensor(targets.reshape(-1)), ignore_index=-100))


def test_cross_entropy_takes_targets_as_a_tensor(device):
    logits = mg.tensor([[0.0, 0.0], [0.0, 0.0]], device=device)
    loss = F.cross_entropy(logits, mg.tensor([0, 1], device=device))
    assert loss.item() == pytest.approx(np.log(2))


# embedding ------------------------------------------------------------------------------------------------------
@op_settings
@given(data=st.data())
def test_embedding(device, data):
    weight = data.draw(S.floats((data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3)))))
    ids = data.draw(S.integer_ids(S.shapes(max_dims=2, max_side=4), weight.shape[0]))
    check_op(lambda w: F.embedding(w, ids), lambda w: w[ids], [weight], device,
             torch_fn=lambda w: torch.nn.functional.embedding(torch.tensor(ids), w))


def test_embedding_of_a_repeated_id_accumulates_its_gradient(device):
    weight = mg.tensor(np.zeros((3, 2)), requires_grad=True, device=device)
    F.embedding(weight, np.array([[2, 0, 2]])).sum().backward()
    np.testing.assert_array_equal(weight.grad.numpy(), [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]])


# layer_norm -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("affine", ["none", "weight", "weight and bias"])
@op_settings
@given(data=st.data())
def test_layer_norm(device, affine, data):
    shape = data.draw(S.shapes(min_dims=1, max_dims=3).filter(lambda s: s[-1] >= 2))
    x = data.draw(S.distinct_floats(shape))  # spread-out rows: variance well above eps
    params = [data.draw(S.floats(shape[-1:])) for _ in range({"none": 0, "weight": 1, "weight and bias": 2}[affine])]

    def np_layer_norm(a, w=None, b=None):
        y = (a - a.mean(-1, keepdims=True)) / np.sqrt(a.var(-1, keepdims=True) + 1e-5)
        return y * (1 if w is None else w) + (0 if b is None else b)

    check_op(F.layer_norm, np_layer_norm, [x, *params], device,
             torch_fn=lambda a, *wb: torch.nn.functional.layer_norm(a, a.shape[-1:], *wb, eps=1e-5))


# dropout --------------------------------------------------------------------------------------------------------
def test_dropout_with_a_fixed_seed_is_repeatable(device):
    x = mg.ones(4, 5, device=device)
    mg.manual_seed(7)
    first = F.dropout(x, 0.5).numpy()
    mg.manual_seed(7)
    np.testing.assert_array_equal(F.dropout(x, 0.5).numpy(), first)


def test_dropout_is_the_identity_for_p_0_and_in_eval(device):
    x = mg.randn(3, 4, device=device)
    np.testing.assert_array_equal(F.dropout(x, 0.0).numpy(), x.numpy())
    np.testing.assert_array_equal(F.dropout(x, 0.9, training=False).numpy(), x.numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_mask_statistics_and_gradient(device, dtype):
    p = 0.25
    x = mg.ones(200, 500, dtype=dtype, device=device, requires_grad=True)
    y = F.dropout(x, p)
    assert y.dtype == dtype
    values = y.numpy()
    dropped = values == 0
    assert abs(dropped.mean() - p) < 0.01  # 100,000 draws: the standard error is 0.0014
    np.testing.assert_allclose(values[~dropped], 1 / (1 - p), rtol=1e-6)  # survivors are scaled up...
    assert abs(values.mean() - 1) < 0.02  # ...so the expected value is unchanged
    y.backward(np.full(y.shape, 2.0))
    np.testing.assert_allclose(x.grad.numpy(), 2.0 * values, rtol=1e-6)  # the same mask, the same scale


def test_dropout_rejects_p_outside_0_1():
    with pytest.raises(ValueError, match="p must be in"):
        F.dropout(mg.ones(3), 1.0)


# scaled_dot_product_attention ----------------------------------------------------------------------------------
def np_attention(q, k, v, causal=False, mask=None):
    scores = q @ np.swapaxes(k, -1, -2) / np.sqrt(q.shape[-1])
    if causal:  # bottom-right aligned: the queries are the last positions of the keys
        scores = np.where(np.tri(q.shape[-2], k.shape[-2], k.shape[-2] - q.shape[-2], dtype=bool), scores, -np.inf)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    return np_softmax(scores, -1) @ v


def torch_attention(q, k, v, causal, mask):
    if causal:  # torch aligns is_causal top-left when Tq < Tk; spell out the bottom-right mask
        t_q, t_k = q.shape[-2], k.shape[-2]
        mask = np.tri(t_q, t_k, t_k - t_q, dtype=bool)
    mask = None if mask is None else torch.tensor(mask)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)


@pytest.mark.parametrize("kind", ["plain", "causal", "boolean mask", "additive mask"])
@op_settings
@given(data=st.data())
def test_scaled_dot_product_attention(device, kind, data):
    q, k, v, mask = data.draw(S.attention_inputs(kind))
    causal = kind == "causal"
    check_op(lambda *qkv: F.scaled_dot_product_attention(*qkv, is_causal=causal, mask=mask),
             lambda *qkv: np_attention(*qkv, causal=causal, mask=mask), [q, k, v], device,
             torch_fn=lambda *qkv: torch_attention(*qkv, causal, mask))


def test_causal_attention_with_fewer_queries_than_keys_is_bottom_right_aligned(device):
    """With a KV cache the one new query is the last position: it sees every key, as without the mask."""
    q, k, v = (mg.randn(1, 2, n, 4, device=device) for n in (1, 5, 5))
    np.testing.assert_allclose(F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy(),
                               F.scaled_dot_product_attention(q, k, v).numpy(), rtol=1e-5)
    probs = F.attention_probs(mg.randn(2, 4, device=device), mg.randn(3, 4, device=device), is_causal=True)
    assert (probs.numpy() > 0).tolist() == [[True, True, False], [True, True, True]]


def test_attention_keeps_float32_with_a_float64_additive_mask(device):
    q = mg.randn(2, 3, 4, device=device)
    assert F.scaled_dot_product_attention(q, q, q, mask=np.zeros((3, 3))).dtype == np.float32


def test_attention_dropout_has_the_right_gradient_for_a_fixed_mask(device):
    """With the seed reset inside, every evaluation draws the same mask, so gradcheck sees one function."""
    rng = np.random.default_rng(0)
    q, k, v = (mg.tensor(rng.standard_normal(shape), dtype=np.float64, requires_grad=True, device=device)
               for shape in [(2, 3, 4), (2, 5, 4), (2, 5, 4)])

    def attend(q, k, v):
        mg.manual_seed(3)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.4)

    assert mg.gradcheck(attend, [q, k, v])
    kept = attend(q, k, v).numpy()
    assert not np.allclose(kept, F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy())


def test_attention_dropout_rejects_p_of_one(device):
    q = mg.zeros(1, 2, 4, device=device)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\), got 1.0"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
