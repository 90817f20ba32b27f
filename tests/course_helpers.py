"""The reference solutions as the tests' own code, for the wrong answers the course's tests write.

The grader refuses the reference solution's code to an answer (tutorials/exercises/origin.py, refusal.py): an
answer that calls the reference is not the learner's. The tests' wrong answers are a learner's answers with one
mistake, built on correct helpers, as a learner builds on their own; `own_copy` gives them those helpers: the same
source, compiled one line lower under a test's file name, so that its code is the tests' and not the reference's.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import SimpleNamespace


def own_copy(lecture: str) -> SimpleNamespace:
    """Lecture `lecture`'s reference solutions ('03'), or the reference engine ('engine'), as code of the tests' own."""
    stem = lecture if lecture == "engine" else f"lecture{lecture}"
    path = Path(importlib.import_module(f"tutorials.solutions.{stem}").__file__)
    namespace: dict = {"__name__": f"tests.copy_of_{stem}"}
    exec(compile("\n" + path.read_text(encoding="utf-8"), f"{__file__}:copy_of_{stem}", "exec"),  # noqa: S102
         namespace)
    return SimpleNamespace(**{k: v for k, v in namespace.items() if not k.startswith("__")})
