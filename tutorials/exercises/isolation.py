"""Grading in a child process: no answer can stop, hang or kill the checker.

`check` (the command line and the notebook function) reads the answer file and grades its exercises in a child
process, forked from the checker, which sends each verdict back as soon as it has one (a line of JSON on a pipe).
The checker waits for each exercise at most its time limit, so that

- an answer that never returns (an endless loop, a tiny learning rate for a billion steps) is stopped and reported
  as too slow, and the exercises after it are graded in a fresh child;
- an answer that calls `sys.exit` (a failure of that answer, grading.py) or `os._exit`, or crashes the interpreter,
  ends the child, not the checker: the exercise being graded is reported with the child's exit status;
- an answer file that runs forever or exits while it is imported is reported in one line, as one that does not
  import;
- Ctrl-C stops the child, and the command line says so in one line (__main__.py).

Where `fork` is not available (Windows), grading runs in the checker's own process, as `grade` does.
Read next: __main__.py.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import sys
import time
from collections.abc import Callable
from typing import Any

from tutorials.exercises.grading import Exercise, Result, forbidden_code

TIMEOUT_VARIABLE = "MINIGRAD_CHECK_SECONDS"  # overrides every limit below, in seconds
DEFAULT_SECONDS = 120.0  # the checkers take under a second on the reference; ten minutes for the open tasks' models
SECONDS = {"1.6": 600.0, "3.6": 600.0, "4.5": 600.0, "5.7": 600.0, "6.7": 900.0, "7.6": 900.0}
IMPORT_SECONDS = 120.0  # reading the answer file
PREPARE_SECONDS = 600.0  # the checker's own preparation of an exercise (refusal.py finds what to refuse): not timed


class AnswerFileError(Exception):
    """The answer file could not be read: it raised, ran past the time limit, or ended the process."""


def seconds_for(exercise: Exercise | None) -> float:
    """How long the checker waits for one exercise (or for the answer file, None) before stopping it."""
    chosen = os.environ.get(TIMEOUT_VARIABLE)
    if chosen:
        try:
            return float(chosen)
        except ValueError:
            raise ValueError(f"环境变量 {TIMEOUT_VARIABLE} 应是秒数，你的是 {chosen!r}") from None
    return IMPORT_SECONDS if exercise is None else SECONDS.get(exercise.number, DEFAULT_SECONDS)


def can_fork() -> bool:
    return "fork" in multiprocessing.get_all_start_methods()


def grade_in_child(exercises: list[Exercise], load: Callable[[], Any],
                   grade_one: Callable[[Any, Exercise], Result]) -> list[Result]:
    """Each exercise graded by `grade_one(answers, exercise)` in a child process, where `answers = load()` (the
    answer module, read afresh). AnswerFileError when the answers cannot be read at all."""
    if not can_fork():
        answers = _load_here(load)
        return [grade_one(answers, exercise) for exercise in exercises]
    results: list[Result] = []
    while len(results) < len(exercises):
        results += _one_child(exercises[len(results):], load, grade_one)
    return results


def _load_here(load: Callable[[], Any]) -> Any:
    try:
        return load()
    except (Exception, SystemExit) as error:  # a half-edited file fails in any way at all when it is imported
        raise AnswerFileError(f"{type(error).__name__}: {error}") from error


def _one_child(exercises: list[Exercise], load: Callable[[], Any],
               grade_one: Callable[[Any, Exercise], Result]) -> list[Result]:
    """Grade `exercises` in one child until it ends: every result it sent, and one for the exercise it ended on."""
    sys.stdout.flush()  # a buffer copied into the child would be written twice
    sys.stderr.flush()
    receive, send = multiprocessing.get_context("fork").Pipe(duplex=False)
    child = multiprocessing.get_context("fork").Process(target=_child, args=(send, exercises, load, grade_one),
                                                        daemon=True)
    child.start()
    send.close()
    results: list[Result] = []
    current: Exercise | None = None  # the exercise being graded; None while reading the file, or between two
    loaded = preparing = False
    try:
        while True:
            limit = PREPARE_SECONDS if preparing else seconds_for(current)
            if not receive.poll(limit):
                if not loaded:
                    raise AnswerFileError(f"读入答案文件超过了 {limit:g} 秒：文件顶层有死循环，或者很慢的代码？")
                return results + ([_too_slow(current, limit)] if current is not None else [])
            try:
                message = json.loads(receive.recv_bytes().decode("utf-8"))
            except EOFError:  # the child ended: after the last result, or in the middle of an exercise
                child.join(5)
                if not loaded:
                    raise AnswerFileError(f"读入答案文件时进程退出了（退出码 {child.exitcode}：文件顶层调用了 "
                                          "sys.exit 或 os._exit？）") from None
                if current is None:
                    return results
                return results + [Result(current, "error", f"答案让检查进程退出了（退出码 {child.exitcode}："
                                                           "os._exit、sys.exit，或者解释器出了错）：这一题算没通过")]
            kind = message[0]
            if kind == "import-error":
                raise AnswerFileError(message[1])
            preparing = kind == "prepare"
            loaded = loaded or preparing
            if kind == "start":
                current = next(e for e in exercises if e.number == message[1])
            elif kind == "result":
                results.append(Result(current, message[2], message[3]))
                current = None
    finally:
        if child.is_alive():
            child.kill()
        child.join(5)
        receive.close()


def _too_slow(exercise: Exercise, limit: float) -> Result:
    return Result(exercise, "error", f"超时：{limit:g} 秒内没有算完，检查器停下了它（死循环？参考答案不到一秒）；"
                                     f"这一题算没通过")


def _child(send: Any, exercises: list[Exercise], load: Callable[[], Any],
           grade_one: Callable[[Any, Exercise], Result]) -> None:
    """The child: read the answers, grade each exercise, send each verdict; never returns to the caller's code."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the checker's to handle: it stops this process
    for name in ("stdout", "stderr"):  # a notebook's streams are sockets of the kernel's: write to the real ones
        if not hasattr(getattr(sys, name), "fileno") or _no_fileno(getattr(sys, name)):
            setattr(sys, name, getattr(sys, f"__{name}__") or open(os.devnull, "w"))

    def put(*message: Any) -> None:
        send.send_bytes(json.dumps(message, ensure_ascii=False).encode("utf-8"))

    code = 0
    try:
        try:
            answers = _load_here(load)
        except AnswerFileError as error:
            put("import-error", str(error))
            return
        for exercise in exercises:
            put("prepare", exercise.number)
            forbidden_code(exercise)  # the checker's own work, cached: the answer's time starts after it
            put("start", exercise.number)
            started = time.perf_counter()
            result = grade_one(answers, exercise)
            put("result", exercise.number, result.status, result.message, time.perf_counter() - started)
    except BaseException:  # noqa: BLE001 (the checker reports the exercise it was on)
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # no cleanup of the parent's: its atexit handlers, buffers and threads are not the child's


def _no_fileno(stream: Any) -> bool:
    try:
        stream.fileno()
        return False
    except (OSError, ValueError, AttributeError):
        return True
