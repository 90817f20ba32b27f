"""A fingerprint of what minigrad and minigpt compute, to show that a refactor changed no result.

It hashes, through the public API only (so it runs unchanged before and after files move):
1. a small GPT's logits, loss and every parameter's gradient, for each positional encoding and both norm
   positions, in float32 (the kernels' dtype) and float64;
2. one AdamW step's new parameters and moment buffers;
3. first and second derivatives (create_graph) through every fused op and the fused reductions;
4. with `--train`, the weights a fixed-seed, one-thread `minigpt train` run writes.

Run it before and after a change, with and without the kernels (`MINIGRAD_KERNELS=numpy`); equal lines mean
equal results, bit for bit:

    python scripts/behaviour_hash.py --train
    MINIGRAD_KERNELS=numpy python scripts/behaviour_hash.py --train
"""

from __future__ import annotations

import argparse
import hashlib
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigpt import GPT, GPTConfig


def digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        a = a.numpy() if isinstance(a, mg.Tensor) else np.asarray(a)
        h.update(str((a.shape, a.dtype)).encode())
        h.update(np.ascontiguousarray(a).tobytes())
    return h.hexdigest()[:16]


def gpt_fingerprint(dtype: str, pos_encoding: str, norm_position: str) -> tuple[str, str]:
    """(forward-and-backward hash, AdamW-step hash) of a small GPT on fixed ids."""
    mg.manual_seed(0)
    config = GPTConfig(vocab_size=29, block_size=16, n_layer=2, n_head=2, n_embd=24, bias=True,
                       pos_encoding=pos_encoding, norm_position=norm_position)
    model = GPT(config)
    if dtype == "float64":
        model.double()
    rng = np.random.default_rng(1)
    idx = rng.integers(0, 29, size=(3, 16))
    targets = rng.integers(0, 29, size=(3, 16))
    logits, loss = model(idx, targets)
    loss.backward()
    named = list(model.named_parameters())
    forward_backward = digest(logits, loss, *[p.grad for _, p in named])
    optimizer = mg.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    optimizer.step()
    optimizer.step()  # a second step: the moment buffers feed in
    state = optimizer.state_dict()["state"]
    buffers = [np.asarray(getattr(v, "data", v)) for s in state.values() for v in s.values()
               if hasattr(v, "shape") or hasattr(getattr(v, "data", None), "shape")]
    return forward_backward, digest(*[p for _, p in named], *buffers)


def double_backward_fingerprint(dtype: str) -> str:
    """First and second derivatives through every fused op, each as y = f(x); g = dL/dx (create_graph);
    gg = d(sum(g * w))/dx."""
    rng = np.random.default_rng(2)

    def leaf(*shape, positive=False):
        a = rng.standard_normal(shape)
        return mg.tensor(np.abs(a) + 0.5 if positive else a, dtype=dtype, requires_grad=True)

    ids = rng.integers(0, 7, size=(4, 5))
    causal = np.tril(np.ones((5, 5), dtype=bool))
    cases = {
        "softmax": (lambda x: F.softmax(x, dim=-1), (leaf(3, 7),)),
        "log_softmax": (lambda x: F.log_softmax(x, dim=-1), (leaf(3, 7),)),
        "cross_entropy": (lambda x: F.cross_entropy(x, ids.reshape(-1)[:6] % 7), (leaf(6, 7),)),
        "layer_norm": (lambda x, w, b: F.layer_norm(x, (7,), w, b), (leaf(3, 7), leaf(7), leaf(7))),
        "gelu": (lambda x: F.gelu(x), (leaf(3, 7),)),
        "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh"), (leaf(3, 7),)),
        "attention_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                             (leaf(2, 5, 4), leaf(2, 5, 4), leaf(2, 5, 4))),
        "attention_mask": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, attn_mask=causal),
                           (leaf(2, 5, 4), leaf(2, 5, 4), leaf(2, 5, 4))),
        "embedding": (lambda w: F.embedding(ids, w), (leaf(7, 3),)),
        "std": (lambda x: x.std(dim=1), (leaf(3, 7),)),
        "prod": (lambda x: x.prod(dim=1), (leaf(3, 7, positive=True),)),
        "cumprod": (lambda x: x.cumprod(dim=1), (leaf(3, 7, positive=True),)),
    }
    parts = []
    for fn, inputs in cases.values():
        y = fn(*inputs)
        weight = mg.tensor(rng.standard_normal(y.shape), dtype=dtype)
        grads = mg.grad((y * weight).sum(), list(inputs), create_graph=True)
        squares = [(g * g).sum() for g in grads if g.requires_grad]  # a linear op's gradient is a constant
        second = mg.grad(sum(squares), list(inputs), allow_unused=True) if squares else ()
        parts.append(digest(y, *grads, *[s for s in second if s is not None]))
    return digest(np.frombuffer("".join(parts).encode(), dtype=np.uint8))


def training_fingerprint() -> str:
    """The weights of a fixed-seed, one-thread training run, hashed as the file `minigpt train` writes."""
    with tempfile.TemporaryDirectory() as out_dir:
        subprocess.run([sys.executable, "-m", "minigpt", "train", "--out-dir", out_dir, "--max-iters", "30",
                        "--eval-interval", "15", "--threads", "1", "--seed", "3", "--n-layer", "2",
                        "--n-embd", "32", "--n-head", "2", "--block-size", "32", "--batch-size", "4"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return hashlib.sha256((Path(out_dir) / "model.safetensors").read_bytes()).hexdigest()[:16]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--train", action="store_true", help="also hash a short fixed-seed training run")
    args = parser.parse_args()
    print(f"MINIGRAD_KERNELS={os.environ.get('MINIGRAD_KERNELS', '')}")
    for dtype in ("float32", "float64"):
        for pos in ("learned", "sinusoidal", "rope", "none"):
            for norm in ("pre", "post"):
                fb, step = gpt_fingerprint(dtype, pos, norm)
                print(f"gpt {dtype} {pos:10s} {norm:4s} forward+backward {fb}  adamw {step}")
        print(f"double backward {dtype}: {double_backward_fingerprint(dtype)}")
    if args.train:
        print(f"train --threads 1 --seed 3 (30 steps): {training_fingerprint()}")


if __name__ == "__main__":
    main()
