"""Shortcut answers: for each exercise the library can do, an answer that passes by calling the library.

None of them is a right answer: each calls the code the exercise asks the learner to write. The grader runs them
once through the exercise's checker to find that code (refusal.py), and then refuses it to every answer, under
whatever name it is reached. Each shortcut here takes one path to the job; the tests take others.
Library objects that are not public are found by name (`library`), never by their module's path.
Read next: refusal.py.
"""

from __future__ import annotations

import sys
from types import ModuleType, SimpleNamespace
from typing import Any

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig, sampling, sizing
from minigpt import model as gpt_model
from tutorials.exercises import refusal
from tutorials.solutions.engine import Tensor, apply, no_grad, sum_to, topological_order  # noqa: F401 (below)
from tutorials.yardstick import Score


def library(name: str) -> Any:
    """The module-level function of minigrad/minigpt named `name`, looked up in its module at each call."""
    def call(*args: Any, **kwargs: Any) -> Any:
        by_code, by_name = refusal.index()
        function = next(v for v in by_name[name] if not isinstance(v, type))
        module, attribute = next((o, a) for o, a, _ in by_code[function.__code__] if isinstance(o, ModuleType))
        return getattr(module, attribute)(*args, **kwargs)

    return call


def op_behind(make: Any) -> type[mg.Function]:
    """The library's mg.Function subclass that computes `make(a, b)`, found in the graph it builds."""
    a = mg.tensor([0.3, 1.2, -0.7], requires_grad=True, dtype="float64")
    b = mg.tensor([1.5, -2.0, 0.8], requires_grad=True, dtype="float64")
    return type(make(a, b)._ctx)


def delegating(make: Any, **params: Any) -> type[mg.Function]:
    """A Function whose forward and backward are the library op's (the shortcut for a backward exercise)."""
    op_class = op_behind(make)

    class Delegating(mg.Function):
        def forward(self, *xs):
            self.op = op_class(**params)
            return self.op.forward(*xs)

        def backward(self, gy):
            return self.op.backward(gy)

    return Delegating


class SoftmaxBackward(mg.Function):
    """3.5 with the fused op's backward."""

    def forward(self, x):
        self.op = op_behind(lambda a, b: F.softmax(a, dim=-1))(axis=-1)
        return self.op.forward(x)

    def backward(self, gy):
        return self.op.backward(gy)


class LayerNormBackward(mg.Function):
    """5.5 with the fused op's backward."""

    def forward(self, x):
        self.op = op_behind(lambda a, b: F.layer_norm(a, (3,)))(eps=1e-5)
        return self.op.forward(x)

    def backward(self, gy):
        gxs = self.op.backward(gy)
        return gxs[0] if isinstance(gxs, tuple) else gxs


def _attention_heads(x, w_attn, b_attn, w_proj, b_proj, n_head, attend):
    B, T, C = x.shape
    qkv = F.linear(x, w_attn, b_attn)
    q, k, v = (qkv[:, :, i * C:(i + 1) * C].reshape(B, T, n_head, C // n_head).swapaxes(1, 2) for i in range(3))
    return F.linear(attend(q, k, v).swapaxes(1, 2).reshape(B, T, C), w_proj, b_proj)


class _Starts:
    """An rng whose `integers` gives the starts the exercise asked for: get_batch then cuts those windows."""

    def __init__(self, starts: np.ndarray) -> None:
        self.starts = np.asarray(starts)

    def integers(self, *args: Any, **kwargs: Any) -> np.ndarray:
        return self.starts


def _rotary(x, position, base=10000.0):
    rotary = gpt_model.Rotary(x.shape[-1], position + 1, base)
    return rotary(mg.tensor(np.asarray(x, dtype=np.float64)[None, None, None]), start=position).numpy()[0, 0, 0]


def _post_ln_block(x, w, n_head):
    C = x.shape[-1]
    config = GPTConfig(vocab_size=5, block_size=max(8, x.shape[1]), n_layer=1, n_head=n_head, n_embd=C,
                       norm_position="post")
    block = gpt_model.Block(config, 0).to(dtype=x.dtype)
    block.load_state_dict(w)
    return block(x)


def _mlp_module(x, w1, b1, w2, b2):
    C = x.shape[-1]
    block = gpt_model.Block(GPTConfig(vocab_size=5, block_size=8, n_layer=1, n_head=1, n_embd=C), 0).to(dtype=x.dtype)
    block.mlp.load_state_dict({"c_fc.weight": w1, "c_fc.bias": b1, "c_proj.weight": w2, "c_proj.bias": b2})
    return block.mlp(x)


def _block_by_minigpt(x, ln_1, attn, ln_2, mlp):
    """9.3 by minigpt's own Block.forward, run on a stand-in object that holds the four sublayers."""
    stand_in = SimpleNamespace(pre_norm=True, ln_1=ln_1, attn=lambda h, kv_cache=None: attn(h), ln_2=ln_2, mlp=mlp)
    return gpt_model.Block.forward(stand_in, x)


def _in_blocks_by_the_library(f, x, block):
    """8.2 by minigrad's own blocked runner, told to cut blocks of `block` elements (and put back after)."""
    function = next(v for v in refusal.index()[1]["in_chunks"] if not isinstance(v, type))
    module = sys.modules[function.__module__]  # found by name, then used through the module, as a learner would
    size, module.BLOCK_SIZE = module.BLOCK_SIZE, block
    try:
        return module.in_chunks(f, x)
    finally:
        module.BLOCK_SIZE = size


def _adamw_by_optimizer(p, g, m, v, t, lr, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.0):
    param = mg.nn.Parameter(mg.tensor(p.copy()))
    optimizer = mg.optim.AdamW([param], lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)
    optimizer.state[param] = {"step": t - 1, "exp_avg": m, "exp_avg_sq": v}  # the caller's moments, in place
    param.grad = mg.tensor(np.asarray(g, dtype=p.dtype))
    optimizer.step()
    p[...] = param.array


def _train_step_by_optimizer(model, x, y, state, lr, grad_clip=1.0, weight_decay=0.1):
    if "optimizer" not in state:
        decay = [p for p in model.parameters() if p.ndim >= 2]
        rest = [p for p in model.parameters() if p.ndim < 2]
        state["optimizer"] = mg.optim.AdamW([{"params": decay, "weight_decay": weight_decay},
                                             {"params": rest, "weight_decay": 0.0}], lr=lr, betas=(0.9, 0.99))
    optimizer = state["optimizer"]
    mg.optim.set_lr(optimizer, lr)
    _, loss = model(x, y)
    optimizer.zero_grad()
    loss.backward()
    mg.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    optimizer.step()
    return loss.item()


def _via_minigrad(expression: Any) -> type:
    """An op of the learner's engine (0.12-0.26) whose backward asks minigrad's autograd (mg.grad) for the gradients."""
    class ViaMinigrad:
        def __init__(self, **params: Any) -> None:
            self.params = params

        def forward(self, *xs):
            self.xs = xs
            return expression(*[mg.tensor(x, dtype=x.dtype) for x in xs], **self.params).numpy()

        def backward(self, gy):
            tensors = [mg.tensor(x, requires_grad=True, dtype=x.dtype) for x in self.xs]
            y = expression(*tensors, **self.params)
            return tuple(g.numpy() for g in mg.grad(y, tensors, mg.tensor(gy, dtype=gy.dtype)))

    return ViaMinigrad


class _TensorOnMinigrad:
    """0.8: the learner's Tensor kept in a minigrad tensor."""

    def __init__(self, array, requires_grad=False):
        self.tensor = mg.tensor(array, requires_grad=requires_grad)
        self.array, self.requires_grad, self.grad, self.op = self.tensor.numpy(), requires_grad, None, None


def _apply_by_grad_mode(op, *inputs):
    """0.9 with minigrad's grad mode in place of the engine's own switch."""
    y = type(inputs[0])(op.forward(*[x.array for x in inputs]))
    if mg.is_grad_enabled() and any(x.requires_grad for x in inputs):
        y.requires_grad, y.op, op.inputs = True, op, inputs
    return y


def _gpt_config(V, block, L, C):
    return GPTConfig(vocab_size=V, block_size=block, n_layer=L, n_head=4, n_embd=C)


SHORTCUTS: dict[str, tuple[Any, ...]] = {
    # the learner's engine (tutorials/exercises/engine.py): any library at all is a shortcut (checks/engine_guard.py).
    # An engine part is checked with the other parts of its own file: here, the reference engine's, imported above.
    "0.8": (_TensorOnMinigrad,),
    "0.9": (_apply_by_grad_mode,),
    "0.10": (lambda root: library("topological_order")(root),),
    "0.11": (lambda root, grad: library("backward")(root, grad),),
    "0.12": (_via_minigrad(lambda a, b: a + b),),
    "0.13": (_via_minigrad(lambda a, b: a - b),),
    "0.14": (_via_minigrad(lambda a, b: a * b),),
    "0.15": (_via_minigrad(lambda a, b: a / b),),
    "0.16": (_via_minigrad(lambda x, exponent: x**exponent),),
    "0.17": (_via_minigrad(lambda x: x.exp()),),
    "0.18": (_via_minigrad(lambda x: x.log()),),
    "0.19": (_via_minigrad(lambda x: x.erf()),),
    "0.20": (_via_minigrad(lambda x, axis, keepdims: x.sum(axis=axis, keepdims=keepdims)),),
    "0.21": (_via_minigrad(lambda x, axis, keepdims: x.amax(dim=() if axis is None else axis, keepdim=keepdims)),),
    "0.22": (_via_minigrad(lambda x, shape: x.reshape(shape)),),
    "0.23": (_via_minigrad(lambda x, axis1, axis2: x.swapaxes(axis1, axis2)),),
    "0.24": (_via_minigrad(lambda x, index: x[index]),),
    "0.25": (_via_minigrad(lambda x, mask, value: x.masked_fill(mask, value)),),
    "0.26": (_via_minigrad(lambda a, b: a @ b),),
    "0.2": (delegating(lambda a, b: a * b),),
    "0.3": (delegating(lambda a, b: a.tanh()),),
    "0.4": (lambda g, shape: library("sum_to")(g, shape),),
    "0.5": (delegating(lambda a, b: a / b),),
    "1.4": (lambda P, ids: float(F.nll_loss(mg.tensor(np.log(P[ids[:-1]])), ids[1:]).item()),
            lambda P, ids: float(F.cross_entropy(mg.tensor(np.log(P[ids[:-1]])), ids[1:]).item())),
    "2.3": (lambda s, enc, W_a: (F.scaled_dot_product_attention((s @ W_a)[:, None], enc, enc, scale=1.0)[:, 0],
                                 ((enc @ (s @ W_a)[:, :, None])[:, :, 0]).softmax(axis=-1)),),
    "3.1": (lambda x: F.softmax(x, dim=-1), lambda x: x.softmax(-1), lambda x: (x.log_softmax(-1)).exp()),
    "3.2": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v),),
    "3.3": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
            lambda q, k, v: (q @ k.swapaxes(-1, -2) / q.shape[-1] ** 0.5).masked_fill(
                np.triu(np.ones((q.shape[-2],) * 2, dtype=bool), k=1), -np.inf).softmax(-1) @ v),
    "3.5": (SoftmaxBackward,),
    "4.1": (lambda n, dim: gpt_model.sinusoidal_table(n, dim).astype(np.float64),),
    "4.2": (lambda k, dim: float(gpt_model.sinusoidal_table(k + 1, dim).astype(np.float64)[0]
                                 @ gpt_model.sinusoidal_table(k + 1, dim).astype(np.float64)[k]),),
    "4.3": (_rotary,),
    "5.1": (lambda C: sum(p.numel() for p in gpt_model.Block(_gpt_config(8, 8, 1, C), 0).parameters()),
            lambda C: sizing.parameter_count(_gpt_config(8, 8, 1, C))
            - sizing.parameter_count(_gpt_config(8, 8, 0, C))),
    "5.2": (lambda x, w, b, eps=1e-5: F.layer_norm(x, (x.shape[-1],), w, b, eps),),
    "5.4": (lambda *a: _attention_heads(*a, lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)),),
    "5.5": (LayerNormBackward,),
    "5.6": (_post_ln_block,),
    "6.1": (lambda data, starts, block_size: sampling_free_batch(data, starts, block_size),),
    "6.3": (lambda logits, k: sampling.softmax(sampling.top_k_filter(np.asarray(logits, np.float64), k)),),
    "6.4": (lambda logits, p: sampling.softmax(sampling.top_p_filter(np.asarray(logits, np.float64), p)),),
    "6.5": (lambda logits, rng, temperature=1.0, top_k=None, top_p=None: int(sampling.next_token(
        np.asarray(logits)[None], temperature, top_k, top_p, rng)[0]),),
    "6.6": (lambda q, k, v, cache: cache["k"].append(k) or cache["v"].append(v) or F.scaled_dot_product_attention(
        mg.tensor(q[None, None], dtype="float64"), mg.tensor(np.array(cache["k"])[None], dtype="float64"),
        mg.tensor(np.array(cache["v"])[None], dtype="float64")).numpy()[0, 0],),
    "7.2": (lambda model, ids, n: model.generate(ids, n, temperature=0.0),
            lambda model, ids, n: model.generate(ids, n, temperature=0.0, use_cache=False)),
    "7.4": (lambda V, block, L, C: GPT(_gpt_config(V, block, L, C)).num_parameters(),
            lambda V, block, L, C: sizing.parameter_count(_gpt_config(V, block, L, C))),
    "7.5": (lambda a, b: Score(a).gap(Score(b)),),
    "8.2": (_in_blocks_by_the_library,),
    "9.1": (lambda idx, wte, wpe: F.embedding(idx, wte) + F.embedding(np.arange(idx.shape[-1]), wpe),),
    "9.2": (_mlp_module, lambda x, w1, b1, w2, b2: F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)),
    "9.3": (_block_by_minigpt,),
    "9.4": (lambda logits, targets: F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                                                    np.asarray(targets).reshape(-1)),),
    "9.5": (lambda step, max_lr, warmup, decay, min_lr: mg.optim.cosine_with_warmup(step, max_lr, warmup, decay,
                                                                                    min_lr),),
    "9.6": (_adamw_by_optimizer,),
    "9.7": (_train_step_by_optimizer,),
}


def sampling_free_batch(data: np.ndarray, starts: np.ndarray, block_size: int) -> tuple[np.ndarray, np.ndarray]:
    """6.1 by minigpt's own batch maker, told which windows to cut."""
    return library("get_batch")(np.asarray(data), len(starts), block_size, _Starts(starts))
