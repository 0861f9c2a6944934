"""The database an agent works on during a benchmark task.

It is the database the evaluator would build: fresh, with the task's
``preprocess_sql`` run on it the official way (same helpers, same driver).
The agent's executor is then opened with ``allow_writes=True``, which makes it
work on a throw-away copy; the prepared database is dropped when the task is
done. Scoring builds its own fresh database again, so nothing the agent did
can reach the verdict.

`open_agent_executor` opens it. On PostgreSQL it lets DO blocks and new
routines run even when the benchmark server's user is a superuser, which the
executor otherwise refuses: the evaluator runs every prediction as that same
user anyway, so the agent trying one adds no reach.

One deliberate difference: the agent's executor has its own connection, so
objects that ``preprocess_sql`` makes session-local (``CREATE TEMP TABLE``)
would be invisible to it; here they are created as ordinary tables instead.
"""

from __future__ import annotations

import re
from contextlib import suppress
from datetime import datetime
from pathlib import Path

from acts_sql.bench.databases import DatabaseFactory, FreshDatabase
from acts_sql.bench.errors import DatabaseSetupError
from acts_sql.bench.models import Task
from acts_sql.bench.phases import make_helpers, reset_sqlite_file
from acts_sql.bench.servers import database_url
from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.db.postgres import PostgresExecutor
from acts_sql.db.url import parse_url

_TEMPORARY = re.compile(
    r"\bCREATE(\s+(?:OR\s+REPLACE\s+)?)(?:(?:GLOBAL|LOCAL)\s+)?TEMP(?:ORARY)?\s+(TABLE|VIEW)\b",
    re.IGNORECASE,
)


def persistent(statement: str) -> str:
    """``statement`` with CREATE TEMP TABLE/VIEW made a plain CREATE TABLE/VIEW."""
    return _TEMPORARY.sub(lambda m: f"CREATE{m.group(1)}{m.group(2)}", statement)


class PreparedDatabase:
    """A fresh database after ``preprocess_sql``; ``url`` opens it with `open_database`."""

    def __init__(self, fresh: FreshDatabase, url: str, preprocess_errors: list[str]) -> None:
        self.fresh = fresh
        self.url = url
        self.preprocess_errors = preprocess_errors

    def drop(self) -> None:
        with suppress(DatabaseSetupError):
            self.fresh.drop()


def prepare_database(
    factory: DatabaseFactory, task: Task, now: datetime | None = None
) -> PreparedDatabase:
    """Create the task's fresh database and run its ``preprocess_sql`` (errors are kept).

    ``now`` (``--today``) is the clock ``preprocess_sql`` reads (SQLite, MySQL); the
    agent's own queries afterwards read the real one.
    """
    fresh = factory.create(task.db_id)
    target = fresh.target
    try:
        if target.dialect == "SQLite":
            reset_sqlite_file(target.name)
        helpers = make_helpers(target, now)
        try:
            conn = helpers.connect()
            statements = [persistent(sql) for sql in task.preprocess_sql]
            outcome = helpers.run(statements, conn, solution=False)
        finally:
            helpers.close_all()
    except Exception as exc:
        fresh.drop()
        raise DatabaseSetupError(f"cannot prepare the database: {exc}") from exc
    if target.dialect == "SQLite":
        url = f"sqlite:///{Path(target.name).resolve()}"
    else:
        assert target.server_url is not None
        url = database_url(target.server_url, target.name)
    return PreparedDatabase(fresh, url, outcome.messages)


def open_agent_executor(url: str) -> Executor:
    """The agent's executor on a prepared database: writes on a throw-away copy."""
    if parse_url(url).dialect == "postgresql":
        return PostgresExecutor(url, allow_writes=True, privileged_routines=True)
    return open_database(url, allow_writes=True)
