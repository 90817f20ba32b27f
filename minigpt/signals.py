"""How a training run stops when asked to: Ctrl-C, SIGTERM, SIGHUP, or a stdout whose reader has gone.

A run stopped by a signal should leave a checkpoint to resume from, not lose the iterations since the last
evaluation, so during training the signals only raise a flag that the loop reads between micro-steps (train.py).
Read next: progress.py.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from typing import Any

from minigpt.errors import Interrupted
from minigpt.progress import write


class StopOnSignals:
    """While active, the first Ctrl-C (SIGINT), SIGTERM (a `timeout`, a container stop, a batch scheduler) or
    SIGHUP (the terminal or ssh session closed) only sets `signum`: the loop finishes its micro-step, saves, and
    returns. A second one stops at once (Interrupted), without saving.

    SIGPIPE comes when the reader of our stdout has gone (`minigpt train | head`): the run stops in the same way,
    quietly, as a Unix tool does (the write that met the closed pipe sent the rest of stdout to os.devnull, in
    progress.py). Outside this block Python ignores SIGPIPE, as it always does.
    """

    SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE")
                    if hasattr(signal, name))

    def __init__(self, saves: Callable[[], bool]) -> None:
        self.signum = 0
        self.saves = saves  # whether stopping now writes a checkpoint (for the message)
        self._previous: dict[int, Any] = {}

    @property
    def requested(self) -> bool:
        return self.signum != 0

    def agree(self) -> None:
        """Nothing to agree on in one process: the flag is read as it is (under mpiexec the ranks agree on it
        once per step: distributed_training.AgreedStop)."""

    def _handle(self, signum: int, frame: Any) -> None:
        if signum == getattr(signal, "SIGPIPE", None):
            self.signum = self.signum or signum  # nobody is reading: say nothing
            return
        if self.requested:
            raise Interrupted(signum)
        self.signum = signum
        again = "Ctrl-C again" if signum == signal.SIGINT else f"{signal.Signals(signum).name} again"
        then = "saving a checkpoint after this step" if self.saves() else "stopping after this step"
        write(f"stopping: {then} ({again} to quit at once, without saving)")

    def __enter__(self) -> StopOnSignals:
        if threading.current_thread() is threading.main_thread():  # signals can only be caught there
            self._previous = {signum: signal.signal(signum, self._handle) for signum in self.SIGNALS}
        return self

    def __exit__(self, *exc_info: Any) -> None:
        for signum, previous in self._previous.items():  # (a previous handler may be None: one set outside Python)
            signal.signal(signum, previous if previous is not None else signal.SIG_DFL)
