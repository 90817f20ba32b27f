"""`to_dot`: a computation graph as graphviz DOT text, with no graphviz needed to write it.

Each op is a rounded box named by the op (`MatMul`); each tensor is a small table (a modern graphviz
record) with its name, shape, dtype and device. Edges run input tensor -> op -> output tensor. Nodes
are numbered in topological order (`t0`, `t1`, ... and `f3` for the op that made `t3`), so the same
graph gives the same text every time. With `record_modules`, ops are grouped in one cluster per module
and whole modules can be collapsed to one node; with gradients, each tensor is coloured by the norm of
its gradient on a log scale, blue (vanishing) to red (large).

Read next: render.py, which draws this text and animates the backward pass.
"""

from __future__ import annotations

import fnmatch
import html
import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from minigrad.core import backend
from minigrad.tensor import Tensor
from minigrad.viz.graph import GradStep, gradient_norms, is_released, scope_of, stored_gradients, walk

# ColorBrewer RdYlBu, reversed: index 0 is the smallest gradient norm (blue), 8 the largest (red).
PALETTE = ("#4575b4", "#74add1", "#abd9e9", "#e0f3f8", "#ffffbf", "#fee090", "#fdae61", "#f46d43", "#d73027")
DARK = {"#4575b4", "#d73027"}  # fills that need white text
FILL = {"param": "#dae8fc", "const": "#ffffff", "tensor": "#f5f5f5", "root": "#f5f5f5", "zero": "#cccccc"}
FONT = "Helvetica"


def to_dot(
    tensor: Tensor,
    *,
    model: Any = None,
    names: Mapping[str, Tensor] | None = None,
    rankdir: str = "LR",
    values: bool = False,
    grads: bool | Sequence[GradStep] = False,
    cluster: bool = True,
    depth: int | None = None,
    collapse: str | Sequence[str] | bool | None = None,
    title: str | None = None,
) -> str:
    """The graph that computed `tensor`, as DOT text (`dot -Tsvg` draws it; so does `mg.viz.draw`).

    model / names: name parameters by `model.named_parameters()` or by a {name: tensor} dict; other
        tensors show `Tensor.name` when set, else their number (`t7`).
    rankdir: "LR" (left to right) or "TB" (top to bottom).
    values: show the values of tensors with at most 8 elements (and of their gradients).
    grads: True shows every tensor's gradient norm and colours tensors by it. It runs the backward pass
        once more (`gradient_norms`, which leaves `.grad` as it was), so the graph must not be released:
        draw before `backward()` or after `backward(retain_graph=True)`; after a plain `backward()` only
        the stored `.grad` of leaves (and of `retain_grad()` tensors) can be shown. A list from
        `gradient_norms` is used as it is.
    cluster: group ops by the module that made them (ops recorded under `mg.viz.record_modules`).
    depth: nest module clusters at most this deep (0: no clusters).
    collapse: module names or patterns ("transformer.h.*", "mlp") to draw as one node each, with their
        input and output shapes; True collapses every numbered block (`h.0`, `layers.3`, ...).
    title: a caption over the drawing.
    """
    grad_steps = _resolve_grads(tensor, grads)
    return _DotWriter(tensor, model=model, names=names, rankdir=rankdir, values=values, grads=grad_steps,
                      cluster=cluster, depth=depth, collapse=collapse, title=title).source()


def _resolve_grads(root: Tensor, grads: bool | Sequence[GradStep]) -> list[GradStep] | None:
    if grads is False or grads is None:
        return None
    if grads is not True:
        return list(grads)
    if root.requires_grad and not is_released(root):
        return gradient_norms(root)
    if root.requires_grad:
        warnings.warn("to_dot: backward() released this graph, so only leaf gradients (.grad) are shown; "
                      "call backward(retain_graph=True) to see every tensor's gradient", stacklevel=3)
    return stored_gradients(root)


def _collapse_test(collapse: str | Sequence[str] | bool | None) -> Any:
    """A predicate on dotted module names: is this module drawn as one node?"""
    if collapse is None or collapse is False:
        return lambda name: False
    if collapse is True:  # every numbered block: a child of a ModuleList or a Sequential
        return lambda name: name.rsplit(".", 1)[-1].isdigit()
    patterns = [collapse] if isinstance(collapse, str) else list(collapse)
    return lambda name: any(fnmatch.fnmatchcase(name, p) for p in patterns)


def format_shape(shape: tuple[int, ...]) -> str:
    return str(tuple(int(n) for n in shape))  # Python's spelling: (4,) and ()


def _format_values(array: np.ndarray) -> str:
    """Three significant digits each: a vanishing gradient shows as 4.9e-05, never as a rounded 0."""
    text = np.array2string(np.asarray(array), separator=", ", max_line_width=48,
                           formatter={"float_kind": lambda v: f"{v:.3g}"})
    return html.escape(text).replace("\n", "<BR/>")


class _DotWriter:
    """Builds the DOT lines for one drawing; `source()` returns the text."""

    def __init__(self, root: Tensor, *, model: Any, names: Mapping[str, Tensor] | None, rankdir: str, values: bool,
                 grads: list[GradStep] | None, cluster: bool, depth: int | None,
                 collapse: str | Sequence[str] | bool | None, title: str | None,
                 highlight: Tensor | None = None, known: int | None = None) -> None:
        if rankdir not in ("LR", "TB", "RL", "BT"):
            raise ValueError(f"rankdir must be 'LR' or 'TB', not {rankdir!r}")
        self.rankdir, self.values, self.title = rankdir, values, title
        self.tensors = walk(root)
        self.index = {id(t): i for i, t in enumerate(self.tensors)}
        self.names: dict[int, str] = {}
        for name, param in (model.named_parameters() if model is not None else ()):
            self.names[id(param)] = name
        for name, param in (names or {}).items():
            self.names[id(param)] = name
        self.module_types = {name: type(m).__name__ for name, m in model.named_modules()} if model else {}
        self.buffers = {id(buffer) for _, m in model.named_modules() for buffer, _ in m._buffers.values()} \
            if model is not None else set()
        # Gradients: all of them fix the colour scale; the first `known` are drawn (backward frames).
        self.grads = {id(s.tensor): s for s in grads} if grads is not None else None
        self.visible_grads = set(self.grads or ()) if known is None else {id(s.tensor) for s in grads[:known]}
        self.highlight = highlight
        self.depth = depth if cluster else 0
        self._assign_groups(_collapse_test(collapse))
        # The colour scale spans the gradients that are drawn (not those hidden in collapsed modules).
        drawn = [s for s in grads or [] if id(s.tensor) in self.index and self.home[self.index[id(s.tensor)]] is None]
        self.scale = self._log_scale(drawn)

    # ----------------------------------------------------------------------------------------------
    # Which node each tensor and op becomes
    def _assign_groups(self, collapsed: Any) -> None:
        """Decide, for every op, its collapsed group (or None) and, for every tensor, whether it is drawn."""
        n = len(self.tensors)
        self.group: list[str | None] = [None] * n  # op i (the op that made tensor i) belongs to this group
        self.path: list[tuple[str, ...]] = [()] * n  # the clusters node i sits in, outermost first
        for i, t in enumerate(self.tensors):
            if t._ctx is None:
                continue
            scope = scope_of(t._ctx)
            for k, name in enumerate(scope):
                if collapsed(name):
                    self.group[i], scope = name, scope[:k]  # the group node sits in its parent's cluster
                    break
            self.path[i] = scope
        self.consumers: list[list[int]] = [[] for _ in range(n)]
        for i, t in enumerate(self.tensors):
            if t._ctx is not None:
                for parent in t._ctx.parents:
                    self.consumers[self.index[id(parent)]].append(i)
        self.home: list[str | None] = [None] * n  # the collapsed module that hides tensor i, if any
        for i, t in enumerate(self.tensors):
            users = {self.group[j] for j in self.consumers[i]}  # collapsed modules using tensor i (None: no module)
            if t._ctx is not None:
                owner = self.group[i]
            else:  # a weight belongs to the module using it; a data input is never hidden
                owner = next(iter(users), None) if self._belongs_inside(i) else None
            # Hidden: made (or, for a weight, used) inside one collapsed module, used nowhere else, not the result.
            if owner is not None and users <= {owner} and i != n - 1:
                self.home[i] = owner
            if t._ctx is None and self.consumers[i] and self._belongs_inside(i):
                # a weight, a buffer or a scalar constant sits in the cluster its users share
                self.path[i] = _common_prefix([self.path[j] for j in self.consumers[i]])
        self.groups: dict[str, int] = {}  # group name -> its number, in order of first appearance
        for i in range(n):
            if self.group[i] is not None and self.group[i] not in self.groups:
                self.groups[self.group[i]] = len(self.groups)

    def _belongs_inside(self, i: int) -> bool:
        """Parameters, buffers and scalar constants belong to their module; data inputs stay outside."""
        t = self.tensors[i]
        return t.requires_grad or t.ndim == 0 or id(t) in self.names or id(t) in self.buffers

    def _cluster_path(self, path: tuple[str, ...]) -> tuple[str, ...]:
        """The clusters actually drawn around a node: its module path, cut at `depth`."""
        return path if self.depth is None else path[: self.depth]

    def _node(self, i: int) -> str:
        """The DOT id that tensor i's edges attach to (its group's node when hidden in one)."""
        return f"m{self.groups[self.home[i]]}" if self.home[i] is not None else f"t{i}"

    # ----------------------------------------------------------------------------------------------
    # Labels
    def tensor_name(self, i: int) -> str:
        t = self.tensors[i]
        return self.names.get(id(t)) or t.name or f"t{i}"

    def _log_scale(self, steps: list[GradStep]) -> tuple[float, float]:
        logs = [math.log10(s.norm) for s in steps if s.norm > 0 and math.isfinite(s.norm)]
        if not logs:
            return (0.0, 0.0)
        lo, hi = min(logs), max(logs)
        # At least two decades, so that norms of 0.8 and 1.7 are not drawn as opposite extremes.
        widen = max(0.0, 2.0 - (hi - lo)) / 2
        return lo - widen, hi + widen

    def grad_colour(self, norm: float) -> str:
        if norm == 0:
            return FILL["zero"]
        if not math.isfinite(norm):
            return "#ff00ff"  # NaN or inf: impossible to miss
        lo, hi = self.scale
        x = 0.5 if hi == lo else (math.log10(norm) - lo) / (hi - lo)
        return PALETTE[min(len(PALETTE) - 1, max(0, round(x * (len(PALETTE) - 1))))]

    def _tensor_label(self, i: int) -> tuple[str, str]:
        """The HTML-like label and fill colour of tensor i."""
        t = self.tensors[i]
        kind = "root" if i == len(self.tensors) - 1 else (
            ("param" if t.requires_grad else "const") if t._ctx is None else "tensor")
        fill, ink = FILL[kind], "#000000"
        rows = [f"<B>{html.escape(self.tensor_name(i))}</B>",
                html.escape(format_shape(t.shape)) + f" {t.dtype}" + ("" if t.device == "cpu" else f" {t.device}")]
        if self.values and t.array.size <= 8:
            rows.append(_format_values(backend.as_numpy(t.array)))
        step = self.grads.get(id(t)) if self.grads is not None else None
        if step is not None:
            text = f"grad {step.norm:.2e}"
            if self.values and step.value is not None:
                text += "<BR/>" + _format_values(step.value)
            if id(t) in self.visible_grads:
                fill = self.grad_colour(step.norm)
                ink = "#ffffff" if fill in DARK else "#000000"
                rows.append(text)
            else:  # drawn in the background colour: the node keeps its size, so frames do not jump
                rows.append(f'<FONT COLOR="{fill}">{text}</FONT>')
        body = "".join(f"<TR><TD>{row}</TD></TR>" for row in rows)
        label = (f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">{body}</TABLE>>')
        if ink != "#000000":
            label = label.replace("<TD>", f'<TD><FONT COLOR="{ink}">').replace("</TD>", "</FONT></TD>")
        return label, fill

    def _tensor_line(self, i: int) -> str:
        label, fill = self._tensor_label(i)
        t = self.tensors[i]
        attrs = f'label={label} shape=box style="filled" fillcolor="{fill}"'
        if t._ctx is None and not t.requires_grad:
            attrs += ' color="#999999"'
        if i == len(self.tensors) - 1:
            attrs += " penwidth=2"
        if self.highlight is not None and t is self.highlight:
            attrs += ' color="#000000" penwidth=5'
        return f"t{i} [{attrs}]"

    def _op_line(self, i: int) -> str:
        name = html.escape(self.tensors[i]._ctx.name)
        return f'f{i} [label="{name}" shape=box style="rounded,filled" fillcolor="#eeeeee" fontsize=11]'

    def _group_line(self, name: str) -> str:
        members = [i for i in range(len(self.tensors)) if self.group[i] == name]
        hidden = [i for i in range(len(self.tensors)) if self.home[i] == name and self.tensors[i]._ctx is None]
        inputs = _unique(p for i in members for p in self.tensors[i]._ctx.parents
                         if self.home[self.index[id(p)]] != name)
        outputs = [self.tensors[i] for i in members if self.home[i] is None]
        weights = sum(self.tensors[i].array.size for i in hidden if self.tensors[i].requires_grad)
        kind = self.module_types.get(name)
        shown = _relative(name, self._cluster_path(self.path[members[0]]))
        rows = [f"<B>{html.escape(shown)}</B>" + (f" ({kind})" if kind else ""),
                "in " + html.escape(", ".join(format_shape(t.shape) for t in inputs) or "-"),
                "out " + html.escape(", ".join(format_shape(t.shape) for t in outputs) or "-"),
                f"{len(members)} ops, {weights:,} weights"]
        body = "".join(f"<TR><TD>{row}</TD></TR>" for row in rows)
        label = f'<<TABLE BORDER="0" CELLBORDER="0" CELLSPACING="0" CELLPADDING="2">{body}</TABLE>>'
        line = f'm{self.groups[name]} [label={label} shape=box3d style="filled" fillcolor="#fff2cc"'
        if self.highlight is not None and self.home[self.index[id(self.highlight)]] == name:
            line += ' color="#000000" penwidth=3'  # backward frames: the gradient just computed is in here
        return line + "]"

    # ----------------------------------------------------------------------------------------------
    # The DOT text
    def source(self) -> str:
        return "digraph minigrad {\n" + "".join(self.body()) + "}\n"

    def body(self) -> list[str]:
        """The lines inside `digraph minigrad { ... }` (graphviz.Digraph's `body`)."""
        lines = [f'graph [rankdir={self.rankdir} fontname="{FONT}" newrank=true]',
                 f'node [fontname="{FONT}" fontsize=10 margin="0.08,0.04"]',
                 'edge [color="#555555" arrowsize=0.6]']
        if self.title:
            lines.append(f'label="{_escape(self.title)}" labelloc=t fontsize=14'.replace("\n", "\\n"))
        # Every node line goes to the cluster path it sits in; clusters nest by dotted module name.
        tree: dict[tuple[str, ...], list[str]] = {}
        order: list[tuple[str, ...]] = []

        def put(path: tuple[str, ...], line: str) -> None:
            path = self._cluster_path(path)
            for k in range(len(path) + 1):
                if path[:k] not in tree:
                    tree[path[:k]] = []
                    order.append(path[:k])
            tree[path].append(line)

        emitted_groups: set[str] = set()
        edges: list[str] = []  # one edge per input of an op: `a + a` draws two
        group_edges: list[str] = []  # one edge per (tensor, group) pair
        for i, t in enumerate(self.tensors):
            group = self.group[i]
            if t._ctx is not None and group is None:
                put(self.path[i], self._op_line(i))
                edges.extend(f"{self._node(self.index[id(p)])} -> f{i}" for p in t._ctx.parents)
                edges.append(f"f{i} -> t{i}")
            elif group is not None:
                if group not in emitted_groups:
                    emitted_groups.add(group)
                    put(self.path[i], self._group_line(group))
                node = f"m{self.groups[group]}"
                group_edges.extend(f"{self._node(self.index[id(p)])} -> {node}" for p in t._ctx.parents
                                   if self.home[self.index[id(p)]] != group)
                if self.home[i] is None:
                    group_edges.append(f"{node} -> t{i}")
            if self.home[i] is None:
                put(self.path[i], self._tensor_line(i))
        lines.extend(self._clusters(tree, order, ()))
        lines.extend(edges + _unique(group_edges))
        if self.grads:
            lines.append(self._legend())
        return [f"\t{line}\n" for line in lines]

    def _clusters(self, tree: dict[tuple[str, ...], list[str]], order: list[tuple[str, ...]],
                  path: tuple[str, ...]) -> list[str]:
        """The node lines at `path`, then each child cluster's, recursively (in order of first appearance)."""
        lines = list(tree.get(path, []))
        for child in order:
            if len(child) == len(path) + 1 and child[: len(path)] == path:
                name = child[-1]
                shown = _relative(name, path)
                kind = self.module_types.get(name)
                label = shown + (f" ({kind})" if kind else "")
                number = order.index(child)
                inner = self._clusters(tree, order, child)
                lines.append(f"subgraph cluster_{number} {{")
                lines.append(f'  label="{_escape(label)}" style="rounded,filled" fillcolor="#00000008" '
                             f'color="#888888" fontsize=11 labeljust=l')
                lines.extend("  " + line for line in inner)
                lines.append("}")
        return lines

    def _legend(self) -> str:
        lo, hi = self.scale
        cells = "".join(f'<TD BGCOLOR="{c}" WIDTH="14"> </TD>' for c in PALETTE)
        return (f'legend [shape=plaintext label=<<TABLE BORDER="0" CELLSPACING="0" CELLPADDING="2"><TR>'
                f'<TD COLSPAN="9">gradient norm (log scale)</TD></TR><TR>{cells}</TR><TR>'
                f'<TD COLSPAN="4" ALIGN="LEFT">{10 ** lo:.0e}</TD><TD> </TD>'
                f'<TD COLSPAN="4" ALIGN="RIGHT">{10 ** hi:.0e}</TD></TR></TABLE>>]')


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _unique(items: Iterable[Any]) -> list[Any]:
    """Items in order, each once (by identity for tensors, whose == is elementwise)."""
    seen: set[int | str] = set()
    out = []
    for item in items:
        key = item if isinstance(item, str) else id(item)
        if key not in seen:
            seen.add(key)
            out.append(item)
    return out


def _relative(name: str, path: tuple[str, ...]) -> str:
    """A module's name inside its enclosing cluster: `ln_1` inside `transformer.h.0`."""
    return name[len(path[-1]) + 1:] if path and name.startswith(path[-1] + ".") else name


def _common_prefix(paths: list[tuple[str, ...]]) -> tuple[str, ...]:
    prefix = paths[0]
    for path in paths[1:]:
        k = 0
        while k < min(len(prefix), len(path)) and prefix[k] == path[k]:
            k += 1
        prefix = prefix[:k]
    return prefix
