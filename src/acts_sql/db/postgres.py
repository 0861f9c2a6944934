"""The PostgreSQL executor (psycopg 3).

Read-only by default, in three layers: the guard (`guard.admit`) decides
before anything is sent; the session's transactions default to READ ONLY;
every batch runs inside `BEGIN TRANSACTION READ ONLY` and is rolled back.
Statements go through the extended query protocol (`stream`), which carries
exactly one statement, so text hidden after a `;` can never ride along.
Rows are streamed and at most max_rows + 1 are read; the rest of the query is
cancelled. `statement_timeout` bounds every statement.

With `allow_writes=True` the executor works on a throw-away copy made with
`CREATE DATABASE ... TEMPLATE` (see `PostgresCopy`), with autocommit,
and drops it at close. When no copy can be made (other sessions on the
database, no CREATEDB privilege) it does not open: `DatabaseOpenError` says
why and what to do. Nothing ever runs on the original with writes allowed.

`execute(sql, isolate=True)` leaves the copy as it was: the batch runs inside
`BEGIN` ... `ROLLBACK` (PostgreSQL's DDL is transactional) and every sequence
it moved is set back (`nextval` is not transactional), whatever the guard
thought the batch was, so each isolated call starts from the same state.

The module also holds the error classification (SQLSTATE and position kept,
psql's `LINE n:` caret added) and `PostgresCopy`; the execute loop is
`base.BaseExecutor`.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any, Literal

from acts_sql.db.base import (
    REFLECT_TIMEOUT_S,
    BaseExecutor,
    capped,
    needs_columns,
    shift_position,
    since,
)
from acts_sql.db.executor import DEFAULT_MAX_ROWS, statement_timeout
from acts_sql.db.guard import admit, caret_context, located_statements
from acts_sql.db.result import (
    ErrorKind,
    ExecResult,
    blocked_result,
    timeout_result,
    write_blocked_result,
)
from acts_sql.db.sandbox import copy_name, is_orphan, register_cleanup, unregister_cleanup
from acts_sql.db.statements import strip_leading_comments
from acts_sql.db.url import DatabaseURL, parse_url
from acts_sql.errors import DatabaseOpenError
from acts_sql.sql.dialects import get_dialect

try:  # an optional dependency: acts-sql[postgres]
    import psycopg
except ImportError:  # pragma: no cover - exercised only without the extra
    psycopg = None  # type: ignore[assignment]

CONNECT_TIMEOUT_S = 10
STREAM_CHUNK = 1000
_ROWS_FIRST = re.compile(r"^\(*\s*(SELECT|WITH|VALUES|TABLE|EXPLAIN|SHOW)\b", re.IGNORECASE)
_PROBES = itertools.count(1)
DIALECT = get_dialect("postgresql")

SandboxMode = Literal["copy"]


# ---------------------------------------------------------------- errors

TIMEOUT_STATE = "57014"
READ_ONLY_STATES = frozenset({"25006"})
_SCHEMA_STATES = frozenset(
    {"42703", "42P01", "42P07", "42702", "42704", "42P02", "3F000", "42P10", "42725"}
    | {"42712", "42710"}
)
_TYPE_STATES = frozenset({"42804", "42883", "42846", "22P02", "42P18", "2202E", "42809"})


def kind_of(sqlstate: str | None) -> ErrorKind:
    """The error kind of a SQLSTATE."""
    state = sqlstate or ""
    if state == "42601":
        return "syntax"
    if state in _SCHEMA_STATES:
        return "schema"
    if state in _TYPE_STATES:
        return "type"
    if state == TIMEOUT_STATE:
        return "timeout"
    return "runtime"


def failure_result(
    exc: BaseException, statement: str, *, timeout: float, prefix: int = 0
) -> ExecResult:
    """The result for `exc`, raised by `statement` sent after `prefix` extra characters.

    A position inside the prefix (PREPARE ... AS) is dropped.
    """
    diag: Any = getattr(exc, "diag", None)
    state: str | None = getattr(exc, "sqlstate", None)
    if state == TIMEOUT_STATE and "user request" not in str(exc):
        return timeout_result(timeout, state)
    if state in READ_ONLY_STATES:
        return write_blocked_result(state)
    primary = (getattr(diag, "message_primary", None) or str(exc)).strip()
    position: int | None = None
    raw = getattr(diag, "statement_position", None)
    if raw and str(raw).isdigit() and int(raw) > prefix:
        position = int(raw) - prefix
    lines = [primary]
    if position is not None:
        lines.append(caret_context(statement, position))
    detail = getattr(diag, "message_detail", None)
    hint = getattr(diag, "message_hint", None)
    if detail:
        lines.append(f"DETAIL: {detail}")
    if hint:
        lines.append(f"HINT: {hint}")
    return ExecResult(
        status="error",
        error="\n".join(lines),
        error_kind=kind_of(state),
        error_code=state,
        error_position=position,
    )


# ---------------------------------------------------------------- connecting


def _require_driver() -> Any:
    if psycopg is None:
        raise DatabaseOpenError(
            "PostgreSQL support needs psycopg 3: pip install 'acts-sql[postgres]'"
        )
    return psycopg


READ_ONLY_OPTIONS = (
    "-c default_transaction_read_only=on -c lock_timeout=5000"
    " -c idle_in_transaction_session_timeout=60000"
)
"""Server settings of a read-only session, sent with the connection (`options`) so that
they hold from its first statement: every transaction READ ONLY unless acts-sql's own
code says otherwise, no wait over 5 s for a lock, no transaction left open over 60 s."""


def connect(url: DatabaseURL, *, database: str | None = None, options: str | None = None) -> Any:
    """An autocommit psycopg connection; DatabaseOpenError with a one-line reason.

    `options`: server settings (`-c name=value ...`) added to the URL's own."""
    driver = _require_driver()
    params: dict[str, Any] = {
        "host": url.host,
        "port": url.port,
        "user": url.username,
        "password": url.password,
        "dbname": database if database is not None else url.database,
        "connect_timeout": CONNECT_TIMEOUT_S,
        "application_name": "acts-sql",
    }
    params.update(url.query)
    if options:
        params["options"] = f"{params.get('options') or ''} {options}".strip()
    params = {key: value for key, value in params.items() if value is not None}
    target = url.model_copy(update={"database": params.get("dbname")}).describe()
    try:
        return driver.connect(autocommit=True, prepare_threshold=None, **params)
    except driver.Error as exc:
        raise DatabaseOpenError(
            f"cannot connect to PostgreSQL at {target}: {_reason(exc, url)}",
            url=url.redacted(),
        ) from None


def _reason(exc: BaseException, url: DatabaseURL) -> str:
    """The last meaningful line of a connection error, never with the password."""
    lines = [line.strip() for line in str(exc).splitlines() if line.strip()]
    text = next(
        (line for line in reversed(lines) if "FATAL" in line or "failed" in line),
        lines[-1] if lines else type(exc).__name__,
    )
    text = re.sub(r"^connection failed: ", "", text)
    text = re.sub(r'^connection to server at "[^"]*"(?: \([^)]*\))?, port \d+ failed: ', "", text)
    if url.password:
        text = text.replace(url.password, "***")
    return text


def returns_rows(statement: str) -> bool:
    """True for statements read through a row stream (queries, EXPLAIN, SHOW)."""
    return bool(_ROWS_FIRST.match(strip_leading_comments(statement)))


def run_statement(
    conn: Any, statement: str, max_rows: int, timeout: float, *, prefix: int = 0
) -> ExecResult:
    """One statement on `conn` (already in the right transaction state)."""
    driver = _require_driver()
    try:
        for setting in DIALECT.timeout_statements(timeout):
            conn.execute(setting)
        cursor = conn.cursor()
        if not returns_rows(statement):
            cursor.execute(statement, binary=True)  # binary: the extended protocol, one statement
            if cursor.description is None:
                return ExecResult(status="ok", row_count=max(cursor.rowcount, 0))
            fetched = cursor.fetchmany(max_rows + 1)
        else:
            fetched = []
            size = STREAM_CHUNK if driver.pq.version() >= 170000 else 1
            stream = cursor.stream(statement, size=size)
            try:
                for row in stream:
                    fetched.append(row)
                    if len(fetched) > max_rows:
                        break
            finally:
                stream.close()  # cancels the rest of the query
        if cursor.description is not None:
            columns = [str(col.name) for col in cursor.description]
        else:  # no row came back, and psycopg drops the empty result's description
            columns = describe_columns(conn, statement)
    except driver.ProgrammingError as exc:
        if "didn't produce a result" in str(exc):  # a write (WITH ... INSERT) ran
            return ExecResult(status="ok")
        return failure_result(exc, statement, timeout=timeout, prefix=prefix)
    except driver.Error as exc:
        return failure_result(exc, statement, timeout=timeout, prefix=prefix)
    return capped(columns, fetched, max_rows)


def describe_columns(conn: Any, statement: str) -> list[str]:
    """Output column names of `statement`, from the server's description of it.

    Prepares it as the unnamed statement (parsed and planned, never run).
    """
    pgconn = conn.pgconn
    command_ok = _require_driver().pq.ExecStatus.COMMAND_OK
    try:
        prepared = pgconn.prepare(b"", statement.encode(conn.info.encoding))
        if prepared.status != command_ok:
            return []
        described = pgconn.describe_prepared(b"")
        return [
            (described.fname(i) or b"").decode(conn.info.encoding, "replace")
            for i in range(described.nfields)
        ]
    except Exception:
        return []


def probe_statement(
    conn: Any, statement: str, *, in_transaction: bool = False
) -> ExecResult | None:
    """PREPARE `statement` (parse and analyse, never run), then undo everything.

    Outside a transaction: in a READ ONLY transaction that is rolled back;
    `in_transaction`: under a savepoint that is rolled back. Returns the
    server's error, or None when it parses, or when PREPARE cannot take this
    kind of statement (an error at its first token).
    """
    driver = _require_driver()
    name = f"acts_sql_probe_{next(_PROBES)}"
    prefix = DIALECT.syntax_probe_sql.format(name=name, sql="")
    try:
        conn.execute("SAVEPOINT acts_sql_probe" if in_transaction else "BEGIN READ ONLY")
        try:
            conn.execute("SET LOCAL statement_timeout = 10000")
            conn.cursor().execute(prefix + statement, binary=True)
            conn.execute(f"DEALLOCATE {name}")
        finally:
            conn.execute("ROLLBACK TO SAVEPOINT acts_sql_probe" if in_transaction else "ROLLBACK")
    except driver.Error as exc:
        result = failure_result(exc, statement, timeout=10.0, prefix=len(prefix))
        first = len(statement) - len(statement.lstrip()) + 1
        if result.error_kind == "syntax" and result.error_position in (None, first):
            return None
        return result if result.status == "error" else None
    return None


def in_error(conn: Any) -> bool:
    """True when the connection's transaction is aborted (an error, a cancelled stream)."""
    return bool(conn.info.transaction_status == _require_driver().pq.TransactionStatus.INERROR)


_REACHES_SERVER = """
SELECT r.rolsuper OR coalesce((
    SELECT bool_or(pg_has_role(r.oid, p.oid, 'MEMBER')) FROM pg_roles p
    WHERE p.rolname IN ('pg_execute_server_program', 'pg_write_server_files')), false)
FROM pg_roles r WHERE r.rolname = current_user
"""


_CATALOG_FUNCTIONS = """
SELECT p.proname FROM pg_catalog.pg_proc AS p
GROUP BY p.proname
HAVING bool_and(p.provolatile IN ('i', 's') AND p.prokind IN ('f', 'a', 'w'))
ORDER BY 1
"""
"""Every function name of this server whose every overload (in any schema) is immutable or
stable: the rule that made the generated allowlist, applied to the server itself (its
version's built-ins, PostGIS, the user's own functions; a built-in name the user overloads
with a volatile function drops out). The guard's always-blocked list still wins."""
_CATALOG_FUNCTIONS_CAP = 20000


_SEQUENCES = """
SELECT s.seqrelid::bigint, pg_sequence_last_value(s.seqrelid), s.seqstart
FROM pg_sequence AS s
WHERE has_sequence_privilege(s.seqrelid, 'SELECT,USAGE')
"""
"""Every sequence this session may read: (oid, last value or NULL when never used, start)."""

SequenceState = dict[int, tuple[int | None, int]]

NOT_IN_TRANSACTION = frozenset({"25001", "2D000"})
"""What cannot run inside an isolated batch's transaction: active_sql_transaction (CREATE
INDEX CONCURRENTLY ...) and invalid_transaction_termination (a routine that COMMITs)."""

ISOLATION_NOTE = (
    "\n(candidates run inside a transaction that is rolled back, so that each starts from "
    "the same data; a statement that cannot run inside a transaction block, or that ends "
    "the transaction, cannot be tried that way)"
)


def _reaches_server(conn: Any) -> bool:
    """May this session run server programs or write server files? True when unsure."""
    try:
        row = conn.execute(_REACHES_SERVER).fetchone()
    except Exception:
        return True
    return row is None or bool(row[0])


class PostgresExecutor(BaseExecutor):
    """Runs statements on one PostgreSQL database that it never writes."""

    spec = DIALECT

    def __init__(
        self,
        url: str | DatabaseURL,
        *,
        timeout: float | None = None,
        max_rows: int | None = None,
        allow_writes: bool = False,
        privileged_routines: bool = False,
    ) -> None:
        super().__init__(timeout=timeout, max_rows=max_rows, allow_writes=allow_writes)
        self.privileged_routines = privileged_routines
        """Let DO blocks and new routines run even when the connection could reach the
        server (a superuser): only for a server that would run such code anyway."""
        self.url = url if isinstance(url, DatabaseURL) else parse_url(url)
        self.sandbox_mode: SandboxMode | None = None
        target = self.url
        if allow_writes:
            self._copy = PostgresCopy.create(self.url)
            target = self.url.model_copy(update={"database": self._copy.name})
            self.sandbox_mode = "copy"
        self.target = target
        self._conn: Any = None
        self._batch_read_only = False
        self._isolating = False
        self._catalog_list: frozenset[str] | None = None
        self._catalog_read = False
        try:
            self._connect()
        except Exception:
            self._drop_copy()
            raise
        self.reaches_server = allow_writes and _reaches_server(self._conn)
        """True when this connection may run server programs or write server files."""

    # ------------------------------------------------------------ connection

    def _connect(self) -> None:
        conn = connect(self.target, options=None if self.allow_writes else READ_ONLY_OPTIONS)
        try:
            if not self.allow_writes:
                for statement in DIALECT.read_only_session_sql:
                    conn.execute(statement)
        except Exception:
            conn.close()
            raise
        self._conn = conn

    def _alive(self) -> bool:
        return self._conn is not None and not self._conn.closed and not self._conn.broken

    def _begin(
        self, *, read_only: bool | None = None, isolating: bool = False
    ) -> ExecResult | None:
        if not self._alive():
            try:
                self._connect()
            except DatabaseOpenError as exc:
                return ExecResult(status="error", error=str(exc), error_kind="other")
        ro = (not self.allow_writes) if read_only is None else read_only
        self._batch_read_only = ro
        if self._batch_read_only:
            self._conn.execute(DIALECT.read_only_begin)
        return None

    def _end(self) -> None:
        """Roll the read-only batch back, then release any session-level advisory lock
        (a rollback keeps those), so that nothing stays held between batches."""
        if self._batch_read_only and self._alive():
            with suppress(Exception):
                self._conn.execute("ROLLBACK")
            with suppress(Exception):
                self._conn.execute("SELECT pg_advisory_unlock_all()")

    def _catalog_functions(self) -> frozenset[str] | None:
        """This server's side-effect-free function names (`_CATALOG_FUNCTIONS`), read once;
        None (the guard's generated list) when they cannot be read."""
        if not self._catalog_read and not self._closed:
            self._catalog_read = True
            listing = self.run_internal(_CATALOG_FUNCTIONS, max_rows=_CATALOG_FUNCTIONS_CAP)
            if listing.ok and not listing.truncated and listing.rows:
                self._catalog_list = frozenset(str(row[0]) for row in listing.rows)
        return self._catalog_list

    def _run_isolated(self, sql: str, cap: int, limit: float | None, *, writes: bool) -> ExecResult:
        """The batch in a transaction on the copy that is rolled back; every sequence
        it moved is set back (`nextval` is not transactional), also when the guard
        admitted it as a read (`writes` False): a function may call `nextval`."""
        statements = self._open_batch(sql)
        if isinstance(statements, ExecResult):
            return statements
        sequences = self._sequence_state()
        try:
            self._conn.execute("BEGIN")
        except Exception as exc:
            self._end()
            return ExecResult(
                status="error", error=f"cannot isolate the statements: {exc}", error_kind="other"
            )
        self._isolating = True
        try:
            result = self._run_statements(statements, cap, limit)
        finally:
            self._isolating = False
            self._undo()
            self._end()
        if sequences:
            self._restore_sequences(sequences)
        if result.error_code in NOT_IN_TRANSACTION:
            result = result.model_copy(update={"error": (result.error or "") + ISOLATION_NOTE})
        return result

    def _undo(self) -> None:
        """End an isolated batch keeping nothing; a connection that cannot roll back is
        closed (the server then rolls back) and reopened later."""
        try:
            self._conn.execute("ROLLBACK")
        except Exception:
            with suppress(Exception):
                self._conn.close()

    def _sequence_state(self) -> SequenceState | None:
        """Where each readable sequence of the copy stands (None when unreadable)."""
        try:
            rows = self._conn.execute(_SEQUENCES).fetchall()
        except Exception:
            return None
        return {int(oid): (last, int(start)) for oid, last, start in rows}

    def _restore_sequences(self, before: SequenceState) -> None:
        """Set back every sequence that moved since `before` (needs UPDATE on it).

        One never used before goes back to its start value, unused; one that was
        left unused at another value (`setval(s, n, false)`, `RESTART WITH n`) would
        come back at its start instead: `pg_sequence_last_value` cannot tell."""
        if not self._alive():
            with suppress(DatabaseOpenError):
                self._connect()  # the batch's connection was closed to roll it back
        if not self._alive():
            return
        after = self._sequence_state() or {}
        for oid, (last, start) in before.items():
            if oid not in after or after[oid][0] == last:
                continue
            value, called = (start, False) if last is None else (last, True)
            with suppress(Exception):
                self._conn.execute("SELECT setval(%s::oid, %s, %s)", (oid, value, called))

    def _run_statement(self, statement: str, max_rows: int, timeout: float) -> ExecResult:
        if not self._isolating:
            result = run_statement(self._conn, statement, max_rows, timeout)
            if result.truncated and self._batch_read_only and in_error(self._conn):
                # the cancelled rest of a stream aborted the transaction: start a new one
                self._conn.execute("ROLLBACK")
                self._conn.execute(DIALECT.read_only_begin)
            return result
        self._conn.execute("SAVEPOINT acts_sql_statement")
        result = run_statement(self._conn, statement, max_rows, timeout)
        with suppress(Exception):
            if result.ok and not in_error(self._conn):
                self._conn.execute("RELEASE SAVEPOINT acts_sql_statement")
            else:
                self._conn.execute("ROLLBACK TO SAVEPOINT acts_sql_statement")
        return result

    def _probe_statement(self, statement: str) -> ExecResult | None:
        if not self._alive():
            return None
        return probe_statement(self._conn, statement)

    def _sandbox_database(self) -> str | None:
        return self.target.database

    def _routines_allowed(self) -> bool:
        return self.privileged_routines or not self.reaches_server

    def _disconnect(self) -> None:
        if self._conn is not None:
            with suppress(Exception):
                self._conn.close()
            self._conn = None

    # ------------------------------------------------------------ scratch

    @contextmanager
    def scratch(self) -> Iterator[PostgresScratchSession]:
        """A private connection whose transaction holds TEMP stand-ins; rolled back on exit."""
        session = PostgresScratchSession(
            self.target, self.max_rows, functions=self._catalog_functions()
        )
        try:
            yield session
        finally:
            session.close()


class PostgresScratchSession:
    """TEMP stand-in tables in a transaction of a private connection, always rolled back.

    Stand-ins are created read-write; each statement then runs under a
    savepoint switched to READ ONLY, so only the TEMP tables can change, and
    nothing survives the session. Stand-in columns are `text`.
    """

    def __init__(
        self,
        url: DatabaseURL,
        max_rows: int = DEFAULT_MAX_ROWS,
        *,
        functions: frozenset[str] | None = None,
    ) -> None:
        self._conn = connect(url)
        self._conn.execute("BEGIN")
        self._max_rows = max_rows
        self._functions = functions
        """The server's side-effect-free functions (None: the guard's generated list)."""
        self._closed = False
        self._stand_ins: set[str] = set()

    def create_stand_in(self, name: str, columns: list[str]) -> ExecResult:
        """Create an empty TEMP table `name` (it shadows a same-named table)."""
        if not columns:
            return needs_columns(name)
        cols = ", ".join(f"{_quote(col)} text" for col in columns)
        made = self._in_savepoint(f"CREATE TEMP TABLE {_quote(name)} ({cols})")
        if made.ok:
            self._stand_ins.add(name)
        return made

    def execute(
        self, sql: str, *, max_rows: int | None = None, timeout: float | None = None
    ) -> ExecResult:
        """Run `sql` (guarded, read-only but for the stand-ins) in this session."""
        admission = admit(
            sql, DIALECT, stand_ins=frozenset(self._stand_ins), catalog_functions=self._functions
        )
        if not admission.allowed:
            if admission.probe:
                for _, piece in located_statements(sql, DIALECT):
                    failure = self._probe(piece)
                    if failure is not None:
                        return failure
            return blocked_result(admission.reason)
        cap = self._max_rows if max_rows is None else max(0, max_rows)
        started = time.monotonic()
        try:
            self._conn.execute("SAVEPOINT acts_sql_unit")
            self._conn.execute("SET TRANSACTION READ ONLY")  # TEMP tables stay writable
        except Exception as exc:
            return ExecResult(status="error", error=str(exc), error_kind="other")
        result = ExecResult(status="ok")
        try:
            statements = located_statements(sql, DIALECT)
            for index, (offset, piece) in enumerate(statements):
                limit = statement_timeout(piece, timeout)
                result = run_statement(self._conn, piece, cap, limit)
                if not result.ok:
                    result = shift_position(result, offset)
                    break
                if in_error(self._conn) and index + 1 < len(statements):
                    self._conn.execute("ROLLBACK TO SAVEPOINT acts_sql_unit")
                    self._conn.execute("SET TRANSACTION READ ONLY")
        finally:
            with suppress(Exception):
                self._conn.execute("ROLLBACK TO SAVEPOINT acts_sql_unit")
        return result.model_copy(update={"seconds": since(started)})

    def _probe(self, statement: str) -> ExecResult | None:
        return probe_statement(self._conn, statement, in_transaction=True)

    def _in_savepoint(self, statement: str) -> ExecResult:
        """Run acts-sql's own DDL (a stand-in), kept unless it fails."""
        started = time.monotonic()
        try:
            self._conn.execute("SAVEPOINT acts_sql_unit")
        except Exception as exc:
            return ExecResult(status="error", error=str(exc), error_kind="other")
        result = run_statement(self._conn, statement, 0, REFLECT_TIMEOUT_S)
        with suppress(Exception):
            if result.ok:
                self._conn.execute("RELEASE SAVEPOINT acts_sql_unit")
            else:
                self._conn.execute("ROLLBACK TO SAVEPOINT acts_sql_unit")
        return result.model_copy(update={"seconds": since(started)})

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with suppress(Exception):
            self._conn.execute("ROLLBACK")
        with suppress(Exception):
            self._conn.close()


def _quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def open_url(
    url: str,
    *,
    timeout: float | None = None,
    max_rows: int | None = None,
    allow_writes: bool = False,
) -> PostgresExecutor:
    """The `connect.open_database` entry point for postgresql:// URLs (superuser-safe)."""
    return PostgresExecutor(url, timeout=timeout, max_rows=max_rows, allow_writes=allow_writes)


# ---------------------------------------------------------------- throw-away copies


MAINTENANCE_DATABASES = ("postgres", "template1")


class PostgresCopy:
    """A database made from the user's one with CREATE DATABASE ... TEMPLATE (needs CREATEDB
    and no other session on the original; PostgreSQL waits a few seconds for them to
    leave). Dropped at `drop()`, or when the process ends (`sandbox.register_cleanup`);
    copies of processes that died without either are swept by the next `create`."""

    def __init__(self, url: DatabaseURL, name: str, maintenance: str) -> None:
        self.url = url
        self.name = name
        self.maintenance = maintenance
        self._handle = register_cleanup(self.drop)

    @classmethod
    def create(cls, url: DatabaseURL) -> PostgresCopy:
        """The copy; DatabaseOpenError saying why and what to do when PostgreSQL refuses."""
        if not url.database:
            raise DatabaseOpenError("a PostgreSQL URL needs a database name to copy")
        admin, maintenance = _maintenance_connection(url)
        name = copy_name()
        try:
            sweep_with(admin)
            admin.execute(f"CREATE DATABASE {_quote(name)} TEMPLATE {_quote(url.database)}")
            return cls(url, name, maintenance)
        except Exception as exc:
            raise DatabaseOpenError(
                f"cannot make a private copy of {url.database!r} for --allow-writes: "
                + _copy_refusal(admin, url, exc),
                url=url.redacted(),
            ) from None
        finally:
            admin.close()

    def drop(self) -> None:
        """Drop the copy, ending any session still on it."""
        unregister_cleanup(self._handle)
        with suppress(Exception):
            admin = connect(self.url, database=self.maintenance)
            try:
                admin.execute(f"DROP DATABASE IF EXISTS {_quote(self.name)} WITH (FORCE)")
            finally:
                admin.close()


_OTHER_SESSIONS = "SELECT count(*) FROM pg_stat_activity WHERE datname = %s"


def _copy_refusal(admin: Any, url: DatabaseURL, exc: BaseException) -> str:
    """Why CREATE DATABASE ... TEMPLATE failed, and what to do, in one line."""
    state = getattr(exc, "sqlstate", None)
    if state == "55006":
        with suppress(Exception):
            count = int(admin.execute(_OTHER_SESSIONS, (url.database,)).fetchone()[0])
            others = f"{count} other session{'s are' if count != 1 else ' is'} connected to it"
            them = "it" if count == 1 else "them"
            return (
                f"{others} (PostgreSQL copies a database only while nobody else is "
                f"connected); close {them}, or run without --allow-writes"
            )
        return "other sessions are connected to it; close them, or run without --allow-writes"
    role = url.username or "this role"
    if state == "42501" and "copy" in str(exc):
        return (
            f"role {role!r} does not own the database (PostgreSQL lets only its owner or a "
            "superuser copy it); connect as its owner, or run without --allow-writes"
        )
    if state == "42501":
        return (
            f"role {role!r} may not create databases; grant it with "
            f"ALTER ROLE {_quote(role)} CREATEDB, or run without --allow-writes"
        )
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


_SANDBOX_DATABASES = r"""
SELECT d.datname FROM pg_database AS d
WHERE d.datname LIKE 'acts\_sandbox\_%'
  AND d.datdba = (SELECT oid FROM pg_roles WHERE rolname = current_user)
  AND NOT EXISTS (SELECT 1 FROM pg_stat_activity AS a WHERE a.datname = d.datname)
"""
"""Copies this role owns that nobody is connected to (their owner may still run)."""


def sweep_with(admin: Any) -> list[str]:
    """Drop the copies on this server whose owner process is gone (see
    `sandbox.owner_gone`), through `admin`, a connection to another database.
    Returns the names dropped; never raises."""
    dropped: list[str] = []
    with suppress(Exception):
        names = [str(row[0]) for row in admin.execute(_SANDBOX_DATABASES).fetchall()]
        for name in names:
            if not is_orphan(name):
                continue
            with suppress(Exception):  # refused while someone connects to it: kept
                admin.execute(f"DROP DATABASE {_quote(name)}")
                dropped.append(name)
    return dropped


def sweep_orphans(url: str | DatabaseURL) -> list[str]:
    """Drop the copies on `url`'s server whose owner process is gone; never raises."""
    parsed = url if isinstance(url, DatabaseURL) else parse_url(url)
    try:
        admin, _ = _maintenance_connection(parsed)
    except DatabaseOpenError:
        return []
    try:
        return sweep_with(admin)
    finally:
        admin.close()


def _maintenance_connection(url: DatabaseURL) -> tuple[Any, str]:
    """A connection to a database other than the original (to run CREATE DATABASE)."""
    last: DatabaseOpenError | None = None
    for name in MAINTENANCE_DATABASES:
        if name == url.database:
            continue
        try:
            return connect(url, database=name), name
        except DatabaseOpenError as exc:
            last = exc
    raise last or DatabaseOpenError("no maintenance database to connect to")
