"""Which implementation of the fused ops runs: the NumPy reference or the compiled CPU kernels (numba_*.py).

The choice is made once per process, the first time an op asks:
- `MINIGRAD_KERNELS=numpy` in the environment: the NumPy reference, always (for teaching, and for tests);
- otherwise (unset, or `numba`): the compiled kernels when numba is installed (`pip install -e ".[fast]"`),
  else the NumPy reference, silently; `MINIGRAD_KERNELS=numba` without numba says so in one warning line.
`set_implementation("numpy" | "numba")` changes it from Python, and `using(...)` does so for a `with` block.

An op then asks `compiled(name, *arrays)` on each call: the kernel module `numba_<name>` when the compiled
implementation is chosen, that module compiled (or loaded from the disk cache) without error, and every array a
float32 NumPy array (numba_setup.supports); None otherwise, and the op runs its own NumPy code. So float64
(the gradient checks), float16, a GPU's arrays and a backward on tensors (create_graph, higher_order.py, where
the arrays are Tensors) all take the NumPy reference. The kernel modules, and numba with them, are imported
only when first needed: with `MINIGRAD_KERNELS=numpy` numba is never imported at all.
`report()` says what was chosen and how often each kernel has run in this process.
Read next: ../fused/softmax.py (an op that asks it).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Any

IMPLEMENTATIONS = ("numpy", "numba")
# The wired kernels (causal_rows.py's softmax steps run in "softmax").
KERNELS = ("gelu", "layernorm", "softmax", "cross_entropy", "adamw", "embedding")

_chosen: list[str] = []  # the implementation, once chosen (a one-element list: set once, read on every call)
_calls: dict[str, int] = {}  # how many times each kernel has been chosen in this process, for report()


def numba_installed() -> bool:
    """True if numba can be imported (without importing it: numba_setup does that, with its cache folder set)."""
    return importlib.util.find_spec("numba") is not None


def _from_environment() -> str:
    """The implementation MINIGRAD_KERNELS asks for, or the default: numba when it is installed."""
    wanted = os.environ.get("MINIGRAD_KERNELS", "").strip().lower()
    if wanted not in ("", *IMPLEMENTATIONS):
        raise ValueError(f"MINIGRAD_KERNELS must be 'numpy' or 'numba' (or unset), not {wanted!r}")
    if wanted == "numpy":
        return "numpy"
    if numba_installed():
        return "numba"
    if wanted == "numba":
        warnings.warn("minigrad: MINIGRAD_KERNELS=numba, but numba is not installed (pip install -e '.[fast]'); "
                      "using the NumPy ops", RuntimeWarning, stacklevel=3)
    return "numpy"


def implementation() -> str:
    """'numba' or 'numpy': the implementation of the fused ops in this process (see the module docstring)."""
    if not _chosen:
        _chosen.append(_from_environment())
    return _chosen[0]


def set_implementation(name: str) -> None:
    """Run the fused ops with the NumPy reference ('numpy') or the compiled kernels ('numba') from now on."""
    if name not in IMPLEMENTATIONS:
        raise ValueError(f"set_implementation: the implementation must be 'numpy' or 'numba', not {name!r}")
    if name == "numba" and not numba_installed():
        raise RuntimeError("set_implementation('numba'): numba is not installed; pip install -e '.[fast]'")
    _chosen[:] = [name]


@contextlib.contextmanager
def using(name: str) -> Iterator[None]:
    """`with using("numpy"):` runs the block with that implementation, then restores the previous one."""
    before = implementation()
    set_implementation(name)
    try:
        yield
    finally:
        _chosen[:] = [before]


def compiled(name: str, *arrays: Any) -> ModuleType | None:
    """The kernel module numba_<name> if it should run on these arrays (None entries are skipped), else None."""
    if implementation() != "numba":
        return None
    from minigrad.kernels import numba_setup  # (imports numba, so only here)

    if not numba_setup.supports(*(a for a in arrays if a is not None)):
        return None
    module = importlib.import_module(f"minigrad.kernels.numba_{name}")
    if not module.ready():  # compiled once per process; a failed compile has warned, and NumPy runs
        return None
    _calls[name] = _calls.get(name, 0) + 1
    return module


def report() -> dict[str, Any]:
    """{'implementation': 'numba' or 'numpy', 'ran': {kernel name: how many calls ran it in this process}}."""
    return {"implementation": implementation(), "ran": dict(sorted(_calls.items()))}
