"""A top-k query whose sort puts NULLs first: the NULL rows filtered out.

MapleRepair's "ascending sort with NULL values" repairer, per dialect:
`ORDER BY price LIMIT 1` returns a row with no price on SQLite, MySQL and SQL
Server (NULLs sort first ascending), and `ORDER BY price DESC LIMIT 1` does on
PostgreSQL and Oracle (NULLs sort first descending); "the cheapest" means
one with a price. When the first sort key of a SELECT with a row limit is a
plain column of a schema table, the dialect sorts its NULLs first in that
direction, the statement says nothing about NULLS FIRST/LAST or `IS NOT
NULL` for that column, and a probe finds NULLs in it, `column IS NOT NULL`
is added to the WHERE clause. DuckDB sorts NULLs last both ways: never applies.
"""

from __future__ import annotations

import re

from sqlglot import exp

from acts_sql.sql.rules import _probes
from acts_sql.sql.rules._tree import Resolver, trees, written
from acts_sql.sql.rules.base import Probe, Repair, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.schema_facts import SchemaFacts

_EXPLICIT = re.compile(r"\bNULLS\s+(?:FIRST|LAST)\b", re.IGNORECASE)


class NullOrdering(Rule):
    """A row-limited sort that puts NULL rows first: `IS NOT NULL` added for the sort column."""

    name = "null_ordering"
    stage = Stage.LOGIC

    def probes(self, given: RuleInput) -> list[Probe]:
        return [
            Probe(key=key, sql=_probes.has_nulls(table, column, given.d))
            for key, table, column in _targets(given)
        ]

    def check(self, given: RuleInput) -> RuleOutcome | None:
        statements = trees(given)
        if statements is None or _EXPLICIT.search(given.sql):
            return None
        changed = False
        for statement in statements:
            for select, column, key in _sorted_selects(statement, given.facts):
                answer = given.answer(key)
                if answer is not None and answer.ok and answer.rows:
                    test = exp.Not(this=exp.Is(this=column.copy(), expression=exp.Null()))
                    select.where(test, copy=False)
                    changed = True
        if not changed:
            return None
        return RuleOutcome(
            repairs=[Repair(sql=written(statements, given), detail="NULLs kept out")]
        )


def _targets(given: RuleInput) -> list[tuple[str, str, str]]:
    statements = trees(given)
    if statements is None or _EXPLICIT.search(given.sql):
        return []
    found: list[tuple[str, str, str]] = []
    for statement in statements:
        resolver = Resolver(statement, given.facts)
        for _, column, key in _sorted_selects(statement, given.facts):
            fact = resolver.table_of(column)
            if fact is not None:
                found.append((key, fact.name, column.name))
    return found


def _sorted_selects(
    statement: exp.Expr, facts: SchemaFacts
) -> list[tuple[exp.Select, exp.Column, str]]:
    """(select, its first sort column, probe key) for each row-limited sort with NULLs first."""
    resolver = Resolver(statement, facts)
    found = []
    for select in statement.find_all(exp.Select):
        order = select.args.get("order")
        if not isinstance(order, exp.Order) or not order.expressions or not _limited(select):
            continue
        first = order.expressions[0]
        column = first.this
        if not isinstance(column, exp.Column) or not first.args.get("nulls_first"):
            continue
        fact = resolver.table_of(column)
        facts_column = fact.column(column.name) if fact else None
        if fact is None or facts_column is None or not facts_column.nullable:
            continue
        if _already_filtered(select, column):
            continue
        found.append((select, column, f"nulls:{fact.name}.{column.name}".lower()))
    return found


def _limited(select: exp.Select) -> bool:
    return select.args.get("limit") is not None or select.args.get("fetch") is not None


def _already_filtered(select: exp.Select, column: exp.Column) -> bool:
    where = select.args.get("where")
    if where is None:
        return False
    return any(
        isinstance(node.this, exp.Column) and node.this.name.lower() == column.name.lower()
        for node in where.find_all(exp.Is)
    )
