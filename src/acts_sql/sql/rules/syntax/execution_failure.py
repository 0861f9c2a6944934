"""Any other execution failure: no rule fixes it, so the LLM repairer gets the error.

MapleRepair's "misc execution failure" repairer: the catch-all at the end of
the syntax stage. It repairs nothing; it hands the database's own message
to the LLM repairer as a hint.
"""

from __future__ import annotations

from acts_sql.sql.rules.base import Rule, RuleInput, RuleOutcome, Stage


class ExecutionFailure(Rule):
    """The statement still fails: its error message, for the LLM repairer."""

    name = "execution_failure"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None:
            return None
        return RuleOutcome(
            hint=f"The statement fails to execute. The database says: {given.error.strip()}"
        )
