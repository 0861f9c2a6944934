"""A quote-aware scanner for SQL text that sqlglot cannot tokenize.

sqlglot's tokenizer gives up on an unterminated string, identifier or block
comment. The fallbacks (splitting statements, locating the error, normalising
text) still need to know which characters are code and which are inside a
literal or a comment; this scanner tells them, following the dialect's
declared lexical rules, and never fails: an unterminated span runs to the end.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from acts_sql.sql.dialects import Dialect

SpanKind = Literal["code", "string", "identifier", "comment"]


@dataclass(frozen=True)
class Span:
    """A run of `sql[start:end]` of one kind; `terminated` is False for an open quote."""

    kind: SpanKind
    start: int
    end: int
    terminated: bool = True


def scan(sql: str, dialect: Dialect) -> list[Span]:
    """Cut `sql` into consecutive code, string, identifier and comment spans."""
    spans: list[Span] = []
    code_start = 0
    i = 0
    n = len(sql)
    while i < n:
        opened = _open_span(sql, i, dialect)
        if opened is None:
            i += 1
            continue
        kind, close, body_start = opened
        if code_start < i:
            spans.append(Span("code", code_start, i))
        end, terminated = _find_close(sql, body_start, close, kind, dialect)
        spans.append(Span(kind, i, end, terminated))
        i = code_start = end
    if code_start < n:
        spans.append(Span("code", code_start, n))
    return spans


def _open_span(sql: str, i: int, dialect: Dialect) -> tuple[SpanKind, str, int] | None:
    """If a literal or comment opens at `i`: its kind, closing text and body offset."""
    ch = sql[i]
    if sql.startswith("/*", i):
        return "comment", "*/", i + 2
    for marker in dialect.line_comments:
        if sql.startswith(marker, i):
            return "comment", "\n", i + len(marker)
    if ch in dialect.string_quotes:
        return "string", ch, i + 1
    for open_quote, close_quote in dialect.identifier_quotes:
        if ch == open_quote:
            return "identifier", close_quote, i + 1
    if dialect.dollar_quoting and ch == "$":
        j = i + 1
        while j < len(sql) and (sql[j].isalnum() or sql[j] == "_"):
            j += 1
        tag = sql[i : j + 1]
        preceded_by_word = i > 0 and (sql[i - 1].isalnum() or sql[i - 1] == "_")
        if j < len(sql) and sql[j] == "$" and not tag[1:-1][:1].isdigit() and not preceded_by_word:
            return "string", tag, j + 1
    return None


def _find_close(sql: str, i: int, close: str, kind: SpanKind, dialect: Dialect) -> tuple[int, bool]:
    """End offset (exclusive) of a span whose body starts at `i`, and whether it closed."""
    n = len(sql)
    while i < n:
        if kind == "string" and dialect.backslash_escapes and sql[i] == "\\" and len(close) == 1:
            i += 2
            continue
        if sql.startswith(close, i):
            end = i + len(close)
            # A doubled quote inside a quoted string or identifier is an escaped quote.
            if kind in ("string", "identifier") and len(close) == 1 and sql.startswith(close, end):
                i = end + 1
                continue
            return (end if close != "\n" else i), True
        i += 1
    return n, kind == "comment" and close == "\n"


def line_col(sql: str, offset: int) -> tuple[int, int]:
    """1-based (line, column) of character `offset` of `sql`."""
    offset = max(0, min(offset, len(sql)))
    line = sql.count("\n", 0, offset) + 1
    column = offset - (sql.rfind("\n", 0, offset) + 1) + 1
    return line, column
