"""Seeded randomness: `manual_seed` drives every random draw of the library, on every device; a `Generator`
is a private stream for one purpose (a DataLoader's shuffle, a sampler), as `torch.Generator`.

Parameter initialisation and `randn` draw on the host from one NumPy generator and then move to the
device, so the same seed gives the same weights on the CPU and on the GPU. Dropout masks are drawn
on the device itself (a per-device generator seeded from the same seed), so no mask crosses the bus.

`get_rng_state` / `set_rng_state` save and restore the host generator (JSON-serialisable), which is
every draw on the CPU. A device's own generator restarts from the seed after `set_rng_state`, so on a
GPU, dropout masks after a resume differ from those of an uninterrupted run.

The streams are reproducible within minigrad (the same seed gives the same numbers on every run and
device), but they are NumPy's PCG64 streams, not PyTorch's Mersenne Twister and Philox: the same seed gives
different numbers under PyTorch. The sampling functions (`rand`, `randint`, `randperm`, `multinomial`,
`normal`, `bernoulli`) are in factories.py, beside `randn`.
Read next: nn/module.py (Module and Parameter); nn/init.py draws the initial weights from here.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

import numpy as np

from minigrad.core import backend

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


class Generator:
    """A random stream of its own, as `torch.Generator(device="cpu")`: pass it as `generator=` to keep one
    purpose's draws (a DataLoader's shuffle, a split) apart from the global stream of `manual_seed`.

        g = mg.Generator().manual_seed(2147483647)
        ix = mg.randint(0, 27, (32,), generator=g)

    Draws happen on the host (then move to the tensor's device), so a seed gives the same numbers on every
    device; they are not PyTorch's numbers for the same seed.
    """

    def __init__(self, device: Any = "cpu") -> None:
        self.device = backend.canonical_device(device)
        self.seed()

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from `seed`; returns the generator (so `Generator().manual_seed(s)` works)."""
        seed = int(seed)
        if seed < 0:
            raise RuntimeError(f"Generator.manual_seed: the seed must be non-negative, got {seed}")
        self._initial_seed = seed
        self.rng = np.random.default_rng(seed)
        return self

    def seed(self) -> int:
        """Seed from the operating system's entropy; returns the seed chosen (as `torch.Generator.seed`)."""
        seed = secrets.randbits(63)
        self.manual_seed(seed)
        return seed

    def initial_seed(self) -> int:
        """The seed this stream last started from."""
        return self._initial_seed

    def get_state(self) -> Any:
        """The stream's state as a uint8 tensor (as PyTorch's ByteTensor; here the bytes are JSON), for `set_state`."""
        from minigrad.tensor import Tensor  # random.py sits below tensor.py in the import order

        state = {"seed": self._initial_seed, "bit_generator": self.rng.bit_generator.state}
        return Tensor(np.frombuffer(json.dumps(state).encode(), dtype=np.uint8).copy(), dtype=np.uint8)

    def set_state(self, new_state: Any) -> Generator:
        """Restore a state returned by `get_state`; later draws repeat those made after it was taken."""
        data = backend.as_numpy(getattr(new_state, "array", new_state))
        if data.dtype != np.uint8 or data.ndim != 1:
            raise TypeError("Generator.set_state: expected the 1-D uint8 tensor that get_state returned")
        try:
            state = json.loads(data.tobytes().decode())
            self.rng.bit_generator.state = state["bit_generator"]
        except (ValueError, KeyError, TypeError) as error:
            raise RuntimeError("Generator.set_state: not a state returned by minigrad's Generator.get_state") from error
        self._initial_seed = state["seed"]
        return self


def rng_for(generator: Generator | None) -> np.random.Generator:
    """The NumPy generator a draw uses: `generator`'s stream, or the global one of `manual_seed`."""
    if generator is None:
        return _host_rng
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a minigrad Generator, not {type(generator).__name__}")
    return generator.rng
