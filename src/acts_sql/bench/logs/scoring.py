"""Scoring by result equivalence: does a query return the gold rows?

A prediction is right when it returns the gold result's rows (as a multiset,
or in order for a task whose answer is ordered), where

- values compare after `canonical_value`: numbers to 6 significant digits
  (an average computed as SUM/COUNT equals AVG), integers equal to floats,
  a day as a timestamp at midnight, a date or an ISO date string alike;
- columns may come in any order, and extra columns are allowed (a "which
  service" question answered with the service and its count is right), but
  every gold column must be matched by one column of the prediction;
- the row count must be the same (no extra and no missing rows).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from pydantic import BaseModel, model_validator

Cell = str | None
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$")


class GoldResult(BaseModel):
    columns: list[str]
    rows: list[list[Cell]]
    """Canonical cells (`canonical_value`); sorted when the answer is not ordered, so that two
    gold results compare equal whatever order the database returned the rows in."""
    ordered: bool = False

    @model_validator(mode="after")
    def _unordered_rows_sorted(self) -> GoldResult:
        if not self.ordered:
            self.rows.sort(key=lambda row: [(cell is not None, cell or "") for cell in row])
        return self


def canonical_value(value: Any) -> Cell:
    """One cell as a comparable text (see the module doc); None stays None."""
    if value is None:
        return None
    if isinstance(value, int | float | Decimal):  # bool too: True is 1
        number = float(value)
        rounded = float(f"{number:.6g}") + 0.0  # + 0.0: -0.0 is 0.0
        return f"n:{rounded!r}"
    if isinstance(value, datetime):
        return _moment(value)
    if isinstance(value, date):
        return f"t:{value.isoformat()}"
    text = str(value)
    if _DATE.match(text):
        return f"t:{text}"
    if _DATETIME.match(text):
        try:
            return _moment(datetime.fromisoformat(text))
        except ValueError:
            return f"s:{text}"
    return f"s:{text}"


def _moment(value: datetime) -> str:
    if value.hour == value.minute == value.second == value.microsecond == 0:
        return f"t:{value.date().isoformat()}"
    spec = "microseconds" if value.microsecond else "seconds"
    return f"t:{value.replace(tzinfo=None).isoformat(sep=' ', timespec=spec)}"


def canonical_rows(rows: Sequence[Sequence[Any]]) -> list[list[Cell]]:
    return [[canonical_value(v) for v in row] for row in rows]


def equivalent(predicted: Sequence[Sequence[Any]], gold: GoldResult) -> bool:
    """Whether `predicted` (raw rows) returns the gold result (see the module doc)."""
    rows = canonical_rows(predicted)
    if len(rows) != len(gold.rows):
        return False
    if not gold.rows:
        return True
    width = len(gold.rows[0])
    if any(len(row) < width for row in rows):
        return False
    return any(_same(rows, gold, mapping) for mapping in _mappings(rows, gold))


def _column(rows: list[list[Cell]], index: int) -> list[Cell]:
    return [row[index] for row in rows]


def _mappings(rows: list[list[Cell]], gold: GoldResult) -> Iterator[list[int]]:
    """Assignments gold column -> distinct predicted column whose values could match."""
    width = len(gold.rows[0])
    pred_width = len(rows[0])

    def key(values: list[Cell]) -> Any:
        return values if gold.ordered else Counter(values)

    wanted = [key(_column(gold.rows, j)) for j in range(width)]
    have = [key(_column(rows, k)) for k in range(pred_width)]
    options = [[k for k in range(pred_width) if have[k] == wanted[j]] for j in range(width)]

    def extend(j: int, taken: list[int]) -> Iterator[list[int]]:
        if j == width:
            yield list(taken)
            return
        for k in options[j]:
            if k not in taken:
                taken.append(k)
                yield from extend(j + 1, taken)
                taken.pop()

    yield from extend(0, [])


def _same(rows: list[list[Cell]], gold: GoldResult, mapping: list[int]) -> bool:
    projected = [[row[k] for k in mapping] for row in rows]
    if gold.ordered:
        return projected == gold.rows
    return Counter(map(tuple, projected)) == Counter(map(tuple, gold.rows))
