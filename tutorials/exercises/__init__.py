"""Exercises for every lecture, and the checker that grades them.

Your answers go in this folder, one file per lecture (`lecture00.py` ... `lecture07.py`): replace each
`raise NotImplementedError` (or `None`) with your code, then check it

    python -m tutorials.exercises check 03      # in a shell, from any directory
    python -m tutorials.exercises check         # every lecture
    python -m tutorials.exercises list          # what there is to do

or, in a notebook cell,

    from tutorials.exercises import check
    check("03")                      # every exercise of lecture 03, read afresh from lecture03.py
    check("3.2", Softmax)            # one exercise, with an answer defined in the notebook itself

Each line of the report says what passed and, for what did not, what is wrong. Stuck after that line, ask for a
hint, then (only then) for the answer; an open task scored on the yardstick gets its yardstick score once:

    python -m tutorials.exercises check 03 --hint 3.3     # the verdict, then the next hint (hints.py)
    python -m tutorials.exercises check 03 --reveal 3.3   # the verdict, then the reference solution
    python -m tutorials.exercises check --final 1.6       # 1.6, 6.7, 7.6: on the yardstick, once (coaching.py)

The reference solutions are in tutorials/solutions/ (`check("03", solutions=True)` grades them).
Read next: grading.py.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

from tutorials.exercises import isolation, origin
from tutorials.exercises.checks import LECTURES
from tutorials.exercises.grading import LEVELS, Exercise, Result, answer_file, grade, grade_final, one_line

MARKS = {"pass": "✓", "wrong": "✗", "error": "✗", "blank": "·"}

__all__ = ["LECTURES", "answer_module", "check", "find", "grade_lecture", "lecture_of", "print_reports"]


def lecture_of(which: Any) -> str:
    """'03', '3', 3, '3.2' or '03.2' -> '03' (the lecture a number names); ValueError for anything else."""
    head = str(which).strip().split(".")[0]
    if not head.isdigit() or f"{int(head):02d}" not in LECTURES:
        raise ValueError(f"没有第 {which} 讲：讲次是 {'、'.join(LECTURES)}（题号写成 3.2 这样）")
    return f"{int(head):02d}"


def find(number: str) -> Exercise:
    """The exercise numbered like '3.2' (or '03.2')."""
    lecture = lecture_of(number)
    wanted = f"{int(lecture)}.{str(number).strip().split('.', 1)[1]}" if "." in str(number) else None
    for exercise in LECTURES[lecture]:
        if exercise.number == wanted:
            return exercise
    numbers = ", ".join(e.number for e in LECTURES[lecture])
    raise ValueError(f"没有练习 {number}：第 {lecture} 讲的练习是 {numbers}")


def answers(lecture: str, solutions: bool = False, file: str = "") -> ModuleType:
    """The learner's file for `lecture` (or the reference solutions), read afresh to pick up the latest edits;
    `file` names another answer file of the lecture (lecture 00's "engine")."""
    package = "tutorials.solutions" if solutions else "tutorials.exercises"
    module = importlib.import_module(f"{package}.{file or 'lecture' + lecture}")
    # The reference solutions do not change while the course runs; reloading them would make new classes (the
    # reference engine's Tensor) that no longer match the ones already imported elsewhere.
    return module if solutions else importlib.reload(module)


def answer_module(exercise: Exercise, solutions: bool = False) -> ModuleType:
    """The file holding `exercise`'s answer (or its reference solution), read afresh."""
    return answers(lecture_of(exercise.number), solutions, exercise.file)


def files_of(lecture: str) -> list[str]:
    """The answer files of a lecture, in the order its exercises first use them ("" is lectureNN.py)."""
    return list(dict.fromkeys(exercise.file for exercise in LECTURES[lecture]))


def answer_path(lecture: str, solutions: bool = False, file: str = "") -> Path:
    """Where the answers of `lecture` are (without reading them); `file` as in `answers`."""
    package = "tutorials.solutions" if solutions else "tutorials.exercises"
    return Path(importlib.util.find_spec(f"{package}.{file or 'lecture' + lecture}").origin)


def grade_lecture(lecture: Any, solutions: bool = False) -> list[Result]:
    """Grade every exercise of one lecture from its answer files; a list of Results, in order."""
    lecture = lecture_of(lecture)
    reads = {file: read_answers(lecture, solutions, file) for file in files_of(lecture)}
    return [_grade_from(reads[exercise.file], exercise) for exercise in LECTURES[lecture]]


@dataclass
class Answers:
    """What a check reads: the answers (a module, or a notebook's one answer), whether they are the reference
    solutions (graded on purpose), and the files of tutorials/solutions/ the answer file opened as it was read."""

    module: Any
    solutions: bool = False
    read_the_solutions: tuple[str, ...] = ()


def read_answers(lecture: str, solutions: bool = False, file: str = "") -> Answers:
    """The answer file (`file` as in `answers`) read afresh, watching whether it opens the reference solutions'
    files as it runs."""
    if solutions:
        return Answers(answers(lecture, True, file), True)
    with origin.watch_the_solutions() as reads:
        module = answers(lecture, False, file)
    return Answers(module, False, tuple(reads))


def _grade_from(read: Answers, exercise: Exercise, final: bool = False) -> Result:
    """One exercise graded from what was read: the learner's own code, never the reference solution's."""
    name = getattr(read.module, "__file__", None)
    if not hasattr(read.module, exercise.name):
        where = f"{Path(name).name} 里" if name else ""
        return Result(exercise, "error", f"{where}找不到 {exercise.name}：它被删掉或改名了吗？")
    answer = getattr(read.module, exercise.name)
    if not read.solutions:
        stem = answer_file(exercise)
        reference = getattr(importlib.import_module(f"tutorials.solutions.{stem}"), exercise.name)
        if read.read_the_solutions or (answer is not None and origin.copied_reference(answer, reference)):
            return Result(exercise, "wrong", f"{exercise.name} 用的是参考答案（tutorials/solutions/"
                                             f"{stem}.py，导入、exec 或读了它的文件）：检查的是你自己写的"
                                             "代码；先自己写，卡住了用 --hint")
    with origin.watch_the_solutions() as reads:
        result = grade_final(exercise, answer, "check --final") if final else grade(exercise, answer)
    if reads:
        return Result(exercise, "wrong", f"练习 {exercise.number} 的答案在检查时读了参考答案的文件（"
                                         f"tutorials/solutions/{reads[0]}）：检查的是你自己写的代码")
    return result


def report(results: list[Result], heading: str) -> str:
    """The report a learner reads: a heading, one line per exercise, and the progress."""
    lines = [heading]
    for result in results:
        exercise = result.exercise
        mark, level = MARKS[result.status], LEVELS[exercise.level]
        lines.append(f"  {mark} {exercise.number} {level:<3} {exercise.title}：{result.message}")
    passed = sum(result.passed for result in results)
    lines.append(f"  {passed}/{len(results)} 通过")
    return "\n".join(lines)


def check(which: Any = None, answer: Any = None, solutions: bool = False) -> None:
    """Grade and print: every lecture (no argument), one lecture ('03'), or one exercise ('3.2').

    With `answer`, grade that exercise on the given function, class or value instead of the one in the file.
    """
    print_reports(which, answer, solutions)


def print_reports(which: Any = None, answer: Any = None, solutions: bool = False) -> bool:
    """What `check` does; returns whether everything graded passed (the command line's exit status)."""
    if answer is not None:
        exercise = find(which)
        results = isolation.grade_in_child([exercise], lambda: Answers(SimpleNamespace(**{exercise.name: answer})),
                                           _grade_from)
        print(report(results, f"练习 {exercise.number}（你传入的答案）"))
        return all(r.passed for r in results)
    everything_passed = True
    for lecture in list(LECTURES) if which is None else [lecture_of(which)]:
        chosen = [find(which)] if which is not None and "." in str(which) else LECTURES[lecture]
        for file in dict.fromkeys(exercise.file for exercise in chosen):  # lecture 00 has two files
            shown = _shown_path(answer_path(lecture, solutions, file))
            try:
                results = isolation.grade_in_child(
                    [exercise for exercise in chosen if exercise.file == file],
                    lambda lecture=lecture, file=file: read_answers(lecture, solutions, file), _grade_from)
            # A half-edited answer file may not even import (a SyntaxError, a NameError at the top level...).
            except isolation.AnswerFileError as error:
                print(f"第 {lecture} 讲练习：答案文件 {shown} 导入出错，先修好它：{one_line(error)}")
                everything_passed = False
                continue
            print(report(results, f"第 {lecture} 讲练习（{shown}）"))
            everything_passed &= all(r.passed for r in results)
    return everything_passed


def _shown_path(path: Path) -> str:
    """The answer file's path, relative to the current directory when it is below it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
