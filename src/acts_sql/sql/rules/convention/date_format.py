"""A date or time literal in another format than the column's values: rewritten in theirs.

MapleRepair's "date format" repairer. Dates kept as text compare as text, so
`WHERE day = '2021/03/05'` finds nothing in a column holding `2021-03-05`,
and `'03/05/2021' < day` orders nonsense. The column's format is read from a
probe of its distinct values (every sampled value must fit one format); a
literal compared with it (=, <>, <, <=, >, >=, BETWEEN, IN) that fits a
different format of the same kind (date with date, date-time with
date-time, time with time) is rewritten in the column's format. Only text
columns (any column on SQLite, where dates are text); an ambiguous column
(03/05 could be either day-first or month-first) is left alone.
"""

from __future__ import annotations

from datetime import datetime

from sqlglot import exp

from acts_sql.sql.rules import _probes
from acts_sql.sql.rules._compare import Compared, compared, text_like
from acts_sql.sql.rules._tree import Resolver, trees, written
from acts_sql.sql.rules.base import Probe, ProbeAnswer, Repair, Rule, RuleInput, RuleOutcome, Stage

FORMATS: tuple[tuple[str, str], ...] = (
    ("datetime", "%Y-%m-%d %H:%M:%S"),
    ("datetime", "%Y-%m-%dT%H:%M:%S"),
    ("datetime", "%Y-%m-%d %H:%M"),
    ("datetime", "%Y/%m/%d %H:%M:%S"),
    ("datetime", "%m/%d/%Y %H:%M:%S"),
    ("datetime", "%m/%d/%Y %H:%M"),
    ("datetime", "%d-%m-%Y %H:%M"),
    ("date", "%Y-%m-%d"),
    ("date", "%Y/%m/%d"),
    ("date", "%m/%d/%Y"),
    ("date", "%d/%m/%Y"),
    ("date", "%d-%m-%Y"),
    ("date", "%Y%m%d"),
    ("date", "%d.%m.%Y"),
    ("time", "%H:%M:%S"),
    ("time", "%H:%M"),
)
"""(kind, strftime format), the ISO forms first (a literal is read in the first that fits)."""


class DateFormat(Rule):
    """A date literal written in another format than the column's values."""

    name = "date_format"
    stage = Stage.CONVENTION

    def probes(self, given: RuleInput) -> list[Probe]:
        return [
            _probes.values_probe(c.table.name, c.fact.name, given.d) for c in _candidates(given)
        ]

    def check(self, given: RuleInput) -> RuleOutcome | None:
        statements = trees(given)
        if statements is None:
            return None
        changed = []
        for statement in statements:
            for item in _dated(statement, given):
                fmt = _column_format(given.answer(_key(item)))
                if fmt is not None:
                    changed += _rewrite_literals(item, fmt)
        if not changed:
            return None
        detail = "; ".join(changed)
        return RuleOutcome(repairs=[Repair(sql=written(statements, given), detail=detail)])


def _key(item: Compared) -> str:
    return f"values:{item.key}"


def _candidates(given: RuleInput) -> list[Compared]:
    statements = trees(given)
    return [c for s in statements or [] for c in _dated(s, given)]


def _dated(statement: exp.Expr, given: RuleInput) -> list[Compared]:
    """Comparisons of text columns with string literals that fit a date format."""
    return [
        c
        for c in compared(statement, Resolver(statement, given.facts))
        if text_like(c.fact, given.d.name)
        and all(lit.is_string and literal_format(lit.this) for lit in c.literals)
    ]


def literal_format(text: str) -> tuple[str, str] | None:
    """The first (kind, format) that `text` fits, if any."""
    for kind, fmt in FORMATS:
        if _fits(text, fmt):
            return kind, fmt
    return None


def _fits(text: str, fmt: str) -> bool:
    try:
        datetime.strptime(text.strip(), fmt)
    except ValueError:
        return False
    return True


def _column_format(answer: ProbeAnswer | None) -> tuple[str, str] | None:
    """The one format every sampled value fits; None when none or several do."""
    if answer is None or not answer.ok:
        return None
    values = [row[0] for row in answer.rows if row and isinstance(row[0], str)]
    if not values or len(values) < len(answer.rows):
        return None
    fitting = [(k, f) for k, f in FORMATS if all(_fits(v, f) for v in values)]
    return fitting[0] if len(fitting) == 1 else None


def _rewrite_literals(item: Compared, column_format: tuple[str, str]) -> list[str]:
    kind, fmt = column_format
    done = []
    for literal in item.literals:
        found = literal_format(literal.this)
        if found is None or found[0] != kind or found[1] == fmt:
            continue
        value = datetime.strptime(literal.this.strip(), found[1]).strftime(fmt)
        literal.replace(exp.Literal.string(value))
        done.append(f"'{literal.this}' -> '{value}'")
    return done
