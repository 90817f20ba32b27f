"""`nn.utils.rnn.pad_sequence`, as in PyTorch: sequences of different lengths made one batch, the short ones
padded at the end (or the start) with `padding_value`. PyTorch's packed sequences are not here: they are refused
in one line (pad, then mask the padding).

    batch = pad_sequence([a, b, c], batch_first=True)   # (3, longest, *) from tensors (L_i, *)

Read next: ../optim/optimizer.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import minigrad
from minigrad.compat.functional_more import pad
from minigrad.tensor import Tensor

__all__ = ["pad_sequence"]


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors (L_i, *) into (longest, B, *), or (B, longest, *) with `batch_first`, each padded along its
    first dim with `padding_value` (after it, or before it with padding_side="left"); differentiable."""
    if padding_side not in ("left", "right"):
        raise ValueError(f"pad_sequence: padding_side must be 'left' or 'right', not {padding_side!r}")
    if not sequences:
        raise RuntimeError("pad_sequence: received an empty list of sequences")
    longest = max(s.shape[0] for s in sequences)
    padded = []
    for s in sequences:
        missing = longest - s.shape[0]
        widths = [0, 0] * (s.ndim - 1) + ([missing, 0] if padding_side == "left" else [0, missing])
        padded.append(pad(s, widths, value=padding_value) if missing else s)
    return minigrad.stack(padded, dim=0 if batch_first else 1)


def __getattr__(name: str) -> object:
    """A torch name minigrad does not have fails here, in one line saying so and what to use instead."""
    from minigrad.compat.missing import refuse

    raise refuse("minigrad.nn.utils.rnn", name)  # (the path programs reach it by)
