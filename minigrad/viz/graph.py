"""What a drawing needs to know about a graph: its tensors and ops in order, their module, their gradients.

`walk(root)` lists every tensor a result was computed from (constants included) in a topological order,
so the same graph is always numbered, and therefore drawn, the same way. `record_modules(model)` turns on
the engine's one scope hook, so each op remembers which module's forward made it; drawings group and
collapse ops by it. `gradient_norms(root)` runs the engine's own backward pass once more and reports
every tensor's gradient, intermediate ones included, in the order the engine completes them.

Read next: dot.py, which turns all this into DOT text.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from minigrad.core import autograd, backend, observers
from minigrad.core.function import Function
from minigrad.tensor import Tensor

# Tensors with at most this many elements keep a host copy of their gradient for drawing.
SMALL = 8


def walk(root: Tensor) -> list[Tensor]:
    """Every tensor `root` was computed from, root last, each after its inputs (inputs left to right).

    Unlike the backward pass, constants that need no gradient are included, because a drawing shows
    them. The order depends only on the graph's structure, never on ids or sets.
    """
    return autograd.order_graph(root, constants=True)


def scope_of(ctx: Function) -> tuple[str, ...]:
    """The dotted names of the modules that were running when `ctx` was made (outermost first)."""
    return getattr(ctx, "scope", ())  # the slot is unset for ops made outside record_modules


class record_modules(observers.Observer):
    """Context manager: ops made inside remember which of `model`'s modules made them.

        with mg.viz.record_modules(model):
            logits, loss = model(idx, targets)
        mg.viz.draw(loss, "gpt", model=model, collapse="transformer.h.*")

    It is an observer (core/observers.py): `Module.__call__` enters its `on_module`, `Function.apply` calls its
    `on_forward`. The model itself ('' in `named_modules`) is not a scope: its own ops sit at the top level.
    """

    def __init__(self, model: Any) -> None:
        self.names = {id(module): name for name, module in model.named_modules()}
        self.scope: tuple[str, ...] = ()

    def __enter__(self) -> record_modules:
        observers.active.append(self)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        observers.active.remove(self)

    def on_forward(self, ctx: Any, inputs: tuple, y: Any) -> None:
        ctx.scope = self.scope  # which module's forward made this op

    @contextlib.contextmanager
    def on_module(self, module: Any) -> Iterator[None]:
        """Push `module`'s dotted name while its forward runs (a module outside the model: its class name)."""
        previous = self.scope
        name = self.names.get(id(module))
        if name is None:
            name = f"{previous[-1]}.{type(module).__name__}" if previous else type(module).__name__
        if name:
            self.scope = previous + (name,)
        try:
            yield
        finally:
            self.scope = previous


@dataclass
class GradStep:
    """One step of the backward pass: `tensor`'s gradient is complete."""

    tensor: Tensor
    norm: float
    value: np.ndarray | None  # a host copy, for tensors with at most SMALL elements


def is_released(root: Tensor) -> bool:
    """True when a backward pass without retain_graph has dropped the buffers this graph needs."""
    return any(t._ctx is not None and t._ctx.released for t in walk(root))


def gradient_norms(root: Tensor) -> list[GradStep]:
    """Backpropagate from `root` once more and report each tensor's gradient, in the engine's order.

    This is the engine's own `autograd.backward` with an `on_step` listener, so the order is the real
    one, and intermediate tensors are included (no `retain_grad()` needed). The root's gradient is all
    ones (dL/dL = 1 for a scalar loss). Every `.grad` is put back as it was afterwards, so drawing
    never changes training. The graph must still hold its buffers: draw before `backward()`, or call
    `backward(retain_graph=True)`.
    """
    if not root.requires_grad:
        raise ValueError("gradient_norms: this tensor does not require grad, so no gradient flows back from it")
    if is_released(root):
        raise RuntimeError(
            "gradient_norms: backward() already released this graph's buffers; call "
            "loss.backward(retain_graph=True), or draw before backward()"
        )
    # Keep the stored gradients aside: the engine accumulates into .grad in place.
    saved = [(t, t.grad) for t in walk(root) if t.requires_grad]
    for tensor, _ in saved:
        tensor.grad = None
    steps: list[GradStep] = []

    def on_step(tensor: Tensor, gy: Any) -> None:
        steps.append(_step(tensor, gy))

    xp = backend.get_array_module(root.array)
    try:
        autograd.backward(root, xp.ones_like(root.array), retain_graph=True, on_step=on_step)
    finally:
        for tensor, grad in saved:
            tensor.grad = grad
    return steps


def stored_gradients(root: Tensor) -> list[GradStep]:
    """The gradients already in `.grad` (leaves, and tensors that called `retain_grad()`), in graph order."""
    steps = []
    for tensor in walk(root):
        if tensor.grad is not None:
            steps.append(_step(tensor, tensor.grad.array))
    return steps


def _step(tensor: Tensor, gy: Any) -> GradStep:
    """The norm of gradient `gy` (computed on its device: one number crosses to the host) and, if small, a copy."""
    xp = backend.get_array_module(gy)
    norm = float(xp.sqrt((gy.astype(np.float64) ** 2).sum()))
    return GradStep(tensor, norm, backend.as_numpy(gy).copy() if gy.size <= SMALL else None)
