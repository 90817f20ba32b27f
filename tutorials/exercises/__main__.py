"""The command line: `python -m tutorials.exercises check [03 | 3.2] [--solutions]`, or `... list`.

Beyond the verdict: `check --hint 3.3` prints the next hint, `check --reveal 3.3` the reference solution, and
`check --final 1.6` scores an open task on the yardstick, once (coaching.py remembers what was handed out).
Every answer is graded in a child process with a time limit (isolation.py); Ctrl-C ends the check with one line.
Exits 0 when every exercise it graded passed, 1 otherwise, 2 for a bad request, 130 when interrupted.
Read next: __init__.py.
"""

from __future__ import annotations

import argparse
import sys

from minigpt.progress import discard_stdout
from tutorials.exercises import (
    LECTURES,
    _grade_from,
    coaching,
    find,
    isolation,
    lecture_of,
    print_reports,
    read_answers,
    report,
)
from tutorials.exercises.grading import LEVELS, Exercise, Result, one_line

PROG = "python -m tutorials.exercises"
INTERRUPTED = f"{PROG}: 已中断（Ctrl-C）：正在检查的那一题没有结果，已经打印的结果照旧有效。"


def main(argv: list[str] | None = None) -> int:
    """The command; what stops it from outside the learner's code (the terminal, the disk, Ctrl-C) is one line."""
    try:
        return _main(argv)
    except UnicodeEncodeError as error:  # PYTHONIOENCODING=ascii: Chinese cannot be shown, so say it in English
        print(f"{PROG}: error: this terminal's encoding ({error.encoding}) cannot show Chinese: set "
              "PYTHONIOENCODING=utf-8, or use a UTF-8 locale", file=sys.stderr)
    except BrokenPipeError:  # `| head` that has read enough: stop quietly
        discard_stdout()
        return 141
    except OSError as error:  # a full disk under `> report.txt`
        discard_stdout()
        print(f"{PROG}: 错误：{error.filename or '标准输出'}：{error.strerror}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(INTERRUPTED, file=sys.stderr)
        return 130
    return 2


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(prog=PROG,
                                     description="检查课程练习（答案写在 tutorials/exercises/lectureNN.py 里）")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="检查一讲（03）、一题（3.2）或全部练习")
    check.add_argument("which", nargs="?", help="讲次如 03，或题号如 3.2；不写则检查全部")
    check.add_argument("--solutions", action="store_true", help="检查参考答案（tutorials/solutions/）而不是你的答案")
    helps = check.add_mutually_exclusive_group()
    helps.add_argument("--hint", metavar="题号", help="先检查这一题，再给出下一条提示（一次一条，越来越具体）")
    helps.add_argument("--reveal", metavar="题号", help="先检查这一题，再给出参考答案的代码")
    helps.add_argument("--final", metavar="题号", help="开放题在尺子上的最终得分：只打一次，记录下来")
    commands.add_parser("list", help="列出每一讲的练习")
    args = parser.parse_args(argv)

    if args.command == "list":
        for lecture, exercises in LECTURES.items():
            print(f"第 {lecture} 讲：tutorials/exercises/lecture{lecture}.py")
            for exercise in exercises:
                where = f"，在 {exercise.file}.py 里" if exercise.file else ""
                print(f"  {exercise.number} {LEVELS[exercise.level]:<3} {exercise.title}（{exercise.name}{where}）")
        return 0
    try:
        number = next((n for n in (args.hint, args.reveal, args.final) if n is not None), None)
        if number is None:
            return 0 if print_reports(args.which, solutions=args.solutions) else 1
        if not number.strip():
            raise ValueError("题号是空的：写成 --hint 3.3 这样")
        if args.which is not None and lecture_of(args.which) != lecture_of(number):
            raise ValueError(f"练习 {number} 不在第 {args.which} 讲里")
        return help_with(number, args)
    except UnicodeEncodeError:  # (a ValueError too: the terminal's, said by main)
        raise
    except ValueError as error:
        print(f"{PROG}: {one_line(error)}", file=sys.stderr)
        return 2


def graded(exercise: Exercise, solutions: bool, final: bool = False) -> Result | None:
    """One exercise graded in a child process (isolation.py); None (and one line) if its file does not import."""
    lecture = lecture_of(exercise.number)
    try:
        return isolation.grade_in_child([exercise], lambda: read_answers(lecture, solutions, exercise.file),
                                        lambda read, e: _grade_from(read, e, final=final))[0]
    except isolation.AnswerFileError as error:  # as `check` says it, instead of a traceback
        print(f"第 {lecture} 讲练习：答案文件导入出错，先修好它：{one_line(error)}")
        return None


def help_with(number: str, args: argparse.Namespace) -> int:
    """`--hint`, `--reveal` or `--final` for one exercise: its verdict first, then what was asked for."""
    exercise = find(number)
    if args.final and exercise.final is None:
        finals = ", ".join(e.number for lecture in LECTURES.values() for e in lecture if e.final)
        raise ValueError(f"练习 {exercise.number} 不在尺子上打分：--final 只用于开放题 {finals}")
    if args.final:
        return final(exercise, solutions=args.solutions)
    result = graded(exercise, args.solutions)
    if result is None:
        return 1
    print(report([result], f"练习 {exercise.number}"))
    print(coaching.next_hint(exercise) if args.hint else coaching.reveal(exercise, result))
    return 0 if result.passed else 1


def final(exercise: Exercise, solutions: bool = False) -> int:
    """Score on the yardstick once; a second time, show the recorded score instead of measuring again.

    The reference solution (`--solutions`) is scored without using up the learner's one final score. Every
    scoring is logged by grade_final, whichever route calls it (coaching.py).
    """
    if solutions:
        result = graded(exercise, True, final=True)
        if result is None:
            return 1
        print(report([result], f"练习 {exercise.number}：参考答案在尺子上的得分（不记录，不占用你的那一次）"))
        return 0 if result.passed else 1
    recorded = coaching.recorded_final(exercise)
    if recorded is not None:
        print(f"练习 {exercise.number} 的尺子已经用过了（{recorded['when']}），记录下的得分：\n"
              f"  {recorded['message']}\n"
              "尺子只打一次分，换了答案再去量，就等于在尺子上挑选了；"
              "继续改进的话，看开发集上的分数（check 不带 --final）。")
        return 0 if recorded["status"] == "pass" else 1
    result = graded(exercise, False, final=True)
    if result is None:
        return 1
    print(report([result], f"练习 {exercise.number}：尺子上的最终得分"))
    if result.status in ("pass", "wrong"):  # a measurement was made: the yardstick is used up
        coaching.record_final(exercise, result)
        print("这个得分已经记下；尺子只打这一次分。")
    else:
        print("答案还没能打分，尺子没有用掉：先在开发集上检查通过（check 不带 --final）。")
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
