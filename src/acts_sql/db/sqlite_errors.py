"""Turning SQLite exceptions into typed, prompt-friendly failures."""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass

from acts_sql.db.result import BLOCKED_WRITE, ErrorKind, ExecResult, ExecStatus

_SYNTAX = re.compile(r'near ".*": syntax error|incomplete input|unrecognized token', re.DOTALL)
_SCHEMA = re.compile(
    r"^(no such (column|table|function|module|collation sequence|window)"
    r"|ambiguous column name|.* has no column named )"
)
_TYPE = re.compile(r"datatype mismatch|wrong number of arguments to function")


@dataclass(frozen=True)
class Failure:
    """How one failed statement is reported."""

    status: ExecStatus
    kind: ErrorKind
    message: str
    code: str | None


def classify(exc: BaseException, *, denied: str | None = None, timeout: float = 0.0) -> Failure:
    """Classify an exception raised while running one statement.

    ``denied`` is the reason the authorizer gave, if it refused something;
    ``timeout`` is the limit that applied, used in the timeout message.
    """
    message = str(exc).strip() or type(exc).__name__
    code = getattr(exc, "sqlite_errorname", None)
    if not isinstance(exc, sqlite3.Error):
        return Failure("error", "other", message, code)
    if message == "interrupted" or code == "SQLITE_INTERRUPT":
        return Failure("timeout", "timeout", f"timeout: statement exceeded {timeout:g} s", code)
    if "readonly database" in message or (code or "").startswith("SQLITE_READONLY"):
        return Failure("blocked", "blocked", BLOCKED_WRITE, code)
    if message.startswith("not authorized") or code == "SQLITE_AUTH":
        return Failure("blocked", "blocked", f"blocked: {denied or 'not authorized'}", code)
    if _SYNTAX.search(message):
        return Failure("error", "syntax", message, code)
    if _SCHEMA.search(message):
        return Failure("error", "schema", message, code)
    if _TYPE.search(message):
        return Failure("error", "type", message, code)
    return Failure("error", "runtime", message, code)


def failure_result(failure: Failure, seconds: float) -> ExecResult:
    """The ExecResult for a classified failure."""
    return ExecResult(
        status=failure.status,
        error=failure.message,
        error_kind=failure.kind,
        error_code=failure.code,
        seconds=seconds,
    )
