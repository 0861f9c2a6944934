"""Read-only probe queries the rules ask for, built as sqlglot trees for the dialect.

Names come from the schema and are quoted strictly (SQLite gets backticks, so a
misspelt name fails instead of being read as a string); each probe is cheap
(a LIMIT, an EXISTS-shaped query).
"""

from __future__ import annotations

from sqlglot import exp

from acts_sql.sql.dialects import Dialect
from acts_sql.sql.rules.base import Probe
from acts_sql.sql.templates import table_expression

VALUES_SAMPLE = 200
"""Distinct values a rule reads of a column (one probe, shared by the rules that need it)."""


def values_probe(table: str, column: str, d: Dialect) -> Probe:
    """The shared probe of a column's distinct values, keyed `values:table.column`."""
    key = f"values:{table}.{column}".lower()
    return Probe(key=key, sql=distinct_values(table, column, d, VALUES_SAMPLE))


def _name(name: str) -> exp.Column:
    return exp.column(name, quoted=True)


def _sql(query: exp.Expr, d: Dialect) -> str:
    return d.generate(query, strict_identifiers=True)


def distinct_values(table: str, column: str, d: Dialect, limit: int = 200) -> str:
    """Up to `limit` distinct non-NULL values of `table.column`."""
    query = (
        exp.select(_name(column))
        .distinct()
        .from_(table_expression(table, d))
        .where(exp.Not(this=exp.Is(this=_name(column), expression=exp.Null())))
        .limit(limit)
    )
    return _sql(query, d)


def values_like(table: str, column: str, text: str, d: Dialect, limit: int = 3) -> str:
    """Distinct values of `table.column` equal to `text` ignoring case and outer spaces."""

    def loose(node: exp.Expr) -> exp.Expr:
        return exp.Lower(this=exp.Trim(this=node))

    condition = exp.EQ(this=loose(_name(column)), expression=loose(exp.Literal.string(text)))
    query = exp.select(_name(column)).distinct().from_(table_expression(table, d)).where(condition)
    return _sql(query.limit(limit), d)


def any_row(table: str, condition: exp.Expr, d: Dialect) -> str:
    """One row of `table` where `condition` holds (condition over bare column names)."""
    query = exp.select(exp.Literal.number(1)).from_(table_expression(table, d)).where(condition)
    return _sql(query.limit(1), d)


def has_nulls(table: str, column: str, d: Dialect) -> str:
    """One row when `table.column` holds a NULL."""
    return any_row(table, exp.Is(this=_name(column), expression=exp.Null()), d)


def joins_any(left: tuple[str, str], right: tuple[str, str], d: Dialect) -> str:
    """One row when `left.table.column = right.table.column` matches anything."""
    (lt, lc), (rt, rc) = left, right
    a, b = table_expression(lt, d), table_expression(rt, d)
    a.set("alias", exp.TableAlias(this=exp.to_identifier("l", quoted=True)))
    b.set("alias", exp.TableAlias(this=exp.to_identifier("r", quoted=True)))
    on = exp.EQ(
        this=exp.column(lc, table="l", quoted=True),
        expression=exp.column(rc, table="r", quoted=True),
    )
    query = exp.select(exp.Literal.number(1)).from_(a).join(b, on=on).limit(1)
    return _sql(query, d)


def first_rows(query: exp.Query, d: Dialect, rows: int = 2) -> str:
    """At most `rows` rows of `query` (a subquery on its own)."""
    inner = query.copy()
    wrapped = exp.select(exp.Literal.number(1)).from_(inner.subquery("s")).limit(rows)
    return _sql(wrapped, d)
