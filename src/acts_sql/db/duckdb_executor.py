"""The DuckDB executor: read-only, with timeouts, row caps and scratch sessions.

Defence in depth, outermost first:

1. the read-only guard (`acts_sql.sql.safety`) on the whole text;
2. DuckDB's own parser: every statement it finds must be of a read type
   (SELECT, EXPLAIN, a guard-approved PRAGMA); each runs on its own;
3. the file is opened with ``read_only=True``, and with
   ``enable_external_access = false`` so that no statement can read or write
   other files, attach databases or load extensions;
4. the configuration is locked (``lock_configuration = true``, on every
   connection, also the copy's with writes allowed, and inherited by the scratch
   cursors): no ``SET``, ``RESET``, settings ``PRAGMA`` or settings-changing
   function (``enable_logging``, ``enable_profiling``, ...) can change a setting,
   so none can undo the rules above, print to the terminal or abort the process
   (``enable_logging`` with a file sink aborted DuckDB 2.0.1). DuckDB's refusal
   is a ``blocked`` result.

With ``allow_writes=True`` statements run on a copy of the file in a private
temporary directory (`sandbox.FileCopy`), deleted by :meth:`DuckDBExecutor.close`; the guard then
lets DML and DDL through but nothing that reaches outside the copy. With
``isolate=True`` a call runs in a transaction that is rolled back, so the copy
is left as it was; DuckDB does not roll sequences back, so those the call moved
are then set back with ``setval`` (`duckdb_sequences.SequenceKeeper`).

Timeouts: a timer thread calls the connection's ``interrupt()`` at the
deadline. Scratch sessions are cursors (their own DuckDB connections to the
same database): TEMP stand-in tables live there, shadow nothing elsewhere and
vanish when the session closes.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb

from acts_sql.db.base import REFLECT_TIMEOUT_S, BaseExecutor, fetch_result, needs_columns, since
from acts_sql.db.duckdb_sequences import SequenceKeeper
from acts_sql.db.executor import TableInfo
from acts_sql.db.result import (
    ErrorKind,
    ExecResult,
    blocked_result,
    timeout_result,
    write_blocked_result,
)
from acts_sql.db.sandbox import FileCopy
from acts_sql.db.statements import Located, located
from acts_sql.db.url import has_scheme, parse_url
from acts_sql.errors import DatabaseOpenError
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.safety import PERMIT_ON_COPY

DIALECT = get_dialect("duckdb")
DUCKDB_MAGIC = b"DUCK"
"""Bytes 8-11 of every DuckDB database file."""

CONNECT_CONFIG: dict[str, Any] = {
    "enable_external_access": False,
    "autoinstall_known_extensions": False,
    "autoload_known_extensions": False,
    "allow_community_extensions": False,
    "allow_unsigned_extensions": False,
    "allow_persistent_secrets": False,
    "lock_configuration": True,
}
"""Settings of every connection: no files beyond the database, no extensions, no
secrets kept on disk, and no setting can be changed afterwards (`lock_configuration`)."""

_LOCKED = "the configuration has been locked"
"""DuckDB's message when a statement tries to change a locked setting."""

READ_STATEMENT_TYPES = frozenset({"SELECT", "EXPLAIN", "PRAGMA"})
"""DuckDB statement types that may run read-only (PRAGMA only after the guard
allowed it, i.e. a known read pragma)."""


# ------------------------------------------------------------------ errors

_TYPE_BINDER = re.compile(
    r"No function matches|Could not choose a best candidate|Cannot compare|Cannot mix"
    r"|implicitly cast|type mismatch|Cannot (apply|use)",
    re.IGNORECASE,
)
_GROUPING = re.compile(r"must appear in the GROUP BY|aggregate function", re.IGNORECASE)

_KINDS: tuple[tuple[str, ErrorKind], ...] = (
    ("ParserException", "syntax"),
    ("SyntaxException", "syntax"),
    ("CatalogException", "schema"),
    ("BinderException", "schema"),
    ("DependencyException", "schema"),
    ("ConversionException", "type"),
    ("TypeMismatchException", "type"),
    ("InvalidTypeException", "type"),
    ("ConnectionException", "other"),
)
"""DuckDB exception class -> error kind (first match along the class's MRO)."""

_LINE = re.compile(r"^LINE (\d+): (.*)$", re.MULTILINE)


def classify(exc: BaseException, *, timeout: float, statement: str = "") -> ExecResult:
    """The typed result of an exception raised while running `statement`."""
    message = str(exc).strip() or type(exc).__name__
    names = [cls.__name__ for cls in type(exc).__mro__]
    code = type(exc).__name__
    if "InterruptException" in names:
        return timeout_result(timeout, code)
    if "PermissionException" in names:
        return blocked_result(f"file and extension access is disabled ({message})")
    if "InvalidInputException" in names and _LOCKED in message:
        return blocked_result(f"changing DuckDB settings is not allowed ({message})")
    if "InvalidInputException" in names and "read-only mode" in message:
        return write_blocked_result(code)
    if not isinstance(exc, duckdb.Error):
        return ExecResult(status="error", error=message, error_kind="other", error_code=code)
    kind: ErrorKind = "runtime"
    for name, mapped in _KINDS:
        if name in names:
            kind = mapped
            break
    if "BinderException" in names and _TYPE_BINDER.search(message):
        kind = "type"
    elif "BinderException" in names and _GROUPING.search(message):
        kind = "runtime"
    return ExecResult(
        status="error",
        error=message,
        error_kind=kind,
        error_code=code,
        error_position=caret_position(message, statement),
    )


def caret_position(message: str, statement: str) -> int | None:
    """1-based character position in `statement` of the caret DuckDB draws
    under `LINE n: ...`, when the shown line is the statement's own."""
    match = _LINE.search(message)
    if match is None:
        return None
    line_no, shown = int(match.group(1)), match.group(2)
    rest = message[match.end() :].split("\n")
    caret_line = rest[1] if len(rest) > 1 else ""
    column = caret_line.find("^") - len(f"LINE {line_no}: ")
    lines = statement.split("\n")
    if column < 0 or line_no > len(lines) or not lines[line_no - 1].startswith(shown):
        return None
    return sum(len(line) + 1 for line in lines[: line_no - 1]) + column + 1


# ------------------------------------------------------------------ running


class _Deadline:
    """Interrupts a DuckDB connection if it is still running at the deadline."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, seconds: float) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self._active = True
        self.fired = False
        self._timer = threading.Timer(max(seconds, 0.0), self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        with self._lock:
            if self._active:
                self.fired = True
                self._conn.interrupt()

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        with self._lock:
            self._active = False
        self._timer.cancel()


def run_statement(
    conn: duckdb.DuckDBPyConnection, statement: str, max_rows: int, timeout: float
) -> ExecResult:
    """Run one statement under a deadline; fetch at most `max_rows` rows."""
    started = time.monotonic()
    try:
        with _Deadline(conn, timeout):
            conn.execute(statement)
            result = fetch_result(conn, max_rows)
    except Exception as exc:  # every failure becomes a typed result
        result = classify(exc, timeout=timeout, statement=statement)
    return result.model_copy(update={"seconds": since(started)})


# ------------------------------------------------------------------ opening


def check_duckdb_file(path: Path) -> None:
    """Raise DatabaseOpenError unless `path` is a readable DuckDB database file."""
    if not path.exists():
        raise DatabaseOpenError(f"database file not found: {path}", path=str(path))
    if path.is_dir():
        raise DatabaseOpenError(f"database path is a directory, not a file: {path}", path=str(path))
    try:
        with path.open("rb") as handle:
            header = handle.read(12)
    except OSError as exc:
        raise DatabaseOpenError(f"cannot read database file {path}: {exc}", path=str(path)) from exc
    if header[8:12] != DUCKDB_MAGIC:
        raise DatabaseOpenError(f"not a DuckDB database file: {path}", path=str(path))


def _connect(path: Path, *, read_only: bool) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path), read_only=read_only, config=dict(CONNECT_CONFIG))
    except duckdb.Error as exc:
        raise DatabaseOpenError(f"cannot open DuckDB database {path}: {exc}") from exc


class DuckDBExecutor(BaseExecutor):
    """Runs statements on one DuckDB file that it never writes."""

    spec = DIALECT
    permit_when_writing = PERMIT_ON_COPY
    _isolating = False
    """The open batch runs in a transaction that `_end` rolls back."""
    _sequences: SequenceKeeper | None = None
    """With writes allowed: the copy's sequences, set back after each isolated batch."""

    def __init__(
        self,
        path: str | Path,
        *,
        timeout: float | None = None,
        max_rows: int | None = None,
        allow_writes: bool = False,
    ) -> None:
        super().__init__(timeout=timeout, max_rows=max_rows, allow_writes=allow_writes)
        self.path = Path(path)
        check_duckdb_file(self.path)
        self._copy = FileCopy(self.path) if allow_writes else None
        target = self._copy.path if self._copy is not None else self.path
        self.database_path = target
        """The file statements run on: the user's, or the throw-away copy."""
        try:
            self._conn = _connect(target, read_only=not allow_writes)
        except DatabaseOpenError:
            self._drop_copy()
            raise
        if allow_writes:
            self._sequences = SequenceKeeper()
            self._sequences.note(self._conn)

    def _run_batch(
        self, sql: str, cap: int, limit: float | None, *, isolating: bool = False
    ) -> ExecResult:
        """The batch; on the copy, then the sequences: an isolated batch's are set back,
        a kept batch's are remembered where they now stand."""
        result = super()._run_batch(sql, cap, limit, isolating=isolating)
        if self._sequences is not None:
            if isolating:
                self._sequences.restore(self._conn)
            else:
                self._sequences.note(self._conn)
        return result

    # ------------------------------------------------------------ hooks

    def _split(self, sql: str) -> Located | ExecResult:
        """DuckDB's own parser splits; read-only, every statement must be of a read type."""
        try:
            statements = self._conn.extract_statements(sql)
        except duckdb.Error as exc:
            return classify(exc, timeout=0.0, statement=sql)
        if not self.allow_writes:
            for statement in statements:
                kind = statement.type.name
                if kind not in READ_STATEMENT_TYPES:
                    return blocked_result(
                        f"writes are not allowed: DuckDB reads a {kind} statement"
                    )
        return located(sql, [stmt.query.strip().rstrip(";").strip() for stmt in statements])

    def _probe_pieces(self, sql: str) -> Located:
        return [(0, sql)]

    def _probe_statement(self, statement: str) -> ExecResult | None:
        """DuckDB's own syntax error (its parser never executes anything), or None."""
        try:
            self._conn.extract_statements(statement)
        except duckdb.Error as exc:
            return classify(exc, timeout=0.0, statement=statement)
        return None

    def _begin(
        self, *, read_only: bool | None = None, isolating: bool = False
    ) -> ExecResult | None:
        """`isolating`: inside BEGIN TRANSACTION ... ROLLBACK, so nothing stays (DuckDB's DDL
        is transactional), except sequences that `nextval` advanced: DuckDB does not roll
        them back and has no `setval`."""
        self._isolating = isolating
        if not isolating:
            return None
        opened = self._run_statement("BEGIN TRANSACTION", 0, REFLECT_TIMEOUT_S)
        return None if opened.ok else opened

    def _end(self) -> None:
        if self._isolating:
            self._isolating = False
            with suppress(duckdb.Error):
                self._conn.execute("ROLLBACK")

    def _run_statement(self, statement: str, max_rows: int, timeout: float) -> ExecResult:
        return run_statement(self._conn, statement, max_rows, timeout)

    def _disconnect(self) -> None:
        with suppress(duckdb.Error):
            self._conn.close()

    # ------------------------------------------------------------ scratch, reflection

    @contextmanager
    def scratch(self) -> Iterator[DuckDBScratchSession]:
        """A scratch session on its own cursor, closed (and emptied) on exit."""
        with self._lock:
            cursor = self._conn.cursor()
        session = DuckDBScratchSession(cursor, self)
        try:
            yield session
        finally:
            session.close()

    def reflect(self, sample_rows: int = 3) -> list[TableInfo]:
        """Tables, then views: columns, keys, size and first rows, with
        DuckDB's own CREATE statement as the DDL where it keeps one."""
        tables = super().reflect(sample_rows)
        own = self._engine_ddl()
        return [t.model_copy(update={"ddl": own.get(t.name, t.ddl)}) for t in tables]

    def _engine_ddl(self) -> dict[str, str]:
        """DuckDB's CREATE statements, by the name prompts use (`s.t` outside `main`)."""
        listing = self.run_internal(
            "SELECT schema_name, table_name, sql FROM duckdb_tables() "
            "WHERE database_name = current_database() "
            "UNION ALL SELECT schema_name, view_name, sql FROM duckdb_views() "
            "WHERE database_name = current_database() AND NOT internal"
        )
        return {
            (name if schema == DIALECT.default_schema else f"{schema}.{name}"): str(sql)
            for schema, name, sql in listing.rows
            if sql
        }


class DuckDBScratchSession(DuckDBExecutor):
    """A private cursor (its own DuckDB connection to the same database) where empty
    TEMP stand-in tables can live; statements run with the executor's rules."""

    def __init__(self, conn: duckdb.DuckDBPyConnection, executor: DuckDBExecutor) -> None:
        BaseExecutor.__init__(
            self,
            timeout=executor.timeout,
            max_rows=executor.max_rows,
            allow_writes=executor.allow_writes,
        )
        self._conn = conn

    def create_stand_in(self, name: str, columns: list[str]) -> ExecResult:
        """An empty TEMP table `name`; its columns have DuckDB's NULL type,
        which casts implicitly to anything (no false type errors)."""
        if not columns:
            return needs_columns(name)
        q = DIALECT.quote_identifier
        cols = ", ".join(f'{q(col)} "NULL"' for col in columns)
        with self._lock:
            return self._run_statement(
                f"CREATE TEMP TABLE {q(name)} ({cols})", 0, REFLECT_TIMEOUT_S
            )


def open_url(
    url: str,
    *,
    timeout: float | None,
    max_rows: int | None,
    allow_writes: bool = False,
) -> DuckDBExecutor:
    """An executor for `duckdb:///relative.duckdb`, `duckdb:////abs.duckdb` or a file path."""
    if not has_scheme(url):
        path = url.strip()
    else:
        parsed = parse_url(url)
        if parsed.dialect != "duckdb":
            raise DatabaseOpenError(f"not a DuckDB URL: {parsed.redacted()}", url=parsed.redacted())
        path = parsed.database or ""
    if not path:
        raise DatabaseOpenError(
            "a DuckDB URL needs a file (duckdb:///file.duckdb); an in-memory database "
            "has nothing to correct against",
            url=url,
        )
    return DuckDBExecutor(
        Path(path).expanduser(), timeout=timeout, max_rows=max_rows, allow_writes=allow_writes
    )
