"""Hints before solutions: every ★★/★★★ exercise has progressive hints that never give away its code, and the
command line hands them out one at a time, reveals the reference solution, and scores an open task on the
yardstick once (tutorials/exercises/hints.py, coaching.py, __main__.py)."""

from __future__ import annotations

import ast
import json
import re

import pytest

import tutorials.exercises.__main__ as exercises_main
from tutorials.exercises import LECTURES, find
from tutorials.exercises.__main__ import main
from tutorials.exercises.coaching import STATE_VARIABLE, solution_code
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


def test_every_exercise_of_two_or_three_stars_has_two_or_three_hints():
    wanted = {e.number for e in EXERCISES if e.level >= 2}
    assert wanted == set(HINTS), (wanted - set(HINTS), set(HINTS) - wanted)
    for number in wanted:
        assert 2 <= len(hints_for(number)) <= 3, number
        assert all(re.search(r"[\u4e00-\u9fff]", hint) for hint in hints_for(number)), number
    assert hints_for("0.1") == []


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
    main(["check", "--hint", "0.1"])
    assert "没有提示" in capsys.readouterr().out


def test_a_named_mistake_stays_the_first_line_of_help(state, capsys):
    assert main(["check", "--solutions", "--hint", "3.2"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1].lstrip().startswith("✓ 3.2") and "提示 1/3" in out


def test_reveal_grades_first_and_says_whether_the_learner_has_passed(state, capsys):
    assert main(["check", "--reveal", "3.3"]) == 1
    out = capsys.readouterr().out
    assert "你还没有通过这一题" in out and "def causal_attention" in out and "masked_fill" in out
    assert main(["check", "--solutions", "--reveal", "3.3"]) == 0
    assert "你已经通过了这一题" in capsys.readouterr().out
    assert json.loads(state.read_text(encoding="utf-8"))["revealed"] == ["3.3"]


def test_the_final_score_is_given_once_and_recorded(state, capsys, monkeypatch):
    assert main(["check", "--final", "3.3"]) == 2  # not an open task on the yardstick
    assert "1.6, 6.7, 7.6" in capsys.readouterr().err
    assert main(["check", "--final", "1.6"]) == 1  # a blank answer: nothing measured, the yardstick not used
    assert "尺子没有用掉" in capsys.readouterr().out and not state.exists()
    assert main(["check", "--solutions", "--final", "1.6"]) == 0  # the reference: scored, not recorded
    assert "不占用你的那一次" in capsys.readouterr().out and not state.exists()

    learner_answers = exercises_main.answers
    monkeypatch.setattr(exercises_main, "answers", lambda lecture, solutions=False: learner_answers(lecture, True))
    assert main(["check", "--final", "1.6"]) == 0  # the learner's answer (here the reference's code)
    first = capsys.readouterr().out
    assert "在尺子上是" in first and "已经记下" in first
    monkeypatch.setattr(exercises_main, "answers", learner_answers)
    assert main(["check", "--final", "1.6"]) == 0  # now blank: the recorded score, not a new measurement
    again = capsys.readouterr().out
    assert "已经用过了" in again and re.search(r"在尺子上是 \d\.\d{3}", again)
    assert json.loads(state.read_text(encoding="utf-8"))["finals"]["1.6"]["status"] == "pass"


def test_a_file_that_does_not_import_is_reported_not_raised(state, capsys, monkeypatch):
    def broken(lecture, solutions=False):
        raise SyntaxError("invalid syntax")

    monkeypatch.setattr(exercises_main, "answers", broken)
    assert main(["check", "--hint", "3.3"]) == 1
    assert "答案文件导入出错" in capsys.readouterr().out and not state.exists()
