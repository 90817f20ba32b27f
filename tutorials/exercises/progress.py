"""What the course remembers about a learner, in two plain files (JSON, never pickle):

- the progress file, $MINIGRAD_COURSE_STATE or ~/.cache/minigrad-course/progress.json: the hints seen, the
  solutions revealed, the final scores recorded (`load_state`, `save_state`);
- the yardstick's log, $MINIGRAD_COURSE_LOG or ~/.local/share/minigrad-course/yardstick.jsonl (under
  $XDG_DATA_HOME when it is set): one line appended for every scoring of an open task on the yardstick, whatever
  route asked for it (`check --final`, or `grade_final` called from Python), with its running count. It is kept
  apart from the progress file, which sits in a cache folder: deleting that file does not make a used yardstick
  new again (`recorded_final` reads both).

A file that is not what the course wrote (a folder, a device, broken JSON, JSON of another shape, a full disk) is
reported in one line that names it, as a `StateError`. Read next: coaching.py.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from minigrad.tools.files import write_file

STATE_VARIABLE = "MINIGRAD_COURSE_STATE"
LOG_VARIABLE = "MINIGRAD_COURSE_LOG"
MAX_BYTES = 1 << 20  # far more than the course ever writes; a device or a stray huge file is not read whole


class StateError(ValueError):
    """A progress file or log the course cannot use; the message names the file and what to do."""


def state_path() -> Path:
    """The progress file: $MINIGRAD_COURSE_STATE, or ~/.cache/minigrad-course/progress.json."""
    chosen = os.environ.get(STATE_VARIABLE)
    return Path(chosen) if chosen else Path.home() / ".cache" / "minigrad-course" / "progress.json"


def log_path() -> Path:
    """The yardstick's log: $MINIGRAD_COURSE_LOG, or minigrad-course/yardstick.jsonl in the user's data folder."""
    chosen = os.environ.get(LOG_VARIABLE)
    if chosen:
        return Path(chosen)
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "minigrad-course" / "yardstick.jsonl"


def _named(path: Path, variable: str) -> str:
    """How a message names a course file: which of the two it is, and where."""
    return f"{'进度文件' if variable == STATE_VARIABLE else '尺子的记录'} {path}"


def _read(path: Path, variable: str) -> str | None:
    """The text of a course file, None if there is none; StateError for anything that is not a readable file."""
    if not path.exists():
        return None
    fix = f"删掉它，或把环境变量 {variable} 指向另一个文件"
    if not path.is_file():  # a folder, a FIFO (reading one would wait forever), /dev/zero (would never end)
        raise StateError(f"{_named(path, variable)} 不是一个普通文件（是文件夹、管道或设备？），"
                         f"课程没法把记录写在那里：把环境变量 {variable} 指向一个普通文件的路径")
    try:
        with path.open("rb") as file:
            data = file.read(MAX_BYTES + 1)
    except OSError as error:
        raise StateError(f"{_named(path, variable)} 读不出来（{error.strerror}）：{fix}") from None
    if len(data) > MAX_BYTES:
        raise StateError(f"{_named(path, variable)} 大得不像课程写的记录（超过 {MAX_BYTES // 2**20} MiB）：{fix}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise StateError(f"{_named(path, variable)} 不是 UTF-8 文本，不是课程写的记录：{fix}") from None


def _write(path: Path, text: str, variable: str, append: bool = False) -> None:
    if path.is_symlink() or (path.exists() and not path.is_file()):
        raise StateError(f"{_named(path, variable)} 不是一个普通文件（是链接、文件夹或设备？），"
                         f"课程没法把记录写在那里：把环境变量 {variable} 指向一个普通文件的路径")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if append:
            with path.open("a", encoding="utf-8") as file:
                file.write(text)
        else:
            write_file(path, text)  # a new file renamed over the name: never through a link
    except OSError as error:
        raise StateError(f"记录写不进 {path}（{error.strerror}）：换一个地方，设置环境变量 {variable}") from None


def load_state() -> dict[str, Any]:
    """What has been handed out so far: {"hints": {"3.3": 2}, "revealed": [...], "finals": {"1.6": {...}}}."""
    path = state_path()
    text = _read(path, STATE_VARIABLE)
    if text is None:
        return {"hints": {}, "revealed": [], "finals": {}}
    try:
        state = json.loads(text)
    except json.JSONDecodeError as error:
        raise StateError(f"进度文件 {path} 不是有效的 JSON（第 {error.lineno} 行第 {error.colno} 列）：修好它，或删掉它"
                         "（删掉会忘记看过几条提示；尺子的记录另有一份，不会丢）") from None
    except RecursionError:  # brackets nested past Python's limit: no record the course wrote looks like that
        raise StateError(f"进度文件 {path} 嵌套得太深，不是课程写的进度记录：删掉它，或把环境变量 {STATE_VARIABLE} "
                         "指向另一个文件") from None
    problem = _shape_problem(state)
    if problem:
        raise StateError(f"进度文件 {path} 不是课程写的进度记录（{problem}）：删掉它，或把环境变量 {STATE_VARIABLE} "
                         "指向另一个文件")
    return {"hints": state.get("hints", {}), "revealed": state.get("revealed", []), "finals": state.get("finals", {})}


def _shape_problem(state: Any) -> str | None:
    """What is wrong with the shape of a progress record, or None."""
    if not isinstance(state, dict):
        return f"应是一个 JSON 对象，这里是 {type(state).__name__}"
    hints, revealed, finals = state.get("hints", {}), state.get("revealed", []), state.get("finals", {})
    if not (isinstance(hints, dict) and all(isinstance(k, str) and type(v) is int for k, v in hints.items())):
        return "hints 应是 {题号: 看过的条数}"
    if not (isinstance(revealed, list) and all(isinstance(n, str) for n in revealed)):
        return "revealed 应是题号的列表"
    if not (isinstance(finals, dict) and all(isinstance(v, dict) and {"status", "message", "when"} <= set(v)
                                             for v in finals.values())):
        return "finals 应是 {题号: {status, message, when}}"
    return None


def save_state(state: dict[str, Any]) -> None:
    _write(state_path(), json.dumps(state, ensure_ascii=False, indent=1), STATE_VARIABLE)


def now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


# --------------------------------------------------------------------------------------------------
# The yardstick's log


def scorings(number: str | None = None) -> list[dict[str, Any]]:
    """Every logged scoring on the yardstick (of one exercise, when `number` is given), oldest first."""
    path = log_path()
    text = _read(path, LOG_VARIABLE)
    entries = []
    for k, line in enumerate((text or "").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except (json.JSONDecodeError, RecursionError):
            raise StateError(f"尺子的记录 {path} 的第 {k} 行不是有效的 JSON：这份记录只许追加，别改它") from None
        if not (isinstance(entry, dict) and isinstance(entry.get("exercise"), str)):
            raise StateError(f"尺子的记录 {path} 的第 {k} 行不是课程写的尺子记录：这份记录只许追加，别改它")
        entries.append(entry)
    return [e for e in entries if number is None or e["exercise"] == number]


def log_scoring(number: str, status: str, message: str, whose: str, route: str) -> int:
    """Append one scoring on the yardstick to the log; returns how many times this exercise has been scored."""
    count = len(scorings(number)) + 1
    entry = {"exercise": number, "count": count, "when": now(), "whose": whose, "route": route, "status": status,
             "message": message}
    _write(log_path(), json.dumps(entry, ensure_ascii=False) + "\n", LOG_VARIABLE, append=True)
    return count
