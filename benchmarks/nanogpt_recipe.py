"""nanoGPT's CPU recipe in PyTorch: the oracle for the validation loss `minigpt train` should reach on a text.

benchmarks/train_shakespeare.py runs minigpt and PyTorch from the same weights on the same batches: a check
of the engine, blind to the recipe, since both sides share it. This script is the other check: it trains
nanoGPT's character model as nanoGPT does it, with nothing taken from minigpt but the layer layout
(minigpt/testing/torch_gpt.py, nanoGPT's model.py without dropout), and prints the loss minigpt has to match.
What is nanoGPT's here, read from its data/shakespeare_char/prepare.py, train.py, model.py and README:

    data        the sorted characters of the whole text are the vocabulary; the first 90% is train, the
                last 10% val; a batch is batch_size windows at torch.randint positions
    model       bias=False (train.py's default: no biases in Linear and LayerNorm), exact GELU (nn.GELU()),
                wte tied to lm_head; normal(0, 0.02) Linear and Embedding weights, zero biases,
                normal(0, 0.02 / sqrt(2 n_layer)) for every c_proj.weight
    optimizer   AdamW, betas (0.9, 0.99), weight decay 0.1 on the parameters of 2 or more dimensions only,
                gradient norm clipped to 1.0
    schedule    lr * (it + 1) / (warmup + 1) for 100 iterations, then a cosine down to lr / 10 at 2000
    loop        torch.manual_seed(seed) before the model is built; one torch generator draws the weights,
                the training batches and the evaluation batches; estimate_loss every 250 iterations:
                eval_iters=20 random batches of each split in eval mode (the README's CPU command)

Beyond nanoGPT's own estimate, every run is scored on the full validation set (every val character
predicted once, in consecutive block_size windows), the same way for minigpt checkpoints (--minigpt DIR ...),
so that a difference between the two is not the noise of 20 random batches. The script also says where
minigpt's split, learning-rate schedule or `minigpt train` defaults differ from nanoGPT's.

    python benchmarks/nanogpt_recipe.py --data tinyshakespeare.txt --seeds 1337 1 2
    python benchmarks/nanogpt_recipe.py --data tinyshakespeare.txt --seeds 1337 --bias --gelu tanh
    python -m minigpt train --data tinyshakespeare.txt --seed 1 --out-dir /tmp/mg-1
    python benchmarks/nanogpt_recipe.py --data tinyshakespeare.txt --minigpt /tmp/mg-1   # score a checkpoint

Each training run takes a minute or two on one core (--threads, default 1).
"""

from __future__ import annotations

import argparse
import json
import math
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import minigrad as mg
from minigpt.checkpoint import load_model
from minigpt.config import GPTConfig
from minigpt.data import load_dataset
from minigpt.evaluation import read_metrics
from minigpt.testing.torch_gpt import TorchGPT
from minigpt.train import TrainConfig
from minigrad import optim

# -----------------------------------------------------------------------------
# nanoGPT's README CPU command: config/train_shakespeare_char.py with --device=cpu --compile=False
# --eval_iters=20 --block_size=64 --batch_size=12 --n_layer=4 --n_head=4 --n_embd=128 --max_iters=2000
# --lr_decay_iters=2000 --dropout=0.0
n_layer, n_head, n_embd, block_size, batch_size = 4, 4, 128, 64, 12
max_iters, lr_decay_iters, learning_rate, min_lr, warmup_iters = 2000, 2000, 1e-3, 1e-4, 100
weight_decay, beta1, beta2, grad_clip = 0.1, 0.9, 0.99, 1.0
eval_interval, eval_iters = 250, 20
# -----------------------------------------------------------------------------


def prepare(text: str) -> tuple[list[str], np.ndarray, np.ndarray]:
    """nanoGPT's prepare.py: the vocabulary (sorted characters) and the train / val ids, first 90% / last 10%."""
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    ids = np.array([stoi[ch] for ch in text], dtype=np.int64)
    n = len(ids)
    return chars, ids[:int(n * 0.9)], ids[int(n * 0.9):]


def get_lr(it: int) -> float:
    """nanoGPT's train.py get_lr: linear warmup, cosine decay to min_lr, then min_lr."""
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) * (learning_rate - min_lr)


def minigpt_differences(text_path: str, chars: list[str], train: np.ndarray, val: np.ndarray) -> list[str]:
    """Where minigpt's vocabulary, split, schedule or `minigpt train` defaults are not nanoGPT's (none: [])."""
    data = load_dataset(text_path, block_size)
    found = []
    if data.tokenizer.chars != chars:
        found.append("the vocabulary")
    if not (np.array_equal(data.train, train) and np.array_equal(data.val, val)):
        found.append("the train/val split")
    if any(not math.isclose(optim.cosine_with_warmup(it, learning_rate, warmup_iters, lr_decay_iters,
                                                     learning_rate / 10), get_lr(it), rel_tol=1e-12)
           for it in range(max_iters + 1)):
        found.append("the learning-rate schedule")
    nanogpt = dict(n_layer=n_layer, n_head=n_head, n_embd=n_embd, block_size=block_size, batch_size=batch_size,
                   max_iters=max_iters, lr=learning_rate, warmup_iters=warmup_iters, weight_decay=weight_decay,
                   beta1=beta1, beta2=beta2, grad_clip=grad_clip, eval_interval=eval_interval,
                   eval_iters=eval_iters, dropout=0.0, bias=False)
    defaults = TrainConfig()
    found += [f"train default {name}={getattr(defaults, name, None)!r} (nanoGPT: {value!r})"
              for name, value in nanogpt.items() if getattr(defaults, name, None) != value]
    return found


class GeluMLP(tnn.Module):
    """The MLP of a TorchGPT block with a chosen GELU: nanoGPT's nn.GELU() is "none" (exact erf)."""

    def __init__(self, mlp: tnn.Module, approximate: str) -> None:
        super().__init__()
        self.c_fc, self.c_proj, self.approximate = mlp.c_fc, mlp.c_proj, approximate  # the same Linear modules

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.c_proj(TF.gelu(self.c_fc(x), approximate=self.approximate))


def nanogpt_model(vocab_size: int, bias: bool, gelu: str) -> TorchGPT:
    """nanoGPT's GPT, initialised as its GPT.__init__ does (same module order, so the same draws per seed)."""
    config = GPTConfig(vocab_size=vocab_size, block_size=block_size, n_layer=n_layer, n_head=n_head,
                       n_embd=n_embd, bias=bias)
    model = TorchGPT(config)
    for block in model.transformer.h:
        block.mlp = GeluMLP(block.mlp, gelu)

    def init_weights(module: tnn.Module) -> None:
        if isinstance(module, tnn.Linear):
            tnn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                tnn.init.zeros_(module.bias)
        elif isinstance(module, tnn.Embedding):
            tnn.init.normal_(module.weight, mean=0.0, std=0.02)

    model.apply(init_weights)
    for name, p in model.named_parameters():
        if name.endswith("c_proj.weight"):  # the residual projections, scaled for depth (GPT-2 paper)
            tnn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * n_layer))
    return model


def full_val_loss(logits: Callable[[np.ndarray], np.ndarray], val: np.ndarray, batch: int = 256
                  ) -> dict[str, float]:
    """The mean loss over every val character, predicted in consecutive block_size windows (the last partial
    window left out); `logits(x)` gives a model's (B, T, V) logits as a NumPy array.

    Also how far one nanoGPT estimate (eval_iters batches of batch_size random windows) strays from it:
    the standard deviation of a window's mean loss over sqrt(eval_iters * batch_size)."""
    n_windows = (len(val) - 1) // block_size
    starts = np.arange(n_windows)[:, None] * block_size + np.arange(block_size)  # (N, T)
    window_losses = []
    for i in range(0, n_windows, batch):
        x, y = val[starts[i:i + batch]], val[starts[i:i + batch] + 1]
        z = logits(x).astype(np.float64)  # (B, T, V)
        z -= z.max(axis=-1, keepdims=True)
        log_probs = z - np.log(np.exp(z).sum(axis=-1, keepdims=True))
        window_losses.append(-np.take_along_axis(log_probs, y[..., None], axis=-1)[..., 0].mean(axis=1))
    losses = np.concatenate(window_losses)  # (N,): each window's mean loss
    return {"full_val": float(losses.mean()),
            "estimate_std": float(losses.std(ddof=1) / math.sqrt(eval_iters * batch_size))}


def train_nanogpt(train: np.ndarray, val: np.ndarray, vocab_size: int, seed: int, bias: bool, gelu: str
                  ) -> dict[str, float]:
    """One run of nanoGPT's train.py loop; the losses of its last evaluation (iteration max_iters)."""
    torch.manual_seed(seed)
    model = nanogpt_model(vocab_size, bias, gelu)
    params = {name: p for name, p in model.named_parameters()}  # the tied weight once
    optimizer = torch.optim.AdamW(
        [{"params": [p for p in params.values() if p.dim() >= 2], "weight_decay": weight_decay},
         {"params": [p for p in params.values() if p.dim() < 2], "weight_decay": 0.0}],
        lr=learning_rate, betas=(beta1, beta2))
    splits = {"train": torch.from_numpy(train), "val": torch.from_numpy(val)}

    def get_batch(split: str) -> tuple[torch.Tensor, torch.Tensor]:
        data = splits[split]
        ix = torch.randint(len(data) - block_size, (batch_size,))
        return (torch.stack([data[i:i + block_size] for i in ix]),
                torch.stack([data[i + 1:i + 1 + block_size] for i in ix]))

    @torch.no_grad()
    def estimate_loss() -> dict[str, float]:
        model.eval()
        out = {split: float(np.mean([model(*get_batch(split))[1].item() for _ in range(eval_iters)]))
               for split in ("train", "val")}
        model.train()
        return out

    @torch.no_grad()
    def logits(x: np.ndarray) -> np.ndarray:
        return model(torch.from_numpy(x))[0].numpy()

    start = time.perf_counter()
    x, y = get_batch("train")
    iter_num = 0
    while True:
        for group in optimizer.param_groups:
            group["lr"] = get_lr(iter_num)
        if iter_num % eval_interval == 0:
            losses = estimate_loss()
            print(f"  step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}", flush=True)
        if iter_num == max_iters:  # nanoGPT takes one more step here, after its last report: it changes nothing
            break
        _, loss = model(x, y)
        x, y = get_batch("train")  # drawn between forward and backward, as nanoGPT does
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        iter_num += 1
    model.eval()
    return {"train": losses["train"], "val": losses["val"], **full_val_loss(logits, val),
            "time_s": time.perf_counter() - start}


def score_minigpt(out_dir: str, chars: list[str], val: np.ndarray) -> dict[str, float]:
    """A minigpt checkpoint's own last estimate (its metrics log) and its loss on the full validation set."""
    model, tokenizer = load_model(out_dir)
    assert tokenizer.chars == chars, f"{out_dir} was trained on another vocabulary"
    model.eval()
    last = [m for m in read_metrics(out_dir) if "val_loss" in m][-1]

    @mg.no_grad()
    def logits(x: np.ndarray) -> np.ndarray:
        return model(x)[0].numpy()

    config = json.loads((Path(out_dir) / "config.json").read_text())
    return {"seed": config["train"]["seed"], "iter": last["iter"], "train": last["train_loss"],
            "val": last["val_loss"], **full_val_loss(logits, val)}


def print_table(title: str, rows: list[dict[str, float]]) -> None:
    print(f"\n{title}\n| seed | val (eval_iters={eval_iters}) | val (full set) | train (eval_iters={eval_iters}) |")
    print("|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['seed']} | {row['val']:.4f} | {row['full_val']:.4f} | {row['train']:.4f} |")
    if len(rows) > 1:
        means = {k: np.mean([r[k] for r in rows]) for k in ("val", "full_val", "train")}
        print(f"| mean | {means['val']:.4f} | {means['full_val']:.4f} | {means['train']:.4f} |")
    spread = np.mean([r["estimate_std"] for r in rows])
    print(f"(one estimate of eval_iters={eval_iters} batches strays from the full-set loss by {spread:.4f}, "
          "one standard deviation)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, help="the text file (tiny Shakespeare for nanoGPT's figures)")
    parser.add_argument("--seeds", type=int, nargs="*", default=[], help="train nanoGPT's recipe with these seeds")
    parser.add_argument("--bias", action="store_true", help="biases in Linear and LayerNorm (nanoGPT: none)")
    parser.add_argument("--gelu", choices=["none", "tanh"], default="none",
                        help="GELU's approximate= (nanoGPT: none, the exact erf form)")
    parser.add_argument("--minigpt", nargs="*", default=[], metavar="DIR", help="minigpt checkpoints to score")
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1: the machine is shared)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    text = Path(args.data).read_text(encoding="utf-8")
    chars, train, val = prepare(text)
    print(f"{args.data}: vocabulary {len(chars)}, {len(train):,} train / {len(val):,} val characters; "
          f"PyTorch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    differences = minigpt_differences(args.data, chars, train, val)
    print("minigpt differs from nanoGPT in: " + "; ".join(differences) if differences
          else "minigpt's vocabulary, split, schedule and train defaults are nanoGPT's")

    if args.seeds:
        rows = []
        for seed in args.seeds:
            print(f"nanoGPT recipe, seed {seed}, bias={args.bias}, gelu approximate={args.gelu!r}")
            rows.append({"seed": seed, **train_nanogpt(train, val, len(chars), seed, args.bias, args.gelu)})
            print(f"  {rows[-1]['time_s']:.0f} s; full val loss {rows[-1]['full_val']:.4f}", flush=True)
        print_table(f"nanoGPT recipe in PyTorch (bias={args.bias}, GELU approximate={args.gelu!r}), "
                    f"iteration {max_iters}:", rows)
    if args.minigpt:
        print_table("minigpt checkpoints:", [score_minigpt(d, chars, val) for d in args.minigpt])


if __name__ == "__main__":
    main()
