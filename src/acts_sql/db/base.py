"""The execute loop every executor shares, and the small pieces around it.

`BaseExecutor.execute` admits the text (the read-only guard, `_admit`), splits
it into statements (`_split`), runs each with its timeout and row cap inside
one batch (`_begin` ... `_end`: a read-only transaction that is rolled back,
or autocommit on a throw-away copy) and returns the last result or the first
failure, with error positions counted in the caller's text. Text the guard
cannot parse goes to the engine's parse that never runs anything
(`_probe_statement`), so the agent still sees the engine's own syntax error.
`isolate=True` with writes allowed leaves the database as it was
(`_run_isolated`: by default the batch in a transaction that is rolled back).

One module per engine subclasses it with the driver hooks: connecting, the
batch bracket, one statement under its timeout with the driver's errors
classified (`_run_statement`), the probe, stand-in tables (`scratch`) and the
throw-away copy (`_copy`, dropped at close). The dialect is a `Dialect`
object (`spec`), looked up once per engine.
"""

from __future__ import annotations

import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any, ClassVar

from acts_sql.db.cells import json_safe
from acts_sql.db.executor import (
    DEFAULT_MAX_ROWS,
    ScratchSession,
    TableInfo,
    statement_timeout,
)
from acts_sql.db.guard import Admission, admit, located_statements
from acts_sql.db.reflect import reflect_tables
from acts_sql.db.result import ExecResult
from acts_sql.db.statements import Located, has_code
from acts_sql.sql.dialects import Dialect
from acts_sql.sql.safety import check_statement
from acts_sql.sql.safety_rules import Category

REFLECT_TIMEOUT_S = 10.0
"""The limit of acts-sql's own statements (reflection, samples, stand-ins, probes)."""

CellConverter = Callable[[Any], Any]


class BaseExecutor(ABC):
    """One database, read-only unless writes are allowed, with timeout and row cap."""

    spec: ClassVar[Dialect]
    """The engine's dialect; `dialect` is its name (the `Executor` protocol's string)."""
    permit_when_writing: ClassVar[frozenset[Category] | None] = None
    """None: the sandbox guard decides (`guard.admit`). A set: the read-only guard
    with these categories permitted when writes are allowed (then always rolled back)."""

    def __init__(
        self, *, timeout: float | None = None, max_rows: int | None = None, allow_writes: bool
    ) -> None:
        self.dialect: str = self.spec.name
        self.timeout = timeout
        """Per-statement limit in seconds; None: 60 s, 15 s for WITH RECURSIVE."""
        self.max_rows = row_cap(max_rows)
        self.allow_writes = allow_writes
        self._copy: Any = None
        """The throw-away copy statements run on (with writes allowed); dropped at close."""
        self._lock = threading.RLock()
        self._closed = False

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

        Each statement gets `timeout` seconds (default 60, 15 for `WITH
        RECURSIVE`); at most `max_rows` rows are returned (default 10,000), with
        `truncated` set when there were more. `isolate` (with writes allowed):
        leave the database as it was before the call; read-only it changes nothing.
        """
        started = time.monotonic()
        if not has_code(sql):
            return no_statement()
        admission = self._admit(sql)
        cap = row_cap(max_rows, self.max_rows)
        limit = self.timeout if timeout is None else timeout
        with self._lock:
            if self._closed:
                result = ExecResult(
                    status="error", error="the executor is closed", error_kind="other"
                )
            elif not admission.allowed:
                result = (
                    self._probe_text(sql, admission) if admission.probe else admission.blocked()
                )
            elif isolate and self.allow_writes:
                result = self._run_isolated(sql, cap, limit, writes=admission.writes)
            else:
                result = self._run_batch(sql, cap, limit)
        return result.model_copy(update={"seconds": since(started)})

    def run_internal(self, sql: str, max_rows: int = DEFAULT_MAX_ROWS) -> ExecResult:
        """Run acts-sql's own read query (reflection, samples, probes): no guard,
        read-only (inside a read-only transaction that is rolled back, where the engine has one)."""
        with self._lock:
            opened = self._begin(read_only=True)
            if opened is not None:
                return opened
            try:
                return self._run_statement(sql, max_rows, REFLECT_TIMEOUT_S)
            finally:
                self._end()

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]:
        """Tables and views from the dialect's catalog queries, with sample rows."""
        with self._lock:
            return reflect_tables(self, self.spec, sample_rows)

    @abstractmethod
    def scratch(self) -> AbstractContextManager[ScratchSession]:
        """A session where empty stand-in tables can be made (see `ScratchSession`)."""

    def close(self) -> None:
        """Close the connection and drop the throw-away copy, once."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._disconnect()
            self._drop_copy()

    def __enter__(self) -> BaseExecutor:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ the loop

    def _admit(self, sql: str) -> Admission:
        """May `sql` run here? (See `permit_when_writing`.)"""
        if self.permit_when_writing is None:
            return admit(
                sql,
                self.spec,
                allow_writes=self.allow_writes,
                database=self._sandbox_database(),
                stand_ins=self._stand_ins(),
                routines=self._routines_allowed(),
                catalog_functions=self._catalog_functions(),
            )
        permit = self.permit_when_writing if self.allow_writes else frozenset()
        verdict = check_statement(
            sql, self.spec, permit=permit, catalog_functions=self._catalog_functions()
        )
        reason = verdict.reason or "not allowed"
        return Admission(verdict.allowed, reason, probe=verdict.category == "unparseable")

    def _open_batch(self, sql: str, *, isolating: bool = False) -> Located | ExecResult:
        """The statements of `sql` with a batch begun, or the result that stops them."""
        statements = self._split(sql)
        if isinstance(statements, ExecResult):
            return statements
        if not statements:
            return no_statement()
        opened = self._begin(isolating=isolating)
        return statements if opened is None else opened

    def _run_batch(
        self, sql: str, cap: int, limit: float | None, *, isolating: bool = False
    ) -> ExecResult:
        """Run the statements of `sql` in one batch: the last result, or the first failure."""
        statements = self._open_batch(sql, isolating=isolating)
        if isinstance(statements, ExecResult):
            return statements
        try:
            return self._run_statements(statements, cap, limit)
        finally:
            self._end()

    def _run_statements(self, statements: Located, cap: int, limit: float | None) -> ExecResult:
        """Each statement in order (the batch is open): the last result, or the first failure."""
        result = ExecResult(status="ok")
        for offset, statement in statements:
            result = self._run_statement(statement, cap, statement_timeout(statement, limit))
            if not result.ok:
                return shift_position(result, offset)
        return result

    def _run_isolated(self, sql: str, cap: int, limit: float | None, *, writes: bool) -> ExecResult:
        """Run `sql` (admitted; writes allowed) and leave the database as it was: by
        default in a transaction that is rolled back (`_begin(isolating=True)`).
        `writes`: the guard admitted the text as a write, not as a plain read."""
        return self._run_batch(sql, cap, limit, isolating=True)

    def _probe_text(self, sql: str, admission: Admission) -> ExecResult:
        """Text the guard cannot parse: the engine's own error for its first statement that
        fails the probe, or blocked (also when that probe is stopped or refused)."""
        for offset, statement in self._probe_pieces(sql):
            failure = self._probe_statement(statement)
            if failure is not None:
                ok = failure.status == "error"
                return shift_position(failure, offset) if ok else admission.blocked()
        return admission.blocked()

    # ------------------------------------------------------------ hooks

    def _split(self, sql: str) -> Located | ExecResult:
        """The statements of admitted text, or the result that stops them."""
        return located_statements(sql, self.spec)

    def _probe_pieces(self, sql: str) -> Located:
        """The pieces of unparseable text that `_probe_statement` sees."""
        return located_statements(sql, self.spec)

    def _sandbox_database(self) -> str | None:
        """With writes allowed: the database that qualified names may name."""
        return None

    def _stand_ins(self) -> frozenset[str]:
        """A scratch session's TEMP stand-ins, which its statements may write."""
        return frozenset()

    def _catalog_functions(self) -> frozenset[str] | None:
        """The side-effect-free functions of the server's own catalog, which the guard
        uses instead of its generated allowlist (see `safety.check_statement`); None: the
        generated list."""
        return None

    def _routines_allowed(self) -> bool:
        """With writes allowed: may DO blocks and new routines run (see `guard.admit`)?"""
        return True

    @abstractmethod
    def _begin(
        self, *, read_only: bool | None = None, isolating: bool = False
    ) -> ExecResult | None:
        """Start a batch (connecting if needed); an error result when that fails.

        `read_only`: None means read-only unless writes are allowed. `isolating`:
        the batch must leave nothing behind (see `_run_isolated`)."""

    @abstractmethod
    def _end(self) -> None:
        """End the batch: roll back its transaction, where it has one."""

    @abstractmethod
    def _run_statement(self, statement: str, max_rows: int, timeout: float) -> ExecResult:
        """Run one statement; a failure's position counts from its first character."""

    @abstractmethod
    def _probe_statement(self, statement: str) -> ExecResult | None:
        """Parse one statement without running it: the engine's error, or None."""

    @abstractmethod
    def _disconnect(self) -> None:
        """Close the connection(s)."""

    def _drop_copy(self) -> None:
        if self._copy is not None:
            self._copy.drop()
            self._copy = None


# ------------------------------------------------------------------ results


def since(started: float) -> float:
    """Seconds since `started` (a `time.monotonic()` value), rounded to µs."""
    return round(time.monotonic() - started, 6)


def row_cap(max_rows: int | None, default: int = DEFAULT_MAX_ROWS) -> int:
    """The row cap to apply: `max_rows`, else `default`; never negative."""
    return default if max_rows is None else max(0, max_rows)


def no_statement() -> ExecResult:
    return ExecResult(status="error", error="no SQL statement to execute", error_kind="syntax")


def needs_columns(name: str) -> ExecResult:
    """The result of a stand-in asked for without columns."""
    return ExecResult(status="error", error=f"stand-in {name!r} needs columns", error_kind="other")


def fetch_result(cursor: Any, max_rows: int, convert: CellConverter = json_safe) -> ExecResult:
    """The result of a DB-API cursor that has just executed one statement.

    A statement without a result set reports the driver's rowcount. Otherwise
    at most `max_rows + 1` rows are fetched (`fetchmany`), `max_rows` kept,
    and `truncated` set when there were more.
    """
    if not cursor.description:
        count = cursor.rowcount if isinstance(cursor.rowcount, int) else 0
        return ExecResult(status="ok", row_count=max(count, 0))
    columns = [str(col[0]) for col in cursor.description]
    fetched = list(cursor.fetchmany(max_rows + 1)) if max_rows >= 0 else []
    return capped(columns, fetched, max_rows, convert)


def capped(
    columns: list[str], fetched: list[Any], max_rows: int, convert: CellConverter = json_safe
) -> ExecResult:
    """An ok result of `fetched` rows (at most `max_rows + 1`): `max_rows` kept, JSON-safe."""
    rows = [[convert(cell) for cell in row] for row in fetched[:max_rows]]
    return ExecResult(
        status="ok",
        columns=columns,
        rows=rows,
        row_count=len(rows),
        truncated=len(fetched) > max_rows,
    )


def shift_position(result: ExecResult, offset: int) -> ExecResult:
    """`result` with its error position counted from `offset` characters earlier."""
    if result.error_position is None or offset == 0:
        return result
    return result.model_copy(update={"error_position": result.error_position + offset})
