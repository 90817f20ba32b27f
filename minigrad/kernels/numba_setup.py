"""How minigrad's compiled CPU kernels are built: numba, imported only if installed, compiled once, cached on disk.

The kernels (numba_gelu.py, numba_layernorm.py, ...) are a second implementation of a few fused ops; the NumPy
code stays the specification and the default. This module holds the policy they share:
- `AVAILABLE`: numba could be imported (`pip install -e ".[fast]"`). Without it nothing here fails: each
  kernel module's `ready()` answers False and the NumPy op is used.
- The disk cache: numba writes compiled code next to the source by default (often a read-only site-packages);
  unless the user set NUMBA_CACHE_DIR, it goes to the user's cache directory,
  ~/.cache/minigrad/numba/<a digest of the kernels' sources>. Every version of the sources gets its own folder,
  so `prepare` marks the current one as used and deletes the folders that no process has used for 30 days
  (`prune_stale_caches`): an upgraded install does not leave old compiled code behind forever.
- `kernel`: numba's `njit` with the settings every kernel uses: cached, one thread (parallel=True fights
  OpenBLAS's threads), NumPy's error model (x / 0 is inf or nan, not a ZeroDivisionError), and never the
  `nnan`/`ninf` fast-math flags, so -inf masks and NaN (for anomaly detection) keep their meaning.
- `prepare`: compiles a module's kernels on tiny inputs, announcing the first real compile of the process in one
  line on stderr; if numba fails, one warning line, and the caller uses the NumPy op.
Read next: select.py (which asks it).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np


def default_cache_dir() -> Path:
    """~/.cache/minigrad/numba, or $XDG_CACHE_HOME/minigrad/numba where that is set."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "minigrad" / "numba"


def sources_digest() -> str:
    """A digest of the kernels' sources (this folder's numba_*.py), naming their cache folder.

    numba checks a cached function against its own file only, not against the helpers inlined into it from
    another file (numba_math.exp32): a folder per version of the sources keeps a stale kernel from being loaded.
    """
    digest = hashlib.sha256()
    for path in sorted(Path(__file__).parent.glob("numba_*.py")):
        digest.update(path.read_bytes())
    return digest.hexdigest()[:12]


STALE_AFTER_DAYS = 30.0  # a cache folder no process has used for this long belongs to an old version


def prune_stale_caches(root: Path, keep: str, stale_after_days: float = STALE_AFTER_DAYS) -> list[Path]:
    """Mark `root/keep` as used now and delete the other digest folders in `root` unused for `stale_after_days`.

    Only folders named like a digest (12 hex digits) are touched, so nothing else a user keeps there is lost.
    A folder's modification time is its last use: every process that loads the kernels refreshes its own.
    Returns the folders deleted.
    """
    current = root / keep
    if current.is_dir():
        os.utime(current)
    if not root.is_dir():
        return []
    oldest_kept = time.time() - stale_after_days * 86400
    deleted = []
    for folder in root.iterdir():
        is_digest = len(folder.name) == 12 and all(c in "0123456789abcdef" for c in folder.name)
        if is_digest and folder.name != keep and folder.is_dir() and folder.stat().st_mtime < oldest_kept:
            shutil.rmtree(folder, ignore_errors=True)  # another process may be deleting it too
            deleted.append(folder)
    return deleted


# numba reads NUMBA_CACHE_DIR when it is first imported, so the default is set before the import below.
# (If the program imported numba earlier, numba keeps its own choice.)
os.environ.setdefault("NUMBA_CACHE_DIR", str(default_cache_dir() / sources_digest()))

try:
    import numba
    from numba.core import event
except ImportError:  # the optional extra is not installed: the NumPy ops are used
    numba = None
    event = None

AVAILABLE = numba is not None

# Fast-math flags for the kernels that sum: `reassoc` lets LLVM vectorise a sum (it adds in another order, as
# BLAS does), `contract` fuses a * b + c. Never `nnan`/`ninf`: they would let LLVM assume that no -inf mask or
# NaN exists. (tests/test_kernels.py measures exp32 inside such a kernel, in ulp: reassociation must not cost
# it digits.)
FASTMATH = {"reassoc", "contract", "nsz", "arcp"}

ANNOUNCEMENT = "compiling minigrad's CPU kernels, once, ~15 s (cached in {dir})"


def kernel(fn: Callable | None = None, *, inline: str = "never") -> Any:
    """numba.njit with the kernels' settings (see the module docstring); without numba, `fn` itself.

    inline="always" for the small helpers called inside a kernel's loop (numba_math.exp32): inlined, the loop
    around them is vectorised; called, it is not.
    """
    def wrap(f: Callable) -> Any:
        if not AVAILABLE:
            return f  # never called: ready() is False
        return numba.njit(cache=True, nogil=True, error_model="numpy", fastmath=FASTMATH, inline=inline)(f)

    return wrap if fn is None else wrap(fn)


def _announce(ev: Any) -> None:
    """Print the announcement once per process, when numba starts compiling (a cache hit compiles nothing)."""
    if not _ANNOUNCED:
        _ANNOUNCED.append(True)
        print(ANNOUNCEMENT.format(dir=os.environ.get("NUMBA_CACHE_DIR", "numba's default")), file=sys.stderr)


_ANNOUNCED: list[bool] = []  # one line per process, however many modules compile
_PRUNED: list[bool] = []  # the cache folders are looked at once per process


def _prune_once() -> None:
    """Prune stale cache folders once per process, and only in minigrad's own cache (not a NUMBA_CACHE_DIR the
    user chose: that folder is theirs)."""
    if _PRUNED:
        return
    _PRUNED.append(True)
    ours = default_cache_dir() / sources_digest()
    if Path(os.environ.get("NUMBA_CACHE_DIR", "")) == ours:
        prune_stale_caches(ours.parent, ours.name)

if AVAILABLE:
    class _Announcer(event.Listener):
        """numba's compile events, turned into the one-line announcement."""

        def on_start(self, ev: Any) -> None:
            _announce(ev)

        def on_end(self, ev: Any) -> None:
            pass


def prepare(what: str, warm_up: Callable[[], None]) -> bool:
    """Compile (or load from the cache) the kernels that `warm_up` calls on tiny inputs; True if they work.

    False when numba is missing, or, with one warning line naming the error, when it fails to compile: the
    caller then uses the NumPy op. Each kernel module calls this once per process (its cached `ready()`).
    """
    if not AVAILABLE:
        return False
    _prune_once()
    try:
        with event.install_listener("numba:compile", _Announcer()):
            warm_up()
    except Exception as err:  # noqa: BLE001 - any failure of the compiler means: use the NumPy op instead
        warnings.warn(f"minigrad: the compiled {what} kernel is unavailable ({type(err).__name__}: {err}); "
                      "using the NumPy op", RuntimeWarning, stacklevel=2)
        return False
    return True


def supports(*arrays: Any) -> bool:
    """True if every array is a float32 NumPy array: the only dtype and device the kernels are built for.

    (float64, used by the gradient checks, float16 and CuPy arrays go to the NumPy op.)
    """
    return all(isinstance(a, np.ndarray) and a.dtype == np.float32 for a in arrays)
