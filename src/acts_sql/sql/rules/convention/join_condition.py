"""A join condition between unrelated columns: the foreign key, or a hint.

MapleRepair's "inconsistent ON condition" repairer (its relaxed mode). For
each `JOIN ... ON a.x = b.y` between columns of two schema tables that no
foreign key links, probes check whether the condition matches any pair of
rows while both tables have rows. When it matches none, the condition is
replaced by the foreign key between the two tables if there is exactly one;
otherwise the LLM repairer is told that the two columns are unrelated.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from acts_sql.sql.rules import _probes
from acts_sql.sql.rules._tree import Resolver, outcome, trees
from acts_sql.sql.rules.base import Probe, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.schema_facts import SchemaFacts, TableFact


@dataclass(frozen=True)
class _On:
    join: exp.Join
    left: exp.Column
    right: exp.Column
    left_table: TableFact
    right_table: TableFact

    @property
    def key(self) -> str:
        return (
            f"join:{self.left_table.name}.{self.left.name}={self.right_table.name}.{self.right.name}"
        ).lower()


class JoinCondition(Rule):
    """A join on two columns that no key relates and that match no rows."""

    name = "join_condition"
    stage = Stage.CONVENTION

    def probes(self, given: RuleInput) -> list[Probe]:
        probes: list[Probe] = []
        for on in _conditions(given):
            left = (on.left_table.name, on.left.name)
            right = (on.right_table.name, on.right.name)
            probes.append(Probe(key=on.key, sql=_probes.joins_any(left, right, given.d)))
            for table in (on.left_table.name, on.right_table.name):
                probes.append(
                    Probe(key=f"rows:{table}".lower(), sql=_probes.any_row(table, _true(), given.d))
                )
        return probes

    def check(self, given: RuleInput) -> RuleOutcome | None:
        statements = trees(given)
        if statements is None:
            return None
        fixed, hints = [], []
        for statement in statements:
            for on in unkeyed_joins(statement, given.facts):
                if not _empty_between_filled(on, given):
                    continue
                links = given.facts.links(on.left_table.name, on.right_table.name)
                if len(links) == 1:
                    join_on_key(on, *links[0])
                    fixed.append(
                        f"{on.left_table.name}.{links[0][0]} = {on.right_table.name}.{links[0][1]}"
                    )
                else:
                    hints.append(_hint(on, links))
        return outcome(statements, given, fixed, hints)


def _true() -> exp.Expr:
    return exp.EQ(this=exp.Literal.number(1), expression=exp.Literal.number(1))


def _conditions(given: RuleInput) -> list[_On]:
    statements = trees(given)
    return [on for s in statements or [] for on in unkeyed_joins(s, given.facts)]


def unkeyed_joins(statement: exp.Expr, facts: SchemaFacts) -> list[_On]:
    """Every `JOIN ... ON a.x = b.y` of `statement` between columns of two schema tables that
    no foreign key relates."""
    resolver = Resolver(statement, facts)
    found = []
    for join in statement.find_all(exp.Join):
        on = join.args.get("on")
        if not isinstance(on, exp.EQ):
            continue
        left, right = on.this, on.expression
        if not isinstance(left, exp.Column) or not isinstance(right, exp.Column):
            continue
        lt, rt = resolver.table_of(left), resolver.table_of(right)
        if lt is None or rt is None or lt.name.lower() == rt.name.lower():
            continue
        if facts.linked(lt.name, left.name, rt.name, right.name):
            continue
        found.append(_On(join, left, right, lt, rt))
    return found


def _empty_between_filled(on: _On, given: RuleInput) -> bool:
    joined = given.answer(on.key)
    filled = [given.answer(f"rows:{t.name}".lower()) for t in (on.left_table, on.right_table)]
    if joined is None or not joined.ok or joined.rows:
        return False
    return all(a is not None and a.ok and a.rows for a in filled)


def join_on_key(on: _On, left_key: str, right_key: str) -> None:
    """Replace the join's condition by `left_key = right_key`, qualified as it was."""
    condition = exp.EQ(
        this=exp.column(left_key, table=on.left.table or None),
        expression=exp.column(right_key, table=on.right.table or None),
    )
    on.join.set("on", condition)


def _hint(on: _On, links: list[tuple[str, str]]) -> str:
    text = (
        f"The join condition {on.join.args['on'].sql()} relates {on.left_table.name}."
        f"{on.left.name} and {on.right_table.name}.{on.right.name}, which no key relates "
        "and which match no rows: join on related columns (a foreign key), or through the "
        "table that relates the two."
    )
    if links:
        listed = ", ".join(
            f"{on.left_table.name}.{a} = {on.right_table.name}.{b}" for a, b in links
        )
        text += f" Keys between these tables: {listed}."
    return text
