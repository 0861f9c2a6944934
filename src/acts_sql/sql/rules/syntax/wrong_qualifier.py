"""A column qualified by the wrong name: the table's name where the query gave it an alias,
or a joined table that lacks the column while exactly one other joined table has it.

MapleRepair's "alias not used" and "table-column mismatch" cases of its no
such column repairer: `FROM employees AS e ... WHERE employees.salary > 10`
becomes `e.salary`; `FROM orders AS o JOIN users AS u ... u.total` becomes
`o.total` when only `o` has `total`. Qualifiers reaching an outer query
(correlated subqueries) are left alone. Applies only to a statement that fails.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from acts_sql.sql._identifiers import ref_ident
from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.schema_facts import SchemaFacts, TableFact


class WrongQualifier(Rule):
    """A column qualified by a table's name instead of its alias, or by the wrong joined table."""

    name = "wrong_qualifier"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None or not given.facts.tables:
            return None
        fixed = rewrite(given, lambda tree: _requalify(tree, given.facts))
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail="columns requalified")])


class _Visible:
    """The FROM items of one scope: ref (alias or name, lower case) -> identifier and facts."""

    def __init__(self, scope: Scope, facts: SchemaFacts) -> None:
        self.refs: dict[str, exp.Identifier | None] = {}
        self.tables: dict[str, tuple[str, TableFact]] = {}
        for ref, (node, _) in scope.selected_sources.items():
            key = ref.lower()
            self.refs[key] = ref_ident(node)
            if isinstance(node, exp.Table) and (fact := facts.table(node.name)) is not None:
                self.tables[key] = (node.name.lower(), fact)

    def owners(self, column: str, besides: str) -> list[str]:
        return [k for k, (_, f) in self.tables.items() if k != besides and f.column(column)]

    def aliases_of(self, table: str) -> list[str]:
        return [k for k, (name, _) in self.tables.items() if name == table and k != table]


def _outer_refs(scope: Scope) -> set[str]:
    refs: set[str] = set()
    parent = scope.parent
    while parent is not None:
        refs |= {ref.lower() for ref in parent.selected_sources}
        parent = parent.parent
    return refs


def _requalify(statement: exp.Expr, facts: SchemaFacts) -> bool:
    changed = False
    for scope in traverse_scope(statement):
        visible = _Visible(scope, facts)
        outer = _outer_refs(scope)
        for column in scope.columns:
            target = _better_qualifier(column, visible, outer)
            ident = visible.refs.get(target) if target else None
            if ident is not None:
                column.set("table", ident.copy())
                changed = True
    return changed


def _better_qualifier(column: exp.Column, visible: _Visible, outer: set[str]) -> str | None:
    """The ref `column` should be qualified with, when its own is wrong and one fits."""
    qualifier = column.table.lower()
    if not qualifier or not isinstance(column.this, exp.Identifier):
        return None
    name = column.name
    if qualifier in visible.refs:
        own = visible.tables.get(qualifier)
        if own is None or own[1].column(name) is not None:
            return None
        owners = visible.owners(name, besides=qualifier)
        return owners[0] if len(owners) == 1 else None
    if qualifier in outer:
        return None
    aliases = visible.aliases_of(qualifier)
    if len(aliases) == 1 and visible.tables[aliases[0]][1].column(name) is not None:
        return aliases[0]
    owners = [k for k in aliases if visible.tables[k][1].column(name)]
    return owners[0] if len(owners) == 1 else None
