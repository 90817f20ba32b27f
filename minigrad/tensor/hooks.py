"""Tensor's gradient hooks, a base class of Tensor: `register_hook` (a function called with a tensor's gradient
during backward, which may return a replacement) and `retain_grad` (keep a non-leaf tensor's gradient in `.grad`).

They reach the engine as one observer of every backward walk (`TensorHooks`, core/observers.py): when a tensor's
gradient is complete, before it goes on to the op that made the tensor (or into a leaf's `.grad`), the tensor's
hooks run, in the order they were registered, each on what the one before returned.
Read next: ../core/observers.py, ../core/autograd.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import minigrad


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
