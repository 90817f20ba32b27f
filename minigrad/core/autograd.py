"""The backward pass: the chain rule applied to a recorded graph, in two steps.

1. Order the graph topologically (an explicit stack, so a 100,000-op chain does not hit Python's
   recursion limit), so that every tensor comes after everything it was computed from.
2. Walk that order backwards. Each tensor's gradient is complete when we reach it (all its uses come
   later in the order), so we hand it to the op that made the tensor, which returns one gradient per
   input. Broadcast inputs get their gradient summed back to their own shape here, once, in `sum_to`.
   (A slice instead adds its gradient straight into its input's gradient so far: `Function.backward_into`.)

The same walk gives `grad` (`torch.autograd.grad`: the gradients of some outputs with respect to some inputs,
running only the ops on a path between them) and, with `create_graph`, gradients that record a graph of their
own, for second and higher derivatives: each op's backward then runs on tensors (higher_order.py).
The grad-mode switch (`no_grad`, ...) is in grad_mode.py and re-exported here.
Read next: ops/elementwise.py for the simplest ops, fused/ for the hand-derived ones, higher_order.py.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import TYPE_CHECKING, Any

from minigrad.core.grad_mode import (  # noqa: F401  (the switch, used as autograd.no_grad, autograd.grad_mode, ...)
    enable_grad,
    grad_mode,
    is_grad_enabled,
    no_grad,
    set_grad_enabled,
)
from minigrad.tensor import versions

if TYPE_CHECKING:
    from minigrad.tensor import Tensor


# Set by `mg.detect_anomaly()` (anomaly.py) to an object with `forward(ctx, y)` and
# `backward(ctx, gxs)` checks; None, the default, costs one comparison per op.
anomaly_hook: Any = None

# Set by `mg.viz.record_modules(model)` (viz/graph.py) to an object with `enter(module)` (a context
# manager) and `scope` (the dotted names of the modules now running, outermost first). Module.__call__
# enters it and Function.apply copies `scope` onto each op, so a drawing can group ops by module.
# None, the default, costs one comparison per op and per module call.
scope_hook: Any = None


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
        ctx = tensor._ctx
        if ctx is not None and id(tensor) not in stop:
            if not ctx.released and ctx.input_versions != [parent._version for parent in ctx.parents]:
                versions.resolve(ctx)  # an input was updated in place after ctx ran (tensor/versions.py)
            for parent in reversed(ctx.parents):  # reversed: visit inputs left to right
                if (constants or parent.requires_grad) and id(parent) not in visited:
                    stack.append((parent, False))
    return order


def backward(
    root: Tensor,
    grad: Any,
    retain_graph: bool = False,
    on_step: Callable[[Tensor, Any], None] | None = None,
    create_graph: bool = False,
) -> None:
    """Backpropagate `grad` (a backend array shaped like `root`) to every leaf that requires grad.

    Leaves accumulate into `.grad` (as in PyTorch: gradients add up across calls until zeroed).
    Unless `retain_graph`, each op's saved buffers are released after use; the graph's structure
    stays, so it can still be drawn. `on_step(tensor, grad)` is called when a tensor's gradient is
    complete, in the order the engine visits tensors (anomaly detection and the backward
    animation listen here). An op whose input was updated in place after it ran raises a
    RuntimeError instead of using a stale saved input.

    With `create_graph`, `grad` is a Tensor and every op's backward runs on tensors (higher_order.py),
    so the gradients are tensors with a graph of their own, which can be differentiated again.
    """
    _propagate(topological_order(root), {id(root): grad}, _into_leaves, retain_graph, create_graph, on_step)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Tensor | None, ...]:
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
    collect = _Collect({id(x) for x in inputs})
    retain_graph = create_graph if retain_graph is None else retain_graph
    _propagate(_leading_to(topological_order(outputs), collect.wanted), seeds, collect, retain_graph, create_graph)
    grads: list[Tensor | None] = []
    for i, x in enumerate(inputs):
        if id(x) not in collect.found:
            if not allow_unused:
                raise RuntimeError(f"grad: input {i} (shape {x.shape}) was not used to compute the outputs; pass "
                                   "allow_unused=True to get None for it")
            grads.append(None)
        else:
            grads.append(_as_gradient(*collect.found[id(x)]))
    return tuple(grads)


def local_grads(y: Tensor, gy: Tensor, inputs: Sequence[Tensor]) -> tuple[Tensor | None, ...]:
    """The partial derivatives of `y` with respect to `inputs`, each input taken as a leaf (the graph is not
    followed past it), as tensors with a graph of their own; an input used twice gets its gradient once.

    higher_order.py differentiates an op's composed twin with it, so the inputs are the op's own.
    """
    collect = _Collect({id(x) for x in inputs if x.requires_grad}, follow_past=False)
    order = _leading_to(topological_order(y, stop=collect.wanted), collect.wanted)
    _propagate(order, {id(y): gy}, collect, True, True)
    grads: list[Tensor | None] = []
    for x in inputs:
        grads.append(_as_gradient(*collect.found.pop(id(x))) if id(x) in collect.found else None)
    return tuple(grads)


def _propagate(order: list[Tensor], seeds: dict[int, Any], deliver: Callable[[Tensor, Any, bool], bool],
               retain_graph: bool, create_graph: bool, on_step: Callable[[Tensor, Any], None] | None = None) -> None:
    """Step 2: the chain rule over `order` (step 1, `topological_order`), from the `seeds` (keyed by tensor id).

    `deliver(tensor, gy, owned)` is what the caller does with a tensor's finished gradient (`_into_leaves` for
    `backward`, a `_Collect` for `grad` and `local_grads`); it returns False to stop the walk at that tensor.
    """
    grads = _Gradients(seeds, tensors=create_graph)
    run_backward = _backward_on_tensors if create_graph else _backward_on_arrays
    with set_grad_enabled(create_graph):  # recording the gradients' own graph, or nothing
        for tensor in reversed(order):  # every use of a tensor comes later in the order: its gradient is complete
            gy = grads.pending.pop(id(tensor), None)
            if gy is None:
                continue  # no path from the roots reaches this tensor's gradient
            if tensor._hooks:  # register_hook (tensor/hooks.py): the hooks may replace the gradient, or keep it
                gy = tensor._run_hooks(gy, create_graph)
                grads.owned.discard(id(tensor))
            if on_step is not None:
                on_step(tensor, gy.data if create_graph else gy)
            ctx = tensor._ctx
            if not deliver(tensor, gy, id(tensor) in grads.owned) or ctx is None:
                continue
            if ctx.released or [parent._version for parent in ctx.parents] != ctx.input_versions:
                _refuse_stale(ctx)
            if not grads.added_into(ctx, gy):
                gxs = run_backward(ctx, gy, tensor)
                for parent, gx, needed in zip(ctx.parents, gxs, ctx.needs_input_grad):
                    if needed and gx is not None:
                        grads.add(parent, sum_to(gx, parent.shape), gy, gxs)
            if not retain_graph:
                ctx.release()


def _into_leaves(tensor: Tensor, gy: Any, owned: bool) -> bool:
    """What `backward` does with a finished gradient: add it to `.grad` of a leaf (or a `retain_grad` tensor)."""
    if tensor._ctx is None or tensor._retains_grad:
        tensor._accumulate_grad(gy, owned=owned)
    return True


class _Collect:
    """What `grad` and `local_grads` do with a finished gradient: keep those of the `wanted` tensors (by id) in
    `found`, as {id: (gradient, owned)}, and leave `.grad` alone. Without `follow_past`, the walk stops at them."""

    def __init__(self, wanted: set[int], follow_past: bool = True) -> None:
        self.wanted = wanted
        self.follow_past = follow_past
        self.found: dict[int, tuple[Any, bool]] = {}

    def __call__(self, tensor: Tensor, gy: Any, owned: bool) -> bool:
        if id(tensor) not in self.wanted:
            return True
        self.found[id(tensor)] = (gy, owned)
        return self.follow_past


def _backward_on_arrays(ctx: Any, gy: Any, y: Tensor) -> tuple:
    """The op's backward on raw arrays: nothing is recorded (training's fast path)."""
    gxs = ctx.backward(gy)
    if not isinstance(gxs, tuple):
        gxs = (gxs,)
    if anomaly_hook is not None:
        anomaly_hook.backward(ctx, gxs)
    return gxs


def _backward_on_tensors(ctx: Any, gy: Tensor, y: Tensor) -> tuple:
    """The op's backward on tensors, recording a graph of the gradients (create_graph=True; higher_order.py)."""
    from minigrad.core.higher_order import backward_on_tensors  # here: it imports the ops, which import this module

    gxs = backward_on_tensors(ctx, gy, y)
    if not isinstance(gxs, tuple):
        gxs = (gxs,)
    if anomaly_hook is not None:
        anomaly_hook.backward(ctx, [getattr(gx, "data", gx) for gx in gxs])
    return gxs


class _Gradients:
    """The gradients still being summed, keyed by tensor id, and the aliasing rule for summing them.

    A gradient is added into in place only if it is a buffer that no one else holds ("owned"): an op may hand
    the same array to two inputs (add returns gy twice), or a view of gy (reshape), and adding into such an
    array in place would corrupt the other gradient. An owned buffer can also become a leaf's .grad without a
    copy. With `tensors` (create_graph) the gradients are tensors, always added out of place; owned then only
    says whether one can become a .grad without a clone.
    """

    __slots__ = ("pending", "owned", "tensors")

    def __init__(self, seeds: dict[int, Any], tensors: bool) -> None:
        self.pending = seeds  # {tensor id: its gradient so far}; the walk pops each when it is complete
        self.owned: set[int] = set()
        self.tensors = tensors

    def added_into(self, ctx: Any, gy: Any) -> bool:
        """True if the op `ctx` of one input added its gradient for `gy` straight into that input's gradient so
        far (`Function.backward_into`), which must be a buffer this walk owns; False: run its backward instead.

        A slice's backward would make an array of zeros as large as its input and then add it: q, k and v,
        three slices of one projection, made three such arrays a layer. (Not with create_graph, or while anomaly
        detection checks every backward's gradients.)
        """
        if self.tensors or anomaly_hook is not None or len(ctx.parents) != 1 or not ctx.needs_input_grad[0]:
            return False
        key = id(ctx.parents[0])
        return key in self.owned and key in self.pending and ctx.backward_into(self.pending[key], gy)

    def add(self, parent: Tensor, gx: Any, gy: Any, gxs: tuple) -> None:
        """Add `gx`, one of the gradients `gxs` that an op returned for upstream gradient `gy`, to `parent`'s."""
        key = id(parent)
        if key not in self.pending:
            self.pending[key] = gx
            if _is_fresh(gx, gy, gxs, self.tensors):
                self.owned.add(key)
        elif key in self.owned and not self.tensors:
            self.pending[key] += gx
        else:  # a new tensor (or array) that no one else holds
            self.pending[key] = self.pending[key] + gx
            self.owned.add(key)


def _leading_to(order: list[Tensor], wanted: set[int]) -> list[Tensor]:
    """The tensors of `order` from which a wanted tensor can be reached: only their ops need to run."""
    leading: set[int] = set()
    for tensor in order:
        if id(tensor) in wanted or tensor._ctx is not None and any(id(p) in leading for p in tensor._ctx.parents):
            leading.add(id(tensor))
    return [tensor for tensor in order if id(tensor) in leading]


def _as_gradient(g: Any, owned: bool) -> Tensor:
    """A gradient as `grad` returns it: a Tensor that shares its memory with nothing else."""
    from minigrad.tensor import Tensor

    if isinstance(g, Tensor):
        return g if owned else g.clone()
    return Tensor._make(g if owned else g.copy(), False)


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


def _is_fresh(gx: Any, gy: Any, gxs: tuple, tensors: bool = False) -> bool:
    """Whether an op's returned gradient is a new array that only this input receives.

    Not fresh: gy itself, a view of any array (reshape, transpose and broadcast_to return views, and
    a broadcast view is not even writable), or an array the op returned for two inputs. With `tensors`,
    the same holds for the arrays of gradient tensors.
    """
    if tensors:
        gx, gy, gxs = gx.data, gy.data, tuple(getattr(g, "data", None) for g in gxs)
    return gx is not gy and getattr(gx, "base", None) is None and sum(g is gx for g in gxs) == 1
