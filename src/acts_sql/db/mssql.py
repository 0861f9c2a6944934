"""The SQL Server executor (pymssql). UNTESTED against a live server.

Every piece of SQL it sends comes from a small pure function below, unit
tested to parse with sqlglot's T-SQL dialect; the execute loop is
`DbapiExecutor`, tested with a fake DB-API connection.

- Read-only: the guard first; then every batch runs inside
  `BEGIN TRANSACTION` ... `IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION`, always
  rolled back (SQL Server has no read-only transactions).
- Writes (`allow_writes=True`): no throw-away copy is possible here, so DML
  and DDL (transactional in SQL Server) run in the same always-rolled-back
  transaction. `SET XACT_ABORT ON` makes any error roll it back at once.
- Timeout: pymssql's query timeout (whole seconds, at least 1; FreeTDS keeps
  it per process, so concurrent executors share the last value set).
- Row cap: `fetchmany(max_rows + 1)`; the rest of the result is discarded.
- Stand-ins: empty CTEs (`CteScratchSession`): a #temp table would need the
  `#` prefix that the unit's plain references do not have.
"""

from __future__ import annotations

import math
import re
from typing import Any

from sqlglot import exp

from acts_sql.db.dbapi_executor import DbapiExecutor
from acts_sql.db.result import ErrorKind, ExecResult, timeout_result, write_blocked_result
from acts_sql.db.url import DatabaseURL, parse_url
from acts_sql.errors import DatabaseOpenError
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.safety import PERMIT_IN_ROLLBACK

DIALECT = get_dialect("sqlserver")
LOGIN_TIMEOUT_S = 15

# ------------------------------------------------------------------ SQL it sends


def session_setup_sql() -> list[str]:
    """Run once per connection: no row-count chatter, errors abort the whole
    transaction, no implicit transactions, and this session is the one
    chosen as a deadlock victim rather than the user's workload."""
    return [
        "SET NOCOUNT ON",
        "SET XACT_ABORT ON",
        "SET IMPLICIT_TRANSACTIONS OFF",
        "SET DEADLOCK_PRIORITY LOW",
        "SET TRANSACTION ISOLATION LEVEL READ COMMITTED",
    ]


def begin_sql() -> list[str]:
    """Opens every batch's transaction."""
    return ["BEGIN TRANSACTION"]


def rollback_sql() -> str:
    """Ends every batch; harmless when XACT_ABORT already rolled back."""
    return "IF @@TRANCOUNT > 0 ROLLBACK TRANSACTION"


def probe_sql(statement: str) -> str:
    """Asks the server to compile `statement` without running it and report
    its first error (sys.dm_exec_describe_first_result_set)."""
    call = exp.Anonymous(
        this="sys.dm_exec_describe_first_result_set",
        expressions=[exp.National(this=statement), exp.Null(), exp.Literal.number(0)],
    )
    query = (
        exp.select("error_number", "error_message")
        .from_(exp.Table(this=call))
        .where(exp.column("error_number").is_(exp.Null()).not_())
    )
    return DIALECT.generate(query, normalize_functions=False)  # system names are lower case


def query_timeout(seconds: float) -> int:
    """pymssql's query timeout: whole seconds, at least 1 (0 means none)."""
    return max(1, math.ceil(seconds))


# ------------------------------------------------------------------ errors

SYNTAX_NUMBERS = frozenset({102, 103, 105, 111, 156, 170, 319, 1018, 1038, 4145})
SCHEMA_NUMBERS = frozenset({207, 208, 209, 195, 4104, 4121, 8156, 1013, 4109})
TYPE_NUMBERS = frozenset({206, 245, 241, 242, 257, 260, 295, 402, 529, 8114, 8116, 8117})
BLOCKED_NUMBERS = frozenset({229, 230, 262, 297, 300, 3906, 3908})
TIMEOUT_NUMBERS = frozenset({20003})
"""DB-Lib 20003: "Adaptive Server connection timed out" (the query timeout)."""
CONNECTION_NUMBERS = frozenset({20002, 20004, 20006, 20009, 20017, 20047, 18456})

_DBLIB_TAIL = re.compile(r"\s*DB-Lib error message \d+, severity \d+:.*$", re.DOTALL)


def error_parts(exc: BaseException) -> tuple[int | None, str]:
    """(message number, clean message) of a pymssql exception.

    pymssql raises its errors with `args == (number, message bytes)`; the
    message ends with DB-Lib's own "General SQL Server error" lines.
    """
    args: tuple[Any, ...] = tuple(getattr(exc, "args", ()))
    number = args[0] if args and isinstance(args[0], int) else None
    raw: Any = args[1] if len(args) > 1 else (args[0] if args and number is None else "")
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes | bytearray) else str(raw)
    cleaned = _DBLIB_TAIL.sub("", text).strip()
    return number, cleaned or text.strip() or type(exc).__name__


def kind_of(number: int | None) -> ErrorKind:
    """The error kind of a SQL Server message number."""
    if number in SYNTAX_NUMBERS:
        return "syntax"
    if number in SCHEMA_NUMBERS:
        return "schema"
    if number in TYPE_NUMBERS:
        return "type"
    if number is None or number in CONNECTION_NUMBERS:
        return "other"
    return "runtime"


def classify(exc: BaseException, *, timeout: float) -> ExecResult:
    """The typed result of a pymssql exception."""
    number, message = error_parts(exc)
    code = str(number) if number is not None else None
    if number in TIMEOUT_NUMBERS or (number is None and "timed out" in message.lower()):
        return timeout_result(timeout, code)
    if number in BLOCKED_NUMBERS:
        return write_blocked_result(code, message)
    return ExecResult(status="error", error=message, error_kind=kind_of(number), error_code=code)


# ------------------------------------------------------------------ connecting


def connect_kwargs(url: DatabaseURL) -> dict[str, Any]:
    """pymssql.connect arguments for a `mssql+pymssql://user:pw@host:port/db` URL.

    Query options: `login_timeout`, `charset`, `tds_version`, `appname`.
    """
    query = url.query
    kwargs: dict[str, Any] = {
        "server": url.host or "localhost",
        "port": str(url.port or DIALECT.default_port),
        "user": url.username,
        "password": url.password,
        "database": url.database or "",
        "login_timeout": int(query.get("login_timeout", LOGIN_TIMEOUT_S)),
        "charset": query.get("charset", "UTF-8"),
        "appname": query.get("appname", "acts-sql"),
        "autocommit": True,
    }
    if "tds_version" in query:
        kwargs["tds_version"] = query["tds_version"]
    return kwargs


class MSSQLExecutor(DbapiExecutor):
    """Runs statements on one SQL Server database, always rolled back."""

    spec = DIALECT
    permit_when_writing = PERMIT_IN_ROLLBACK

    def session_setup(self) -> list[str]:
        return session_setup_sql()

    def begin_sql(self, *, read_only: bool) -> list[str]:
        return begin_sql()

    def rollback(self, conn: Any) -> None:
        cursor = conn.cursor()
        try:
            cursor.execute(rollback_sql())
        finally:
            cursor.close()

    def set_timeout(self, conn: Any, seconds: float) -> None:
        conn._conn.query_timeout = query_timeout(seconds)

    def statement_text(self, statement: str) -> str:
        return statement

    def classify(self, exc: BaseException, *, timeout: float, statement: str) -> ExecResult:
        return classify(exc, timeout=timeout)

    def _probe_statement(self, statement: str) -> ExecResult | None:
        found = self.run_internal(probe_sql(statement), max_rows=1)
        if not found.ok:
            return found if found.error_kind in ("syntax", "schema", "type") else None
        if not found.rows:
            return None
        number, message = found.rows[0][0], str(found.rows[0][1])
        number = number if isinstance(number, int) else None
        return ExecResult(
            status="error",
            error=message,
            error_kind=kind_of(number),
            error_code=str(number) if number is not None else None,
        )


def open_url(
    url: str,
    *,
    timeout: float | None,
    max_rows: int | None,
    allow_writes: bool = False,
) -> MSSQLExecutor:
    """An executor for `mssql+pymssql://user:password@host:1433/database`.

    Connects at once, so a wrong host or password is reported here.
    """
    parsed = parse_url(url)
    if parsed.dialect != "sqlserver":
        raise DatabaseOpenError(f"not a SQL Server URL: {parsed.redacted()}")
    kwargs = connect_kwargs(parsed)

    def connect() -> Any:
        import pymssql

        return pymssql.connect(**kwargs)

    executor = MSSQLExecutor(connect, timeout=timeout, max_rows=max_rows, allow_writes=allow_writes)
    probe = executor.execute("SELECT 1")
    if not probe.ok:
        executor.close()
        raise DatabaseOpenError(
            f"cannot open SQL Server database {parsed.describe()}: {probe.error}",
            url=parsed.redacted(),
        )
    return executor
