"""Help after the checker's one line, and what the learner has been given: hints, solutions, final scores.

The checker's verdict comes first (a named mistake says more than any hint); then `--hint 3.3` hands out the next
of the exercise's hints (hints.py), `--reveal 3.3` shows the reference solution's code, and `--final 1.6` scores an
open task on the yardstick, once. What was handed out is remembered (progress.py), so that the next `--hint` gives
the next hint, `--reveal` waits for a try or the last hint, and a second `--final` shows the first score instead of
measuring again, even after the progress file is deleted: the yardstick's own log has it too.
Read next: hints.py, the hints themselves.
"""

from __future__ import annotations

import ast
from pathlib import Path

import tutorials.solutions
from tutorials.exercises.grading import Exercise, Result, answer_file
from tutorials.exercises.hints import hints_for
from tutorials.exercises.progress import STATE_VARIABLE, load_state, now, save_state, scorings

__all__ = ["STATE_VARIABLE", "next_hint", "record_final", "recorded_final", "reveal", "solution_code"]


def next_hint(exercise: Exercise) -> str:
    """The next hint not yet seen (the last one again once all are seen), as the lines to print; remembered."""
    hints = hints_for(exercise.number)
    if not hints:
        return f"练习 {exercise.number} 是 ★ 题，没有提示：照讲义里的写法敲一遍，再运行检查。"
    state = load_state()
    seen = min(int(state["hints"].get(exercise.number, 0)) + 1, len(hints))
    state["hints"][exercise.number] = seen
    save_state(state)
    line = f"提示 {seen}/{len(hints)}：{hints[seen - 1]}"
    if seen < len(hints):
        return f"{line}\n（还卡住的话，再运行一次 --hint {exercise.number}，下一条会更具体。）"
    return (f"{line}\n（这是最后一条提示。还卡住的话，--reveal {exercise.number} 会给出参考答案——"
            "先再试一次，自己写出来的才记得住。）")


def may_reveal(exercise: Exercise, result: Result) -> str | None:
    """None if the solution may be shown: the learner has tried (an answer the checker could run) or has read every
    hint; otherwise what to do first."""
    hints = hints_for(exercise.number)
    seen = int(load_state()["hints"].get(exercise.number, 0))
    if result.status != "blank" or seen >= len(hints):
        return None
    return (f"先自己试一试：练习 {exercise.number} 还没写，参考答案先不给。写一个答案（哪怕不对），"
            f"检查器会告诉你错在哪；或者先看提示（python -m tutorials.exercises check --hint {exercise.number}，"
            f"共 {len(hints)} 条，"
            f"你看过 {seen} 条）。")


def reveal(exercise: Exercise, result: Result) -> str:
    """The reference solution's code, after a line saying whether the learner's own answer has passed; remembered.
    Only after a try or every hint (`may_reveal`)."""
    not_yet = may_reveal(exercise, result)
    if not_yet is not None:
        return not_yet
    state = load_state()
    if exercise.number not in state["revealed"]:
        state["revealed"].append(exercise.number)
        save_state(state)
    verdict = ("你已经通过了这一题；对照一下参考答案的写法：" if result.passed else
               f"你还没有通过这一题（{result.message}）。参考答案：")
    return f"{verdict}\n（tutorials/solutions/{answer_file(exercise)}.py）\n\n{solution_code(exercise)}"


def solution_code(exercise: Exercise) -> str:
    """The reference solution of one exercise: its definition in tutorials/solutions/lectureNN.py, with the
    module's own definitions it uses (a helper class, an earlier exercise's function), those first."""
    source = (Path(tutorials.solutions.__file__).parent / f"{answer_file(exercise)}.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    definitions = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            definitions[node.name] = node
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):  # a constant such as 7.1's MATCH
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                if isinstance(target, ast.Name):
                    definitions[target.id] = node
    wanted, order = [exercise.name], []
    while wanted:  # the definition, then every module-level definition it names, depth first
        name = wanted.pop()
        if name in definitions and definitions[name] not in order:
            order.append(definitions[name])
            wanted += [n.id for n in ast.walk(definitions[name]) if isinstance(n, ast.Name)]
    order.sort(key=lambda node: node.lineno)  # in the file's order: helpers before their users
    lines = source.splitlines()
    first = [min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]) for node in order]
    return "\n\n".join("\n".join(lines[start - 1:node.end_lineno]) for start, node in zip(first, order))


def recorded_final(exercise: Exercise) -> dict[str, str] | None:
    """The learner's first yardstick score of this exercise, or None: as the first `--final` recorded it in the
    progress file, or else as the yardstick's log has it (the progress file deleted, or a score from Python)."""
    recorded = load_state()["finals"].get(exercise.number)
    if recorded is not None:
        return recorded
    theirs = [e for e in scorings(exercise.number) if e.get("whose") == "你的答案"]
    return None if not theirs else {k: str(theirs[0].get(k, "")) for k in ("status", "message", "when")}


def record_final(exercise: Exercise, result: Result) -> None:
    state = load_state()
    state["finals"][exercise.number] = {"status": result.status, "message": result.message, "when": now()}
    save_state(state)
