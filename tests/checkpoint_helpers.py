"""Checkpoints for the checkpoint tests, made in milliseconds: `write_checkpoint` saves a tiny model without
training it, `rewrite` changes one file of a checkpoint and its manifest entry alike (as a hostile folder
would), and `snapshot` reads a folder's files for before/after comparisons.

Read next: test_checkpoint.py (atomic saves), test_hostile_files.py (damaged and hostile folders).
"""

import hashlib
import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

import minigrad as mg
from minigpt import GPT, CharTokenizer, GPTConfig, checkpoint
from minigpt.train import TrainConfig
from minigrad import optim

TEXT = "First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n" * 30
SETTINGS = dict(n_layer=1, n_head=2, n_embd=16, block_size=8, batch_size=4, eval_iters=1)


def write_checkpoint(out_dir, iter_num, seed=0, data_path=None):
    """Save the checkpoint of a tiny untrained model (weights from `seed`) as iteration `iter_num`.

    With `data_path` (a file holding TEXT) the checkpoint can be resumed from, as if trained on it.
    """
    cfg = TrainConfig(data=str(data_path) if data_path else None, max_iters=iter_num, lr_decay_iters=iter_num,
                      **SETTINGS)
    tokenizer = CharTokenizer.from_text(TEXT)
    mg.manual_seed(seed)
    model = GPT(GPTConfig(vocab_size=tokenizer.vocab_size, block_size=cfg.block_size, n_layer=cfg.n_layer,
                          n_head=cfg.n_head, n_embd=cfg.n_embd, bias=cfg.bias))
    # As train() makes it: weight decay on the 2-D weights only; one step, so that there are moments to save.
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    optimizer = optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
    for p in model.parameters():
        p.grad = mg.ones(*p.shape)
    optimizer.step()
    config = {"model": model.config.to_dict(), "train": asdict(cfg),
              "data": {"name": str(data_path), "sha256": hashlib.sha256(TEXT.encode()).hexdigest()},
              "schedule": {"lr": cfg.lr, "min_lr": cfg.lr / 10, "warmup_iters": cfg.warmup_iters,
                           "lr_decay_iters": iter_num, "lr_decay_iters_from": "--max-iters"}}
    rng = np.random.default_rng(seed)
    state = {"iter_num": iter_num, "best_val_loss": 3.5, "batch_rng": rng.bit_generator.state,
             "minigrad_rng": mg.random.get_rng_state()}
    metrics = [{"iter": i, "loss": 3.0, "lr": 1e-3} for i in range(1, iter_num + 1)]
    checkpoint.save_checkpoint(out_dir, model, optimizer, tokenizer, config, state, metrics, allow_earlier=True)
    return model


def rewrite(out_dir, name, data):
    """Replace `name` in the checkpoint with `data` (bytes, or a JSON-ready value) and record it in the manifest,
    so that only the file's content, not its hash, gives it away."""
    out_dir = Path(out_dir)
    if not isinstance(data, bytes):
        data = json.dumps(data).encode()
    (out_dir / name).write_bytes(data)
    if name == checkpoint.MANIFEST:  # it has no entry of its own
        return
    manifest = json.loads((out_dir / checkpoint.MANIFEST).read_text())
    manifest["files"][name] = {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}
    (out_dir / checkpoint.MANIFEST).write_text(json.dumps(manifest))


def read_json(out_dir, name):
    return json.loads((Path(out_dir) / name).read_text())


def snapshot(out_dir):
    """Every file under `out_dir`, name -> bytes (to show that nothing changed)."""
    out_dir = Path(out_dir)
    return {str(p.relative_to(out_dir)): p.read_bytes() for p in sorted(out_dir.rglob("*")) if p.is_file()}
