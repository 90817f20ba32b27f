"""The loss ladder's records: each lecture writes down its models' yardstick scores; lecture 07 reads them back.

A lecture that trains a rung of the ladder (01: the counting models, 02: the RNN and the GRU, 03: attention
alone) scores it with yardstick.py and calls `record`. The rungs go beside the lecture's figures, in the current
directory:

    figures/ladder/02.json   each rung's name, size, training time and score, the mode and the windows' hash
    figures/ladder/02.npz    every scored character's loss, one array per rung (no pickle)

so that lecture 07 can put every model on one picture and compare any two of them window by window.
`recorded` reads a lecture's rungs back, or gives None when they are missing, were measured in the other mode
(quick or full) or on other windows. `ensure` then runs that lecture as a script, in this mode, to make them:
a learner who opens lecture 07 alone still gets the whole ladder, from the very code of the earlier lectures.
Read next: 07_summary.py, which draws the ladder.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from minigrad.tools.files import write_file
from tutorials.course import FIGURES, QUICK
from tutorials.yardstick import Score, Yardstick

RECORDS = FIGURES / "ladder"
LECTURES = Path(__file__).resolve().parent  # where NN_*.py live


@dataclass
class Rung:
    """One model on the ladder: what it is, how big, how long it trained, and its score on the yardstick."""

    key: str  # a short identifier: "bigram", "rnn", ...
    name: str  # the label on the ladder (Chinese)
    lecture: str  # "01" ... "07"
    size: int  # parameters (a network) or table entries (a counting model)
    size_kind: str  # "parameters" or "counts"
    train_seconds: float  # wall time of its training (or counting), as measured on the machine that ran it
    score: Score
    extra: dict[str, Any] = field(default_factory=dict)  # what lecture 07 shows besides: a sample, a training score


def record(lecture: str, rungs: list[Rung], yardstick: Yardstick) -> Path:
    """Write `rungs` as lecture `lecture`'s records (replacing earlier ones); returns the JSON file's path."""
    RECORDS.mkdir(parents=True, exist_ok=True)
    meta = {"lecture": lecture, "quick": QUICK, "yardstick": yardstick.fingerprint,
            "rungs": [{"key": r.key, "name": r.name, "lecture": r.lecture, "size": int(r.size),
                       "size_kind": r.size_kind, "train_seconds": round(float(r.train_seconds), 2),
                       "nats": r.score.nats, "stderr": r.score.stderr, "extra": r.extra} for r in rungs]}
    arrays = io.BytesIO()
    np.savez(arrays, **{r.key: r.score.losses for r in rungs})
    write_file(RECORDS / f"{lecture}.npz", arrays.getvalue())
    return write_file(RECORDS / f"{lecture}.json", json.dumps(meta, ensure_ascii=False, indent=1) + "\n")


def recorded(lecture: str, yardstick: Yardstick) -> list[Rung] | None:
    """Lecture `lecture`'s rungs, if it recorded them in this mode and on these windows; otherwise None."""
    path, arrays = RECORDS / f"{lecture}.json", RECORDS / f"{lecture}.npz"
    if not (path.exists() and arrays.exists()):
        return None
    meta = json.loads(path.read_text(encoding="utf-8"))
    if meta["quick"] != QUICK or meta["yardstick"] != yardstick.fingerprint:
        return None
    with np.load(arrays, allow_pickle=False) as losses:
        return [Rung(r["key"], r["name"], r["lecture"], r["size"], r["size_kind"], r["train_seconds"],
                     Score(losses[r["key"]]), r["extra"]) for r in meta["rungs"]]


def ensure(lecture: str, yardstick: Yardstick) -> list[Rung]:
    """Lecture `lecture`'s rungs: read back, or (when missing or stale) made by running that lecture first."""
    rungs = recorded(lecture, yardstick)
    if rungs is not None:
        return rungs
    script = next(LECTURES.glob(f"{lecture}_*.py"))
    mode = "快速版" if QUICK else "完整版"
    print(f"还没有第 {lecture} 讲（{mode}）的记录：现在运行 {script.name}（{mode}）来生成它……", flush=True)
    env = {**os.environ, "MPLBACKEND": "Agg"}
    if QUICK:
        env["TUTORIAL_QUICK"] = "1"
    else:
        env.pop("TUTORIAL_QUICK", None)
    start = time.time()
    run = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"为了补上第 {lecture} 讲的记录运行了 {script.name}，它出错退出了"
                           f"（退出码 {run.returncode}）；单独运行它看看：python tutorials/{script.name}。"
                           f"它最后的输出：\n{run.stderr[-3000:]}")
    print(f"  {script.name} 运行完毕，用时 {time.time() - start:.0f} 秒", flush=True)
    rungs = recorded(lecture, yardstick)
    if rungs is None:
        raise RuntimeError(f"{script.name} 运行完了，{RECORDS} 里却没有它（{mode}）的记录：是不是在另一个目录下运行的？"
                           "各讲把记录写在当前目录的 figures/ladder/ 里")
    return rungs
