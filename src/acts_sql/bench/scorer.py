"""The evaluator: one verdict per task, as the official BIRD-CRITIC evaluator would give it.

Per task: decide whether it can be scored here (a solution and test cases,
a server for its dialect, tables all created by its own SQL); create a fresh
database; run the job (``preprocess_sql``, the statements under test, the test
cases, ``clean_up_sql``) in a subprocess with a time limit; drop the
database; turn the flags into a status.

Mode-dependent rules, from the official code:
- ``pred`` scores ``pred_sqls``, ``gold`` the solution, ``issue`` the issue SQL;
- efficiency tasks (PostgreSQL/MySQL) call the tests with the issue SQL as
  ``pred_sqls`` and the statements under test as ``sol_sqls``;
- SQLite first runs the issue SQL through the same tests on its own fresh
  database, and fails the task if the issue SQL passes (skipped in ``issue``
  mode, where it would be circular).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from acts_sql.bench.clock import clock_fixed, clock_readers, fixed_now
from acts_sql.bench.databases import (
    OFFICIAL_PG_TIMEZONE,
    DatabaseFactory,
    MySQLFactory,
    PostgresFactory,
    SQLiteFactory,
)
from acts_sql.bench.errors import DatabaseSetupError
from acts_sql.bench.evaluability import check_task, required_statements
from acts_sql.bench.isolation import IsolatedRun, WorkerPool
from acts_sql.bench.jobs import DatabaseTarget, JobOutcome, Phase, PhaseOutcome, TaskJob
from acts_sql.bench.models import Dialect, EvalMode, ScoredTask, Status, TaskResult
from acts_sql.bench.servers import ServerURLs

OFFICIAL_TASK_LIMIT_S = 300.0
"""The official wrapper kills a task's process after 5 minutes."""
_REASON_CHARS = 600

ResultListener = Callable[[TaskResult], None]


class EvalOptions(BaseModel):
    """How to score: mode, parallelism, time limits, servers."""

    model_config = ConfigDict(frozen=True)

    mode: EvalMode = EvalMode.PRED
    workers: int = Field(default=1, ge=1, le=64)
    task_timeout_s: float = Field(default=OFFICIAL_TASK_LIMIT_S, gt=0)
    test_timeout_s: float = Field(default=120.0, gt=0)
    servers: ServerURLs = Field(default_factory=ServerURLs)
    pg_timezone: str | None = OFFICIAL_PG_TIMEZONE
    today: date | None = None
    """Run with the clock at noon UTC of this day (SQLite, MySQL; see ``bench/clock.py``)."""

    @property
    def now(self) -> datetime | None:
        return fixed_now(self.today) if self.today is not None else None


class Evaluator:
    """Scores tasks; thread-safe, so several tasks can be scored at once."""

    def __init__(self, options: EvalOptions | None = None) -> None:
        self.options = options or EvalOptions()
        self._factories: dict[Dialect, DatabaseFactory | None] = {}
        self._lock = threading.Lock()
        self._pool = WorkerPool(self.options.workers)

    def close(self) -> None:
        """Stop the worker processes."""
        self._pool.close()

    def __enter__(self) -> Evaluator:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- databases ------------------------------------------------------------------------

    def factory(self, dialect: str) -> DatabaseFactory | None:
        """The fresh-database factory for a dialect, or None when there is no server for it."""
        try:
            key = Dialect(dialect)
        except ValueError:
            return None
        with self._lock:
            if key not in self._factories:
                self._factories[key] = self._make_factory(key)
            return self._factories[key]

    def _make_factory(self, dialect: Dialect) -> DatabaseFactory | None:
        if dialect == Dialect.SQLITE:
            return SQLiteFactory()
        url = self.options.servers.for_dialect(dialect)
        if not url:
            return None
        factory: DatabaseFactory
        if dialect == Dialect.POSTGRESQL:
            factory = PostgresFactory(url, timezone=self.options.pg_timezone)
        elif dialect == Dialect.MYSQL:
            factory = MySQLFactory(url)
        else:
            return None
        factory.check()
        return factory

    def check_servers(self, dialects: Iterable[str]) -> None:
        """EvaluatorSetupError now, before any task runs, when a dialect's server or drivers
        do not work (a dialect without a server is left out: its tasks are not evaluable)."""
        for dialect in sorted(set(dialects)):
            self.factory(dialect)

    def engines(self, dialects: Iterable[str]) -> dict[str, str]:
        """The engine that scores each dialect here (to compare with the official images)."""
        found: dict[str, str] = {}
        for dialect in sorted(set(dialects)):
            factory = self.factory(dialect)
            found[dialect] = "not available" if factory is None else factory.engine()
        return found

    # -- one task ---------------------------------------------------------------------------

    def statements_under_test(
        self, item: ScoredTask, prediction: list[str] | None
    ) -> list[str] | None:
        """What the mode scores: the prediction, the solution or the issue SQL."""
        if self.options.mode == EvalMode.GOLD:
            return item.solution.sol_sql if item.solution else []
        if self.options.mode == EvalMode.ISSUE:
            return item.task.issue_sql
        return prediction

    def job_for(self, item: ScoredTask, statements: list[str], target: DatabaseTarget) -> TaskJob:
        """The job for one task on the fresh database ``target`` (see the module doc)."""
        task, solution = item.task, item.solution
        assert solution is not None
        sol = solution.sol_sql
        swap = task.efficiency and task.dialect != Dialect.SQLITE
        phases: list[Phase] = []
        if (
            task.dialect == Dialect.SQLITE
            and self.options.mode != EvalMode.ISSUE
            and task.issue_sql
        ):
            phases.append(
                Phase(
                    name="issue_check",
                    statements=task.issue_sql,
                    test_pred_sqls=task.issue_sql,
                    test_sol_sqls=sol,
                    clean_up=False,
                )
            )
        phases.append(
            Phase(
                name="main",
                statements=statements,
                test_pred_sqls=task.issue_sql if swap else statements,
                test_sol_sqls=statements if swap else sol,
            )
        )
        return TaskJob(
            label=task.label,
            target=target,
            preprocess_sql=task.preprocess_sql,
            clean_up_sql=task.clean_up_sql,
            test_cases=solution.test_cases,
            conditions=solution.conditions,
            phases=phases,
            test_timeout_s=self.options.test_timeout_s,
            now=self.options.now,
        )

    def score(self, item: ScoredTask, prediction: list[str] | None = None) -> TaskResult:
        """The verdict for one task (never raises for a task's own failures)."""
        started = time.perf_counter()
        result = self._score(item, prediction)
        result.seconds = round(time.perf_counter() - started, 3)
        result.clock = self.clock_of(item, prediction)
        result.clock_fixed = clock_fixed(item.task.dialect, result.clock, self.options.today)
        return result

    def clock_of(self, item: ScoredTask, prediction: list[str] | None) -> list[str]:
        """What reads the clock in the SQL that runs for this task and in its test code."""
        statements = [
            *required_statements(item),
            *(self.statements_under_test(item, prediction) or []),
        ]
        tests = item.solution.test_cases if item.solution else []
        return clock_readers(statements, tests)

    def _score(self, item: ScoredTask, prediction: list[str] | None) -> TaskResult:
        task = item.task
        if item.solution is None:
            return _result(item, Status.NOT_EVALUABLE, "no solution or test cases for this task")
        verdict = check_task(item)
        if not verdict.evaluable:
            return _result(item, Status.NOT_EVALUABLE, verdict.reason)
        try:
            factory = self.factory(task.dialect)
        except Exception as exc:
            return _result(item, Status.NOT_EVALUABLE, f"{task.dialect} server unusable: {exc}")
        if factory is None:
            return _result(
                item,
                Status.NOT_EVALUABLE,
                f"no {task.dialect} server configured (--pg-url / --mysql-url or "
                "ACTS_SQL_BENCH_PG_URL / ACTS_SQL_BENCH_MYSQL_URL)",
            )
        statements = self.statements_under_test(item, prediction)
        if statements is None:
            return _result(item, Status.FAILED, "no prediction for this task")
        try:
            database = factory.create(task.db_id)
        except DatabaseSetupError as exc:
            return _result(item, Status.ERROR, f"evaluator: {exc}")
        try:
            job = self.job_for(item, statements, database.target)
            run = self._pool.run(job, self.options.task_timeout_s)
        finally:
            with contextlib.suppress(DatabaseSetupError):
                database.drop()
        return verdict_of(item, run, self.options.task_timeout_s)

    # -- many tasks -------------------------------------------------------------------------

    def score_all(
        self,
        items: list[ScoredTask],
        predictions: dict[tuple[str, str], list[str]] | None = None,
        *,
        on_result: ResultListener | None = None,
    ) -> list[TaskResult]:
        """Verdicts for all ``items`` (in their order), ``workers`` at a time."""
        predictions = predictions or {}

        def one(item: ScoredTask) -> TaskResult:
            result = self.score(item, predictions.get(item.key))
            if on_result is not None:
                on_result(result)
            return result

        if self.options.workers == 1:
            return [one(item) for item in items]
        with ThreadPoolExecutor(max_workers=self.options.workers) as pool:
            return list(pool.map(one, items))


def _result(item: ScoredTask, status: Status, reason: str, **extra: Any) -> TaskResult:
    task = item.task
    return TaskResult(
        instance_id=task.instance_id,
        set=task.set,
        dialect=task.dialect,
        category=task.category,
        status=status,
        reason=reason[:_REASON_CHARS],
        **extra,
    )


def _test_counts(phase: PhaseOutcome) -> dict[str, Any]:
    return {
        "tests_passed": sum(1 for t in phase.tests if t.passed),
        "tests_total": len(phase.tests),
        "failed_tests": [f"test_{t.index}" for t in phase.tests if not t.passed],
    }


def verdict_of(item: ScoredTask, run: IsolatedRun, limit_s: float) -> TaskResult:
    """The status of one task from what its job reported."""
    if run.timed_out:
        return _result(
            item, Status.TIMEOUT, f"evaluation ran longer than {limit_s:g} s and was stopped"
        )
    if run.outcome is None:
        return _result(item, Status.ERROR, f"evaluator: the task's process died ({run.died})")
    outcome: JobOutcome = run.outcome
    if outcome.crashed:
        return _result(item, Status.ERROR, f"evaluator: {outcome.crashed}")
    for phase in outcome.phases:
        extension = phase.preprocess_missing_extension or phase.missing_extension
        if extension:
            return _result(
                item,
                Status.NOT_EVALUABLE,
                f"needs the server extension {extension!r}, which this server does not have",
            )
        if phase.preprocess_missing_table:
            return _result(
                item,
                Status.NOT_EVALUABLE,
                "preprocess_sql needs a table it does not create: "
                + phase.preprocess_missing_table,
            )
    main = outcome.phase("main")
    if main is None:
        return _result(item, Status.ERROR, "evaluator: no result for the main phase")
    counts = _test_counts(main)
    if main.timeout:
        return _result(item, Status.TIMEOUT, _join(main.messages), **counts)
    if main.execution_error:
        return _result(
            item, Status.ERROR, _join(main.messages), absent_table=main.missing_table, **counts
        )
    failed = main.failed_tests
    if failed:
        status = Status.TIMEOUT if any(t.timed_out for t in failed) else Status.FAILED
        reason = _join(f"test_{t.index}: {t.message}" for t in failed)
        return _result(item, status, reason, **counts)
    issue = outcome.phase("issue_check")
    if issue is not None and issue.passed:
        return _result(
            item,
            Status.FAILED,
            "the issue SQL passes the test cases too (the official SQLite evaluator then "
            "fails the task)",
            **counts,
        )
    return _result(item, Status.PASSED, "", **counts)


def _join(parts: Iterable[str]) -> str:
    return "; ".join(parts)[:_REASON_CHARS]
