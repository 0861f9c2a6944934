"""Pieces shared by the DuckDB, SQL Server and Oracle executors.

Small, mostly pure functions: typed results for the usual outcomes, the
BIRD-CRITIC limits, fetching at most `max_rows` rows from a DB-API cursor,
and stand-in tables written as empty CTEs. (Reflection is `db.reflect`,
shared with the PostgreSQL and MySQL executors.)
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from acts_sql.db.cells import json_safe
from acts_sql.db.executor import DEFAULT_MAX_ROWS
from acts_sql.db.result import ExecResult
from acts_sql.db.statements import strip_leading_comments
from acts_sql.sql.dialects import Dialect

REFLECT_TIMEOUT_S = 10.0

CellConverter = Callable[[Any], Any]


# ------------------------------------------------------------------ results


def since(started: float) -> float:
    """Seconds since `started` (a `time.monotonic()` value), rounded to µs."""
    return round(time.monotonic() - started, 6)


def row_cap(max_rows: int | None, default: int = DEFAULT_MAX_ROWS) -> int:
    """The row cap to apply: `max_rows`, else `default`; never negative."""
    return default if max_rows is None else max(0, max_rows)


def no_statement() -> ExecResult:
    return ExecResult(status="error", error="no SQL statement to execute", error_kind="syntax")


def fetch_result(cursor: Any, max_rows: int, convert: CellConverter = json_safe) -> ExecResult:
    """The result of a DB-API cursor that has just executed one statement.

    A statement without a result set reports the driver's rowcount. Otherwise
    at most `max_rows + 1` rows are fetched (`fetchmany`), `max_rows` kept,
    and `truncated` set when there were more.
    """
    if not cursor.description:
        count = cursor.rowcount if isinstance(cursor.rowcount, int) else 0
        return ExecResult(status="ok", row_count=max(count, 0))
    columns = [str(col[0]) for col in cursor.description]
    fetched = list(cursor.fetchmany(max_rows + 1)) if max_rows >= 0 else []
    rows = [[convert(cell) for cell in row] for row in fetched[:max_rows]]
    return ExecResult(
        status="ok",
        columns=columns,
        rows=rows,
        row_count=len(rows),
        truncated=len(fetched) > max_rows,
    )


def shift_position(result: ExecResult, offset: int) -> ExecResult:
    """`result` with its error position counted from `offset` characters earlier."""
    if result.error_position is None or offset == 0:
        return result
    return result.model_copy(update={"error_position": result.error_position + offset})


def located(sql: str, pieces: Iterable[str]) -> list[tuple[int, str]]:
    """Each piece of `sql` (in order) with the offset where it starts in `sql`."""
    found: list[tuple[int, str]] = []
    cursor = 0
    for piece in pieces:
        at = sql.find(piece, cursor)
        at = cursor if at < 0 else at
        found.append((at, piece))
        cursor = at + len(piece)
    return found


# ------------------------------------------------------------------ SQL it writes


_PLAIN_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_$#]*")
_ORACLE_RESERVED = frozenset(
    re.findall(
        r"\w+",
        """ACCESS ADD ALL ALTER AND ANY AS ASC AUDIT BETWEEN BY CHAR CHECK CLUSTER COLUMN COMMENT
    COMPRESS CONNECT CREATE CURRENT DATE DECIMAL DEFAULT DELETE DESC DISTINCT DROP ELSE EXCLUSIVE
    EXISTS FILE FLOAT FOR FROM GRANT GROUP HAVING IDENTIFIED IMMEDIATE IN INCREMENT INDEX INITIAL
    INSERT INTEGER INTERSECT INTO IS LEVEL LIKE LOCK LONG MAXEXTENTS MINUS MLSLABEL MODE MODIFY
    NOAUDIT NOCOMPRESS NOT NOWAIT NULL NUMBER OF OFFLINE ON ONLINE OPTION OR ORDER PCTFREE PRIOR
    PUBLIC RAW RENAME RESOURCE REVOKE ROW ROWID ROWNUM ROWS SELECT SESSION SET SHARE SIZE SMALLINT
    START SUCCESSFUL SYNONYM SYSDATE TABLE THEN TO TRIGGER UID UNION UNIQUE UPDATE USER VALIDATE
    VALUES VARCHAR VARCHAR2 VIEW WHENEVER WHERE WITH""",
    )
)


def stand_in_name(name: str, dialect: Dialect) -> str:
    """How a stand-in's name (or column) is written so the unit's own,
    usually unquoted, references find it.

    Oracle folds unquoted names to upper case, so a plain name is written
    unquoted (quoting `"dep"` would make it lower case and unreachable); any
    other name, and every name elsewhere, is quoted.
    """
    plain = _PLAIN_NAME.fullmatch(name) is not None and name.upper() not in _ORACLE_RESERVED
    if dialect.name == "oracle" and plain:
        return name
    return dialect.quote_identifier(name)


def stand_in_cte(name: str, columns: Sequence[str], dialect: Dialect) -> str:
    """`name (c1, c2) AS (SELECT NULL, NULL [FROM dual] WHERE 1 = 0)`: an empty
    relation whose untyped NULL columns combine with any type."""
    cols = ", ".join(stand_in_name(col, dialect) for col in columns)
    nulls = ", ".join("NULL" for _ in columns)
    source = " FROM dual" if dialect.name == "oracle" else ""
    return f"{stand_in_name(name, dialect)} ({cols}) AS (SELECT {nulls}{source} WHERE 1 = 0)"


_WITH_HEAD = re.compile(r"WITH\b(\s+RECURSIVE\b)?", re.IGNORECASE)


def with_stand_ins(sql: str, stand_ins: Mapping[str, Sequence[str]], dialect: Dialect) -> str:
    """`sql` with every stand-in prepended as an empty CTE.

    Works on the text, so a unit with a syntax error still reaches the server
    and gets the server's own message: a statement starting with WITH gets
    the stand-ins first in its CTE list, any other is prefixed with a WITH.
    """
    if not stand_ins:
        return sql
    body = strip_leading_comments(sql)
    defs = ", ".join(stand_in_cte(name, cols, dialect) for name, cols in stand_ins.items())
    head = _WITH_HEAD.match(body)
    if head is None:
        return f"WITH {defs}\n{body}"
    return f"{body[: head.end()]} {defs},{body[head.end() :]}"
