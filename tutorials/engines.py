"""The two tensor engines the learner's GPT runs on, and the few lines of module bookkeeping it needs on either.

`MINIGRAD` is minigrad's engine; `engine_of(module)` is the learner's own (tutorials/exercises/engine.py, or the
reference answer in tutorials/solutions/engine.py): a Tensor class, `apply` that records an op, and `no_grad`.
The learner's GPT (capstone.py) calls only tensor methods both engines have (lecture 09's exercise file lists them),
so the same code runs on either. `Module` is what that GPT needs of minigrad's nn.Module (parameters and submodules
named in the order they are assigned, state_dict, load_state_dict), for tensors of either engine.
Read next: your_engine.py, which loads the learner's engine part by part.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

import minigrad as mg


@dataclass(frozen=True)
class Engine:
    """A tensor engine, as the learner's GPT uses it."""

    name: str  # how the lecture names it: "minigrad 的引擎", "你的引擎"
    tensor: Callable[[np.ndarray, bool], Any]  # (array, requires_grad) -> a tensor holding that array
    function: Callable[..., Any]  # (an op class with forward/backward on arrays, *tensors) -> its output (5.5)
    no_grad: Callable[[], Any]  # a context manager: ops run but record nothing


MINIGRAD = Engine("minigrad 的引擎",
                  lambda array, requires_grad: mg.tensor(array, requires_grad=requires_grad, dtype=array.dtype),
                  lambda op, *xs: op.apply(*xs), mg.no_grad)


def engine_of(module: ModuleType, name: str = "你的引擎") -> Engine:
    """The engine in `module`, a file shaped like tutorials/exercises/engine.py (its Tensor, apply, no_grad)."""
    return Engine(name, lambda array, requires_grad: module.Tensor(array, requires_grad=requires_grad),
                  lambda op, *xs: module.apply(op(), *xs), module.no_grad)


def as_array(x: Any) -> np.ndarray:
    """A tensor of either engine, or anything NumPy takes, as a NumPy array."""
    return np.asarray(x.numpy() if hasattr(x, "numpy") else x)


class Module:
    """Parameters (tensors that require grad) and submodules, registered in the order they are assigned.

    Named as minigrad's (and PyTorch's) nn.Module names them, `transformer.h.0.attn.c_attn.weight`; a tensor assigned
    twice (tied weights) is one parameter under its first name, and in the state_dict under both.
    """

    def __init__(self) -> None:
        object.__setattr__(self, "_members", {})

    def __setattr__(self, name: str, value: Any) -> None:
        if isinstance(value, Module) or getattr(value, "requires_grad", False):
            self._members[name] = value
        object.__setattr__(self, name, value)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    def _named(self, prefix: str = "") -> Iterator[tuple[str, Any]]:
        for name, value in self._members.items():
            if isinstance(value, Module):
                yield from value._named(f"{prefix}{name}.")
            else:
                yield prefix + name, value

    def named_parameters(self) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        for name, p in self._named():
            if id(p) not in seen:
                seen.add(id(p))
                yield name, p

    def parameters(self) -> Iterator[Any]:
        return (p for _, p in self.named_parameters())

    def num_parameters(self) -> int:
        return sum(int(np.prod(p.shape)) for p in self.parameters())

    def state_dict(self) -> dict[str, Any]:
        return dict(self._named())

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Copy each array of `state_dict` (tensors of either engine, or arrays) into the parameter of that name."""
        mine = self.state_dict()
        missing, unexpected = set(mine) - set(state_dict), set(state_dict) - set(mine)
        if missing or unexpected:
            raise KeyError(f"load_state_dict: missing {sorted(missing)[:3]}, unexpected {sorted(unexpected)[:3]}")
        for name, p in mine.items():
            array = as_array(state_dict[name])
            if array.shape != tuple(p.shape):
                raise ValueError(f"load_state_dict: {name} has shape {tuple(p.shape)}, the dict's {array.shape}")
            p.array[...] = array  # into the parameter's own array, in its own dtype
