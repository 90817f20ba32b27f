"""`minigrad.utils.tensorboard`, as `torch.utils.tensorboard`: a `SummaryWriter` that writes TensorBoard's event
files, through tensorboardX (it writes the same files from NumPy, without TensorFlow or PyTorch). It is an optional
extra: pip install -e '.[tensorboard]'. Without it, importing this module fails in one line saying so, as
PyTorch's fails when TensorBoard is missing.

    from minigrad.utils.tensorboard import SummaryWriter
    writer = SummaryWriter("runs/exp1")
    writer.add_scalar("loss/train", loss.item(), step)
    writer.close()          # then: tensorboard --logdir runs

PyTorch's everyday calls are here (add_scalar, add_scalars, add_histogram, add_text, flush, close); any other is
refused in one line.
"""

from __future__ import annotations

from typing import Any

import numpy as np

try:
    import tensorboardX
except ImportError:
    raise ImportError("torch.utils.tensorboard: minigrad has no TensorBoard writer without tensorboardX, an optional "
                      "extra: pip install -e '.[tensorboard]' (or pip install tensorboardX)") from None

__all__ = ["SummaryWriter"]


def _number(value: Any) -> float:
    """A Python number from a number, a one-element tensor or array (tensorboardX would look for torch's)."""
    return float(value.item() if hasattr(value, "item") else value)


def _array(values: Any) -> np.ndarray:
    return values.numpy() if hasattr(values, "requires_grad") else np.asarray(values)


class SummaryWriter:
    """Writes event files into `log_dir` (default runs/DATETIME_HOSTNAME`comment`), as PyTorch's SummaryWriter."""

    def __init__(self, log_dir: str | None = None, comment: str = "", purge_step: int | None = None,
                 max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = "") -> None:
        self._writer = tensorboardX.SummaryWriter(logdir=None if log_dir is None else str(log_dir), comment=comment,
                                                  purge_step=purge_step, max_queue=max_queue, flush_secs=flush_secs,
                                                  filename_suffix=filename_suffix)
        self.log_dir = self._writer.logdir
        self._options = {"max_queue": max_queue, "flush_secs": flush_secs, "filename_suffix": filename_suffix}
        self._curves: dict[str, Any] = {}  # add_scalars' writers, one folder per curve

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value: Any, global_step: int | None = None, walltime: float | None = None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        """One value of the curve `tag` at `global_step` (a number or a one-element tensor)."""
        self._writer.add_scalar(tag, _number(scalar_value), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict[str, Any], global_step: int | None = None,
                    walltime: float | None = None) -> None:
        """Several curves drawn in one chart (`{"train": 1.2, "val": 1.4}`), each written as `main_tag` into a run
        of its own, LOG_DIR/MAINTAG_TAG, where PyTorch writes it (TensorBoard then draws them together)."""
        for tag, value in tag_scalar_dict.items():
            folder = f"{self.log_dir}/{main_tag.replace('/', '_')}_{tag}"
            if folder not in self._curves:
                self._curves[folder] = tensorboardX.SummaryWriter(logdir=folder, **self._options)
            self._curves[folder].add_scalar(main_tag, _number(value), global_step, walltime)

    def add_histogram(self, tag: str, values: Any, global_step: int | None = None, bins: str = "tensorflow",
                      walltime: float | None = None, max_bins: int | None = None) -> None:
        """The distribution of `values` (a tensor or an array: weights, gradients) at `global_step`."""
        self._writer.add_histogram(tag, _array(values), global_step, bins, walltime, max_bins)

    def add_text(self, tag: str, text_string: str, global_step: int | None = None,
                 walltime: float | None = None) -> None:
        self._writer.add_text(tag, text_string, global_step, walltime)

    def flush(self) -> None:
        """Write what is queued to the event files now."""
        for writer in (self._writer, *self._curves.values()):
            writer.flush()

    def close(self) -> None:
        for writer in (self._writer, *self._curves.values()):
            writer.close()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        raise AttributeError(f"torch.utils.tensorboard.SummaryWriter.{name}: minigrad has no {name}; its "
                             "SummaryWriter writes scalars, histograms and text (add_scalar, add_scalars, "
                             "add_histogram, add_text)")
