"""`GPTConfig`: every hyperparameter of a GPT in one dataclass, checked when it is made.

The names follow nanoGPT (`block_size`, `n_layer`, `n_head`, `n_embd`), so a config reads the same
here, in nanoGPT and in the GPT-2 paper's tables. Read next: model.py, which builds a GPT from it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

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
