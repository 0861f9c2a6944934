"""Small syntax slips sqlglot reads past: a missing parenthesis, a stray comma, LIMIT a, b.

`acts_sql.sql.repairs.reparse_in_dialect`: sqlglot reads the statement
leniently in the target dialect and writes it back there (also mapping what
its generator maps, such as NVL to COALESCE on PostgreSQL). A reading that
lost a name, a literal or a clause keyword is discarded. Applies only to a
statement that fails.
"""

from __future__ import annotations

from acts_sql.sql.repairs import reparse_in_dialect
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage


class Reparse(Rule):
    """Syntax slips a lenient parser reads past (unbalanced parenthesis, dangling comma)."""

    name = "reparse"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None:
            return None
        fixed = reparse_in_dialect(given.sql, given.d)
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail="sqlglot's lenient reading")])
