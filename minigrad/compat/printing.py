"""How a tensor prints, as PyTorch prints it: `tensor([0.9544, 1.0000])`, `tensor([1.0000e-05, 1.0000e+00])`,
`tensor([1., 2.], dtype=torch.float64, grad_fn=<MulBackward0>)`.

PyTorch's rules (torch/_tensor_str.py), with its default options (4 decimals, 80 columns, a summary with `...` past
1000 elements): all elements share one format, chosen from the finite nonzero ones: whole numbers print as `2.`;
`{:.4e}` when the largest is over 1e8 or over 1000 times the smallest (or, for fractions, the smallest under 1e-4);
`{:.4f}` otherwise; each padded to the widest. Rows break as PyTorch breaks them. The dtype is shown unless it is
float32, int64 or bool; the device unless it is the CPU; then grad_fn or requires_grad.
Read next: device.py.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

PRECISION, LINEWIDTH, THRESHOLD, EDGEITEMS = 4, 80, 1000, 3


class _Formatter:
    """One format for every element of an array (PyTorch's _Formatter)."""

    def __init__(self, values: np.ndarray) -> None:
        self.floating = values.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        flat = values.reshape(-1)
        if not self.floating:
            self.width = max([1, *(len(str(v)) for v in flat.tolist())])
            return
        flat = flat.astype(np.float64)
        finite = flat[np.isfinite(flat) & (flat != 0)]
        if finite.size == 0:
            return
        smallest, largest = np.abs(finite).min(), np.abs(finite).max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        self.sci_mode = largest / smallest > 1000.0 or largest > 1.0e8 or (not self.int_mode and smallest < 1.0e-4)
        if self.sci_mode:
            self.width = max(len(f"{v:.{PRECISION}e}") for v in finite.tolist())
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in finite.tolist())
        else:
            self.width = max(len(f"{v:.{PRECISION}f}") for v in finite.tolist())

    def format(self, value: Any) -> str:
        if not self.floating:
            text = str(value)
        elif self.sci_mode:
            text = f"{value:{self.width}.{PRECISION}e}"
        elif self.int_mode:
            text = f"{value:.0f}" + ("" if math.isinf(value) or math.isnan(value) else ".")
        else:
            text = f"{value:.{PRECISION}f}"
        return " " * (self.width - len(text)) + text


def _summarized(values: np.ndarray) -> np.ndarray:
    """The elements that a summary shows (the first and last EDGEITEMS along each dim), for choosing the format."""
    if values.ndim == 0 or values.shape[0] <= 2 * EDGEITEMS:
        return values if values.ndim <= 1 else np.stack([_summarized(v) for v in values])
    ends = np.concatenate([values[:EDGEITEMS], values[-EDGEITEMS:]])
    return ends if values.ndim == 1 else np.stack([_summarized(v) for v in ends])


def _body(values: np.ndarray, indent: int, summarize: bool, formatter: _Formatter) -> str:
    if values.ndim == 0:
        return formatter.format(values.item())
    cut = summarize and values.shape[0] > 2 * EDGEITEMS
    if values.ndim == 1:
        items = [formatter.format(v) for v in values.tolist()] if not cut else \
            [formatter.format(v) for v in values[:EDGEITEMS].tolist()] + [" ..."] + \
            [formatter.format(v) for v in values[-EDGEITEMS:].tolist()]
        per_line = max(1, (LINEWIDTH - indent) // (formatter.width + 2))
        lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    rows = range(values.shape[0])
    parts = [_body(values[i], indent + 1, summarize, formatter) for i in (rows if not cut else rows[:EDGEITEMS])]
    if cut:
        parts += ["..."] + [_body(values[i], indent + 1, summarize, formatter) for i in rows[-EDGEITEMS:]]
    return "[" + ("," + "\n" * (values.ndim - 1) + " " * (indent + 1)).join(parts) + "]"


def tensor_repr(values: np.ndarray, device: str, grad_fn: str | None, requires_grad: bool) -> str:
    """`tensor(...)` for the host array `values` of a tensor on `device`, made by the op named `grad_fn`."""
    prefix, suffixes = "tensor(", []
    if device != "cpu":
        suffixes.append(f"device='{device}'")
    if values.size == 0:
        body = "[]"
        if values.ndim != 1:
            suffixes.append(f"size={values.shape}")
        if values.dtype != np.float32:
            suffixes.append(f"dtype=torch.{values.dtype}")
    else:
        if values.dtype not in (np.float32, np.int64, np.bool_):
            suffixes.append(f"dtype=torch.{values.dtype}")
        summarize = values.size > THRESHOLD
        body = _body(values, len(prefix), summarize, _Formatter(_summarized(values) if summarize else values))
    if grad_fn is not None:  # PyTorch's names end in Backward0 (a custom Function's in Backward)
        suffixes.append(f"grad_fn=<{grad_fn if grad_fn.endswith('Backward') else grad_fn + 'Backward0'}>")
    elif requires_grad:
        suffixes.append("requires_grad=True")
    text, last_line = prefix + body, len(prefix + body) - (prefix + body).rfind("\n") + 1
    for suffix in suffixes:  # on the same line while it fits in LINEWIDTH, as PyTorch's _add_suffixes
        if last_line + len(suffix) + 2 > LINEWIDTH:
            text, last_line = text + ",\n" + " " * len(prefix) + suffix, len(prefix) + len(suffix)
        else:
            text, last_line = text + ", " + suffix, last_line + len(suffix) + 2
    return text + ")"
