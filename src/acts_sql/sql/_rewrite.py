"""Shared helpers of the deterministic repairs: guarded sqlglot work, rendering.

`acts_sql.sql.repairs` and the rule package `acts_sql.sql.rules` both rewrite
statements with sqlglot and both must never raise on bad SQL; what they share
lives here. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TypeVar

from sqlglot import TokenType, exp
from sqlglot.errors import ErrorLevel, SqlglotError

from acts_sql.errors import ActsSqlError
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.dialects import Dialect
from acts_sql.sql.query_text import normalize_sql

_T = TypeVar("_T")

BAD_SQL_ERRORS = (
    SqlglotError,
    ActsSqlError,
    RecursionError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    AttributeError,
)
"""What sqlglot raises on text it cannot handle; a repair is optional, so none escapes."""


def guarded(default: _T, work: Callable[[], _T]) -> _T:
    """`work()`, or `default` when sqlglot fails on the text."""
    try:
        return work()
    except BAD_SQL_ERRORS:
        return default


def differs(candidate: str, original: str, d: Dialect) -> bool:
    """Whether `candidate` is another statement than `original` for the engine."""
    return bool(candidate.strip()) and normalize_sql(candidate, d) != normalize_sql(original, d)


def parses(sql: str, d: Dialect) -> bool:
    """Whether `sql` parses strictly in `d` (at least one statement)."""
    try:
        return bool(parse_statements(sql, d))
    except BAD_SQL_ERRORS:
        return False


def render(statements: Iterable[exp.Expr], d: Dialect, original: str, read: Dialect) -> str:
    """Statements written in `d`, separated by `;` and a line break.

    Where `d` reads "x" as the string 'x' when no column x exists (SQLite),
    quoted names get the dialect's strict quotes, so a misspelt `x` keeps
    failing instead of quietly becoming a string; unless `original` (read in
    `read`) has "x" itself, whose meaning double quotes keep.
    """
    strict = d.strict_identifier_quotes is not None and not double_quoted_names(original, read)
    return ";\n".join(
        d.generate(tree, strict_identifiers=strict, unsupported_level=ErrorLevel.IGNORE)
        for tree in statements
    )


def double_quoted_names(sql: str, d: Dialect) -> bool:
    """Whether `sql` has a "double-quoted" identifier (True when it cannot be tokenized)."""
    try:
        tokens = d.sqlglot_dialect.tokenize(sql)
    except SqlglotError:
        return True
    return any(
        t.token_type == TokenType.IDENTIFIER and sql[t.start : t.start + 1] == '"' for t in tokens
    )
