"""Anomaly detection: find the op that first produced a NaN or an infinity, forward or backward.

A NaN loss says that something went wrong, not where. Inside `with mg.detect_anomaly():` every op
checks its output (forward) and the gradients it hands back (backward), and the first non-finite value
raises `AnomalyError` naming the op, its input shapes, and the line of *your* code that created it:

    with mg.detect_anomaly():
        loss = model(x, y)[1]      # AnomalyError: Log produced nan in forward ... created at train.py:42
        loss.backward()

How it works: `detect_anomaly` adds an observer (core/observers.py) to the engine's active ones: its
`on_forward`, which `Function.apply` calls, records `ctx.created_at` (the Python stack) and checks the output;
its `on_backward`, which the backward walk calls, checks the gradients. Switched off, anomaly detection costs
nothing beyond the loop over an empty list of observers. Checking reads every output, so it is slow: use it to
hunt a bug, not to train.
Read next: gradcheck.py, the other debugging tool.
"""

from __future__ import annotations

import functools
import math
import os
import traceback
from collections.abc import Callable
from typing import Any

from minigrad.core import backend, observers
from minigrad.core.gradients import dense
from minigrad.core.observers import AnomalyError
from minigrad.ops.elementwise import MaskedFill

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # minigrad/, not tools/


class detect_anomaly:
    """Context manager and decorator: raise `AnomalyError` at the first NaN or inf an op produces.

    In forward, a NaN always counts; an infinity counts only when no input held one and the op was not
    asked for it (`masked_fill(mask, -inf)` in attention is intended). In backward, any non-finite
    gradient counts. Nested uses restore the previous state on exit.
    """

    def __enter__(self) -> detect_anomaly:
        self._checker = _Checker()
        observers.active.append(self._checker)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        observers.active.remove(self._checker)

    def __call__(self, function: Callable) -> Callable:
        @functools.wraps(function)
        def checked(*args: Any, **kwargs: Any) -> Any:
            with detect_anomaly():
                return function(*args, **kwargs)

        return checked


class _Checker(observers.Observer):
    """The observer of every op while detection is on: it checks outputs and gradients."""

    def on_forward(self, ctx: Any, inputs: tuple, y: Any) -> None:
        ctx.created_at = traceback.extract_stack()[:-3]  # [:-3]: not this call, Function.apply, nor its caller
        found = _non_finite(y)
        if found is None:
            return
        inputs_have = [_non_finite(t.array) for t in inputs]
        if found == "inf" and (any(inputs_have) or isinstance(ctx, MaskedFill) and math.isinf(ctx.value)):
            return  # an infinity passed along or asked for (an attention mask), not created by accident
        came_in = [f"input {i}" for i, kind in enumerate(inputs_have) if kind == "nan"]
        hint = f" (it was already in {', '.join(came_in)}: check the data you feed in)" if came_in else ""
        raise AnomalyError(
            f"{ctx.name} produced {found} in its forward output{hint}\n"
            f"  inputs: {_describe(inputs)}\n{_where(ctx)}"
        )

    def on_backward(self, ctx: Any, gxs: list) -> None:
        for i, gx in enumerate(gxs):
            found = None if gx is None else _non_finite(dense(gx))  # dense: a slice's gradient, checked whole
            if found is not None:
                raise AnomalyError(
                    f"{ctx.name} produced {found} in the gradient of its input {i} during backward\n"
                    f"  inputs: {_describe(ctx.parents)}\n{_where(ctx)}"
                )


def _non_finite(array: Any) -> str | None:
    """'nan', 'inf' or None: what, if anything, is not finite in a float array (one read from the device)."""
    if getattr(array, "dtype", None) is None or array.dtype.kind != "f":
        return None
    xp = backend.get_array_module(array)
    if bool(xp.isfinite(array).all()):
        return None
    return "nan" if bool(xp.isnan(array).any()) else "inf"


def _describe(tensors: Any) -> str:
    return ", ".join(f"{tuple(t.shape)} {t.dtype}" for t in tensors)


def _where(ctx: Any) -> str:
    """Where the op was created: the innermost frames of the stack that lie outside minigrad."""
    stack = getattr(ctx, "created_at", None)  # a slot: it survives ctx.release() after backward
    if stack is None:
        return "  created: unknown (the graph was built before detect_anomaly was switched on)"
    user_frames = [frame for frame in stack if not frame.filename.startswith(_PACKAGE_DIR)]
    if not user_frames:
        return "  created: inside minigrad"
    frame = user_frames[-1]
    lines = [f"  created at {frame.filename}:{frame.lineno} in {frame.name}",
             "  the op's creation, most recent call last:"]
    lines += [line.rstrip("\n") for line in traceback.format_list(user_frames[-4:])]
    return "\n".join(lines)
