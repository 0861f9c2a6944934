"""The read-only guard: may this SQL run against a user's database?

Fails closed: anything that is not provably a read is blocked. This first
version allows a text only when sqlglot parses it into statements that are
all plain queries (SELECT, set operations, WITH ... SELECT) without INTO.

    >>> check_statement("SELECT 1", "sqlite").allowed
    True
    >>> check_statement("DROP TABLE users", "sqlite").reason
    'writes are not allowed: DROP'
"""

from __future__ import annotations

from pydantic import BaseModel
from sqlglot import exp

from acts_sql.errors import SqlParseError
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.dialects import Dialect, get_dialect


class SafetyVerdict(BaseModel):
    """Whether a text may run read-only; when not, why (shown to the agent)."""

    allowed: bool
    reason: str | None = None
    category: str | None = None
    """write, ddl, dcl, session, procedure, file, unparseable, ..."""


_READS = (exp.Select, exp.Union, exp.Intersect, exp.Except)


def check_statement(sql: str, dialect: str | Dialect) -> SafetyVerdict:
    """Verdict for a text of one or more statements in `dialect`."""
    d = get_dialect(dialect)
    try:
        statements = parse_statements(sql, d)
    except SqlParseError as error:
        return SafetyVerdict(
            allowed=False, reason=f"cannot be checked: {error}", category="unparseable"
        )
    for statement in statements:
        if not isinstance(statement, _READS) or statement.find(exp.Into) is not None:
            kind = statement.key.upper()
            return SafetyVerdict(
                allowed=False, reason=f"writes are not allowed: {kind}", category="write"
            )
    return SafetyVerdict(allowed=True)
