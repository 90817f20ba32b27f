"""Plots for the lectures: attention maps, gradient norms, loss curves and positional encodings.

Each function takes plain data (NumPy arrays, Tensors, lists, dicts, a metrics log), returns a
matplotlib `Figure` and, given `path`, also saves it as PNG. Figures are made with
`matplotlib.figure.Figure`, not `pyplot`: no global figure list to leak memory in a loop, and no GUI
backend needed (saving uses Agg), yet Jupyter still shows a returned figure inline. matplotlib is
imported inside the functions, so `import minigrad` stays light. Nothing here knows minigpt: the
model's helpers (e.g. `GPT.attention_maps`) produce the arrays, these functions draw them.

Read next: ../../minigpt/train.py (the run whose curves these are).
"""

from __future__ import annotations

import functools
import io
import json
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from minigrad.tools.files import make_folder, write_file
from minigrad.tools.serialization import read_bytes

# Fonts that have the CJK (Chinese, Japanese, Korean) characters, by family name, then by file name.
CJK_FAMILIES = ("Noto Sans CJK SC", "Noto Sans SC", "Source Han Sans SC", "Noto Sans CJK JP", "Noto Sans CJK TC",
                "WenQuanYi Zen Hei", "WenQuanYi Micro Hei", "Droid Sans Fallback", "SimHei", "Microsoft YaHei",
                "PingFang SC", "Heiti SC", "Arial Unicode MS")
CJK_FILES = ("notosanscjk", "notosanssc", "sourcehansans", "wqy", "droidsansfallback", "simhei", "msyh", "pingfang")


def _array(x: Any) -> np.ndarray:
    """A NumPy array from a Tensor, a CuPy/NumPy array or nested lists."""
    if hasattr(x, "numpy") and callable(x.numpy):
        return np.asarray(x.numpy())
    if hasattr(x, "get") and callable(x.get):  # a CuPy array
        return np.asarray(x.get())
    return np.asarray(x)


def _new_figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def _save(figure: Any, path: str | Path | None, dpi: int = 110) -> Any:
    if path is not None:
        make_folder(Path(path).parent)
        save_figure(figure, path, dpi=dpi)
    return figure


def save_figure(figure: Any, path: str | Path, **options: Any) -> Path:
    """`figure.savefig(path, **options)`, written as every file is (files.write_file: never through a link, never
    half-written); the format comes from the suffix (PNG without one), as savefig's own."""
    buffer = io.BytesIO()
    figure.savefig(buffer, **{"format": Path(path).suffix.lstrip(".").lower() or "png", **options})
    return write_file(path, buffer.getvalue())


# --------------------------------------------------------------------------------------------------
# Fonts for Chinese (and other CJK) tokens
@functools.lru_cache(maxsize=1)
def find_cjk_font() -> str | None:
    """The family name of an installed font with CJK glyphs, or None (then install `fonts-noto-cjk`)."""
    from matplotlib import font_manager

    known = {font.name for font in font_manager.fontManager.ttflist}
    for family in CJK_FAMILIES:
        if family in known:
            return family
    # A font installed after matplotlib cached its font list is not in ttflist yet: look at the files.
    for path in sorted(font_manager.findSystemFonts()):
        name = Path(path).name.lower().replace("-", "").replace("_", "")
        if any(key in name for key in CJK_FILES):
            font_manager.fontManager.addfont(path)
            return font_manager.FontProperties(fname=path).get_name()
    return None


def use_cjk_font() -> bool:
    """Make matplotlib draw Chinese text with an installed CJK font; returns False when there is none.

    For figures made directly with matplotlib (the plot functions here pick the font themselves).
    """
    import matplotlib.pyplot as plt

    family = find_cjk_font()
    if family is None:
        return False
    plt.rcParams["font.sans-serif"] = [family, "DejaVu Sans"]
    plt.rcParams["axes.unicode_minus"] = False  # the CJK fonts lack the Unicode minus sign
    return True


def _needs_cjk(texts: Iterable[str]) -> bool:
    return any(ord(ch) >= 0x2E80 for text in texts for ch in text)


def _font_family(texts: Iterable[str]) -> list[str] | None:
    """A font fallback list for tick labels: the CJK font first when a text needs it."""
    if not _needs_cjk(texts):
        return None
    family = find_cjk_font()
    if family is None:
        warnings.warn("no CJK font found, so Chinese characters will show as boxes; install one "
                      "(Debian/Ubuntu: apt install fonts-noto-cjk; conda: conda install -c conda-forge "
                      "noto-cjk)", stacklevel=3)
        return None
    return [family, "DejaVu Sans"]


def _token_label(token: Any) -> str:
    """Make invisible tokens visible: a space is shown as '␣', a newline as '\\n'."""
    text = str(token)
    return {" ": "␣", "\n": "\\n", "\t": "\\t", "": "∅"}.get(text, text.replace("\n", "\\n"))


# --------------------------------------------------------------------------------------------------
# Attention maps
def _attention_stack(attention: Any, batch: int) -> np.ndarray:
    """(layers, heads, T, T) from a list of per-layer (B, nh, T, T) or (nh, T, T) arrays, or one array.

    One array: 5-D (layers, B, nh, T, T), 4-D (layers, nh, T, T), 3-D (nh, T, T) or 2-D (T, T).
    """
    if isinstance(attention, (list, tuple)):
        layers = [_array(a) for a in attention]
        layers = [a[batch] if a.ndim == 4 else a for a in layers]
        layers = [a[None] if a.ndim == 2 else a for a in layers]
        return np.stack(layers)
    a = _array(attention)
    if a.ndim == 5:
        return a[:, batch]
    return a.reshape((1,) * (4 - a.ndim) + a.shape)


def plot_attention(
    attention: Any,
    tokens: Sequence[Any] | str | None = None,
    *,
    layers: Sequence[int] | None = None,
    heads: Sequence[int] | None = None,
    batch: int = 0,
    path: str | Path | None = None,
    title: str | None = None,
    cmap: str = "Blues",
) -> Any:
    """A grid of attention heatmaps, one row per layer and one column per head, tokens on both axes.

    attention: `GPT.attention_maps(idx)` (a list of (B, nh, T, T) arrays, one per layer), or one array
        (see `_attention_stack`). Entry [i, j] is how much query token i (a row) attends to key token j.
    tokens: the T tokens (a string is split into characters); Chinese characters get a CJK font.
    layers / heads: which to draw (default all); batch: which sequence of the batch.
    """
    stack = _attention_stack(attention, batch)
    layers = list(range(stack.shape[0])) if layers is None else list(layers)
    heads = list(range(stack.shape[1])) if heads is None else list(heads)
    T = stack.shape[-1]
    labels = [_token_label(t) for t in (list(tokens) if tokens is not None else range(T))]
    if len(labels) != T:
        raise ValueError(f"plot_attention: {len(labels)} tokens for attention over {T} positions")
    family = _font_family(labels)
    cell = max(1.6, min(0.28 * T, 5.0))  # inches per heatmap
    figure = _new_figure(cell * len(heads) + 1.0, cell * len(layers) + (0.6 if title else 0.2))
    axes = figure.subplots(len(layers), len(heads), squeeze=False)
    step = max(1, math.ceil(T / 40))  # at most ~40 labels an axis
    image = None
    for r, layer in enumerate(layers):
        for c, head in enumerate(heads):
            ax = axes[r][c]
            image = ax.imshow(stack[layer, head], cmap=cmap, vmin=0.0, vmax=1.0, interpolation="nearest")
            ax.set_title(f"layer {layer}, head {head}", fontsize=9)
            ticks = list(range(0, T, step))
            ax.set_xticks(ticks, [labels[i] for i in ticks], fontsize=8, family=family,
                          rotation=0 if all(len(labels[i]) <= 2 for i in ticks) else 90)
            ax.set_yticks(ticks, [labels[i] for i in ticks], fontsize=8, family=family)
            ax.tick_params(length=0)
            if r == len(layers) - 1:
                ax.set_xlabel("key (attended to)", fontsize=8)
            if c == 0:
                ax.set_ylabel("query", fontsize=8)
    figure.colorbar(image, ax=axes, shrink=0.6, label="attention weight")
    if title:
        figure.suptitle(title, family=_font_family([title]))
    return _save(figure, path)


# --------------------------------------------------------------------------------------------------
# Gradient norms
def parameter_grad_norms(model: Any, by: str = "layer") -> dict[str, float]:
    """The norm of `.grad` of `model`'s parameters, by parameter (`by="parameter"`) or by layer.

    By layer, names are cut after their first number (`transformer.h.3.attn.c_attn.weight` ->
    `transformer.h.3`), or else to their module (`transformer.wte.weight` -> `transformer.wte`), and
    the norms of a group combine as sqrt(sum of squares). Parameters without a gradient are skipped.
    """
    squares: dict[str, float] = {}
    for name, param in model.named_parameters():
        if param.grad is None:
            continue
        key = name
        if by == "layer":
            parts = name.split(".")
            numbered = [k for k, part in enumerate(parts) if part.isdigit()]
            key = ".".join(parts[: numbered[0] + 1] if numbered else parts[:-1]) or name
        elif by != "parameter":
            raise ValueError(f"by must be 'layer' or 'parameter', not {by!r}")
        grad = _array(param.grad).astype(np.float64)
        squares[key] = squares.get(key, 0.0) + float((grad * grad).sum())
    return {key: math.sqrt(value) for key, value in squares.items()}


def plot_grad_norms(
    norms: Mapping[str, float] | Mapping[str, Sequence[float]] | Sequence[float],
    *,
    path: str | Path | None = None,
    title: str | None = "gradient norm",
    xlabel: str | None = None,
) -> Any:
    """Gradient norms on a log scale, to see where gradient vanishes (or explodes).

    norms: {layer name: norm} (bars, in the given order, e.g. from `parameter_grad_norms(model)`); a
        list of norms per time step or per layer (one line); or {series name: list of norms} (one line
        each, e.g. {"tanh RNN": [...], "LSTM": [...]} over time steps). Zeros are left out (log scale).
    """
    figure = _new_figure(7.0, 4.0)
    ax = figure.subplots()
    if isinstance(norms, Mapping) and norms and all(np.ndim(v) == 0 for v in norms.values()):
        names = list(norms)
        values = np.array([float(norms[n]) for n in names])
        ax.bar(range(len(names)), np.where(values > 0, values, np.nan), color="#4575b4")
        ax.set_xticks(range(len(names)), names, rotation=45 if len(names) > 4 else 0, ha="right", fontsize=8,
                      family=_font_family(names))
        ax.set_xlabel(xlabel or "layer")
    else:
        series = dict(norms) if isinstance(norms, Mapping) else {"": norms}
        for name, values in series.items():
            values = _array(values).astype(np.float64).ravel()
            ax.plot(np.arange(len(values)), np.where(values > 0, values, np.nan), marker="o", markersize=3,
                    label=name or None)
        if len(series) > 1 or "" not in series:
            ax.legend()
        ax.set_xlabel(xlabel or "time step")
    ax.set_yscale("log")
    ax.set_ylabel("gradient norm (log scale)")
    ax.grid(True, which="major", axis="y", alpha=0.3)
    if title:
        ax.set_title(title)
    return _save(figure, path)


# --------------------------------------------------------------------------------------------------
# Loss curves
X_KEYS = ("iter", "step", "iteration", "it", "epoch")
MAX_METRICS_BYTES = 2**28  # a metrics log larger than this is not one (read_bytes refuses it unread)


def read_metrics(metrics: str | Path | Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Records from a JSON-lines metrics log (a file, or a folder holding metrics.jsonl), or the records given.

    Lenient: blank lines, lines that are not JSON objects and a torn last line are skipped (with one
    warning saying how many).
    """
    if not isinstance(metrics, (str, Path)):
        return [dict(record) for record in metrics]
    path = Path(metrics)
    if path.is_dir():
        path = path / "metrics.jsonl"
    records, bad = [], 0
    for line in read_bytes(path, MAX_METRICS_BYTES).decode("utf-8", errors="replace").splitlines():
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            bad += 1
            continue
        if isinstance(record, dict):
            records.append(record)
        else:
            bad += 1
    if bad:
        warnings.warn(f"read_metrics: skipped {bad} line(s) of {path} that are not JSON objects", stacklevel=2)
    return records


# How the training loop's metric names read in a legend.
LOSS_LABELS = {"loss": "training batch", "train_loss": "train (evaluated)", "val_loss": "validation"}


def plot_loss_curves(
    metrics: str | Path | Iterable[Mapping[str, Any]],
    *,
    path: str | Path | None = None,
    title: str | None = "loss",
    logy: bool = False,
) -> Any:
    """Loss curves from a training run's metrics log, and the learning rate below them when it was logged.

    Every numeric field whose name contains "loss" is a curve (per-step `loss`, and `train_loss` /
    `val_loss` from evaluations); the x axis is `iter` (or `step`, `iteration`, `epoch`; else the
    record's position). Records without a given field simply do not add to its curve.
    """
    records = read_metrics(metrics)
    curves: dict[str, tuple[list[float], list[float]]] = {}
    for position, record in enumerate(records):
        x = next((record[k] for k in X_KEYS if isinstance(record.get(k), (int, float))), position)
        for key, value in record.items():
            if isinstance(value, (int, float)) and not isinstance(value, bool) and ("loss" in key or key == "lr"):
                xs, ys = curves.setdefault(key, ([], []))
                xs.append(float(x))
                ys.append(float(value))
    has_lr = "lr" in curves
    figure = _new_figure(7.0, 5.0 if has_lr else 4.0)
    axes = figure.subplots(2 if has_lr else 1, 1, sharex=True, squeeze=False,
                           gridspec_kw={"height_ratios": [3, 1]} if has_lr else None)
    ax = axes[0][0]
    for key, (xs, ys) in curves.items():
        if key == "lr":
            continue
        sparse = len(xs) < 0.5 * max(len(v[0]) for v in curves.values())  # evaluations among per-step records
        ax.plot(xs, ys, label=LOSS_LABELS.get(key, key), marker="o" if sparse or len(xs) < 30 else None, markersize=3,
                linewidth=1.0 if not sparse else 1.8, alpha=0.6 if len(xs) > 200 and not sparse else 1.0)
    if len(curves) - has_lr > 0:
        ax.legend()
    else:
        ax.text(0.5, 0.5, "no loss values in the metrics", ha="center", va="center", transform=ax.transAxes)
    if logy:
        ax.set_yscale("log")
    ax.set_ylabel("loss")
    ax.grid(True, alpha=0.3)
    if title:
        ax.set_title(title)
    if has_lr:
        lr_ax = axes[1][0]
        lr_ax.plot(*curves["lr"], color="#d73027")
        lr_ax.set_ylabel("learning rate")
        lr_ax.grid(True, alpha=0.3)
        lr_ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 2))
    axes[-1][0].set_xlabel("iteration")
    return _save(figure, path)


# --------------------------------------------------------------------------------------------------
# Positional encodings
def plot_positional_encoding(
    table: Any,
    *,
    path: str | Path | None = None,
    title: str | None = "positional encoding",
) -> Any:
    """The positional-encoding matrix as an image: one row per position, one column per channel.

    table: a (positions, channels) array or Tensor (the sinusoidal table, or a learned `wpe.weight`).
    """
    table = _array(table).astype(np.float64)
    if table.ndim != 2:
        raise ValueError(f"plot_positional_encoding: expected (positions, channels), got shape {table.shape}")
    limit = float(np.abs(table).max()) or 1.0
    figure = _new_figure(7.0, 4.5)
    ax = figure.subplots()
    image = ax.imshow(table, cmap="RdBu_r", vmin=-limit, vmax=limit, aspect="auto", interpolation="nearest")
    ax.set_xlabel("channel")
    ax.set_ylabel("position")
    figure.colorbar(image, ax=ax, label="value")
    if title:
        ax.set_title(title)
    return _save(figure, path)
