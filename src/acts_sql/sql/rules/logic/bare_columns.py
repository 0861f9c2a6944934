"""A grouped column left out of GROUP BY, which the engine accepted: added to it, as a guess.

acts-sql's own rule, the twin of `group_by_columns` for the engines that run such
a query instead of refusing it: SQLite, and MySQL without ONLY_FULL_GROUP_BY.
`SELECT dept_id, job_title, COUNT(*) FROM employees GROUP BY dept_id` runs there,
and `job_title` takes the value of some row of each group: one row per department
where one per department and title was meant. It reads a statement that runs, on
those two dialects only (PostgreSQL and DuckDB run such a query only when the
column is functionally dependent on the grouped key, where adding it changes
nothing), and appends to each GROUP BY the projections that read a column outside
an aggregate. Left alone: a SELECT without GROUP BY, and the grouped SELECTs that
use a bare column to pick a row of each group, as SQLite documents it: one with no
aggregate at all (one row per group), and one whose only aggregate is a single MIN
or MAX, where the bare column is the value from the row holding the extreme
(`SELECT dept_id, name, MAX(salary) ... GROUP BY dept_id`: the top earner of each
department, on purpose). A column that depends on the grouped key (a name grouped
by its id) is possible in a correct query, so this is a guess (`composes` is
False): the engine offers it for the user's SQL as given, as a candidate of its
own, accepted only when independent candidates agree.
"""

from __future__ import annotations

from sqlglot import exp

from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.rules.syntax.group_by_columns import complete_group_by

_LENIENT = frozenset({"sqlite", "mysql"})
"""Dialects whose engines may run a SELECT with a column neither grouped nor aggregated."""


class BareColumns(Rule):
    """A column neither grouped nor aggregated that the engine ran: added to GROUP BY."""

    name = "bare_columns"
    stage = Stage.LOGIC
    composes = False

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is not None or given.d.name not in _LENIENT:
            return None
        fixed = rewrite(given, _complete_unless_extreme)
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail="GROUP BY completed")])


def _complete_unless_extreme(statement: exp.Expr) -> bool:
    if any(_picks_a_row(select) for select in statement.find_all(exp.Select)):
        return False
    return complete_group_by(statement, None)


def _picks_a_row(select: exp.Select) -> bool:
    """Whether a grouped SELECT uses its bare columns to pick a row of each group, as SQLite
    documents it: with no aggregate at all (one row per group), or with one MIN or MAX."""
    if select.args.get("group") is None:
        return False
    aggregates = [
        node
        for item in select.expressions
        for node in item.find_all(exp.AggFunc)
        if node.find_ancestor(exp.Select) is select
    ]
    if not aggregates:
        return True
    return len(aggregates) == 1 and isinstance(aggregates[0], exp.Min | exp.Max)
