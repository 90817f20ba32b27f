"""The command line: `python -m tutorials.exercises check [03 | 3.2] [--solutions]`, or `... list`.

Exits 0 when every exercise it graded passed, 1 otherwise. Read next: __init__.py.
"""

from __future__ import annotations

import argparse
import sys

from tutorials.exercises import LECTURES, print_reports
from tutorials.exercises.grading import LEVELS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tutorials.exercises",
                                     description="检查课程练习（答案写在 tutorials/exercises/lectureNN.py 里）")
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("check", help="检查一讲（03）、一题（3.2）或全部练习")
    check.add_argument("which", nargs="?", help="讲次如 03，或题号如 3.2；不写则检查全部")
    check.add_argument("--solutions", action="store_true", help="检查参考答案（tutorials/solutions/）而不是你的答案")
    commands.add_parser("list", help="列出每一讲的练习")
    args = parser.parse_args(argv)

    if args.command == "list":
        for lecture, exercises in LECTURES.items():
            print(f"第 {lecture} 讲：tutorials/exercises/lecture{lecture}.py")
            for exercise in exercises:
                print(f"  {exercise.number} {LEVELS[exercise.level]:<3} {exercise.title}（{exercise.name}）")
        return 0
    try:
        return 0 if print_reports(args.which, solutions=args.solutions) else 1
    except ValueError as error:
        print(f"python -m tutorials.exercises: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
