"""Turning psycopg errors into typed, prompt-friendly results.

PostgreSQL reports a SQLSTATE for every error and, for most syntax and name
errors, the 1-based character position in the statement; both are kept
(`error_code`, `error_position`) and the message gets psql's `LINE n:` line
with a caret.
"""

from __future__ import annotations

from typing import Any

from acts_sql.db.guard import caret_context
from acts_sql.db.result import ErrorKind, ExecResult, timeout_result, write_blocked_result

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
