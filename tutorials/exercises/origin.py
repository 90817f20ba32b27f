"""Whose code is running: the libraries', the checker's, the reference solution's, or an answer's.

The grader refuses library code and the reference solution to an answer (refusal.py), so it must tell them apart
by what the code is, not by what it claims to be:

- **A file name is not proof.** Code compiled under a library file's name (`compile(src, F.__file__, "exec")`)
  would pass for the library. A frame counts as library code only when its code object is one that the library's
  own source compiles to (compared by value: name, bytecode, constants, line numbers; not the file name).
- **The reference solution, however it arrives.** Imported, or `exec`ed from tutorials/solutions/ under any name,
  its functions are the reference's code (again by value), and opening a file of tutorials/solutions/ while an
  answer file is read or graded is seen by an audit hook (`watch_the_solutions`).
- **The reference graded on purpose.** `check --solutions`, the tests and the mutants (mutants.py, compiled under
  `<mutant of ...>`) grade the reference or its edits; such an answer may use the reference's helpers.

Read next: refusal.py, which refuses what is found here.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import CodeType, FunctionType
from typing import Any

LIBRARIES = ("minigrad", "minigpt", "tutorials")
_HERE = Path(__file__).resolve().parent
_TUTORIALS = _HERE.parent
SOLUTIONS = _TUTORIALS / "solutions"
CHECKER_FILES = {_HERE / "grading.py"}  # with everything in checks/: the frames whose calls are the checker's
GRADER_FILES = {"refusal.py", "origin.py", "mutants.py", "engine_mutants.py", "isolation.py", "__init__.py",
                "__main__.py", "hints.py"}
MUTANT_PREFIX = "<mutant of "  # the file name mutants.py compiles a mutated reference under


@functools.cache
def file_kind(filename: str) -> str:
    """'library' (minigrad, minigpt, tutorials), 'external' (the standard library, NumPy, this grader's machinery),
    'checker' (checks/, grading.py) or 'answer' (the learner's files, the solutions, a notebook cell, a test...),
    as the file name says."""
    if filename.startswith("<frozen"):
        return "external"  # the import machinery
    if filename.startswith("<"):
        return "answer"  # a notebook cell, exec'd code
    path = Path(filename).resolve()
    if path.parent == _HERE / "checks" or path in CHECKER_FILES:
        return "checker"
    if path.parent == _HERE and path.name in GRADER_FILES:
        return "external"  # the grader's machinery: passed through, never refused
    if (path.parent == _HERE and path.name.startswith(("lecture", "shortcuts", "engine"))) \
            or SOLUTIONS in path.parents or (path.parent == _TUTORIALS and path.name[:1].isdigit()):
        return "answer"  # the learner's files (engine.py too), the shortcut answers, the solutions, a lecture
    roots = [Path(sys.modules[name].__file__).resolve().parent for name in LIBRARIES if name in sys.modules]
    if any(root in path.parents for root in roots):
        return "library"
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    if "site-packages" in path.parts or any(prefix in path.parents for prefix in prefixes):
        return "external"
    return "answer"


def _all_code(code: CodeType) -> Iterator[CodeType]:
    """A code object and every code object nested in it (functions, lambdas, comprehensions, class bodies)."""
    yield code
    for constant in code.co_consts:
        if isinstance(constant, CodeType):
            yield from _all_code(constant)


@functools.cache
def compiled(filename: str) -> frozenset[CodeType]:
    """Every code object the source file compiles to (empty if it cannot be read): the genuine code of that file."""
    try:
        source = Path(filename).read_text(encoding="utf-8")
        return frozenset(_all_code(compile(source, filename, "exec", dont_inherit=True)))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return frozenset()


_KINDS: dict[int, tuple[CodeType, str]] = {}  # id(code) -> (code, kind); the code is kept so that ids stay unique


def code_kind(code: CodeType) -> str:
    """`file_kind` of the code's file, except that code posing as the library's under its file name is an answer."""
    entry = _KINDS.get(id(code))
    if entry is None:
        kind = file_kind(code.co_filename)
        if kind == "library" and code not in compiled(code.co_filename):
            kind = "answer"  # compiled under a library file's name, but not from its source
        entry = _KINDS[id(code)] = (code, kind)
    return entry[1]


def answer_is_calling(frame: Any) -> bool:
    """Whether, past the library's frames, the first caller of `frame` is an answer (not the checker)."""
    while frame is not None:
        kind = code_kind(frame.f_code)
        if kind in ("checker", "answer"):
            return kind == "answer"
        frame = frame.f_back
    return False


# --------------------------------------------------------------------------------------------------
# The reference solution


@functools.cache
def solution_code() -> frozenset[CodeType]:
    """Every code object of tutorials/solutions/*.py, compared by value: an exec'd copy of a file is found too."""
    return frozenset().union(*(compiled(str(path)) for path in sorted(SOLUTIONS.glob("*.py"))))


_SOLUTION: dict[int, tuple[CodeType, bool]] = {}


def is_solution(code: CodeType) -> bool:
    """Whether `code` is the reference solution's: compiled from tutorials/solutions/, by any name."""
    entry = _SOLUTION.get(id(code))
    if entry is None:
        entry = _SOLUTION[id(code)] = (code, code in solution_code() or _in_solutions(code.co_filename))
    return entry[1]


@functools.cache
def _in_solutions(filename: str) -> bool:
    return not filename.startswith("<") and SOLUTIONS in Path(filename).resolve().parents


def codes_of(answer: Any) -> list[CodeType]:
    """The code objects an answer runs: a function's, or the methods' of a class; none for a value."""
    if isinstance(answer, functools.partial):
        answer = answer.func
    if isinstance(answer, FunctionType):
        return [answer.__code__]
    if isinstance(answer, type):
        methods = [getattr(v, "__func__", getattr(v, "fget", v)) for c in answer.__mro__ for v in vars(c).values()]
        return [m.__code__ for m in methods if isinstance(m, FunctionType)]
    return []


def is_reference(answer: Any) -> bool:
    """Whether an answer is the reference solution itself, or a mutant of it (mutants.py): the grader may run the
    reference's helpers for it. A learner's answer that *is* the reference is refused where it is read
    (`__init__.py`), so this never excuses one."""
    codes = [c for c in codes_of(answer) if file_kind(c.co_filename) == "answer"]
    return bool(codes) and all(is_solution(c) or c.co_filename.startswith(MUTANT_PREFIX) for c in codes)


def copied_reference(answer: Any, reference: Any) -> bool:
    """Whether a learner's answer is the reference solution (imported, assigned, or exec'd from its file)."""
    if answer is reference:
        return True
    codes = [c for c in codes_of(answer) if file_kind(c.co_filename) == "answer"]
    return bool(codes) and any(is_solution(c) for c in codes)


# --------------------------------------------------------------------------------------------------
# Reading the solutions' files


_READS: list[list[str]] = []  # one list per open watch: the files of tutorials/solutions/ an answer opened
_HOOKED = False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if not _READS or event != "open" or not args or not isinstance(args[0], (str, bytes, Path)):
        return
    path = args[0].decode() if isinstance(args[0], bytes) else str(args[0])
    if "solutions" not in path or not _in_solutions(path):
        return
    if answer_is_calling(sys._getframe(1)):
        _READS[-1].append(Path(path).name)


@contextmanager
def watch_the_solutions() -> Iterator[list[str]]:
    """While the block runs, every file of tutorials/solutions/ that an answer opens (to import it, exec it or read
    it) is listed in the list yielded. An audit hook, added once per process, does the watching (hooks cannot be
    removed: outside a block it returns at once)."""
    global _HOOKED
    if not _HOOKED:
        sys.addaudithook(_audit)
        _HOOKED = True
    _READS.append([])
    try:
        yield _READS[-1]
    finally:
        _READS.pop()
