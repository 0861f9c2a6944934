"""Splitting a SQL string into statements, without a parser.

SQLite's own ``complete_statement`` decides where a statement ends, so
semicolons inside strings, quoted identifiers, comments and trigger bodies
(``BEGIN ... END;``) never split a statement. A small lexer only tells
whether a piece holds anything besides whitespace, comments and semicolons.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterable

_RECURSIVE_HEAD = re.compile(r"WITH\s+RECURSIVE\b", re.IGNORECASE)

Located = list[tuple[int, str]]
"""Statements with the 0-based offset where each starts in the caller's text."""


def split_statements(sql: str) -> list[str]:
    """The statements of ``sql`` in order, each with its text as written.

    Pieces holding only whitespace, comments or semicolons are dropped; a
    trailing statement without a semicolon is kept.
    """
    pieces: list[str] = []
    start = 0
    for pos, char in enumerate(sql):
        if char != ";":
            continue
        candidate = sql[start : pos + 1]
        if sqlite3.complete_statement(candidate):
            pieces.append(candidate)
            start = pos + 1
    pieces.append(sql[start:])
    return [piece.strip() for piece in pieces if has_code(piece)]


def has_code(sql: str) -> bool:
    """True when ``sql`` holds more than whitespace, comments and semicolons."""
    return bool(strip_leading_comments(sql))


def strip_leading_comments(sql: str) -> str:
    """``sql`` without the whitespace, semicolons and comments it starts with."""
    text = sql
    while True:
        text = text.lstrip()
        if text.startswith("--"):
            newline = text.find("\n")
            text = "" if newline < 0 else text[newline + 1 :]
        elif text.startswith("/*"):
            end = text.find("*/", 2)
            text = "" if end < 0 else text[end + 2 :]
        elif text.startswith(";"):
            text = text[1:]
        else:
            return text


def is_recursive(sql: str) -> bool:
    """True when the statement starts with ``WITH RECURSIVE`` (shorter timeout)."""
    return bool(_RECURSIVE_HEAD.match(strip_leading_comments(sql)))


def located(sql: str, pieces: Iterable[str]) -> Located:
    """Each piece of `sql` (in order) with the offset where it starts in `sql`."""
    found: Located = []
    cursor = 0
    for piece in pieces:
        at = sql.find(piece, cursor)
        at = cursor if at < 0 else at
        found.append((at, piece))
        cursor = at + len(piece)
    return found
