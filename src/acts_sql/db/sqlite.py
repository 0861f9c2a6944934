"""The SQLite executor: read-only, with timeouts, row caps and scratch sessions.

Every text first passes the guard (`guard.admit`); text the guard cannot
parse is compiled with ``EXPLAIN`` (never run) so that SQLite's own syntax
error comes back, and is otherwise blocked. The user's file is opened with
``mode=ro``, so SQLite itself refuses every write to it. An authorizer closes
the remaining doors of a read-only connection: ``ATTACH`` and ``VACUUM
INTO`` (which create files), pragmas that change connection settings, and, on
the shared connection, TEMP objects that would shadow the user's tables for
later statements. Scratch sessions get
their own connection, where TEMP stand-in tables are allowed and vanish when
the session closes.

With ``allow_writes=True`` the executor works on a private copy of the file
(`sandbox.FileCopy`, made with SQLite's backup API), opened read-write and
deleted at close; the user's file is never opened for writing.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

from acts_sql.db.cells import MAX_HEX_BLOB
from acts_sql.db.cells import json_safe as _json_safe
from acts_sql.db.executor import DEFAULT_MAX_ROWS, ColumnInfo, TableInfo, statement_timeout
from acts_sql.db.guard import admit
from acts_sql.db.result import ExecResult
from acts_sql.db.sandbox import FileCopy, sqlite_backup
from acts_sql.db.sqlite_errors import classify, failure_result
from acts_sql.db.statements import split_statements
from acts_sql.sql.safety_rules.tables import ARGUMENT_READ_PRAGMAS

REFLECT_TIMEOUT_S = 10.0
_PROGRESS_STEPS = 1000
_MAX_HEX_BLOB = MAX_HEX_BLOB

_TEMP_ACTIONS = {
    sqlite3.SQLITE_CREATE_TEMP_INDEX,
    sqlite3.SQLITE_CREATE_TEMP_TABLE,
    sqlite3.SQLITE_CREATE_TEMP_TRIGGER,
    sqlite3.SQLITE_CREATE_TEMP_VIEW,
    sqlite3.SQLITE_DROP_TEMP_INDEX,
    sqlite3.SQLITE_DROP_TEMP_TABLE,
    sqlite3.SQLITE_DROP_TEMP_TRIGGER,
    sqlite3.SQLITE_DROP_TEMP_VIEW,
    sqlite3.SQLITE_CREATE_VTABLE,
    sqlite3.SQLITE_DROP_VTABLE,
}
_ROW_WRITES = {sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE}


def quote_identifier(name: str) -> str:
    """``name`` as a double-quoted SQLite identifier."""
    return '"' + name.replace('"', '""') + '"'


def json_safe(value: Any) -> Any:
    """A cell value that ``json.dumps`` accepts and a prompt can show."""
    return _json_safe(value)


class _Guard:
    """SQLite authorizer: refuses what a read-only connection would still allow."""

    def __init__(self, *, allow_temp: bool) -> None:
        self.allow_temp = allow_temp
        self.denied: str | None = None

    def __call__(
        self, action: int, arg1: str | None, arg2: str | None, db: str | None, _src: str | None
    ) -> int:
        reason = self._check(action, arg1, arg2, db)
        if reason is None:
            return sqlite3.SQLITE_OK
        self.denied = reason
        return sqlite3.SQLITE_DENY

    def _check(self, action: int, arg1: str | None, arg2: str | None, db: str | None) -> str | None:
        if action in (sqlite3.SQLITE_ATTACH, sqlite3.SQLITE_DETACH):
            return "ATTACH, DETACH and VACUUM INTO are not allowed"
        setting = action == sqlite3.SQLITE_PRAGMA and arg2 is not None
        if setting and (arg1 or "").lower() not in ARGUMENT_READ_PRAGMAS:
            return f"PRAGMA {arg1} cannot be set here"
        if self.allow_temp:
            return None
        if action in _TEMP_ACTIONS or (action in _ROW_WRITES and db == "temp"):
            return "temporary objects are not allowed on the shared connection"
        return None


def _connect(
    path: Path, *, allow_temp: bool, writable: bool = False
) -> tuple[sqlite3.Connection, _Guard]:
    uri = path.resolve().as_uri() + ("?mode=rw" if writable else "?mode=ro")
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
    conn.text_factory = lambda raw: raw.decode("utf-8", "replace")
    guard = _Guard(allow_temp=allow_temp)
    conn.set_authorizer(guard)
    return conn, guard


def _run_one(
    conn: sqlite3.Connection, guard: _Guard, statement: str, max_rows: int, timeout: float
) -> ExecResult:
    """Run one statement under a deadline; fetch at most ``max_rows`` rows."""
    started = time.monotonic()
    deadline = started + timeout
    guard.denied = None
    try:
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_STEPS)
        cursor = conn.execute(statement)
        if cursor.description is None:
            affected = max(cursor.rowcount, 0)
            return ExecResult(status="ok", row_count=affected, seconds=_since(started))
        columns = [str(col[0]) for col in cursor.description]
        fetched = cursor.fetchmany(max_rows + 1)
        cursor.close()
    except (sqlite3.Error, ValueError, OverflowError, MemoryError) as exc:
        failure = classify(exc, denied=guard.denied, timeout=timeout)
        return failure_result(failure, _since(started))
    finally:
        with suppress(sqlite3.Error):
            conn.set_progress_handler(None, 0)
    truncated = len(fetched) > max_rows
    rows = [[json_safe(cell) for cell in row] for row in fetched[:max_rows]]
    return ExecResult(
        status="ok",
        columns=columns,
        rows=rows,
        row_count=len(rows),
        truncated=truncated,
        seconds=_since(started),
    )


def _run_script(
    conn: sqlite3.Connection,
    guard: _Guard,
    sql: str,
    max_rows: int | None,
    timeout: float | None,
    *,
    allow_writes: bool = False,
    stand_ins: frozenset[str] = frozenset(),
    isolate: bool = False,
) -> ExecResult:
    """Admit the text, then run each statement in order; the last result, or the first failure.

    `isolate`: inside ``BEGIN`` ... ``ROLLBACK``, so that nothing the statements
    did stays (SQLite's DDL is transactional too). The connection runs with
    ``isolation_level=None``, so without it every statement commits at once.
    """
    started = time.monotonic()
    statements = split_statements(sql)
    if not statements:
        return ExecResult(status="error", error="no SQL statement to execute", error_kind="syntax")
    admission = admit(sql, "sqlite", allow_writes=allow_writes, stand_ins=stand_ins)
    if not admission.allowed:
        result = admission.blocked()
        if admission.probe:
            result = _probe(conn, guard, statements) or result
        return result.model_copy(update={"seconds": _since(started)})
    cap = DEFAULT_MAX_ROWS if max_rows is None else max(max_rows, 0)
    result = ExecResult(status="ok")
    try:
        if isolate:
            opened = _run_one(conn, guard, "BEGIN", 0, REFLECT_TIMEOUT_S)
            if not opened.ok:
                return opened.model_copy(update={"seconds": _since(started)})
        for statement in statements:
            limit = statement_timeout(statement, timeout)
            result = _run_one(conn, guard, statement, cap, limit)
            if not result.ok:
                break
    finally:  # an isolated batch's transaction, or one a failed statement left open
        with suppress(sqlite3.Error):
            if conn.in_transaction:
                conn.rollback()
    return result.model_copy(update={"seconds": _since(started)})


def _probe(conn: sqlite3.Connection, guard: _Guard, statements: list[str]) -> ExecResult | None:
    """Compile each statement with EXPLAIN (never run): SQLite's first error, or None."""
    for statement in statements:
        failure = _run_one(conn, guard, f"EXPLAIN {statement}", 0, 10.0)
        if not failure.ok:
            return failure if failure.status == "error" else None
    return None


def _since(started: float) -> float:
    return round(time.monotonic() - started, 6)


class SQLiteScratchSession:
    """A private read-only connection where empty TEMP stand-in tables can live."""

    def __init__(self, path: Path) -> None:
        self._conn, self._guard = _connect(path, allow_temp=True)
        self._lock = threading.Lock()
        self._stand_ins: set[str] = set()

    def create_stand_in(self, name: str, columns: list[str]) -> ExecResult:
        """Create an empty TEMP table ``name`` with untyped ``columns``.

        It shadows a same-named table of the user's database in this session.
        """
        if not columns:
            return ExecResult(
                status="error", error=f"stand-in {name!r} needs columns", error_kind="other"
            )
        cols = ", ".join(quote_identifier(col) for col in columns)
        with self._lock:  # acts-sql's own statement: not through the guard
            made = _run_one(
                self._conn,
                self._guard,
                f"CREATE TEMP TABLE {quote_identifier(name)} ({cols})",
                0,
                REFLECT_TIMEOUT_S,
            )
            if made.ok:
                self._stand_ins.add(name)
            return made

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout: float | None = None
    ) -> ExecResult:
        """Run ``sql`` in this session (as :meth:`SQLiteExecutor.execute`; the
        stand-ins, and only they, may be written)."""
        with self._lock:
            return _run_script(
                self._conn,
                self._guard,
                sql,
                max_rows,
                timeout,
                stand_ins=frozenset(self._stand_ins),
            )

    def close(self) -> None:
        """Close the connection; every TEMP object goes with it."""
        with self._lock:
            self._conn.close()


class SQLiteExecutor:
    """Runs statements on one SQLite file that it can never write."""

    dialect = "sqlite"

    def __init__(
        self,
        path: str | Path,
        *,
        timeout: float | None = None,
        max_rows: int | None = None,
        allow_writes: bool = False,
    ) -> None:
        self.source = Path(path)
        self.default_timeout = timeout
        """Per-statement timeout in seconds; None: 60 s (15 s for WITH RECURSIVE)."""
        self.default_max_rows = max_rows
        self.allow_writes = allow_writes
        self._copy = FileCopy(self.source, sqlite_backup) if allow_writes else None
        self.path = self._copy.path if self._copy is not None else self.source
        """The file statements run on: the user's, or the sandbox copy."""
        try:
            self._conn, self._guard = _connect(
                self.path, allow_temp=allow_writes, writable=allow_writes
            )
        except Exception:
            if self._copy is not None:
                self._copy.drop()
            raise
        self._lock = threading.RLock()

    def execute(
        self,
        sql: str,
        *,
        max_rows: int | None = None,
        timeout: float | None = None,
        isolate: bool = False,
    ) -> ExecResult:
        """Run one or more statements; never raises for SQL failures.

        Each statement gets ``timeout`` seconds (default 60, 15 for ``WITH
        RECURSIVE``); at most ``max_rows`` rows are returned (default 10,000),
        with ``truncated`` set when there were more. ``isolate`` (with writes
        allowed): everything runs in one transaction that is rolled back, so
        the copy is left as it was; read-only, nothing could change anyway.
        """
        rows = self.default_max_rows if max_rows is None else max_rows
        limit = self.default_timeout if timeout is None else timeout
        with self._lock:
            return _run_script(
                self._conn,
                self._guard,
                sql,
                rows,
                limit,
                allow_writes=self.allow_writes,
                isolate=isolate and self.allow_writes,
            )

    @contextmanager
    def scratch(self) -> Iterator[SQLiteScratchSession]:
        """A scratch session on its own connection, closed (and emptied) on exit."""
        session = SQLiteScratchSession(self.path)
        try:
            yield session
        finally:
            session.close()

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]:
        """Tables, then views: DDL, columns, row count and the first rows."""
        listing = (
            "SELECT type, name, sql FROM sqlite_master WHERE type IN ('table', 'view') "
            "AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY type = 'view', rowid"
        )
        with self._lock:
            found = self._query(listing)
            return [self._describe(kind, name, ddl, sample_rows) for kind, name, ddl in found.rows]

    def _describe(self, kind: str, name: str, ddl: str | None, sample_rows: int) -> TableInfo:
        ident = quote_identifier(name)
        pragma = self._query(f"PRAGMA table_info({ident})")
        columns = [
            ColumnInfo(name=col[1], type=col[2] or "", nullable=not col[3], primary_key=col[5] > 0)
            for col in pragma.rows
        ]
        if not ddl:
            ddl = f"CREATE TABLE {ident} ({', '.join(quote_identifier(c.name) for c in columns)})"
        count = None
        if kind == "table":
            counted = self._query(f"SELECT count(*) FROM {ident}")
            count = counted.rows[0][0] if counted.ok and counted.rows else None
        sample = self._query(f"SELECT * FROM {ident} LIMIT {max(sample_rows, 0)}")
        return TableInfo(
            name=name, ddl=ddl, columns=columns, sample_rows=sample.rows, row_count=count
        )

    def run_internal(self, sql: str) -> ExecResult:
        """Run acts-sql's own read query (no guard; the file is read-only anyway)."""
        with self._lock:
            return self._query(sql)

    def _query(self, sql: str) -> ExecResult:
        return _run_one(self._conn, self._guard, sql, DEFAULT_MAX_ROWS, REFLECT_TIMEOUT_S)

    def close(self) -> None:
        """Close the shared connection (scratch sessions close themselves); drop a copy."""
        with self._lock:
            self._conn.close()
            if self._copy is not None:
                self._copy.drop()
                self._copy = None

    def __enter__(self) -> SQLiteExecutor:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()
