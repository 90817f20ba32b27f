"""The checkers, one module per lecture, each with a list `EXERCISES` in the order the learner meets them.

Read next: lecture00.py.
"""

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
)

LECTURES = {f"{n:02d}": module.EXERCISES for n, module in enumerate(
    [lecture00, lecture01, lecture02, lecture03, lecture04, lecture05, lecture06, lecture07, lecture08])}
