"""The learner's engine may use NumPy and Python's standard library, and nothing else.

Lecture 00's engine exercises (tutorials/exercises/engine.py) are the one place in the course where minigrad
itself is off limits: an op whose backward asks minigrad, PyTorch, JAX or any autograd library for the gradient
has not been written. While one of them is graded, `only_numpy` watches every call made on the answer's behalf
(a profile hook, as refusal.py's `reached` does) and records each call into code that is neither NumPy, the
standard library, nor the answer's own: minigrad, minigpt, torch, jax, autograd... however it was imported
(`import`, `importlib`, `__import__`, a name taken before grading began). The answer then fails with the same
verdict as every refused shortcut (grading.Shortcut), even if it caught an error on the way.
An answer file that imports such a library at all is refused before it runs.
Read next: engine.py, the checkers that use it.
"""

from __future__ import annotations

import functools
import gc
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

from tutorials.exercises import origin, refusal
from tutorials.exercises.grading import Shortcut

ALLOWED = {"numpy", "builtins"} | set(sys.stdlib_module_names)


def message(number: str, name: str) -> str:
    return f"练习 {number} 要求你自己写出这一步，不能调用 {name}（你的引擎只许用 NumPy 和 Python 自带的模块）"


@functools.cache
def _package_of_file(filename: str) -> str | None:
    """The top-level package a frame's file belongs to when it is foreign to the engine, else None."""
    kind = origin.file_kind(filename)
    if kind == "library":  # minigrad, minigpt, tutorials' own modules
        path = Path(filename).resolve()
        return next((p for p in origin.LIBRARIES if f"/{p}/" in path.as_posix()), "minigrad")
    if kind != "external" or filename.startswith("<"):
        return None
    path = Path(filename).resolve()
    if "site-packages" in path.parts:
        top = path.parts[path.parts.index("site-packages") + 1].split(".")[0]
        return None if top in ALLOWED or top.startswith("_") and top[1:] in ALLOWED else top
    return None  # the standard library, the import machinery, the grader


def _package_of_builtin(function: Any) -> str | None:
    """The top-level package of a C function about to be called, when it is foreign to the engine."""
    module = getattr(function, "__module__", None)
    if module is None and getattr(function, "__self__", None) is not None:
        owner = function.__self__
        module = owner.__name__ if isinstance(owner, ModuleType) else type(owner).__module__
    top = (module or "builtins").split(".")[0]
    return None if top in ALLOWED or top.lstrip("_") in ALLOWED else top


def _shown(frame: Any, package: str) -> str:
    name = frame.f_code.co_name
    return f"{package} 的 {name}" if name not in ("<module>", "<lambda>") else package


@contextmanager
def watching() -> Iterator[list[str]]:
    """While the block runs, record (and let run) each call into foreign code made on the answer's behalf."""
    reached: list[str] = []
    previous = sys.getprofile()
    # the garbage collector's callbacks (hypothesis registers one) run inside whatever frame allocated: not the answer's
    collector = {callback.__code__ for callback in gc.callbacks if hasattr(callback, "__code__")}

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and frame.f_code not in collector:
            package = _package_of_file(frame.f_code.co_filename)
            # the import system asking a finder, or running a module's top level, is not a call the answer made
            importing = frame.f_back is not None and frame.f_back.f_code.co_filename.startswith("<frozen importlib")
            if package and not importing and origin.answer_is_calling(frame.f_back):
                reached.append(_shown(frame, package))
        elif event == "c_call":
            package = _package_of_builtin(arg)
            if package and origin.answer_is_calling(frame):
                reached.append(f"{package} 的 {getattr(arg, '__name__', '?')}")
        if previous is not None:
            previous(frame, event, arg)

    sys.setprofile(profile)
    try:
        yield reached
    finally:
        sys.setprofile(previous)


def namespace_of(answer: Any) -> dict[str, Any] | None:
    """The global namespace the answer's code reads (its file's, a notebook's), or None."""
    if isinstance(answer, FunctionType):
        return answer.__globals__
    if isinstance(answer, type):
        for value in vars(answer).values():
            function = refusal.function_of(value)
            if function is not None:
                return function.__globals__
    return None


def foreign_imports(answer: Any) -> list[str]:
    """What the answer's engine file imports besides NumPy and the standard library (a notebook is not checked:
    its other cells may import what they like; the watch above still sees every call)."""
    space = namespace_of(answer)
    if space is None or Path(str(space.get("__file__", ""))).name != "engine.py":
        return []
    found, own = [], space.get("__name__")
    for name, value in space.items():
        if isinstance(value, ModuleType):
            module = value.__name__
        elif callable(value):
            module = getattr(value, "__module__", None)
        else:
            continue
        top = (module or "builtins").split(".")[0]
        if module != own and top not in ALLOWED and top.lstrip("_") not in ALLOWED:
            found.append(f"{module}（{name}）")
    return found


def only_numpy(number: str, check: Callable[[Any], str | None]) -> Callable[[Any], str | None]:
    """`check`, run so that the answer may reach NumPy and the standard library only (see the module docstring)."""
    @functools.wraps(check)
    def checked(answer: Any) -> str | None:
        imported = foreign_imports(answer)
        if imported:
            raise Shortcut(message(number, imported[0]) + "：引擎文件只许 import numpy")
        with watching() as reached:
            try:
                remark = check(answer)
            except Exception:
                if reached:
                    raise Shortcut(message(number, reached[0])) from None
                raise
        if reached:
            raise Shortcut(message(number, reached[0]))
        return remark

    return checked
