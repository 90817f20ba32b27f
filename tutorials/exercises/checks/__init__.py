"""The checkers, one module per lecture, each with a list `EXERCISES` in the order the learner meets them.

Each exercise is given its shortcut answers here (../shortcuts.py), from which the grader finds the library code it
refuses while that exercise is graded. Read next: lecture00.py.
"""

import dataclasses

from tutorials.exercises.checks import (
    lecture00,
    lecture01,
    lecture02,
    lecture03,
    lecture04,
    lecture05,
    lecture06,
    lecture07,
    lecture08,
    lecture09,
)
from tutorials.exercises.shortcuts import SHORTCUTS  # noqa: E402 (after the checkers it needs)

LECTURES = {f"{n:02d}": [dataclasses.replace(e, shortcuts=SHORTCUTS.get(e.number, ())) for e in module.EXERCISES]
            for n, module in enumerate(
                [lecture00, lecture01, lecture02, lecture03, lecture04, lecture05, lecture06, lecture07, lecture08,
                 lecture09])}
