"""`CharTokenizer`: one token per character, the simplest tokenizer that can train a GPT.

The vocabulary is the sorted set of characters of a text, so ids are stable for a given corpus.
GPT-2 uses byte-pair encoding instead (fewer, longer tokens); a character vocabulary keeps the
example small and every id human-readable. Saved as JSON (never pickled).
Read next: corpus.py (the built-in text), then data.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

from minigrad.serialization import read_bytes

MAX_JSON_BYTES = 2**24  # every Unicode character, as JSON, is under 16 MiB


class UnknownCharacterError(ValueError):
    """A character that is not in the tokenizer's vocabulary (the message names it and its position)."""


class CharTokenizer:
    """Maps each character of a fixed vocabulary to an id 0..vocab_size-1 and back."""

    def __init__(self, chars: Iterable[str]) -> None:
        self.chars: list[str] = list(chars)
        for ch in self.chars:
            if not isinstance(ch, str) or len(ch) != 1:
                raise ValueError(f"CharTokenizer: every vocabulary entry must be one character, got {ch!r}")
        if len(set(self.chars)) != len(self.chars):
            raise ValueError("CharTokenizer: the vocabulary has repeated characters")
        self.stoi = {ch: i for i, ch in enumerate(self.chars)}  # string to id
        self.itos = dict(enumerate(self.chars))  # id to string

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        """The vocabulary of `text`: its distinct characters, sorted."""
        if not text:
            raise ValueError("CharTokenizer.from_text: the text is empty, so there is no vocabulary")
        return cls(sorted(set(text)))

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        """The id of each character; a character outside the vocabulary raises UnknownCharacterError."""
        try:
            return [self.stoi[ch] for ch in text]
        except KeyError:
            position = next(i for i, ch in enumerate(text) if ch not in self.stoi)
            raise UnknownCharacterError(
                f"character {text[position]!r} at position {position} is not in the tokenizer's vocabulary "
                f"of {self.vocab_size} characters"
            ) from None

    def decode(self, ids: Iterable[Any]) -> str:
        """The text of a sequence of ids (ints, or a 1-D array / Tensor of them)."""
        if hasattr(ids, "tolist"):  # NumPy arrays and Tensors
            ids = ids.tolist()
        out = []
        for i in ids:
            i = int(i)
            if i not in self.itos:
                raise ValueError(f"CharTokenizer.decode: id {i} is out of range 0..{self.vocab_size - 1}")
            out.append(self.itos[i])
        return "".join(out)

    # Saving and loading, as JSON: {"type": "char", "chars": [...]}
    def to_json(self) -> str:
        return json.dumps({"type": "char", "chars": self.chars}, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> CharTokenizer:
        data = json.loads(text)
        if not isinstance(data, dict) or data.get("type") != "char" or not isinstance(data.get("chars"), list):
            raise ValueError('CharTokenizer.from_json: expected {"type": "char", "chars": [...]}')
        return cls(data["chars"])

    def save(self, path: str | os.PathLike) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    @classmethod
    def load(cls, path: str | os.PathLike) -> CharTokenizer:
        # Through minigrad's one door for files: a regular file, no larger than any vocabulary's JSON can be.
        return cls.from_json(read_bytes(path, MAX_JSON_BYTES).decode("utf-8"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharTokenizer) and self.chars == other.chars

    __hash__ = None  # type: ignore[assignment]  # mutable-looking value object, compared by content

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"
