"""The grad-mode switch: whether ops record a graph for backward, one switch per thread, as in PyTorch.

`no_grad` (evaluation, sampling, the optimizer's update), `enable_grad` and `set_grad_enabled` turn it off and
on; `autograd.backward` also sets it while it runs: on when `create_graph` records the gradients' own graph,
off otherwise. It is the only global state in minigrad besides the seed, and a thread inside `no_grad` never
turns recording off for another thread.
Read next: autograd.py (the backward pass), which re-exports these names.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any


class _GradMode(threading.local):
    """Whether ops record a graph, one switch per thread (as in PyTorch): a thread inside `no_grad`
    never turns recording off for another thread. The class attribute is every thread's initial value."""

    enabled = True


grad_mode = _GradMode()


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

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        if len(args) == 1 and not kwargs and callable(args[0]):  # a bare `@mg.no_grad`, as PyTorch allows
            return cls()(args[0])
        return super().__new__(cls)

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


class inference_mode(_GradModeBlock):
    """Context manager and decorator, as `torch.inference_mode(mode=True)`: in minigrad the same as `no_grad`
    (PyTorch also skips version counting inside; minigrad has nothing more to skip). `mode=False` changes nothing.

        with mg.inference_mode():
            logits, _ = model(idx)
    """

    def __init__(self, mode: bool = True) -> None:
        super().__init__()
        self.inference = bool(mode)

    def __enter__(self) -> None:
        self._previous.append(grad_mode.enabled)
        if self.inference:
            grad_mode.enabled = False

    def __call__(self, function: Callable) -> Callable:
        inference = self.inference

        @functools.wraps(function)
        def with_mode(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(inference):
                return function(*args, **kwargs)

        return with_mode
