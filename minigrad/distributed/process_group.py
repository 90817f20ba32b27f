"""The default process group and torch.distributed's functions on it: init, rank, size, all_reduce, broadcast.

    import minigrad.distributed as dist
    dist.init_process_group("mpi")          # under `mpiexec -n 2 python train.py`
    dist.get_rank(), dist.get_world_size()  # 0 or 1, 2
    dist.all_reduce(t)                      # t now holds the sum over both ranks, in place
    dist.destroy_process_group()

As in PyTorch there is one default group per process, made by `init_process_group` and used by every call
after it; calling any of them before it raises the same kind of error PyTorch raises.
Read next: ddp.py, which averages a model's gradients with these calls.
"""

from __future__ import annotations

from typing import Any

from minigrad.distributed.mpi import MpiCommunicator, ReduceOp
from minigrad.distributed.nccl import NcclCommunicator
from minigrad.tensor import Tensor

BACKENDS = ("mpi", "nccl")

# The one piece of state: the default group of this process (torch.distributed keeps it the same way).
_default_group: Any = None


def init_process_group(backend: str = "mpi", *, world_size: int = -1, rank: int = -1, comm: Any = None) -> None:
    """Join the job that `mpiexec` started: afterwards every rank can call all_reduce, broadcast and barrier.

    backend: "mpi" (mpi4py, any array: NumPy's directly, device arrays through the host) or "nccl" (CuPy
    arrays GPU to GPU through NCCL, its unique id shared over MPI; other arrays still through MPI).
    world_size and rank, when given, must agree with what MPI says (MPI, not the caller, numbers the ranks).
    comm: an mpi4py communicator to use instead of COMM_WORLD.
    """
    global _default_group
    if _default_group is not None:
        raise RuntimeError("trying to initialize the default process group twice!")
    if backend not in BACKENDS:
        raise ValueError(f"init_process_group: unknown backend {backend!r}; minigrad has {', '.join(BACKENDS)}")
    mpi = MpiCommunicator(comm)
    for name, given, actual in (("world_size", world_size, mpi.size), ("rank", rank, mpi.rank)):
        if given != -1 and given != actual:
            raise ValueError(f"init_process_group: {name}={given}, but MPI started this process as {actual}")
    _default_group = NcclCommunicator(mpi) if backend == "nccl" else mpi


def is_initialized() -> bool:
    """Whether init_process_group has been called (and destroy_process_group not since)."""
    return _default_group is not None


def group() -> Any:
    """The default group's communicator (MpiCommunicator or NcclCommunicator); an error before init."""
    if _default_group is None:
        raise RuntimeError("Default process group has not been initialized, please make sure to call "
                           "init_process_group.")
    return _default_group


def get_backend() -> str:
    """The default group's backend: 'mpi' or 'nccl'."""
    return group().name


def get_rank() -> int:
    """This process's rank: 0 .. world_size - 1."""
    return group().rank


def get_world_size() -> int:
    """How many processes the job has."""
    return group().size


def _data_of(tensor: Any, caller: str) -> Any:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{caller} takes a Tensor, not {type(tensor).__name__}")
    return tensor.array


def _in_place(tensor: Tensor, caller: str, collective: Any) -> None:
    """Run collective(array) on the tensor's data in place; a non-contiguous view goes through a copy."""
    data = _data_of(tensor, caller)
    if data.flags["C_CONTIGUOUS"]:
        collective(data)
    else:
        buffer = data.copy()
        collective(buffer)
        data[...] = buffer
    tensor._version += 1  # the data changed in place, as an in-place op would


def all_reduce(tensor: Tensor, op: ReduceOp = ReduceOp.SUM) -> None:
    """Combine `tensor` over all ranks, in place: with SUM every rank ends with the sum of every rank's tensor."""
    communicator = group()
    _in_place(tensor, "all_reduce", lambda data: communicator.all_reduce_(data, op))


def broadcast(tensor: Tensor, src: int) -> None:
    """Overwrite `tensor` on every rank with rank src's, in place."""
    communicator = group()
    if not 0 <= src < communicator.size:
        raise ValueError(f"broadcast: src={src}, but the ranks are 0..{communicator.size - 1}")
    _in_place(tensor, "broadcast", lambda data: communicator.broadcast_(data, src))


def barrier() -> None:
    """Return only when every rank has called barrier()."""
    group().barrier()


def destroy_process_group() -> None:
    """Leave the default group (free NCCL's resources); init_process_group may be called again after it."""
    global _default_group
    if _default_group is not None:
        _default_group.close()
    _default_group = None
