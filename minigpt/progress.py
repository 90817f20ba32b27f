"""Progress you can see: a tqdm bar on a terminal, and plain lines every few seconds anywhere else.

A bar redraws itself in place, which only a terminal can show; with the output redirected (a log file, a
notebook, CI) tqdm stays silent, and a run that evaluates or trains for minutes would look dead. So off a
terminal, `Progress` prints a plain line whenever PLAIN_INTERVAL_S seconds of wall time have passed since its
last one (checked at each update):

    train 420/2000 (21%) loss=2.1043 lr=9.4e-04 tok_s=27,310 [17 s]

When the reader of stdout goes away (`minigpt train | head`), the first write that meets the closed pipe sends
the rest of stdout to os.devnull (`discard_stdout`): the output stops quietly, as a Unix tool's does, instead of a
BrokenPipeError at every later line.
Read next: checkpoint.py.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import Any, TextIO

from tqdm import tqdm

PLAIN_INTERVAL_S = 5.0  # off a terminal: at most this long between two lines (while updates come)


class Progress:
    """Counts steps towards `total`; shows them as a bar on a terminal, as a line every few seconds elsewhere."""

    def __init__(self, total: int, desc: str, initial: int = 0, unit: str = "it", leave: bool = True,
                 terminal: bool | None = None, out: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.total, self.desc, self.n, self.unit = total, desc, initial, unit
        self.out = out if out is not None else sys.stdout
        self.clock = clock
        self.start = self.last_line = clock()
        self.postfix: dict[str, Any] = {}
        terminal = sys.stderr.isatty() if terminal is None else terminal  # where tqdm draws its bar
        self.bar = tqdm(total=total, initial=initial, desc=desc, unit=unit, leave=leave,
                        dynamic_ncols=True) if terminal else None

    def update(self, n: int = 1) -> None:
        self.n += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.clock() - self.last_line >= PLAIN_INTERVAL_S:
            self.line()

    def set_postfix(self, **values: Any) -> None:
        """Figures shown after the count (loss, lr, ...), as tqdm's set_postfix."""
        self.postfix = values
        if self.bar is not None:
            self.bar.set_postfix(**values)

    def line(self) -> None:
        """Print the plain progress line now (nothing on a terminal: the bar shows it)."""
        if self.bar is not None:
            return
        percent = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        figures = "".join(f" {key}={value}" for key, value in self.postfix.items())
        try:
            print(f"{self.desc} {self.n}/{self.total}{percent}{figures} [{self.clock() - self.start:.0f} s]",
                  file=self.out, flush=True)
        except BrokenPipeError:
            discard_stdout()
        self.last_line = self.clock()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def write(message: str) -> None:
    """Print a message line without breaking a bar that is being drawn (nothing, once stdout's reader has gone)."""
    encoding = getattr(sys.stdout, "encoding", None) or "utf-8"
    # A terminal that cannot show a character of a path (PYTHONIOENCODING=ascii) gets it as \u6a21: a run's
    # messages never stop a run.
    message = message.encode(encoding, "backslashreplace").decode(encoding, "replace")
    try:
        tqdm.write(message)
        sys.stdout.flush()
    except BrokenPipeError:
        discard_stdout()
    except OSError as error:
        raise _stdout_error(error) from None


def write_out(text: str) -> None:
    """Write `text` to stdout now: a BrokenPipeError when its reader has gone (the caller stops quietly), and any
    other failure (a full disk under `> out.txt`) as an OSError that names stdout."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        raise
    except OSError as error:
        raise _stdout_error(error) from None


def _stdout_error(error: OSError) -> OSError:
    """`error`, naming stdout; stdout itself now goes nowhere, so that Python's flush at exit says nothing more."""
    discard_stdout()
    return OSError(error.errno, error.strerror, "<stdout>")


def discard_stdout() -> None:
    """Point stdout's file descriptor at os.devnull: its reader has gone, and what is still to be written
    (the rest of the run's lines, and what Python flushes at exit) goes nowhere, without an error."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    finally:
        os.close(devnull)
