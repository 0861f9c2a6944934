"""An unqualified column the join equates across the two tables that have it: qualified.

acts-sql's own rule, the sure case of `ambiguous_column`. In `SELECT member_id, name FROM
loans JOIN members ON loans.member_id = members.member_id` the engines refuse `member_id`
as ambiguous, yet the inner join's condition (or a conjunct of the WHERE clause) makes both
tables' `member_id` the same value in every row: qualifying it with either changes nothing
the statement asks, so the repair is lexical (`Rule.lexical`) and may be accepted with no
model call. The column the error names is qualified by the first FROM item that has it, as
`ambiguous_column` does, but only when in every scope where it is ambiguous exactly two FROM
items have it and an equality of the two stands in an inner join's ON or the WHERE clause.
Otherwise (an outer join, a column the join does not equate, three tables) nothing changes
here and `ambiguous_column`, which comes after, guesses the first table. Applies only to a
statement that fails with an ambiguity error.
"""

from __future__ import annotations

from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.rules.syntax.ambiguous_column import ambiguous_name, qualify_first


class AmbiguousJoinKey(Rule):
    """An unqualified column the inner join equates across the two tables that have it."""

    name = "ambiguous_join_key"
    stage = Stage.SYNTAX
    lexical = True

    def check(self, given: RuleInput) -> RuleOutcome | None:
        name = ambiguous_name(given.error)
        if name is None:
            return None
        fixed = rewrite(
            given, lambda tree: qualify_first(tree, name, given.facts, equated_only=True)
        )
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail=f"qualified the join key {name}")])
