"""The machine a shipped record was measured on: every record of a training run names its processor.

The record builders (tutorials/builders/: train_pretrained.py, crossing_run.py, scaling_runs.py,
ablation_staircase.py) write it beside their wall times, because a time means nothing without the CPU it was taken on.
"""

from __future__ import annotations

import platform
from pathlib import Path


def cpu_model() -> str:
    """The processor's name as the kernel reports it (what `lscpu | grep 'Model name'` prints), or the platform's."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.partition(":")[2].strip()
    except OSError:  # not Linux
        pass
    return platform.processor() or platform.machine()
