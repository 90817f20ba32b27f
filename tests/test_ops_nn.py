"""The neural-network functions: softmax, log_softmax, embedding, layer_norm, dropout and
scaled_dot_product_attention (activations: test_ops_activations.py; losses: test_ops_losses.py).

Read next: test_ops_losses.py, then test_fused.py, which shows each fused op equals its composed twin in
minigrad/fused/twins.py.
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
    np.testing.assert_allclose(F.softmax(x, dim=0).numpy(), [0.5, 0.5, 0.0])
    np.testing.assert_allclose(x.log_softmax().numpy(), [-np.log(2), -np.log(2), -2000 - np.log(2)])


def test_softmax_and_log_softmax_over_an_empty_dim_are_empty(device):
    """As PyTorch: an empty result, not NumPy's 'zero-size array to reduction operation maximum'."""
    x = mg.zeros(3, 0, requires_grad=True, device=device)
    for y in (x.softmax(-1), F.log_softmax(x, dim=1)):
        assert y.shape == (3, 0)
        y.sum().backward()
        assert x.grad.shape == (3, 0)


def test_softmax_dims_and_dtypes_as_pytorch(device):
    x = mg.tensor([[1.0, 2.0], [3.0, 5.0]], device=device)
    np.testing.assert_allclose(x.softmax(np.int64(0)).numpy(), x.softmax(axis=0).numpy())  # a NumPy int is a dim
    np.testing.assert_allclose(F.softmax(x, 1).numpy(), x.softmax(-1).numpy())
    ints = mg.tensor([1, 2], device=device)
    with pytest.raises(NotImplementedError, match="softmax: not implemented for int64 tensors"):
        ints.softmax(0)
    with pytest.raises(NotImplementedError, match="log_softmax: not implemented for int64 tensors"):
        F.log_softmax(ints, 0)
    y = ints.softmax(0, dtype="float32")  # PyTorch's dtype= converts first
    assert y.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), [1 / (1 + np.e), np.e / (1 + np.e)], rtol=1e-6)
    with pytest.raises(TypeError, match="softmax: pass dim"):
        F.softmax(x)  # PyTorch's implicit dim depended on the rank (dim 0 for 3-d input): never guessed here
    with pytest.raises(IndexError, match="softmax: dim 2 is out of range"):
        x.softmax(2)


# embedding ------------------------------------------------------------------------------------------------------
@op_settings
@given(data=st.data())
def test_embedding(device, data):
    weight = data.draw(S.floats((data.draw(st.integers(1, 5)), data.draw(st.integers(1, 3)))))
    ids = data.draw(S.integer_ids(S.shapes(max_dims=2, max_side=4), weight.shape[0]))
    check_op(lambda w: F.embedding(ids, w), lambda w: w[ids], [weight], device,
             torch_fn=lambda w: torch.nn.functional.embedding(torch.tensor(ids), w))


def test_embedding_of_a_repeated_id_accumulates_its_gradient(device):
    weight = mg.tensor(np.zeros((3, 2)), requires_grad=True, device=device)
    F.embedding(np.array([[2, 0, 2]]), weight).sum().backward()
    np.testing.assert_array_equal(weight.grad.numpy(), [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]])


def test_embedding_padding_idx_gets_no_gradient(device):
    weight = mg.tensor(np.ones((3, 2)), requires_grad=True, device=device)
    F.embedding(mg.tensor([[2, 0, 2]], device=device), weight, padding_idx=-1).sum().backward()
    np.testing.assert_array_equal(weight.grad.numpy(), [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]])
    layer = mg.nn.Embedding(4, 3, padding_idx=1)
    assert layer.weight.numpy()[1].tolist() == [0.0, 0.0, 0.0]  # as torch.nn.Embedding starts it


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

    check_op(lambda a, *wb: F.layer_norm(a, a.shape[-1:], *wb), np_layer_norm, [x, *params], device,
             torch_fn=lambda a, *wb: torch.nn.functional.layer_norm(a, a.shape[-1:], *wb, eps=1e-5))


def test_layer_norm_over_several_trailing_axes(device):
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    w, b = np.full((3, 4), 2.0), np.full((3, 4), 0.5)
    y = F.layer_norm(mg.tensor(x, device=device), (3, 4), mg.tensor(w, device=device), mg.tensor(b, device=device))
    flat = x.reshape(2, 12)
    expected = (flat - flat.mean(1, keepdims=True)) / np.sqrt(flat.var(1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(y.numpy(), expected.reshape(2, 3, 4) * 2 + 0.5, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match=r"layer_norm: normalized_shape \(3,\) must be the last axes"):
        F.layer_norm(mg.tensor(x), 3)


def test_layer_norm_in_float16_computes_its_statistics_in_float32(device):
    """A row spread by 300 has a variance far past float16's 65504: PyTorch normalises it in float32; a float16
    variance would be inf and the whole row silently 0."""
    x = mg.tensor([[300.0, -300.0, 10.0, 20.0]], dtype="float16", requires_grad=True, device=device)
    w = mg.tensor(np.ones(4), dtype="float16", requires_grad=True, device=device)
    y = F.layer_norm(x, 4, w)
    assert y.dtype == np.float16
    row = np.array([300.0, -300.0, 10.0, 20.0])
    expected = (row - row.mean()) / np.sqrt(row.var() + 1e-5)
    np.testing.assert_allclose(y.numpy()[0], expected, rtol=2e-3)
    y.backward(np.ones((1, 4)))
    assert x.grad.dtype == w.grad.dtype == np.float16 and np.isfinite(x.grad.numpy()).all()
    if torch is not None:
        theirs = torch.nn.functional.layer_norm(torch.tensor(x.numpy()), (4,))
        np.testing.assert_allclose(y.numpy(), theirs.numpy(), rtol=1e-3)


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
    if causal:  # top-left aligned, as PyTorch: query i sees keys 0..i
        scores = np.where(np.tri(q.shape[-2], k.shape[-2], dtype=bool), scores, -np.inf)
    if mask is not None:
        scores = np.where(mask, scores, -np.inf) if mask.dtype == bool else scores + mask
    return np_softmax(scores, -1) @ v


def torch_attention(q, k, v, causal, mask):
    mask = None if mask is None else torch.tensor(mask)
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal)


@pytest.mark.parametrize("kind", ["plain", "causal", "boolean mask", "additive mask"])
@op_settings
@given(data=st.data())
def test_scaled_dot_product_attention(device, kind, data):
    q, k, v, mask = data.draw(S.attention_inputs(kind))
    causal = kind == "causal"
    check_op(lambda *qkv: F.scaled_dot_product_attention(*qkv, attn_mask=mask, is_causal=causal),
             lambda *qkv: np_attention(*qkv, causal=causal, mask=mask), [q, k, v], device,
             torch_fn=lambda *qkv: torch_attention(*qkv, causal, mask))


@pytest.mark.parametrize("shape", [(1, 33, 3), (2, 1, 70, 2), (1, 2, 64, 4)])
def test_causal_attention_in_row_blocks(device, shape):
    """Past CAUSAL_ROW_BLOCK queries, causal self-attention runs block by block (a short last block, one
    exactly full): the values, finite-difference gradients and PyTorch's, as for every other kind."""
    from minigrad.kernels.causal_rows import CAUSAL_ROW_BLOCK

    assert shape[-2] > CAUSAL_ROW_BLOCK
    q, k, v = np.random.default_rng(0).standard_normal((3, *shape))
    check_op(lambda *qkv: F.scaled_dot_product_attention(*qkv, is_causal=True),
             lambda *qkv: np_attention(*qkv, causal=True), [q, k, v], device,
             torch_fn=lambda *qkv: torch_attention(*qkv, True, None))


@pytest.mark.parametrize("kind", ["plain", "boolean mask"])
def test_attention_with_many_queries_takes_a_transposed_copy(device, kind):
    """From COPY_TRANSPOSE_FROM_ROWS queries up, k^T and v^T are contiguous copies (blas.transposed_right), below
    it views: both give the values, finite-difference gradients and PyTorch's."""
    from minigrad.kernels.blas import COPY_TRANSPOSE_FROM_ROWS

    rng = np.random.default_rng(1)
    for t_query in (COPY_TRANSPOSE_FROM_ROWS - 1, COPY_TRANSPOSE_FROM_ROWS + 2):
        q, k, v = rng.standard_normal((t_query, 3)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
        mask = None if kind == "plain" else rng.random((t_query, 5)) < 0.7
        check_op(lambda *qkv, mask=mask: F.scaled_dot_product_attention(*qkv, attn_mask=mask),
                 lambda *qkv, mask=mask: np_attention(*qkv, causal=False, mask=mask), [q, k, v], device,
                 torch_fn=lambda *qkv, mask=mask: torch_attention(*qkv, False, mask))


def test_causal_attention_in_row_blocks_drops_the_same_probabilities(device, monkeypatch):
    """With dropout, the blocks take their part of the one dropout mask: same outputs and gradients as whole."""
    from minigrad.kernels import causal_rows

    def attention_and_grads():
        mg.manual_seed(3)
        q, k, v = (mg.randn(2, 2, 45, 4, device=device, dtype=np.float64, requires_grad=True) for _ in range(3))
        y = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3, is_causal=True)
        (y * y).sum().backward()
        return [t.numpy() for t in (y, q.grad, k.grad, v.grad)]

    in_blocks = attention_and_grads()
    monkeypatch.setattr(causal_rows, "CAUSAL_ROW_BLOCK", 64)  # one block: the whole (T, T) path
    whole = attention_and_grads()
    for ours, reference in zip(in_blocks, whole):
        np.testing.assert_allclose(ours, reference, rtol=1e-12, atol=1e-14)


def test_is_causal_is_aligned_top_left_as_in_pytorch(device):
    """With fewer queries than keys, query i still sees keys 0..i (PyTorch's tril of an (L, S) matrix)."""
    probs = F.attention_probs(mg.randn(2, 4, device=device), mg.randn(3, 4, device=device), is_causal=True)
    assert (probs.numpy() > 0).tolist() == [[True, False, False], [True, True, False]]
    if torch is not None:
        q, k, v = torch.eye(2)[None], torch.eye(3, 2)[None], torch.arange(3.0)[None, :, None]
        ours = F.scaled_dot_product_attention(*(mg.tensor(t.numpy()) for t in (q, k, v)), is_causal=True)
        theirs = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-6)


def test_a_bottom_right_mask_for_queries_that_are_the_last_positions(device):
    """What a KV cache passes: the one new query is the last position and sees every key."""
    q, k, v = (mg.randn(1, 2, n, 4, device=device) for n in (1, 5, 5))
    last = np.tri(1, 5, 4, dtype=bool)
    np.testing.assert_allclose(F.scaled_dot_product_attention(q, k, v, attn_mask=last).numpy(),
                               F.scaled_dot_product_attention(q, k, v).numpy(), rtol=1e-5)


def test_a_query_masked_from_every_key_gives_zeros_as_in_pytorch(device):
    q = mg.tensor([[[1.0, 2.0], [3.0, 4.0]]], requires_grad=True, device=device)
    mask = np.array([[False, False], [True, True]])
    y = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert y.numpy()[0, 0].tolist() == [0.0, 0.0] and np.isfinite(y.numpy()).all()
    y.sum().backward()
    assert np.isfinite(q.grad.numpy()).all()
    additive = F.scaled_dot_product_attention(q, q, q, attn_mask=np.where(mask, 0.0, -np.inf))
    np.testing.assert_allclose(additive.numpy(), y.numpy())
    if torch is not None:
        tq = torch.tensor(q.numpy(), requires_grad=True)
        ty = torch.nn.functional.scaled_dot_product_attention(tq, tq, tq, attn_mask=torch.tensor(mask))
        ty.sum().backward()
        np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_attention_mask_with_is_causal_and_integer_masks_are_refused(device):
    q = mg.zeros(1, 2, 4, device=device)
    with pytest.raises(RuntimeError, match="pass attn_mask or is_causal=True, not both"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((2, 2), dtype=bool), is_causal=True)
    with pytest.raises(TypeError, match="attn_mask must be boolean .* or float .*, not int64"):
        F.scaled_dot_product_attention(q, q, q, attn_mask=np.ones((2, 2), dtype=np.int64))


@op_settings
@given(data=st.data())
def test_attention_differentiates_a_float_mask_that_requires_grad(device, data):
    """A learned additive bias (ALiBi's, a relative-position one) gets dS, summed to its broadcast shape, as in
    PyTorch: checked against finite differences and PyTorch, for a mask with and without the batch dims."""
    B, T, S_, d = data.draw(st.integers(1, 2)), data.draw(st.integers(1, 4)), data.draw(st.integers(1, 4)), 3
    mask_shape = data.draw(st.sampled_from([(T, S_), (1, S_), (B, T, S_), (B, 1, 1)]))
    rng = np.random.default_rng(data.draw(st.integers(0, 9)))
    q, k, v, bias = (rng.standard_normal(shape) for shape in ((B, T, d), (B, S_, d), (B, S_, 2), mask_shape))
    check_op(lambda *qkvm: F.scaled_dot_product_attention(*qkvm[:3], attn_mask=qkvm[3]),
             lambda q, k, v, m: np_attention(q, k, v, mask=m), [q, k, v, bias], device,
             torch_fn=lambda q, k, v, m: torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m))


def test_attention_mask_gradient_with_masked_entries_and_float32(device):
    """-inf entries in a learned mask get gradient 0, as in PyTorch; float32 in, float32 out and float32 gradient."""
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 2, 4, 3)).astype(np.float32) for _ in range(3))
    bias = rng.standard_normal((4, 4)).astype(np.float32)
    bias[np.triu_indices(4, 1)] = -np.inf
    grads = []
    for lib, dev in ((mg, device), (torch, "cpu")):
        tensors = [lib.tensor(a, requires_grad=True, device=dev) for a in (q, k, v, bias)]
        y = lib.nn.functional.scaled_dot_product_attention(*tensors[:3], attn_mask=tensors[3])
        (y * y).sum().backward()
        grads.append([t.grad for t in tensors])
    for ours, theirs in zip(*grads):
        assert ours.dtype == np.float32
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-5)


def test_attention_scale_is_pytorchs(device):
    q, k, v = (mg.randn(2, 3, 4, dtype="float64", device=device) for _ in range(3))
    scaled = F.scaled_dot_product_attention(q, k, v, scale=0.1)
    np.testing.assert_allclose(scaled.numpy(), F.scaled_dot_product_attention(q * (0.1 * 2), k, v).numpy())


def test_attention_keeps_float32_with_a_float64_additive_mask(device):
    q = mg.randn(2, 3, 4, device=device)
    assert F.scaled_dot_product_attention(q, q, q, attn_mask=np.zeros((3, 3))).dtype == np.float32


def test_attention_dropout_has_the_right_gradient_for_a_fixed_mask(device):
    """With the seed reset inside, every evaluation draws the same mask, so gradcheck sees one function."""
    rng = np.random.default_rng(0)
    q, k, v = (mg.tensor(rng.standard_normal(shape), dtype=np.float64, requires_grad=True, device=device)
               for shape in [(2, 3, 4), (2, 5, 4), (2, 5, 4)])

    def attend(q, k, v):
        mg.manual_seed(3)
        return F.scaled_dot_product_attention(q, k, v, dropout_p=0.4, is_causal=True)

    assert mg.gradcheck(attend, [q, k, v])
    kept = attend(q, k, v).numpy()
    assert not np.allclose(kept, F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy())


def test_attention_dropout_rejects_p_of_one(device):
    q = mg.zeros(1, 2, 4, device=device)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\), got 1.0"):
        F.scaled_dot_product_attention(q, q, q, dropout_p=1.0)
