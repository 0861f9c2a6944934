"""A string the column does not hold: the column's own spelling of it, or a hint with the nearest.

MapleRepair's "inconsistent condition" (value specification) repairer.
`WHERE country = 'usa'` returns nothing when the column holds `USA`. For
each `=`, `<>` or IN-list comparison of a text column with a string literal
(not a date, not a LIKE pattern), a probe checks that some row holds the
literal; when none does, more probes read the column's distinct values and
those equal to the literal ignoring case and surrounding spaces. The literal
is replaced when exactly one such value exists; otherwise the LLM repairer
is told the column lacks the value and shown the nearest values by spelling.
"""

from __future__ import annotations

import difflib

from sqlglot import exp

from acts_sql.sql.rules import _probes
from acts_sql.sql.rules._compare import Compared, compared, text_like
from acts_sql.sql.rules._tree import Resolver, outcome, trees
from acts_sql.sql.rules.base import Probe, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.rules.convention.date_format import literal_format

NEAREST = 3
_SIMILAR = 0.6


class UnknownValue(Rule):
    """A string compared with a column that holds no such value."""

    name = "unknown_value"
    stage = Stage.CONVENTION

    def probes(self, given: RuleInput) -> list[Probe]:
        probes: list[Probe] = []
        for item, literal in _literals(given):
            key = _match_key(item, literal)
            answer = given.answer(key)
            if answer is None:
                condition = exp.EQ(
                    this=exp.column(item.fact.name, quoted=True), expression=literal.copy()
                )
                probes.append(
                    Probe(key=key, sql=_probes.any_row(item.table.name, condition, given.d))
                )
            elif answer.ok and not answer.rows:
                table, column = item.table.name, item.fact.name
                probes.append(
                    Probe(
                        key=_loose_key(item, literal),
                        sql=_probes.values_like(table, column, literal.this, given.d),
                    )
                )
                probes.append(_probes.values_probe(table, column, given.d))
        return probes

    def check(self, given: RuleInput) -> RuleOutcome | None:
        statements = trees(given)
        if statements is None:
            return None
        fixed, hints = [], []
        for statement in statements:
            for item, literal in _literals_of(statement, given):
                answer = given.answer(_match_key(item, literal))
                if answer is None or not answer.ok or answer.rows:
                    continue
                values = _values(given, f"values:{item.key}")
                if values is None:
                    continue
                same = _only(_values(given, _loose_key(item, literal)))
                if same is not None:
                    fixed.append(f"'{literal.this}' -> '{same}'")
                    literal.replace(exp.Literal.string(same))
                else:
                    hints.append(_hint(item, literal.this, values))
        return outcome(statements, given, fixed, hints)


def _match_key(item: Compared, literal: exp.Literal) -> str:
    return f"match:{item.key}={literal.this}"


def _loose_key(item: Compared, literal: exp.Literal) -> str:
    return f"loose:{item.key}={literal.this}"


def _literals(given: RuleInput) -> list[tuple[Compared, exp.Literal]]:
    statements = trees(given)
    return [pair for s in statements or [] for pair in _literals_of(s, given)]


def _literals_of(statement: exp.Expr, given: RuleInput) -> list[tuple[Compared, exp.Literal]]:
    pairs = []
    for item in compared(statement, Resolver(statement, given.facts), exp.EQ, exp.NEQ, exp.In):
        if not text_like(item.fact, given.d.name):
            continue
        for literal in item.literals:
            if literal.is_string and literal.this.strip() and literal_format(literal.this) is None:
                pairs.append((item, literal))
    return pairs


def _values(given: RuleInput, key: str) -> list[str] | None:
    answer = given.answer(key)
    if answer is None or not answer.ok:
        return None
    return [str(row[0]) for row in answer.rows if row and row[0] is not None]


def _only(values: list[str] | None) -> str | None:
    return values[0] if values is not None and len(values) == 1 else None


def _hint(item: Compared, text: str, values: list[str]) -> str:
    where = f"{item.table.name}.{item.fact.name}"
    near = difflib.get_close_matches(text, values, n=NEAREST, cutoff=_SIMILAR)
    if not near:
        return f"{where} holds no value '{text}', nor one spelled like it."
    listed = ", ".join(f"'{v}'" for v in near)
    return f"{where} holds no value '{text}'; values spelled like it: {listed}."
