"""Worker specs for the pool tests: importable by worker processes and Ray actors."""

from __future__ import annotations

import os
import time
from pathlib import Path

from pydantic import BaseModel


class Doubling(BaseModel):
    """Doubles numbers. `raise_on`: raises for that payload; `die_on`: the worker's process
    exits on that payload the first time (a marker file says it has died once)."""

    raise_on: int | None = None
    die_on: int | None = None
    marker: Path | None = None
    broken: bool = False
    seconds: float = 0.0
    """How long one task takes."""

    def build(self) -> Doubling:
        if self.broken:
            raise RuntimeError("no backend for this worker")
        return self

    def run(self, payload: int) -> tuple[int, int]:
        if payload == self.raise_on:
            raise ValueError(f"cannot double {payload}")
        if payload == self.die_on and self.marker is not None and not self.marker.exists():
            self.marker.write_text("died once")
            os._exit(3)
        time.sleep(self.seconds)
        return os.getpid(), payload * 2

    def close(self) -> None:
        """Nothing to close."""
