"""A date or interval written as a bare string where PostgreSQL cannot tell which function is meant.

`date_trunc('month', '2024-01-01')` fails on PostgreSQL with "function
date_trunc(unknown, unknown) is not unique": a quoted literal has no type
until the call decides it, and several versions of the function (timestamp,
timestamp with time zone, interval) fit. The same holds for `generate_series`,
`age`, `EXTRACT(... FROM '...')` and others. This rule types the string
literals the failing call holds by their shape: a date or a date and time
(`'2024-01-01'`, `'2024-01-01 10:00'`) becomes `CAST(... AS TIMESTAMP)`, an
interval (`'1 month'`, `'3 days'`) `CAST(... AS INTERVAL)`; literals of
another shape (a field name such as `'month'`) are left alone. Only the
calls of the function the error names change. PostgreSQL only; applies only
to a statement that fails with that error.
"""

from __future__ import annotations

import re

from sqlglot import exp

from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

_AMBIGUOUS = re.compile(r"function\s+(?:\w+\.)?(\w+)\(([^)]*)\)\s+is\s+not\s+unique", re.IGNORECASE)
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?$")
_INTERVAL = re.compile(
    r"^\s*-?\d+(\.\d+)?\s*(microsecond|millisecond|second|minute|hour|day|week|month|year|"
    r"decade|century|millennium)s?(\s+-?\d+(\.\d+)?\s*(second|minute|hour|day|week|month|year)s?)*"
    r"\s*$",
    re.IGNORECASE,
)


class UntypedLiterals(Rule):
    """A bare date or interval string in a call PostgreSQL finds ambiguous: the string typed."""

    name = "untyped_literals"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None or given.d.name != "postgresql":
            return None
        found = _AMBIGUOUS.search(given.error)
        if found is None or "unknown" not in found.group(2).lower():
            return None
        function = found.group(1).lower()
        fixed = rewrite(given, lambda tree: _type_literals(tree, function))
        if fixed is None:
            return None
        return RuleOutcome(
            repairs=[Repair(sql=fixed, detail=f"typed the date/interval strings of {function}()")]
        )


def _type_literals(statement: exp.Expr, function: str) -> bool:
    changed = False
    for call in list(statement.find_all(exp.Func)):
        if _name(call) != function:
            continue
        for literal in list(call.find_all(exp.Literal)):
            if not literal.is_string or not _directly_in(literal, call):
                continue
            kind = _kind(literal.this)
            if kind is not None:
                literal.replace(exp.cast(literal.copy(), kind))
                changed = True
    return changed


def _name(call: exp.Func) -> str:
    """The call's name as PostgreSQL spells it (sqlglot maps `date_trunc` to its own class)."""
    written = call.sql(dialect="postgres")
    return written.split("(", 1)[0].strip().lower()


def _directly_in(literal: exp.Literal, call: exp.Func) -> bool:
    """The literal is an argument of `call` itself, not of a call or cast inside it."""
    parent = literal.parent
    while parent is not None and parent is not call:
        if isinstance(parent, (exp.Func, exp.Cast)) and not isinstance(parent, exp.Paren):
            return False
        parent = parent.parent
    return parent is call


def _kind(text: str) -> str | None:
    if _TIMESTAMP.match(text.strip()):
        return "TIMESTAMP"
    if _INTERVAL.match(text):
        return "INTERVAL"
    return None
