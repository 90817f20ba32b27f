"""The capstone: minigpt's GPT with modules swapped in that compute other parts (tutorials/parts.py), and
tutorials/capstone.py, which takes the parts from a learner's answers.

The default parts leave the GPT exactly as it was; minigpt's own functions behind the swapped modules compute the
same bits; the reference solutions, plugged in, train to the same losses as minigpt's own GPT; a wrong answer is
refused with the number of its exercise, whether its checker catches it or only a GPT's shapes do; and a part that
is plugged in is really called (a different valid part changes the output). The swaps keep minigpt's parameter
names, their order and the state_dict.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig
from tutorials import parts as default_parts
from tutorials.capstone import (
    PartError,
    batches,
    checked_once,
    learner_parts,
    parts_from,
    train_losses,
    with_derived_backward,
)
from tutorials.parts import Parts, gpt_from_parts
from tutorials.solutions import lecture03, lecture05

CONFIG = GPTConfig(vocab_size=23, block_size=16, n_layer=2, n_head=4, n_embd=32)
# AdamW on the reference solutions' composed formulas against minigpt's fused ops, both in float32: each step's
# loss agrees to float32 rounding (about 1e-7 relative); 5 steps of lr 3e-3 leave it under 1e-5 (measured: ~1e-6).
LOSS_TOLERANCE = 1e-5


def ids(seed: int, shape=(3, 16)) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, CONFIG.vocab_size, shape)


def forward_backward(model: GPT) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    logits, loss = model(ids(0), ids(1))
    loss.backward()
    return logits.numpy(), {name: p.grad.numpy() for name, p in model.named_parameters()}


def same_functions_new_names() -> Parts:
    """minigpt's own parts behind new function objects: every module is swapped, with the same maths."""
    return Parts(layer_norm=lambda *a: default_parts.layer_norm(*a),
                 split_heads=lambda *a: default_parts.split_heads(*a),
                 causal_attention=lambda *a: default_parts.causal_attention(*a), gelu=lambda x: default_parts.gelu(x))


@pytest.mark.parametrize("overrides", [{}, {"norm_position": "post", "pos_encoding": "rope", "bias": False}])
def test_default_parts_and_the_seam_leave_outputs_and_gradients_exactly_as_before(overrides):
    config = GPTConfig(**{**CONFIG.to_dict(), **overrides})
    results = []
    for build in (GPT, lambda c: gpt_from_parts(c, Parts()), lambda c: gpt_from_parts(c, same_functions_new_names())):
        mg.manual_seed(0)
        results.append(forward_backward(build(config)))
    assert Parts().custom() == [] and same_functions_new_names().custom() == ["layer_norm", "split_heads",
                                                                             "causal_attention", "gelu"]
    (logits, grads), *others = results
    for other_logits, other_grads in others:
        assert np.array_equal(logits, other_logits)
        assert grads.keys() == other_grads.keys()
        assert all(np.array_equal(grads[name], other_grads[name]) for name in grads)


@pytest.mark.parametrize("field, part", [
    ("gelu", lambda x: x.relu()),
    ("layer_norm", lambda x, w, b, eps: default_parts.layer_norm(x, w, b, 0.5)),
    ("causal_attention", lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0)),
    ("split_heads", lambda x, nh: x.reshape(x.shape[0], nh, x.shape[1], -1)),
])
def test_a_different_valid_part_changes_the_output(field, part):
    """The model really calls each part: a different (valid, differentiable) function changes the logits."""
    mg.manual_seed(0)
    plain = GPT(CONFIG)(ids(0))[0].numpy()
    mg.manual_seed(0)
    swapped = gpt_from_parts(CONFIG, Parts(**{field: part}))(ids(0))[0].numpy()
    assert np.abs(plain - swapped).max() > 1e-4


def test_the_reference_solutions_train_to_minigpts_losses():
    parts = learner_parts("solutions")
    assert parts.custom() == ["layer_norm", "split_heads", "causal_attention"]
    curves = []
    for model_parts in (Parts(), parts):
        mg.manual_seed(0)
        model = gpt_from_parts(CONFIG, model_parts)
        curves.append(train_losses(model, batches(ids(2, (2000,)).ravel(), 4, 16, seed=0), steps=5, lr=3e-3))
    own, learners = np.array(curves)
    assert own[-1] < own[0] - 0.01  # it learns: the comparison is not between two flat lines
    np.testing.assert_allclose(learners, own, rtol=0, atol=LOSS_TOLERANCE)


def test_the_hand_derived_layer_norm_backward_trains_to_minigpts_losses_too():
    parts = learner_parts("solutions", derived_backward=True)
    curves = []
    for model_parts in (Parts(), parts):
        mg.manual_seed(0)
        model = gpt_from_parts(CONFIG, model_parts)
        curves.append(train_losses(model, batches(ids(2, (2000,)).ravel(), 4, 16, seed=0), 5, 3e-3))
    np.testing.assert_allclose(curves[1], curves[0], rtol=0, atol=LOSS_TOLERANCE)


def test_the_derived_backward_is_the_one_that_runs():
    """With 5.5's Function in the seam, its backward makes the gradients: a wrong one leaves the logits as they are
    and changes the gradients (so the check above is not passing through autograd's own LayerNorm backward)."""
    mg.manual_seed(0)
    logits, grads = forward_backward(GPT(CONFIG))
    mg.manual_seed(0)
    wrong = gpt_from_parts(CONFIG, Parts(layer_norm=with_derived_backward(NormOnlyDirect)))
    wrong_logits, wrong_grads = forward_backward(wrong)
    np.testing.assert_allclose(wrong_logits, logits, rtol=1e-5, atol=1e-6)
    name = "transformer.h.0.attn.c_attn.weight"
    assert np.abs(wrong_grads[name] - grads[name]).max() > 1e-3 * np.abs(grads[name]).max()


def test_the_reference_solutions_generate_the_same_tokens():
    mg.manual_seed(0)
    own = GPT(CONFIG)
    mg.manual_seed(0)
    learners = gpt_from_parts(CONFIG, learner_parts("solutions"))
    prompt = ids(3, (2, 5))
    tokens = []
    for model, use_cache in ((own, True), (learners, False)):  # a part has no KV cache: recompute each step
        mg.manual_seed(7)
        tokens.append(model.generate(prompt, 20, top_k=5, use_cache=use_cache))  # past block_size (16): it slides
    assert np.array_equal(*tokens)


def causal_no_max(q, k, v):
    scores = q @ k.swapaxes(-1, -2) / math.sqrt(q.shape[-1])
    T = q.shape[-2]
    e = scores.masked_fill(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf).exp()  # no max subtracted
    return e / e.sum(axis=-1, keepdims=True) @ v


def causal_no_mask(q, k, v):
    return lecture03.attention(q, k, v)


def causal_no_scale(q, k, v):
    return lecture03.causal_attention(q * math.sqrt(q.shape[-1]), k, v)


def causal_wrong_transpose(q, k, v):  # k.transpose(1, 2) swaps the last two axes only for 3-D (B, T, d) inputs
    T = q.shape[-2]
    scores = q @ k.transpose(1, 2) / math.sqrt(q.shape[-1])
    return scores.masked_fill(np.triu(np.ones((T, T), dtype=bool), k=1), -np.inf).softmax(axis=-1) @ v


def norm_no_eps(x, weight, bias, eps=1e-5):
    centred = x - x.mean(axis=-1, keepdims=True)
    return centred / (centred * centred).mean(axis=-1, keepdims=True).sqrt() * weight + bias


def norm_axis(axis):
    def layer_norm(x, weight, bias, eps=1e-5):
        centred = x - x.mean(axis=axis, keepdims=True)
        return centred / ((centred * centred).mean(axis=axis, keepdims=True) + eps).sqrt() * weight + bias
    return layer_norm


def blank(*args, **kwargs):
    raise NotImplementedError


def split_by_reshape(x, n_head):
    B, T, C = x.shape
    return x.reshape(B, n_head, T, C // n_head)


SOLUTIONS = {"causal_attention": lecture03.causal_attention, "layer_norm": lecture05.layer_norm,
             "split_heads": lecture05.split_heads}


class NormOnlyDirect(mg.Function):
    """Exercise 5.5 with the backward through the division only: the mean's and the variance's paths dropped."""

    forward = lecture05.LayerNorm.forward

    def backward(self, gy):
        return gy * self.rstd


class NormAxis1(mg.Function):
    """Exercise 5.5 averaging over axis 1: the last axis of the checker's 2-D input, time in a GPT's (B, T, C)."""

    forward = lecture05.LayerNorm.forward

    def backward(self, gy):
        xhat = self.xhat
        return self.rstd * (gy - gy.mean(axis=1, keepdims=True) - xhat * (gy * xhat).mean(axis=1, keepdims=True))


@pytest.mark.parametrize("mutant, caught_by", [(NormOnlyDirect, "checker"), (NormAxis1, "gpt"), (None, "checker")])
def test_a_wrong_derived_backward_is_refused_naming_exercise_5_5(mutant, caught_by):
    with pytest.raises(PartError) as refused:
        parts_from({**SOLUTIONS, "layer_norm_function": mutant})
    assert str(refused.value).startswith("练习 5.5（LayerNorm 的反向传播）") and refused.value.number == "5.5"
    assert (refused.value.status == "gpt") == (caught_by == "gpt"), str(refused.value)


@pytest.mark.parametrize("field, mutant, number, caught_by", [
    ("causal_attention", causal_no_mask, "3.3", "checker"),
    ("causal_attention", causal_no_scale, "3.3", "checker"),
    ("causal_attention", causal_no_max, "3.3", "gpt"),  # fine on the checker's small scores; overflows at large ones
    ("causal_attention", causal_wrong_transpose, "3.3", "gpt"),  # right in 3-D, wrong with a heads axis
    ("causal_attention", blank, "3.3", "checker"),
    ("layer_norm", norm_no_eps, "5.2", "checker"),
    ("layer_norm", norm_axis(0), "5.2", "checker"),
    ("layer_norm", norm_axis(1), "5.2", "gpt"),  # axis 1 is the last axis of the checker's 2-D input, not of (B, T, C)
    ("layer_norm", blank, "5.2", "checker"),
    ("layer_norm", None, "5.2", "checker"),
    ("split_heads", split_by_reshape, "5.3", "checker"),
    ("split_heads", blank, "5.3", "checker"),
])
def test_a_wrong_part_is_refused_naming_its_exercise(field, mutant, number, caught_by):
    with pytest.raises(PartError) as refused:
        parts_from({**SOLUTIONS, field: mutant})
    message = str(refused.value)
    assert message.startswith(f"练习 {number}（") and "你的 GPT 用不了它" in message and "\n" not in message
    assert refused.value.number == number
    assert (refused.value.status == "gpt") == (caught_by == "gpt"), message


def test_the_solutions_pass_and_the_blank_answers_are_refused():
    assert parts_from(SOLUTIONS, check_at_first_call=False).causal_attention is SOLUTIONS["causal_attention"]
    with pytest.raises(PartError, match=r"^练习 3\.3（因果注意力）还没通过"):
        learner_parts("answers")  # the exercise files as shipped: blank stubs
    with pytest.raises(ValueError, match="source"):
        learner_parts("mine")


def test_the_first_call_inside_the_model_is_checked_too():
    """A part right at the probes' shapes but wrong at this model's (here: when T > 8) is caught on its first call."""
    def short_sighted(q, k, v):
        y = default_parts.causal_attention(q, k, v)
        return y * 2 if q.shape[-2] > 8 else y

    part = checked_once(short_sighted, default_parts.causal_attention, "3.3", "因果注意力")
    model = gpt_from_parts(CONFIG, Parts(causal_attention=part))
    with pytest.raises(PartError, match=r"^练习 3\.3（因果注意力）通过了检查，可放进 GPT 里不对：在模型第一次前向"):
        model(ids(0))
    fine_part = checked_once(default_parts.causal_attention, short_sighted, "3.3", "")
    fine = gpt_from_parts(CONFIG, Parts(causal_attention=fine_part))
    fine(ids(0, (3, 4)))  # first call at T = 4: equal; later calls are not checked again
    fine(ids(0))


def test_a_custom_attention_refuses_the_kv_cache_and_dropout_in_one_line():
    from minigpt.model import KVCache

    parts = Parts(causal_attention=lambda q, k, v: default_parts.causal_attention(q, k, v))
    model = gpt_from_parts(CONFIG, parts)
    with mg.no_grad(), pytest.raises(ValueError, match="cannot run with a KV cache"):
        model(ids(0, (1, 4)), kv_cache=KVCache(CONFIG.n_layer, CONFIG.block_size))
    with pytest.raises(ValueError, match="no attention dropout"):
        gpt_from_parts(GPTConfig(**{**CONFIG.to_dict(), "dropout": 0.1}), parts)(ids(0))


def test_minigpts_blocks_call_their_modules_so_model_surgery_works_as_in_pytorch():
    """The LayerNorms and the GELU run as modules: a module swapped in (as a PyTorch user swaps
    `model.transformer.h[0].ln_1`) is the one that runs."""
    calls = []

    class Counting(mg.nn.Module):
        def __init__(self, inner, name):
            super().__init__()
            self.inner, self.name = inner, name

        def forward(self, x):
            calls.append(self.name)
            return self.inner(x)

    mg.manual_seed(0)
    model = GPT(CONFIG)
    block = model.transformer.h[0]
    block.ln_1 = Counting(block.ln_1, "ln_1")
    block.mlp.gelu = Counting(block.mlp.gelu, "gelu")
    model.transformer.ln_f = Counting(model.transformer.ln_f, "ln_f")
    model(ids(0))
    assert calls == ["ln_1", "gelu", "ln_f"]


@pytest.mark.parametrize("norm_position", ["pre", "post"])
def test_swapped_parts_keep_minigpts_parameters_their_names_and_their_order(norm_position):
    """Every part swapped: the same Parameter objects under the same names, in the same order (a gradient norm
    sums over them in that order), so a state_dict moves between minigpt's GPT and the learner's both ways."""
    config = GPTConfig(**{**CONFIG.to_dict(), "norm_position": norm_position})
    mg.manual_seed(0)
    own = GPT(config)
    mg.manual_seed(0)
    swapped = gpt_from_parts(config, same_functions_new_names())
    assert isinstance(swapped.transformer.h[0].ln_1, default_parts.PartLayerNorm)
    assert isinstance(swapped.transformer.h[0].attn, default_parts.PartAttention)
    assert isinstance(swapped.transformer.h[0].mlp.gelu, default_parts.PartGELU)
    assert [n for n, _ in swapped.named_parameters()] == [n for n, _ in own.named_parameters()]
    assert list(swapped.state_dict()) == list(own.state_dict())
    for (_, p), (_, q) in zip(swapped.named_parameters(), own.named_parameters()):
        assert np.array_equal(p.numpy(), q.numpy())
    own.load_state_dict(swapped.state_dict())
    swapped.load_state_dict(own.state_dict())
