"""Hints before solutions: every ★★/★★★ exercise has progressive hints that never give away its code, and the
command line hands them out one at a time, reveals the reference solution, and scores an open task on the
yardstick once (tutorials/exercises/hints.py, coaching.py, __main__.py)."""

from __future__ import annotations

import ast
import json
import re
import time
from types import SimpleNamespace

import pytest
from course_helpers import own_copy

from tutorials.exercises import LECTURES, coaching, find, progress
from tutorials.exercises.__main__ import main
from tutorials.exercises.coaching import STATE_VARIABLE, solution_code
from tutorials.exercises.grading import grade_final
from tutorials.exercises.hints import HINTS, hints_for

EXERCISES = [e for exercises in LECTURES.values() for e in exercises]


@pytest.fixture
def state(tmp_path, monkeypatch):
    path = tmp_path / "progress.json"
    monkeypatch.setenv(STATE_VARIABLE, str(path))
    return path


def code_lines(source: str) -> list[str]:
    """The solution's lines of code, normalised (no comments, no spaces), but for its signatures and docstrings:
    a hint may name the function it is about."""
    tree = ast.parse(source)
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            skip |= set(range(node.lineno, node.body[0].lineno))  # decorators and the signature
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skip |= set(range(first.lineno, first.end_lineno + 1))
    lines = []
    for number, line in enumerate(source.splitlines(), start=1):
        code = re.sub(r"\s+", "", line.split("#")[0])
        if number not in skip and len(code) >= 6:
            lines.append(code)
    return lines


def test_every_exercise_has_hints_one_for_a_star_two_or_three_for_more():
    assert {e.number for e in EXERCISES} == set(HINTS), ({e.number for e in EXERCISES} ^ set(HINTS))
    for exercise in EXERCISES:
        hints = hints_for(exercise.number)
        assert (len(hints) == 1) if exercise.level == 1 else (2 <= len(hints) <= 3), exercise.number
        assert all(re.search(r"[\u4e00-\u9fff]", hint) for hint in hints), exercise.number
    assert sum(e.level == 1 for e in EXERCISES) == 21  # 13 in the lectures, 8 in the learner's engine


@pytest.mark.parametrize("number", sorted(HINTS))
def test_no_hint_contains_a_line_of_its_solution(number):
    lines = code_lines(solution_code(find(number)))
    assert lines, number
    for hint in hints_for(number):
        squeezed = re.sub(r"\s+", "", hint)
        leaked = [line for line in lines if line in squeezed]
        assert not leaked, (number, leaked, hint)


def test_the_leak_check_would_catch_a_hint_that_gives_the_code_away():
    lines = code_lines(solution_code(find("3.3")))
    leaky = "遮罩：future = np.triu(np.ones((T, T), dtype=bool), k=1)"
    assert any(line in re.sub(r"\s+", "", leaky) for line in lines)


def test_the_solution_shown_is_the_definition_with_the_helpers_it_uses():
    code = solution_code(find("3.6"))
    assert "class PointerAttention" in code and "def pronoun_model" in code
    assert code.index("class PointerAttention") < code.index("def pronoun_model")
    assert "def softmax" not in code  # 3.1's answer, which 3.6 does not use
    assert solution_code(find("7.2")).startswith("@mg.no_grad()")


def test_hints_come_one_at_a_time_after_the_checkers_verdict_and_are_remembered(state, capsys):
    assert main(["check", "03", "--hint", "3.3"]) == 1  # the learner's file is blank
    first = capsys.readouterr().out
    assert first.index("3.3") < first.index("提示 1/3") and "还没写" in first
    assert hints_for("3.3")[0] in first
    assert json.loads(state.read_text(encoding="utf-8"))["hints"] == {"3.3": 1}
    main(["check", "--hint", "3.3"])
    assert hints_for("3.3")[1] in capsys.readouterr().out
    main(["check", "--hint", "3.3"])
    main(["check", "--hint", "3.3"])  # past the last: the last again, and the way to the solution
    out = capsys.readouterr().out
    assert out.count("提示 3/3") == 2 and "--reveal 3.3" in out
    main(["check", "--hint", "0.1"])  # a ★ exercise: its one hint, and then the way to the solution
    out = capsys.readouterr().out
    assert "提示 1/1" in out and hints_for("0.1")[0] in out and "--reveal 0.1" in out


def test_a_named_mistake_stays_the_first_line_of_help(state, capsys):
    assert main(["check", "--solutions", "--hint", "3.2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].lstrip().startswith("✓ 3.2") and "提示 1/3" in out


def test_reveal_asks_for_a_try_or_the_hints_first_then_grades_and_shows_the_solution(state, capsys):
    assert main(["check", "--reveal", "3.3"]) == 1  # blank, no hint seen: not yet
    out = capsys.readouterr().out
    assert "先自己试一试" in out and "def causal_attention" not in out and "共 3 条，你看过 0 条" in out
    assert not state.exists()  # nothing was revealed
    for _ in range(3):
        main(["check", "--hint", "3.3"])
    capsys.readouterr()
    assert main(["check", "--reveal", "3.3"]) == 1  # every hint read: the solution, after the verdict
    out = capsys.readouterr().out
    assert "你还没有通过这一题" in out and "def causal_attention" in out and "masked_fill" in out
    assert main(["check", "--solutions", "--reveal", "3.3"]) == 0  # a try that passes: shown at once
    assert "你已经通过了这一题" in capsys.readouterr().out
    assert json.loads(state.read_text(encoding="utf-8"))["revealed"] == ["3.3"]


def test_a_wrong_try_is_enough_to_see_the_solution(state, capsys, monkeypatch):
    import tutorials.exercises as exercises_package

    wrong = SimpleNamespace(causal_attention=lambda q, k, v: q)
    monkeypatch.setattr(exercises_package, "answers", lambda lecture, solutions=False, file="": wrong)
    assert main(["check", "--reveal", "3.3"]) == 1
    out = capsys.readouterr().out
    assert "你还没有通过这一题" in out and "def causal_attention" in out


def test_the_final_score_is_given_once_and_recorded(state, capsys, monkeypatch):
    import tutorials.exercises as exercises_package

    assert main(["check", "--final", "3.3"]) == 2  # not an open task on the yardstick
    assert "1.6, 6.7, 7.6" in capsys.readouterr().err
    assert main(["check", "--final", "1.6"]) == 1  # a blank answer: nothing measured, the yardstick not used
    assert "尺子没有用掉" in capsys.readouterr().out and not state.exists() and not progress.scorings("1.6")
    assert main(["check", "--solutions", "--final", "1.6"]) == 0  # the reference: scored, not recorded as yours
    assert "不占用你的那一次" in capsys.readouterr().out and not state.exists()
    assert [e["whose"] for e in progress.scorings("1.6")] == ["参考答案"]  # but logged

    learner_answers, mine = exercises_package.answers, own_copy("01")  # the learner's answer: the reference's code
    monkeypatch.setattr(exercises_package, "answers", lambda lecture, solutions=False, file="": mine)
    assert main(["check", "--final", "1.6"]) == 0
    first = capsys.readouterr().out
    assert "在尺子上是" in first and "已经记下" in first and "第 2 次打分" in first
    monkeypatch.setattr(exercises_package, "answers", learner_answers)
    assert main(["check", "--final", "1.6"]) == 0  # now blank: the recorded score, not a new measurement
    again = capsys.readouterr().out
    assert "已经用过了" in again and re.search(r"在尺子上是 \d\.\d{3}", again)
    assert json.loads(state.read_text(encoding="utf-8"))["finals"]["1.6"]["status"] == "pass"
    state.unlink()  # deleting the progress file does not make the yardstick new again: its log remembers
    assert main(["check", "--final", "1.6"]) == 0
    assert "已经用过了" in capsys.readouterr().out
    assert [e["count"] for e in progress.scorings("1.6")] == [1, 2]


def test_every_scoring_on_the_yardstick_is_logged_with_its_count_even_from_python(state):
    exercise = find("7.6")
    for k in (1, 2):
        result = grade_final(exercise, lambda train_ids, vocab_size, gpt_probs: 0.0)
        assert result.status == "wrong" and f"第 {k} 次打分" in result.message, result.message
    assert [(e["count"], e["route"], e["whose"]) for e in progress.scorings("7.6")] == \
        [(1, "Python", "你的答案"), (2, "Python", "你的答案")]
    assert coaching.recorded_final(exercise)["status"] == "wrong"  # what --final will show: the first


def test_a_file_that_does_not_import_is_reported_not_raised(state, capsys, monkeypatch):
    import tutorials.exercises as exercises_package

    def broken(lecture, solutions=False, file=""):
        raise SyntaxError("invalid syntax")

    monkeypatch.setattr(exercises_package, "answers", broken)
    assert main(["check", "--hint", "3.3"]) == 1
    assert "答案文件导入出错" in capsys.readouterr().out and not state.exists()


def test_an_empty_exercise_number_is_refused_not_taken_for_everything(state, capsys):
    for flag in ("--hint", "--reveal", "--final"):
        assert main(["check", flag, ""]) == 2
        err = capsys.readouterr()
        assert "题号是空的" in err.err and "通过" not in err.out


@pytest.mark.parametrize("content", [None, "[1, 2]", '{"hints": 5}', '{"hints": {"3.3": 1}, "finals": []}',
                                     '{"hints": ', "\udcff"])
def test_a_progress_file_the_course_cannot_use_is_named_in_one_line(tmp_path, monkeypatch, capsys, content):
    path = tmp_path / "progress.json"
    if content is None:
        path.mkdir()  # a folder where the file should be
    else:
        path.write_bytes(content.encode("utf-8", "surrogateescape"))
    monkeypatch.setenv(STATE_VARIABLE, str(path))
    assert main(["check", "--hint", "3.3"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(path) in err and "Traceback" not in err, err


def test_a_device_as_the_progress_file_is_refused_at_once(monkeypatch, capsys):
    monkeypatch.setenv(STATE_VARIABLE, "/dev/full")  # a device: reading it never ends
    started = time.perf_counter()
    with pytest.raises(progress.StateError, match="不是一个普通文件"):
        progress.load_state()
    with pytest.raises(progress.StateError, match="/dev/full"):
        progress.save_state({"hints": {}, "revealed": [], "finals": {}})
    assert time.perf_counter() - started < 5
    assert main(["check", "--hint", "3.3"]) == 2
    err = capsys.readouterr().err.strip()
    assert "/dev/full" in err and "\n" not in err


def test_a_record_that_cannot_be_written_is_named_in_one_line(tmp_path, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv(progress.LOG_VARIABLE, str(blocker / "yardstick.jsonl"))  # its folder is a file
    with pytest.raises(progress.StateError, match="记录写不进 .*a-file"):
        progress.log_scoring("1.6", "pass", "x", "你的答案", "Python")
