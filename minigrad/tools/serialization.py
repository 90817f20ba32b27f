"""`mg.save` / `mg.load`: tensors to and from safetensors files, never pickle.

A safetensors file is an 8-byte header length, a JSON header (each tensor's name, dtype, shape and
byte range, plus optional string metadata) and the raw bytes. Loading it runs no code, unlike
`pickle` (which `torch.save` uses): a file from a stranger can at worst fail to load.

Saving is atomic: the bytes go to a temporary file in the same directory, are flushed to disk
(fsync), and only then renamed over the real name (`os.replace`, atomic on POSIX and Windows). A
crash mid-write leaves the old file intact and never a half-written one under the real name, and a
link at that name is replaced, never followed (files.py).
optim/checkpoint.py stores an optimizer's state this way.

Reading is bounded: `open_regular_file` is the one door every loader goes through (here, and minigpt's
checkpoints, tokenizer and metrics). It refuses a FIFO, a device, a directory or a file over the caller's
limit before reading a byte, and `load` checks a file's header against its size before reading its data.
Read next: anomaly.py and gradcheck.py, the debugging tools.
"""

from __future__ import annotations

import json
import os
import stat
from typing import Any, BinaryIO

import numpy as np
import safetensors
import safetensors.numpy

from minigrad.core import backend
from minigrad.tensor import Tensor
from minigrad.tools.files import kind, write_file

PathLike = str | os.PathLike


MAX_HEADER_BYTES = 100_000_000  # safetensors' own limit on the JSON header


class CheckpointError(ValueError):
    """A file that cannot be loaded: not a regular file, larger than allowed, or not valid safetensors."""


CONTAINER_KEY = "minigrad.container"  # the header entry that holds a container's structure as JSON


def save(obj: Any, path: PathLike, metadata: dict[str, str] | None = None) -> None:
    """Write `obj` to `path` as safetensors, atomically, as `torch.save` but never pickled.

    A state dict (name -> Tensor or array, on any device) is written as plain safetensors; `metadata` is an
    optional dict of strings stored in its header (read it back with `load_metadata`). Any other dict, list or
    tuple of tensors, ints, floats, bools, None and strings (nested, as {"model": model.state_dict(),
    "optimizer": optimizer.state_dict(), "step": 100}) is written with its structure as JSON in the header.
    Any other object raises a TypeError: minigrad saves data, not code. With `metadata`, `obj` must be a state
    dict (a name -> tensor dict).
    """
    flat = isinstance(obj, dict) and all(isinstance(k, str) and _is_array_like(v) for k, v in obj.items())
    if flat or metadata is not None:
        payload = to_bytes(obj, metadata)
    else:
        arrays: dict[str, Any] = {}
        structure = json.dumps(_encode(obj, arrays), allow_nan=True)
        payload = to_bytes(arrays, {CONTAINER_KEY: structure})
    if hasattr(path, "write"):  # a file object opened for binary writing (io.BytesIO, open(p, "wb")), as PyTorch's
        try:
            path.write(payload)
        except TypeError as error:  # a text file: write() wants str
            raise TypeError(f"save: open the file for binary writing ('wb'): {error}") from None
    elif isinstance(path, (str, os.PathLike)):
        _write_atomically(os.fspath(path), payload)
    else:
        raise TypeError(f"save: expected a path or a binary file object to write to, not {type(path).__name__}")


def _is_array_like(value: Any) -> bool:
    return isinstance(value, (Tensor, np.ndarray)) or (hasattr(value, "shape") and not isinstance(value, np.generic))


def _encode(value: Any, arrays: dict[str, Any]) -> Any:
    """`value` as JSON, its tensors moved into `arrays` under the names "0", "1", ... (tagged by type, so
    that a tuple comes back a tuple and an int key an int)."""
    if _is_array_like(value):
        name = str(len(arrays))
        arrays[name] = value
        return {"tensor": name}
    if isinstance(value, np.generic):
        value = value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return {type(value).__name__: value}
    if isinstance(value, dict):
        for key in value:
            if isinstance(key, bool) or not isinstance(key, (str, int)):
                raise TypeError(f"save: dict keys must be strings or ints, got {key!r}")
        return {"dict": [[key, _encode(item, arrays)] for key, item in value.items()]}
    if isinstance(value, (list, tuple)):
        return {type(value).__name__: [_encode(item, arrays) for item in value]}
    raise TypeError(f"save: cannot save a {type(value).__name__}: minigrad saves tensors and dicts, lists and "
                    "tuples of tensors, numbers and strings (never pickled objects); save its state_dict()")


def _decode(node: Any, tensors: dict[str, Tensor], origin: str) -> Any:
    """The inverse of `_encode`."""
    if not isinstance(node, dict) or len(node) != 1:
        raise CheckpointError(f"{origin}: the container structure in its header is malformed")
    (kind, value), = node.items()
    if kind == "tensor" and value in tensors:
        return tensors[value]
    if kind in ("NoneType", "bool", "int", "float", "str"):
        return value
    if kind == "dict" and all(isinstance(pair, list) and len(pair) == 2 for pair in value):
        return {key: _decode(item, tensors, origin) for key, item in value}
    if kind in ("list", "tuple") and isinstance(value, list):
        items = [_decode(item, tensors, origin) for item in value]
        return items if kind == "list" else tuple(items)
    raise CheckpointError(f"{origin}: the container structure in its header is malformed ({kind!r})")


def to_bytes(state_dict: dict[str, Any], metadata: dict[str, str] | None = None) -> bytes:
    """The safetensors file `save` would write, as bytes (for a caller that writes files its own way)."""
    arrays: dict[str, np.ndarray] = {}
    for name, value in state_dict.items():
        if not isinstance(name, str):
            raise TypeError(f"save: names must be strings, got {name!r}")
        data = value.array if isinstance(value, Tensor) else value
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
    return safetensors.numpy.save(arrays, metadata=metadata)


def _write_atomically(path: str, payload: bytes) -> None:
    """Write to a temporary file beside `path`, fsync it, then rename it over `path` (files.write_file)."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"save: the directory {directory} does not exist (create it first)")
    write_file(path, payload, durable=True)


def load(path: PathLike, device: Any = None, max_bytes: int | None = None, *, map_location: Any = None,
         weights_only: bool | None = None) -> Any:
    """Read a safetensors file into a dict name -> Tensor (on `device`, default 'cpu'), keeping dtypes; or, for
    a file `save` wrote from a container, that container again. `map_location` (a device name) is PyTorch's
    spelling of `device`; `weights_only` is accepted and changes nothing (loading never runs code).

    Raises FileNotFoundError for a missing file and CheckpointError, naming the path, for anything that
    is not a regular file of at most `max_bytes` bytes (default: no limit) holding valid safetensors.
    The header is checked against the file's size before any tensor byte is read. Nothing is unpickled.
    """
    if map_location is not None:
        if device is not None or not isinstance(map_location, str):
            raise TypeError("load: map_location must be a device name such as 'cpu' (and not given with device=)")
        device = map_location
    device = backend.canonical_device(device)
    if hasattr(path, "read"):  # a file object opened for binary reading, as PyTorch's load takes too
        data, path = path.read(), str(getattr(path, "name", "<file object>"))
        if isinstance(data, str):
            raise TypeError(f"load: {path} was opened in text mode; open it with 'rb'")
        _check_size(data, path)
    else:
        path = os.fspath(path)
        with open_regular_file(path, max_bytes) as file:
            size = os.fstat(file.fileno()).st_size
            head = file.read(8)
            header_bytes = file.read(_header_length(head, size, path))
            data_bytes = _data_length(_parse_header(header_bytes, path), path)
            data = head + header_bytes + file.read(data_bytes)
        _check_size(data, path, size)
    tensors = from_bytes(data, path, device)
    structure = metadata_from_bytes(data, path).get(CONTAINER_KEY)
    if structure is None:
        return tensors
    try:
        return _decode(json.loads(structure), tensors, path)
    except (ValueError, RecursionError) as error:  # not JSON, or nested past Python's recursion limit
        if isinstance(error, CheckpointError):
            raise
        raise CheckpointError(f"{path}: the container structure in its header is malformed: {error}") from None


def _check_size(data: bytes, path: str, size: int | None = None) -> None:
    """Refuse bytes that are not one whole safetensors file (`size`: the file's, when `data` was read from one)."""
    size = len(data) if size is None else size
    header_bytes = data[8:8 + _header_length(data[:8], size, path)]
    data_bytes = _data_length(_parse_header(header_bytes, path), path)
    if 8 + len(header_bytes) + data_bytes != size:
        raise CheckpointError(f"{path}: not a valid safetensors file: its header describes {data_bytes:,} "
                              f"bytes of tensors, the file holds {size - 8 - len(header_bytes):,} "
                              "(truncated or padded?)")


def load_metadata(path: PathLike) -> dict[str, str]:
    """The string metadata stored by `save(..., metadata=...)` ({} when there is none); reads only the header."""
    path = os.fspath(path)
    with open_regular_file(path, None) as file:
        size = os.fstat(file.fileno()).st_size
        header = _parse_header(file.read(_header_length(file.read(8), size, path)), path)
    return _metadata(header, path)


def from_bytes(data: bytes, origin: str, device: Any = None) -> dict[str, Tensor]:
    """The tensors of a safetensors file already read into memory (`origin` names it in errors)."""
    header = _parse_header(data[8: 8 + _header_length(data[:8], len(data), origin)], origin)  # a clear error first
    _check_dtypes(header, origin)
    try:
        arrays = safetensors.numpy.load(data)
    except (safetensors.SafetensorError, ValueError, TypeError) as error:
        raise CheckpointError(f"{origin}: not a valid safetensors file (truncated or corrupted?): {error}") from None
    # np.array(copy): a writable array of our own, so that in-place updates (an optimizer) are allowed.
    # Sorted by name, as safetensors' own readers list them.
    device = backend.canonical_device(device)
    return {name: Tensor(np.array(arrays[name]), dtype=arrays[name].dtype, device=device) for name in sorted(arrays)}


def metadata_from_bytes(data: bytes, origin: str) -> dict[str, str]:
    """The string metadata of a safetensors file already read into memory."""
    return _metadata(_parse_header(data[8: 8 + _header_length(data[:8], len(data), origin)], origin), origin)


# ------------------------------------------------------------------------------------------------------
# Reading any file a user hands us: the one place that checks what it is and how big, before reading it
def open_regular_file(path: PathLike, max_bytes: int | None) -> BinaryIO:
    """`path` opened for reading once it is known to be a regular file of at most `max_bytes` bytes.

    Anything else is refused unread, with a CheckpointError naming the path: a FIFO (reading it would wait
    forever for a writer), a device such as /dev/zero (it never ends), a directory, or a file larger than
    the caller allows (a sparse file can claim terabytes). The checks are made on the opened file itself,
    so the name cannot be swapped for something else between the check and the read.
    """
    path = os.fspath(path)
    # O_NONBLOCK: opening a FIFO returns at once instead of waiting for a writer; a regular file ignores it.
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise FileNotFoundError(f"no such file: {path}") from None
    except IsADirectoryError:  # Windows cannot open a directory at all
        raise CheckpointError(f"{path}: a directory, not a file") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise CheckpointError(f"{path}: {kind(info.st_mode)}, not a regular file")
        if max_bytes is not None and info.st_size > max_bytes:
            raise CheckpointError(f"{path}: {info.st_size:,} bytes, more than the {max_bytes:,} it may have")
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_bytes(path: PathLike, max_bytes: int) -> bytes:
    """The contents of the regular file at `path`, which may hold at most `max_bytes` bytes (see above)."""
    with open_regular_file(path, max_bytes) as file:
        data = file.read(max_bytes + 1)  # + 1: a file that grew after the check is still refused
    if len(data) > max_bytes:
        raise CheckpointError(f"{os.fspath(path)}: more than the {max_bytes:,} bytes it may have")
    return data


# ------------------------------------------------------------------------------------------------------
# The header: 8 bytes of length, then JSON. Checked here so that a bad file fails before its data is read.
def _header_length(head: bytes, size: int, path: str) -> int:
    if len(head) < 8:
        raise CheckpointError(f"{path}: not a safetensors file (only {len(head)} bytes; it is empty or truncated)")
    if head[:1] == b"\x80" or head[:4] == b"PK\x03\x04":
        raise CheckpointError(
            f"{path}: this looks like a pickle (or a torch.save zip) file, not safetensors; minigrad never "
            "unpickles files, since that can run arbitrary code. Convert it with safetensors where you trust it."
        )
    length = int.from_bytes(head, "little")
    if length > min(MAX_HEADER_BYTES, size - 8):
        raise CheckpointError(f"{path}: not a valid safetensors file: a header of {length:,} bytes cannot fit in "
                              f"a file of {size:,} (truncated or corrupted?)")
    return length


def _parse_header(header_bytes: bytes, path: str) -> dict[str, Any]:
    try:
        header = json.loads(header_bytes.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise CheckpointError(f"{path}: not a valid safetensors file: its header is not JSON ({error})") from None
    except RecursionError:  # a hostile header nested deeper than Python's recursion limit
        raise CheckpointError(f"{path}: not a valid safetensors file: its header is nested too deeply") from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{path}: not a valid safetensors file: its header is not a JSON object")
    return header


def _data_length(header: dict[str, Any], path: str) -> int:
    """Where the last tensor's bytes end, as the header says (safetensors itself checks the rest)."""
    ends = [0]
    for name, entry in header.items():
        offsets = entry.get("data_offsets") if isinstance(entry, dict) else None
        if name != "__metadata__":
            if not (isinstance(offsets, list) and len(offsets) == 2 and all(type(o) is int for o in offsets)):
                raise CheckpointError(f"{path}: not a valid safetensors file: tensor {name!r} has no valid "
                                      "data_offsets in the header")
            ends.append(offsets[1])
    return max(ends)


# The safetensors dtypes NumPy can hold (safetensors' names); BF16 and the F8 types have no NumPy dtype.
NUMPY_DTYPES = {"BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64", "I64", "F16", "F32", "F64"}


def _check_dtypes(header: dict[str, Any], path: str) -> None:
    """Refuse, naming the tensor and its dtype, a file with a tensor that NumPy has no dtype for (a bfloat16 or
    float8 checkpoint, as PyTorch saves them), rather than fail inside the safetensors reader."""
    for name, entry in header.items():
        dtype = entry.get("dtype") if isinstance(entry, dict) and name != "__metadata__" else None
        if dtype is not None and dtype not in NUMPY_DTYPES:
            raise CheckpointError(f"{path}: tensor {name!r} is stored as {dtype}, which minigrad cannot hold (NumPy "
                                  "has no bfloat16 or float8); convert the file to float32 first (in PyTorch: "
                                  "{k: v.float() for k, v in state_dict.items()})")


def _metadata(header: dict[str, Any], path: str) -> dict[str, str]:
    metadata = header.get("__metadata__") or {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise CheckpointError(f"{path}: not a valid safetensors file: __metadata__ must map strings to strings")
    return dict(metadata)
