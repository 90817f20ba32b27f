"""Host memory: make glibc's malloc keep freed blocks for reuse (called once, from minigrad/__init__.py).

A training step allocates and frees the same large temporaries (activations, gradients) every step.
By default glibc returns blocks over 128 KiB to the kernel as soon as they are freed (munmap, or
trimming the heap), so the next step pays a page fault for every 4 KiB page it touches again: about
10,000 faults per step of a small GPT, a fifth of its time. Kept in the heap they are reused with no
fault, and the peak memory is the same. The setting is process-wide, which is why it lives here, in
plain sight; set MINIGRAD_MALLOC_TUNING=0 to leave the allocator alone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys

# From glibc's <malloc.h>.
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3


def keep_freed_host_memory() -> bool:
    """Raise glibc's mmap and trim thresholds so freed arrays stay in the heap; returns whether it did.

    Does nothing off Linux, on a C library without `mallopt` (e.g. musl), or with
    MINIGRAD_MALLOC_TUNING=0.
    """
    if os.environ.get("MINIGRAD_MALLOC_TUNING") == "0" or not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    # Both together: setting either one alone switches off glibc's adaptive threshold, which is worse.
    return bool(mallopt(M_MMAP_THRESHOLD, 32 * 2**20) and mallopt(M_TRIM_THRESHOLD, 2**30))
