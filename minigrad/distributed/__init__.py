"""minigrad.distributed: data-parallel training over MPI (CPU) or NCCL (GPUs), with torch.distributed's names.

    mpiexec -n 2 python train.py

    import minigrad.distributed as dist
    dist.init_process_group("mpi")
    model = dist.DistributedDataParallel(model)   # rank 0's weights on every rank
    loss = model(x_my_half, y_my_half)[1]         # each rank: its own share of the batch
    loss.backward()
    model.sync_gradients()                        # the gradients, averaged over the ranks
    optimizer.step()                              # the same step on every rank

What is in it: mpi.py (the MPI backend, ReduceOp), nccl.py (the NCCL backend),
process_group.py (init_process_group, get_rank, all_reduce, broadcast, barrier, ...), ddp.py
(DistributedDataParallel). mpi4py is an optional extra: pip install -e '.[mpi]'.
"""

from minigrad.distributed.ddp import DistributedDataParallel, ParameterMismatchError
from minigrad.distributed.mpi import ReduceOp
from minigrad.distributed.process_group import (
    all_reduce,
    barrier,
    broadcast,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_initialized,
)

__all__ = [
    "DistributedDataParallel", "ParameterMismatchError", "ReduceOp", "all_reduce", "barrier", "broadcast",
    "destroy_process_group", "get_backend", "get_rank", "get_world_size", "init_process_group", "is_initialized",
]
