"""`acts-sql bench candidates`: generation versus selection, after a run.

A method's final prediction can fail for two different reasons: it never
produced the right SQL (generation), or it produced it and returned another
one (selection). This module reads a finished `acts-sql bench` run directory
(``records.jsonl`` and the trace of every task), collects every candidate SQL
the method produced in each task (the trace events of kind ``candidate``),
removes duplicates (same SQL after `normalize_sql` in the task's dialect),
scores every distinct candidate with the bench's own evaluator, and writes
``candidates.jsonl``, one line per task (`CandidateLine`).

- A candidate is scored as the runner scores the final SQL: its ``statements``
  when the event carries them (``raw``, ``vote``: a ``sql`` block is one
  statement there), else the SQL split into statements.
- The final prediction's verdict is already in the record: a distinct
  candidate that is the final prediction (same statements, or the same SQL
  after normalisation) takes that verdict and is not scored again.
- ``any_pass``: some candidate passes, or the final prediction does (the
  right answer was generated); ``final_passed``: it was also selected.
- ``wrong_acceptance``: the record says ``accepted`` and the task did not pass.
- Resumable: tasks already in ``candidates.jsonl`` (with the same final verdict
  and acceptance as the record) are not scored again.

Unknown fields of candidate events (``origin``, ``duplicate``, ``group``, ...)
are ignored; a candidate event with empty SQL is not a candidate.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from acts_sql.bench.errors import BenchDataError
from acts_sql.bench.evaluate import load_items
from acts_sql.bench.loader import read_jsonl, read_trace, stored_trace
from acts_sql.bench.models import Dialect, ScoredTask, Status, TaskKey
from acts_sql.bench.runner import RECORDS, BenchRecord
from acts_sql.bench.scorer import EvalOptions, Evaluator
from acts_sql.bench.selection import TaskFilter
from acts_sql.engine.events import EventKind
from acts_sql.errors import ActsSqlError
from acts_sql.sql.query_text import normalize_sql, split_statements

CANDIDATES = "candidates.jsonl"

PROJECT_DIALECTS = {
    Dialect.POSTGRESQL: "postgresql",
    Dialect.MYSQL: "mysql",
    Dialect.SQLITE: "sqlite",
    Dialect.SQLSERVER: "sqlserver",
    Dialect.ORACLE: "oracle",
}
"""BIRD-CRITIC's dialect names (task files) -> acts-sql's (`acts_sql.sql.dialects`)."""

_SQL_CHARS = 4000
"""A candidate's SQL is kept in full up to this many characters in ``candidates.jsonl``."""


def project_dialect(name: str) -> str:
    """acts-sql's name for a BIRD-CRITIC dialect name (``PostgreSQL`` -> ``postgresql``)."""
    try:
        return PROJECT_DIALECTS[Dialect(name)]
    except ValueError:
        return name.lower()


def canonical(sql: str, dialect: str) -> str:
    """The duplicate key of a candidate: its normalised text (whitespace-collapsed on failure)."""
    try:
        return normalize_sql(sql, dialect)
    except (ActsSqlError, ValueError, RecursionError):
        return " ".join(sql.split())


def statements_of(sql: str, dialect: str) -> list[str]:
    """``sql`` as the runner hands it to the evaluator (see ``BenchRun._finish``)."""
    try:
        statements = split_statements(sql, dialect)
    except (ActsSqlError, ValueError, RecursionError):
        statements = []
    return statements or ([sql] if sql.strip() else [])


class TraceCandidate(BaseModel):
    """One ``candidate`` event of a trace (only the fields this module reads)."""

    seq: int = 0
    node: str | None = None
    sql: str
    status: str = ""
    statements: list[str] | None = None

    def prediction(self, dialect: str) -> list[str]:
        """What the evaluator scores for this candidate."""
        given = [s for s in self.statements or [] if isinstance(s, str) and s.strip()]
        return given or statements_of(self.sql, dialect)


def trace_candidates(path: Path) -> list[TraceCandidate]:
    """The candidate events of a trace file (a `CorrectionResult` as JSON, plain or gzipped),
    in order."""
    payload = read_trace(path)
    events = payload.get("trace")
    if not isinstance(events, list):
        raise BenchDataError(f"{path} has no list of trace events", path=str(path))
    found: list[TraceCandidate] = []
    for index, event in enumerate(events):
        if not isinstance(event, dict) or event.get("kind") != EventKind.CANDIDATE:
            continue
        raw_data = event.get("data")
        data: dict[str, Any] = raw_data if isinstance(raw_data, dict) else {}
        sql = data.get("sql")
        if not isinstance(sql, str) or not sql.strip():
            continue
        statements = data.get("statements")
        try:
            found.append(
                TraceCandidate(
                    seq=event.get("seq", index) if isinstance(event.get("seq"), int) else index,
                    node=event.get("node") if isinstance(event.get("node"), str) else None,
                    sql=sql,
                    status=str(data.get("status") or ""),
                    statements=statements if isinstance(statements, list) else None,
                )
            )
        except ValidationError:
            found.append(TraceCandidate(seq=index, sql=sql, status=str(data.get("status") or "")))
    return found


class CandidateVerdict(BaseModel):
    """One distinct candidate of a task and its verdict."""

    sql: str
    node: str | None = None
    status: str
    """Execution status in the trace: ok, error, timeout, blocked."""
    occurrences: int = 1
    """Candidate events with this SQL (after normalisation)."""
    verdict: Status | None = None
    """The evaluator's verdict; None when the task was not scored."""
    reason: str = ""
    final: bool = False
    """The final prediction: its verdict is the record's, not scored again."""


class CandidateLine(BaseModel):
    """One line of ``candidates.jsonl``: a task's candidates, scored."""

    instance_id: int | str
    set: str
    dialect: str
    method: str = ""
    candidates: int = 0
    """Distinct candidates (after normalisation)."""
    events: int = 0
    """Candidate events in the trace."""
    duplicates: int = 0
    """Candidate events whose SQL equals an earlier one's (events - candidates)."""
    executing: int = 0
    """Distinct candidates that executed without error (status ok)."""
    passing: int = 0
    """Distinct candidates that pass the task's tests."""
    any_pass: bool = False
    """A candidate, or the final prediction, passes: the right SQL was generated."""
    final_passed: bool = False
    """The final prediction passes: the right SQL was also selected."""
    final_status: Status
    final_in_candidates: bool = False
    """The final prediction is one of the candidates (False: e.g. the input SQL, returned when
    the budget ran out before any candidate)."""
    accepted: bool = False
    wrong_acceptance: bool = False
    """The method said accepted, and the task did not pass."""
    evaluable: bool = True
    """False: the task could not be scored here (its record is ``not_evaluable``)."""
    trace_missing: bool = False
    scored: int = 0
    """Candidates scored by this command (the others took the record's verdict)."""
    seconds: float = 0.0
    verdicts: list[CandidateVerdict] = Field(default_factory=list)

    @property
    def key(self) -> TaskKey:
        return (self.set, str(self.instance_id))

    @property
    def execution_share(self) -> float | None:
        return self.executing / self.candidates if self.candidates else None

    def matches(self, record: BenchRecord) -> bool:
        """Whether this line was made from ``record`` as it is now (else it is stale)."""
        return self.final_status == record.status and self.accepted == record.accepted


def read_candidates(path: Path) -> dict[TaskKey, CandidateLine]:
    """The lines of a ``candidates.jsonl`` by task (the last line of a task wins)."""
    if not path.exists():
        return {}
    lines: dict[TaskKey, CandidateLine] = {}
    for number, data in read_jsonl(path):
        try:
            line = CandidateLine.model_validate(data)
        except ValidationError as exc:
            raise BenchDataError(f"{path}:{number}: not a candidates line: {exc}") from exc
        lines[line.key] = line
    return lines


def read_records(directory: Path) -> list[BenchRecord]:
    path = directory / RECORDS
    if not path.exists():
        raise BenchDataError(f"no {RECORDS} in {directory}: not an `acts-sql bench` output")
    return [BenchRecord.model_validate(data) for _, data in read_jsonl(path)]


class CandidateScorer:
    """Scores the candidates of one task at a time with a shared evaluator."""

    def __init__(self, directory: Path, evaluator: Evaluator | None) -> None:
        self.directory = directory
        self.evaluator = evaluator

    def line(self, record: BenchRecord, item: ScoredTask | None) -> CandidateLine:
        started = time.perf_counter()
        dialect = project_dialect(record.dialect)
        final_passed = record.status == Status.PASSED
        line = CandidateLine(
            instance_id=record.instance_id,
            set=record.set,
            dialect=record.dialect,
            method=record.method,
            final_status=record.status,
            final_passed=final_passed,
            accepted=record.accepted,
            evaluable=record.status != Status.NOT_EVALUABLE
            and item is not None
            and item.solution is not None,
        )
        line.wrong_acceptance = line.evaluable and record.accepted and not final_passed
        trace = self.directory / record.trace_file if record.trace_file else None
        if trace is None or stored_trace(trace) is None:
            line.trace_missing = True
            events: list[TraceCandidate] = []
        else:
            events = trace_candidates(trace)
        groups: dict[str, CandidateVerdict] = {}
        predictions: dict[str, list[str]] = {}
        for event in events:
            key = canonical(event.sql, dialect)
            if key in groups:
                groups[key].occurrences += 1
                continue
            groups[key] = CandidateVerdict(
                sql=event.sql[:_SQL_CHARS], node=event.node, status=event.status
            )
            predictions[key] = event.prediction(dialect)
        final_key = canonical(";\n".join(record.pred_sqls), dialect) if record.pred_sqls else None
        final_statements = [s.strip() for s in record.pred_sqls]
        for key, verdict in groups.items():
            same = [s.strip() for s in predictions[key]] == final_statements
            if record.pred_sqls and (same or key == final_key):
                verdict.final = True
                verdict.verdict, verdict.reason = record.status, record.reason
                line.final_in_candidates = True
            elif line.evaluable and item is not None and self.evaluator is not None:
                scored = self.evaluator.score(item, predictions[key])
                verdict.verdict, verdict.reason = scored.status, scored.reason
                line.scored += 1
        line.verdicts = list(groups.values())
        line.events = len(events)
        line.candidates = len(groups)
        line.duplicates = line.events - line.candidates
        line.executing = sum(1 for v in groups.values() if v.status == "ok")
        line.passing = sum(1 for v in groups.values() if v.verdict == Status.PASSED)
        line.any_pass = line.passing > 0 or final_passed
        line.seconds = round(time.perf_counter() - started, 3)
        return line


LineListener = Callable[[CandidateLine, int, int], None]
"""Called after each task: the line, how many tasks are done, how many there are in all."""


class CandidatesRequest(BaseModel):
    """What `score_candidates` needs: the run directory, the task files, the evaluator."""

    run: Path
    tasks: Path
    gt: Path | None = None
    options: EvalOptions = Field(default_factory=EvalOptions)


def score_candidates(
    request: CandidatesRequest, *, on_line: LineListener | None = None
) -> list[CandidateLine]:
    """Score every task's candidates of a run; write and return ``candidates.jsonl``'s lines.

    Tasks that already have an up-to-date line are skipped (see the module doc).
    """
    directory = request.run
    records = read_records(directory)
    path = directory / CANDIDATES
    by_key = {r.key: r for r in records}
    done = {
        key: line
        for key, line in read_candidates(path).items()
        if key in by_key and line.matches(by_key[key])
    }
    pending = [r for r in records if r.key not in done]
    scorable = [r for r in pending if r.status != Status.NOT_EVALUABLE]
    items = _scored_items(request, scorable)
    lock = threading.Lock()
    lines: dict[TaskKey, CandidateLine] = dict(done)
    counter = [len(done)]
    with contextlib.ExitStack() as stack:
        evaluator = _evaluator(stack, request.options, scorable) if scorable else None
        scorer = CandidateScorer(directory, evaluator)

        def one(record: BenchRecord) -> CandidateLine:
            line = scorer.line(record, items.get(record.key))
            with lock:
                with path.open("a", encoding="utf-8") as handle:
                    handle.write(line.model_dump_json() + "\n")
                lines[line.key] = line
                counter[0] += 1
                count = counter[0]
            if on_line is not None:
                on_line(line, count, len(records))
            return line

        workers = request.options.workers
        if workers == 1 or len(pending) <= 1:
            for record in pending:
                one(record)
        else:
            with ThreadPoolExecutor(max_workers=workers) as pool:
                list(pool.map(one, pending))
    ordered = [lines[r.key] for r in records if r.key in lines]
    with path.open("w", encoding="utf-8") as handle:
        for line in ordered:
            handle.write(line.model_dump_json() + "\n")
    return ordered


def _scored_items(
    request: CandidatesRequest, scorable: list[BenchRecord]
) -> dict[TaskKey, ScoredTask]:
    """The tasks (with their solutions) of the records to score; every one must be found."""
    if not scorable:
        return {}
    if request.gt is None:
        raise BenchDataError("--gt (the solutions: a *_solutions.jsonl file or dev/) is needed")
    ids = [f"{r.set}/{r.instance_id}" for r in scorable]
    items = {item.key: item for item in load_items(request.tasks, request.gt, TaskFilter(ids=ids))}
    missing = [f"{r.set}/{r.instance_id}" for r in scorable if r.key not in items]
    if missing:
        raise BenchDataError(
            f"{len(missing)} tasks of {request.run} are not in {request.tasks}"
            + (f" with solutions from {request.gt}" if request.gt else "")
            + ": "
            + ", ".join(missing[:5])
            + (" ..." if len(missing) > 5 else "")
        )
    return items


def _evaluator(
    stack: contextlib.ExitStack, options: EvalOptions, scorable: list[BenchRecord]
) -> Evaluator:
    """The evaluator's worker processes (started only when there is something to score),
    with a server for every dialect of the records."""
    evaluator = stack.enter_context(Evaluator(options))
    for dialect in sorted({r.dialect for r in scorable}):
        if evaluator.factory(dialect) is None:
            raise BenchDataError(
                f"no {dialect} server to score candidates on (--pg-url / --mysql-url "
                "or ACTS_SQL_BENCH_PG_URL / ACTS_SQL_BENCH_MYSQL_URL)"
            )
    return evaluator


def load_candidate_lines(directory: Path) -> dict[TaskKey, CandidateLine] | None:
    """``candidates.jsonl`` of a run directory by task, or None when it has none."""
    path = directory / CANDIDATES
    return read_candidates(path) if path.exists() else None


__all__ = [
    "CANDIDATES",
    "CandidateLine",
    "CandidateScorer",
    "CandidateVerdict",
    "CandidatesRequest",
    "TraceCandidate",
    "load_candidate_lines",
    "project_dialect",
    "read_candidates",
    "score_candidates",
    "trace_candidates",
]
