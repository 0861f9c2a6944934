"""Fixed, dialect-correct template queries for the `inspect_columns` tool.

The queries are built as sqlglot expressions and generated for the target
dialect, so the row limit comes out as `LIMIT`, `TOP` or `FETCH FIRST` as the
dialect wants. Table, column and output names are always quoted: the names
come from schema reflection and must be taken literally (spaces, keywords,
mixed case), and quoted output names read back the same in every dialect.
SQLite gets backticks, because it reads an unknown "name" as a string and a
misspelt column would be profiled as a constant instead of failing.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import SqlglotError

from acts_sql.errors import ConfigError
from acts_sql.sql.dialects import Dialect, get_dialect

DEFAULT_VALUES_LIMIT = 20


def column_profile_sql(table: str, column: str, dialect: str | Dialect) -> str:
    """One statement whose single row is `total_rows, non_null, distinct_values` of a column.

    `table` may be schema-qualified ("s.t"); see `table_expression`.
    """
    d = get_dialect(dialect)
    query = exp.select(
        _alias(exp.Count(this=exp.Star()), "total_rows"),
        _alias(exp.Count(this=_column(column)), "non_null"),
        _alias(exp.Count(this=exp.Distinct(expressions=[_column(column)])), "distinct_values"),
    ).from_(table_expression(table, d))
    return d.generate(query, strict_identifiers=True)


def column_values_sql(
    table: str, column: str, dialect: str | Dialect, limit: int = DEFAULT_VALUES_LIMIT
) -> str:
    """The `limit` most frequent values of a column with their counts, as rows `value, n`.

    Ordered by `n` descending, then by value. NULL counts as a value.
    """
    d = get_dialect(dialect)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise ConfigError(f"limit must be a positive integer, got {limit!r}", limit=limit)
    query = (
        exp.select(
            _alias(_column(column), "value"),
            _alias(exp.Count(this=exp.Star()), "n"),
        )
        .from_(table_expression(table, d))
        .group_by(_column(column))
        # Order by the expressions, not the output names: `ORDER BY n` would be
        # ambiguous in some dialects when the table has a column called n.
        .order_by(exp.Ordered(this=exp.Count(this=exp.Star()), desc=True), _column(column))
        .limit(limit)
    )
    return d.generate(query, strict_identifiers=True)


def table_expression(table: str, dialect: str | Dialect) -> exp.Table:
    """A quoted table reference for `table`.

    A plain name is split on dots into catalog, schema and table ("s.t");
    a name containing quote characters is read as SQL of the dialect
    (`"my.schema"."t"`). Every part comes out quoted.
    """
    d = get_dialect(dialect)
    name = table.strip()
    if not name:
        raise ConfigError("table name is empty")
    if any(quote in name for quote in '"`['):
        try:
            parsed = exp.to_table(name, dialect=d.sqlglot_name)
        except SqlglotError as error:
            raise ConfigError(f"cannot read table name {table!r}: {error}", table=table) from None
        for identifier in parsed.find_all(exp.Identifier):
            identifier.set("quoted", True)
        return parsed
    parts = [part.strip() for part in name.split(".")]
    if len(parts) > 3 or not all(parts):
        raise ConfigError(f"cannot read table name {table!r}", table=table)
    *qualifiers, base = parts
    catalog = qualifiers[-2] if len(qualifiers) == 2 else None
    schema = qualifiers[-1] if qualifiers else None
    return exp.table_(base, db=schema, catalog=catalog, quoted=True)


def _column(name: str) -> exp.Column:
    if not name.strip():
        raise ConfigError("column name is empty")
    return exp.column(name, quoted=True)


def _alias(expression: exp.Expr, name: str) -> exp.Expr:
    return exp.alias_(expression, name, quoted=True)
