"""Helpers that the official test cases call, shared by the PostgreSQL and MySQL evaluators.

Test cases are Python sources from the benchmark; they call these functions by
name, so names, signatures and results follow the official evaluator exactly
(quirks included: ``remove_distinct`` deletes the word anywhere, even inside
string literals; ``check_sql_function_usage`` is a substring test).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

MAX_ROWS = 10_000
STATEMENT_TIMEOUT_S = 60
RECURSIVE_TIMEOUT_S = 15
RECURSIVE_MARKER = "WITH RECURSIVE"

_MISSING_EXTENSION = re.compile(r'extension "([^"]+)" is not available')
_DISTINCT_WORD = re.compile(r"\bDISTINCT\b", re.IGNORECASE)
DML_PREFIXES = ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")


@dataclass
class ExecOutcome:
    """What running a list of statements on one connection gave.

    ``rows`` is the last successful statement's rows (None when it returned
    none); ``error`` and ``timeout`` are the official flags; ``messages``
    explains them, for the evaluator's reasons.
    """

    rows: list[tuple[Any, ...]] | None = None
    error: bool = False
    timeout: bool = False
    messages: list[str] = field(default_factory=list)
    missing_table: str | None = None
    """A table the statements needed and nobody created (not the SQL's fault on its own)."""
    missing_extension: str | None = None
    """A server extension (PostgreSQL) the statements needed and the server lacks."""

    @property
    def ok(self) -> bool:
        return not (self.error or self.timeout)


def is_recursive(query: str) -> bool:
    """The official test for the shorter timeout: the words WITH RECURSIVE anywhere."""
    return RECURSIVE_MARKER in query.upper()


def statement_timeout_s(query: str) -> int:
    return RECURSIVE_TIMEOUT_S if is_recursive(query) else STATEMENT_TIMEOUT_S


def counts_as_missing(query: str) -> bool:
    """Whether a missing-table error of this statement means the task needs an absent table.

    A DROP of a table that is not there is harmless: the task recreates it.
    """
    return not query.lstrip().upper().startswith("DROP")


def missing_extension(message: str) -> str | None:
    """The extension named by a PostgreSQL "extension ... is not available" error, if it is one."""
    match = _MISSING_EXTENSION.search(message)
    return match.group(1) if match else None


def preprocess_results(results: Any) -> list[tuple[Any, ...]]:
    """Rows as tuples, with every date or datetime cell written as ``YYYY-MM-DD``."""
    processed = []
    for row in results:
        cells = [
            item.strftime("%Y-%m-%d") if isinstance(item, date | datetime) else item for item in row
        ]
        processed.append(tuple(cells))
    return processed


def remove_distinct(sql_list: list[str]) -> list[str]:
    """Every statement with the word DISTINCT (any case, whole word) deleted."""
    return [_DISTINCT_WORD.sub("", query) for query in sql_list]


def check_sql_function_usage(sqls: list[str] | None, required_keywords: list[str]) -> int:
    """1 if every keyword occurs (case-insensitive substring) in the joined statements, else 0."""
    if not sqls:
        return 0
    combined = " ".join(sql.lower() for sql in sqls)
    return 1 if all(kw.lower() in combined for kw in required_keywords) else 0


def same_row_sets(predicted: list[tuple[Any, ...]], expected: list[tuple[Any, ...]]) -> int:
    """The official comparison: 1 if the two results hold the same set of rows."""
    return 1 if set(predicted) == set(expected) else 0


def starts_like_dml(sql: str, prefixes: tuple[str, ...] = DML_PREFIXES) -> bool:
    """Whether the cost comparison EXPLAINs this statement (else it just runs it)."""
    return sql.strip().upper().startswith(prefixes)
