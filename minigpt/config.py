"""The settings, each a dataclass checked when it is made: `GPTConfig` (the shape of a GPT) and `TrainConfig`
(a training run: nanoGPT's CPU defaults for Shakespeare, and `CORPUS_DEFAULTS` for each built-in text).

The names follow nanoGPT (`block_size`, `n_layer`, `n_head`, `n_embd`), so a config reads the same
here, in nanoGPT and in the GPT-2 paper's tables. Read next: model.py, which builds a GPT from a GPTConfig.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, fields
from typing import Any

from minigpt import schema
from minigpt.errors import ConfigError

POS_ENCODINGS = ("learned", "sinusoidal", "rope", "none")
NORM_POSITIONS = ("pre", "post")


@dataclass
class GPTConfig:
    """The shape of a GPT.

    vocab_size: number of token ids; block_size: the longest context the model sees;
    n_layer blocks, each with n_head attention heads of size n_embd // n_head;
    dropout: probability used after the embeddings, the attention output and the MLP (0 = off);
    bias: whether Linear and LayerNorm layers have biases (False is slightly faster and as good);
    pos_encoding: "learned" (GPT-2), "sinusoidal" (the original Transformer), "rope" (rotary) or "none";
    norm_position: "pre" (GPT-2: x + f(LN(x))) or "post" (the original Transformer: LN(x + f(x)));
    tie_weights: the output layer reuses the token embedding matrix (GPT-2 does).
    """

    vocab_size: int
    block_size: int
    n_layer: int
    n_head: int
    n_embd: int
    dropout: float = 0.0
    bias: bool = True
    pos_encoding: str = "learned"
    norm_position: str = "pre"
    tie_weights: bool = True

    def __post_init__(self) -> None:
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"GPTConfig: {name} must be a positive integer, got {value!r}")
        if self.n_embd % self.n_head != 0:
            raise ValueError(
                f"GPTConfig: n_embd ({self.n_embd}) must be divisible by n_head ({self.n_head}), "
                "so that every head gets n_embd // n_head dimensions"
            )
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"GPTConfig: dropout must be in [0, 1), got {self.dropout!r}")
        if self.pos_encoding not in POS_ENCODINGS:
            raise ValueError(f"GPTConfig: pos_encoding must be one of {POS_ENCODINGS}, got {self.pos_encoding!r}")
        if self.norm_position not in NORM_POSITIONS:
            raise ValueError(
                f"GPTConfig: norm_position must be one of {NORM_POSITIONS}, got {self.norm_position!r}"
            )
        if self.pos_encoding == "rope" and self.head_size % 2 != 0:
            raise ValueError(
                f"GPTConfig: rope rotates pairs of dimensions, so the head size n_embd // n_head must be even, "
                f"got {self.n_embd} // {self.n_head} = {self.head_size}"
            )

    @property
    def head_size(self) -> int:
        return self.n_embd // self.n_head

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (for config.json in checkpoints)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> GPTConfig:
        """The inverse of `to_dict`; an unknown key is an error naming it."""
        known = {field.name for field in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"GPTConfig: unknown fields {unknown}; known fields are {sorted(known)}")
        return cls(**values)


@dataclass
class TrainConfig:
    """Every setting of a training run, with nanoGPT's CPU defaults for Shakespeare."""

    # I/O
    out_dir: str = "out"
    overwrite: bool = False  # a new run may replace the checkpoint in out_dir (else it is refused)
    eval_interval: int = 250  # evaluate, log and checkpoint every this many iterations (and at the end)
    eval_iters: int = 20  # batches per split for each loss estimate
    log_interval: int = 10  # read the training loss back (a device sync) every this many iterations
    resume: bool = False  # continue from the checkpoint in out_dir
    # data
    data: str | None = None  # a UTF-8 text file; None: the built-in corpus below
    corpus: str = "shakespeare"  # the built-in corpus: "shakespeare" or "tang" (Tang poems; see corpus.py)
    batch_size: int = 12  # sequences per micro-batch (under mpiexec: on each rank)
    block_size: int = 64  # context length, in characters
    # model
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    dropout: float = 0.0
    bias: bool = False  # biases in the Linear and LayerNorm layers: nanoGPT's train.py has none (as good, faster)
    pos_encoding: str = "learned"
    norm_position: str = "pre"
    # AdamW
    lr: float = 1e-3  # the peak learning rate
    max_iters: int = 2000
    weight_decay: float = 0.1  # on 2-D weights only
    beta1: float = 0.9
    beta2: float = 0.99  # nanoGPT's choice for small character models (few tokens per batch)
    grad_clip: float = 1.0  # clip the global gradient norm to this (0: off)
    # micro-batches per optimizer step over the whole job (nanoGPT's gradient_accumulation_steps): their gradients
    # are averaged before the step; under mpiexec -n N each rank runs grad_accum / N of them. None: one per rank
    # (1 in one process), fixed when the run starts
    grad_accum: int | None = None
    # learning-rate schedule: linear warmup, then cosine decay to min_lr = lr / 10
    warmup_iters: int = 100
    lr_decay_iters: int | None = None  # None: max_iters (fixed when the run starts, kept on resume)
    # system
    device: str = "cpu"  # "cpu" or "cuda" ("strict": the CuPy-like test device)
    seed: int = 1337
    threads: int = 0  # BLAS threads on the CPU; 0: measured as the run goes (threads.py)

    def __post_init__(self) -> None:
        """Refuse a setting of the wrong type or out of range, naming it (from Python, the flags or a checkpoint)."""
        for field in fields(self):
            value = getattr(self, field.name)
            problem = schema.type_problem(str(field.type), value)
            if problem is None and type(value) in (int, float):
                if field.name in _AT_LEAST_ONE and value < 1:
                    problem = f"must be at least 1, got {value!r}"
                elif field.name in _FRACTIONS and not 0 <= value < 1:
                    problem = f"must be in [0, 1), got {value!r}"
                elif value < 0:
                    problem = f"must be 0 or more, got {value!r}"
                elif field.name == "threads" and value > MAX_THREADS:
                    problem = f"must be at most {MAX_THREADS}, got {value!r}"
                elif field.name == "eval_iters" and value > MAX_EVAL_ITERS:
                    problem = (f"must be at most {MAX_EVAL_ITERS}, got {value!r} (each evaluation runs that many "
                               "batches on each split; nanoGPT's takes 200)")
                elif field.name == "grad_accum" and value > MAX_GRAD_ACCUM:
                    problem = (f"must be at most {MAX_GRAD_ACCUM}, got {value!r} (each step runs that many batches; "
                               "a larger batch is --batch-size)")
            if problem:
                raise ConfigError(f"{field.name} {problem}")

    @classmethod
    def for_corpus(cls, corpus: str, **settings: Any) -> TrainConfig:
        """The settings for the built-in `corpus`: its defaults (CORPUS_DEFAULTS), with `settings` on top."""
        if corpus not in CORPUS_DEFAULTS:
            raise ConfigError(f"unknown corpus {corpus!r}: the built-in corpora are {', '.join(CORPUS_DEFAULTS)}")
        return cls(**{**CORPUS_DEFAULTS[corpus], **settings, "corpus": corpus})


# Each built-in corpus starts from these settings, on top of the ones above (a setting the user gives still wins).
# The Tang poems train well with the Shakespeare model as it is: its 2000 iterations write recognisable 五言 and
# 七言 lines (README.md shows a sample). Their 6,445-character vocabulary makes each evaluation batch twice as
# dear, so they evaluate half as often, which keeps evaluation to the same share of the run.
CORPUS_DEFAULTS: dict[str, dict[str, Any]] = {"shakespeare": {}, "tang": {"eval_interval": 500}}


MAX_GRAD_ACCUM = 1024  # micro-batches a step: GPT-2's recipe takes 40; a million would make a step of hours
MAX_EVAL_ITERS = 10_000  # batches per split in an evaluation: 10**8 would evaluate for days before a step
MAX_THREADS = 1024  # more BLAS threads than any machine has cores (a larger count overflows BLAS's C int)
_AT_LEAST_ONE = ("eval_interval", "eval_iters", "log_interval", "batch_size", "block_size", "n_layer", "n_head",
                 "n_embd", "grad_accum")
_FRACTIONS = ("dropout", "beta1", "beta2")  # in [0, 1); every other number must be 0 or more
