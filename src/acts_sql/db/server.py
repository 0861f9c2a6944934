"""The execute loop shared by the client/server executors (PostgreSQL, MySQL).

`ServerExecutor.execute` admits the text (`guard.admit`), splits it into
statements, runs each with its timeout and row cap inside one batch (a
read-only transaction that is rolled back, or autocommit on a sandbox copy)
and returns the last result or the first failure, with error positions
counted in the caller's text. Subclasses supply the connection, one statement
(`_run_statement`), the batch bracket and the server-side syntax probe.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from typing import ClassVar

from acts_sql.db.executor import DEFAULT_MAX_ROWS, TableInfo, statement_timeout
from acts_sql.db.guard import admit, located_statements
from acts_sql.db.result import ExecResult, blocked_result
from acts_sql.db.statements import has_code
from acts_sql.sql.dialects import Dialect, get_dialect

REFLECT_TIMEOUT_S = 10.0


def since(started: float) -> float:
    return round(time.monotonic() - started, 6)


class ServerExecutor(ABC):
    """One database on a server, through one lazily (re)opened connection."""

    dialect: str
    dialect_name: ClassVar[str]

    def __init__(
        self,
        *,
        timeout: float | None = None,
        max_rows: int | None = None,
        allow_writes: bool = False,
    ) -> None:
        self.dialect = self.dialect_name
        self.default_timeout = timeout
        """Per-statement timeout in seconds; None: 60 s (15 s for WITH RECURSIVE)."""
        self.default_max_rows = DEFAULT_MAX_ROWS if max_rows is None else max(0, max_rows)
        self.allow_writes = allow_writes
        self._lock = threading.RLock()
        self._closed = False

    @property
    def spec(self) -> Dialect:
        return get_dialect(self.dialect_name)

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

        `isolate` (with writes allowed): leave the database as it was before
        the call (`_run_isolated`, per engine); read-only it changes nothing.
        """
        started = time.monotonic()
        if not has_code(sql):
            return ExecResult(
                status="error", error="no SQL statement to execute", error_kind="syntax"
            )
        admission = admit(
            sql,
            self.spec,
            allow_writes=self.allow_writes,
            database=self._sandbox_database(),
            stand_ins=self._stand_ins(),
            routines=self._routines_allowed(),
        )
        cap = self.default_max_rows if max_rows is None else max(0, max_rows)
        limit = timeout if timeout is not None else self.default_timeout
        with self._lock:
            if self._closed:
                return ExecResult(
                    status="error", error="the executor is closed", error_kind="other"
                )
            if not admission.allowed:
                if admission.probe:
                    result = self._probe_text(sql, admission.reason)
                else:
                    result = admission.blocked()
                return result.model_copy(update={"seconds": since(started)})
            if isolate and self.allow_writes:
                result = self._run_isolated(sql, cap, limit, writes=admission.writes)
            else:
                result = self._run_batch(sql, cap, limit)
        return result.model_copy(update={"seconds": since(started)})

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]:
        from acts_sql.db.reflect import reflect_tables

        with self._lock:
            return reflect_tables(self, self.spec, sample_rows)

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._close()

    def __enter__(self) -> ServerExecutor:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ internals

    def _run_batch(self, sql: str, cap: int, limit: float | None) -> ExecResult:
        """Run the statements of `sql` in one batch: the last result, or the first failure."""
        statements = self._open_batch(sql)
        if isinstance(statements, ExecResult):
            return statements
        try:
            return self._run_statements(statements, cap, limit)
        finally:
            self._end_batch()

    def _open_batch(self, sql: str) -> list[tuple[int, str]] | ExecResult:
        """The located statements of `sql` with a batch begun, or the error that stops it."""
        statements = located_statements(sql, self.spec)
        if not statements:
            return ExecResult(
                status="error", error="no SQL statement to execute", error_kind="syntax"
            )
        opened = self._begin_batch()
        return statements if opened is None else opened

    def _run_statements(
        self, statements: list[tuple[int, str]], cap: int, limit: float | None
    ) -> ExecResult:
        """Each statement in order (the batch is open): the last result, or the first failure."""
        result = ExecResult(status="ok")
        for offset, statement in statements:
            seconds = statement_timeout(statement, limit)
            result = self._run_statement(statement, cap, seconds)
            if not result.ok:
                return _shift(result, offset)
        return result

    def _probe_text(self, sql: str, reason: str) -> ExecResult:
        """Server-side parse of text the guard cannot read: its error, or blocked."""
        if self.spec.syntax_probe_sql is None:
            return blocked_result(reason)
        for offset, statement in located_statements(sql, self.spec):
            failure = self._probe_statement(statement)
            if failure is not None:
                return _shift(failure, offset)
        return blocked_result(reason)

    def run_internal(self, sql: str, max_rows: int = DEFAULT_MAX_ROWS) -> ExecResult:
        """Run acts-sql's own read query (reflection, sampling): no guard, read-only."""
        with self._lock:
            opened = self._begin_batch(read_only=True)
            if opened is not None:
                return opened
            try:
                return self._run_statement(sql, max_rows, REFLECT_TIMEOUT_S)
            finally:
                self._end_batch()

    def _sandbox_database(self) -> str | None:
        """With writes allowed: the database that qualified names may name."""
        return None

    def _stand_ins(self) -> frozenset[str]:
        """A scratch session's TEMP stand-ins, which its statements may write."""
        return frozenset()

    def _routines_allowed(self) -> bool:
        """With writes allowed: may DO blocks and new routines run (see `guard.admit`)?"""
        return True

    @abstractmethod
    def _run_isolated(self, sql: str, cap: int, limit: float | None, *, writes: bool) -> ExecResult:
        """Run `sql` (already admitted; writes allowed) and leave the database as it was.

        `writes`: the guard admitted the text as a write, not as a plain read."""

    @abstractmethod
    def _begin_batch(self, read_only: bool | None = None) -> ExecResult | None:
        """Start a batch (connecting if needed); an error result when that fails."""

    @abstractmethod
    def _end_batch(self) -> None:
        """End the batch: roll back a read-only transaction."""

    @abstractmethod
    def _run_statement(self, statement: str, max_rows: int, timeout: float) -> ExecResult:
        """Run one statement; a failure's position counts from its first character."""

    @abstractmethod
    def _probe_statement(self, statement: str) -> ExecResult | None:
        """Parse one statement on the server without running it: its error, or None."""

    @abstractmethod
    def _close(self) -> None:
        """Close connections and drop any sandbox copy."""


def _shift(result: ExecResult, offset: int) -> ExecResult:
    if result.error_position is None or offset == 0:
        return result
    return result.model_copy(update={"error_position": result.error_position + offset})
