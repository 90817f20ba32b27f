"""How many threads minigrad's CPU work uses: `mg.set_num_threads(n)`, `mg.get_num_threads()`, PyTorch's names.

NumPy hands every matrix product to a BLAS library (OpenBLAS, in NumPy's wheels), which splits the product
over a pool of threads, one per core unless told otherwise. These two functions read and set that pool's
size while the program runs, through threadpoolctl, which finds the BLAS library NumPy loaded and calls its
own set-threads function.

Everything else NumPy does (exp, sums, each elementwise pass) runs on the thread that called it. A few ops
make dozens of passes over a large array (the exact GELU is about thirty-five): `in_chunks` runs such an
elementwise computation in blocks small enough that all its passes stay in the core's cache, and on very
large arrays spreads the blocks over as many threads as the BLAS pool has. NumPy releases Python's lock
inside its loops, so blocks on different threads run at once; but every NumPy call takes the lock to start,
which limits what threads gain on many short calls (the figures are beside the constants below).

Why a program would change it: on a quiet machine a pool of one thread per core is fastest. On a machine
whose cores are busy with other work it can be many times slower than one thread: a product waits for its
slowest thread, and a thread the system has put aside stalls all the others, while waiting threads spin and
take the cores from the work. minigpt's training measures which is faster as it runs (minigpt/threads.py).

On a GPU the products run on the device and these settings only affect the little host-side work.
Read next: ../fused/gelu.py (an op that runs in_chunks).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from typing import Any

import numpy as np

# Each thread walks its part of an array in blocks of this many elements (256 KiB of float32, a quarter of
# the core's L2 cache), so that a kernel's dozens of passes read and write the cache rather than main memory.
# Measured on the exact GELU of 2M float32 numbers (a 2-core AMD EPYC): one pass per op 71 ms, in blocks of
# 2**16 41 ms; blocks of 2**13 lose again (57 ms) to NumPy's cost per call.
BLOCK_SIZE = 2**16
# Below this many elements a computation runs on the calling thread alone. Each NumPy call holds Python's
# lock while it starts, so threads running many short calls mostly wait for each other: on that machine two
# threads gained nothing on the GELU of 393K numbers (8.0 against 7.5 ms) and 1.3x on 2M (30 against 40 ms).
MIN_PARALLEL_SIZE = 2**20


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
    """kernel(*arrays), computed block by block on get_num_threads() threads when the arrays are large.

    kernel must be elementwise: element i of each result depends only on element i of each input, and it
    returns one array of the inputs' shape or a tuple of them. The inputs must share one shape. On a GPU,
    or on arrays of at most BLOCK_SIZE elements, this is just kernel(*arrays). Otherwise the arrays are cut
    into blocks of BLOCK_SIZE elements; each thread (the caller, and from MIN_PARALLEL_SIZE elements up,
    get_num_threads() - 1 others) computes a run of consecutive blocks, and every block's results are copied
    into place in arrays allocated once.
    """
    first = arrays[0]
    if type(first) is not np.ndarray or first.size <= BLOCK_SIZE or any(a.shape != first.shape for a in arrays):
        return kernel(*arrays)
    flat = [np.ascontiguousarray(a).reshape(-1) for a in arrays]  # a view when already contiguous
    head = kernel(*(a[:BLOCK_SIZE] for a in flat))  # the first block tells the results' number and dtypes
    single = not isinstance(head, tuple)
    results = tuple(np.empty(first.size, dtype=part.dtype) for part in ((head,) if single else head))

    def compute(start: int, stop: int) -> None:
        for lo in range(start, stop, BLOCK_SIZE):
            hi = min(lo + BLOCK_SIZE, stop)
            parts = head if lo == 0 else kernel(*(a[lo:hi] for a in flat))
            for result, part in zip(results, (parts,) if single else parts):
                result[lo:hi] = part

    blocks = -(-first.size // BLOCK_SIZE)
    threads = min(get_num_threads(), blocks) if first.size >= MIN_PARALLEL_SIZE else 1
    # Thread k gets blocks [k * blocks / threads, (k + 1) * blocks / threads): consecutive memory, equal shares.
    bounds = [min(k * blocks // threads * BLOCK_SIZE, first.size) for k in range(threads + 1)]
    # The caller computes the first run itself while the pool's threads compute the others.
    others = [_workers(threads - 1).submit(compute, lo, hi) for lo, hi in zip(bounds[1:-1], bounds[2:])]
    compute(bounds[0], bounds[1])
    for job in others:
        job.result()  # wait, and raise any error
    shaped = tuple(result.reshape(first.shape) for result in results)
    return shaped[0] if single else shaped
