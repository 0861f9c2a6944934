"""Scoring one task inside the evaluator's subprocess: the official sequence, phase by phase.

For each phase: a fresh database (the parent created the PostgreSQL/MySQL one;
SQLite files are made here), the task's connection, ``preprocess_sql``
(errors ignored, as officially, but a missing table is noted), the phase's
statements on the same connection, then, if they ran, every test case on
that connection with ``pred_query_result`` set to their last rows; last,
``clean_up_sql``.
"""

from __future__ import annotations

import traceback
from datetime import datetime
from pathlib import Path
from typing import Any

from acts_sql.bench.helpers import HelperSet
from acts_sql.bench.jobs import (
    CaseOutcome,
    DatabaseTarget,
    JobOutcome,
    Phase,
    PhaseOutcome,
    TaskJob,
)
from acts_sql.bench.testcases import run_test_case

_SQLITE_SIDE_FILES = ("-wal", "-shm", "-journal")


def make_helpers(target: DatabaseTarget, now: datetime | None = None) -> HelperSet:
    """The dialect's official helpers bound to the job's database (``now``: a fixed clock)."""
    if target.dialect == "PostgreSQL":
        from acts_sql.bench.helpers.postgresql import PostgresHelpers
        from acts_sql.bench.servers import postgres_connect_kwargs

        url = _server(target)
        return PostgresHelpers(
            lambda name: _pg_dsn(postgres_connect_kwargs(url, name)), target.name
        )
    if target.dialect == "MySQL":
        from acts_sql.bench.helpers.mysql import MySQLHelpers
        from acts_sql.bench.servers import mysql_connect_kwargs

        url = _server(target)
        return MySQLHelpers(lambda name: mysql_connect_kwargs(url, name), target.name, now)
    from acts_sql.bench.helpers.sqlite import SQLiteHelpers

    return SQLiteHelpers(target.name, now)


def _server(target: DatabaseTarget) -> str:
    if not target.server_url:
        raise ValueError(f"no server URL for a {target.dialect} job")
    return target.server_url


def _pg_dsn(kwargs: dict[str, Any]) -> str:
    from psycopg2.extensions import make_dsn  # type: ignore[import-untyped]

    return str(make_dsn(**{k: str(v) for k, v in kwargs.items()}))


def reset_sqlite_file(path: str) -> None:
    """An empty database file at ``path`` (what copying an empty template gives)."""
    for suffix in _SQLITE_SIDE_FILES:
        Path(path + suffix).unlink(missing_ok=True)
    Path(path).unlink(missing_ok=True)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).touch()


def run_phase(job: TaskJob, phase: Phase, helpers: HelperSet) -> PhaseOutcome:
    """One phase on the job's (fresh) database."""
    conn = helpers.connect()
    outcome = PhaseOutcome(name=phase.name)
    prepared = helpers.run(job.preprocess_sql, conn, solution=False)
    outcome.preprocess_missing_table = prepared.missing_table
    outcome.preprocess_missing_extension = prepared.missing_extension
    outcome.preprocess_errors = prepared.messages
    executed = helpers.run(phase.statements, conn, solution=True)
    outcome.execution_error = executed.error
    outcome.timeout = executed.timeout
    outcome.messages = executed.messages
    outcome.missing_extension = executed.missing_extension
    outcome.missing_table = executed.missing_table
    if executed.ok:
        outcome.tests = [
            _run_case(job, phase, helpers, conn, index, source, executed.rows)
            for index, source in enumerate(_test_sources(job, helpers), start=1)
        ]
    if phase.clean_up and job.clean_up_sql:
        helpers.run(job.clean_up_sql, conn, solution=False)
    return outcome


def _test_sources(job: TaskJob, helpers: HelperSet) -> list[str]:
    if job.test_cases:
        return job.test_cases
    default = getattr(helpers, "default_test_case", None)
    return [default] if default else []


def _run_case(
    job: TaskJob,
    phase: Phase,
    helpers: HelperSet,
    conn: Any,
    index: int,
    source: str,
    rows: Any,
) -> CaseOutcome:
    try:
        return run_test_case(
            index,
            source,
            helpers,
            conn,
            pred_query_result=rows,
            pred_sqls=phase.test_pred_sqls,
            sol_sqls=phase.test_sol_sqls,
            conditions=job.conditions,
            timeout_s=job.test_timeout_s,
        )
    except Exception as exc:  # the runner itself failed around the test
        return CaseOutcome(index=index, passed=False, message=f"unexpected error: {exc}")


def run_job(job: TaskJob) -> JobOutcome:
    """Every phase of ``job``; an evaluator failure becomes ``crashed``, never an exception."""
    outcome = JobOutcome()
    try:
        for phase in job.phases:
            if job.target.dialect == "SQLite":
                reset_sqlite_file(job.target.name)
            helpers = make_helpers(job.target, job.now)
            try:
                outcome.phases.append(run_phase(job, phase, helpers))
            finally:
                helpers.close_all()
    except Exception as exc:
        tail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        outcome.crashed = f"{tail}"
    return outcome
