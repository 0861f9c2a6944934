"""`x = (SELECT ...)` over a subquery that returns several rows: written `x IN (SELECT ...)`.

MapleRepair's "= instead of IN" repairer. PostgreSQL, MySQL, SQL Server and
Oracle refuse a comparison with a subquery that returns more than one row
(their error triggers the rule at once); SQLite silently compares with the
first row only. When the statement runs, each uncorrelated `=`/`<>`
comparison with a one-column subquery in a WHERE, HAVING or ON clause is
probed for a second row, and rewritten to IN / NOT IN where one exists.
"""

from __future__ import annotations

import re

from sqlglot import exp
from sqlglot.optimizer.scope import traverse_scope

from acts_sql.sql.rules import _probes
from acts_sql.sql.rules._tree import trees, written
from acts_sql.sql.rules.base import Probe, Repair, Rule, RuleInput, RuleOutcome, Stage

_SEVERAL_ROWS = re.compile(
    r"more than one row returned by a subquery|Subquery returns more than 1 row"
    r"|Subquery returned more than 1 value|ORA-01427",
    re.IGNORECASE,
)


class ScalarSubqueryIn(Rule):
    """A comparison with a subquery that returns several rows, written as IN."""

    name = "scalar_subquery_in"
    stage = Stage.LOGIC
    on_error = True

    def probes(self, given: RuleInput) -> list[Probe]:
        statements = trees(given) if given.error is None else None
        if statements is None:
            return []
        return [
            Probe(key=key, sql=_probes.first_rows(sub, given.d), max_rows=2)
            for statement in statements
            for _, sub, key, correlated in _comparisons(statement)
            if not correlated
        ]

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is not None and not _SEVERAL_ROWS.search(given.error):
            return None
        statements = trees(given)
        if statements is None:
            return None
        changed = False
        for statement in statements:
            for node, sub, key, correlated in _comparisons(statement):
                answer = given.answer(key)
                several = given.error is not None or (
                    not correlated and answer is not None and answer.ok and len(answer.rows) > 1
                )
                if several:
                    test: exp.Expr = exp.In(this=node.this.copy(), query=exp.Subquery(this=sub))
                    node.replace(exp.Not(this=test) if isinstance(node, exp.NEQ) else test)
                    changed = True
        if not changed:
            return None
        return RuleOutcome(repairs=[Repair(sql=written(statements, given), detail="= written IN")])


def _comparisons(statement: exp.Expr) -> list[tuple[exp.Binary, exp.Query, str, bool]]:
    """(comparison, its subquery, probe key, correlated) for each `x = (subquery)` filter.

    Correlated: the subquery names a qualifier of an outer query. An unqualified outer
    column cannot be told apart here; its probe fails, and a failed probe changes nothing.
    """
    correlated = {
        id(scope.expression)
        for scope in traverse_scope(statement)
        if scope.is_subquery and any(c.table for c in scope.external_columns)
    }
    found: list[tuple[exp.Binary, exp.Query, str, bool]] = []
    for node in statement.find_all(exp.EQ, exp.NEQ):
        right = node.expression
        if not isinstance(right, exp.Subquery) or not isinstance(right.this, exp.Select):
            continue
        in_filter = node.find_ancestor(exp.Where, exp.Having, exp.Join) is not None
        if len(right.this.expressions) != 1 or not in_filter:
            continue
        sub = right.this
        found.append((node, sub, f"rows:{sub.sql()}", id(sub) in correlated))
    return found
