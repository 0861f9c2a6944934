"""An unqualified column two joined tables both have ("ambiguous column name"): qualified.

acts-sql's own rule. `SELECT id, total FROM orders JOIN users ON ...` fails
on every engine (SQLite "ambiguous column name: id", PostgreSQL `column
reference "id" is ambiguous`, DuckDB `Ambiguous reference to column name
"id"`, MySQL "Column 'id' in field list is ambiguous", SQL Server "Ambiguous column
name 'id'"). The column the error
names gets, wherever it stands unqualified in a scope where two or more FROM
items have it, the alias (or name) of the first FROM item that has it, in the
order the FROM clause lists them: when the join condition equates the column
across the tables any of them reads the same value, and otherwise the first
table is what the statement is about. FROM items are schema tables (their
columns from the schema) or derived tables and CTEs (their output names).
The chain keeps the repair only when it then runs.

Never touched: other columns, qualified columns, columns only one FROM item
has (a correlated reference to an outer query included), and anything when
the error is not an ambiguity error.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.optimizer.scope import Scope, traverse_scope

from acts_sql.sql._identifiers import ref_ident
from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.schema_facts import SchemaFacts

_AMBIGUOUS = re.compile(
    r"ambiguous column name:\s*(?:\w+\.)?(?P<a>[^\s]+)"
    r"|column reference \"(?P<b>[^\"]+)\" is ambiguous"
    r"|ambiguous reference to column name \"(?P<c>[^\"]+)\""
    r"|column '(?P<d>[^']+)' in [\w ]+ is ambiguous"
    r"|ambiguous column name '(?P<e>[^']+)'",
    re.IGNORECASE,
)


def ambiguous_name(error: str | None) -> str | None:
    """The column an engine's ambiguity error names, if it is one."""
    found = _AMBIGUOUS.search(error or "")
    if found is None:
        return None
    return next(v for v in found.groups() if v)


class AmbiguousColumn(Rule):
    """An unqualified column that two joined tables have: qualified by the first of them."""

    name = "ambiguous_column"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        name = ambiguous_name(given.error)
        if name is None:
            return None
        fixed = rewrite(given, lambda tree: qualify_first(tree, name, given.facts))
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail=f"qualified the ambiguous {name}")])


def qualify_first(
    statement: exp.Expr, name: str, facts: SchemaFacts, *, equated_only: bool = False
) -> bool:
    """Qualify every unqualified use of `name` that two FROM items of its scope have with the
    first of them; with `equated_only`, only when in every such scope an inner join (or a
    WHERE conjunct) equates the column of the first two (else nothing changes, False)."""
    low = name.lower()
    by_select = {id(scope.expression): scope for scope in traverse_scope(statement)}
    found: list[tuple[exp.Column, Scope, list[str]]] = []
    for column in list(statement.find_all(exp.Column)):
        if column.table or column.name.lower() != low or _output_name(column, low):
            continue
        scope = by_select.get(id(column.find_ancestor(exp.Select)))
        if scope is None:
            continue
        owners = [ref for ref in scope.selected_sources if _has(scope, ref, low, facts)]
        if len(owners) >= 2:
            found.append((column, scope, owners))
    if equated_only and not all(
        len(owners) == 2 and equated(scope, owners, low) for _, scope, owners in found
    ):
        return False
    changed = False
    for column, scope, owners in found:
        first = owners[0]
        ident = ref_ident(scope.selected_sources[first][0]) or exp.to_identifier(first)
        column.set("table", ident.copy())
        changed = True
    return changed


def equated(scope: Scope, owners: list[str], column: str) -> bool:
    """Whether an inner join's ON, or a conjunct of the WHERE, of `scope` is `a.column =
    b.column` for the two FROM items `owners` (then either reads the same value)."""
    select = scope.expression
    if not isinstance(select, exp.Select):
        return False
    conditions: list[exp.Expr] = []
    for join in select.args.get("joins") or []:
        if join.side or (join.kind or "").upper() in ("CROSS", "ANTI", "SEMI"):
            continue
        on = join.args.get("on")
        conditions.extend(on.flatten() if isinstance(on, exp.And) else [on] if on else [])
    where = select.args.get("where")
    if where is not None:
        cond = where.this
        conditions.extend(cond.flatten() if isinstance(cond, exp.And) else [cond])
    wanted = {o.lower() for o in owners}
    for cond in conditions:
        if not isinstance(cond, exp.EQ):
            continue
        sides = [cond.this, cond.expression]
        if not all(isinstance(side, exp.Column) and side.name.lower() == column for side in sides):
            continue
        if {side.table.lower() for side in sides} == wanted:
            return True
    return False


def _output_name(column: exp.Column, low: str) -> bool:
    """Whether `column` is an ORDER BY key that names an output column of its SELECT."""
    select = column.find_ancestor(exp.Select)
    if column.find_ancestor(exp.Order) is None or not isinstance(select, exp.Select):
        return False
    return any(isinstance(e, exp.Alias) and e.alias.lower() == low for e in select.expressions)


def _has(scope: Scope, ref: str, column: str, facts: SchemaFacts) -> bool:
    """Whether the FROM item `ref` of `scope` has `column`."""
    _, source = scope.selected_sources[ref]
    if isinstance(source, exp.Table):
        fact = facts.table(source.name)
        return fact is not None and fact.column(column) is not None
    if isinstance(source, Scope) and isinstance(source.expression, exp.Query):
        return column in {n.lower() for n in source.expression.named_selects}
    return False
