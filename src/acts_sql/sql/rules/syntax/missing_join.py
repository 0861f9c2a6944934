"""A column that only a table missing from the query has: that table joined along its foreign key.

MapleRepair's "missing join" case of its no such column repairer: when
`WHERE total > 100` names a column that no table in FROM has, exactly one
schema table linked to the query has it, by exactly one foreign key straight
to a table of the query (a view or an unlinked table with the same column does
not count), the table is joined on that key (`JOIN orders ON
orders.user_id = u.id`) and the column qualified with it. One join per
repair (a chain applies the rule again for the next one); longer key paths
are left to the LLM repairer. Applies only to a statement that fails.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.schema_facts import SchemaFacts, TableFact


class MissingJoin(Rule):
    """A column of a table the query does not join: the table joined on its foreign key."""

    name = "missing_join"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None or not given.facts.foreign_keys:
            return None
        fixed = rewrite(given, lambda tree: _join_one(tree, given.facts))
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail="joined along a foreign key")])


def _join_one(statement: exp.Expr, facts: SchemaFacts) -> bool:
    for scope in traverse_scope(statement):
        select = scope.expression
        if not isinstance(select, exp.Select):
            continue
        tables = _tables(scope, facts)
        if tables is None:
            continue
        for column in scope.columns:
            plan = _plan(column, tables, facts)
            if plan is not None:
                _apply(select, column, *plan)
                return True
    return False


def _tables(scope: Scope, facts: SchemaFacts) -> dict[str, TableFact] | None:
    """ref -> facts of every FROM item; None when one is not a known table (its columns
    are unknown, so a column may well come from it)."""
    found: dict[str, TableFact] = {}
    for ref, (node, _) in scope.selected_sources.items():
        fact = facts.table(node.name) if isinstance(node, exp.Table) else None
        if fact is None:
            return None
        found[ref] = fact
    return found


def _plan(
    column: exp.Column, tables: dict[str, TableFact], facts: SchemaFacts
) -> tuple[TableFact, str, str, str] | None:
    """(table to join, its key column, ref joined to, that ref's key column)."""
    qualifier = column.table
    name = column.name
    if qualifier and qualifier in tables:
        return None
    if not qualifier and any(t.column(name) for t in tables.values()):
        return None
    joined = {t.name.lower() for t in tables.values()}
    if qualifier:
        fact = facts.table(qualifier)
        owners = [fact] if fact is not None and fact.column(name) else []
    else:
        owners = [t for t in facts.tables_with(name) if t.name.lower() not in joined]
    links = [
        (owner, mine, ref, theirs)
        for owner in owners
        if owner.name.lower() not in joined
        for ref, fact in tables.items()
        for mine, theirs in facts.links(owner.name, fact.name)
    ]
    return links[0] if len(links) == 1 else None


def _apply(
    select: exp.Select, column: exp.Column, owner: TableFact, key: str, ref: str, ref_key: str
) -> None:
    on = exp.EQ(this=exp.column(key, table=owner.name), expression=exp.column(ref_key, table=ref))
    select.join(exp.to_table(owner.name), on=on, copy=False)
    column.set("table", exp.to_identifier(owner.name))
