"""Tables and columns the schema does not have: replaced by the clearly nearest schema name.

MapleRepair's "no such column" repairer (spelling errors), built on
`acts_sql.sql.repairs.repair_identifiers`: sqlglot's scopes tell which names
each part of the query sees, each unknown name is ranked against the schema
(spelling, singular/plural, snake_case/camelCase), and it is replaced only
where one in-scope name is clearly nearest; the name the database's error
complains about may win by a narrower lead. Only the identifier's text
changes. Applies only to a statement that fails.
"""

from __future__ import annotations

from acts_sql.sql.repairs import repair_identifiers
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage


class UnknownIdentifier(Rule):
    """No such table or column: the misspelt name replaced by the schema's nearest."""

    name = "unknown_identifier"
    stage = Stage.SYNTAX
    lexical = True

    def check(self, given: RuleInput) -> RuleOutcome | None:
        names = given.facts.names()
        if given.error is None or not names:
            return None
        fixed = repair_identifiers(given.sql, given.d, names, given.error)
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail="nearest schema names")])
