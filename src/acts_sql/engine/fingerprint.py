"""Result fingerprints: which candidates return the same answer.

Candidates are grouped by what they return, not by how they are written: two
queries whose rows are equal belong to one group, and the size of a group is
evidence (several independent generations that agree). A fingerprint is a
hash of the rows, order-insensitive unless the statement's outermost query
orders them. Column names are left out (an alias changes nothing the user
sees in the values); the number of columns is kept. Values are canonicalised
so that equal answers hash equal across drivers: numbers compare by value
(floats rounded to 6 significant digits, ``Decimal`` and ``int`` alike), dates
and times as ISO text, bytes as hex, JSON-like cells (dicts, lists) as sorted
JSON.

A statement that returns no result set (DDL, DML) cannot be compared by its
rows; its fingerprint is its canonical SQL text instead, so each distinct
statement is a group of its own.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections import Counter
from decimal import Decimal
from itertools import combinations
from typing import Any

from pydantic import BaseModel, Field

from acts_sql.db.result import ExecResult
from acts_sql.sql.query_text import normalize_sql
from acts_sql.sql.repairs import has_top_level_order_by

_SIGNIFICANT = 6


def canonical_cell(value: Any) -> Any:
    """A JSON-serialisable, driver-independent form of one cell."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float | Decimal):
        number = float(value)
        if math.isnan(number) or math.isinf(number):
            return str(number)
        if number == int(number) and abs(number) < 2**53:
            return int(number)
        return float(f"{number:.{_SIGNIFICANT}g}")
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return f"interval:{value.total_seconds()}"
    if isinstance(value, bytes | bytearray | memoryview):
        return "hex:" + bytes(value).hex()
    if isinstance(value, dict):
        return {
            str(k): canonical_cell(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))
        }
    if isinstance(value, list | tuple):
        return [canonical_cell(v) for v in value]
    return str(value)


def canonical_row(row: list[Any]) -> str:
    return json.dumps([canonical_cell(v) for v in row], sort_keys=True, ensure_ascii=False)


class ResultShape(BaseModel):
    """What grouping and comparisons need of one executed statement."""

    fingerprint: str
    ordered: bool = False
    has_rows: bool = Field(False, description="the statement returned a result set")
    row_keys: list[str] = Field(default_factory=list, description="canonical rows (first 10,000)")
    columns: int = 0
    truncated: bool = False
    """The row cap cut the result: equal first rows say nothing about the rest."""


def result_shape(sql: str, result: ExecResult, dialect: str) -> ResultShape | None:
    """The fingerprint of an executed statement; None when it did not run."""
    if not result.ok:
        return None
    if not result.columns:
        text = normalize_sql(sql, dialect)
        return ResultShape(fingerprint="stmt:" + _digest(text))
    ordered = has_top_level_order_by(sql, dialect)
    keys = [canonical_row(list(row)) for row in result.rows]
    body = keys if ordered else sorted(keys)
    digest = _digest(json.dumps([len(result.columns), ordered, result.truncated, body]))
    return ResultShape(
        fingerprint="rows:" + digest,
        ordered=ordered,
        has_rows=True,
        row_keys=keys,
        columns=len(result.columns),
        truncated=result.truncated,
    )


def same_rows(a: ResultShape | None, b: ResultShape | None) -> bool:
    """Whether two complete result sets hold the same rows (as multisets; order ignored)."""
    if a is None or b is None or not a.has_rows or not b.has_rows:
        return False
    if a.truncated or b.truncated:
        return False
    return a.columns == b.columns and Counter(a.row_keys) == Counter(b.row_keys)


PROJECTION_MAX_CONSTANT = 8
"""More constant columns than this in the user's result: the projection test is not tried."""


def same_rows_less_constant_columns(
    candidate: ResultShape | None, original: ResultShape | None
) -> bool:
    """Whether `candidate` holds the rows of `original` with some of its constant columns
    left out (column order kept; at least two rows, both results complete): the user's
    answer again, less a column that says nothing (a flag equal on every row)."""
    if candidate is None or original is None or not candidate.has_rows or not original.has_rows:
        return False
    if candidate.truncated or original.truncated or len(original.row_keys) < 2:
        return False
    dropped = original.columns - candidate.columns
    if dropped < 1 or len(candidate.row_keys) != len(original.row_keys):
        return False
    rows = [json.loads(key) for key in original.row_keys]
    constant = [i for i in range(original.columns) if all(r[i] == rows[0][i] for r in rows)]
    if len(constant) < dropped or len(constant) > PROJECTION_MAX_CONSTANT:
        return False
    wanted = Counter(candidate.row_keys)
    for left_out in combinations(constant, dropped):
        kept = [i for i in range(original.columns) if i not in left_out]
        projected = Counter(
            json.dumps([r[i] for i in kept], sort_keys=True, ensure_ascii=False) for r in rows
        )
        if projected == wanted:
            return True
    return False


class RowDelta(BaseModel):
    """Rows a candidate adds and removes relative to the user's result."""

    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    added_count: int = 0
    removed_count: int = 0
    comparable: bool = True


def row_delta(candidate: ResultShape, original: ResultShape | None, show: int = 3) -> RowDelta:
    """Multiset difference of the rows (the first `show` of each side kept)."""
    if original is None or not original.has_rows or not candidate.has_rows:
        return RowDelta(comparable=False)
    if original.columns != candidate.columns:
        return RowDelta(comparable=False)
    mine, theirs = Counter(candidate.row_keys), Counter(original.row_keys)
    added = list((mine - theirs).elements())
    removed = list((theirs - mine).elements())
    return RowDelta(
        added=added[:show],
        removed=removed[:show],
        added_count=len(added),
        removed_count=len(removed),
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
