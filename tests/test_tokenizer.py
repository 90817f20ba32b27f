"""CharTokenizer: round trips, a clear error for unknown characters, JSON save and load."""

import re

import numpy as np
import pytest

import minigrad as mg
from minigpt import CharTokenizer
from minigpt.tokenizer import UnknownCharacterError

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak. Ça va? ☃"


def test_vocabulary_is_the_sorted_set_of_characters():
    tok = CharTokenizer.from_text(TEXT)
    assert tok.vocab_size == len(set(TEXT))
    assert tok.chars == sorted(set(TEXT))
    assert tok.encode("\n ") == [0, 1]  # "\n" and " " sort first


def test_round_trip():
    tok = CharTokenizer.from_text(TEXT)
    ids = tok.encode(TEXT)
    assert all(isinstance(i, int) and 0 <= i < tok.vocab_size for i in ids)
    assert tok.decode(ids) == TEXT
    assert tok.decode(np.array(ids)) == TEXT
    assert tok.decode(mg.tensor(ids)) == TEXT
    assert tok.encode("") == [] and tok.decode([]) == ""


def test_unknown_character_names_it_and_its_position():
    tok = CharTokenizer.from_text("abc")
    with pytest.raises(UnknownCharacterError, match=r"'z' at position 3"):
        tok.encode("abcz")
    with pytest.raises(ValueError, match="not in the tokenizer's vocabulary"):  # a ValueError subclass
        tok.encode("x")
    with pytest.raises(ValueError, match="out of range"):
        tok.decode([3])


def test_empty_text_has_no_vocabulary():
    with pytest.raises(ValueError, match="empty"):
        CharTokenizer.from_text("")


def test_json_and_file_round_trip(tmp_path):
    tok = CharTokenizer.from_text(TEXT)
    assert CharTokenizer.from_json(tok.to_json()) == tok
    path = tmp_path / "tokenizer.json"
    tok.save(path)
    loaded = CharTokenizer.load(path)
    assert loaded == tok and loaded.encode(TEXT) == tok.encode(TEXT)
    with pytest.raises(ValueError, match="expected"):
        CharTokenizer.from_json('{"chars": "abc"}')


def test_a_large_chinese_vocabulary_encodes_as_a_dict_lookup_would():
    rng = np.random.default_rng(0)
    # Thousands of Han characters, plus a few outside the basic plane (an extension-B character, an emoji).
    alphabet = [chr(c) for c in rng.choice(np.arange(0x4E00, 0xA000), 3000, replace=False)] + ["𠀋", "😀", "\n", "，"]
    text = "".join(rng.choice(alphabet, 20_000))
    tok = CharTokenizer.from_text(text)
    assert tok.chars == sorted(set(text)) and tok.vocab_size > 2500
    ids = tok.encode_array(text)
    assert ids.dtype == np.int64 and ids.tolist() == [tok.stoi[ch] for ch in text] == tok.encode(text)
    assert tok.decode(ids) == text
    # A vocabulary in any order (not sorted) encodes by its own order.
    shuffled = CharTokenizer(list(rng.permutation(tok.chars)))
    assert shuffled.encode(text[:500]) == [shuffled.stoi[ch] for ch in text[:500]]
    # Unknown characters: inside the table's range (a Han character not in the text) and past its end.
    missing = next(chr(c) for c in range(0x4E00, 0xA000) if chr(c) not in tok.stoi)
    for unknown in (missing, "\U0010FFFD"):
        with pytest.raises(UnknownCharacterError, match=re.escape(f"{unknown!r} at position 2 ")):
            tok.encode(text[:2] + unknown)
