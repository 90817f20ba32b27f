"""The backward pass: the chain rule applied to a recorded graph, in two steps.

1. Order the graph topologically (an explicit stack, so a 100,000-op chain does not hit Python's
   recursion limit), so that every tensor comes after everything it was computed from.
2. Walk that order backwards (`_walk`, DeZero's loop). Each tensor's gradient is complete when we reach it
   (all its uses come later in the order): pop it; hand it to the leaf (its `.grad`) or to the op that made
   the tensor, whose backward returns one gradient per input; add those into the inputs' gradients; release
   the op's saved buffers.

The rest stands at the edges of those two steps. With step 1, a pre-pass (`order_graph`) sends the
gradient of an input that was updated in place after an op ran to the tensor as the op saw it. A broadcast
input gets its gradient summed back to its own shape, once, in `sum_to`. gradients.py adds the gradients up
without aliasing anyone's buffer (a slice's small gradient goes straight into its input's dense one). Observers
(observers.py: tensor hooks, anomaly detection, the drawing's animation) see each finished gradient.

The same walk gives `grad` (`torch.autograd.grad`: the gradients of some outputs with respect to some inputs,
running only the ops on a path between them) and, with `create_graph`, gradients that record a graph of their
own, for second and higher derivatives: each op's backward then runs on tensors (higher_order.py).
The grad-mode switch (`no_grad`, ...) is in grad_mode.py and re-exported here.
Read next: gradients.py and observers.py (this walk's two edges), then ../ops/elementwise.py for the simplest ops.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from minigrad.core import observers
from minigrad.core.grad_mode import enable_grad, grad_mode, is_grad_enabled, no_grad, set_grad_enabled  # noqa: F401
from minigrad.core.gradients import Gradients, gradients_for, is_fresh
from minigrad.tensor import versions

if TYPE_CHECKING:
    from minigrad.tensor import Tensor


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


def order_graph(roots: Tensor | Sequence[Tensor], constants: bool = False,
                stop: Collection[int] = ()) -> list[Tensor]:
    """Step 1: the graph in topological order, with the in-place pre-pass (`versions.resolve_all`): an op that saw
    an older version of an input updated in place since gets the stand-in for that version as its input, and the
    graph, so changed, is ordered again. Without in-place updates it costs one look at each op."""
    order = topological_order(roots, constants, stop)
    while versions.resolve_all(order):
        order = topological_order(roots, constants, stop)
    return order


def topological_order(roots: Tensor | Sequence[Tensor], constants: bool = False,
                      stop: Collection[int] = ()) -> list[Tensor]:
    """Every tensor that `roots` (one tensor or several) depend on and that requires grad, each after its inputs.

    With `constants`, also the inputs that need no gradient (a drawing shows them too). The tensors whose
    ids are in `stop` are included but not expanded: their inputs are left out (`local_grads` uses it).
    An iterative depth-first search: a tensor is pushed once to be expanded (its inputs pushed) and once
    more to be emitted, after all of its inputs have been emitted. The order depends only on the graph's
    structure (roots and inputs are visited left to right), never on ids or sets.
    """
    order: list[Tensor] = []
    visited: set[int] = set()
    stack: list[tuple[Tensor, bool]] = [(root, False) for root in reversed(_as_list(roots))]
    while stack:
        tensor, inputs_done = stack.pop()
        if inputs_done:
            order.append(tensor)
            continue
        if id(tensor) in visited:
            continue
        visited.add(id(tensor))
        stack.append((tensor, True))
        if tensor._ctx is not None and id(tensor) not in stop:
            for parent in reversed(tensor._ctx.parents):  # reversed: visit inputs left to right
                if (constants or parent.requires_grad) and id(parent) not in visited:
                    stack.append((parent, False))
    return order


def backward(root: Tensor, grad: Any, retain_graph: bool = False,
             on_step: Callable[[Tensor, Any], None] | None = None, create_graph: bool = False) -> None:
    """Backpropagate `grad` (a backend array shaped like `root`) to every leaf that requires grad.

    Leaves accumulate into `.grad` (as in PyTorch: gradients add up across calls until zeroed).
    Unless `retain_graph`, each op's saved buffers are released after use; the graph's structure
    stays, so it can still be drawn. `on_step(tensor, grad)` is called when a tensor's gradient is
    complete, in the order the engine visits tensors (the backward animation listens here). An op whose
    input was updated in place after it ran raises a RuntimeError instead of using a stale saved input.

    With `create_graph`, `grad` is a Tensor and every op's backward runs on tensors (higher_order.py),
    so the gradients are tensors with a graph of their own, which can be differentiated again.
    """
    _walk(order_graph(root), {id(root): grad}, None, (), retain_graph, create_graph, on_step)


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor], grad_outputs: Any = None,
         retain_graph: bool | None = None, create_graph: bool = False,
         allow_unused: bool = False) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` with respect to `inputs`, as `torch.autograd.grad`; `.grad` is left alone.

    Args:
        outputs: a tensor or a sequence of tensors (their gradients add up, as if they were summed).
        inputs: a tensor or a sequence of tensors that require grad; leaves or intermediate tensors.
        grad_outputs: the upstream gradient of each output (a Tensor, an array, or None for a scalar
            output, which gets 1); one value, or a sequence with one entry per output.
        retain_graph: keep the graph's buffers for another backward; by default, what `create_graph` is.
        create_graph: record a graph of the gradients themselves, so that they can be differentiated
            again (a Hessian-vector product, Newton's method); see higher_order.py.
        allow_unused: give None for an input that the outputs do not depend on, instead of raising.

    Returns a tuple with one gradient per input, shaped like it.
    """
    outputs, inputs = _as_list(outputs), _as_list(inputs)
    if not isinstance(grad_outputs, (list, tuple)):
        grad_outputs = [grad_outputs] * len(outputs) if grad_outputs is None else [grad_outputs]
    if len(grad_outputs) != len(outputs):
        raise ValueError(f"grad: {len(grad_outputs)} grad_outputs for {len(outputs)} outputs; give one per output")
    for i, x in enumerate(inputs):
        if not x.requires_grad:
            fix = "make it with requires_grad=True" if x.dtype.kind == "f" else f"a {x.dtype} tensor has no gradient"
            raise RuntimeError(f"grad: input {i} (shape {x.shape}) does not require grad, so it has no gradient; {fix}")
    from minigrad.tensor.convert import seed_gradient  # (the tensor package imports this module)

    seeds: dict[int, Any] = {}
    for i, (y, g) in enumerate(zip(outputs, grad_outputs)):
        seed = seed_gradient(y, g, create_graph, i)
        seeds[id(y)] = seed if id(y) not in seeds else seeds[id(y)] + seed  # an output given twice counts twice
    wanted = {id(x) for x in inputs}
    retain_graph = create_graph if retain_graph is None else retain_graph
    found = _walk(_leading_to(order_graph(outputs), wanted), seeds, wanted, (), retain_graph, create_graph)
    for i, x in enumerate(inputs):
        if id(x) not in found and not allow_unused:
            raise RuntimeError(f"grad: input {i} (shape {x.shape}) was not used to compute the outputs; pass "
                               "allow_unused=True to get None for it")
    return tuple(found.get(id(x)) for x in inputs)


def local_grads(y: Tensor, gy: Tensor, inputs: Sequence[Tensor]) -> tuple[Tensor | None, ...]:
    """The partial derivatives of `y` with respect to `inputs`, each input taken as a leaf (the graph is not
    followed past it), as tensors with a graph of their own; an input used twice gets its gradient once.
    higher_order.py differentiates an op's composed twin with it, so the inputs are the op's own.
    """
    wanted = {id(x) for x in inputs if x.requires_grad}
    order = _leading_to(order_graph(y, stop=wanted), wanted)
    found = _walk(order, {id(y): gy}, wanted, wanted, True, True)
    return tuple(found.pop(id(x), None) for x in inputs)


def _walk(order: list[Tensor], seeds: dict[int, Any], wanted: set[int] | None, stop: Collection[int],
          retain_graph: bool, create_graph: bool, on_step: Callable | None = None) -> dict[int, Tensor]:
    """Step 2: the chain rule over `order` (step 1), from the `seeds` (gradients keyed by tensor id).

    Without `wanted` (backward), the gradients of leaves go into their `.grad`; with it (grad), those of the
    wanted tensors are returned, as {id: gradient tensor}. The walk does not go past the tensors in `stop`.
    The gradients' form, arrays or tensors that record a graph, is decided once (gradients.py).
    """
    grads = gradients_for(seeds, create_graph)
    found: dict[int, Tensor] = {}
    watchers = observers.of_walk(on_step, grads)
    with set_grad_enabled(create_graph):  # recording the gradients' own graph, or nothing
        for tensor in reversed(order):  # every use of a tensor comes later in the order: its gradient is complete
            gy = grads.pop(tensor, watchers)
            if gy is None:
                continue  # no path from the roots reaches this tensor's gradient
            _hand_to_leaf(tensor, gy, grads, wanted, found)
            ctx = tensor._ctx
            if ctx is None or id(tensor) in stop:
                continue
            for parent, gx, owned in _chain_rule(ctx, gy, tensor, grads, watchers):
                grads.add(parent, gx, owned)
            if not retain_graph:
                ctx.release()
    return found


def _hand_to_leaf(tensor: Tensor, gy: Any, grads: Gradients, wanted: set[int] | None, found: dict) -> None:
    """Where a finished gradient goes besides the op: into `.grad` of a leaf or a `retain_grad` tensor (backward),
    or into `found` when the tensor is `wanted` (grad)."""
    if wanted is None:
        if tensor._ctx is None or tensor._retains_grad:
            grads.to_leaf(tensor, gy, grads.owns(tensor))
    elif id(tensor) in wanted:
        found[id(tensor)] = grads.result(gy, grads.owns(tensor))


def _chain_rule(ctx: Any, gy: Any, y: Tensor, grads: Gradients, watchers: list) -> list[tuple[Tensor, Any, bool]]:
    """One op's step of the chain rule: (input, its gradient summed back to its shape, owned) for each input that
    needs one. `owned` says that the gradient is a new buffer that only this input receives (see gradients.py)."""
    if ctx.released or [parent._version for parent in ctx.parents] != ctx.input_versions:
        _refuse_stale(ctx)
    gxs = grads.backward(ctx, gy, y)  # on arrays, or on tensors recording a graph (the walk's form)
    arrays = [grads.array(gx) for gx in gxs]
    for watcher in watchers:
        watcher.on_backward(ctx, arrays)
    steps = []
    for parent, gx, needed in zip(ctx.parents, gxs, ctx.needs_input_grad):
        if needed and gx is not None:
            gx = sum_to(gx, parent.shape)
            steps.append((parent, gx, is_fresh(grads.array(gx), grads.array(gy), arrays)))
    return steps


def _leading_to(order: list[Tensor], wanted: set[int]) -> list[Tensor]:
    """The tensors of `order` from which a wanted tensor can be reached: only their ops need to run."""
    leading: set[int] = set()
    for tensor in order:
        if id(tensor) in wanted or tensor._ctx is not None and any(id(p) in leading for p in tensor._ctx.parents):
            leading.add(id(tensor))
    return [tensor for tensor in order if id(tensor) in leading]


def _as_list(tensors: Any) -> list:
    return list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]


def _refuse_stale(ctx: Any) -> None:
    """Refuse an op whose saved buffers were released by an earlier backward, or one that saved a tensor updated
    in place after it ran (tensor/versions.py): its gradient would silently be wrong. PyTorch refuses both too."""
    if ctx.released:
        raise RuntimeError(
            f"backward through the graph a second time ({ctx.name} already released its saved buffers); "
            "pass retain_graph=True to the first backward() or mg.grad() if you need to"
        )
    raise RuntimeError(versions.stale_message(ctx))
