"""For benchmark commands only: NumPy's OpenBLAS as a user has it, and the machine and BLAS kernel behind a figure.

Some machines set OPENBLAS_CORETYPE (and OPENBLAS_L2_SIZE) in the environment, a guard for old OpenBLAS builds:
it pins NumPy's OpenBLAS to an older kernel (Haswell, AVX2) while PyTorch's MKL is untouched, and a user has no
such setting. Importing this module re-executes the benchmark without both variables, so it must be imported
before NumPy (which loads OpenBLAS). The tests and CI never import it: they keep the environment they are given.

    import blas_env   # first, before numpy: re-executes the script without the guard, once
    print(blas_env.header())          # CPU model, BLAS library, its kernel and thread count
    print(f"... {blas_env.tag()}")    # the BLAS kernel and thread count, beside each figure
"""

from __future__ import annotations

import os
import sys

GUARD = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
DROPPED = "MINIGRAD_BENCH_DROPPED_BLAS_GUARD"  # tells the re-executed process what it dropped


def drop_openblas_guard() -> None:
    """Re-execute this process without OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, if either is set."""
    found = {name: os.environ[name] for name in GUARD if name in os.environ}
    if not found:
        return
    if "numpy" in sys.modules:  # too late: OpenBLAS has read them
        raise RuntimeError("benchmarks/blas_env.py must be imported before numpy")
    env = {k: v for k, v in os.environ.items() if k not in GUARD}
    env[DROPPED] = " ".join(f"{k}={v}" for k, v in found.items())
    sys.stdout.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:]], env)


drop_openblas_guard()  # on import, so that it happens before any `import numpy` below the import of this module


def cpu_name() -> str:
    """The CPU's model name, family and model (as lscpu names them), from /proc/cpuinfo."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                fields.setdefault(key.strip(), value.strip())
    except OSError:
        return "unknown CPU"
    return f"{fields.get('model name', '?')} (family {fields.get('cpu family', '?')}, model {fields.get('model', '?')})"


def _blas_info() -> dict | None:
    import numpy  # noqa: F401 (loaded, so that threadpoolctl finds its BLAS)

    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    # NumPy's own (another library, SciPy or PyTorch, may have loaded a second BLAS beside it).
    found = [info for info in threadpool_info() if info.get("user_api") == "blas"]
    return next((info for info in found if "numpy" in info.get("filepath", "")), found[0] if found else None)


def tag() -> str:
    """`BLAS openblas/SkylakeX x2`: NumPy's BLAS library, its kernel and its thread count right now."""
    info = _blas_info()
    if info is None:
        return "BLAS ? (pip install threadpoolctl)"
    return f"BLAS {info.get('internal_api')}/{info.get('architecture', '?')} x{info.get('num_threads')}"


def header() -> str:
    """One line naming the CPU, NumPy's BLAS (library, version, kernel, threads) and any guard dropped."""
    info = _blas_info() or {}
    dropped = os.environ.get(DROPPED)
    note = f"; dropped from the environment: {dropped}" if dropped else ""
    return (f"CPU: {cpu_name()}, {os.cpu_count()} logical cores; NumPy BLAS: {info.get('internal_api', '?')} "
            f"{info.get('version', '')}, kernel {info.get('architecture', '?')}, {info.get('num_threads', '?')} "
            f"threads{note}")
