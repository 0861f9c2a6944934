"""Output columns glued into one string (`first || ' ' || last`): a hint to select them apart.

MapleRepair's "output format hallucination" aligner. A result checked column
by column does not match one concatenated column. When the outermost SELECT
concatenates with a separator string (`||`, CONCAT, CONCAT_WS), the LLM
repairer is asked to select the parts as separate columns. Hint only.
"""

from __future__ import annotations

from sqlglot import exp

from acts_sql.sql.rules._tree import trees
from acts_sql.sql.rules.base import Rule, RuleInput, RuleOutcome, Stage


class ConcatenatedOutput(Rule):
    """Selected columns concatenated with a separator into one output column."""

    name = "concatenated_output"
    stage = Stage.OUTPUT

    def check(self, given: RuleInput) -> RuleOutcome | None:
        statements = trees(given)
        if not statements or not isinstance(statements[-1], exp.Select):
            return None
        for projection in statements[-1].expressions:
            node = projection.this if isinstance(projection, exp.Alias) else projection
            if _glued(node):
                return RuleOutcome(hint=_HINT.format(expr=projection.sql()))
        return None


def _glued(node: exp.Expr) -> bool:
    if not isinstance(node, exp.DPipe | exp.Concat | exp.ConcatWs):
        return False
    parts = list(node.find_all(exp.Column))
    separators = [lit for lit in node.find_all(exp.Literal) if lit.is_string]
    return len(parts) >= 2 and bool(separators)


_HINT = (
    "The output column {expr} concatenates several columns into one string: unless the "
    "question asks for one combined text, select the columns separately."
)
