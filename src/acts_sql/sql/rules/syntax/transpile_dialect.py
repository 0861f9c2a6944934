"""A statement written in another dialect: transpiled from it by sqlglot.

`acts_sql.sql.repairs.transpile_from_detected`: the dialects whose tokens the
statement shows (MySQL backticks and IFNULL, T-SQL TOP, PostgreSQL `::` and
ILIKE, Oracle NVL, SQLite STRFTIME, ...), or that parse it when the target
cannot, are tried; a translation that keeps a foreign token is dropped. Up to
three repairs, most telling source first. Applies only to a statement that fails.
"""

from __future__ import annotations

from acts_sql.sql.repairs import transpile_from_detected
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage


class TranspileDialect(Rule):
    """A statement in another dialect's syntax, transpiled into the engine's."""

    name = "transpile_dialect"
    stage = Stage.SYNTAX

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is None:
            return None
        found = transpile_from_detected(given.sql, given.d)
        if not found:
            return None
        return RuleOutcome(
            repairs=[
                Repair(sql=text, detail=f"transpiled from {source}", tag=source)
                for source, text in found
            ]
        )
