"""A join on columns no key relates, where one foreign key links the two tables: a guess.

acts-sql's own rule, the guess beside `join_condition` for a condition that does
match rows. `SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.id`
runs and returns rows (an order's id happens to equal some customer's), but no
foreign key relates `orders.id` and `customers.id`, while `orders.customer_id`
references `customers.id`: the condition becomes that key. It reads a statement
that runs; for each `JOIN ... ON a.x = b.y` between two schema tables that no
foreign key relates (`join_condition.unkeyed_joins`), when exactly one
single-column foreign key links the two tables, the condition is replaced by it.
Left alone: a join some key already relates, a compound condition, two tables
no key links or several keys link. Joins on other columns are often meant (an
email, a date, a code), so this is a guess (`composes` is False): the engine
offers it for the user's SQL as given, as a candidate of its own, accepted only
when independent candidates agree with it.
"""

from __future__ import annotations

from sqlglot import exp

from acts_sql.sql.rules._tree import rewrite
from acts_sql.sql.rules.base import Repair, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.rules.convention.join_condition import join_on_key, unkeyed_joins
from acts_sql.sql.schema_facts import SchemaFacts


class ForeignKeyJoin(Rule):
    """A join on columns no key relates, while one foreign key links the tables: joined on it."""

    name = "foreign_key_join"
    stage = Stage.CONVENTION
    composes = False

    def check(self, given: RuleInput) -> RuleOutcome | None:
        if given.error is not None or not given.facts.foreign_keys:
            return None
        keys: list[str] = []
        fixed = rewrite(given, lambda tree: _join_on_keys(tree, given.facts, keys))
        if fixed is None:
            return None
        return RuleOutcome(repairs=[Repair(sql=fixed, detail="joined on " + ", ".join(keys))])


def _join_on_keys(statement: exp.Expr, facts: SchemaFacts, keys: list[str]) -> bool:
    changed = False
    for on in unkeyed_joins(statement, facts):
        links = facts.links(on.left_table.name, on.right_table.name)
        if len(links) != 1:
            continue
        join_on_key(on, *links[0])
        keys.append(f"{on.left_table.name}.{links[0][0]} = {on.right_table.name}.{links[0][1]}")
        changed = True
    return changed
