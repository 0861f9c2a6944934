"""`x = (SELECT MAX(x) ...)` returning several tied rows: a hint to keep one (ORDER BY, LIMIT 1).

MapleRepair's "extreme value selection ambiguity" aligner. A question for
"the" highest or lowest item is usually answered with one row; a MIN/MAX
subquery returns every tied row. When the statement compares with a
one-column MIN or MAX subquery and returns more than one row, the LLM
repairer is asked to use ORDER BY with LIMIT 1 instead. Hint only.
"""

from __future__ import annotations

from sqlglot import exp

from acts_sql.sql.rules._tree import trees
from acts_sql.sql.rules.base import Rule, RuleInput, RuleOutcome, Stage


class ExtremeSubquery(Rule):
    """A MIN/MAX subquery comparison that returns several tied rows."""

    name = "extreme_subquery"
    stage = Stage.OUTPUT

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.row_count is None or given.row_count <= 1:
            return None
        for statement in trees(given) or []:
            for sub in statement.find_all(exp.Subquery):
                select = sub.this
                if not isinstance(select, exp.Select) or len(select.expressions) != 1:
                    continue
                only = select.expressions[0]
                only = only.this if isinstance(only, exp.Alias) else only
                if isinstance(only, exp.Max | exp.Min) and isinstance(sub.parent, exp.Binary):
                    return RuleOutcome(hint=_HINT.format(rows=given.row_count, sub=sub.sql()))
        return None


_HINT = (
    "The statement returns {rows} rows through the extreme-value subquery {sub}: when the "
    "question asks for the highest or lowest one, order by the value and keep one row "
    "(ORDER BY ... LIMIT 1) instead of comparing with MIN/MAX in a subquery."
)
