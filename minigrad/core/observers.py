"""Observers watch the engine at its edges, so that neither `Function.apply` nor the backward walk has a seat for
any one feature (tensor hooks, anomaly detection, the drawing's module scopes and animation). Their events:
`on_forward(ctx, inputs, y)` after an op's forward; `on_backward(ctx, gxs)` after its backward (the gradients as
arrays); `on_gradient(tensor, gy) -> gy` when a tensor's gradient is complete, before it goes into `.grad` or on to
its op (a tensor hook may replace it); `on_module(module)`, a context entered while a module's forward runs.
`active` lists the observers of every op (`mg.detect_anomaly()`, `mg.viz.record_modules` join it for a `with`
block); each walk adds the tensors' hooks and `on_step`.
Read next: ../ops/elementwise.py (the primitive ops); ../tools/anomaly.py is one observer.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any


class Observer:
    """Watches the engine; override the events you need (see the module docstring)."""

    def on_forward(self, ctx: Any, inputs: tuple, y: Any) -> None:
        pass

    def on_backward(self, ctx: Any, gxs: list) -> None:
        pass

    def on_gradient(self, tensor: Any, gy: Any) -> Any:
        return gy

    def on_module(self, module: Any) -> contextlib.AbstractContextManager:
        return contextlib.nullcontext()


active: list[Observer] = []  # the observers of every op, in the order they joined


class AnomalyError(RuntimeError):
    """A NaN or infinity appeared; the message names the op, its inputs and where it was created (an observer's
    error, tools/anomaly.py raises it; here so that higher_order.py can name it without importing a tool)."""


class TensorHooks(Observer):
    """Every tensor's own hooks (`register_hook`, tensor/hooks.py): they run in the order they were registered,
    each on what the one before returned, always a tensor (`form`: the walk's gradients, gradients.py, turn the
    gradient into one and back). A tensor without hooks costs one attribute test."""

    def __init__(self, form: Any) -> None:
        self.form = form

    def on_gradient(self, tensor: Any, gy: Any) -> Any:
        if not tensor._hooks:
            return gy
        from minigrad.tensor import Tensor  # (the tensor package imports the engine)

        grad = self.form.tensor(gy)
        for hook in list(tensor._hooks):
            new = hook(grad)
            if new is None:
                continue
            if not isinstance(new, Tensor) or new.shape != grad.shape or new.dtype != grad.dtype:
                got = f"shape {new.shape}, {new.dtype}" if isinstance(new, Tensor) else type(new).__name__
                raise RuntimeError(f"hook {getattr(hook, '__name__', hook)!r} returned {got}; it must return None "
                                   f"or a tensor of the gradient's shape {grad.shape} and dtype {grad.dtype}")
            grad = new
        return self.form.like(grad, gy)


class OnStep(Observer):
    """`on_step(tensor, gy)` with each finished gradient as an array, in the order the walk visits tensors
    (`autograd.backward(..., on_step=...)`: the drawing's backward animation, viz/graph.py)."""

    def __init__(self, on_step: Callable[[Any, Any], None], form: Any) -> None:
        self.on_step, self.form = on_step, form  # form: the walk's gradients (gradients.py)

    def on_gradient(self, tensor: Any, gy: Any) -> Any:
        self.on_step(tensor, self.form.array(gy))
        return gy


def of_walk(on_step: Callable[[Any, Any], None] | None, form: Any) -> list[Observer]:
    """The observers of one backward walk (whose gradients are `form`, gradients.py): the tensors' hooks, the
    active observers, and `on_step` if given."""
    return [TensorHooks(form), *active] + ([OnStep(on_step, form)] if on_step is not None else [])


@contextlib.contextmanager
def module_scope(module: Any) -> Iterator[None]:
    """Enter every active observer's `on_module(module)` while the module's forward runs (Module.__call__)."""
    with contextlib.ExitStack() as stack:
        for observer in list(active):
            stack.enter_context(observer.on_module(module))
        yield
