"""`mg.cuda`: is a GPU usable? (CuPy itself is only ever imported by minigrad/core/backend.py.)"""

from minigrad.core import backend
from minigrad.core.backend import cuda_device_count, cuda_is_available


def is_available() -> bool:
    """True when CuPy is installed and sees an NVIDIA GPU."""
    return cuda_is_available()


def device_count() -> int:
    """How many GPUs CuPy sees (0 without CuPy or a GPU), as torch.cuda.device_count()."""
    return cuda_device_count()


def empty_cache() -> None:
    """Give the GPU memory CuPy holds for reuse back to the driver, as torch.cuda.empty_cache() gives PyTorch's
    (nothing to do without a GPU)."""
    if is_available():
        backend.backend_for_device("cuda").xp.get_default_memory_pool().free_all_blocks()


def manual_seed(seed: int) -> None:
    """Nothing to do: minigrad has one generator for every device, seeded by mg.manual_seed (and PyTorch's call does
    nothing either on a machine without a GPU)."""


manual_seed_all = manual_seed


def __getattr__(name: str) -> object:
    from minigrad.compat.missing import refuse

    raise refuse("minigrad.cuda", name)
