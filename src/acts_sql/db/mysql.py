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
the original (`MySQLCopy`, below), dropped at close; copies whose owner
process died are swept first (`sweep_orphans`). When the copy cannot be made
(a lock held on a table for longer than `COPY_LOCK_WAIT_S`, no privilege to
create a database ...) the executor does not open: `DatabaseOpenError` says
why. Nothing ever runs on the original with writes allowed.

A statement the timeout stops is `timeout`: MariaDB ends some statements
(`BENCHMARK`) at `max_statement_time` without an error, as if they had
returned, so after a statement that ran for most of its limit the session's
`Max_statement_time_exceeded` counter says whether it was killed.

`execute(sql, isolate=True)` leaves the copy as it was. Reads and DML on
InnoDB tables run inside a transaction that is rolled back, and AUTO_INCREMENT
counters the batch moved are set back. Anything else (DDL, which commits
implicitly; CALL; DML while the copy holds a non-transactional table) runs on
a snapshot: a second copy made from the copy, dropped afterwards.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

from acts_sql.db.base import BaseExecutor, capped, needs_columns, shift_position, since
from acts_sql.db.executor import DEFAULT_MAX_ROWS, statement_timeout
from acts_sql.db.guard import admit, caret_context, located_statements
from acts_sql.db.result import ErrorKind, ExecResult, timeout_result, write_blocked_result
from acts_sql.db.sandbox import copy_name, is_orphan, register_cleanup, unregister_cleanup
from acts_sql.db.url import DatabaseURL, parse_url
from acts_sql.errors import DatabaseOpenError
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.safety import PERMIT_IN_ROLLBACK_NO_DDL, check_statement

try:  # an optional dependency: acts-sql[mysql]
    import pymysql
    import pymysql.cursors
except ImportError:  # pragma: no cover - exercised only without the extra
    pymysql = None  # type: ignore[assignment]

CONNECT_TIMEOUT_S = 10
DIALECT = get_dialect("mysql")
PROBE_NAME = "acts_sql_probe"
TIMEOUT_ERRNOS = frozenset({1969, 3024, 1317, 1028})
READ_ONLY_ERRNOS = frozenset({1792, 1290, 1836})
UNKNOWN_VARIABLE = 1193
NOT_PREPARABLE = 1295
_SYNTAX = frozenset({1064, 1149, 1327})
_SCHEMA = frozenset({1054, 1146, 1049, 1052, 1305, 1109, 1051, 1050, 1060, 1091, 1630, 1356})
_TYPE = frozenset({1241, 4078, 4079, 1366, 1292, 1267, 1270, 1271, 1416, 3140, 4038})
_NEAR = re.compile(r"near '(.*)' at line (\d+)", re.DOTALL)
TRANSACTIONAL_ENGINES = frozenset({"innodb"})
"""Storage engines whose rows a ROLLBACK restores (MyISAM, Aria, MEMORY ... keep writes)."""
_TABLE_STATE = (
    "SELECT table_name, engine, auto_increment FROM information_schema.tables "
    "WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'"
)
TableState = dict[str, tuple[str, int | None]]
"""Base tables of the current database: name -> (engine, next AUTO_INCREMENT value)."""
COPY_LOCK_WAIT_S = 10
"""How long making a copy waits for a lock another session holds on the original."""
_KILLS = (
    "SHOW SESSION STATUS WHERE Variable_name IN "
    "('Max_statement_time_exceeded', 'Max_execution_time_exceeded')"
)
"""How many of this session's statements the timeout stopped (MariaDB, MySQL)."""
NEAR_LIMIT = 0.9
"""A statement that ran this share of its limit may have been stopped silently."""


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


def _transactional(state: TableState) -> bool:
    """True when a ROLLBACK restores the rows of every table in `state`."""
    return all(engine in TRANSACTIONAL_ENGINES for engine, _ in state.values())


DRAIN_CHUNK = 5000


def _drain(cursor: Any, deadline: float) -> bool:
    """Read the rest of an unbuffered result before `deadline`; True when it ended.

    An isolated batch does this instead of dropping the connection, which would
    roll back what its earlier statements did (later ones build on it). Past the
    deadline (the statement's timeout) the connection is dropped after all.
    """
    try:
        while time.monotonic() < deadline:
            if not cursor.fetchmany(DRAIN_CHUNK):
                cursor.close()
                return True
    except Exception:
        return False
    return False


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


class MySQLExecutor(BaseExecutor):
    """Runs statements on one MySQL/MariaDB database that it never writes."""

    spec = DIALECT
    _conn: Any = None
    _timeout_variant: int | None = None
    """Which of the dialect's timeout statements the server knows, once found."""
    _timeout_set: str | None = None
    _kills: int | None = None
    """The session's count of statements the timeout stopped, as last read."""
    _batch_read_only = False
    _isolating = False
    _drain_cut_results = False

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
        self.database: str | None = self.url.database
        if allow_writes:
            admin = connect(self.url, unbuffered=False)
            sweep_with(admin)
            self._copy = MySQLCopy(admin, self.url.database)
            self.database = self._copy.name
        try:
            self._connect()
        except Exception:
            self._drop_copy()
            raise
        conn: Any = self._conn
        self.server_version = str(conn.get_server_info())
        self.is_mariadb = "mariadb" in self.server_version.lower()

    # ------------------------------------------------------------ connection

    def _connect(self) -> None:
        conn = connect(self.url, database=self.database)
        if not self.allow_writes:
            with conn.cursor() as cursor:
                for statement in DIALECT.read_only_session_sql:
                    cursor.execute(statement)
        else:  # MySQL 8 caches AUTO_INCREMENT in information_schema; MariaDB has no such cache
            with suppress(Exception), conn.cursor() as cursor:
                cursor.execute("SET SESSION information_schema_stats_expiry = 0")
        self._conn = conn
        self._timeout_set = None
        self._kills = self._kill_count()

    def _alive(self) -> bool:
        return self._conn is not None and bool(getattr(self._conn, "open", False))

    def _begin(
        self, *, read_only: bool | None = None, isolating: bool = False
    ) -> ExecResult | None:
        if not self._alive():
            try:
                self._connect()
            except DatabaseOpenError as exc:
                return ExecResult(status="error", error=str(exc), error_kind="other")
        self._batch_read_only = (not self.allow_writes) if read_only is None else read_only
        if self._batch_read_only:
            return self._simple(DIALECT.read_only_begin)
        return None

    def _end(self) -> None:
        if self._batch_read_only and self._alive():
            self._simple("ROLLBACK")

    # ------------------------------------------------------------ isolated batches

    def _run_isolated(self, sql: str, cap: int, limit: float | None, *, writes: bool) -> ExecResult:
        """Reads and InnoDB DML: a transaction that is rolled back, AUTO_INCREMENT
        counters set back. Anything else: on a snapshot of the copy (see the module doc)."""
        statements = located_statements(sql, DIALECT)
        if not statements:
            return ExecResult(
                status="error", error="no SQL statement to execute", error_kind="syntax"
            )
        dml_only = check_statement(sql, self.spec, permit=PERMIT_IN_ROLLBACK_NO_DDL).allowed
        if writes and not dml_only:
            return self._run_on_snapshot(sql, cap, limit)
        opened = self._begin()
        if opened is not None:
            return opened
        state = self._table_state() if writes else {}
        if state is None or not _transactional(state):
            return self._run_on_snapshot(sql, cap, limit)
        failure = self._simple("START TRANSACTION")
        if failure is not None:
            return failure
        self._isolating = True
        result = ExecResult(status="ok")
        try:
            for index, (offset, statement) in enumerate(statements):
                # a write batch's result cut short is read to its end while later statements
                # follow: dropping the connection would roll back what they build on
                self._drain_cut_results = writes and index + 1 < len(statements)
                result = self._run_statement(statement, cap, statement_timeout(statement, limit))
                if not result.ok:
                    result = shift_position(result, offset)
                    break
        finally:
            self._isolating = self._drain_cut_results = False
            self._roll_back()
        if state:
            self._restore_auto_increment(state)
        return result

    def _roll_back(self) -> None:
        """End an isolated transaction keeping nothing; a connection that cannot
        roll back is closed (the server then rolls back) and reopened later."""
        if self._alive() and self._simple("ROLLBACK") is not None:
            with suppress(Exception):
                self._conn.close()

    def _table_state(self) -> TableState | None:
        """Engine and AUTO_INCREMENT of every base table (None when unreadable)."""
        driver = _require_driver()
        try:
            with self._conn.cursor() as cursor:
                cursor.execute(_TABLE_STATE)
                rows = list(cursor.fetchall())
        except driver.MySQLError:
            return None
        return {
            str(name): (str(engine or "").lower(), None if auto is None else int(auto))
            for name, engine, auto in rows
        }

    def _restore_auto_increment(self, before: TableState) -> None:
        """Set the AUTO_INCREMENT counters of the current database back to `before`
        (InnoDB does not roll them back; a snapshot starts them at max + 1)."""
        if not self._alive():
            with suppress(DatabaseOpenError):
                self._connect()
        if not self._alive():
            return
        after = self._table_state() or {}
        for table, (_, counter) in before.items():
            now = after.get(table)
            if counter is None or now is None or now[1] == counter:
                continue
            self._simple(f"ALTER TABLE {_quote(table)} AUTO_INCREMENT = {int(counter)}")

    def _run_on_snapshot(self, sql: str, cap: int, limit: float | None) -> ExecResult:
        """Run `sql` on a second copy made from the copy, then drop it: DDL commits
        implicitly in MySQL, so no transaction could undo it."""
        source = self.database or ""
        counters = self._table_state() if self._alive() else None
        try:
            snapshot = MySQLCopy(connect(self.url, database=source, unbuffered=False), source)
        except DatabaseOpenError as exc:
            return ExecResult(
                status="error", error=f"cannot isolate the statements: {exc}", error_kind="other"
            )
        saved = (self._conn, self.database, self._timeout_set, self._kills)
        try:
            admission = admit(sql, self.spec, allow_writes=True, database=snapshot.name)
            if not admission.allowed:  # it names the copy itself, which it must not write
                return admission.blocked()
            self._conn, self.database = None, snapshot.name
            opened = self._begin()
            if opened is not None:
                return opened
            if counters:  # INSERT ... SELECT leaves max + 1, which the copy may be past
                self._restore_auto_increment(counters)
            return self._run_batch(sql, cap, limit)
        finally:
            if self._conn is not None and self._conn is not saved[0]:
                with suppress(Exception):
                    self._conn.close()
            self._conn, self.database, self._timeout_set, self._kills = saved
            snapshot.drop()

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
        variants = DIALECT.timeout_statements(seconds)
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
        started = time.monotonic()
        try:
            cursor.execute(statement)
            if cursor.description is None:
                count = max(cursor.rowcount, 0)
                cursor.close()
                if self._stopped_silently(started, timeout):
                    return timeout_result(timeout, None)
                return ExecResult(status="ok", row_count=count)
            columns = [str(col[0]) for col in cursor.description]
            fetched = list(cursor.fetchmany(max_rows + 1))
        except driver.MySQLError as exc:
            failed = failure_result(exc, statement, timeout=timeout)
            if failed.status == "timeout":
                self._kills = self._kill_count()
            return failed
        truncated = len(fetched) > max_rows
        drained = truncated and self._drain_cut_results and _drain(cursor, started + timeout)
        if truncated and not drained:
            _discard(cursor, self._conn)
            self._reopen_after_discard()
        else:
            with suppress(Exception):
                cursor.close()
            if self._stopped_silently(started, timeout):  # BENCHMARK's 0 after a kill
                return timeout_result(timeout, None)
        return capped(columns, fetched, max_rows)

    def _kill_count(self) -> int | None:
        """The session's count of statements the timeout stopped (None: unknown)."""
        driver = _require_driver()
        try:
            with self._conn.cursor() as cursor:
                cursor.execute(_KILLS)
                rows = list(cursor.fetchall())
        except driver.MySQLError:
            return None
        return sum(int(value) for _, value in rows)

    def _stopped_silently(self, started: float, timeout: float) -> bool:
        """Did the timeout stop the statement that just returned without an error?
        Asked only when it ran for most of its limit (MariaDB's BENCHMARK returns 0)."""
        if time.monotonic() - started < NEAR_LIMIT * timeout:
            return False
        before, self._kills = self._kills, self._kill_count()
        return before is not None and self._kills is not None and self._kills > before

    def _reopen_after_discard(self) -> None:
        with suppress(DatabaseOpenError):
            self._connect()
            if self._batch_read_only:
                self._simple(DIALECT.read_only_begin)
            elif self._isolating:  # the dropped connection rolled the batch back so far
                self._simple("START TRANSACTION")

    def _probe_statement(self, statement: str) -> ExecResult | None:
        return probe_statement(self._conn, statement) if self._alive() else None

    def _sandbox_database(self) -> str | None:
        return self.database

    def _disconnect(self) -> None:
        with suppress(Exception):
            if self._conn is not None:
                self._conn.close()
        self._conn = None

    # ------------------------------------------------------------ scratch

    @contextmanager
    def scratch(self) -> Iterator[MySQLScratchSession]:
        """A private connection for TEMPORARY stand-in tables, closed on exit."""
        session = MySQLScratchSession(self.url, self.database, self.max_rows)
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
            cursor.execute(
                DIALECT.syntax_probe_sql.format(name=PROBE_NAME, sql_literal="%s"), (statement,)
            )
            cursor.execute(f"DEALLOCATE PREPARE {PROBE_NAME}")
    except driver.MySQLError as exc:
        errno = exc.args[0] if exc.args else None
        if errno == NOT_PREPARABLE:
            return None
        result = failure_result(exc, statement, timeout=0)
        return result if result.status == "error" else None
    return None


class MySQLScratchSession(MySQLExecutor):
    """TEMPORARY stand-in tables on a private connection; they vanish with it.

    Statements run guarded, inside `START TRANSACTION READ ONLY` that is rolled
    back (MySQL allows TEMPORARY tables to be read there); they may write the
    stand-ins, and only them.
    """

    def __init__(
        self, url: DatabaseURL, database: str | None, max_rows: int = DEFAULT_MAX_ROWS
    ) -> None:
        BaseExecutor.__init__(self, max_rows=max_rows, allow_writes=False)
        self.url = url
        self.database = database
        self.stand_ins: set[str] = set()
        self._conn = connect(url, database=database)
        self._kills = self._kill_count()

    def create_stand_in(self, name: str, columns: list[str]) -> ExecResult:
        """Create an empty TEMPORARY table `name` (TEXT columns); it shadows `name`."""
        if not columns:
            return needs_columns(name)
        cols = ", ".join(f"{_quote(col)} TEXT" for col in columns)
        started = time.monotonic()
        with self._lock:
            failure = self._simple(f"CREATE TEMPORARY TABLE {_quote(name)} ({cols})")
            if failure is None:
                self.stand_ins.add(name)
        return (failure or ExecResult(status="ok")).model_copy(update={"seconds": since(started)})

    def _stand_ins(self) -> frozenset[str]:
        return frozenset(self.stand_ins)

    def _connect(self) -> None:  # a lost scratch connection lost its stand-ins too
        raise DatabaseOpenError("the scratch session's connection was lost")

    def _reopen_after_discard(self) -> None:
        self._closed = True


# ---------------------------------------------------------------- throw-away copies


class MySQLCopy:
    """A scratch database with copies of the original's tables and views."""

    def __init__(self, conn: Any, source: str) -> None:
        self.source = source
        self.name = copy_name()
        self._conn = conn
        self._handle = register_cleanup(self.drop)
        try:
            for variable in ("lock_wait_timeout", "innodb_lock_wait_timeout"):
                self._run(f"SET SESSION {variable} = {int(COPY_LOCK_WAIT_S)}")
            self._run(f"CREATE DATABASE {_quote(self.name)}")
            self._copy_tables()
            self._copy_foreign_keys()
            self._copy_views()
        except Exception as exc:
            self.drop()
            raise DatabaseOpenError(
                f"cannot make a private copy of {source!r} for --allow-writes: {_copy_refusal(exc)}"
            ) from None

    def _run(self, sql: str, args: Any = None) -> list[tuple[Any, ...]]:
        with self._conn.cursor() as cursor:
            cursor.execute(sql, args)
            return list(cursor.fetchall())

    def _copy_tables(self) -> None:
        src, dst = _quote(self.source), _quote(self.name)
        tables = self._run(
            "SELECT table_name FROM information_schema.tables "
            "WHERE table_schema = %s AND table_type = 'BASE TABLE' ORDER BY table_name",
            (self.source,),
        )
        self._run("SET SESSION foreign_key_checks = 0")
        try:
            for (table,) in tables:
                name = _quote(table)
                self._run(f"CREATE TABLE {dst}.{name} LIKE {src}.{name}")
                columns = self._run(
                    "SELECT column_name FROM information_schema.columns "
                    "WHERE table_schema = %s AND table_name = %s "
                    "AND extra NOT LIKE '%%GENERATED%%' "
                    "AND extra NOT IN ('VIRTUAL', 'PERSISTENT', 'STORED') "
                    "ORDER BY ordinal_position",
                    (self.source, table),
                )
                cols = ", ".join(_quote(col) for (col,) in columns)
                self._run(f"INSERT INTO {dst}.{name} ({cols}) SELECT {cols} FROM {src}.{name}")
        finally:
            self._run("SET SESSION foreign_key_checks = 1")

    def _copy_foreign_keys(self) -> None:
        """CREATE TABLE ... LIKE leaves foreign keys out: add them to the copies."""
        rows = self._run(
            "SELECT k.table_name, k.constraint_name, k.column_name, k.referenced_table_name, "
            "k.referenced_column_name, r.update_rule, r.delete_rule "
            "FROM information_schema.key_column_usage AS k "
            "JOIN information_schema.referential_constraints AS r "
            "ON r.constraint_schema = k.constraint_schema "
            "AND r.constraint_name = k.constraint_name AND r.table_name = k.table_name "
            "WHERE k.table_schema = %s AND k.referenced_table_schema = k.table_schema "
            "ORDER BY k.table_name, k.constraint_name, k.ordinal_position",
            (self.source,),
        )
        keys: dict[tuple[str, str], list[tuple[Any, ...]]] = {}
        for row in rows:
            keys.setdefault((str(row[0]), str(row[1])), []).append(row)
        dst = _quote(self.name)
        self._run("SET SESSION foreign_key_checks = 0")
        try:
            for (table, name), parts in keys.items():
                cols = ", ".join(_quote(str(p[2])) for p in parts)
                refs = ", ".join(_quote(str(p[4])) for p in parts)
                target = _quote(str(parts[0][3]))
                self._run(
                    f"ALTER TABLE {dst}.{_quote(table)} ADD CONSTRAINT {_quote(name)} "
                    f"FOREIGN KEY ({cols}) REFERENCES {dst}.{target} ({refs}) "
                    f"ON UPDATE {parts[0][5]} ON DELETE {parts[0][6]}"
                )
        finally:
            self._run("SET SESSION foreign_key_checks = 1")

    def _copy_views(self) -> None:
        views = self._run(
            "SELECT table_name, view_definition FROM information_schema.views "
            "WHERE table_schema = %s",
            (self.source,),
        )
        source_prefix = re.compile(re.escape(_quote(self.source)) + r"\.")
        target_prefix = _quote(self.name).replace("\\", "\\\\") + "."
        pending = {str(view): str(body) for view, body in views}
        while pending:
            failed: dict[str, str] = {}
            for view, body in pending.items():
                select = source_prefix.sub(target_prefix, body)
                try:
                    self._run(f"CREATE VIEW {_quote(self.name)}.{_quote(view)} AS {select}")
                except Exception:
                    failed[view] = body  # it may use a view not made yet
            if len(failed) == len(pending):
                raise DatabaseOpenError(f"cannot copy views: {', '.join(failed)}")
            pending = failed

    def drop(self) -> None:
        unregister_cleanup(self._handle)
        with suppress(Exception):
            self._run(f"DROP DATABASE IF EXISTS {_quote(self.name)}")
        with suppress(Exception):
            self._conn.close()


def _copy_refusal(exc: BaseException) -> str:
    """Why a copy failed, and what to do, in one line."""
    errno = exc.args[0] if exc.args and isinstance(exc.args[0], int) else None
    message = str(exc.args[1] if len(exc.args) > 1 else exc).strip()
    first = message.splitlines()[0] if message else type(exc).__name__
    if errno in (1205, 1969, 3024):  # lock wait timeout, statement time
        return (
            f"{first} (another session holds a lock on a table for more than "
            f"{COPY_LOCK_WAIT_S} s); end that session's lock or transaction, or run "
            "without --allow-writes"
        )
    if errno in (1044, 1142, 1227):  # access denied to create or read
        return f"{first}; grant CREATE and SELECT to this user, or run without --allow-writes"
    return first


_SANDBOX_DATABASES = (
    "SELECT schema_name FROM information_schema.schemata "
    "WHERE schema_name LIKE 'acts\\_sandbox\\_%'"
)
_IN_USE = "SELECT count(*) FROM information_schema.processlist WHERE db = %s"


def sweep_with(conn: Any) -> list[str]:
    """Drop the copies on this server whose owner process is gone (see
    `sandbox.owner_gone`) and that no visible session uses; never raises."""
    dropped: list[str] = []
    with suppress(Exception), conn.cursor() as cursor:
        cursor.execute(_SANDBOX_DATABASES)
        names = [str(row[0]) for row in cursor.fetchall()]
        for name in names:
            if not is_orphan(name):
                continue
            cursor.execute(_IN_USE, (name,))
            if int(cursor.fetchone()[0]):
                continue
            with suppress(Exception):
                cursor.execute(f"DROP DATABASE {_quote(name)}")
                dropped.append(name)
    return dropped


def sweep_orphans(url: str | DatabaseURL) -> list[str]:
    """Drop the copies on `url`'s server whose owner process is gone; never raises."""
    parsed = url if isinstance(url, DatabaseURL) else parse_url(url)
    try:
        conn = connect(parsed, unbuffered=False)
    except DatabaseOpenError:
        return []
    try:
        return sweep_with(conn)
    finally:
        with suppress(Exception):
            conn.close()


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


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
