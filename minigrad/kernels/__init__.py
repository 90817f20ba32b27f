"""Kernels: a floor under ops/, fused/ and optim/: second implementations of array steps, faster, never new math.

A fused op (../fused/softmax.py, ../fused/attention.py, ...) is specified by its readable NumPy forward and
backward, and that code is what a learner reads. A kernel is another implementation of the same op, or of one
of its steps: it takes the same arrays and returns what the NumPy reference returns (the same values, up to the order in
which floating-point sums are added). The rules for a kernel here:

- **One reference, kernels behind it.** The op's NumPy code stays the specification; a kernel is selected
  beside it, never instead of it, and falls back to it where it does not apply (another dtype, another
  device, a shape it was not written for).
- **Selected once per process.** Whether the compiled kernels run is decided once, the first time an op asks
  (select.py: is numba installed? did the user force NumPy?), not per call, so a run never mixes
  implementations and a profile reads the same from step to step; per call the op only checks that the arrays
  are ones the kernel is built for (float32 NumPy arrays).
- **Tested equal to the reference.** Each kernel has a test that runs the op both ways on the same inputs,
  forward and backward, and asserts they agree (tests/test_ops_nn.py does so for the causal row blocks,
  tests/test_backend.py for the BLAS sums).

The kernels today:
- blas.py: row and column sums and transposed copies that hand NumPy's loops to one BLAS call
  (layer norm, softmax, attention, and the bias gradient of a linear layer use them);
- causal_rows.py: causal self-attention in blocks of query rows, skipping the masked tiles.
- numba_*.py: compiled CPU kernels (the optional extra `fast`) for the exact GELU, LayerNorm, softmax and
  log-softmax (and the scaled, masked softmax of causal_rows.py's blocks), cross-entropy, Adam(W) and the
  embedding's scatter-add, each behind the op it implements; select.py chooses, once per process,
  whether they or the NumPy code run (`MINIGRAD_KERNELS=numpy`, or `set_implementation("numpy")`, forces
  NumPy): it is the one seam through which every kernel is chosen.
- special.py: erf on arrays (NumPy has none), for the exact GELU;
- threads.py and memory.py: how the process runs (the BLAS pool's size, `in_chunks`; freed host memory kept
  for the next step): settings that change the speed, never the results.

Nothing here imports anything above the backend (core/backend.py): a kernel knows arrays, not tensors.
Read next: ../fused/softmax.py (the first op with a kernel behind it), as each kernel file says of its own op.
"""

from minigrad.kernels.memory import keep_freed_host_memory
from minigrad.kernels.select import implementation, report, set_implementation, using
from minigrad.kernels.threads import get_num_threads, in_chunks, set_num_threads

__all__ = ["get_num_threads", "implementation", "in_chunks", "keep_freed_host_memory", "report",
           "set_implementation", "set_num_threads", "using"]
