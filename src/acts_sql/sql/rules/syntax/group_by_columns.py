"""A selected column neither grouped nor aggregated: added to GROUP BY.

acts-sql's own rule (MapleRepair has none for it), for the engines that
refuse such a query: PostgreSQL and DuckDB ("must appear in the GROUP BY
clause"), MySQL with ONLY_FULL_GROUP_BY ("nonaggregated column"), SQL Server
("not contained in either an aggregate function or the GROUP BY clause"),
Oracle (ORA-00979). Every projection of a grouped SELECT that reads a column
outside an aggregate and is not covered by the GROUP BY is appended to it,
and so is an ORDER BY item over the column the error names. SQLite accepts
such queries (a "bare" column), so nothing there triggers the rule; the twin
for a statement that runs is `bare_columns`.
"""

from __future__ import annotations

import re

from sqlglot import exp

from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage

_MESSAGES = re.compile(
    r"must appear in the GROUP BY clause|nonaggregated column|isn't in GROUP BY"
    r"|not contained in either an aggregate function or the GROUP BY clause"
    r"|not a GROUP BY expression",
    re.IGNORECASE,
)
_NAMED = re.compile(
    r"column\s+[\"'`]?(?P<a>[^\"'`\s]+)[\"'`]?\s+must appear|nonaggregated column\s+'(?P<b>[^']+)'"
    r"|Column\s+'(?P<c>[^']+)'\s+is invalid",
    re.IGNORECASE,
)


class GroupByColumns(Rule):
    """A selected column that is neither grouped nor aggregated, which the engine refuses."""

    name = "group_by_columns"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None or not _MESSAGES.search(given.error):
            return None
        named = _named_column(given.error)
        fixed = rewrite(given, lambda tree: complete_group_by(tree, named))
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail="GROUP BY completed")])


def _named_column(error: str) -> str | None:
    match = _NAMED.search(error)
    if not match:
        return None
    written = next(g for g in match.groups() if g)
    return written.rsplit(".", 1)[-1].lower()


def complete_group_by(statement: exp.Expr, named: str | None) -> bool:
    """Append to each GROUP BY of `statement` the projections that read a column outside an
    aggregate and that it does not cover (and, when `named`, the ORDER BY items over that
    column); True when it changed something. SELECTs without a GROUP BY are left alone."""
    changed = False
    for select in list(statement.find_all(exp.Select)):
        group = select.args.get("group")
        if not isinstance(group, exp.Group) or not group.expressions:
            continue
        covered = {_key(e) for e in group.expressions}
        missing = [_unaliased(p) for p in select.expressions if _needs_group(p, covered)]
        order = select.args.get("order")
        if named and isinstance(order, exp.Order):
            missing += [
                o.this
                for o in order.expressions
                if _needs_group(o.this, covered) and _reads(o.this, named)
            ]
        for expression in missing:
            if _key(expression) not in covered:
                covered.add(_key(expression))
                group.append("expressions", expression.copy())
                changed = True
    return changed


def _key(node: exp.Expr) -> str:
    return node.sql().lower()


def _unaliased(node: exp.Expr) -> exp.Expr:
    return node.this if isinstance(node, exp.Alias) else node


def _needs_group(node: exp.Expr, covered: set[str]) -> bool:
    """Whether `node` reads a column outside any aggregate that the GROUP BY does not cover."""
    node = _unaliased(node)
    if _key(node) in covered:
        return False
    bare = [c for c in node.find_all(exp.Column) if not _aggregated(c, node)]
    return any(_key(c) not in covered and c.name.lower() not in covered for c in bare)


def _aggregated(column: exp.Column, top: exp.Expr) -> bool:
    node = column.parent
    while node is not None and node is not top.parent:
        if isinstance(node, exp.AggFunc | exp.Window | exp.Subquery):
            return True
        node = node.parent
    return False


def _reads(node: exp.Expr, name: str) -> bool:
    return any(c.name.lower() == name for c in node.find_all(exp.Column))
