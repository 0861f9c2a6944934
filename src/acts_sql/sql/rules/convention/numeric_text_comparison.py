"""Numbers stored as text compared or ranked as text: the column cast to a number.

MapleRepair's "comparison misuse" repairer. A text column holding numbers
orders as text ('9' > '10'), so `price > 100`, `BETWEEN`, MIN and MAX give
wrong answers (and on SQLite a text column compared with a number compares
text). When a probe of the column's distinct values finds only numbers
(at least two), the column is cast (`REAL` on SQLite, `NUMERIC` on
PostgreSQL, `DOUBLE` on MySQL and DuckDB, `FLOAT` on SQL Server, `NUMBER` on
Oracle) where it is ranked, and a numeric string it is compared with becomes
a number. When its values mix digits with other text (`'12 kg'`), it cannot
be ranked as a number and the LLM repairer is told so.
"""

from __future__ import annotations

import re

from sqlglot import exp

from acts_sql.sql.rules import _probes
from acts_sql.sql.rules._compare import ORDERINGS
from acts_sql.sql.rules._tree import Resolver, outcome, trees
from acts_sql.sql.rules.base import Probe, Rule, RuleInput, RuleOutcome, Stage
from acts_sql.sql.schema_facts import TableFact

_NUMBER = re.compile(r"^\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$")
_DIGIT = re.compile(r"\d")
_CAST = {
    "sqlite": "REAL",
    "postgresql": "NUMERIC",
    "mysql": "DOUBLE",
    "duckdb": "DOUBLE",
    "sqlserver": "FLOAT",
    "oracle": "NUMBER",
}


class NumericTextComparison(Rule):
    """A text column of numbers ranked as text (<, >, BETWEEN, MIN, MAX)."""

    name = "numeric_text_comparison"
    stage = Stage.CONVENTION

    def probes(self, given: RuleInput) -> list[Probe]:
        return [
            _probes.values_probe(table.name, column.name, given.d)
            for s in trees(given) or []
            for _, column, table in _ranked(s, given)
        ]

    def check(self, given: RuleInput) -> RuleOutcome | None:
        statements = trees(given)
        target = _CAST.get(given.d.name)
        if statements is None or target is None:
            return None
        fixed, hints = [], []
        for statement in statements:
            for node, column, table in _ranked(statement, given):
                values = _sampled(given, table.name, column.name)
                if values is None:
                    continue
                where = f"{table.name}.{column.name}"
                if len(values) >= 2 and all(_NUMBER.match(v) for v in values):
                    _cast(node, column, target)
                    fixed.append(where)
                elif any(_DIGIT.search(v) for v in values):
                    hints.append(
                        f"{where} is text whose values are not all numbers (such as "
                        f"'{_first_mixed(values)}'): {node.sql()} ranks it as text, "
                        "not as a number."
                    )
        return outcome(statements, given, [f"cast {f}" for f in fixed], hints)


def _ranked(statement: exp.Expr, given: RuleInput) -> list[tuple[exp.Expr, exp.Column, TableFact]]:
    """(ranking node, its text column, the column's table) for orderings and MIN/MAX."""
    resolver = Resolver(statement, given.facts)
    found: list[tuple[exp.Expr, exp.Column, TableFact]] = []
    for node in statement.find_all(*ORDERINGS, exp.Min, exp.Max):
        operands = (
            [node.this]
            if isinstance(node, exp.Min | exp.Max | exp.Between)
            else [node.this, node.expression]
        )
        if isinstance(node, exp.Between) and not _numeric_literals(
            node.args.get("low"), node.args.get("high")
        ):
            continue
        if isinstance(node, exp.Binary) and not any(_numeric_literal(o) for o in operands):
            continue
        for column in (o for o in operands if isinstance(o, exp.Column)):
            table = resolver.table_of(column)
            fact = table.column(column.name) if table else None
            if table is not None and fact is not None and fact.is_text:
                found.append((node, column, table))
    return found


def _numeric_literal(node: object) -> bool:
    return isinstance(node, exp.Literal) and (not node.is_string or bool(_NUMBER.match(node.this)))


def _numeric_literals(*nodes: object) -> bool:
    return all(_numeric_literal(n) for n in nodes)


def _sampled(given: RuleInput, table: str, column: str) -> list[str] | None:
    answer = given.answer(f"values:{table}.{column}".lower())
    if answer is None or not answer.ok:
        return None
    return [str(row[0]) for row in answer.rows if row and row[0] is not None]


def _first_mixed(values: list[str]) -> str:
    return next((v for v in values if not _NUMBER.match(v)), values[0])


def _cast(node: exp.Expr, column: exp.Column, target: str) -> None:
    column.replace(exp.Cast(this=column.copy(), to=exp.DataType.build(target)))
    for literal in node.find_all(exp.Literal):
        if literal.is_string and _NUMBER.match(literal.this):
            literal.replace(exp.Literal.number(literal.this.strip()))
