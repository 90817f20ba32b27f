"""`minigrad-viz` (or `python -m minigrad.viz`): draw a computation graph to a file.

    minigrad-viz                                   # a 2-layer MLP's loss -> mlp_graph.svg
    minigrad-viz --checkpoint out/ --collapse      # a minigpt checkpoint's forward pass, one node per block
    minigrad-viz --format png --out graph.png --grads

With no graphviz `dot` program installed it writes the `.dot` text and says how to install graphviz.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from minigrad.serialization import read_bytes
from minigrad.viz.graph import record_modules
from minigrad.viz.render import FORMATS, draw_to_file


def mlp_example() -> tuple[mg.Tensor, nn.Module]:
    """The loss of a 2-layer MLP (3 -> 4 -> 2, tanh) on 5 points: small enough to read every node."""
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    x = mg.tensor(np.random.default_rng(0).normal(size=(5, 3)))
    x.name = "x"
    with record_modules(model):
        loss = F.cross_entropy(model(x), np.array([0, 1, 1, 0, 1]))
    loss.name = "loss"
    return loss, model


def checkpoint_example(folder: Path, tokens: int) -> tuple[mg.Tensor, Any]:
    """The loss of a minigpt checkpoint's forward pass on `tokens` token ids (minigpt imported only here)."""
    from minigpt import GPT, GPTConfig

    config = json.loads(read_bytes(folder / "config.json", 2**20).decode("utf-8"))  # a regular file, 1 MiB at most
    config = config.get("model", config)  # the training helper nests the model's fields under "model"
    fields = GPTConfig.__dataclass_fields__
    model = GPT(GPTConfig(**{key: value for key, value in config.items() if key in fields}))
    model.load_state_dict(mg.load(folder / "model.safetensors"))
    model.eval()
    T = min(tokens, model.config.block_size)
    idx = np.arange(T).reshape(1, T) % model.config.vocab_size  # (1, T): any ids will do for the graph's shape
    with record_modules(model):
        _, loss = model(idx, np.roll(idx, -1, axis=1))
    loss.name = "loss"
    return loss, model


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="minigrad-viz", description="Draw a minigrad computation graph.")
    parser.add_argument("--checkpoint", type=Path, help="a minigpt checkpoint folder (model.safetensors, config.json)")
    parser.add_argument("--tokens", type=int, default=8, help="sequence length of the checkpoint's forward pass")
    parser.add_argument("--collapse", nargs="?", const=True, default=None, metavar="PATTERN",
                        help="draw modules as one node each: every numbered block, or those matching PATTERN "
                             "(e.g. 'transformer.h.*')")
    parser.add_argument("--depth", type=int, help="nest module clusters at most this deep")
    parser.add_argument("--format", choices=FORMATS, default="svg")
    parser.add_argument("--out", type=Path, help="output file (default: mlp_graph.FORMAT or gpt_graph.FORMAT)")
    parser.add_argument("--rankdir", choices=("LR", "TB"), help="layout direction (default LR; TB for a GPT)")
    parser.add_argument("--grads", action="store_true", help="show and colour by each tensor's gradient norm")
    parser.add_argument("--values", action="store_true", help="show the values of small tensors")
    args = parser.parse_args(argv)
    if args.checkpoint is not None:
        if not (args.checkpoint / "config.json").is_file():
            parser.exit(2, f"minigrad-viz: error: {args.checkpoint} is not a checkpoint folder (no config.json)\n")
        loss, model = checkpoint_example(args.checkpoint, args.tokens)
        default_name, rankdir = "gpt_graph", "TB"
    else:
        loss, model = mlp_example()
        default_name, rankdir = "mlp_graph", "LR"
    out = args.out or Path(f"{default_name}.{args.format}")
    written = draw_to_file(loss, out, format=args.format, model=model, collapse=args.collapse, depth=args.depth,
                           rankdir=args.rankdir or rankdir, grads=args.grads, values=args.values)
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
