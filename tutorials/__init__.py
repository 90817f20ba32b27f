"""The course: eight lectures (`00_autograd.py` ... `07_summary.py`), each a script and a notebook.

Also a package, so that every lecture can share one set-up module (`course.py`) and the learner can check
their exercises from anywhere (`python -m tutorials.exercises check 03`). The lectures themselves are not
modules to import (their names start with a digit): run them, or open them as notebooks.

Read next: README.md (how to run the lectures), then course.py.
"""
