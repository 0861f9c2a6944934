"""The runs one MCP server keeps, in memory: the last N, by run id, for `explain_run`."""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict

from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ConfigError

DEFAULT_KEEP_RUNS = 50


class UnknownRunError(ConfigError):
    """A run id this server does not know (never made, or no longer kept); details:
    ``run_id``."""


class RunStore:
    """The last `keep` results, oldest dropped first; safe to use from several threads."""

    def __init__(self, keep: int = DEFAULT_KEEP_RUNS) -> None:
        if keep < 1:
            raise ConfigError(f"runs kept must be at least 1, got {keep}")
        self.keep = keep
        self._runs: OrderedDict[str, CorrectionResult] = OrderedDict()
        self._lock = threading.Lock()

    def add(self, result: CorrectionResult, run_id: str | None = None) -> str:
        """Keep `result` (under `run_id`, else a new id); its run id."""
        run_id = run_id or secrets.token_hex(6)
        with self._lock:
            self._runs[run_id] = result
            while len(self._runs) > self.keep:
                self._runs.popitem(last=False)
        return run_id

    def get(self, run_id: str) -> CorrectionResult:
        """The kept run; UnknownRunError when there is none with that id."""
        with self._lock:
            result = self._runs.get(run_id.strip())
            count = len(self._runs)
        if result is None:
            raise UnknownRunError(
                f"no run {run_id!r} on this server (it keeps the last {self.keep} runs of "
                f"this process; {count} kept now): use a run_id that fix_sql returned",
                run_id=run_id,
            )
        return result

    def __len__(self) -> int:
        with self._lock:
            return len(self._runs)
