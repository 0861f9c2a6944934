"""`acts-sql bench everyday`: correct each case's wrong SQL with each method, score the answer.

For every case and every method: `acts_sql.correct` with the case's question
and wrong SQL on its database (read-only executors, as a user runs them).
The answer is scored against the gold SQL's result (`scoring.returns_gold`).
Records go to ``records-<method>.jsonl`` as they finish, each case's trace to
``traces/<method>/<id>.json.gz`` (the whole `CorrectionResult`: every LLM call and
statement); a second run into the same directory skips the cases done (a case whose run
raised is kept too).
"""

from __future__ import annotations

import gzip
import time
from collections.abc import Callable
from contextlib import ExitStack, closing
from pathlib import Path

from pydantic import BaseModel, Field

from acts_sql.api import correct
from acts_sql.bench.everyday.cases import EverydayCase, select_cases
from acts_sql.bench.everyday.databases import DatabaseKey, case_databases
from acts_sql.bench.everyday.scoring import gold_result, returns_gold
from acts_sql.bench.logs.runner import read_records, records_path
from acts_sql.bench.logs.scoring import GoldResult
from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.engine.options import CorrectionOptions, Method
from acts_sql.engine.result import CorrectionResult
from acts_sql.errors import ActsSqlError, ConfigError, LLMUnavailableError
from acts_sql.llm.base import LLMBackend

TRACES = "traces"


class EverydayBenchRequest(BaseModel):
    out: Path
    methods: list[Method]
    llm: str | None = None
    """The LLM SPEC, for the report."""
    ids: list[str] = Field(default_factory=list)
    dialects: list[str] = Field(default_factory=list)
    limit: int | None = None
    pg_url: str | None = Field(default=None, repr=False)
    """A PostgreSQL server where databases may be created (for the PostgreSQL cases)."""
    options: CorrectionOptions = Field(default_factory=CorrectionOptions)
    """Budgets and sampling of every run; the method is each of `methods` in turn."""


class EverydayRecord(BaseModel):
    """One case under one method."""

    id: str
    dialect: str
    error_class: str
    schema_name: str
    method: str
    question: str
    wrong_sql: str
    final_sql: str = ""
    right: bool = False
    """The answer returns the gold rows."""
    accepted: bool = False
    wrong_ran: bool = False
    """The user's (wrong) SQL ran (a silent slip, or `= NULL`)."""
    final_status: str = ""
    """How the answer ran: ok, error, timeout, blocked ("" if there was none)."""
    unchanged: bool = False
    """The answer is the user's SQL as it was."""
    seconds: float = 0.0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    candidates: int = 0
    """Distinct candidates the run executed."""
    candidates_ran: int = 0
    """Of those, how many ran."""
    reason: str = ""
    error: str | None = None
    """A run that raised (bad configuration of a single case), with the reason."""
    trace_file: str | None = None
    """The run's result with its trace, relative to the output directory."""


RecordListener = Callable[[EverydayRecord], None]


def load_records(out: Path, method: str) -> list[EverydayRecord]:
    return read_records(out, method, EverydayRecord)


def run_everyday_bench(
    request: EverydayBenchRequest,
    *,
    backend: LLMBackend,
    on_record: RecordListener | None = None,
) -> dict[str, list[EverydayRecord]]:
    """Run every method over the selected cases; the records by method (finished ones
    included). The databases are built first and removed at the end."""
    request.out.mkdir(parents=True, exist_ok=True)
    cases = select_cases(request.ids, request.dialects, request.limit)
    if not cases:
        raise ConfigError("no case selected (check --ids, --dialect and --limit)")
    with case_databases(cases, request.pg_url) as urls, ExitStack() as stack:
        executors: dict[DatabaseKey, Executor] = {}
        for key, url in urls.items():
            executors[key] = stack.enter_context(closing(open_database(url)))
        gold = {c.id: _gold(c, executors[(c.dialect, c.schema_name)]) for c in cases}
        return {
            method.value: _run_method(request, method, cases, gold, executors, backend, on_record)
            for method in request.methods
        }


def _gold(case: EverydayCase, executor: Executor) -> GoldResult:
    result = executor.execute(case.gold_sql)
    if not result.ok or result.truncated or not result.rows:
        why = result.failure() or "no rows"
        raise ConfigError(f"gold SQL of {case.id} does not give rows here: {why}")
    return gold_result(result, case.ordered)


def _run_method(
    request: EverydayBenchRequest,
    method: Method,
    cases: list[EverydayCase],
    gold: dict[str, GoldResult],
    executors: dict[DatabaseKey, Executor],
    backend: LLMBackend,
    on_record: RecordListener | None,
) -> list[EverydayRecord]:
    done = {r.id: r for r in load_records(request.out, method.value)}
    records = [done[c.id] for c in cases if c.id in done]
    with records_path(request.out, method.value).open("a", encoding="utf-8") as sink:
        for case in cases:
            if case.id in done:
                if on_record is not None:
                    on_record(done[case.id])
                continue
            executor = executors[(case.dialect, case.schema_name)]
            options = request.options.model_copy(update={"method": method})
            record = run_case(
                case, method, gold[case.id], executor, backend, options, traces=request.out
            )
            sink.write(record.model_dump_json() + "\n")
            sink.flush()
            records.append(record)
            if on_record is not None:
                on_record(record)
    return records


def _keep_trace(out: Path, record: EverydayRecord, result: CorrectionResult) -> EverydayRecord:
    """Write the run's result, with its trace, under `out`; the record names the file."""
    relative = Path(TRACES) / record.method / f"{record.id}.json.gz"
    (out / relative).parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out / relative, "wt", encoding="utf-8") as sink:
        sink.write(result.model_dump_json())
    return record.model_copy(update={"trace_file": str(relative)})


def run_case(
    case: EverydayCase,
    method: Method,
    gold: GoldResult,
    executor: Executor,
    backend: LLMBackend,
    options: CorrectionOptions,
    traces: Path | None = None,
) -> EverydayRecord:
    """One correction, scored; an LLM that cannot be used at all stops the bench. With
    `traces`, the run's result and trace are kept there (`_keep_trace`)."""
    base = EverydayRecord(
        id=case.id,
        dialect=case.dialect,
        error_class=case.error_class,
        schema_name=case.schema_name,
        method=method.value,
        question=case.question,
        wrong_sql=case.wrong_sql,
    )
    started = time.perf_counter()
    try:
        result = correct(executor, case.question, case.wrong_sql, llm=backend, options=options)
    except LLMUnavailableError:
        raise
    except ActsSqlError as exc:
        return base.model_copy(
            update={"error": str(exc), "seconds": round(time.perf_counter() - started, 3)}
        )
    record = _scored(base, result, gold, executor)
    return record if traces is None else _keep_trace(traces, record, result)


def _scored(
    base: EverydayRecord, result: CorrectionResult, gold: GoldResult, executor: Executor
) -> EverydayRecord:
    final = executor.execute(result.sql) if result.sql.strip() else None
    ran = [c for c in result.candidates if (c.get("result") or {}).get("status") == "ok"]
    return base.model_copy(
        update={
            "final_sql": result.sql,
            "right": returns_gold(final, gold),
            "accepted": result.accepted,
            "wrong_ran": executor.execute(base.wrong_sql).ok,
            "final_status": final.status if final is not None else "",
            "unchanged": result.sql.strip() == base.wrong_sql.strip(),
            "seconds": result.usage.seconds,
            "llm_calls": result.usage.llm_calls,
            "prompt_tokens": result.usage.prompt_tokens,
            "completion_tokens": result.usage.completion_tokens,
            "candidates": len(result.candidates),
            "candidates_ran": len(ran),
            "reason": result.reason,
        }
    )
