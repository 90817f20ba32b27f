"""How the process runs: settings that change minigrad's speed on the CPU, never its results.

- threads.py: `mg.set_num_threads(n)`, `mg.get_num_threads()` (the BLAS pool's size) and `in_chunks`, which runs
  a long elementwise computation in cache-sized blocks, over the threads for very large arrays (GELU, erf);
- memory.py: keep freed host memory in the heap for the next training step, instead of paying page faults.

Both are process-wide, so they live here, apart from the math, in plain sight. Read next: threads.py.
"""

from minigrad.runtime.memory import keep_freed_host_memory
from minigrad.runtime.threads import get_num_threads, in_chunks, set_num_threads

__all__ = ["get_num_threads", "in_chunks", "keep_freed_host_memory", "set_num_threads"]
