"""How big a GPT is: its parameter count, the memory one training step takes, and what the machine has.

train.py weighs a configuration against the machine before it allocates anything, so `--block-size 100000`
is refused in a second, naming the figure (one (B, nh, T, T) attention matrix alone would be 1.75 TiB),
instead of failing a minute later with a MemoryError. checkpoint.py bounds what it reads from a checkpoint
by the parameter count its config.json declares.

The estimate of a training step, in float32 numbers (4 bytes each):

    parameters             P            the weights (and the position tables rope or sinusoidal compute)
    gradients              P
    AdamW's two moments    2 P
    activations, per layer 32 B T C     what the graph keeps for backward: LayerNorms, q k v, the 4C-wide MLP...
                         + 3 B nh T T   the attention scores, their softmax, and its gradient
    logits                 4 B T V      the logits, their softmax and gradient (cross-entropy)

The factors were measured (peak traced memory of two training steps, for several shapes) and rounded up.
Read next: cli.py.
"""

from __future__ import annotations

import os
from pathlib import Path

from minigpt.config import GPTConfig

FLOAT_BYTES = 4  # everything is float32


def parameter_count(config: GPTConfig) -> int:
    """The number of trainable numbers in GPT(config), counted without building it (tests/test_sizing.py
    holds this equal to GPT(config).num_parameters())."""
    C, V = config.n_embd, config.vocab_size
    bias = 1 if config.bias else 0
    layer_norm = C + bias * C  # gain (and shift)
    attention = (C * 3 * C + bias * 3 * C) + (C * C + bias * C)  # c_attn, c_proj
    mlp = (C * 4 * C + bias * 4 * C) + (4 * C * C + bias * C)  # c_fc, c_proj
    block = 2 * layer_norm + attention + mlp
    total = V * C + config.n_layer * block  # token embedding, blocks
    total += config.block_size * C if config.pos_encoding == "learned" else 0  # position embedding
    total += layer_norm if config.norm_position == "pre" else 0  # the final LayerNorm
    total += 0 if config.tie_weights else V * C  # an lm_head of its own
    return total


def model_bytes(config: GPTConfig) -> int:
    """The memory GPT(config) takes: its weights, and the position tables it computes (float64 as they are made)."""
    T, C, hs = config.block_size, config.n_embd, config.head_size
    tables = {"rope": 3 * T * hs + hs * hs, "sinusoidal": 2 * T * C}.get(config.pos_encoding, 0)
    return FLOAT_BYTES * parameter_count(config) + 8 * tables


def training_bytes(config: GPTConfig, batch_size: int) -> tuple[int, str]:
    """The memory one training step of a `batch_size` batch needs (see the module docstring), and its largest part."""
    B, T, C, nh, V, L = batch_size, config.block_size, config.n_embd, config.n_head, config.vocab_size, config.n_layer
    layers = f"{L} layer{'s' if L > 1 else ''}"
    parts = {
        "the model": model_bytes(config) / FLOAT_BYTES,
        "gradients and AdamW's moments": 3 * parameter_count(config),
        f"activations, {layers} of (B, T, C) = ({B}, {T}, {C})": L * 32 * B * T * C,
        f"attention matrices, {layers} of 3 (B, nh, T, T) = ({B}, {nh}, {T}, {T})": L * 3 * B * nh * T * T,
        f"logits (B, T, V) = ({B}, {T}, {V})": 4 * B * T * V,
    }
    largest = max(parts, key=parts.get)
    return int(FLOAT_BYTES * sum(parts.values())), largest


def available_memory(device: str = "cpu") -> int | None:
    """Bytes the machine can still give this process on `device` (None when it cannot tell)."""
    if device.startswith("cuda"):
        return _free_gpu_memory(device)
    limits = [_meminfo_available(), _cgroup_available()]
    known = [limit for limit in limits if limit is not None]
    return min(known) if known else None


def format_bytes(n: float) -> str:
    """1536 -> '1.5 KiB'; 1.9e12 -> '1.75 TiB'."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if n < 1024 or unit == "PiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.3g} {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def _meminfo_available() -> int | None:
    """Linux's own estimate of what can be allocated without swapping (MemAvailable)."""
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return _sysconf_available()


def _sysconf_available() -> int | None:
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):  # not on this system (macOS, Windows)
        return None


def _cgroup_available() -> int | None:
    """In a container the limit is often the cgroup's (v2), well below the machine's free memory."""
    try:
        limit = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        used = int(Path("/sys/fs/cgroup/memory.current").read_text())
    except (OSError, ValueError):
        return None
    return None if limit == "max" else max(int(limit) - used, 0)


def _free_gpu_memory(device: str) -> int | None:
    """The GPU's free memory, asked through minigrad's backend (the one module that imports CuPy)."""
    from minigrad.core import backend

    try:
        xp = backend.backend_for_device(device).xp
        index = int(device.partition(":")[2] or 0)
        return int(xp.cuda.Device(index).mem_info[0])
    except (AttributeError, ImportError, RuntimeError, ValueError):
        return None
