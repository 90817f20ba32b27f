"""`CharTokenizer`: one token per character, the simplest tokenizer that can train a GPT.

The vocabulary is the sorted set of characters of a text, so ids are stable for a given corpus.
GPT-2 uses byte-pair encoding instead (fewer, longer tokens); a character vocabulary keeps the
example small and every id human-readable. Saved as JSON (never pickled).

A Chinese text has thousands of distinct characters and a corpus millions of them, so encoding works on
the whole text at once: the text becomes an array of Unicode code points (its UTF-32 bytes), and one
NumPy indexing into a table from code point to id gives every id. A dict lookup per character gives the
same ids about ten times slower: for the built-in Tang corpus (2 million characters), about 0.1 s against 1 s.
Read next: corpus.py (the built-in text), then data.py.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from typing import Any

import numpy as np

from minigrad.tools.files import write_file
from minigrad.tools.serialization import read_bytes

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
        # For encoding a whole text at once: a table from code point to id (-1: not in the vocabulary), as long
        # as the largest code point in the vocabulary (40,960 entries for Chinese, the end of the CJK block).
        codes = _code_points("".join(self.chars))
        self._id_of_code = np.full(int(codes.max()) + 1 if codes.size else 0, -1, dtype=np.int64)
        self._id_of_code[codes] = np.arange(len(codes))

    @classmethod
    def from_text(cls, text: str) -> CharTokenizer:
        """The vocabulary of `text`: its distinct characters, sorted."""
        if not text:
            raise ValueError("CharTokenizer.from_text: the text is empty, so there is no vocabulary")
        counts = np.bincount(_code_points(text))  # how often each code point occurs: sorted(set(text)), faster
        return cls(chr(code) for code in np.flatnonzero(counts).tolist())

    @property
    def vocab_size(self) -> int:
        return len(self.chars)

    def encode(self, text: str) -> list[int]:
        """The id of each character; a character outside the vocabulary raises UnknownCharacterError."""
        return self.encode_array(text).tolist()

    def encode_array(self, text: str) -> np.ndarray:
        """`encode`, as an int64 NumPy array (what training wants, without a list of millions of ints)."""
        codes = _code_points(text)
        ids = np.full(len(codes), -1, dtype=np.int64)
        inside = codes < len(self._id_of_code)  # a code point past the table's end is not in the vocabulary
        ids[inside] = self._id_of_code[codes[inside]]
        if (ids < 0).any():
            position = int(np.argmax(ids < 0))  # the first unknown character
            raise UnknownCharacterError(
                f"character {text[position]!r} at position {position} is not in the tokenizer's vocabulary "
                f"of {self.vocab_size} characters"
            )
        return ids

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
        write_file(path, self.to_json())  # never through a link at `path`, never half-written

    @classmethod
    def load(cls, path: str | os.PathLike) -> CharTokenizer:
        # Through minigrad's one door for files: a regular file, no larger than any vocabulary's JSON can be.
        return cls.from_json(read_bytes(path, MAX_JSON_BYTES).decode("utf-8"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, CharTokenizer) and self.chars == other.chars

    __hash__ = None  # type: ignore[assignment]  # mutable-looking value object, compared by content

    def __repr__(self) -> str:
        return f"CharTokenizer(vocab_size={self.vocab_size})"


def _code_points(text: str) -> np.ndarray:
    """The Unicode code point of each character of `text`, as a uint32 array (UTF-32 is 4 bytes a character)."""
    return np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
