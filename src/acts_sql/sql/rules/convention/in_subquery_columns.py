"""`x IN (SELECT y ...)` over unrelated columns: a hint for the LLM repairer.

MapleRepair's "inconsistent IN" repairer. When the column tested and the
subquery's one column belong to two schema tables, no foreign key links
them, and a probe finds no value they share, the IN can only be empty (or
true by accident): the LLM repairer is told the two columns are unrelated.
No safe rewrite exists, so the rule only hints.
"""

from __future__ import annotations

from sqlglot import exp

from acts_sql.sql.rules import _probes
from acts_sql.sql.rules._tree import Resolver, trees
from acts_sql.sql.rules.base import Probe, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.schema_facts import TableFact

_Pair = tuple[exp.In, exp.Column, TableFact, exp.Column, TableFact]


class InSubqueryColumns(Rule):
    """An IN test between a column and a subquery column that share no value."""

    name = "in_subquery_columns"
    stage = Stage.CONVENTION

    def probes(self, given: RuleInput) -> list[Probe]:
        return [
            Probe(
                key=_key(p),
                sql=_probes.joins_any((p[2].name, p[1].name), (p[4].name, p[3].name), given.d),
            )
            for p in _pairs(given)
        ]

    def check(self, given: RuleInput) -> RuleOutcome | None:
        hints = []
        for pair in _pairs(given):
            answer = given.answer(_key(pair))
            if answer is None or not answer.ok or answer.rows:
                continue
            node, left, lt, right, rt = pair
            hints.append(
                f"{node.sql()} tests {lt.name}.{left.name} against {rt.name}.{right.name}; "
                "no key relates them and they share no value: use related columns."
            )
        return RuleOutcome(hint="\n".join(hints)) if hints else None


def _key(pair: _Pair) -> str:
    _, left, lt, right, rt = pair
    return f"join:{lt.name}.{left.name}={rt.name}.{right.name}".lower()


def _pairs(given: RuleInput) -> list[_Pair]:
    found: list[_Pair] = []
    for statement in trees(given) or []:
        resolver = Resolver(statement, given.facts)
        for node in statement.find_all(exp.In):
            query = node.args.get("query")
            inner = query.this if isinstance(query, exp.Subquery) else query
            if not isinstance(node.this, exp.Column) or not isinstance(inner, exp.Select):
                continue
            if len(inner.expressions) != 1 or not isinstance(inner.expressions[0], exp.Column):
                continue
            left, right = node.this, inner.expressions[0]
            lt, rt = resolver.table_of(left), resolver.table_of(right)
            if lt is None or rt is None or lt.name.lower() == rt.name.lower():
                continue
            if not given.facts.linked(lt.name, left.name, rt.name, right.name):
                found.append((node, left, lt, right, rt))
    return found
