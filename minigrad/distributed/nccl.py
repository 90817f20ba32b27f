"""The NCCL backend: collective calls on CuPy arrays, GPU to GPU, with MPI to start the job.

NCCL (NVIDIA's collective library) sums arrays across GPUs over NVLink or the network without a trip through
the host. It does not start processes or find its peers itself: rank 0 makes a *unique id* (128 bytes naming the
job), every rank must receive it, and then each builds its end of one communicator from (world size, id, rank).
MPI is how they receive it here: the job is launched with `mpiexec`, MPI says each rank's number, and one MPI
broadcast carries the id. Each rank takes the GPU whose index is its rank among the ranks on the same machine.

CuPy arrays take the NCCL path; NumPy arrays (and the strict stand-in's) take the MPI path, so a caller never
has to ask which backend it is on. CuPy is reached only through minigrad.core.backend.
Read next: process_group.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad.core import backend
from minigrad.distributed.mpi import MpiCommunicator, ReduceOp

UNIQUE_ID_BYTES = 128  # NCCL_UNIQUE_ID_BYTES

_NCCL_DTYPES = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
                "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32", "int64": "NCCL_INT64"}
_NCCL_OPS = {ReduceOp.SUM: "NCCL_SUM", ReduceOp.AVG: "NCCL_SUM", ReduceOp.PRODUCT: "NCCL_PROD",
             ReduceOp.MIN: "NCCL_MIN", ReduceOp.MAX: "NCCL_MAX"}


def nccl_dtype(nccl: Any, dtype: Any) -> int:
    """NCCL's code for a NumPy dtype, or a clear error for one it cannot sum."""
    name = np.dtype(dtype).name
    if name not in _NCCL_DTYPES:
        raise TypeError(f"backend 'nccl' cannot reduce {name} arrays (it takes {', '.join(_NCCL_DTYPES)})")
    return getattr(nccl, _NCCL_DTYPES[name])


def share_unique_id(mpi: MpiCommunicator, nccl: Any) -> tuple[int, ...]:
    """Rank 0's NCCL unique id, on every rank (one MPI broadcast of its bytes)."""
    uid = np.zeros(UNIQUE_ID_BYTES, dtype=np.int64)
    if mpi.rank == 0:
        uid[:] = nccl.get_unique_id()
    mpi.broadcast_(uid, src=0)
    return tuple(int(v) for v in uid)


class NcclCommunicator:
    """An NCCL communicator over the same ranks as an MPI one; CuPy arrays go through NCCL, others through MPI.

    `nccl` is CuPy's `cupy.cuda.nccl` (by default loaded through minigrad.core.backend); `device` is the GPU index,
    by default the local rank. Both are parameters so that the set-up can be read and tested without a GPU.
    """

    name = "nccl"

    def __init__(self, mpi: MpiCommunicator, nccl: Any = None, device: int | None = None) -> None:
        self.mpi = mpi
        self.rank, self.size = mpi.rank, mpi.size
        self.nccl = nccl if nccl is not None else backend.load_nccl()
        self._gpu = nccl is None
        # This rank's GPU. Put its tensors on f"cuda:{device}": minigrad's "cuda" means GPU 0, not the current one.
        self.device = (mpi.on_this_machine()[0] if self._gpu else 0) if device is None else device
        if self._gpu:  # a real GPU: make it current before NCCL binds to the current device
            backend.use_cuda_device(self.device)
        uid = share_unique_id(mpi, self.nccl)
        self.comm = self.nccl.NcclCommunicator(self.size, uid, self.rank)

    def _on_gpu(self, array: Any) -> bool:
        """Whether `array` is a CuPy array (the NCCL path)."""
        return backend.backend_of(array).name == "cuda"

    @staticmethod
    def _stream(array: Any) -> int:
        """The current CUDA stream, so the collective is ordered after the kernels that wrote `array`."""
        return backend.get_array_module(array).cuda.get_current_stream().ptr

    def all_reduce_(self, array: Any, op: ReduceOp = ReduceOp.SUM) -> None:
        """Combine `array` over all ranks, in place: ncclAllReduce for CuPy arrays, MPI for the others."""
        if not self._on_gpu(array):
            self.mpi.all_reduce_(array, op)
            return
        ptr = array.data.ptr
        self.comm.allReduce(ptr, ptr, array.size, nccl_dtype(self.nccl, array.dtype),
                            getattr(self.nccl, _NCCL_OPS[op]), self._stream(array))
        if op is ReduceOp.AVG:
            array /= self.size

    def broadcast_(self, array: Any, src: int) -> None:
        """Overwrite `array` on every rank with rank src's, in place (ncclBcast for CuPy arrays)."""
        if not self._on_gpu(array):
            self.mpi.broadcast_(array, src)
            return
        self.comm.bcast(array.data.ptr, array.size, nccl_dtype(self.nccl, array.dtype), src, self._stream(array))

    def barrier(self) -> None:
        """Wait for this GPU's queued work, then for every rank."""
        if self._gpu:
            backend.backend_for_device("cuda").xp.cuda.get_current_stream().synchronize()
        self.mpi.barrier()

    def allgather_bytes(self, data: bytes) -> list[bytes]:
        """Every rank's `data`, in rank order (small host messages: over MPI)."""
        return self.mpi.allgather_bytes(data)

    def abort(self, code: int = 1) -> None:
        """End every rank: NCCL's pending calls first (they would never finish), then MPI_Abort."""
        self.comm.abort()
        self.mpi.abort(code)

    def close(self) -> None:
        """Free NCCL's resources (its own threads and buffers on the GPU)."""
        self.comm.destroy()
