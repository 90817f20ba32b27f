"""The MPI backend: collective calls on arrays through mpi4py, one process per rank.

MPI (the Message Passing Interface) is how the field has run one program on many processes for thirty years:
`mpiexec -n 4 python train.py` starts four copies, each learns its rank (0..3) and the world size (4), and they
meet in *collective* calls: every rank calls `Allreduce(buffer)` and every rank's buffer then holds the sum of
all of them. A collective returns only when every rank has made it, so every rank must make the same calls in
the same order: one rank that skips a call leaves the others waiting forever.

`MpiCommunicator` wraps one mpi4py communicator with the few calls minigrad needs. NumPy arrays go to MPI as they
are (their memory is the message). Arrays on a device (CuPy, or the strict stand-in) are copied to the host and
back explicitly: the MPICH wheel cannot read GPU memory; the "nccl" backend (nccl.py) is the fast way for CuPy.
Read next: nccl.py, then process_group.py.
"""

from __future__ import annotations

from enum import Enum
from typing import Any

import numpy as np

from minigrad.core import backend

MISSING_MPI = "minigrad.distributed needs mpi4py and an MPI library: pip install -e '.[mpi]'"


class ReduceOp(Enum):
    """How all_reduce combines the ranks' arrays (torch.distributed.ReduceOp's names)."""

    SUM = "sum"
    PRODUCT = "product"
    MIN = "min"
    MAX = "max"
    AVG = "avg"  # the sum divided by the world size


def load_mpi() -> Any:
    """mpi4py's MPI module (importing it starts MPI in this process), or a one-line error naming the extra."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise RuntimeError(MISSING_MPI) from error
    return MPI


def _mpi_op(MPI: Any, op: ReduceOp) -> Any:
    """MPI's operation for op (AVG is a SUM that the caller divides)."""
    return {ReduceOp.SUM: MPI.SUM, ReduceOp.AVG: MPI.SUM, ReduceOp.PRODUCT: MPI.PROD,
            ReduceOp.MIN: MPI.MIN, ReduceOp.MAX: MPI.MAX}[op]


class MpiCommunicator:
    """The ranks of one MPI communicator (COMM_WORLD by default) and the collective calls between them."""

    name = "mpi"

    def __init__(self, comm: Any = None) -> None:
        self.MPI = load_mpi()
        self.comm = comm if comm is not None else self.MPI.COMM_WORLD
        self.rank = self.comm.Get_rank()
        self.size = self.comm.Get_size()

    def all_reduce_(self, array: Any, op: ReduceOp = ReduceOp.SUM) -> None:
        """Combine `array` over all ranks, in place (a contiguous backend array)."""
        if type(array) is np.ndarray:
            self.comm.Allreduce(self.MPI.IN_PLACE, array, op=_mpi_op(self.MPI, op))
        else:  # a device array: through the host, explicitly (as_numpy out, xp.asarray back)
            host = np.ascontiguousarray(backend.as_numpy(array))
            self.comm.Allreduce(self.MPI.IN_PLACE, host, op=_mpi_op(self.MPI, op))
            array[...] = backend.get_array_module(array).asarray(host)
        if op is ReduceOp.AVG:
            array /= self.size

    def broadcast_(self, array: Any, src: int) -> None:
        """Overwrite `array` on every rank with rank src's, in place."""
        if type(array) is np.ndarray:
            self.comm.Bcast(array, root=src)
        else:
            host = np.ascontiguousarray(backend.as_numpy(array))
            self.comm.Bcast(host, root=src)
            array[...] = backend.get_array_module(array).asarray(host)

    def barrier(self) -> None:
        """Return only when every rank has called it."""
        self.comm.Barrier()

    def on_this_machine(self) -> tuple[int, int]:
        """(this rank's index among the ranks on its machine, how many ranks run on it): which GPU a rank
        takes, and how many BLAS threads each rank may use. A collective call."""
        node = self.comm.Split_type(self.MPI.COMM_TYPE_SHARED)
        try:
            return node.Get_rank(), node.Get_size()
        finally:
            node.Free()

    def allgather_bytes(self, data: bytes) -> list[bytes]:
        """Every rank's `data`, in rank order, on every rank (raw bytes: nothing is pickled)."""
        lengths = np.zeros(self.size, dtype=np.int64)
        self.comm.Allgather(np.array([len(data)], dtype=np.int64), lengths)
        gathered = np.zeros(int(lengths.sum()), dtype=np.uint8)
        self.comm.Allgatherv(np.frombuffer(data, dtype=np.uint8).copy(), [gathered, lengths])
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        return [gathered[offsets[r]:offsets[r + 1]].tobytes() for r in range(self.size)]

    def abort(self, code: int = 1) -> None:
        """End every rank of the job now (MPI_Abort): what a rank does when it cannot go on alone."""
        self.comm.Abort(code)

    def close(self) -> None:
        """Nothing to free: COMM_WORLD lives until the process ends (mpi4py finalizes MPI at exit)."""
