"""Seeded randomness: `manual_seed` drives every random draw of the library, on every device.

Parameter initialisation and `randn` draw on the host from one NumPy generator and then move to the
device, so the same seed gives the same weights on the CPU and on the GPU. Dropout masks are drawn
on the device itself (a per-device generator seeded from the same seed), so no mask crosses the bus.

`get_rng_state` / `set_rng_state` save and restore the host generator (JSON-serialisable), which is
every draw on the CPU. A device's own generator restarts from the seed after `set_rng_state`, so on a
GPU, dropout masks after a resume differ from those of an uninterrupted run.
Read next: nn/module.py (Module and Parameter); nn/init.py draws the initial weights from here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from minigrad import backend

_seed: int | None = None
_host_rng = np.random.default_rng()
_device_rngs: dict[str, Any] = {}


def manual_seed(seed: int) -> None:
    """Reseed every generator of minigrad, so that a run is repeatable."""
    global _seed, _host_rng
    _seed = int(seed)
    _host_rng = np.random.default_rng(_seed)
    _device_rngs.clear()


def host_rng() -> np.random.Generator:
    """The NumPy generator behind initialisation and `randn`."""
    return _host_rng


def device_rng(device: str) -> Any:
    """The generator that draws directly on `device` (the host generator for 'cpu')."""
    if device == "cpu":
        return _host_rng
    if device not in _device_rngs:
        xp = backend.backend_for_device(device).xp
        _device_rngs[device] = xp.random.default_rng(_seed)
    return _device_rngs[device]


def get_rng_state() -> dict[str, Any]:
    """The host generator's state (JSON-serialisable), for checkpoints that resume exactly."""
    return {"seed": _seed, "host": _host_rng.bit_generator.state}


def set_rng_state(state: dict[str, Any]) -> None:
    """Restore what `get_rng_state` returned (device generators restart from the seed)."""
    global _seed
    _seed = state["seed"]
    _host_rng.bit_generator.state = state["host"]
    _device_rngs.clear()
