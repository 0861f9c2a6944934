"""One batch worker: an LLM backend and open databases, kept for all the tasks it runs.

`BatchSettings` is what every worker is built from (picklable: it goes to
worker processes and Ray actors); `BatchWorker` builds the backend once (a
local model is then loaded once per worker, on its first call) and keeps the
executors of the databases its tasks use, the most recent `OPEN_DATABASES`
of them, so that a task on a database it has seen before reuses the
connection. `BatchWorker.run` corrects one task and returns its record and
its full result (the trace), or a record with the error when the task cannot
run (a database that does not open, a dialect that does not fit, an LLM that
cannot be used): that is the task's outcome, not a failure of the worker.

A scripted backend (tests, demos) replays its script from the start for every
task, so a task's replies never depend on the worker that ran it.
"""

from __future__ import annotations

import os
import socket
from collections import OrderedDict
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from acts_sql.api import correct
from acts_sql.batch.tasks import BatchJob
from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.db.url import has_scheme, parse_url
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.result import UsageSummary
from acts_sql.errors import ActsSqlError, ConfigError, LLMUnavailableError
from acts_sql.llm.base import LLMBackend
from acts_sql.llm.cache import CachedBackend
from acts_sql.llm.scripted import ScriptedBackend
from acts_sql.llm.spec import parse_llm_spec
from acts_sql.sql.dialects import get_dialect

OPEN_DATABASES = 8
"""Executors one worker keeps open (least recently used closed first)."""


class BatchSettings(BaseModel):
    """The options of `acts-sql batch` that every correction shares (those of `fix`)."""

    model_config = ConfigDict(frozen=True)

    llm: str | None = None
    base_url: str | None = None
    api_key: str | None = Field(default=None, repr=False, exclude=True)
    """Sent to the workers, never written to the output directory."""
    llm_timeout: float | None = Field(default=None, gt=0)
    """Seconds per call to an OpenAI-compatible endpoint (None: the backend's default)."""
    llm_cache: Path | None = None
    scripted_delay_s: float = Field(0.0, ge=0.0)
    """A scripted backend's simulated latency per call (a stand-in for an endpoint, to
    measure throughput); other backends ignore it."""
    options: CorrectionOptions = Field(default_factory=CorrectionOptions)
    """How every task is corrected: method, budgets, switches."""
    timeout: float | None = None
    max_rows: int | None = None
    allow_writes: bool = False

    def backend(self) -> LLMBackend:
        given = (
            ("base_url", self.base_url),
            ("api_key", self.api_key),
            ("timeout", self.llm_timeout),
        )
        overrides: dict[str, Any] = {k: v for k, v in given if v}
        if self.scripted_delay_s:
            overrides["delay_s"] = self.scripted_delay_s
        backend = parse_llm_spec(self.llm, **overrides)
        return CachedBackend(backend, self.llm_cache) if self.llm_cache else backend

    def build(self) -> BatchWorker:
        """The worker (`acts_sql.scale.base.WorkerSpec`)."""
        return BatchWorker(self)


class BatchRecord(BaseModel):
    """One line of ``results.jsonl``."""

    id: str
    line: int
    database: str
    dialect: str | None = None
    sql: str = ""
    accepted: bool = False
    stop_reason: str = ""
    usage: UsageSummary = Field(default_factory=UsageSummary)
    error: str | None = None
    """Why the task has no correction (its database, its dialect, the LLM, a crash)."""
    error_kind: str | None = None
    trace_file: str | None = None
    attempts: int = 1
    worker: str = ""
    """host:pid of the worker that ran it."""

    @property
    def finished(self) -> bool:
        """Ran to a result; a task with an error runs again when the batch is resumed."""
        return self.error is None


class BatchOutcome(BaseModel):
    """What a worker sends back: the record, and the full result for the trace file."""

    record: BatchRecord
    result: dict[str, Any] | None = None


def shown_database(database: str) -> str:
    """A task's database as results show it: a URL without its password."""
    if not has_scheme(database):
        return database
    try:
        return parse_url(database).redacted()
    except ActsSqlError:
        return "(a malformed URL)"


def error_record(job: BatchJob, error: str, kind: str, **extra: Any) -> BatchRecord:
    return BatchRecord(
        id=job.task.id,
        line=job.line,
        database=shown_database(job.task.database),
        dialect=job.task.dialect,
        sql=job.task.sql or "",
        error=error,
        error_kind=kind,
        **extra,
    )


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


class BatchWorker:
    """Runs batch jobs with one backend and a few open databases (see the module doc)."""

    def __init__(self, settings: BatchSettings) -> None:
        self.settings = settings
        self.backend = settings.backend()
        self.name = worker_name()
        self._open: OrderedDict[str, Executor] = OrderedDict()

    def run(self, job: BatchJob) -> BatchOutcome:
        try:
            executor = self._executor(job.url)
            _check_dialect(job.task.dialect, executor.dialect)
            result = correct(
                executor,
                job.task.question,
                job.task.sql,
                llm=_for_task(self.backend),
                options=self.settings.options,
            )
        except LLMUnavailableError as exc:
            return BatchOutcome(record=error_record(job, str(exc), "llm", worker=self.name))
        except ActsSqlError as exc:
            return BatchOutcome(record=error_record(job, str(exc), "input", worker=self.name))
        record = BatchRecord(
            id=job.task.id,
            line=job.line,
            database=shown_database(job.task.database),
            dialect=result.dialect,
            sql=result.sql,
            accepted=result.accepted,
            stop_reason=result.reason,
            usage=result.usage,
            worker=self.name,
        )
        return BatchOutcome(record=record, result=result.model_dump(mode="json"))

    def _executor(self, url: str) -> Executor:
        if url in self._open:
            self._open.move_to_end(url)
            return self._open[url]
        settings = self.settings
        executor = open_database(
            url,
            timeout=settings.timeout,
            max_rows=settings.max_rows,
            allow_writes=settings.allow_writes,
        )
        self._open[url] = executor
        while len(self._open) > OPEN_DATABASES:
            _, oldest = self._open.popitem(last=False)
            oldest.close()
        return executor

    def close(self) -> None:
        while self._open:
            _, executor = self._open.popitem()
            executor.close()


def _for_task(backend: LLMBackend) -> LLMBackend:
    """The backend for one task: itself, except that a script starts again for each task."""
    return backend.restarted() if isinstance(backend, ScriptedBackend) else backend


def _check_dialect(wanted: str | None, actual: str) -> None:
    if wanted and get_dialect(wanted).name != get_dialect(actual).name:
        raise ConfigError(
            f"dialect {wanted!r} does not match the database, which is {get_dialect(actual).name}"
        )


__all__ = ["BatchOutcome", "BatchRecord", "BatchSettings", "BatchWorker", "error_record"]
