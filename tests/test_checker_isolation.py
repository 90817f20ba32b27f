"""No answer stops, hangs or kills the checker (tutorials/exercises/isolation.py).

`check` grades in a child process with a time limit: an answer's `sys.exit` or `os._exit` is that answer's failure
(never the exit status 0 that means "everything passed"), an endless loop is stopped and reported, the exercises
after it are still graded, an answer file that exits or loops while it is read is one line, and Ctrl-C ends the
check with one Chinese line. The answers are real files, in tmp_path, read as the learner's are.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest

import tutorials.exercises as exercises
from tutorials.exercises import isolation, print_reports
from tutorials.exercises.__main__ import INTERRUPTED, main

pytestmark = pytest.mark.skipif(not isolation.can_fork(), reason="the child process is forked")

def learner_file(tmp_path: Path, monkeypatch, source: str, lecture: str = "03") -> Path:
    """Write `source` as the learner's answer file of `lecture` and make `check` read it from there."""
    path = tmp_path / f"lecture{lecture}.py"
    path.write_text("import sys, os\nimport numpy as np\nimport minigrad as mg\n" + source, encoding="utf-8")

    def read(lecture_read: str, solutions: bool = False, file: str = ""):
        spec = importlib.util.spec_from_file_location(f"learner_lecture{lecture_read}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    monkeypatch.setattr(exercises, "answers", read)
    return path


def line_of(out: str, number: str) -> str:
    return next(line for line in out.splitlines() if line.strip().startswith(("✓", "✗", "·")) and f" {number} " in line)


def test_sys_exit_in_an_answer_is_that_answers_failure(tmp_path, monkeypatch, capsys):
    learner_file(tmp_path, monkeypatch, "def softmax(x):\n    sys.exit(0)\n")
    assert main(["check", "3.1"]) == 1
    line = line_of(capsys.readouterr().out, "3.1")
    assert line.lstrip().startswith("✗") and "sys.exit(0)" in line


def test_os_exit_in_an_answer_ends_the_child_not_the_checker(tmp_path, monkeypatch, capsys):
    learner_file(tmp_path, monkeypatch, "def softmax(x):\n    os._exit(0)\n"
                 "def attention(q, k, v):\n    raise NotImplementedError\n")
    assert not print_reports("03")
    out = capsys.readouterr().out
    assert "退出码 0" in line_of(out, "3.1") and line_of(out, "3.1").lstrip().startswith("✗")
    assert "还没写" in line_of(out, "3.2")  # the exercises after it are graded in a fresh child
    assert "0/6 通过" in out


def test_an_endless_loop_is_stopped_and_the_next_exercise_graded(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv(isolation.TIMEOUT_VARIABLE, "3")
    learner_file(tmp_path, monkeypatch, "def softmax(x):\n    while True:\n        pass\n"
                 "def score_std(d_k, scaled):\n    return 1.0 if scaled else float(d_k) ** 0.5\n")
    started = time.perf_counter()
    assert not print_reports("03")
    out = capsys.readouterr().out
    assert "超时：3 秒内没有算完" in line_of(out, "3.1")
    assert line_of(out, "3.4").lstrip().startswith("✓")
    assert time.perf_counter() - started < 120


@pytest.mark.parametrize(("top", "said"), [("sys.exit(0)", "SystemExit"), ("os._exit(3)", "退出码 3"),
                                           ("while True:\n    pass", "超过了 3 秒")])
def test_an_answer_file_that_exits_or_loops_as_it_is_read_is_one_line(tmp_path, monkeypatch, capsys, top, said):
    monkeypatch.setenv(isolation.TIMEOUT_VARIABLE, "3")
    learner_file(tmp_path, monkeypatch, top + "\n")
    assert main(["check", "03"]) == 1
    out = capsys.readouterr().out.strip()
    assert out.startswith("第 03 讲练习：答案文件") and "导入出错" in out and said in out and "\n" not in out, out


def test_an_answers_output_still_reaches_the_learner(tmp_path, monkeypatch, capfd):
    learner_file(tmp_path, monkeypatch, "def softmax(x):\n    print('我在算 softmax', flush=True)\n"
                 "    raise NotImplementedError\n")
    print_reports("3.1")
    assert "我在算 softmax" in capfd.readouterr().out


def test_ctrl_c_ends_the_check_with_one_chinese_line(tmp_path, monkeypatch, capsys):
    learner_file(tmp_path, monkeypatch, "def softmax(x):\n    while True:\n        pass\n")
    children_before = set(_children())
    timer = threading.Timer(8.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        assert main(["check", "3.1"]) == 130
    finally:
        timer.cancel()
    captured = capsys.readouterr()
    assert captured.err.strip() == INTERRUPTED and "Traceback" not in captured.err
    time.sleep(0.5)
    assert set(_children()) <= children_before  # the child grading the loop was stopped


def _children() -> list[int]:
    """The ids of this process's children (Linux), to see that none is left running."""
    task = Path(f"/proc/{os.getpid()}/task")
    if not task.exists():
        pytest.skip("no /proc")
    found = []
    for thread in task.iterdir():
        children = thread / "children"
        if children.exists():
            found += [int(pid) for pid in children.read_text().split()]
    return found


def test_a_notebooks_answer_is_graded_in_a_child_too(capsys):
    def exits(x):
        sys.exit(0)

    assert not print_reports("3.1", exits)
    assert "sys.exit(0)" in capsys.readouterr().out
