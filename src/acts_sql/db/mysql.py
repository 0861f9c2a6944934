"""The MySQL / MariaDB executor (PyMySQL).

Read-only by default: the guard (`guard.admit`) decides first; the session is
`SET SESSION TRANSACTION READ ONLY`; every batch runs inside
`START TRANSACTION READ ONLY` and is rolled back. PyMySQL never sets the
multi-statement flag, so the server itself refuses a second statement hidden
in one call. Rows are read unbuffered and at most max_rows + 1 are fetched;
when more remain, the connection is dropped (the server stops the query) and
reopened. Timeouts: `max_statement_time` on MariaDB, `max_execution_time` on
MySQL (SELECT only), from the dialect's declaration.

With `allow_writes=True` the executor works on a scratch database copied from
the original (`sandbox.MySQLCopy`), dropped at close. MySQL has no
transactional DDL, so there is no rolled-back-transaction fallback.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from acts_sql.db.cells import json_safe_row
from acts_sql.db.executor import DEFAULT_MAX_ROWS
from acts_sql.db.guard import caret_context
from acts_sql.db.guard import located_statements as _located
from acts_sql.db.result import ErrorKind, ExecResult, timeout_result, write_blocked_result
from acts_sql.db.server import ServerExecutor
from acts_sql.db.url import DatabaseURL, parse_url
from acts_sql.errors import DatabaseOpenError
from acts_sql.sql.dialects import get_dialect

try:  # an optional dependency: acts-sql[mysql]
    import pymysql
    import pymysql.cursors
except ImportError:  # pragma: no cover - exercised only without the extra
    pymysql = None  # type: ignore[assignment]

CONNECT_TIMEOUT_S = 10
PROBE_NAME = "acts_sql_probe"
TIMEOUT_ERRNOS = frozenset({1969, 3024, 1317, 1028})
READ_ONLY_ERRNOS = frozenset({1792, 1290, 1836})
UNKNOWN_VARIABLE = 1193
NOT_PREPARABLE = 1295
_SYNTAX = frozenset({1064, 1149, 1327})
_SCHEMA = frozenset({1054, 1146, 1049, 1052, 1305, 1109, 1051, 1050, 1060, 1091, 1630, 1356})
_TYPE = frozenset({1241, 4078, 4079, 1366, 1292, 1267, 1270, 1271, 1416, 3140, 4038})
_NEAR = re.compile(r"near '(.*)' at line (\d+)", re.DOTALL)


def _require_driver() -> Any:
    if pymysql is None:
        raise DatabaseOpenError(
            "MySQL/MariaDB support needs PyMySQL: pip install 'acts-sql[mysql]'"
        )
    return pymysql


def connect(url: DatabaseURL, *, database: str | None = None, unbuffered: bool = True) -> Any:
    """An autocommit PyMySQL connection; DatabaseOpenError with a one-line reason."""
    driver = _require_driver()
    name = database if database is not None else url.database
    params: dict[str, Any] = {
        "host": url.host or "localhost",
        "port": url.port or 3306,
        "user": url.username or "",
        "password": url.password or "",
        "database": name,
        "connect_timeout": CONNECT_TIMEOUT_S,
        "autocommit": True,
        "charset": url.query.get("charset", "utf8mb4"),
        "client_flag": 0,  # never CLIENT.MULTI_STATEMENTS
        "cursorclass": driver.cursors.SSCursor if unbuffered else driver.cursors.Cursor,
    }
    if "unix_socket" in url.query:
        params["unix_socket"] = url.query["unix_socket"]
    target = url.model_copy(update={"database": name}).describe()
    try:
        return driver.connect(**params)
    except driver.MySQLError as exc:
        reason = exc.args[1] if len(exc.args) > 1 else str(exc)
        reason = str(reason).splitlines()[0] if str(reason) else type(exc).__name__
        if url.password:
            reason = reason.replace(url.password, "***")
        raise DatabaseOpenError(
            f"cannot connect to MySQL/MariaDB at {target}: {reason}", url=url.redacted()
        ) from None


def kind_of(errno: int) -> ErrorKind:
    if errno in _SYNTAX:
        return "syntax"
    if errno in _SCHEMA:
        return "schema"
    if errno in _TYPE:
        return "type"
    return "runtime"


def failure_result(exc: BaseException, statement: str, *, timeout: float) -> ExecResult:
    """The typed result of a PyMySQL error raised by `statement`."""
    errno = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    message = str(exc.args[1] if len(exc.args) > 1 else exc).strip()
    code = str(errno) if errno is not None else None
    if errno in TIMEOUT_ERRNOS:
        return timeout_result(timeout, code)
    if errno in READ_ONLY_ERRNOS:
        return write_blocked_result(code)
    position = error_position(message, statement)
    text = message if position is None else f"{message}\n{caret_context(statement, position)}"
    return ExecResult(
        status="error",
        error=text,
        error_kind=kind_of(errno) if errno is not None else "other",
        error_code=code,
        error_position=position,
    )


def error_position(message: str, statement: str) -> int | None:
    """1-based position of the text that `near '...' at line N` quotes, if found."""
    match = _NEAR.search(message)
    if match is None:
        return None
    near, line = match.group(1), int(match.group(2))
    lines = statement.split("\n")
    if not 1 <= line <= len(lines):
        return None
    start = sum(len(text) + 1 for text in lines[: line - 1])
    if not near:  # the error is at the end of the statement
        return len(statement.rstrip()) + 1
    found = statement.find(near[:40], start)
    return None if found < 0 else found + 1


def _discard(result_cursor: Any, conn: Any) -> None:
    """Stop reading an unbuffered result that has rows left: drop the connection.

    Reading the rest could take as long as the query; the server ends the
    query when the client is gone. PyMySQL would otherwise drain the rest when
    the result is garbage-collected, so its reader is switched off first.
    """
    result = getattr(result_cursor, "_result", None)
    if result is not None:
        result.unbuffered_active = False
    with suppress(Exception):
        conn._result = None
        conn._force_close()
    with suppress(Exception):
        result_cursor.connection = None


class MySQLExecutor(ServerExecutor):
    """Runs statements on one MySQL/MariaDB database that it never writes."""

    dialect_name = "mysql"

    def __init__(
        self,
        url: str | DatabaseURL,
        *,
        timeout: float | None = None,
        max_rows: int | None = None,
        allow_writes: bool = False,
    ) -> None:
        super().__init__(timeout=timeout, max_rows=max_rows, allow_writes=allow_writes)
        self.url = url if isinstance(url, DatabaseURL) else parse_url(url)
        if not self.url.database:
            raise DatabaseOpenError(
                f"a MySQL URL needs a database name: {self.url.redacted()}", url=self.url.redacted()
            )
        self._copy: Any = None
        self.database: str | None = self.url.database
        if allow_writes:
            from acts_sql.db.sandbox import MySQLCopy

            self._copy = MySQLCopy(connect(self.url, unbuffered=False), self.url.database)
            self.database = self._copy.name
        self._timeout_variant: int | None = None
        self._timeout_set: str | None = None
        self._conn: Any = None
        self._batch_read_only = False
        try:
            self._connect()
        except Exception:
            if self._copy is not None:
                self._copy.drop()
            raise
        conn: Any = self._conn
        self.server_version = str(conn.get_server_info())
        self.is_mariadb = "mariadb" in self.server_version.lower()

    # ------------------------------------------------------------ connection

    def _connect(self) -> None:
        conn = connect(self.url, database=self.database)
        if not self.allow_writes:
            with conn.cursor() as cursor:
                cursor.execute("SET SESSION TRANSACTION READ ONLY")
        self._conn = conn
        self._timeout_set = None

    def _alive(self) -> bool:
        return self._conn is not None and bool(getattr(self._conn, "open", False))

    def _begin_batch(self, read_only: bool | None = None) -> ExecResult | None:
        if not self._alive():
            try:
                self._connect()
            except DatabaseOpenError as exc:
                return ExecResult(status="error", error=str(exc), error_kind="other")
        self._batch_read_only = (not self.allow_writes) if read_only is None else read_only
        if self._batch_read_only:
            return self._simple("START TRANSACTION READ ONLY")
        return None

    def _end_batch(self) -> None:
        if self._batch_read_only and self._alive():
            self._simple("ROLLBACK")

    def _simple(self, sql: str, args: Any = None) -> ExecResult | None:
        """Run one of acts-sql's own statements; an error result if it fails."""
        driver = _require_driver()
        try:
            with self._conn.cursor() as cursor:
                cursor.execute(sql, args)
                if cursor.description is not None:
                    cursor.fetchall()
        except driver.MySQLError as exc:
            return failure_result(exc, sql, timeout=0)
        return None

    def _set_timeout(self, seconds: float) -> ExecResult | None:
        variants = get_dialect("mysql").timeout_statements(seconds)
        order = range(len(variants)) if self._timeout_variant is None else [self._timeout_variant]
        failure: ExecResult | None = None
        for index in order:
            if variants[index] == self._timeout_set:
                return None
            failure = self._simple(variants[index])
            if failure is None:
                self._timeout_variant, self._timeout_set = index, variants[index]
                return None
            if failure.error_code != str(UNKNOWN_VARIABLE):
                return failure
        return failure

    def _run_statement(self, statement: str, max_rows: int, timeout: float) -> ExecResult:
        driver = _require_driver()
        failure = self._set_timeout(timeout)
        if failure is not None:
            return failure
        cursor = self._conn.cursor()
        try:
            cursor.execute(statement)
            if cursor.description is None:
                return ExecResult(status="ok", row_count=max(cursor.rowcount, 0))
            columns = [str(col[0]) for col in cursor.description]
            fetched = list(cursor.fetchmany(max_rows + 1))
        except driver.MySQLError as exc:
            return failure_result(exc, statement, timeout=timeout)
        truncated = len(fetched) > max_rows
        if truncated:
            _discard(cursor, self._conn)
            self._reopen_after_discard()
        else:
            with suppress(Exception):
                cursor.close()
        rows = [json_safe_row(row) for row in fetched[:max_rows]]
        return ExecResult(
            status="ok", columns=columns, rows=rows, row_count=len(rows), truncated=truncated
        )

    def _reopen_after_discard(self) -> None:
        with suppress(DatabaseOpenError):
            self._connect()
            if self._batch_read_only:
                self._simple("START TRANSACTION READ ONLY")

    def _probe_statement(self, statement: str) -> ExecResult | None:
        return probe_statement(self._conn, statement) if self._alive() else None

    def _sandbox_database(self) -> str | None:
        return self.database

    def _close(self) -> None:
        with suppress(Exception):
            if self._conn is not None:
                self._conn.close()
        self._conn = None
        if self._copy is not None:
            self._copy.drop()
            self._copy = None

    # ------------------------------------------------------------ scratch

    @contextmanager
    def scratch(self) -> Iterator[MySQLScratchSession]:
        """A private connection for TEMPORARY stand-in tables, closed on exit."""
        session = MySQLScratchSession(self.url, self.database, self.default_max_rows)
        try:
            yield session
        finally:
            session.close()


def probe_statement(conn: Any, statement: str) -> ExecResult | None:
    """`PREPARE ... FROM '<text>'`: the server parses and resolves, never runs.

    Returns the server's error, or None when it parses (or cannot be prepared).
    """
    driver = _require_driver()
    try:
        with conn.cursor() as cursor:
            cursor.execute(f"PREPARE {PROBE_NAME} FROM %s", (statement,))
            cursor.execute(f"DEALLOCATE PREPARE {PROBE_NAME}")
    except driver.MySQLError as exc:
        errno = exc.args[0] if exc.args else None
        if errno == NOT_PREPARABLE:
            return None
        result = failure_result(exc, statement, timeout=0)
        return result if result.status == "error" else None
    return None


class MySQLScratchSession:
    """TEMPORARY stand-in tables on a private connection; they vanish with it.

    Statements run guarded, inside `START TRANSACTION READ ONLY` that is rolled
    back (MySQL allows TEMPORARY tables to be read there).
    """

    def __init__(
        self, url: DatabaseURL, database: str | None, max_rows: int = DEFAULT_MAX_ROWS
    ) -> None:
        self._executor = _ScratchConnection(url, database, max_rows)

    def create_stand_in(self, name: str, columns: list[str]) -> ExecResult:
        """Create an empty TEMPORARY table `name` (TEXT columns); it shadows `name`."""
        if not columns:
            return ExecResult(
                status="error", error=f"stand-in {name!r} needs columns", error_kind="other"
            )
        cols = ", ".join(f"{_quote(col)} TEXT" for col in columns)
        started = time.monotonic()
        failure = self._executor._simple(f"CREATE TEMPORARY TABLE {_quote(name)} ({cols})")
        if failure is None:
            self._executor.stand_ins.add(name)
        seconds = round(time.monotonic() - started, 6)
        return (failure or ExecResult(status="ok")).model_copy(update={"seconds": seconds})

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout: float | None = None
    ) -> ExecResult:
        return self._executor.execute(sql, max_rows=max_rows, timeout=timeout)

    def close(self) -> None:
        self._executor.close()


class _ScratchConnection(MySQLExecutor):
    """A read-only MySQLExecutor whose session may hold TEMPORARY tables."""

    def __init__(self, url: DatabaseURL, database: str | None, max_rows: int) -> None:
        ServerExecutor.__init__(self, max_rows=max_rows)
        self.url = url
        self.database = database
        self._copy = None
        self._timeout_variant = None
        self._timeout_set = None
        self._batch_read_only = False
        self.stand_ins: set[str] = set()
        self._conn = connect(url, database=database)

    def _stand_ins(self) -> frozenset[str]:
        return frozenset(self.stand_ins)

    def _connect(self) -> None:  # a lost scratch connection lost its stand-ins too
        raise DatabaseOpenError("the scratch session's connection was lost")

    def _reopen_after_discard(self) -> None:
        self._closed = True


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def located_statements(sql: str) -> list[tuple[int, str]]:
    return _located(sql, "mysql")


def open_url(
    url: str,
    *,
    timeout: float | None = None,
    max_rows: int | None = None,
    allow_writes: bool = False,
) -> MySQLExecutor:
    """The `connect.open_database` entry point for mysql:// and mariadb:// URLs."""
    return MySQLExecutor(url, timeout=timeout, max_rows=max_rows, allow_writes=allow_writes)


__all__ = [
    "MySQLExecutor",
    "MySQLScratchSession",
    "open_url",
]
