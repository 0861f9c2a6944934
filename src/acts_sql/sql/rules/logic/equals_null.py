"""A comparison with NULL by `=` or `<>`, which is never true: written IS NULL / IS NOT NULL.

`x = NULL` and `x <> NULL` (also `!=`) evaluate to NULL for every row, so a
filter with them keeps nothing; `IS NULL` / `IS NOT NULL` is what is meant.
The SET list of an UPDATE (`SET x = NULL`, an assignment) is left alone.
"""

from __future__ import annotations

from sqlglot import exp

from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage


class EqualsNull(Rule):
    """`= NULL` or `<> NULL`, true for no row: written IS NULL or IS NOT NULL."""

    name = "equals_null"
    stage = Stage.LOGIC
    on_error = True
    certain = True

    def check(self, given: RuleInput) -> RuleOutcome | None:
        fixed = rewrite(given, _rewrite_comparisons)
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail="NULL compared with IS")])


def _rewrite_comparisons(statement: exp.Expr) -> bool:
    changed = False
    for node in list(statement.find_all(exp.EQ, exp.NEQ)):
        if _assignment(node):
            continue
        left, right = node.this, node.expression
        if isinstance(right, exp.Null):
            value = left
        elif isinstance(left, exp.Null):
            value = right
        else:
            continue
        test: exp.Expr = exp.Is(this=value.copy(), expression=exp.Null())
        if isinstance(node, exp.NEQ):
            test = exp.Not(this=test)
        node.replace(test)
        changed = True
    return changed


def _assignment(node: exp.Expr) -> bool:
    parent = node.parent
    return isinstance(parent, exp.Update) and node.arg_key == "expressions"
