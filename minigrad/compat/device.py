"""`mg.device`, as `torch.device`: a device named by its type and, optionally, its index.

minigrad names a device by a string everywhere ('cpu', 'cuda', 'cuda:1'), so a `device` is that string, with
PyTorch's attributes on it: `.type` ('cpu' or 'cuda') and `.index` (an int, or None when none was given), and
PyTorch's repr, `device(type='cuda', index=1)`. Being a string, it is accepted wherever a device string is
(`tensor(..., device=d)`, `x.to(d)`, `model.to(d)`, `zeros(2, device=d)`) and it compares equal to its string.
One difference from PyTorch, chosen so: PyTorch's `torch.device("cpu") == "cpu"` is False (a device equals only a
device); here it is True, so that the one spelling of a device minigrad uses everywhere stays one.

    device = mg.device("cuda" if mg.cuda.is_available() else "cpu")
    x = mg.zeros(2, 3, device=device)
    x.device.type        # 'cpu'
Read next: ../core/backend.py (the device names it stands for).
"""

from __future__ import annotations

from typing import Any

TYPES = ("cpu", "cuda", "strict")  # strict: the CPU suite's stand-in for a GPU (core/strict_device.py)


class device(str):  # noqa: N801 (PyTorch's name)
    """A device name ('cpu', 'cuda', 'cuda:1') that also answers `.type` and `.index`, as torch.device does.

    `device("cuda:1")`, `device("cuda", 1)`, `device(0)` (GPU 0, as in PyTorch) and `device(other_device)`.
    """

    __slots__ = ()

    def __new__(cls, type: Any, index: int | None = None) -> device:  # noqa: A002 (PyTorch's name)
        if isinstance(type, device) and index is None:
            return type
        if isinstance(type, int) and not isinstance(type, bool):  # torch.device(1) is cuda:1
            type, index = "cuda", type
        if not isinstance(type, str):
            raise TypeError(f"device(): expected a string or an int, not {type.__class__.__name__}")
        kind, colon, number = type.partition(":")
        if kind not in TYPES or (colon and not number.isdigit()):
            raise RuntimeError(f"device(): unknown device {type!r}: minigrad has 'cpu' and 'cuda' (or 'cuda:N')")
        if colon and index is not None:
            raise RuntimeError(f"device(): type (string) must not include an index because index was passed "
                               f"explicitly: {type}")
        if index is not None and (isinstance(index, bool) or not isinstance(index, int) or index < 0):
            raise RuntimeError(f"device(): the index must be a non-negative int, not {index!r}")
        return super().__new__(cls, type if index is None else f"{kind}:{index}")

    @property
    def type(self) -> str:
        """'cpu' or 'cuda' (without the index)."""
        return str(self).partition(":")[0]

    @property
    def index(self) -> int | None:
        """The device's number ('cuda:1' -> 1), or None when the name has none ('cuda', 'cpu')."""
        _, colon, number = str(self).partition(":")
        return int(number) if colon else None

    def __repr__(self) -> str:
        index = self.index
        return f"device(type={self.type!r})" if index is None else f"device(type={self.type!r}, index={index})"


_named: dict[str, device] = {}  # one object per name: a tensor's .device makes no new object each time


def device_named(name: str) -> device:
    """The device called `name` (a canonical name from core/backend.py), made once and then reused."""
    found = _named.get(name)
    if found is None:
        found = _named[name] = device(name)
    return found
