"""The built-in Tang-poem corpus: the shipped file, its train/validation split, and `minigpt train --corpus tang`."""

import hashlib
import re

import numpy as np
import pytest

from minigpt.checkpoint import load_model
from minigpt.cli import main
from minigpt.config import CORPUS_DEFAULTS, TrainConfig
from minigpt.corpus import TANG_FILE, load_corpus, load_tang, split_poems
from minigpt.data import DataError, load_dataset
from minigpt.errors import ConfigError
from minigpt.train import train


@pytest.fixture(autouse=True)
def _fresh_cwd(tmp_path, monkeypatch):
    """Each test in its own folder: a run's default out/ never comes from, or goes to, the checkout."""
    monkeypatch.chdir(tmp_path)

# The figures in minigpt/corpora/README.md; they change only when the corpus is derived again.
POEMS, VOCAB, VAL_POEMS = 35_087, 6_445, 3_508
TEXT_SHA256 = "686a7103cae0995926be34a9fc16033035fbadeb0dc9b8fbcc36452850d685d2"
VAL_SHA256 = "54485a8f9b817b7d756c7377906655ff8e5868ac5abf1a19e3d709973266ceb1"

# Common characters whose traditional and simplified forms differ: only the simplified ones may occur.
TRADITIONAL = "國門風說為來時東車馬長書見與無開關歸飛鳥雲聲夢淚還萬邊華語紅綠"
SIMPLIFIED = "国门风说为来时东车马长书见与无开关归飞鸟云声梦泪还万边华语红绿"

HAN = "\u4e00-\u9fff"
COUPLET = re.compile(rf"^([{HAN}]{{5}}[，；][{HAN}]{{5}}|[{HAN}]{{7}}[，；][{HAN}]{{7}})[。？！]$")
TITLE = re.compile(rf"^[{HAN}]+( [{HAN}]+)*$")


@pytest.fixture(scope="module")
def text():
    return load_tang()


def test_the_shipped_file_is_small_and_decodes_to_the_documented_text(text):
    assert TANG_FILE.stat().st_size <= 3_000_000
    assert hashlib.sha256(text.encode("utf-8")).hexdigest() == TEXT_SHA256
    assert load_corpus("tang") == text
    assert text.startswith("帝京篇十首 一\n秦川雄帝宅，函谷壮皇居。\n") and text.endswith("。\n")
    assert "静夜思\n床前看月光，疑是地上霜。\n举头望山月，低头思故乡。\n\n" in text
    assert len(set(text)) == VOCAB


def test_the_text_is_simplified(text):
    assert len(TRADITIONAL) == len(SIMPLIFIED)
    for traditional, simplified in zip(TRADITIONAL, SIMPLIFIED):
        assert traditional not in text, traditional
        assert text.count(simplified) >= 100, simplified


def test_every_poem_is_a_title_then_two_or_four_regulated_couplets_and_none_repeats(text):
    poems = text.rstrip("\n").split("\n\n")
    assert len(poems) == POEMS
    bodies = set()
    for poem in poems:
        title, *lines = poem.split("\n")
        assert TITLE.match(title), poem
        assert len(lines) in (2, 4) and all(COUPLET.match(line) for line in lines), poem
        assert len({len(line) for line in lines}) == 1, poem  # 五言 or 七言 throughout, never mixed
        bodies.add(tuple(lines))
    assert len(bodies) == POEMS  # no duplicates
    assert "□" not in text and "囗" not in text and not re.search(r"[0-9A-Za-z（）〖〗\[\]{}○]", text)


def test_the_split_holds_out_every_tenth_whole_poem_and_never_changes(text):
    train_text, val_text = split_poems(text)
    assert hashlib.sha256(val_text.encode("utf-8")).hexdigest() == VAL_SHA256
    poems = text.rstrip("\n").split("\n\n")
    train_poems, val_poems = train_text.rstrip("\n").split("\n\n"), val_text.rstrip("\n").split("\n\n")
    assert len(val_poems) == VAL_POEMS and len(train_poems) == POEMS - VAL_POEMS
    assert val_poems == poems[9::10]  # whole poems, from all over the corpus
    assert sorted(train_poems + val_poems) == sorted(poems)
    assert split_poems(text) == (train_text, val_text)


def test_the_dataset_encodes_the_split_with_one_vocabulary(text):
    data = load_dataset(None, block_size=64, corpus="tang")
    train_text, val_text = split_poems(text)
    assert data.name == "built-in Tang poems corpus" and data.tokenizer.vocab_size == VOCAB
    assert data.tokenizer.decode(data.val) == val_text and data.tokenizer.decode(data.train) == train_text
    assert data.train.dtype == np.int64
    assert data.sha256 == TEXT_SHA256
    with pytest.raises(DataError, match="unknown corpus 'song'"):
        load_dataset(None, block_size=64, corpus="song")


def test_tang_defaults_apply_unless_a_setting_is_given():
    tang = CORPUS_DEFAULTS["tang"]
    assert tang and all(getattr(TrainConfig(), name) != value for name, value in tang.items())
    config = TrainConfig.for_corpus("tang", seed=3)
    assert config.corpus == "tang" and config.seed == 3
    assert all(getattr(config, name) == value for name, value in tang.items())
    name, value = next(iter(tang.items()))
    assert getattr(TrainConfig.for_corpus("tang", **{name: 2 * value}), name) == 2 * value
    assert TrainConfig.for_corpus("shakespeare") == TrainConfig()
    with pytest.raises(ConfigError, match="unknown corpus"):
        TrainConfig.for_corpus("song")
    with pytest.raises(ConfigError, match="not both"):
        train(TrainConfig(corpus="tang", data="poems.txt"))


TINY = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16", "--batch-size", "4",
        "--eval-interval", "2"]


@pytest.mark.slow
def test_train_resume_and_sample_on_the_tang_corpus(tmp_path, capsys):
    straight, stopped = str(tmp_path / "straight"), str(tmp_path / "stopped")
    assert main(["train", "--corpus", "tang", "--out-dir", straight, "--max-iters", "4", *TINY]) == 0
    assert main(["train", "--corpus", "tang", "--out-dir", stopped, "--max-iters", "2", *TINY]) == 0
    assert main(["train", "--resume", "--out-dir", stopped, "--max-iters", "4"]) == 0
    (model_a, tokenizer), (model_b, _) = load_model(straight), load_model(stopped)
    assert tokenizer.vocab_size == VOCAB  # the tokenizer travels with the checkpoint
    for name, value in model_a.state_dict().items():
        assert np.array_equal(value.numpy(), model_b.state_dict()[name].numpy()), name
    capsys.readouterr()
    assert main(["sample", "--out-dir", straight, "--prompt", "床前", "--max-new-tokens", "20"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("床前") and len(out) == 2 + 20 + 1


def test_corpus_and_data_together_are_refused(tmp_path, capsys):
    assert main(["train", "--corpus", "tang", "--data", str(tmp_path / "poems.txt"), "--out-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "--corpus tang and --data" in err and "not both" in err and err.count("\n") == 1
    assert not any(tmp_path.iterdir())
