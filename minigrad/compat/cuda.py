"""`mg.cuda`: is a GPU usable? (CuPy itself is only ever imported by minigrad/core/backend.py.)"""

from minigrad.core.backend import cuda_is_available


def is_available() -> bool:
    """True when CuPy is installed and sees an NVIDIA GPU."""
    return cuda_is_available()
