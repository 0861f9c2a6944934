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

import re
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from acts_sql.db.base import (
    REFLECT_TIMEOUT_S,
    BaseExecutor,
    capped,
    needs_columns,
    since,
)
from acts_sql.db.executor import ColumnInfo, TableInfo
from acts_sql.db.result import (
    ErrorKind,
    ExecResult,
    timeout_result,
    write_blocked_result,
)
from acts_sql.db.sandbox import FileCopy
from acts_sql.db.statements import Located, located, split_statements
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.safety_rules.tables import ARGUMENT_READ_PRAGMAS

DIALECT = get_dialect("sqlite")
_PROGRESS_STEPS = 1000

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


def _quote(name: str) -> str:
    """`name` as a double-quoted SQLite identifier."""
    return '"' + name.replace('"', '""') + '"'


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
    """Run one statement under a deadline; fetch at most `max_rows` rows."""
    started = time.monotonic()
    deadline = started + timeout
    guard.denied = None
    try:
        conn.set_progress_handler(lambda: int(time.monotonic() > deadline), _PROGRESS_STEPS)
        cursor = conn.execute(statement)
        if cursor.description is None:
            result = ExecResult(status="ok", row_count=max(cursor.rowcount, 0))
        else:
            columns = [str(col[0]) for col in cursor.description]
            fetched = cursor.fetchmany(max_rows + 1)
            cursor.close()
            result = capped(columns, fetched, max_rows)
    except (sqlite3.Error, ValueError, OverflowError, MemoryError) as exc:
        result = classify(exc, denied=guard.denied, timeout=timeout)
    finally:
        with suppress(sqlite3.Error):
            conn.set_progress_handler(None, 0)
    return result.model_copy(update={"seconds": since(started)})


# ------------------------------------------------------------------ errors

_SYNTAX = re.compile(r'near ".*": syntax error|incomplete input|unrecognized token', re.DOTALL)
_SCHEMA = re.compile(
    r"^(no such (column|table|function|module|collation sequence|window)"
    r"|ambiguous column name|.* has no column named )"
)
_TYPE = re.compile(r"datatype mismatch|wrong number of arguments to function")


def classify(exc: BaseException, *, denied: str | None = None, timeout: float = 0.0) -> ExecResult:
    """The typed result of an exception raised while running one statement.

    `denied` is the reason the authorizer gave, if it refused something;
    `timeout` is the limit that applied, used in the timeout message.
    """
    message = str(exc).strip() or type(exc).__name__
    code = getattr(exc, "sqlite_errorname", None)
    kind: ErrorKind = "runtime"
    if not isinstance(exc, sqlite3.Error):
        kind = "other"
    elif message == "interrupted" or code == "SQLITE_INTERRUPT":
        return timeout_result(timeout, code)
    elif "readonly database" in message or (code or "").startswith("SQLITE_READONLY"):
        return write_blocked_result(code)
    elif message.startswith("not authorized") or code == "SQLITE_AUTH":
        text = f"blocked: {denied or 'not authorized'}"
        return ExecResult(status="blocked", error=text, error_kind="blocked", error_code=code)
    elif _SYNTAX.search(message):
        kind = "syntax"
    elif _SCHEMA.search(message):
        kind = "schema"
    elif _TYPE.search(message):
        kind = "type"
    return ExecResult(status="error", error=message, error_kind=kind, error_code=code)


# ------------------------------------------------------------------ the executor


def sqlite_backup(source: Path, target: Path) -> None:
    """Copy a SQLite database with the online backup API (read-only on the source)."""
    src = sqlite3.connect(source.resolve().as_uri() + "?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
    finally:
        dst.close()
        src.close()


class SQLiteExecutor(BaseExecutor):
    """Runs statements on one SQLite file that it can never write."""

    spec = DIALECT

    def __init__(
        self,
        path: str | Path,
        *,
        timeout: float | None = None,
        max_rows: int | None = None,
        allow_writes: bool = False,
    ) -> None:
        super().__init__(timeout=timeout, max_rows=max_rows, allow_writes=allow_writes)
        self.source = Path(path)
        self._copy = FileCopy(self.source, sqlite_backup) if allow_writes else None
        self.path = self._copy.path if self._copy is not None else self.source
        """The file statements run on: the user's, or the sandbox copy."""
        try:
            self._conn, self._guard = _connect(
                self.path, allow_temp=allow_writes, writable=allow_writes
            )
        except Exception:
            self._drop_copy()
            raise

    # ------------------------------------------------------------ hooks

    def _split(self, sql: str) -> Located:
        return located(sql, split_statements(sql))

    _probe_pieces = _split

    def _begin(
        self, *, read_only: bool | None = None, isolating: bool = False
    ) -> ExecResult | None:
        """`isolating`: inside BEGIN ... ROLLBACK, so that nothing the statements did stays
        (SQLite's DDL is transactional too). The connection runs with
        `isolation_level=None`, so without it every statement commits at once."""
        if not isolating:
            return None
        opened = self._run_statement("BEGIN", 0, REFLECT_TIMEOUT_S)
        return None if opened.ok else opened

    def _end(self) -> None:
        """Roll back an isolated batch's transaction, or one a failed statement left open."""
        with suppress(sqlite3.Error):
            if self._conn.in_transaction:
                self._conn.rollback()

    def _run_statement(self, statement: str, max_rows: int, timeout: float) -> ExecResult:
        return _run_one(self._conn, self._guard, statement, max_rows, timeout)

    def _probe_statement(self, statement: str) -> ExecResult | None:
        """Compile the statement with EXPLAIN (never run): SQLite's error, or None."""
        failure = self._run_statement(f"EXPLAIN {statement}", 0, REFLECT_TIMEOUT_S)
        return None if failure.ok else failure

    def _disconnect(self) -> None:
        self._conn.close()

    # ------------------------------------------------------------ scratch, reflection

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
            found = self.run_internal(listing)
            return [self._describe(kind, name, ddl, sample_rows) for kind, name, ddl in found.rows]

    def _describe(self, kind: str, name: str, ddl: str | None, sample_rows: int) -> TableInfo:
        ident = _quote(name)
        pragma = self.run_internal(f"PRAGMA table_info({ident})")
        columns = [
            ColumnInfo(name=col[1], type=col[2] or "", nullable=not col[3], primary_key=col[5] > 0)
            for col in pragma.rows
        ]
        if not ddl:
            ddl = f"CREATE TABLE {ident} ({', '.join(_quote(c.name) for c in columns)})"
        count = None
        if kind == "table":
            counted = self.run_internal(f"SELECT count(*) FROM {ident}")
            count = counted.rows[0][0] if counted.ok and counted.rows else None
        sample = self.run_internal(f"SELECT * FROM {ident} LIMIT {max(sample_rows, 0)}")
        return TableInfo(
            name=name, ddl=ddl, columns=columns, sample_rows=sample.rows, row_count=count
        )


class SQLiteScratchSession(SQLiteExecutor):
    """A private read-only connection where empty TEMP stand-in tables can live;
    its statements may write the stand-ins, and only them."""

    def __init__(self, path: Path) -> None:
        BaseExecutor.__init__(self, allow_writes=False)
        self.source = self.path = path
        self._conn, self._guard = _connect(path, allow_temp=True)
        self.stand_ins: set[str] = set()

    def create_stand_in(self, name: str, columns: list[str]) -> ExecResult:
        """Create an empty TEMP table `name` with untyped `columns`.

        It shadows a same-named table of the user's database in this session.
        """
        if not columns:
            return needs_columns(name)
        cols = ", ".join(_quote(col) for col in columns)
        with self._lock:  # acts-sql's own statement: not through the guard
            made = self._run_statement(
                f"CREATE TEMP TABLE {_quote(name)} ({cols})", 0, REFLECT_TIMEOUT_S
            )
            if made.ok:
                self.stand_ins.add(name)
            return made

    def _stand_ins(self) -> frozenset[str]:
        return frozenset(self.stand_ins)
