"""Tensor's gradient hooks, a base class of Tensor: `register_hook` (a function called with a tensor's gradient
during backward, which may return a replacement) and `retain_grad` (keep a non-leaf tensor's gradient in `.grad`).

The engine's one seat for them is in autograd.py's walk: when a tensor's gradient is complete, before it goes
on to the op that made the tensor (or into a leaf's `.grad`), the tensor's hooks run, in the order they were
registered, each on what the one before returned. A tensor without hooks costs one attribute test.
Read next: ../core/autograd.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import minigrad
from minigrad.core import backend


class RemovableHandle:
    """What `register_hook` returns: `handle.remove()` takes the hook off again, as in PyTorch."""

    def __init__(self, hooks: list, hook: Callable) -> None:
        self.hooks, self.hook = hooks, hook

    def remove(self) -> None:
        if self.hook in self.hooks:
            self.hooks.remove(self.hook)


class HookMethods:
    """The gradient hooks of `Tensor` (tensor.py); `self` is always a Tensor."""

    __slots__ = ()

    def retain_grad(self) -> minigrad.Tensor:
        """Keep this non-leaf tensor's gradient in `.grad` after backward (as in PyTorch)."""
        self._retains_grad = True
        return self

    def register_hook(self, hook: Callable[[minigrad.Tensor], Any]) -> RemovableHandle:
        """Call `hook(grad)` each time this tensor's gradient is computed (backward, mg.grad); if it returns a
        tensor, that is used as the gradient from then on (for the ops before this tensor, and for `.grad`).

        Returns a handle whose `remove()` unregisters the hook. The hook must not change `grad` in place.
        """
        if not self.requires_grad:
            raise RuntimeError("register_hook: cannot register a hook on a tensor that does not require grad")
        if self._hooks is None:
            self._hooks = []
        self._hooks.append(hook)
        return RemovableHandle(self._hooks, hook)

    def _run_hooks(self, gy: Any, tensors: bool) -> Any:
        """`gy` (an array, or a tensor with create_graph) passed through this tensor's hooks."""
        grad = gy if tensors else minigrad.Tensor._make(gy, False)
        for hook in list(self._hooks):
            new = hook(grad)
            if new is None:
                continue
            if not isinstance(new, minigrad.Tensor) or new.shape != grad.shape or new.dtype != grad.dtype:
                got = f"shape {new.shape}, {new.dtype}" if isinstance(new, minigrad.Tensor) else type(new).__name__
                raise RuntimeError(f"hook {getattr(hook, '__name__', hook)!r} returned {got}; it must return None "
                                   f"or a tensor of the gradient's shape {grad.shape} and dtype {grad.dtype}")
            grad = new
        return grad if tensors else backend.to_device(grad.data, backend.device_of(gy))
