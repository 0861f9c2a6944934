"""A list whose rows repeat, where each is meant once: DISTINCT added.

acts-sql's own rule (the everyday slip of a join that multiplies rows: `SELECT
d.name FROM drivers d JOIN trips t ...` lists a driver once per trip). It reads a
statement that runs: one SELECT (no UNION) whose select list has no aggregate and
no window function, without DISTINCT or GROUP BY already. When some row of the
rows the caller fetched appears twice, the repair is the same statement with
`SELECT DISTINCT`. Nothing is run again: the rule reads the rows already fetched
(`RuleInput.rows`). Rows that repeat on purpose (one per event) are possible, even
in correct queries, so this is a guess, not a repair
(`composes` is False): the chain never applies it, not after another repair either;
the engine offers it for the user's SQL as given, as a candidate of its own, accepted
only when independent candidates agree with it.
"""

from __future__ import annotations

from typing import Any

from sqlglot import exp

from acts_sql.sql.rules._tree import trees, written
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage


class DuplicateRows(Rule):
    """A list that returns some row more than once: SELECT DISTINCT."""

    name = "duplicate_rows"
    stage = Stage.LOGIC
    composes = False

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is not None or not given.rows or not _repeats(given.rows):
            return None
        statements = trees(given)
        if statements is None or len(statements) != 1 or not _listing(statements[0]):
            return None
        statements[0].set("distinct", exp.Distinct())
        detail = f"DISTINCT added: {len(given.rows)} rows, {_distinct(given.rows)} distinct"
        return RuleOutcome(repairs=[Repair(sql=written(statements, given), detail=detail)])


def _listing(statement: exp.Expr) -> bool:
    """Whether the rule reads the statement (see the module doc)."""
    if not isinstance(statement, exp.Select) or statement.args.get("into") is not None:
        return False
    if statement.args.get("distinct") is not None or statement.args.get("group") is not None:
        return False
    return all(item.find(exp.AggFunc, exp.Window) is None for item in statement.expressions)


def _distinct(rows: list[list[Any]]) -> int:
    return len({repr(row) for row in rows})


def _repeats(rows: list[list[Any]]) -> bool:
    return _distinct(rows) < len(rows)
