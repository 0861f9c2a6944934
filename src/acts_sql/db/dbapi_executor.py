"""The execute loop of the SQL Server and Oracle executors, over any DB-API driver.

`DbapiExecutor.execute`:

1. asks the read-only guard (with writes allowed: `permit_when_writing`);
   text the guard cannot parse goes to the server's non-executing parse
   (`probe`), so the agent still gets the engine's own syntax error;
2. opens the connection lazily (and again after a timeout or a broken
   connection), runs the dialect's session setup once;
3. runs the statements one by one inside a transaction that is ALWAYS
   rolled back (`begin_sql`, `rollback`), each under the driver's timeout,
   fetching at most `max_rows + 1` rows.

A driver module (mssql.py, oracle.py) supplies the connection and the SQL it
sends, as small pure functions, and classifies the driver's exceptions.
Nothing here is specific to one driver, so the whole loop is tested with a
fake DB-API connection.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, ClassVar

from acts_sql.db.cells import json_safe
from acts_sql.db.executor import DEFAULT_MAX_ROWS, TableInfo, statement_timeout
from acts_sql.db.executor_core import (
    REFLECT_TIMEOUT_S,
    fetch_result,
    located,
    no_statement,
    row_cap,
    shift_position,
    since,
    with_stand_ins,
)
from acts_sql.db.reflect import reflect_tables
from acts_sql.db.result import ExecResult, blocked_result
from acts_sql.db.statements import has_code
from acts_sql.sql.dialects import Dialect, get_dialect
from acts_sql.sql.query_text import split_statements
from acts_sql.sql.safety import check_statement
from acts_sql.sql.safety_rules import Category

Connect = Callable[[], Any]
"""Opens a new DB-API connection."""


class DbapiExecutor(ABC):
    """One database on a server, through one lazily (re)opened DB-API connection."""

    dialect: str
    permit_when_writing: ClassVar[frozenset[Category]]
    """Guard categories that may run with `allow_writes` (always rolled back)."""

    def __init__(
        self,
        connect: Connect,
        *,
        timeout: float | None = None,
        max_rows: int | None = None,
        allow_writes: bool = False,
    ) -> None:
        self._connect = connect
        self.timeout = timeout
        """Per-statement limit in seconds; None: 60 s, 15 s for WITH RECURSIVE."""
        self.max_rows = row_cap(max_rows)
        self.allow_writes = allow_writes
        self._conn: Any = None
        self._lock = threading.RLock()
        self._closed = False

    @property
    def spec(self) -> Dialect:
        return get_dialect(self.dialect)

    # ------------------------------------------------------------ driver hooks

    @abstractmethod
    def session_setup(self) -> list[str]:
        """Statements run once on every new connection."""

    @abstractmethod
    def begin_sql(self, *, read_only: bool) -> list[str]:
        """Statements that open the transaction of one batch."""

    @abstractmethod
    def rollback(self, conn: Any) -> None:
        """End the batch's transaction without keeping anything."""

    @abstractmethod
    def set_timeout(self, conn: Any, seconds: float) -> None:
        """Bound the next statement's run time through the driver."""

    @abstractmethod
    def statement_text(self, statement: str) -> str:
        """The text sent for one statement (e.g. without a trailing `;`)."""

    @abstractmethod
    def classify(self, exc: BaseException, *, timeout: float, statement: str) -> ExecResult:
        """The typed result of a driver exception raised by `statement`."""

    @abstractmethod
    def probe(self, statement: str) -> ExecResult | None:
        """The server's syntax error for `statement` without running it, or None
        (it parses, or it cannot be checked safely)."""

    def convert(self, value: Any) -> Any:
        """One cell as a JSON-safe value."""
        return json_safe(value)

    # ------------------------------------------------------------ public API

    def execute(
        self,
        sql: str,
        *,
        max_rows: int | None = None,
        timeout: float | None = None,
        isolate: bool = False,
    ) -> ExecResult:
        """Run one or more statements; never raises for SQL failures.

        Every batch is rolled back, writes or not, so each call is already
        isolated and `isolate` changes nothing. (What a rollback cannot undo:
        SQL Server IDENTITY values a rolled-back INSERT used; sequences and,
        on Oracle, DDL are blocked for that reason.)
        """
        del isolate  # every batch is rolled back anyway
        started = time.monotonic()
        if not has_code(sql):
            return no_statement()
        permit = self.permit_when_writing if self.allow_writes else frozenset()
        verdict = check_statement(sql, self.spec, permit=permit)
        with self._lock:
            if self._closed:
                return ExecResult(
                    status="error", error="the executor is closed", error_kind="other"
                )
            if verdict.allowed:
                result = self._run_batch(
                    sql,
                    row_cap(max_rows, self.max_rows),
                    timeout if timeout is not None else self.timeout,
                    read_only=not self.allow_writes,
                )
            elif verdict.category == "unparseable":
                result = self._probe_text(sql, verdict.reason or "cannot be checked")
            else:
                result = blocked_result(verdict.reason or "not allowed")
        return result.model_copy(update={"seconds": since(started)})

    def run_internal(self, sql: str, max_rows: int = DEFAULT_MAX_ROWS) -> ExecResult:
        """Run acts-sql's own read query (reflection, samples, probes): no guard,
        inside a read-only transaction that is rolled back."""
        with self._lock:
            return self._run_batch(sql, max_rows, REFLECT_TIMEOUT_S, read_only=True, split=False)

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]:
        """Tables and views from the dialect's catalog queries, with sample rows."""
        return reflect_tables(self, self.spec, sample_rows)

    @contextmanager
    def scratch(self) -> Iterator[CteScratchSession]:
        """A scratch session whose stand-ins are empty CTEs (nothing is created)."""
        yield CteScratchSession(self)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._discard()

    def __enter__(self) -> DbapiExecutor:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ internals

    def _connection(self) -> Any:
        if self._conn is None:
            conn = self._connect()
            cursor = conn.cursor()
            try:
                for statement in self.session_setup():
                    cursor.execute(statement)
            finally:
                cursor.close()
            self._conn = conn
        return self._conn

    def _discard(self) -> None:
        """Drop the connection (after a timeout or failure); the next batch reconnects."""
        conn, self._conn = self._conn, None
        if conn is not None:
            with suppress(Exception):
                conn.close()

    def _run_batch(
        self,
        sql: str,
        max_rows: int,
        timeout: float | None,
        *,
        read_only: bool,
        split: bool = True,
    ) -> ExecResult:
        """Run the statements of `sql` in one transaction that is rolled back."""
        texts = split_statements(sql, self.spec) if split else [sql]
        if not texts:
            return no_statement()
        try:
            conn = self._connection()
            cursor = conn.cursor()
        except Exception as exc:  # connecting failed: a typed result, not a crash
            self._discard()
            return self.classify(exc, timeout=0.0, statement="")
        result = ExecResult(status="ok")
        try:
            for statement in self.begin_sql(read_only=read_only):
                cursor.execute(statement)
            for offset, text in located(sql, texts):
                result = self._run_one(conn, cursor, text, max_rows, timeout)
                if not result.ok:
                    result = shift_position(result, offset)
                    break
        except Exception as exc:  # the transaction could not be opened
            result = self.classify(exc, timeout=0.0, statement="")
        finally:
            with suppress(Exception):
                cursor.close()
            try:
                self.rollback(conn)
            except Exception:  # a connection that cannot roll back is not reused
                self._discard()
        if result.status == "timeout" or result.error_kind == "other":
            self._discard()
        return result

    def _run_one(
        self, conn: Any, cursor: Any, statement: str, max_rows: int, timeout: float | None
    ) -> ExecResult:
        limit = statement_timeout(statement, timeout)
        started = time.monotonic()
        try:
            self.set_timeout(conn, limit)
            cursor.execute(self.statement_text(statement))
            result = fetch_result(cursor, max_rows, self.convert)
        except Exception as exc:  # every driver failure becomes a typed result
            result = self.classify(exc, timeout=limit, statement=statement)
        return result.model_copy(update={"seconds": since(started)})

    def _probe_text(self, sql: str, reason: str) -> ExecResult:
        """Text the guard cannot parse: the server's syntax error, or blocked."""
        for offset, statement in located(sql, split_statements(sql, self.spec)):
            failure = self.probe(statement)
            if failure is not None:
                return shift_position(failure, offset)
        return blocked_result(reason)


class CteScratchSession:
    """Stand-ins as empty CTEs prepended to every statement of the session.

    Nothing is created on the server, so no privilege is needed and nothing
    is left behind; a CTE shadows a table of the same name, as a TEMP table
    would. (SQL Server's #temp tables and Oracle's private temporary tables
    carry a required prefix, so the unit's plain references would not reach
    them; Oracle DDL also commits.)
    """

    def __init__(self, executor: DbapiExecutor) -> None:
        self._executor = executor
        self._stand_ins: dict[str, list[str]] = {}

    @property
    def stand_ins(self) -> dict[str, list[str]]:
        return dict(self._stand_ins)

    def create_stand_in(self, name: str, columns: Sequence[str]) -> ExecResult:
        """Record an empty stand-in `name(columns)` for the later statements."""
        if not columns:
            return ExecResult(
                status="error", error=f"stand-in {name!r} needs columns", error_kind="other"
            )
        self._stand_ins[name] = list(columns)
        return ExecResult(status="ok")

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout: float | None = None
    ) -> ExecResult:
        """Run `sql` with the stand-ins in scope (same rules as the executor)."""
        dialect = self._executor.spec
        texts = split_statements(sql, dialect) or [sql]
        wrapped = ";\n".join(with_stand_ins(text, self._stand_ins, dialect) for text in texts)
        return self._executor.execute(wrapped, max_rows=max_rows, timeout=timeout)
