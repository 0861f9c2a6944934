"""`acts-sql batch`: correct every task of a JSONL file, on this machine or a Ray cluster.

The driver reads the input lazily, line by line; a bad line is reported with
its number (``errors.jsonl``, and the listener) and the batch goes on. Tasks
already finished in ``--out`` (a record without an error) are skipped, so an
interrupted batch goes on where it stopped with the same command; a task
whose record has an error (its database, the LLM, a crash) runs again. The
others go to the executor's pool (`acts_sql.scale`), whose workers each keep
one LLM backend and their database connections. Each result is written as it
arrives: a line appended to ``results.jsonl`` and the task's trace in
``traces/``. At the end ``results.jsonl`` is rewritten with one line per id
(the latest) and ``summary.json`` / ``summary.md`` are written.

The batch stops (`BatchAbortedError`) when the LLM backend cannot be used:
when the first task fails that way, or `ABORT_AFTER` tasks in a row do.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

from acts_sql.batch.databases import DatabaseCatalog
from acts_sql.batch.request import BatchRequest
from acts_sql.batch.summary import BatchSummary, summarize, write_summary
from acts_sql.batch.tasks import BadLine, BatchJob, count_lines, read_jobs
from acts_sql.batch.worker import BatchOutcome, BatchRecord, error_record
from acts_sql.errors import ConfigError
from acts_sql.scale import make_pool
from acts_sql.scale.base import Done, TaskPool

RESULTS = "results.jsonl"
ERRORS = "errors.jsonl"
TRACES = "traces"
RUN_FILE = "run.json"
ABORT_AFTER = 5
"""Tasks in a row whose LLM backend could not be used before the batch stops."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


class BatchAbortedError(ConfigError):
    """The batch cannot go on (the LLM backend cannot be used); finished tasks are kept."""


class BatchListener(Protocol):
    """What a batch reports as it goes (the CLI's progress bar)."""

    def started(self, total: int) -> None: ...

    def skipped(self, job: BatchJob) -> None: ...

    def bad_line(self, bad: BadLine) -> None: ...

    def result(self, record: BatchRecord) -> None: ...


class _Silent:
    def started(self, total: int) -> None: ...

    def skipped(self, job: BatchJob) -> None: ...

    def bad_line(self, bad: BadLine) -> None: ...

    def result(self, record: BatchRecord) -> None: ...


def read_records(path: Path) -> dict[str, BatchRecord]:
    """The latest record per id of a ``results.jsonl`` (an unreadable line is skipped)."""
    records: dict[str, BatchRecord] = {}
    if not path.exists():
        return records
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            try:
                record = BatchRecord.model_validate_json(line)
            except ValueError:  # a line cut short when a run was killed
                continue
            records[record.id] = record
    return records


def trace_name(task_id: str) -> str:
    """A file name for a task's trace: the id where it is safe, else made safe and unique."""
    safe = _UNSAFE.sub("_", task_id)[:80]
    if safe == task_id:
        return f"{safe}.json"
    digest = hashlib.sha256(task_id.encode("utf-8")).hexdigest()[:10]
    return f"{safe}-{digest}.json"


class BatchRun:
    """One run of a batch into its output directory."""

    def __init__(self, request: BatchRequest, pool: TaskPool | None = None) -> None:
        self.request = request
        self.out = request.out
        self.pool = pool or make_pool(
            request.executor, request.workers, ray_address=request.ray_address
        )
        self.catalog = DatabaseCatalog.load(request.databases)
        self.records: dict[str, BatchRecord] = {}
        self.bad: list[BadLine] = []
        self.ran = 0
        self._jobs: dict[str, BatchJob] = {}
        self._unusable = 0
        self._usable_seen = False

    def run(self, listener: BatchListener | None = None) -> BatchSummary:
        heard = listener or _Silent()
        total = count_lines(self.request.input)
        self.out.mkdir(parents=True, exist_ok=True)
        self._check_run_file()
        self.records = read_records(self.out / RESULTS)
        finished = {key for key, record in self.records.items() if record.finished}
        heard.started(total)
        started = time.perf_counter()
        with (self.out / ERRORS).open("w", encoding="utf-8") as errors:
            items = self._items(finished, errors, heard)
            self.pool.run(self.request.settings, items, lambda done: self._arrived(done, heard))
        wall = time.perf_counter() - started
        self._rewrite()
        summary = summarize(
            list(self.records.values()),
            bad_lines=len(self.bad),
            ran=self.ran,
            wall_seconds=wall,
            request=self.request,
            executor=self.pool.name,
        )
        write_summary(self.out, summary)
        return summary

    # -- input -----------------------------------------------------------------------------

    def _items(
        self, finished: set[str], errors: Any, heard: BatchListener
    ) -> Iterator[tuple[str, BatchJob]]:
        """The jobs to run, read as the pool asks for them; bad lines are written down."""
        for entry in read_jobs(self.request.input, self.catalog):
            if isinstance(entry, BadLine):
                self.bad.append(entry)
                errors.write(entry.model_dump_json() + "\n")
                errors.flush()
                heard.bad_line(entry)
            elif entry.task.id in finished:
                heard.skipped(entry)
            else:
                self._jobs[entry.task.id] = entry
                yield entry.task.id, entry

    # -- results ---------------------------------------------------------------------------

    def _arrived(self, done: Done[Any], heard: BatchListener) -> None:
        job = self._jobs.pop(done.key)
        if isinstance(done.value, BatchOutcome):
            record = done.value.record.model_copy(update={"attempts": done.attempts})
            if done.value.result is not None:
                record.trace_file = self._write_trace(record.id, done.value.result)
        else:
            record = error_record(job, done.error or "no result", "crash", attempts=done.attempts)
        self.records[record.id] = record
        self.ran += 1
        with (self.out / RESULTS).open("a", encoding="utf-8") as handle:
            handle.write(record.model_dump_json() + "\n")
        heard.result(record)
        self._watch_backend(record)

    def _watch_backend(self, record: BatchRecord) -> None:
        if record.error_kind != "llm":
            self._usable_seen = self._usable_seen or record.error is None
            self._unusable = 0
            return
        self._unusable += 1
        if not self._usable_seen or self._unusable >= ABORT_AFTER:
            raise BatchAbortedError(
                f"the LLM backend cannot be used: {record.error}; the tasks finished so far "
                f"are kept in {self.out}/{RESULTS}, and the same command goes on from there"
            )

    def _write_trace(self, task_id: str, result: dict[str, Any]) -> str:
        folder = self.out / TRACES
        folder.mkdir(exist_ok=True)
        path = folder / trace_name(task_id)
        path.write_text(json.dumps(result, ensure_ascii=False) + "\n", encoding="utf-8")
        return f"{TRACES}/{path.name}"

    def _rewrite(self) -> None:
        """results.jsonl with one line per id, the latest, in the order first seen."""
        path = self.out / RESULTS
        temporary = path.with_suffix(".jsonl.tmp")
        with temporary.open("w", encoding="utf-8") as handle:
            for record in self.records.values():
                handle.write(record.model_dump_json() + "\n")
        temporary.replace(path)

    def _check_run_file(self) -> None:
        """An --out of another method or LLM is refused; the first run writes run.json."""
        path = self.out / RUN_FILE
        settings = self.request.settings
        mine = {"method": settings.options.method.value, "llm": settings.llm or ""}
        if path.exists():
            try:
                theirs = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                theirs = {}
            for key, value in mine.items():
                if theirs.get(key, value) != value:
                    raise ConfigError(
                        f"{self.out} holds a batch with {key} {theirs.get(key)!r}, not "
                        f"{value!r}: use another --out directory"
                    )
        data = {**mine, "settings": settings.model_dump(mode="json")}
        path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def run_batch(
    request: BatchRequest,
    *,
    pool: TaskPool | None = None,
    listener: BatchListener | None = None,
) -> BatchSummary:
    """Run a batch; see the module doc."""
    return BatchRun(request, pool).run(listener)


__all__ = [
    "ERRORS",
    "RESULTS",
    "TRACES",
    "BatchAbortedError",
    "BatchListener",
    "BatchRequest",
    "BatchRun",
    "read_records",
    "run_batch",
    "trace_name",
]
