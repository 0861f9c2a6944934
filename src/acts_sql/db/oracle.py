"""The Oracle executor (python-oracledb, thin mode). UNTESTED against a live server.

Every piece of SQL it sends comes from a small pure function below, unit
tested to parse with sqlglot's Oracle dialect; the execute loop is
`DbapiExecutor`, tested with a fake DB-API connection.

- Read-only: the guard first; then every batch is a `SET TRANSACTION READ
  ONLY` transaction (the server refuses DML in it), always rolled back.
- Writes (`allow_writes=True`): no throw-away copy is possible here, so DML
  runs in a transaction that is always rolled back. DDL stays blocked:
  Oracle commits implicitly before and after every DDL statement, so it could
  never be rolled back.
- Timeout: the connection's `call_timeout` (milliseconds) per statement.
- Row cap: `fetchmany(max_rows + 1)`. Oracle SQL takes no trailing `;`, so
  it is removed.
- Stand-ins: empty CTEs (`CteScratchSession`), not private temporary tables:
  those need the `ORA$PTT_` prefix, which the unit's plain references do not
  have, and the CREATE TABLE privilege.
- Syntax probe for text the guard cannot read: `cursor.parse()`, only for
  statements that start with SELECT or WITH (parsing DDL would run it).
"""

from __future__ import annotations

import math
import re
from typing import Any

from acts_sql.db.cells import json_safe
from acts_sql.db.dbapi_executor import DbapiExecutor
from acts_sql.db.result import ErrorKind, ExecResult, timeout_result, write_blocked_result
from acts_sql.db.statements import strip_leading_comments
from acts_sql.db.url import DatabaseURL, parse_url
from acts_sql.errors import DatabaseOpenError
from acts_sql.sql.dialects import get_dialect
from acts_sql.sql.safety import PERMIT_IN_ROLLBACK_NO_DDL

DIALECT = get_dialect("oracle")
MAX_LOB_CHARS = 65_536

# ------------------------------------------------------------------ SQL it sends


def session_setup_sql() -> list[str]:
    """Nothing: read-only is set per transaction (`begin_sql`), and the
    session's NLS settings stay the user's, so their SQL behaves as usual."""
    return []


def begin_sql(*, read_only: bool) -> list[str]:
    """Opens every batch's transaction: read-only unless writes are allowed."""
    statement = DIALECT.read_only_begin or "SET TRANSACTION READ ONLY"
    return [statement] if read_only else []


_PLSQL_END = re.compile(r"\bEND(\s+\w+)?\s*;\s*$", re.IGNORECASE)


def statement_text(statement: str) -> str:
    """The statement as Oracle takes it: no trailing `;` (PL/SQL keeps its `END;`)."""
    text = statement.strip()
    if _PLSQL_END.search(text):
        return text
    return text.rstrip(";").rstrip()


def call_timeout_ms(seconds: float) -> int:
    """`Connection.call_timeout`: milliseconds, at least 1 (0 means none)."""
    return max(1, math.ceil(seconds * 1000))


_SAFE_TO_PARSE = re.compile(r"(SELECT|WITH)\b", re.IGNORECASE)


def safe_to_parse(statement: str) -> bool:
    """Whether `cursor.parse()` may see `statement`: only queries, since Oracle
    runs DDL at parse time."""
    return _SAFE_TO_PARSE.match(strip_leading_comments(statement)) is not None


# ------------------------------------------------------------------ errors

_CODE = re.compile(r"\b(ORA|DPY|DPI)-(\d{4,5})\b")

SCHEMA_CODES = frozenset(
    {"ORA-00904", "ORA-00942", "ORA-00918", "ORA-04043", "ORA-00980", "ORA-00957", "ORA-00955"}
)
TYPE_CODES = frozenset(
    {
        "ORA-00902",
        "ORA-00932",
        "ORA-01722",
        "ORA-01790",
        "ORA-01830",
        "ORA-01840",
        "ORA-01843",
        "ORA-01847",
        "ORA-01858",
        "ORA-01861",
        "ORA-06502",
    }
)
GROUPING_CODES = frozenset({"ORA-00934", "ORA-00937", "ORA-00979"})
"""Semantic errors that Oracle numbers among its parse errors: runtime here."""
EXTRA_SYNTAX_CODES = frozenset({"ORA-01756", "ORA-01740", "ORA-01789", "ORA-00972"})
TIMEOUT_CODES = frozenset({"DPY-4024", "DPI-1067", "DPI-1080", "ORA-03156", "ORA-01013"})
BLOCKED_CODES = frozenset({"ORA-01031", "ORA-01456", "ORA-16000", "ORA-01552"})
CONNECTION_CODES = frozenset(
    {
        "ORA-01017",
        "ORA-03113",
        "ORA-03114",
        "ORA-03135",
        "ORA-12170",
        "ORA-12514",
        "ORA-12541",
        "ORA-28000",
    }
)
"""Logon and network failures: the connection, not the statement, is at fault."""


def error_parts(exc: BaseException) -> tuple[str | None, str, int | None]:
    """(full code such as "ORA-00942", message, 0-based offset) of an oracledb error.

    oracledb raises with `args[0]` an error object carrying `full_code`,
    `message` and, for parse errors, `offset`.
    """
    args = getattr(exc, "args", ())
    error: Any = args[0] if args else None
    message = str(getattr(error, "message", None) or error or exc).strip()
    code = getattr(error, "full_code", None)
    if not code:
        match = _CODE.search(message)
        code = f"{match.group(1)}-{match.group(2)}" if match else None
    offset = getattr(error, "offset", None)
    return code, message, offset if isinstance(offset, int) and offset > 0 else None


def kind_of(code: str | None) -> ErrorKind:
    """The error kind of an Oracle error code."""
    if code is None or not code.startswith("ORA-") or code in CONNECTION_CODES:
        return "other"
    if code in SCHEMA_CODES:
        return "schema"
    if code in TYPE_CODES:
        return "type"
    if code in GROUPING_CODES:
        return "runtime"
    number = int(code[4:])
    if 900 <= number <= 999 or code in EXTRA_SYNTAX_CODES:
        return "syntax"
    return "runtime"


def classify(exc: BaseException, *, timeout: float) -> ExecResult:
    """The typed result of an oracledb exception."""
    code, message, offset = error_parts(exc)
    if code in TIMEOUT_CODES:
        return timeout_result(timeout, code)
    if code in BLOCKED_CODES:
        return write_blocked_result(code, message)
    return ExecResult(
        status="error",
        error=message,
        error_kind=kind_of(code),
        error_code=code,
        error_position=offset + 1 if offset is not None else None,
    )


def to_cell(value: Any) -> Any:
    """One Oracle cell as a JSON-safe value; LOBs are read (at most 64 K chars)."""
    read = getattr(value, "read", None)
    if callable(read):
        value = read(1, MAX_LOB_CHARS)
    return json_safe(value)


# ------------------------------------------------------------------ connecting


def connect_kwargs(url: DatabaseURL) -> dict[str, Any]:
    """oracledb.connect arguments for `oracle+oracledb://user:pw@host:1521/SERVICE`.

    The path names a service (`?sid=X` names a SID instead, `?service_name=X`
    overrides the path); `tcp_connect_timeout` is a query option too.
    """
    query = url.query
    kwargs: dict[str, Any] = {
        "user": url.username,
        "password": url.password,
        "host": url.host or "localhost",
        "port": url.port or DIALECT.default_port,
        "tcp_connect_timeout": float(query.get("tcp_connect_timeout", 15)),
    }
    if "sid" in query:
        kwargs["sid"] = query["sid"]
    else:
        kwargs["service_name"] = query.get("service_name") or url.database
    return kwargs


class OracleExecutor(DbapiExecutor):
    """Runs statements on one Oracle schema: read-only transactions, rolled back."""

    spec = DIALECT
    permit_when_writing = PERMIT_IN_ROLLBACK_NO_DDL

    def session_setup(self) -> list[str]:
        return session_setup_sql()

    def begin_sql(self, *, read_only: bool) -> list[str]:
        return begin_sql(read_only=read_only)

    def rollback(self, conn: Any) -> None:
        conn.rollback()

    def set_timeout(self, conn: Any, seconds: float) -> None:
        conn.call_timeout = call_timeout_ms(seconds)

    def statement_text(self, statement: str) -> str:
        return statement_text(statement)

    def classify(self, exc: BaseException, *, timeout: float, statement: str) -> ExecResult:
        return classify(exc, timeout=timeout)

    def convert(self, value: Any) -> Any:
        return to_cell(value)

    def _probe_statement(self, statement: str) -> ExecResult | None:
        if not safe_to_parse(statement):
            return None
        try:
            cursor = self._connection().cursor()
        except Exception:  # no connection: nothing to ask
            self._discard()
            return None
        try:
            cursor.parse(statement_text(statement))
        except Exception as exc:  # the server's own syntax error
            return classify(exc, timeout=0.0)
        finally:
            cursor.close()
        return None


def open_url(
    url: str,
    *,
    timeout: float | None,
    max_rows: int | None,
    allow_writes: bool = False,
) -> OracleExecutor:
    """An executor for `oracle+oracledb://user:password@host:1521/SERVICE`.

    Thin mode (no Oracle client libraries). Connects at once, so a wrong host
    or password is reported here.
    """
    parsed = parse_url(url)
    if parsed.dialect != "oracle":
        raise DatabaseOpenError(f"not an Oracle URL: {parsed.redacted()}")
    kwargs = connect_kwargs(parsed)

    def connect() -> Any:
        import oracledb

        return oracledb.connect(**kwargs)

    executor = OracleExecutor(
        connect, timeout=timeout, max_rows=max_rows, allow_writes=allow_writes
    )
    probe = executor.execute("SELECT 1 FROM dual")
    if not probe.ok:
        executor.close()
        raise DatabaseOpenError(
            f"cannot open Oracle database {parsed.describe()}: {probe.error}",
            url=parsed.redacted(),
        )
    return executor
