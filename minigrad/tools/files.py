"""Writing a file so that it cannot be turned against its owner: never through a link, never half-written.

A folder a user was given (a checkpoint shared as an archive, a course's figures/) may hold a symbolic link
where a file we write belongs: `loss_curve.png -> ~/.bashrc`. Opening that name for writing follows the link and
overwrites its target. So every file minigrad, minigpt and the course write goes through `write_file`:

    1. create a new temporary file beside `path` (O_CREAT | O_EXCL | O_NOFOLLOW: the name can be neither a link
       nor an existing file, so the bytes land only in a file made here, in the folder given);
    2. write the bytes (and with `durable`, flush them to disk: fsync);
    3. rename it over `path`. A rename replaces the name itself: a link there is replaced and its target left as
       it was; a hard link loses this name, and its other names keep their bytes.

A failure in 1-2 (a full disk, Ctrl-C) leaves `path` as it was, never empty or half-written, and no temporary
file; its error names `path`. Reading goes through serialization.open_regular_file. Read next: serialization.py.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

NO_FOLLOW = getattr(os, "O_NOFOLLOW", 0)  # (Windows has no such flag, and its users rarely make links)


def write_file(path: str | os.PathLike, data: bytes | str, durable: bool = False) -> Path:
    """Write `data` (a str is written as UTF-8) to `path` through a new file renamed over it (see above).

    With `durable`, the bytes and the rename are flushed to disk before this returns (a checkpoint's weights).
    Returns `path`. An OSError names `path`: "[Errno 28] No space left on device: 'out/gpt_graph.svg'".
    """
    path = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    # Beside the target, because a rename is atomic only within one file system. Mode 0o666 lets the umask decide
    # the permissions, as for any new file (tempfile.mkstemp would make it 0o600).
    temp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NO_FOLLOW | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(temp, flags, 0o666)
    except OSError as error:
        raise _naming(error, path) from None
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(payload)
            file.flush()
            if durable:
                os.fsync(file.fileno())  # the bytes are on disk before the name points at them
        os.replace(temp, path)
    except BaseException as error:  # also KeyboardInterrupt: never leave the temporary file behind
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        if isinstance(error, OSError):
            raise _naming(error, path) from None
        raise
    if durable:
        fsync_directory(path.parent)
    return path


def make_folder(folder: str | os.PathLike) -> Path:
    """`mkdir -p folder`, whose error names the file that stands where a folder is needed (mkdir's says "File
    exists")."""
    folder = Path(folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError) as error:
        blocking = next((p for p in (folder, *folder.parents) if p.exists() and not p.is_dir()), error.filename)
        raise NotADirectoryError(errno.ENOTDIR, "not a folder, and a folder is needed here", str(blocking)) from None
    return folder


def fsync_directory(directory: str | os.PathLike) -> None:
    """Make renames into `directory` durable (POSIX); Windows cannot open a directory, and needs no such step."""
    if os.name != "posix":
        return
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def kind(mode: int) -> str:
    """What a file of this st_mode is, in words ("a FIFO (named pipe)", "a device"), for a refusal."""
    kinds = ((stat.S_ISREG, "a regular file"), (stat.S_ISDIR, "a directory"), (stat.S_ISLNK, "a symbolic link"),
             (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a device"), (stat.S_ISBLK, "a device"),
             (stat.S_ISSOCK, "a socket"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def not_regular(path: str | os.PathLike) -> str | None:
    """None when `path` is a regular file itself (not a link to one) or is absent; else what it is, in words:
    "a FIFO (named pipe)", "a symbolic link to /home/ada/.bashrc", "a device (a symbolic link to /dev/zero)"."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return None
    if stat.S_ISREG(mode):
        return None
    if not stat.S_ISLNK(mode):
        return kind(mode)
    link = f"a symbolic link to {os.readlink(path)}"
    try:
        target = os.stat(path).st_mode
    except OSError:  # a dangling link, or a loop
        return link
    return link if stat.S_ISREG(target) else f"{kind(target)} ({link})"


def _naming(error: OSError, path: Path) -> OSError:
    """The same error with `path` as its file name (a temporary file's name would tell a user nothing)."""
    if error.errno is None:
        return error
    return type(error)(error.errno, error.strerror, os.fspath(path))
