"""Backends: the one module that knows NumPy, CuPy and the strict stand-in device.

An op never asks "am I on the GPU?". It asks `get_array_module(x)` for `xp`, the array module that
owns `x` (`numpy`, `cupy`, or the stand-in), and writes its math once with `xp.*`.

Three devices:
- ``"cpu"``: NumPy.
- ``"cuda"`` / ``"cuda:N"``: CuPy, imported only when first asked for.
- ``"strict"``: a stand-in that behaves like CuPy but runs on NumPy (see `minigrad/core/strict_device.py`).
  Its arrays refuse silent conversion to NumPy, so the CPU test suite catches host/device leaks.

Read next: tensor/tensor.py, which wraps these arrays in a `Tensor`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Backend:
    """How to reach one kind of device: its array module and the two copies across the bus."""

    name: str  # "cpu", "cuda" or "strict"
    xp: Any  # the array module: numpy, cupy, or the stand-in
    array_type: type  # the array class this backend owns
    from_host: Callable[[np.ndarray, str], Any]  # numpy array, device string -> backend array
    to_host: Callable[[Any], np.ndarray]  # backend array -> numpy array


_CPU = Backend("cpu", np, np.ndarray, lambda a, device: a, lambda a: a)
_backends: dict[str, Backend] = {"cpu": _CPU}
_by_array_type: dict[type, Backend] = {np.ndarray: _CPU}
# Array-like classes that are no device's arrays but have an array module of their own: the tensor package
# registers Tensor here (with its NumPy names on tensors), so that an op's backward can run on tensors.
_other_array_modules: dict[type, Any] = {}


def _register(backend: Backend) -> Backend:
    _backends[backend.name] = backend
    _by_array_type[backend.array_type] = backend
    return backend


def _load_cupy() -> ModuleType | None:
    try:
        return importlib.import_module("cupy")
    except ImportError:
        return None


def _cuda_backend() -> Backend:
    """CuPy as a backend. Raises a RuntimeError that says what to install when it is missing."""
    if "cuda" in _backends:
        return _backends["cuda"]
    cupy = _load_cupy()
    if cupy is None:
        raise RuntimeError(
            "device 'cuda' needs CuPy and an NVIDIA GPU: pip install -e '.[cuda12]' (or '.[cuda13]')"
        )

    def from_host(array: np.ndarray, device: str) -> Any:
        with cupy.cuda.Device(_device_index(device)):
            return cupy.asarray(array)

    return _register(Backend("cuda", cupy, cupy.ndarray, from_host, cupy.asnumpy))


def _strict_backend() -> Backend:
    if "strict" not in _backends:
        from minigrad.core import strict_device as strict

        _register(Backend("strict", strict.xp, strict.StrictArray, lambda a, d: strict.xp.asarray(a),
                          strict.asnumpy))
    return _backends["strict"]


def _device_index(device: str) -> int:
    return int(device.split(":")[1]) if ":" in device else 0


def canonical_device(device: Any) -> str:
    """'cpu', 'cuda', 'cuda:1' or 'strict' from what a user wrote (None means 'cpu')."""
    if device is None:
        return "cpu"
    name = str(device)
    if name == "cuda:0":
        return "cuda"
    kind, _, index = name.partition(":")
    if kind not in ("cpu", "cuda", "strict") or (":" in name and (kind != "cuda" or not index.isdigit())):
        raise ValueError(f"unknown device {device!r}: use 'cpu', 'cuda', 'cuda:N' or 'strict'")
    return name


def backend_for_device(device: str) -> Backend:
    kind = device.split(":")[0]
    if kind == "cuda":
        return _cuda_backend()
    if kind == "strict":
        return _strict_backend()
    return _CPU


def backend_of(array: Any) -> Backend:
    """The backend that owns `array` (NumPy scalars count as host arrays)."""
    backend = _by_array_type.get(type(array))
    if backend is None:
        if isinstance(array, (np.generic, np.ndarray)):
            return _CPU
        raise TypeError(f"not a backend array: {type(array).__name__}")
    return backend


def get_array_module(array: Any) -> Any:
    """The array module (`numpy`, `cupy` or the stand-in) whose functions work on `array`.

    A class given to `register_array_module` gets the module registered for it: a Tensor's is
    `minigrad.tensor.xp`, NumPy's names on tensors, for an op's backward run on tensors (higher_order.py).
    """
    backend = _by_array_type.get(type(array))
    if backend is None and not isinstance(array, (np.generic, np.ndarray)):
        for array_class, module in _other_array_modules.items():
            if isinstance(array, array_class):
                return module
    return (backend or backend_of(array)).xp


def register_array_module(array_class: type, module: Any) -> None:
    """Make `get_array_module` return `module` for instances of `array_class` (see _other_array_modules)."""
    _other_array_modules[array_class] = module


def device_of(array: Any) -> str:
    """The device string of a backend array: 'cpu', 'strict', 'cuda' or 'cuda:N'."""
    backend = backend_of(array)
    if backend.name == "cuda" and array.device.id != 0:
        return f"cuda:{array.device.id}"
    return backend.name


def to_device(array: Any, device: str) -> Any:
    """Copy `array` to `device` (an explicit copy across the bus; a no-op when it is already there)."""
    if device_of(array) == device:
        return array
    return backend_for_device(device).from_host(as_numpy(array), device)


def as_numpy(array: Any) -> np.ndarray:
    """A host NumPy copy (or view, on the CPU) of any backend array."""
    return np.asarray(backend_of(array).to_host(array))


def cuda_is_available() -> bool:
    """True when CuPy imports and sees at least one GPU."""
    return cuda_device_count() > 0


def cuda_device_count() -> int:
    """How many GPUs CuPy sees: 0 without CuPy, a driver or a GPU."""
    cupy = _load_cupy()
    if cupy is None:
        return 0
    try:
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # CuPy raises its own CUDARuntimeError when there is no driver
        return 0



def load_nccl() -> ModuleType:
    """CuPy's NCCL bindings (`cupy.cuda.nccl`), for minigrad.distributed's "nccl" backend.

    Raises a RuntimeError that says what to install when CuPy or its NCCL library is missing.
    """
    if _load_cupy() is None:
        raise RuntimeError("backend 'nccl' needs CuPy and an NVIDIA GPU: pip install -e '.[cuda12]' (or '.[cuda13]')")
    try:
        return importlib.import_module("cupy.cuda.nccl")
    except ImportError as error:
        raise RuntimeError(f"backend 'nccl': CuPy cannot load NCCL ({error}); pip install nvidia-nccl-cu12") from error


def use_cuda_device(index: int) -> None:
    """Make GPU `index` this process's current device (each rank of a job takes its own GPU)."""
    _cuda_backend().xp.cuda.Device(index).use()
