"""`acts-sql bench logs`: text-to-query on the log database, then correction, per method.

For every task and every method: `acts_sql.correct` in text-to-query mode
(no query given: the model writes the PRQL first, then the method corrects
it), on the generated DuckDB database through the PRQL executor. Both the
generated query and the final one are scored against the gold result
(`scoring.equivalent`), which gives the "generation only" row and one row per
method of the report (`report.py`). Records go to ``records-<method>.jsonl``
as they finish; a second run into the same directory skips the tasks done.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field

from acts_sql.api import correct
from acts_sql.bench.logs.generator import DEFAULT_SEED, LogSize, generate
from acts_sql.bench.logs.scoring import GoldResult, equivalent
from acts_sql.bench.logs.tasks import LogTask, gold_results, select_tasks
from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.db.language import with_language
from acts_sql.engine.events import EventKind, SqlTranslatedData
from acts_sql.engine.options import CorrectionOptions, Method
from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ActsSqlError, LLMUnavailableError
from acts_sql.llm.base import LLMBackend

LANGUAGE = "prql"


class LogsBenchRequest(BaseModel):
    out: Path
    methods: list[Method]
    llm: str | None = None
    """The LLM SPEC, for the report."""
    size: LogSize = LogSize.SMALL
    seed: int = DEFAULT_SEED
    db: Path | None = None
    """An existing log database; None: OUT/logs-<size>-<seed>.duckdb, built when missing."""
    ids: list[str] = Field(default_factory=list)
    limit: int | None = None
    options: CorrectionOptions = Field(default_factory=CorrectionOptions)
    """Budgets and sampling of every run; the method is each of `methods` in turn."""

    def database_path(self) -> Path:
        return self.db or self.out / f"logs-{self.size.value}-{self.seed}.duckdb"


class LogRecord(BaseModel):
    """One task under one method."""

    id: str
    category: str
    method: str
    question: str
    initial_query: str = ""
    final_query: str = ""
    initial_passed: bool = False
    passed: bool = False
    accepted: bool = False
    final_status: str = ""
    """How the final query ran: ok, error, timeout, blocked ("" if there was none)."""
    seconds: float = 0.0
    """Wall time of the whole run: generation and correction."""
    generation_seconds: float = 0.0
    """Until the generated query was there."""
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    reason: str = ""
    initial_from_sql: bool = False
    """The generated query is the PRQL rewrite of SQL the model wrote (`sql_translated`)."""
    final_from_sql: bool = False
    """The final query is such a rewrite."""
    error: str | None = None
    """A run that raised (bad configuration of a single task), with the reason."""


RecordListener = Callable[[LogRecord], None]


def ensure_database(request: LogsBenchRequest) -> Path:
    """The log database of the request, generated first when it does not exist."""
    path = request.database_path()
    if not path.exists():
        generate(path, request.size, request.seed)
    return path


def run_logs_bench(
    request: LogsBenchRequest,
    *,
    backend: LLMBackend,
    on_start: Callable[[int], None] | None = None,
    on_record: RecordListener | None = None,
) -> dict[str, list[LogRecord]]:
    """Run every method over the tasks; the records by method (finished ones included)."""
    request.out.mkdir(parents=True, exist_ok=True)
    tasks = select_tasks(request.ids, request.limit)
    executor = with_language(open_database(f"duckdb:///{ensure_database(request)}"), LANGUAGE)
    try:
        gold = gold_results(executor, tasks)
        if on_start is not None:
            on_start(len(tasks) * len(request.methods))
        return {
            method.value: _run_method(request, method, tasks, gold, executor, backend, on_record)
            for method in request.methods
        }
    finally:
        executor.close()


R = TypeVar("R", bound=BaseModel)


def records_path(out: Path, method: str) -> Path:
    return out / f"records-{method}.jsonl"


def read_records(out: Path, method: str, model: type[R]) -> list[R]:
    """The records a run wrote to `records_path(out, method)`, read as `model` (none yet: [])."""
    path = records_path(out, method)
    if not path.exists():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    return [model.model_validate_json(line) for line in lines if line.strip()]


def load_records(out: Path, method: str) -> list[LogRecord]:
    return read_records(out, method, LogRecord)


def _run_method(
    request: LogsBenchRequest,
    method: Method,
    tasks: list[LogTask],
    gold: dict[str, GoldResult],
    executor: Executor,
    backend: LLMBackend,
    on_record: RecordListener | None,
) -> list[LogRecord]:
    done = {r.id: r for r in load_records(request.out, method.value)}
    wanted = {t.id for t in tasks}
    records = [r for r in done.values() if r.id in wanted]
    with records_path(request.out, method.value).open("a", encoding="utf-8") as sink:
        for task in tasks:
            if task.id in done:
                if on_record is not None:
                    on_record(done[task.id])
                continue
            record = run_task(request, method, task, gold[task.id], executor, backend)
            sink.write(record.model_dump_json() + "\n")
            sink.flush()
            records.append(record)
            if on_record is not None:
                on_record(record)
    return records


def run_task(
    request: LogsBenchRequest,
    method: Method,
    task: LogTask,
    gold: GoldResult,
    executor: Executor,
    backend: LLMBackend,
) -> LogRecord:
    """One text-to-query run, scored; an LLM that cannot be used at all stops the bench."""
    base = LogRecord(
        id=task.id, category=task.category, method=method.value, question=task.question
    )
    started = time.perf_counter()
    try:
        result = correct(
            executor,
            task.question,
            None,
            llm=backend,
            options=request.options.model_copy(update={"method": method}),
        )
    except LLMUnavailableError:
        raise
    except ActsSqlError as exc:
        return base.model_copy(
            update={"error": str(exc), "seconds": round(time.perf_counter() - started, 3)}
        )
    return _scored(base, result, gold, executor)


def _scored(
    base: LogRecord, result: CorrectionResult, gold: GoldResult, executor: Executor
) -> LogRecord:
    initial_at = next((e.t for e in result.trace if e.kind == EventKind.INITIAL_SQL), 0.0)
    rewrites = [(e.node, e.data) for e in result.trace if isinstance(e.data, SqlTranslatedData)]
    final = executor.execute(result.sql) if result.sql.strip() else None
    return base.model_copy(
        update={
            "initial_query": result.original_sql,
            "final_query": result.sql,
            "initial_passed": _passes(executor, result.original_sql, gold),
            "passed": final is not None and final.ok and not final.truncated
            and equivalent(final.rows, gold),
            "accepted": result.accepted,
            "final_status": final.status if final is not None else "",
            "seconds": result.usage.seconds,
            "generation_seconds": round(initial_at, 3),
            "llm_calls": result.usage.llm_calls,
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "reason": result.reason,
            "initial_from_sql": any(node is None and data.sql == result.original_sql
                                    for node, data in rewrites),
            "final_from_sql": bool(result.sql)
            and any(data.sql == result.sql for _, data in rewrites),
        }
    )  # fmt: skip


def _passes(executor: Executor, query: str, gold: GoldResult) -> bool:
    if not query.strip():
        return False
    result = executor.execute(query)
    return result.ok and not result.truncated and equivalent(result.rows, gold)
