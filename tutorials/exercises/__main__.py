"""The command line: `python -m tutorials.exercises check [03 | 3.2] [--solutions]`, or `... list`.

Beyond the verdict: `check --hint 3.3` prints the next hint, `check --reveal 3.3` the reference solution, and
`check --final 1.6` scores an open task on the yardstick, once (coaching.py remembers what was handed out).
Exits 0 when every exercise it graded passed, 1 otherwise. Read next: __init__.py.
"""

from __future__ import annotations

import argparse
import sys

from tutorials.exercises import LECTURES, answers, coaching, find, lecture_of, print_reports, report
from tutorials.exercises.grading import LEVELS, Result, grade, grade_final


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tutorials.exercises",
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
        number = args.hint or args.reveal or args.final
        if number is None:
            return 0 if print_reports(args.which, solutions=args.solutions) else 1
        if args.which is not None and lecture_of(args.which) != lecture_of(number):
            raise ValueError(f"练习 {number} 不在第 {args.which} 讲里")
        return help_with(number, args)
    except ValueError as error:
        print(f"python -m tutorials.exercises: {error}", file=sys.stderr)
        return 2


def help_with(number: str, args: argparse.Namespace) -> int:
    """`--hint`, `--reveal` or `--final` for one exercise: its verdict first, then what was asked for."""
    exercise = find(number)
    if args.final and exercise.final is None:
        finals = ", ".join(e.number for lecture in LECTURES.values() for e in lecture if e.final)
        raise ValueError(f"练习 {exercise.number} 不在尺子上打分：--final 只用于开放题 {finals}")
    try:
        lecture = lecture_of(number)  # lecture 00's engine exercises have a file of their own
        module = answers(lecture, args.solutions, exercise.file) if exercise.file else answers(lecture, args.solutions)
    # A half-edited answer file may not even import; say so, as `check` does, instead of a traceback.
    except Exception as error:
        print(f"第 {lecture_of(number)} 讲练习：答案文件导入出错，先修好它：{type(error).__name__}: {error}")
        return 1
    answer = getattr(module, exercise.name, None)
    if args.final:
        return final(exercise, answer, record=not args.solutions)
    result = grade(exercise, answer) if hasattr(module, exercise.name) else \
        Result(exercise, "error", f"答案文件里找不到 {exercise.name}：它被删掉或改名了吗？")
    print(report([result], f"练习 {exercise.number}"))
    print(coaching.next_hint(exercise) if args.hint else coaching.reveal(exercise, result))
    return 0 if result.passed else 1


def final(exercise, answer, record: bool = True) -> int:
    """Score on the yardstick once; a second time, show the recorded score instead of measuring again.

    The reference solution (`--solutions`) is scored without using up the learner's one final score.
    """
    if not record:
        result = grade_final(exercise, answer)
        print(report([result], f"练习 {exercise.number}：参考答案在尺子上的得分（不记录，不占用你的那一次）"))
        return 0 if result.passed else 1
    recorded = coaching.recorded_final(exercise)
    if recorded is not None:
        print(f"练习 {exercise.number} 的尺子已经用过了（{recorded['when']}），记录下的得分：\n"
              f"  {recorded['message']}\n"
              "尺子只打一次分，换了答案再去量，就等于在尺子上挑选了；"
              "继续改进的话，看开发集上的分数（check 不带 --final）。")
        return 0 if recorded["status"] == "pass" else 1
    result = grade_final(exercise, answer)
    print(report([result], f"练习 {exercise.number}：尺子上的最终得分"))
    if result.status in ("pass", "wrong"):  # a measurement was made: the yardstick is used up
        coaching.record_final(exercise, result)
        print("这个得分已经记下；尺子只打这一次分。")
    else:
        print("答案还没能打分，尺子没有用掉：先在开发集上检查通过（check 不带 --final）。")
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main())
