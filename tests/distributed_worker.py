"""One rank of the jobs that tests/test_distributed.py starts with `mpiexec -n 2 python distributed_worker.py ...`.

    python distributed_worker.py train sgd|adamw OUT_DIR   each rank trains on its half of every batch and saves
                                                           its weights to OUT_DIR/rank{r}.npz
    python distributed_worker.py train sgd OUT_DIR nccl    the same on the GPUs, over NCCL (one rank per GPU)
    python distributed_worker.py unused OUT_DIR            a parameter only rank 1 uses: both ranks still agree
    python distributed_worker.py collectives OUT_DIR       all_reduce and broadcast on cpu and strict tensors
    python distributed_worker.py mismatch                  rank 1 builds a wider model: ParameterMismatchError
    python distributed_worker.py exit|kill|raise|term      rank 1 dies (or is told to stop) mid-run; no hang
    python distributed_worker.py interrupt OUT_DIR         trains until Ctrl-C; all stop together, rank 0 saves
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad.distributed as dist
import minigrad.functional as F
from minigpt.distributed_training import RankGuard, is_writer
from minigrad import nn, optim

N_IN, N_OUT, BATCH, STEPS = 8, 4, 16, 10


def make_model(hidden: int = 32, seed: int = 0) -> nn.Module:
    """A small MLP; each rank starts from its own seed, so equal weights prove the broadcast."""
    mg.manual_seed(seed)
    return nn.Sequential(nn.Linear(N_IN, hidden), nn.GELU(), nn.Linear(hidden, N_OUT))


def global_batch(step: int) -> tuple[np.ndarray, np.ndarray]:
    """The step's whole batch (BATCH examples), the same on every rank and in the one-process reference."""
    rng = np.random.default_rng([7, step])
    return rng.standard_normal((BATCH, N_IN)).astype(np.float32), rng.integers(0, N_OUT, size=BATCH)


def make_optimizer(name: str, params: list) -> optim.Optimizer:
    if name == "sgd":
        return optim.SGD(params, lr=0.1, momentum=0.9)
    return optim.AdamW(params, lr=1e-2, weight_decay=0.1)


def train(optimizer_name: str, out_dir: Path) -> None:
    rank, size = dist.get_rank(), dist.get_world_size()
    device = f"cuda:{dist.process_group.group().device}" if dist.get_backend() == "nccl" else "cpu"
    model = dist.DistributedDataParallel(make_model(seed=100 + rank).to(device))
    optimizer = make_optimizer(optimizer_name, list(model.parameters()))
    share = BATCH // size
    for step in range(STEPS):
        x, y = global_batch(step)
        x, y = x[rank * share:(rank + 1) * share], y[rank * share:(rank + 1) * share]  # this rank's half
        # forward
        loss = F.cross_entropy(model(mg.tensor(x, device=device)), mg.tensor(y, device=device))
        # backward
        optimizer.zero_grad()
        loss.backward()
        model.sync_gradients()
        # update
        optimizer.step()
    np.savez(out_dir / f"rank{rank}.npz", **{k: v.numpy() for k, v in model.module.state_dict().items()})


class Branchy(nn.Module):
    """An MLP with a second head that only rank 1 uses: rank 0 has no gradient for it."""

    def __init__(self) -> None:
        super().__init__()
        self.body = make_model(seed=3)
        self.extra = nn.Linear(N_OUT, 1)

    def forward(self, x: mg.Tensor, use_extra: bool) -> mg.Tensor:
        h = self.body(x)
        return self.extra(h).sum() if use_extra else h.sum()


def unused(out_dir: Path) -> None:
    rank = dist.get_rank()
    model = dist.DistributedDataParallel(Branchy())
    x, _ = global_batch(0)
    model(mg.tensor(x), use_extra=rank == 1).backward()
    own = None if model.module.extra.weight.grad is None else model.module.extra.weight.grad.numpy().copy()
    model.sync_gradients()
    grads = {k: p.grad.numpy() for k, p in model.module.named_parameters()}
    np.savez(out_dir / f"rank{rank}.npz", **grads, **({} if own is None else {"own_extra": own}))


def collectives(out_dir: Path) -> None:
    """Each rank r holds r + 1 (and a transposed, non-contiguous view); the results go to OUT_DIR/rank{r}.npz."""
    rank = dist.get_rank()
    results = {}
    for device in ("cpu", "strict"):
        base = mg.tensor(np.arange(6, dtype=np.float32).reshape(2, 3) * (rank + 1), device=device)
        for op in (dist.ReduceOp.SUM, dist.ReduceOp.MAX, dist.ReduceOp.AVG):
            t = base.clone()
            dist.all_reduce(t, op=op)
            results[f"{device}_{op.name}"] = t.numpy()
        view = mg.tensor(base.numpy(), device=device)
        view.array = view.array.T  # a non-contiguous array: all_reduce must go through a copy
        dist.all_reduce(view)
        results[f"{device}_transposed"] = view.numpy()
        src = mg.tensor(np.full(4, 10.0 * (rank + 1), dtype=np.float32), device=device)
        dist.broadcast(src, src=1)
        results[f"{device}_broadcast"] = src.numpy()
        assert type(t.array).__name__ == ("ndarray" if device == "cpu" else "StrictArray")
    dist.barrier()
    results["on_this_machine"] = np.array(dist.process_group.group().on_this_machine())
    np.savez(out_dir / f"rank{rank}.npz", **results)


def mismatch() -> None:
    rank = dist.get_rank()
    try:
        dist.DistributedDataParallel(make_model(hidden=32 + 16 * rank))
    except dist.ParameterMismatchError as error:
        print(f"rank {rank} caught: {error}", flush=True)


def die(how: str) -> None:
    """Rank 1 goes at step 2: os._exit, SIGKILL, an exception (all end the job), or SIGTERM (a clean stop)."""
    rank = dist.get_rank()
    with RankGuard(dist.process_group.group()) as guard:
        model = dist.DistributedDataParallel(make_model())
        for step in range(1000):  # rank 0 would wait in sync_gradients for ever without MPI's clean-up
            if guard.stop_agreed():
                print(f"rank {rank} stopped after step {step} ({guard.stop_reason})", flush=True)
                break
            x, y = global_batch(step)
            F.cross_entropy(model(mg.tensor(x)), y).backward()
            if rank == 1 and step == 2:
                if how == "exit":
                    os._exit(3)
                if how in ("kill", "term"):
                    os.kill(os.getpid(), signal.SIGKILL if how == "kill" else signal.SIGTERM)
                else:
                    raise ValueError("a bad batch on rank 1")
            model.sync_gradients()
    sys.exit(guard.exit_code)


def interrupt(out_dir: Path) -> None:
    """Train until a signal comes; then every rank stops after the same step and rank 0 writes OUT_DIR/saved."""
    rank = dist.get_rank()
    with RankGuard(dist.process_group.group()) as guard:
        model = dist.DistributedDataParallel(make_model())
        (out_dir / f"started{rank}").write_text("")
        for step in range(10**6):
            if guard.stop_agreed():
                if is_writer(rank):
                    (out_dir / "saved").write_text(f"{guard.stop_reason} after {step} steps")
                (out_dir / f"stopped{rank}").write_text(str(step))
                break
            x, y = global_batch(step % 10)
            F.cross_entropy(model(mg.tensor(x)), y).backward()
            model.sync_gradients()
    sys.exit(guard.exit_code)


def main() -> None:
    scenario = sys.argv[1]
    dist.init_process_group(sys.argv[4] if scenario == "train" and len(sys.argv) > 4 else "mpi")
    if scenario == "train":
        train(sys.argv[2], Path(sys.argv[3]))
    elif scenario == "unused":
        unused(Path(sys.argv[2]))
    elif scenario == "collectives":
        collectives(Path(sys.argv[2]))
    elif scenario == "interrupt":
        interrupt(Path(sys.argv[2]))
    elif scenario == "mismatch":
        mismatch()
    else:
        die(scenario)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
