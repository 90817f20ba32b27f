"""The 先猜一猜 record (tutorials/predictions.py): a guess is stored, shown beside the measurement, and scored."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest

from tutorials.predictions import UNANSWERED, Predictions


def test_a_numeric_guess_is_shown_beside_the_measurement_and_scored_by_its_ratio(tmp_path, capsys):
    guesses = Predictions("01", folder=tmp_path)
    guesses.guess("loss", 3.0, "二元模型的损失", default=3.0)
    guesses.guess("steps", 100, "步数", default=10)
    guesses.guess("near", 1e-3, "梯度", default=0.5)
    assert "[loss]" in capsys.readouterr().out
    assert "你猜 3，实测 2.5" in guesses.reveal("loss", 2.5)  # 1.2x: close
    guesses.reveal("steps", 20)  # 5x: not close
    guesses.reveal("near", -1.0)  # the wrong sign: no ratio, not close
    score = guesses.calibration()
    assert (score.numbers, score.numbers_close, score.defaults, score.pending) == (3, 1, 1, 0)
    assert math.isclose(score.mean_log2_ratio, (math.log2(1.2) + math.log2(5)) / 2)
    out = capsys.readouterr().out
    assert "1/3 个在实测的 2 倍以内" in out and "1 个还是默认值" in out
    record = json.loads((tmp_path / "guesses_01.json").read_text(encoding="utf-8"))
    assert [g["key"] for g in record["guesses"]] == ["loss", "steps", "near"]
    assert record["guesses"][0]["measured"] == 2.5


def test_choices_are_scored_right_or_wrong_and_unrevealed_ones_are_counted(capsys):
    guesses = Predictions("04")
    guesses.guess("same", "一样", "输出一样吗", options=["一样", "不一样"])
    guesses.guess("slowest", "rope", "谁最慢", options=["learned", "sinusoidal", "rope"])
    guesses.guess("later", 2.0)
    assert "猜对了" in guesses.reveal("same", "一样")
    assert "没猜对" in guesses.reveal("slowest", "sinusoidal")
    score = guesses.calibration()
    assert (score.choices, score.choices_right, score.pending, score.numbers) == (2, 1, 1, 0)
    assert "1 个猜测还没有揭晓" in capsys.readouterr().out


def test_an_unanswered_guess_is_revealed_with_its_measurement_and_never_scored(tmp_path, capsys):
    guesses = Predictions("03", folder=tmp_path)
    guesses.guess("weight", UNANSWERED, "注意力权重")
    guesses.guess("winner", UNANSWERED, "谁更好", options=["RNN", "注意力"])
    guesses.guess("chain", 10.0, "依赖链")
    assert "还没猜" in capsys.readouterr().out
    line = guesses.reveal("weight", 0.93)
    assert "实测 0.93" in line and "还没猜" in line
    assert "实际" not in guesses.reveal("winner", "注意力") and "还没猜" in capsys.readouterr().out
    guesses.reveal("chain", 10.0)
    score = guesses.calibration()
    assert (score.unanswered, score.numbers, score.numbers_close, score.choices, score.pending) == (2, 1, 1, 0, 0)
    assert "还有 2 个先猜一猜还没猜，不计分" in capsys.readouterr().out
    record = json.loads((tmp_path / "guesses_03.json").read_text(encoding="utf-8"))
    assert record["guesses"][0]["value"] == UNANSWERED and record["guesses"][0]["measured"] == 0.93


def test_a_lecture_with_no_guess_made_says_so_instead_of_a_score(capsys):
    guesses = Predictions("05")
    guesses.guess("gap", UNANSWERED, "最大差")
    guesses.reveal("gap", 1e-7)
    score = guesses.calibration()
    assert (score.unanswered, score.numbers, score.mean_log2_ratio) == (1, 0, None)
    out = capsys.readouterr().out
    assert "没有一个猜测可以打分" in out and "个在实测的" not in out


def test_bad_guesses_and_unknown_keys_raise_clear_errors_in_chinese():
    guesses = Predictions("02")
    with pytest.raises(ValueError, match=r"先猜一猜 \[x\]：'maybe' 不是选项之一"):
        guesses.guess("x", "maybe", options=["yes", "no"])
    with pytest.raises(ValueError, match=r"先猜一猜 \[y\]：这一题要猜一个数，你写的是 '3'"):
        guesses.guess("y", "3")
    with pytest.raises(KeyError, match="还没有这个先猜一猜"):
        guesses.reveal("z", 1.0)
    guesses.guess("w", "yes", options=["yes", "no"])
    with pytest.raises(ValueError, match="不是选项之一"):
        guesses.reveal("w", "perhaps")


def test_a_guess_changed_after_its_reveal_scores_its_first_value(tmp_path, capsys):
    first = Predictions("06", folder=tmp_path)  # the first run of the lecture
    first.guess("loss", 5.0, "损失")
    first.guess("which", "A", "哪个", options=["A", "B"])
    first.reveal("loss", 1.0)
    first.reveal("which", "B")
    assert (first.calibration().numbers_close, first.calibration().choices_right) == (0, 0)
    capsys.readouterr()

    again = Predictions("06", folder=tmp_path)  # run again, with both guesses changed to the answers now known
    again.guess("loss", 1.0, "损失")
    again.guess("which", "B", "哪个", options=["A", "B"])
    assert "记分的仍是第一次的猜测 5.0" in capsys.readouterr().out
    assert "你猜 5（看过实测后改成 1.0，不计）" in again.reveal("loss", 1.0)
    assert "没猜对" in again.reveal("which", "B")
    score = again.calibration()  # 0/2 stays 0/2
    assert (score.numbers_close, score.choices_right, score.revised) == (0, 0, 2)
    assert "2 个猜测在看过实测之后改过" in capsys.readouterr().out
    record = json.loads((tmp_path / "guesses_06.json").read_text(encoding="utf-8"))
    assert [(g["value"], g["revisions"]) for g in record["guesses"]] == [(5.0, [1.0]), ("A", ["B"])]


def test_a_guess_first_written_after_its_reveal_is_not_scored(tmp_path, capsys):
    first = Predictions("07", folder=tmp_path)
    first.guess("gap", UNANSWERED, "差距")
    first.reveal("gap", 0.05)
    again = Predictions("07", folder=tmp_path)
    again.guess("gap", 0.05, "差距")
    assert "不计分" in capsys.readouterr().out
    assert "看过实测之后写的" in again.reveal("gap", 0.05)
    score = again.calibration()
    assert (score.numbers, score.late) == (0, 1)


def test_a_guess_changed_before_its_reveal_is_just_the_guess(tmp_path):
    guesses = Predictions("08", folder=tmp_path)
    guesses.guess("speed", 2.0, "快几倍")
    guesses.guess("speed", 3.0, "快几倍")  # nothing has been shown yet
    guesses.reveal("speed", 3.0)
    assert guesses.calibration().numbers_close == 1 and not guesses.guesses["speed"].revisions


LECTURES = sorted((Path(__file__).resolve().parent.parent / "tutorials").glob("0[0-9]_*.py"))  # 00-09, every lecture


@pytest.mark.parametrize("path", LECTURES, ids=[p.name for p in LECTURES])
def test_every_lecture_records_its_guesses_reveals_each_one_and_scores_them(path):
    text = path.read_text(encoding="utf-8")
    guessed = re.findall(r'my_guesses\.guess\(\s*"(\w+)"', text)
    revealed = re.findall(r'my_guesses\.reveal\(\s*"(\w+)"', text)
    assert guessed and len(guessed) == len(set(guessed)), guessed
    assert sorted(guessed) == sorted(revealed), (guessed, revealed)
    assert text.count("my_guesses.calibration()") == 1
    assert f'Predictions("{path.name[:2]}", folder=FIGURES)' in text
    # every guess cell ships unanswered, never with an answer filled in
    values = re.findall(r'my_guesses\.guess\(\s*"\w+",\s*("[^"]*"|[^,]+),', text)
    assert values == [f'"{UNANSWERED}"'] * len(guessed), values
    assert "default=" not in text
    # every 先猜一猜 prompt but a free recall (07's, which exercise 7.1 grades) is followed by a guess cell
    prompts = [m.start() for m in re.finditer(r"\*\*先猜一猜\*\*", text)]
    cells = [m.start() for m in re.finditer(r"^my_guesses\.guess\(", text, flags=re.MULTILINE)]
    unanswered = [p for p, nxt in zip(prompts, prompts[1:] + [len(text)]) if not any(p < c < nxt for c in cells)]
    assert len(unanswered) <= (1 if path.name.startswith("07") else 0), [text[p:p + 60] for p in unanswered]
