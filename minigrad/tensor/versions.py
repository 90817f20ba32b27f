"""In-place updates inside a recorded graph, as PyTorch records them: version counters and stand-ins.

`y.mul_(2)` on a tensor y that an op computed (or `out[i] = value` where value requires grad) is recorded: y
keeps its identity and its array, which is written in place, but from then on y is the output of the new op
(MulBackward's, so to speak), and the op's input is a stand-in (`stand_in`) for y as it was: the same array,
y's previous op and y's previous version. Each update counts y's `_version` up; every op remembers the
versions of its inputs when it ran (function.py).

At backward, an op whose input has a newer version than it saw (`resolve`, in a pre-pass before the walk)
either saved that input's array for its backward, and then backward refuses with PyTorch's error (the saved
values were overwritten: the gradient would be wrong), or did not (an addition, a reshape, an index), and then
its gradient goes to the stand-in for the version it saw, as PyTorch's goes to the earlier node. An op that
saved its own output (exp, tanh, softmax) is refused in the same way once that output is changed in place.

An update through a view (`v = x.reshape(-1, n)` or `x[0]` or `x.T`, then `v[mask] = -1e6`, as the English d2l
textbook's masked_softmax writes it) changes x's values too, since they share memory. It is recorded when v was
made by reshapes, permutes and basic indices from a tensor x that owns its memory (`bases_of_view`): v is
updated as above, and x (and each view between) becomes the output of the op that puts v back in its place
(`update_base`, PyTorch's CopySlices), so that x's later uses differentiate through the update. Known limit:
another view of x, made before the update and used after it, still points at x as it was; an in-place update
through any other view is refused with a one-line error.

Read next: shape.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import minigrad

STALE_HINT = "Hint: update it after backward, or compute on a clone() of it"


def stand_in(tensor: Any) -> Any:
    """A tensor standing for `tensor` as it is now (its array, its op, its version), for the op about to
    update it in place to take as its input."""
    old = type(tensor)._make(tensor.array, tensor.requires_grad)
    old._ctx, old._version = tensor._ctx, tensor._version
    return old


def take_over(tensor: Any, result: Any, old: Any) -> None:
    """Make `tensor` the output of `result`'s op (which took `old`, the stand-in, as its input), one version on."""
    previous = old._ctx
    if previous is not None and saves(previous, tensor.array):  # exp, tanh, softmax: their output is overwritten
        previous.output_changed = (old._version, tensor._version + 1)
        previous.input_versions = None  # so that backward stops at it (autograd._refuse_stale says why)
    ctx = result._ctx
    ctx.in_place_of = old
    tensor._ctx = ctx
    tensor.requires_grad = True
    tensor._version += 1


VIEW_OPS = ("Reshape", "Permute", "GetItem")


def bases_of_view(view: Any) -> list | None:
    """[(op, base), ...] from `view` up to the tensor its memory belongs to: each base is the tensor its op made the
    previous view from (one reshape, permute or basic index: no integer arrays), up to one made otherwise (an op's
    output may itself be a view of the op's own scratch array, as Linear's is). [] when `view` is that tensor
    itself; None when an in-place update through it cannot be recorded (a view made outside the graph)."""
    links, node, owner = [], view, view.array.base
    # Up the views to the owner of the memory; an op that update_base recorded (it puts a view back into its base)
    # makes its output a base, not a view, so the walk stops there and never goes round the view and its base.
    while node.array is not owner and node._ctx is not None and node._ctx.name in VIEW_OPS and \
            not getattr(node._ctx, "puts_back", False):
        ctx = node._ctx
        if ctx.released or len(ctx.parents) != 1 or getattr(ctx, "advanced", None) is not None:
            return None
        node = ctx.parents[0]
        if node.array is not owner and node.array.base is not owner:
            return None
        links.append((ctx, node))
    # The memory's tensor owns it, or is an op's output that is a view of the op's scratch array; a view made outside
    # the graph (x.detach()[0]) has no op, and what it shares is unknown: refused.
    return links if node.array is owner or (node._ctx is not None and node.array.base is owner) else None


def update_base(base: Any, view: Any, ctx: Any) -> None:
    """After `view` (made from `base` by the op `ctx`, sharing its memory) was updated in place, record base's new
    values as a function of the view, as PyTorch's CopySlices: base becomes the output of the op that puts the view
    back (a reshape back, the inverse permute, or writing it into its slice). The view's op reads base as it is
    now (PyTorch replays a view on its base's latest values); then the view is made again from the new base, so
    that whatever reads either one later differentiates through the update."""
    base_before = stand_in(base)
    ctx.parents, ctx.input_versions = (base_before,), [base_before._version]
    ops = minigrad.ops
    if ctx.name == "Reshape":
        result = ops.shape.Reshape.apply(view, shape=base.shape)
    elif ctx.name == "Permute":
        result = ops.shape.Permute.apply(view, dims=tuple(int(d) for d in np.argsort(ctx.dims)))
    else:  # the slice written back into base's array: the same memory, so only the graph changes
        result = ops.indexing.SetItem.apply(base_before, view, basic=ctx.basic, advanced=None)
    result._ctx.puts_back = True  # (bases_of_view stops here)
    take_over(base, result, base_before)
    view_before = stand_in(view)
    if ctx.name == "Reshape":
        result = ops.shape.Reshape.apply(base, shape=view.shape)
    elif ctx.name == "Permute":
        result = ops.shape.Permute.apply(base, dims=ctx.dims)
    else:
        result = ops.indexing.GetItem.apply(base, basic=ctx.basic, advanced=None)
    take_over(view, result, view_before)


def write_result(tensor: Any, result: Any) -> None:
    """Write `result` (computed from a stand-in for `tensor`) into `tensor`'s own array, keeping what its op saved
    right: a saved input (mul_ keeps x for the other factor's gradient) is kept as a copy, as PyTorch keeps the
    original of an in-place op's input. A saved output (exp_, div_) keeps its own array, so a later in-place
    update cannot change it: PyTorch refuses `h.exp_(); h.add_(1)` at backward, minigrad's gradient is right."""
    ctx, array = result._ctx, tensor.array
    kept = None
    for name, value in vars(ctx).items():
        if value is array:
            kept = array.copy() if kept is None else kept
            setattr(ctx, name, kept)
        elif getattr(value, "base", None) is not None and value.base is (array.base if array.base is not None
                                                                         else array):
            raise RuntimeError(f"{ctx.name}: minigrad cannot record this in-place update (the op saved a view of "
                               "the tensor); write y = y op ... instead")
    array[...] = result.array  # an output the op saved (exp_'s) stays in its own array, so it stays right


def saves(ctx: Any, array: Any) -> bool:
    """Whether the op `ctx` saved `array` (or a view of the same memory) for its backward."""
    bases = {id(array)} | ({id(array.base)} if getattr(array, "base", None) is not None else set())
    for value in vars(ctx).values():
        for item in value if isinstance(value, (tuple, list)) else (value,):
            if id(item) in bases or (getattr(item, "base", None) is not None and id(item.base) in bases):
                return True
    return False


def resolve_all(order: list) -> bool:
    """The pre-pass before a backward walk: resolve each op of `order` (autograd.order_graph) that saw an older
    version of an input. True if an op's inputs moved, so that the graph (now with the stand-ins) is ordered again."""
    moved = False
    for tensor in order:
        ctx = tensor._ctx
        if ctx is not None and not ctx.released and ctx.input_versions != [p._version for p in ctx.parents]:
            moved = resolve(ctx) or moved
    return moved


def resolve(ctx: Any) -> bool:
    """Called when an input of `ctx` has a newer version than `ctx` saw: route the gradient of each such input
    to the tensor as `ctx` saw it (its stand-in, see the module docstring), unless `ctx` saved its values, in
    which case the versions stay mismatched and backward refuses (autograd._refuse_stale). True if it moved one."""
    if ctx.input_versions is None or ctx.released:
        return False
    parents = list(ctx.parents)
    for i, (parent, seen) in enumerate(zip(parents, ctx.input_versions)):
        if parent._version == seen or saves(ctx, parent.array):
            continue
        node = parent
        while node._version != seen and getattr(node._ctx, "in_place_of", None) is not None:
            node = node._ctx.in_place_of
        parents[i] = node
        ctx.input_versions[i] = node._version  # changed without a record (under no_grad), but not saved: fine
    moved = any(new is not old for new, old in zip(parents, ctx.parents))
    ctx.parents = tuple(parents)
    return moved


def stale_message(ctx: Any) -> str:
    """PyTorch's error for an op whose saved tensor was changed in place after it ran, naming which."""
    changed = getattr(ctx, "output_changed", None)
    if changed is not None:
        what, (expected, now) = f"output 0 of {ctx.name}", changed
    else:
        i, parent, expected = next((i, p, v) for i, (p, v) in enumerate(zip(ctx.parents, ctx.input_versions))
                                   if p._version != v)
        what, now = f"input {i} of {ctx.name} (shape {parent.shape})", parent._version
    return ("one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{what} is at version {now}; expected version {expected} instead. {STALE_HINT}")
