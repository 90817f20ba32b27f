"""The backward pass: the chain rule applied to a recorded graph, in two steps.

1. Order the graph topologically (an explicit stack, so a 100,000-op chain does not hit Python's
   recursion limit), so that every tensor comes after everything it was computed from.
2. Walk that order backwards. Each tensor's gradient is complete when we reach it (all its uses come
   later in the order), so we hand it to the op that made the tensor, which returns one gradient per
   input. Broadcast inputs get their gradient summed back to their own shape here, once, in `sum_to`.

Also here: the grad-mode switch (`no_grad`, `enable_grad`, `set_grad_enabled`), one per thread as in PyTorch -
the only global state in minigrad besides the seed.
Read next: ops/elementwise.py for the simplest ops, ops/nn.py for the fused ones.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from minigrad.tensor import Tensor


class _GradMode(threading.local):
    """Whether ops record a graph, one switch per thread (as in PyTorch): a thread inside `no_grad`
    never turns recording off for another thread. The class attribute is every thread's initial value."""

    enabled = True


grad_mode = _GradMode()

# Set by `mg.detect_anomaly()` (anomaly.py) to an object with `forward(ctx, y)` and
# `backward(ctx, gxs)` checks; None, the default, costs one comparison per op.
anomaly_hook: Any = None

# Set by `mg.viz.record_modules(model)` (viz/graph.py) to an object with `enter(module)` (a context
# manager) and `scope` (the dotted names of the modules now running, outermost first). Module.__call__
# enters it and Function.apply copies `scope` onto each op, so a drawing can group ops by module.
# None, the default, costs one comparison per op and per module call.
scope_hook: Any = None


def is_grad_enabled() -> bool:
    """Whether ops run now (in this thread) record a graph for backward."""
    return grad_mode.enabled


class set_grad_enabled:
    """Switch graph recording on or off in this thread, as `torch.set_grad_enabled(mode)`.

    Takes effect at once as a plain call (`mg.set_grad_enabled(False)`); used as a context manager or
    a decorator, it restores the previous mode on exit.
    """

    def __init__(self, mode: bool) -> None:
        self._previous = grad_mode.enabled
        self.mode = bool(mode)
        grad_mode.enabled = self.mode

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc_info: Any) -> None:
        grad_mode.enabled = self._previous

    def __call__(self, function: Callable) -> Callable:
        grad_mode.enabled = self._previous  # decorating must not switch the mode: calling does
        mode = self.mode

        @functools.wraps(function)
        def with_mode(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return function(*args, **kwargs)

        return with_mode


class _GradModeBlock:
    """A context manager and decorator that sets the grad mode to `mode` inside, then restores it."""

    mode: bool

    def __init__(self) -> None:
        self._previous: list[bool] = []  # a stack, so that one object can be entered twice, nested

    def __enter__(self) -> None:
        self._previous.append(grad_mode.enabled)
        grad_mode.enabled = self.mode

    def __exit__(self, *exc_info: Any) -> None:
        grad_mode.enabled = self._previous.pop()

    def __call__(self, function: Callable) -> Callable:
        block = type(self)

        @functools.wraps(function)
        def with_mode(*args: Any, **kwargs: Any) -> Any:
            with block():
                return function(*args, **kwargs)

        return with_mode


class no_grad(_GradModeBlock):
    """Context manager and decorator: ops inside record no graph (for evaluation and sampling).

        with mg.no_grad():
            logits, _ = model(idx)
    """

    mode = False


class enable_grad(_GradModeBlock):
    """Context manager and decorator: ops inside record a graph again, even within `no_grad`."""

    mode = True


def sum_to(gx: Any, shape: tuple[int, ...]) -> Any:
    """Sum a gradient over the axes that broadcasting expanded, so that it has `shape`.

    Broadcasting copies an input along new leading axes and along axes of size 1; in backward each
    copy sends its gradient back, and the copies' gradients add up. `sum_to` is therefore the backward
    of `broadcast_to`: for x of shape (3, 1) broadcast to (2, 3, 4), gx = g.sum(axis=(0, 2)).reshape(3, 1).
    """
    if gx.shape == shape:
        return gx
    extra = gx.ndim - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and gx.shape[extra + i] != 1
    )
    gx = gx.sum(axis=axes, keepdims=True).reshape(shape)
    assert gx.shape == shape, f"sum_to: cannot reduce {gx.shape} to {shape}"
    return gx


def topological_order(root: Tensor, constants: bool = False) -> list[Tensor]:
    """Every tensor that `root` depends on and that requires grad, each after its inputs.

    With `constants`, also the inputs that need no gradient (a drawing shows them too). An iterative
    depth-first search: a tensor is pushed once to be expanded (its inputs pushed) and once more to
    be emitted, after all of its inputs have been emitted. The order depends only on the graph's
    structure (inputs are visited left to right), never on ids or sets.
    """
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False)]
    while stack:
        tensor, inputs_done = stack.pop()
        if inputs_done:
            order.append(tensor)
            continue
        if id(tensor) in visited:
            continue
        visited.add(id(tensor))
        stack.append((tensor, True))
        if tensor._ctx is not None:
            for parent in reversed(tensor._ctx.parents):  # reversed: visit inputs left to right
                if (constants or parent.requires_grad) and id(parent) not in visited:
                    stack.append((parent, False))
    return order


def backward(
    root: Tensor,
    grad: Any,
    retain_graph: bool = False,
    on_step: Callable[[Tensor, Any], None] | None = None,
) -> None:
    """Backpropagate `grad` (a backend array shaped like `root`) to every leaf that requires grad.

    Leaves accumulate into `.grad` (as in PyTorch: gradients add up across calls until zeroed).
    Unless `retain_graph`, each op's saved buffers are released after use; the graph's structure
    stays, so it can still be drawn. `on_step(tensor, grad)` is called when a tensor's gradient is
    complete, in the order the engine visits tensors (anomaly detection and the backward
    animation listen here). An op whose input was updated in place after it ran raises a
    RuntimeError instead of using a stale saved input.
    """
    order = topological_order(root)
    grads: dict[int, Any] = {id(root): grad}
    # Gradients are accumulated in place only into buffers that no one else holds ("owned"): an op
    # may hand the same array to two inputs (add returns gy twice), or a view of gy (reshape), and
    # adding into such an array in place would corrupt the other gradient. An owned buffer can also
    # become a leaf's .grad without a copy.
    owned: set[int] = set()
    for tensor in reversed(order):
        gy = grads.pop(id(tensor), None)
        if gy is None:
            continue  # no path from root reaches this tensor's gradient
        if on_step is not None:
            on_step(tensor, gy)
        ctx = tensor._ctx
        if ctx is None or tensor._retains_grad:
            tensor._accumulate_grad(gy, owned=id(tensor) in owned)
        if ctx is None:
            continue
        if ctx.released:
            raise RuntimeError(
                f"backward through the graph a second time ({ctx.name} already released its saved "
                "buffers); call backward(retain_graph=True) the first time if you need to"
            )
        if [parent._version for parent in ctx.parents] != ctx.input_versions:
            _refuse_changed_input(ctx)
        gxs = ctx.backward(gy)
        if not isinstance(gxs, tuple):
            gxs = (gxs,)
        if anomaly_hook is not None:
            anomaly_hook.backward(ctx, gxs)
        for parent, gx, needed in zip(ctx.parents, gxs, ctx.needs_input_grad):
            if not needed or gx is None:
                continue
            gx = sum_to(gx, parent.shape)
            key = id(parent)
            if key not in grads:
                grads[key] = gx
                if _is_fresh(gx, gy, gxs):
                    owned.add(key)
            elif key in owned:
                grads[key] += gx
            else:
                grads[key] = grads[key] + gx
                owned.add(key)
        if not retain_graph:
            ctx.release()


def _refuse_changed_input(ctx: Any) -> None:
    """An input of `ctx` was updated in place after the op ran (tensor_inplace.py). The op may have saved it
    for backward, and its gradient would silently be wrong: refuse, as PyTorch does, naming the input."""
    for i, (parent, version) in enumerate(zip(ctx.parents, ctx.input_versions)):
        if parent._version != version:
            raise RuntimeError(
                f"backward: input {i} of {ctx.name} (shape {parent.shape}) was modified by an in-place operation "
                f"after {ctx.name} used it (version {parent._version}, expected {version}); update it after "
                "backward, or compute on a clone()"
            )


def _is_fresh(gx: Any, gy: Any, gxs: tuple) -> bool:
    """Whether an op's returned gradient is a new array that only this input receives.

    Not fresh: gy itself, a view of any array (reshape, transpose and broadcast_to return views, and
    a broadcast view is not even writable), or an array the op returned for two inputs.
    """
    return gx is not gy and getattr(gx, "base", None) is None and sum(g is gx for g in gxs) == 1
