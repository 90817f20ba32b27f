"""Reference solutions to the exercises, one module per lecture, mirroring tutorials/exercises/lectureNN.py.

Try the exercises first. `python -m tutorials.exercises check --solutions` grades these, and the tests hold
every checker to them. Read next: lecture00.py.
"""
