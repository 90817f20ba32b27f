"""An ablation staircase: the same GPT with one piece removed at a time, trained at equal compute.

Each variant is minigpt's GPT built from the same config and the same seed, then changed in exactly one way:

- "no_positions": no position information at all (`GPTConfig(pos_encoding="none")`);
- "no_scale": attention scores q.k without the 1/sqrt(hs) scale (`UnscaledQKV`);
- "one_head": one attention head as wide as the model (`n_head=1`);
- "no_residual": every block's output replaces its input instead of being added to it (`AblatedBlock`);
- "no_layernorm": every LayerNorm (ln_1, ln_2, ln_f) replaced by the identity;
- "no_mlp": blocks of attention only (`AblatedBlock`; fewer parameters and FLOPs, see `flops_per_token`).

"full" is minigpt's GPT itself, untouched. Nothing in minigpt is edited: the changed pieces are composed from
minigpt's own modules (the weights a variant keeps are the very weights the full model starts from).

Equal compute means the same tokens: every variant sees the same batches in the same order (one seeded
generator), for the same steps, with the same learning-rate schedule. Removing the MLP also removes about
two thirds of a block's matmul FLOPs; the records say how many FLOPs each variant spent.

Each trained variant is scored on the course's yardstick (yardstick.py) and compared with the full model
window by window (`Score.gap`): the paired gap and its standard error.
Read next: tutorials/builders/ablation_staircase.py, which trains the full-size staircase and writes its records.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, replace

import numpy as np

import minigrad as mg
from minigpt import GPT, GPTConfig
from minigpt.data import get_batch
from minigpt.model import Block, KVCache
from minigrad import Tensor, nn, optim
from tutorials.yardstick import Score, Yardstick

VARIANTS = ("full", "no_positions", "no_scale", "one_head", "no_residual", "no_layernorm", "no_mlp")
NAMES_ZH = {"full": "完整模型", "no_positions": "去掉位置", "no_scale": "去掉 1/√d 缩放", "one_head": "多头换成单头",
            "no_residual": "去掉残差", "no_layernorm": "去掉 LayerNorm", "no_mlp": "去掉 MLP"}


class UnscaledQKV(nn.Linear):
    """The fused q, k, v projection of a head size `hs`, with q multiplied by sqrt(hs) on the way out.

    Attention then computes softmax(sqrt(hs) q . k / sqrt(hs)) = softmax(q . k): the scores without the 1/sqrt(d)
    scale, while CausalSelfAttention itself is left as it is. It keeps the projection's own weight and bias (same
    names, same values), so the variant starts from the full model's weights.
    """

    def __init__(self, linear: nn.Linear, head_size: int) -> None:
        nn.Module.__init__(self)  # not nn.Linear.__init__: that would draw fresh weights
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.weight, self.bias = linear.weight, linear.bias
        C = linear.out_features // 3
        gain = np.ones(linear.out_features, dtype=np.float32)
        gain[:C] = math.sqrt(head_size)  # the first C outputs are q (c_attn's layout: q, k, v)
        self.register_buffer("gain", mg.tensor(gain), persistent=False)  # moves with .to(device), not saved

    def forward(self, x: Tensor) -> Tensor:
        return super().forward(x) * self.gain  # (B, T, 3C), q scaled by sqrt(hs)


class AblatedBlock(nn.Module):
    """A pre-LN block made of an existing Block's parts, with its residual path or its MLP removed.

    residual:     x = x + attn(ln_1(x));  x = x + mlp(ln_2(x))      (minigpt's Block)
    no residual:  x =     attn(ln_1(x));  x =     mlp(ln_2(x))
    no MLP:       x = x + attn(ln_1(x))                              (ln_2 and mlp are dropped)
    """

    def __init__(self, block: Block, residual: bool = True, mlp: bool = True) -> None:
        super().__init__()
        if not block.pre_norm:
            raise ValueError("AblatedBlock: only pre-LN blocks (norm_position='pre') are ablated")
        self.residual = residual
        self.ln_1, self.attn = block.ln_1, block.attn
        if mlp:
            self.ln_2, self.mlp = block.ln_2, block.mlp

    def forward(self, x: Tensor, kv_cache: KVCache | None = None) -> Tensor:
        h = self.attn(self.ln_1(x), kv_cache)
        x = x + h if self.residual else h
        if hasattr(self, "mlp"):
            h = self.mlp(self.ln_2(x))
            x = x + h if self.residual else h
        return x


def build(variant: str, config: GPTConfig, seed: int = 0) -> GPT:
    """minigpt's GPT for `config`, initialised from `seed`, with the piece that `variant` names removed."""
    if variant not in VARIANTS:
        raise ValueError(f"ablation: unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")
    if config.norm_position != "pre" or config.pos_encoding == "none":
        raise ValueError("ablation: the full model must be pre-LN with position information")
    if variant == "one_head":
        config = replace(config, n_head=1)  # the same shapes: the same initial weights, split into one head
    mg.manual_seed(seed)
    model = GPT(config)
    blocks = list(model.transformer.h)
    if variant == "no_positions":
        # Built with its position table (so every other weight is drawn as the full model's), then without it.
        model.config = replace(config, pos_encoding="none")
        del model.transformer.wpe
    elif variant == "no_scale":
        for block in blocks:
            block.attn.c_attn = UnscaledQKV(block.attn.c_attn, config.head_size)
    elif variant == "no_layernorm":
        for block in blocks:
            block.ln_1, block.ln_2 = nn.Identity(), nn.Identity()
        model.transformer.ln_f = nn.Identity()
    elif variant in ("no_residual", "no_mlp"):
        ablated = [AblatedBlock(b, residual=variant != "no_residual", mlp=variant != "no_mlp") for b in blocks]
        for i, block in enumerate(ablated):  # re-registered in order, so transformer.h.0, .1, ... keep their names
            setattr(model.transformer.h, str(i), block)
    return model


@dataclass(frozen=True)
class Recipe:
    """How every variant of one staircase is trained: the same for all of them (equal tokens)."""

    n_layer: int
    n_head: int
    n_embd: int
    steps: int
    batch: int
    lr: float
    block: int = 64
    warmup: int = 30
    seed: int = 0

    def config(self, vocab_size: int) -> GPTConfig:
        return GPTConfig(vocab_size=vocab_size, block_size=self.block, n_layer=self.n_layer, n_head=self.n_head,
                         n_embd=self.n_embd)

    @property
    def tokens(self) -> int:
        return self.steps * self.batch * self.block


def train(model: GPT, train_ids: np.ndarray, recipe: Recipe) -> list[float]:
    """Train with AdamW and a warmup-cosine schedule on batches drawn from one seeded generator; the losses."""
    decay = [p for p in model.parameters() if p.ndim >= 2]  # matrices decay; biases and gains do not
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    groups = [{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}]
    optimizer = optim.AdamW([g for g in groups if g["params"]], lr=recipe.lr, betas=(0.9, 0.99))
    rng = np.random.default_rng(recipe.seed)  # the same batches, in the same order, for every variant
    losses = []
    for it in range(recipe.steps):
        optim.set_lr(optimizer, optim.cosine_with_warmup(it, recipe.lr, recipe.warmup, recipe.steps, recipe.lr / 10))
        xb, yb = get_batch(train_ids, recipe.batch, recipe.block, rng)
        # forward
        _, loss = model(xb, yb)
        # backward
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        # update
        optimizer.step()
        losses.append(loss.item())
    return losses


def flops_per_token(model: GPT) -> float:
    """Training FLOPs per token, forward and backward (3x the forward), as Kaplan et al. (2020) count them.

    forward = 2 x (the weights of every matmul: Linear layers and lm_head; embeddings are lookups)
            + 2 x n_layer x T x C (the attention scores and their weighted sum, over the whole block)
    """
    matmul = sum(p.numel() for name, p in model.named_parameters() if name.endswith("weight") and p.ndim == 2
                 and "wte" not in name and "wpe" not in name)
    matmul += model.lm_head.weight.numel()  # tied to wte, so not listed again under lm_head
    c = model.config
    return 3.0 * (2.0 * matmul + 2.0 * c.n_layer * c.block_size * c.n_embd)


@dataclass
class Result:
    """One trained variant: what it cost and how it scored."""

    variant: str
    params: int
    flops: float
    seconds: float
    final_loss: float
    score: Score

    def gap(self, full: Result) -> tuple[float, float]:
        """(this variant's nats - the full model's, its standard error), paired window by window."""
        return self.score.gap(full.score)


def run(variant: str, recipe: Recipe, yardstick: Yardstick) -> Result:
    """Build, train and score one variant."""
    model = build(variant, recipe.config(yardstick.vocab_size), recipe.seed)
    t0 = time.perf_counter()
    losses = train(model, yardstick.train, recipe)
    seconds = time.perf_counter() - t0
    model.eval()
    score = yardstick.score_logits(model)
    params = sum(p.numel() for p in model.parameters())
    return Result(variant, params, flops_per_token(model) * recipe.tokens, seconds, float(np.mean(losses[-20:])),
                  score)


def staircase(recipe: Recipe, yardstick: Yardstick, variants: tuple[str, ...] = VARIANTS,
              log: bool = True) -> dict[str, Result]:
    """Every variant trained with `recipe` (the full model first); printed as it goes when `log`."""
    results: dict[str, Result] = {}
    for variant in ("full", *[v for v in variants if v != "full"]):
        results[variant] = result = run(variant, recipe, yardstick)
        if log:
            gap = "" if variant == "full" else "  gap {:+.3f} ± {:.3f}".format(*result.gap(results["full"]))
            print(f"{variant:13s} {result.score.nats:.3f} nats  ({result.seconds:.0f} s){gap}", flush=True)
    return results


def recipe_dict(recipe: Recipe) -> dict:
    """The recipe as plain JSON-ready values."""
    return asdict(recipe)
