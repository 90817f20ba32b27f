"""Five-character couplets of the built-in Tang corpus, as token ids: the data of lectures 03 and 05's Tang sections.

A couplet is one line of a poem in the corpus, `上句，下句。` with five characters in each half: 12 tokens. Only the
couplets written entirely in the 1500 most common characters are kept (over half of them), so the models stay
small and quick to train. The split is the corpus's own: whole poems, every tenth held out (`split_poems`).
Read next: 03_self_attention.py §8 (cross-attention), 05_transformer_block.py §11 (a head for 对仗).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

import numpy as np

from minigpt.corpus import load_tang, split_poems

COUPLET = re.compile(r"^([\u4e00-\u9fff]{5})，([\u4e00-\u9fff]{5})[。？！]$", re.M)  # a line that is one couplet
LENGTH = 12  # five characters, "，", five characters, "。"


@dataclass
class Couplets:
    """Train and validation couplets as (N, 12) int64 ids, and the characters the ids stand for."""

    train: np.ndarray
    val: np.ndarray
    chars: list[str]

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def decode(self, ids: np.ndarray) -> str:
        return "".join(self.chars[i] for i in ids)


def load_couplets(n_chars: int = 1500) -> Couplets:
    """The corpus's five-character couplets written in its `n_chars` most common characters (counted on train)."""
    train_text, val_text = split_poems(load_tang())
    train_pairs, val_pairs = COUPLET.findall(train_text), COUPLET.findall(val_text)
    common = Counter(c for a, b in train_pairs for c in a + b).most_common(n_chars)
    chars = ["，", "。"] + sorted(c for c, _ in common)
    stoi = {c: i for i, c in enumerate(chars)}

    def encode(pairs: list[tuple[str, str]]) -> np.ndarray:
        rows = [[stoi[c] for c in a + "，" + b + "。"] for a, b in pairs if all(c in stoi for c in a + b)]
        return np.array(rows, dtype=np.int64).reshape(-1, LENGTH)

    return Couplets(encode(train_pairs), encode(val_pairs), chars)
