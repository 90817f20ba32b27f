"""Train nanoGPT's CPU configuration on the built-in Shakespeare corpus, with minigpt and with PyTorch.

nanoGPT's README trains a "baby GPT" on a laptop CPU with: 4 layers, 4 heads, 128 wide, context 64,
batch 12, 2000 iterations, dropout 0, lr 1e-3 with warmup and cosine decay. This script runs exactly
that with `minigpt train`'s own loop, then (where PyTorch is installed) the same model from the same
initial weights, on the same batches, with the same schedule, through the PyTorch reference GPT
(minigpt/testing/torch_gpt.py), and prints wall time, tokens/s and the final losses side by side,
then a sample of the minigpt model.

    python benchmarks/train_shakespeare.py                     # 2000 iterations: minutes on a 2-core CPU
    python benchmarks/train_shakespeare.py --max-iters 200     # a shorter check
    python benchmarks/train_shakespeare.py --skip-torch

Small matrices gain nothing from several BLAS threads, and lose a lot when the machine is busy; for
comparable numbers run both sides on one thread: `OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python ...`.
The thread counts used are printed with the results.
"""

from __future__ import annotations

import argparse
import importlib.util
import math
import os
import statistics
import time

import numpy as np

import minigrad as mg
from minigpt.checkpoint import load_model
from minigpt.config import GPTConfig
from minigpt.data import get_batch, load_dataset
from minigpt.evaluation import read_metrics
from minigpt.model import GPT
from minigpt.train import TrainConfig, train
from minigrad import optim

# -----------------------------------------------------------------------------
# nanoGPT's CPU configuration (its README: "baby GPT" on a MacBook CPU)
n_layer, n_head, n_embd, block_size, batch_size, dropout = 4, 4, 128, 64, 12, 0.0
max_iters, lr, warmup_iters, weight_decay, grad_clip = 2000, 1e-3, 100, 0.1, 1.0
eval_interval, eval_iters, seed = 250, 20, 1337
# -----------------------------------------------------------------------------


def run_minigpt(cfg: TrainConfig) -> dict[str, float]:
    """`minigpt train`'s loop, as the command runs it; the numbers come from its metrics log."""
    start = time.perf_counter()
    train(cfg)
    wall = time.perf_counter() - start
    metrics = read_metrics(cfg.out_dir)
    last = [m for m in metrics if "val_loss" in m][-1]
    speeds = [m["tokens_per_s"] for m in metrics if "tokens_per_s" in m]
    return {"wall_s": wall, "tokens_per_s": statistics.median(speeds), "train_loss": last["train_loss"],
            "val_loss": last["val_loss"]}


def run_torch(cfg: TrainConfig) -> dict[str, float]:
    """The same run in PyTorch: same initial weights, same batches, same schedule, same evaluation batches."""
    import torch

    from minigpt.testing.torch_gpt import load_minigpt

    data = load_dataset(cfg.data, cfg.block_size)
    mg.manual_seed(cfg.seed)  # as train() does, so the initial weights are the same
    model = GPT(train_model_config(cfg, data.tokenizer.vocab_size))
    reference = load_minigpt(model)
    reference.train()
    params = list(reference.parameters())  # the tied embedding appears once
    decay, no_decay = [p for p in params if p.dim() >= 2], [p for p in params if p.dim() < 2]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
    batch_rng = np.random.default_rng(cfg.seed)

    @torch.no_grad()
    def estimate_val_loss() -> dict[str, float]:
        reference.eval()
        rng = np.random.default_rng([cfg.seed, 1])  # train.estimate_loss's evaluation batches
        out = {}
        for split, ids in (("train", data.train), ("val", data.val)):
            losses = []
            for _ in range(cfg.eval_iters):
                x, y = get_batch(ids, cfg.batch_size, cfg.block_size, rng)
                losses.append(reference(torch.from_numpy(x), torch.from_numpy(y))[1].item())
            out[split] = float(np.mean(losses))
        reference.train()
        return out

    start, tokens_per_s, t_log = time.perf_counter(), [], time.perf_counter()
    for it in range(cfg.max_iters):
        if it % cfg.eval_interval == 0:
            estimate_val_loss()  # evaluated as often as minigpt, so that the wall times compare
            t_log = time.perf_counter()
        for group in optimizer.param_groups:
            group["lr"] = optim.cosine_with_warmup(it, cfg.lr, cfg.warmup_iters, cfg.max_iters, cfg.lr / 10)
        x, y = get_batch(data.train, cfg.batch_size, cfg.block_size, batch_rng)
        # forward
        _, loss = reference(torch.from_numpy(x), torch.from_numpy(y))
        # backward
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(params, cfg.grad_clip)
        # update
        optimizer.step()
        if (it + 1) % cfg.log_interval == 0:
            now = time.perf_counter()
            tokens_per_s.append(cfg.log_interval * cfg.batch_size * cfg.block_size / (now - t_log))
            t_log = now
    losses = estimate_val_loss()
    return {"wall_s": time.perf_counter() - start, "tokens_per_s": statistics.median(tokens_per_s),
            "train_loss": losses["train"], "val_loss": losses["val"]}


def train_model_config(cfg: TrainConfig, vocab_size: int) -> GPTConfig:
    """The model train() builds for `cfg`."""
    return GPTConfig(vocab_size=vocab_size, block_size=cfg.block_size, n_layer=cfg.n_layer, n_head=cfg.n_head,
                     n_embd=cfg.n_embd, dropout=cfg.dropout, bias=cfg.bias)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-iters", type=int, default=max_iters)
    parser.add_argument("--out-dir", default="out/bench-shakespeare")
    parser.add_argument("--skip-torch", action="store_true", help="only minigpt")
    args = parser.parse_args()

    # 1. the configuration
    cfg = TrainConfig(out_dir=args.out_dir, data=None, n_layer=n_layer, n_head=n_head, n_embd=n_embd,
                      block_size=block_size, batch_size=batch_size, dropout=dropout, max_iters=args.max_iters,
                      lr=lr, warmup_iters=min(warmup_iters, args.max_iters), weight_decay=weight_decay,
                      grad_clip=grad_clip, eval_interval=eval_interval, eval_iters=eval_iters, seed=seed,
                      overwrite=True)  # each run of the benchmark starts afresh
    threads = f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"
    print(f"nanoGPT CPU configuration, {cfg.max_iters} iterations, {os.cpu_count()} CPUs, {threads}")

    # 2. minigpt
    results = {"minigpt": run_minigpt(cfg)}

    # 3. PyTorch, where it is installed
    if not args.skip_torch and importlib.util.find_spec("torch") is not None:
        import torch

        print(f"PyTorch {torch.__version__}, {torch.get_num_threads()} threads: the same run")
        results["PyTorch"] = run_torch(cfg)

    # 4. the table, then a sample
    names = list(results)
    print()
    print("| | " + " | ".join(names) + " |")
    print("|---|" + "---:|" * len(names))
    rows = [("wall time (s, incl. evaluation)", "wall_s", "{:.1f}"),
            ("tokens/s (training)", "tokens_per_s", "{:,.0f}"),
            ("final train loss", "train_loss", "{:.4f}"), ("final val loss", "val_loss", "{:.4f}")]
    for label, key, form in rows:
        print(f"| {label} | " + " | ".join(form.format(results[n][key]) for n in names) + " |")
    if "PyTorch" in results:
        ratio = results["minigpt"]["wall_s"] / results["PyTorch"]["wall_s"]
        print(f"\nminigpt takes {ratio:.1f}x PyTorch's wall time; val losses differ by "
              f"{abs(results['minigpt']['val_loss'] - results['PyTorch']['val_loss']):.4f}")
    assert all(math.isfinite(r["val_loss"]) for r in results.values())

    model, tokenizer = load_model(cfg.out_dir)
    mg.manual_seed(seed)
    ids = model.generate([tokenizer.encode("\n")], 500, temperature=0.8)
    print("\nA sample from the minigpt model (temperature 0.8):\n" + tokenizer.decode(ids[0][1:]))


if __name__ == "__main__":
    main()
