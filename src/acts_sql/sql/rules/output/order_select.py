"""A sort key selected as an extra output column: a hint to select only what is asked.

MapleRepair's "ORDER BY vs SELECT" aligner. Models often add the column they
sort by to the output ("the three oldest users" answered with names and
ages), and an extra column fails a result comparison. When the outermost
SELECT has several output columns and sorts by one of its own aliases, the
LLM repairer is reminded to select only the columns the question asks for.
Hint only.
"""

from __future__ import annotations

from sqlglot import exp

from acts_sql.sql.rules._tree import trees
from acts_sql.sql.rules.base import Rule, RuleInput, RuleOutcome, Stage


class OrderSelect(Rule):
    """An ORDER BY key that is also an extra output column."""

    name = "order_select"
    stage = Stage.OUTPUT

    def check(self, given: RuleInput) -> RuleOutcome | None:
        statements = trees(given)
        if not statements or not isinstance(statements[-1], exp.Select):
            return None
        select = statements[-1]
        order = select.args.get("order")
        if not isinstance(order, exp.Order) or len(select.expressions) < 2:
            return None
        aliases = {p.alias.lower(): p for p in select.expressions if isinstance(p, exp.Alias)}
        for item in order.expressions:
            key = item.this
            if isinstance(key, exp.Column) and not key.table and key.name.lower() in aliases:
                return RuleOutcome(hint=_HINT.format(alias=key.name))
        return None


_HINT = (
    "The statement sorts by its own output column {alias}: select only the columns the "
    "question asks for; a sort key need not be an output column."
)
