"""While an exercise is graded, the library code that does its job refuses to run for the answer.

An exercise that asks for softmax cannot be answered by calling minigrad's softmax, under any of its names:
`F.softmax`, `Tensor.softmax`, the fused op behind them, its composed twin, a kernel. Those names are not listed
anywhere; they are found, so that a new module or a new alias is covered the day it appears:

1. **What does the job.** Each exercise names a few *shortcut answers* (shortcuts.py): answers that pass by
   calling the library. The checker is run on the reference solution and on each shortcut while a profiler
   records which library functions the answer reaches (code in minigrad/, minigpt/, tutorials/; the checker's own
   calls are not counted). The functions only the shortcuts reach, less a fixed panel of elementary tensor
   operations every answer may use, do the exercise's job. A module-level function or class of the libraries
   with the name of one of them, or of the answer itself, does it too (the composed twins, the minigpt parts).
2. **Every path to it.** Every module of the libraries is imported (pkgutil) and every function bound to a
   module attribute or a class attribute is indexed by its code object: each binding of a forbidden function,
   whatever the import path, is one entry.
3. **Refused, for the answer only.** While grading, each such binding is replaced by a guard. The guard looks
   at its callers: past the library's own frames, if the first frame is the checker's, the original runs (the
   checkers build their own models and call the library to compute what is expected); otherwise the answer
   reached it, and it raises `Shortcut`. An answer that catches the refusal still fails: refusals are
   recorded. Every binding is put back when grading ends, even after an error.

This is test-time replacement inside the grader, and nowhere else. Read next: shortcuts.py.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil
import sys
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import CodeType, FunctionType, ModuleType
from typing import Any

import numpy as np

LIBRARIES = ("minigrad", "minigpt", "tutorials")
WALKED = ("minigrad", "minigpt")  # imported whole; tutorials' modules only once something imported them
_HERE = Path(__file__).resolve().parent
_TUTORIALS = _HERE.parent
CHECKER_FILES = {_HERE / "grading.py"}  # with everything in checks/: the frames whose calls are the checker's
GRADER_FILES = {"refusal.py", "mutants.py", "__init__.py", "__main__.py", "hints.py"}
SHORT_NAMES = {"minigrad.functional": "F", "minigrad": "mg", "minigrad.nn": "nn", "minigrad.optim": "optim"}


# --------------------------------------------------------------------------------------------------
# Whose frame is it: the library's, the checker's, or the answer's


@functools.cache
def _kind(filename: str) -> str:
    """'library' (minigrad, minigpt, tutorials), 'external' (the standard library, NumPy, this grader's machinery),
    'checker' (checks/, grading.py) or 'answer' (the learner's files, the solutions, a notebook cell, a test...)."""
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
            or _TUTORIALS / "solutions" in path.parents or (path.parent == _TUTORIALS and path.name[:1].isdigit()):
        return "answer"  # the learner's files, the shortcut answers, the reference solutions, a lecture script
    roots = [Path(sys.modules[name].__file__).resolve().parent for name in LIBRARIES if name in sys.modules]
    if any(root in path.parents for root in roots):
        return "library"
    prefixes = {Path(p).resolve() for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    if "site-packages" in path.parts or any(prefix in path.parents for prefix in prefixes):
        return "external"
    return "answer"


def answer_is_calling(frame: Any) -> bool:
    """Whether, past the library's frames, the first caller of `frame` is an answer (not the checker)."""
    while frame is not None:
        kind = _kind(frame.f_code.co_filename)
        if kind in ("checker", "answer"):
            return kind == "answer"
        frame = frame.f_back
    return False


# --------------------------------------------------------------------------------------------------
# Step 1: which library code an answer reaches


def reached(run: Callable[[], Any]) -> set[CodeType]:
    """The library code objects entered, on the answer's behalf, while `run()` runs (its errors are swallowed)."""
    found: set[CodeType] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and _kind(frame.f_code.co_filename) == "library" and frame.f_code not in found \
                and answer_is_calling(frame.f_back):
            found.add(frame.f_code)

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        with np.errstate(all="ignore"):
            run()
    # a shortcut may fail its checker (or anything else): what it reached on the way is what counts
    except Exception:  # noqa: BLE001
        pass
    finally:
        sys.setprofile(previous)
    return found


def _panel() -> list[Callable[[], Any]]:
    """Elementary tensor operations that any answer may use, each spelling once (their code is never forbidden)."""
    import minigrad as mg

    mask = np.triu(np.ones((3, 3), dtype=bool), k=1)
    ops: list[Callable[[Any, Any], Any]] = [
        lambda a, b: a + 1, lambda a, b: a - a, lambda a, b: a * 2, lambda a, b: a / 3, lambda a, b: 2 / (a + 1),
        lambda a, b: a**2, lambda a, b: -a, lambda a, b: a @ b, lambda a, b: a.exp(), lambda a, b: (a + 1).log(),
        lambda a, b: (a + 1).sqrt(), lambda a, b: a.tanh(), lambda a, b: a.abs(), lambda a, b: a.sigmoid(),
        lambda a, b: a.relu(), lambda a, b: a[0].T, lambda a, b: a.transpose(1, 2), lambda a, b: a.swapaxes(-1, -2),
        lambda a, b: a.permute(2, 0, 1), lambda a, b: a.reshape(6, 4), lambda a, b: a.reshape(-1),
        lambda a, b: a.view(2, 12), lambda a, b: a[0], lambda a, b: a[:, 1:], lambda a, b: a[..., None],
        lambda a, b: a[:, [0, 2]], lambda a, b: a.sum(), lambda a, b: a.sum(-1),
        lambda a, b: a.sum(axis=-1, keepdims=True), lambda a, b: a.sum(dim=-1, keepdim=True),
        lambda a, b: a.mean(-1), lambda a, b: a.mean(axis=-1, keepdims=True),
        lambda a, b: a.mean(dim=(1, 2), keepdim=True), lambda a, b: a.max(), lambda a, b: a.max(-1),
        lambda a, b: a.max(axis=-1, keepdims=True), lambda a, b: a.max(dim=-1, keepdim=True),
        lambda a, b: a.min(axis=-1, keepdims=True), lambda a, b: a.amax(-1, keepdim=True),
        lambda a, b: (a @ b).masked_fill(mask, float("-inf")), lambda a, b: mg.where(a > 1, a, a * 0),
        lambda a, b: mg.concat([a, a], axis=-1), lambda a, b: mg.stack([a, a], axis=0), lambda a, b: a.unsqueeze(0),
        lambda a, b: a.squeeze(), lambda a, b: a.flatten(), lambda a, b: a.contiguous(), lambda a, b: a.float(),
        lambda a, b: a.clone(), lambda a, b: a.split(2, dim=-1)[0], lambda a, b: a.chunk(2, dim=-1)[1],
        lambda a, b: a.detach(), lambda a, b: a.sum().item(), lambda a, b: a.numpy(), lambda a, b: mg.zeros(3),
        lambda a, b: mg.ones(2, 2), lambda a, b: mg.arange(4), lambda a, b: mg.tensor([1.0, 2.0]),
        lambda a, b: mg.nn.Linear(4, 3).to(dtype=a.dtype)(a), lambda a, b: mg.nn.Linear(4, 3, bias=False)(a.float()),
        lambda a, b: mg.nn.functional.linear(a, b[0].T), lambda a, b: mg.nn.functional.linear(a, b[0].T, b[0, 0]),
        lambda a, b: mg.nn.Sequential()(a), lambda a, b: _module_api(mg.nn.Linear(4, 3))(a),
        lambda a, b: mg.no_grad()(lambda: a * 2)(), lambda a, b: a * mg.is_grad_enabled(),
    ]
    runs = []
    for dtype in ("float32", "float64"):
        for op in ops:
            def run(op: Callable[[Any, Any], Any] = op, dtype: str = dtype) -> None:
                a = mg.tensor(np.arange(24.0).reshape(2, 3, 4) / 10, requires_grad=True, dtype=dtype)
                b = mg.tensor(np.ones((2, 4, 3)), requires_grad=True, dtype=dtype)
                y = op(a, b)
                if isinstance(y, mg.Tensor) and y.requires_grad:
                    y.masked_fill(~np.isfinite(y.numpy()), 0.0).sum().backward()
                with mg.no_grad():
                    op(a, b)
            runs.append(run)
    return runs


def _module_api(module: Any) -> Any:
    """Every method of nn.Module a training loop may use, called once; returns the module."""
    list(module.parameters()), list(module.named_parameters()), list(module.children()), list(module.modules())
    module.zero_grad(), module.state_dict(), module.train(), module.eval(), module.train()
    return module


def _panel_reach() -> set[CodeType]:
    found: set[CodeType] = set()

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event == "call" and _kind(frame.f_code.co_filename) == "library":
            found.add(frame.f_code)

    for run in _panel():
        previous = sys.getprofile()
        sys.setprofile(profile)
        try:
            run()
        except (AttributeError, TypeError, ValueError, IndexError):  # an op this version spells differently
            pass
        finally:
            sys.setprofile(previous)
    return found


PANEL: set[CodeType] | None = None  # filled once, on the first exercise with shortcuts


def job_code(reference: Any, shortcuts: Iterable[Any], check: Callable[[Any], Any], name: str) -> set[CodeType]:
    """The library code that does an exercise's job, never including what its reference solution reaches:

    what its shortcuts reach beyond the panel of elementary operations, with the module-level functions named
    like those (`widen`), and every function or class named like the answer itself (library `Mul` for exercise
    0.2's `Mul`, even though `a * b` is elementary everywhere else).
    """
    global PANEL
    if PANEL is None:
        PANEL = _panel_reach()
    allowed = reached(lambda: check(reference))
    used = set().union(*(reached(lambda s=s: check(s)) for s in shortcuts))
    job = widen(used - allowed - PANEL) - PANEL
    return {code for code in (job | named_like(name)) - allowed if code.co_name != "<module>"}


# --------------------------------------------------------------------------------------------------
# Step 2: every binding of a function, by identity


_IMPORTED_ALL = False  # minigrad's and minigpt's modules are all imported once per process


def library_modules() -> list[ModuleType]:
    """Every module of the libraries: minigrad and minigpt imported whole, tutorials' as far as imported."""
    global _IMPORTED_ALL
    for name in WALKED if not _IMPORTED_ALL else ():
        package = importlib.import_module(name)
        for info in pkgutil.walk_packages(package.__path__, name + "."):
            if info.name.endswith("__main__") or info.name in sys.modules:
                continue
            try:
                importlib.import_module(info.name)
            # an optional backend (mpi4py, cupy...) that is not installed: nothing there to reach
            except Exception:  # noqa: BLE001
                continue
    _IMPORTED_ALL = True
    return [m for n, m in list(sys.modules.items()) if n.split(".")[0] in LIBRARIES and isinstance(m, ModuleType)
            and _kind(getattr(m, "__file__", None) or "<none>") == "library"]


Binding = tuple[Any, str, Any]  # (owner: module or class, attribute name, the object in owner.__dict__)


def function_of(value: Any) -> FunctionType | None:
    """The plain function inside a binding's value (a function, staticmethod, classmethod or property getter)."""
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    elif isinstance(value, property):
        value = value.fget
    return value if isinstance(value, FunctionType) else None


_INDEX: tuple[int, dict[CodeType, list[Binding]], dict[str, list[Any]]] | None = None


def index() -> tuple[dict[CodeType, list[Binding]], dict[str, list[Any]]]:
    """(code object -> its bindings, name -> the module-level functions and classes of that name), cached."""
    global _INDEX
    modules = library_modules()
    if _INDEX is not None and _INDEX[0] == len(modules):
        return _INDEX[1], _INDEX[2]
    by_code: dict[CodeType, list[Binding]] = {}
    by_name: dict[str, list[Any]] = {}
    classes: dict[int, type] = {}
    for module in modules:
        for name, value in list(vars(module).items()):
            function = function_of(value)
            if function is not None:
                by_code.setdefault(function.__code__, []).append((module, name, value))
            if isinstance(value, type) and value.__module__.split(".")[0] in LIBRARIES:
                classes.setdefault(id(value), value)
            if (function is not None or isinstance(value, type)) and not name.startswith("__"):
                if not any(v is value for v in by_name.get(name, [])):
                    by_name.setdefault(name, []).append(value)
    for cls in classes.values():
        for name, value in list(vars(cls).items()):
            function = function_of(value)
            if function is not None:
                by_code.setdefault(function.__code__, []).append((cls, name, value))
    _INDEX = (len(modules), by_code, by_name)
    return by_code, by_name


def widen(codes: set[CodeType]) -> set[CodeType]:
    """`codes`, plus every module-level function of the libraries named like one of `codes`' module-level functions:
    the composed twins and the minigpt parts that do the same job under the same name. A method's name (forward,
    __init__) says nothing and is not widened."""
    by_code, by_name = index()
    functions = {code.co_name for code in codes
                 if any(isinstance(owner, ModuleType) for owner, _, _ in by_code.get(code, []))}
    return set(codes).union(*({v.__code__ for v in by_name.get(n, []) if not isinstance(v, type)} for n in functions))


def named_like(name: str) -> set[CodeType]:
    """The code of every library function named `name`, and of every method of every library class named so."""
    codes = set()
    for value in index()[1].get(name, []):
        if isinstance(value, type):
            codes |= {f.__code__ for f in map(function_of, vars(value).values()) if f is not None}
        else:
            codes.add(value.__code__)
    return codes


# --------------------------------------------------------------------------------------------------
# Step 3: guards, in place while grading


def shown(owner: Any, name: str) -> str:
    """How a binding is named in a refusal: F.softmax, Tensor.softmax, minigpt.sampling.top_k_filter."""
    if isinstance(owner, ModuleType):
        return f"{SHORT_NAMES.get(owner.__name__, owner.__name__)}.{name}"
    return f"{owner.__name__}.{name}"


def _guard(value: Any, message: str, refusals: list[str], refused: type[Exception]) -> Any:
    """A stand-in for `value` that refuses when an answer calls it, and otherwise runs it."""
    function = function_of(value)

    @functools.wraps(function)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        if answer_is_calling(sys._getframe(1)):
            refusals.append(message)
            raise refused(message)
        return function(*args, **kwargs)

    if isinstance(value, staticmethod):
        return staticmethod(guarded)
    if isinstance(value, classmethod):
        return classmethod(guarded)
    if isinstance(value, property):
        return property(guarded, value.fset, value.fdel, value.__doc__)
    return guarded


def answer_namespaces(answer: Any) -> list[dict[str, Any]]:
    """The global namespaces an answer's code reads (its file's, a notebook's): a `from x import f` there holds
    the library function itself, taken before grading began, and is guarded too."""
    functions = [answer] if isinstance(answer, FunctionType) else \
        [f for f in map(function_of, vars(answer).values()) if f is not None] if isinstance(answer, type) else []
    spaces: list[dict[str, Any]] = []
    for function in functions:
        if not any(space is function.__globals__ for space in spaces):
            spaces.append(function.__globals__)
    return [space for space in spaces if space.get("__name__", "").split(".")[0] not in ("minigrad", "minigpt")]


@contextmanager
def refusing(codes: set[CodeType], named: dict[CodeType, str], message: Callable[[str], str],
             refused: type[Exception], answer: Any = None) -> Iterator[list[str]]:
    """While the block runs, every binding of `codes` is guarded (raising `refused`); yields the refusals made.

    The bindings are the libraries' (by identity, `index`) and those in the answer's own namespaces. `named` gives
    a code object the name its refusal uses (else the binding's own: F.softmax, Tensor.softmax).
    """
    by_code, _ = index() if codes else ({}, {})
    refusals: list[str] = []
    saved: list[Binding] = []
    spaces: list[tuple[dict[str, Any], str, Any]] = []
    try:
        for code in codes:
            for owner, name, value in by_code.get(code, []):
                if vars(owner).get(name) is not value:
                    continue  # already replaced through another binding of the same owner
                setattr(owner, name, _guard(value, message(named.get(code) or shown(owner, name)), refusals,
                                                   refused))
                saved.append((owner, name, value))
        for space in answer_namespaces(answer) if codes else []:
            for name, value in list(space.items()):
                function = function_of(value) if not isinstance(value, type) else None
                if function is not None and function.__code__ in codes:
                    space[name] = _guard(value, message(named.get(function.__code__) or name), refusals, refused)
                    spaces.append((space, name, value))
        yield refusals
    finally:
        for space, name, value in reversed(spaces):
            space[name] = value
        for owner, name, value in reversed(saved):
            setattr(owner, name, value)
