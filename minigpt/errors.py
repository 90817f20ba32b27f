"""The errors `minigpt train` raises, each caught by the command and shown as one line (cli.py), and the
interruption that stops a run at once.

A damaged checkpoint is the third kind a user meets: `CheckpointError`, beside the checks it names, in schema.py.
Read next: config.py.
"""


class ConfigError(ValueError):
    """Settings that cannot work (a bad value, a missing GPU, a checkpoint from another configuration)."""


class TrainingError(RuntimeError):
    """A run that had to stop: its loss stopped being finite, or a checkpoint could not be written.
    The last good checkpoint is kept."""


class Interrupted(KeyboardInterrupt):
    """A second Ctrl-C or SIGTERM during training: stop at once, without saving. The command exits with
    128 + `signum`, as a process killed by that signal would."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
