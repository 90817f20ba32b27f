"""`mg.save` / `mg.load`: tensors to and from safetensors files, never pickle.

A safetensors file is an 8-byte header length, a JSON header (each tensor's name, dtype, shape and
byte range, plus optional string metadata) and the raw bytes. Loading it runs no code, unlike
`pickle` (which `torch.save` uses): a file from a stranger can at worst fail to load.

Saving is atomic: the bytes go to a temporary file in the same directory, are flushed to disk
(fsync), and only then renamed over the real name (`os.replace`, atomic on POSIX and Windows). A
crash mid-write leaves the old file intact and never a half-written one under the real name.
optim/checkpoint.py stores an optimizer's state this way.
Read next: anomaly.py and gradcheck.py, the debugging tools.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

import numpy as np
import safetensors
import safetensors.numpy

from minigrad import backend
from minigrad.tensor import Tensor

PathLike = str | os.PathLike


class CheckpointError(ValueError):
    """A file that is not a readable safetensors file (empty, truncated, corrupted, or a pickle)."""


def save(state_dict: dict[str, Any], path: PathLike, metadata: dict[str, str] | None = None) -> None:
    """Write `state_dict` (name -> Tensor or array, on any device) to `path` as safetensors, atomically.

    `metadata` is an optional dict of strings stored in the header (read it back with `load_metadata`).
    """
    arrays: dict[str, np.ndarray] = {}
    for name, value in state_dict.items():
        if not isinstance(name, str):
            raise TypeError(f"save: names must be strings, got {name!r}")
        data = value.data if isinstance(value, Tensor) else value
        if isinstance(data, (np.ndarray, np.generic)):
            array = np.asarray(data)
        elif hasattr(data, "shape"):
            array = backend.as_numpy(data)  # one explicit copy off the device
        else:
            raise TypeError(f"save: {name!r} is a {type(value).__name__}, not a Tensor or an array")
        # C order, because the bytes are written as they lie (not np.ascontiguousarray: it makes 0-d arrays 1-d).
        arrays[name] = np.asarray(array, order="C")
    if metadata is not None and not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise TypeError("save: metadata must map strings to strings (encode other values, e.g. with json.dumps)")
    payload = safetensors.numpy.save(arrays, metadata=metadata)
    _write_atomically(os.fspath(path), payload)


def _write_atomically(path: str, payload: bytes) -> None:
    """Write to a temporary file beside `path`, fsync it, then rename it over `path`."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"save: the directory {directory} does not exist (create it first)")
    # Beside the target, because a rename is atomic only within one file system. os.open with mode 0o666
    # lets the umask decide the permissions, as for any new file (tempfile.mkstemp would make it 0o600).
    temp_path = os.path.join(directory, f".{os.path.basename(path)}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(payload)
            file.flush()
            os.fsync(file.fileno())  # the bytes are on disk before the name points at them
        os.replace(temp_path, path)
    except BaseException:  # also KeyboardInterrupt: never leave the temporary file behind
        if os.path.exists(temp_path):
            os.remove(temp_path)
        raise
    fsync_directory(directory)


def fsync_directory(directory: str | os.PathLike) -> None:
    """Make renames into `directory` durable (POSIX); Windows cannot open a directory, and needs no such step."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def load(path: PathLike, device: Any = None) -> dict[str, Tensor]:
    """Read a safetensors file into a dict name -> Tensor (on `device`, default 'cpu'), keeping dtypes.

    Raises FileNotFoundError for a missing file and CheckpointError, naming the path, for anything that
    is not a valid safetensors file. Nothing is ever unpickled.
    """
    path = os.fspath(path)
    device = backend.canonical_device(device)
    with _open(path) as file:
        arrays = {name: file.get_tensor(name) for name in file.keys()}
    # np.array(copy): a writable array of our own, so that in-place updates (an optimizer) are allowed.
    return {name: Tensor(np.array(a), dtype=a.dtype, device=device) for name, a in arrays.items()}


def load_metadata(path: PathLike) -> dict[str, str]:
    """The string metadata stored by `save(..., metadata=...)` ({} when there is none); reads only the header."""
    path = os.fspath(path)
    with _open(path) as file:
        return dict(file.metadata() or {})


def _open(path: str) -> Any:
    """safetensors' reader for `path`, with errors that name the file and say what is wrong with it."""
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such file: {path}" if not os.path.isdir(path) else f"{path} is a directory")
    with open(path, "rb") as file:
        head = file.read(8)
    if len(head) < 8:
        raise CheckpointError(f"{path}: not a safetensors file (only {len(head)} bytes; it is empty or truncated)")
    if head[:1] == b"\x80" or head[:4] == b"PK\x03\x04":
        raise CheckpointError(
            f"{path}: this looks like a pickle (or a torch.save zip) file, not safetensors; minigrad never "
            "unpickles files, since that can run arbitrary code. Convert it with safetensors where you trust it."
        )
    try:
        return _Reader(path)
    except (safetensors.SafetensorError, OSError, ValueError) as error:
        raise CheckpointError(f"{path}: not a valid safetensors file (truncated or corrupted?): {error}") from error


class _Reader:
    """`safe_open` that turns safetensors' own errors, also those raised while reading, into CheckpointError."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._handle = safetensors.safe_open(path, framework="numpy")

    def __enter__(self) -> _Reader:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self._handle = None

    def keys(self) -> list[str]:
        return list(self._handle.keys())

    def metadata(self) -> dict[str, str] | None:
        return self._handle.metadata()

    def get_tensor(self, name: str) -> np.ndarray:
        try:
            return self._handle.get_tensor(name)
        except (safetensors.SafetensorError, OSError, ValueError) as error:
            raise CheckpointError(f"{self.path}: cannot read tensor {name!r}: {error}") from error
