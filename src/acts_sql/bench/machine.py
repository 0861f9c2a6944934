"""Which machine a task ran on: seconds measured on different CPUs do not compare.

The project's benchmark machines are not all alike (the same script read cold
prompts at 190 tokens/s on one and at 72-88 on another), and a resumable run
can span several of them. Every task record keeps the label of the machine it
ran on (:func:`machine_label`), and ``bench compare`` says when the seconds it
puts side by side come from more than one.
"""

from __future__ import annotations

import functools
import os
import platform
from pathlib import Path

CPUINFO = Path("/proc/cpuinfo")
UNKNOWN = "unknown"
"""The label of records written before the machine was kept."""


@functools.cache
def machine_label() -> str:
    """The CPU's model name and the number of cores, e.g. ``AMD EPYC, 2 cores``."""
    return f"{cpu_model(CPUINFO)}, {os.cpu_count() or 1} cores"


def cpu_model(cpuinfo: Path) -> str:
    """The ``model name`` of /proc/cpuinfo (Linux), else what `platform` knows."""
    try:
        for line in cpuinfo.read_text(errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and value.strip():
                return value.strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or UNKNOWN
