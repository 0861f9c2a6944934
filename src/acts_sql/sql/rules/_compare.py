"""Columns compared with literals: the shape the convention rules look at."""

from __future__ import annotations

from dataclasses import dataclass

from sqlglot import exp

from acts_sql.sql.rules._tree import Resolver
from acts_sql.sql.schema_facts import ColumnFact, TableFact

COMPARISONS = (exp.EQ, exp.NEQ, exp.GT, exp.GTE, exp.LT, exp.LTE)
ORDERINGS = (exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)


@dataclass(frozen=True)
class Compared:
    """`column <op> literal(s)` where `column` is a column of a schema table."""

    node: exp.Expr
    column: exp.Column
    literals: tuple[exp.Literal, ...]
    table: TableFact
    fact: ColumnFact

    @property
    def key(self) -> str:
        return f"{self.table.name}.{self.fact.name}".lower()


def compared(statement: exp.Expr, resolver: Resolver, *kinds: type[exp.Expr]) -> list[Compared]:
    """Every comparison of `kinds` (default: =, <>, <, <=, >, >=, BETWEEN, IN list, LIKE)
    between a schema column and literals, in text order."""
    kinds = kinds or (*COMPARISONS, exp.Between, exp.In, exp.Like)
    found: list[Compared] = []
    for node in statement.find_all(*kinds):
        shape = _shape(node)
        if shape is None:
            continue
        column, literals = shape
        table = resolver.table_of(column)
        fact = table.column(column.name) if table else None
        if table is not None and fact is not None:
            found.append(Compared(node, column, literals, table, fact))
    return found


def _shape(node: exp.Expr) -> tuple[exp.Column, tuple[exp.Literal, ...]] | None:
    if isinstance(node, exp.Between):
        low, high = node.args.get("low"), node.args.get("high")
        if isinstance(node.this, exp.Column) and _literals(low, high):
            return node.this, (low, high)  # type: ignore[return-value]
        return None
    if isinstance(node, exp.In):
        values = node.expressions
        if isinstance(node.this, exp.Column) and values and _literals(*values):
            return node.this, tuple(values)  # type: ignore[arg-type]
        return None
    if not isinstance(node, exp.Binary):
        return None
    left, right = node.this, node.expression
    if isinstance(left, exp.Column) and isinstance(right, exp.Literal):
        return left, (right,)
    if isinstance(right, exp.Column) and isinstance(left, exp.Literal):
        return right, (left,)
    return None


def _literals(*nodes: object) -> bool:
    return all(isinstance(n, exp.Literal) for n in nodes)


def text_like(fact: ColumnFact, dialect: str) -> bool:
    """Whether the column holds its values as text (SQLite: any declared type may)."""
    return dialect == "sqlite" or fact.is_text or not fact.type
