"""How many threads minigrad's CPU work uses: `mg.set_num_threads(n)`, `mg.get_num_threads()`, PyTorch's names.

NumPy hands every matrix product to a BLAS library (OpenBLAS, in NumPy's wheels), which splits the product
over a pool of threads, one per core unless told otherwise. These two functions read and set that pool's
size while the program runs, through threadpoolctl, which finds the BLAS library NumPy loaded and calls its
own set-threads function.

Everything else NumPy does (exp, sums, each elementwise pass) runs on the thread that called it. A few ops
make dozens of passes over a large array (the exact GELU's erf is about forty): `in_chunks` runs such an
elementwise computation on as many threads as the BLAS pool has, each on its own slice of the array. NumPy
releases Python's lock inside its loops, so the slices really run at once.

Why a program would change it: on a quiet machine a pool of one thread per core is fastest. On a machine
whose cores are busy with other work it can be many times slower than one thread: a product waits for its
slowest thread, and a thread the system has put aside stalls all the others, while waiting threads spin and
take the cores from the work. minigpt's training measures which is faster as it runs (minigpt/threads.py).

On a GPU the products run on the device and these settings only affect the little host-side work.
Read next: backend.py.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

# Below this many elements a computation runs on the calling thread: handing slices to other threads costs
# some tens of microseconds, more than a few passes over a small array take.
MIN_PARALLEL_SIZE = 2**16


@lru_cache(maxsize=1)
def _blas_pools() -> Any:
    """The BLAS libraries loaded in this process (NumPy's), found once: the scan reads every loaded library."""
    import numpy  # noqa: F401  (BLAS is loaded with NumPy: make sure it is there before looking)
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController().select(user_api="blas")


def get_num_threads() -> int:
    """The number of threads a matrix product may use (the largest pool if several BLAS libraries are loaded)."""
    pools = _blas_pools()
    return max((pool.num_threads for pool in pools.lib_controllers), default=1)


def set_num_threads(n: int) -> None:
    """Let matrix products use n threads from now on (as torch.set_num_threads does for PyTorch's ops)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: the number of threads must be an integer >= 1, got {n!r}")
    for pool in _blas_pools().lib_controllers:
        pool.set_num_threads(n)


@lru_cache(maxsize=8)
def _workers(n: int) -> ThreadPoolExecutor:
    """A pool of n threads, made once per size and kept (starting threads on every call would cost more)."""
    return ThreadPoolExecutor(max_workers=n, thread_name_prefix="minigrad")


def in_chunks(kernel: Callable[..., Any], *arrays: Any) -> Any:
    """kernel(*arrays), computed slice by slice on get_num_threads() threads when the arrays are large.

    kernel must be elementwise: element i of each result depends only on element i of each input, and it
    returns one array of the inputs' shape or a tuple of them. The inputs must share one shape. On a GPU,
    on small arrays, or with one thread, this is just kernel(*arrays).
    """
    threads = get_num_threads()
    first = arrays[0]
    if (threads == 1 or type(first) is not np.ndarray or first.size < MIN_PARALLEL_SIZE
            or any(a.shape != first.shape for a in arrays)):
        return kernel(*arrays)
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]  # a view when already contiguous
    bounds = np.linspace(0, first.size, threads + 1).astype(int)
    parts = list(_workers(threads).map(lambda lo, hi: kernel(*(a[lo:hi] for a in flat)), bounds[:-1], bounds[1:]))
    if isinstance(parts[0], tuple):
        return tuple(np.concatenate([part[k] for part in parts]).reshape(first.shape) for k in range(len(parts[0])))
    return np.concatenate(parts).reshape(first.shape)
