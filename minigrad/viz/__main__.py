"""`minigrad-viz` (or `python -m minigrad.viz`): draw a computation graph to a file.

    minigrad-viz                                   # a 2-layer MLP's loss -> mlp_graph.svg
    minigrad-viz --format png --out graph.png --grads

With no graphviz `dot` program installed it writes the `.dot` text and says how to install graphviz.
The engine's own example only: a trained GPT's graph is drawn by `minigpt draw`, which loads its checkpoint
with every check (the engine never imports the model built on it).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="minigrad-viz", description="Draw a minigrad computation graph.")
    parser.add_argument("--collapse", nargs="?", const=True, default=None, metavar="PATTERN",
                        help="draw modules as one node each: every numbered block, or those matching PATTERN "
                             "(e.g. 'transformer.h.*')")
    parser.add_argument("--depth", type=int, help="nest module clusters at most this deep")
    parser.add_argument("--format", choices=FORMATS, default="svg")
    parser.add_argument("--out", type=Path, help="output file (default: mlp_graph.FORMAT)")
    parser.add_argument("--rankdir", choices=("LR", "TB"), default="LR", help="layout direction (default: LR)")
    parser.add_argument("--grads", action="store_true", help="show and colour by each tensor's gradient norm")
    parser.add_argument("--values", action="store_true", help="show the values of small tensors")
    args = parser.parse_args(argv)
    loss, model = mlp_example()
    out = args.out or Path(f"mlp_graph.{args.format}")
    written = draw_to_file(loss, out, format=args.format, model=model, collapse=args.collapse, depth=args.depth,
                           rankdir=args.rankdir, grads=args.grads, values=args.values)
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
