"""How many threads minigrad's CPU work uses: `mg.set_num_threads(n)`, `mg.get_num_threads()`, PyTorch's names.

NumPy hands every matrix product to a BLAS library (OpenBLAS, in NumPy's wheels), which splits the product
over a pool of threads, one per core unless told otherwise. Everything else NumPy does (exp, sums, the
elementwise passes) runs on the calling thread. So "minigrad's threads" means the BLAS pool: these two
functions read and set its size while the program runs, through threadpoolctl, which finds the BLAS library
NumPy loaded and calls its own set-threads function.

Why a program would change it: on a quiet machine a pool of one thread per core is fastest. On a machine
whose cores are busy with other work it can be many times slower than one thread: a product waits for its
slowest thread, and a thread the system has put aside stalls all the others, while waiting threads spin and
take the cores from the work. minigpt's training measures which is faster as it runs (minigpt/threads.py).

On a GPU the products run on the device and these settings only affect the little host-side work.
Read next: backend.py.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any


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
