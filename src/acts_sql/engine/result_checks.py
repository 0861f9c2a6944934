"""Result checks that do not depend on the judge: does a result's shape fit the question?

Pure functions of the question's words and the result (columns, rows, row count). Each check
says `pass`, `fail` or `unknown`; they are conservative: a check that cannot tell says
`unknown`, and `unknown` never blocks. What the question's words ask for:

- **one row per group** ("for each X", "per X", "each X", "by day" and other time or category
  words): a single number (one row, one column) cannot be that answer; several rows pass,
  unless a two-column (key, number) result repeats a key; one row of several columns is
  `unknown` (the data may hold one group);
- **one number** ("how many", "count", "total number", "number of"), when no grouping is
  asked: one row of one number passes; several rows fail unless the question also asks for
  a list ("list", "which", "show", ...); one row of several columns is `unknown`;
- **rows** ("list", "show all", "show me", "what are the", ...): a single number from a
  question that asks no count fails (a list, not an aggregate);
- **empty**: no rows where any of the above expects rows fails.

A question that asks none of these gets only `unknown` checks.
"""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Any, Literal

from pydantic import BaseModel

from acts_sql.db.result import ExecResult

CheckVerdict = Literal["pass", "fail", "unknown"]
ROWS = "rows"

_GROUP_NOUN = r"(?!other\b|of\b|time\b|one\b|row\b|record\b|cent\b|se\b)[a-z_]\w*"
_GROUPING = re.compile(
    rf"\b(for\s+(each|every)\s+{_GROUP_NOUN}|per\s+{_GROUP_NOUN}|each\s+{_GROUP_NOUN}"
    r"|(grouped|broken\s+down|split|breakdown)\s+by\b"
    r"|by\s+(each\s+|the\s+)?(day|date|week|month|year|hour|minute|quarter|weekday|category"
    r"|type|status|region|country|city|state|department|level|service|endpoint|host)s?\b)",
    re.IGNORECASE,
)
_NOT_GROUPING = re.compile(
    r"\b(order(ed|ing)?|sort(ed|ing)?|rank(ed|ing)?|partition(ed)?)\s+by\s+\w+", re.IGNORECASE
)
"""An order, not a grouping: left out before `_GROUPING` looks for "by X"."""
_COUNT = re.compile(r"\b(how\s+many|count|total\s+number|number\s+of)\b", re.IGNORECASE)
_LIST = re.compile(
    r"\b(list|show\s+(all|me|the)|which|what\s+are|find\s+all|names\s+of|return\s+all)\b",
    re.IGNORECASE,
)
_PLAIN_LIST = re.compile(r"\b(list|show\s+all|find\s+all|return\s+all)\b", re.IGNORECASE)


class ShapeCheck(BaseModel):
    """One check of a result against the question."""

    name: str
    verdict: CheckVerdict
    detail: str


class Asks(BaseModel):
    """What the question's words ask of the result's shape."""

    grouping: bool = False
    count: bool = False
    listing: bool = False


def asks(question: str) -> Asks:
    """The shape the question asks for, from its words."""
    text = question or ""
    return Asks(
        grouping=bool(_GROUPING.search(_NOT_GROUPING.sub(" ", text))),
        count=bool(_COUNT.search(text)),
        listing=bool(_LIST.search(text)),
    )


def shape_checks(question: str, result: ExecResult) -> list[ShapeCheck]:
    """The shape checks of a result that ran (none for a result that did not run or has no
    result set); see the module doc."""
    if not result.ok or not result.columns:
        return []
    wanted = asks(question)
    checks = []
    if wanted.grouping or wanted.count or wanted.listing:
        checks.append(_empty_check(result))
    if wanted.grouping:
        checks.append(_grouping_check(result))
    elif wanted.count:
        checks.append(_count_check(result, listing=wanted.listing))
    if _PLAIN_LIST.search(question or "") and not wanted.count and not wanted.grouping:
        checks.append(_list_check(result))
    return checks


def judge_unsupported(question: str, result: ExecResult, votes: int) -> str | None:
    """Text-to-SQL mode: why a judge's "accept" of `result` (returned by `votes` independent
    candidates) stands on the judge alone, or None. Acceptance needs at least one check
    besides the judge: agreement (2 or more votes) or a shape check that passes; and no
    shape check may fail."""
    checks = shape_checks(question, result)
    bad = failed(checks)
    if bad:
        return f"a result check fails ({describe(bad)})"
    if votes < 2 and not passed(checks):
        return (
            "no check besides the judge supports it (one candidate returns it, and no shape "
            f"check passes: {describe(checks)})"
        )
    return None


def failed(checks: list[ShapeCheck]) -> list[ShapeCheck]:
    return [c for c in checks if c.verdict == "fail"]


def passed(checks: list[ShapeCheck]) -> list[ShapeCheck]:
    """The checks that pass, less `rows` (any result with rows passes it: it says nothing
    of the shape)."""
    return [c for c in checks if c.verdict == "pass" and c.name != ROWS]


def describe(checks: list[ShapeCheck]) -> str:
    """The checks as one phrase: `name: verdict (detail)`, joined by `; `."""
    return "; ".join(f"{c.name}: {c.verdict} ({c.detail})" for c in checks) or "no shape check"


def _empty_check(result: ExecResult) -> ShapeCheck:
    if result.row_count == 0:
        return ShapeCheck(name=ROWS, verdict="fail", detail="no rows; the question expects some")
    return ShapeCheck(name=ROWS, verdict="pass", detail=f"{result.row_count} row(s)")


def _single_number(result: ExecResult) -> bool:
    return (
        result.row_count == 1
        and len(result.columns) == 1
        and bool(result.rows)
        and _is_number(result.rows[0][0])
    )


def _grouping_check(result: ExecResult) -> ShapeCheck:
    name = "one row per group"
    if result.row_count == 0:
        return ShapeCheck(name=name, verdict="unknown", detail="no rows")
    if _single_number(result):
        return ShapeCheck(
            name=name, verdict="fail", detail="one number, no group: the question asks per group"
        )
    if result.row_count == 1:
        return ShapeCheck(name=name, verdict="unknown", detail="one row: the data may hold one")
    keys = _repeated_keys(result)
    if keys:
        return ShapeCheck(name=name, verdict="fail", detail=f"group key(s) repeated: {keys[:3]}")
    return ShapeCheck(name=name, verdict="pass", detail=f"{result.row_count} groups")


def _repeated_keys(result: ExecResult) -> list[str]:
    """Keys that repeat in a complete (key, number) result; [] when one cannot tell."""
    if len(result.columns) != 2 or result.truncated or len(result.rows) < result.row_count:
        return []
    if not all(_is_number(row[1]) for row in result.rows):
        return []
    seen: set[str] = set()
    repeated = []
    for row in result.rows:
        key = repr(row[0])
        if key in seen:
            repeated.append(key)
        seen.add(key)
    return repeated


def _count_check(result: ExecResult, *, listing: bool) -> ShapeCheck:
    name = "one number"
    if result.row_count == 0:
        return ShapeCheck(name=name, verdict="unknown", detail="no rows")
    if _single_number(result):
        return ShapeCheck(name=name, verdict="pass", detail="one row, one number")
    if result.row_count > 1 and not listing:
        return ShapeCheck(
            name=name, verdict="fail", detail=f"{result.row_count} rows; the question asks a count"
        )
    return ShapeCheck(name=name, verdict="unknown", detail="cannot tell from the shape")


def _list_check(result: ExecResult) -> ShapeCheck:
    name = "a list"
    if _single_number(result):
        return ShapeCheck(
            name=name, verdict="fail", detail="one number; the question asks for a list"
        )
    if result.row_count > 1:
        return ShapeCheck(name=name, verdict="pass", detail=f"{result.row_count} rows")
    return ShapeCheck(name=name, verdict="unknown", detail="one row or none")


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | Decimal) and not isinstance(value, bool)
