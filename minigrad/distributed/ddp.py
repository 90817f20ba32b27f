"""DistributedDataParallel: the same model on every rank, each rank on its own slice of the batch.

Data parallelism in three facts:
1. Every rank holds the same weights (rank 0's, broadcast when the wrapper is made).
2. Each rank runs forward and backward on its own B/N examples; the loss is a mean, so the gradient of the
   whole batch of B is the mean of the N ranks' gradients:  g = (1/N) * sum_r g_r.
3. One all-reduce per step averages them; every rank then takes the same optimizer step from the same
   gradient, so the weights stay identical without ever being sent again.

The gradients travel in a few large flat buckets rather than one message per tensor: every message has a fixed
cost, and a GPT has about a dozen tensors per layer. A parameter whose gradient is None on a rank (a branch that
rank did not use) sends zeros, so every rank makes the same calls in the same order, which MPI requires.

PyTorch runs the all-reduce inside `loss.backward()`, through hooks on the parameters; minigrad's engine has
no such hooks yet, so here the step is `loss.backward(); model.sync_gradients(); optimizer.step()`. A forward
made while the previous forward's gradients were never averaged raises a clear error, so forgetting the call
fails at the second step on every rank instead of letting the ranks drift apart.
Read next: minigpt/distributed_training.py, the helpers a training loop needs around this wrapper.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from minigrad.core import backend
from minigrad.core.autograd import is_grad_enabled
from minigrad.distributed.mpi import ReduceOp
from minigrad.distributed.process_group import group
from minigrad.nn import Module
from minigrad.tensor import Tensor

BUCKET_CAP_MB = 25  # PyTorch's default bucket size


class ParameterMismatchError(RuntimeError):
    """The ranks hold different models (names, shapes or dtypes): raised on every rank, never a hang."""


def signature(module: Module) -> list[list[str]]:
    """[name, shape, dtype, device kind] of every parameter and persistent buffer, in order."""
    tensors = list(module.named_parameters()) + list(module.named_buffers(persistent_only=True))
    return [[name, str(tuple(t.shape)), str(t.dtype), backend.backend_of(t.array).name] for name, t in tensors]


def check_same_model(communicator: Any, module: Module) -> None:
    """Raise ParameterMismatchError on every rank when the ranks' models differ; name the first difference.

    One all-gather of a 32-byte hash per rank; only when they differ, one more of the full lists. Both are
    collective calls that every rank makes, so a mismatch is an error on every rank and never a deadlock.
    """
    mine = json.dumps(signature(module)).encode()
    hashes = communicator.allgather_bytes(hashlib.sha256(mine).digest())
    if len(set(hashes)) == 1:
        return
    lists = [json.loads(data) for data in communicator.allgather_bytes(mine)]
    reference = lists[0]
    for rank, entries in enumerate(lists[1:], start=1):
        for i in range(max(len(reference), len(entries))):
            ours = reference[i] if i < len(reference) else None
            theirs = entries[i] if i < len(entries) else None
            if ours != theirs:
                raise ParameterMismatchError(
                    f"DistributedDataParallel: the ranks hold different models: tensor #{i} is {_describe(ours)} "
                    f"on rank 0 but {_describe(theirs)} on rank {rank}")


def _describe(entry: list[str] | None) -> str:
    return "absent" if entry is None else f"{entry[0]} {entry[1]} {entry[2]} on {entry[3]}"


def make_buckets(params: list[Tensor], cap_bytes: int) -> list[list[Tensor]]:
    """Parameters in reverse order (the order backward produces their gradients), cut into buckets of at most
    cap_bytes (a larger tensor gets a bucket of its own); a bucket holds one dtype on one device."""
    buckets: list[list[Tensor]] = []
    size = 0
    for p in reversed(params):
        key = (p.dtype, backend.device_of(p.array))
        last = buckets[-1] if buckets else None
        full = size + p.array.nbytes > cap_bytes
        if last is None or (last[0].dtype, backend.device_of(last[0].array)) != key or full:
            buckets.append([])
            size = 0
        buckets[-1].append(p)
        size += p.array.nbytes
    return buckets


def average_bucket(communicator: Any, bucket: list[Tensor]) -> None:
    """Average the bucket's gradients over the ranks with one all-reduce of one flat buffer.

    The buffer is [every gradient, raveled | one has-a-gradient flag per parameter]: a missing gradient sends
    zeros and flag 0. Afterwards a parameter whose flag sums to 0 (no rank had a gradient) keeps None; the
    others get the sum divided by the world size, as PyTorch's DDP divides.
    """
    xp = backend.get_array_module(bucket[0].array)
    sizes = [p.array.size for p in bucket]
    total = sum(sizes)
    flat = xp.zeros(total + len(bucket), dtype=bucket[0].dtype)  # (numel + n_params,)
    offset = 0
    for i, (p, n) in enumerate(zip(bucket, sizes)):
        if p.grad is not None:
            flat[offset:offset + n] = p.grad.array.reshape(-1)
            flat[total + i] = 1
        offset += n
    communicator.all_reduce_(flat, ReduceOp.SUM)
    flat /= communicator.size
    had_grad = backend.as_numpy(flat[total:]) > 0  # one explicit copy of the flags, not one sync per parameter
    offset = 0
    for i, (p, n) in enumerate(zip(bucket, sizes)):
        averaged = flat[offset:offset + n].reshape(p.shape)
        if p.grad is not None:
            p.grad.array[...] = averaged
        elif had_grad[i]:
            p.grad = Tensor._make(averaged.copy(), False)
        offset += n


class DistributedDataParallel(Module):
    """Wrap `module` so that every rank trains the same weights on its own data (see the module docstring).

    At construction it checks that every rank holds the same parameters (ParameterMismatchError otherwise) and
    copies rank 0's weights and buffers to every rank. `sync_gradients()` after backward averages the gradients.
    `model.module` is the wrapped model; the state_dict's names start with "module.", as in PyTorch.
    """

    def __init__(self, module: Module, bucket_cap_mb: float = BUCKET_CAP_MB, broadcast_buffers: bool = True) -> None:
        super().__init__()
        self.module = module
        communicator = group()
        check_same_model(communicator, module)
        tensors = [p for p in module.parameters()]
        if broadcast_buffers:
            tensors += [b for _, b in module.named_buffers(persistent_only=True)]
        for t in tensors:
            communicator.broadcast_(t.array, src=0)
        self._buckets = make_buckets(list(module.parameters()), int(bucket_cap_mb * 2**20))
        self._pending = False  # a forward's gradients are waiting for sync_gradients()
        self._syncing = True  # False inside no_sync()

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        if self._pending:
            raise RuntimeError(
                "DistributedDataParallel: the gradients of the previous forward were never averaged: call "
                "model.sync_gradients() after loss.backward() (PyTorch does it inside backward; minigrad's "
                "engine has no gradient hooks yet), or run the forward inside model.no_sync()")
        if self._syncing and self.training and is_grad_enabled():
            self._pending = True
        return self.module(*args, **kwargs)

    def sync_gradients(self) -> None:
        """Average every parameter's gradient over the ranks, bucket by bucket (call it after loss.backward()).

        Every rank must call it the same number of times: it is a collective call.
        """
        communicator = group()
        for bucket in self._buckets:
            average_bucket(communicator, bucket)
        self._pending = False

    @contextmanager
    def no_sync(self) -> Iterator[None]:
        """Forwards inside accumulate gradients locally (gradient accumulation); the first forward after it, and
        its sync_gradients(), average the accumulated sum once (torch's no_sync)."""
        previous, self._syncing = self._syncing, False
        try:
            yield
        finally:
            self._syncing = previous
