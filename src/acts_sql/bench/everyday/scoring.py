"""Scoring `bench everyday`: does an answer return the gold SQL's rows?

The log benchmark's result comparison (`acts_sql.bench.logs.scoring`):
rows as a multiset (in order only when the gold SQL ends in ORDER BY),
column names ignored, columns in any order, numbers to 6 significant digits.
Two differences for correction: the answer must have exactly the gold's
columns (no extra ones: `SELECT *` is not a fix), and a number the executor
passed on as text (a PostgreSQL NUMERIC too long for a float,
`acts_sql.db.cells`) compares as the number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from acts_sql.bench.logs.scoring import GoldResult, canonical_rows, equivalent
from acts_sql.db.result import ExecResult

_NUMBER = re.compile(r"^-?\d+\.\d+$")


def _numbers(rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    return [
        [float(v) if isinstance(v, str) and _NUMBER.match(v) else v for v in row] for row in rows
    ]


def gold_result(result: ExecResult, ordered: bool) -> GoldResult:
    """The gold result of a gold SQL that ran."""
    return GoldResult(
        columns=result.columns, rows=canonical_rows(_numbers(result.rows)), ordered=ordered
    )


def returns_gold(result: ExecResult | None, gold: GoldResult) -> bool:
    """Whether `result` (a statement that ran, whole) has the gold rows and columns."""
    if result is None or not result.ok or result.truncated:
        return False
    if len(result.columns) != len(gold.columns):
        return False
    return equivalent(_numbers(result.rows), gold)
