"""Template queries for inspect_columns: dialect-correct, quoted, and right on real data."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator

import pytest
from sqlglot import exp

from acts_sql.errors import ConfigError
from acts_sql.sql.diagnostics import parse_statements
from acts_sql.sql.dialects import dialect_names
from acts_sql.sql.templates import column_profile_sql, column_values_sql, table_expression

# How each dialect spells "the first 7 rows"
LIMITS = {
    "sqlite": "LIMIT 7",
    "postgresql": "LIMIT 7",
    "mysql": "LIMIT 7",
    "sqlserver": "SELECT TOP 7 ",
    "oracle": "FETCH FIRST 7 ROWS ONLY",
    "duckdb": "LIMIT 7",
}

QUOTED_TABLE = {
    "sqlite": "`sales`.`order details`",
    "postgresql": '"sales"."order details"',
    "mysql": "`sales`.`order details`",
    "sqlserver": "[sales].[order details]",
    "oracle": '"sales"."order details"',
    "duckdb": '"sales"."order details"',
}


@pytest.mark.parametrize("dialect", dialect_names())
def test_profile_is_one_parseable_select_with_the_three_counts(dialect: str) -> None:
    sql = column_profile_sql("sales.order details", "Unit Price", dialect)
    (tree,) = parse_statements(sql, dialect)
    assert isinstance(tree, exp.Select)
    assert tree.named_selects == ["total_rows", "non_null", "distinct_values"]
    assert QUOTED_TABLE[dialect] in sql
    assert tree.find(exp.Distinct) is not None
    assert tree.find(exp.Limit) is None and tree.args.get("group") is None


@pytest.mark.parametrize("dialect", dialect_names())
def test_values_query_uses_the_dialects_row_limit(dialect: str) -> None:
    sql = column_values_sql("sales.order details", "Unit Price", dialect, limit=7)
    (tree,) = parse_statements(sql, dialect)
    assert isinstance(tree, exp.Select)
    assert tree.named_selects == ["value", "n"]
    assert LIMITS[dialect] in sql
    for other in set(LIMITS.values()) - {LIMITS[dialect]}:
        assert other not in sql
    assert QUOTED_TABLE[dialect] in sql
    order = tree.args["order"].expressions
    assert [o.args.get("desc") or False for o in order] == [True, False]
    assert isinstance(order[0].this, exp.Count)


@pytest.mark.parametrize(
    ("dialect", "column", "quoted"),
    [
        ("sqlite", "select", "`select`"),
        ("postgresql", "Mixed Case", '"Mixed Case"'),
        ("mysql", "we`ird", "`we``ird`"),
        ("sqlserver", "a]b", "[a]]b]"),
    ],
)
def test_column_names_are_quoted_literally(dialect: str, column: str, quoted: str) -> None:
    assert f"COUNT(DISTINCT {quoted})" in column_profile_sql("t", column, dialect)
    assert f"GROUP BY {quoted}" in column_values_sql("t", column, dialect)


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ("t", '"t"'),
        ("s.t", '"s"."t"'),
        ("c.s.t", '"c"."s"."t"'),
        ("order details", '"order details"'),
        ('"my.schema"."t"', '"my.schema"."t"'),
    ],
)
def test_table_expression(table: str, expected: str) -> None:
    assert table_expression(table, "postgresql").sql(dialect="postgres") == expected


@pytest.mark.parametrize("table", ["", "a..b", "a.b.c.d"])
def test_unreadable_table_names_raise_config_error(table: str) -> None:
    with pytest.raises(ConfigError):
        column_profile_sql(table, "c", "sqlite")


@pytest.mark.parametrize("limit", [0, -1, True])
def test_limit_must_be_a_positive_integer(limit: int) -> None:
    with pytest.raises(ConfigError):
        column_values_sql("t", "c", "sqlite", limit=limit)


@pytest.fixture
def colours() -> Iterator[sqlite3.Connection]:
    connection = sqlite3.connect(":memory:")
    connection.execute('CREATE TABLE "paint pots" ("the colour" TEXT)')
    rows = ["red"] * 3 + ["blue"] * 3 + ["green"] * 2 + [None] * 2 + ["white"]
    connection.executemany('INSERT INTO "paint pots" VALUES (?)', [(r,) for r in rows])
    yield connection
    connection.close()


def test_profile_counts_on_sqlite(colours: sqlite3.Connection) -> None:
    sql = column_profile_sql("paint pots", "the colour", "sqlite")
    assert colours.execute(sql).fetchall() == [(11, 9, 4)]


def test_a_missing_column_fails_on_sqlite_instead_of_counting_a_string(
    colours: sqlite3.Connection,
) -> None:
    # With "colour" quoted the usual way, SQLite would count the string 'colour'.
    for sql in (
        column_profile_sql("paint pots", "colour", "sqlite"),
        column_values_sql("paint pots", "colour", "sqlite"),
    ):
        with pytest.raises(sqlite3.OperationalError, match="no such column"):
            colours.execute(sql)


def test_values_on_sqlite_are_most_frequent_first_then_by_value(
    colours: sqlite3.Connection,
) -> None:
    sql = column_values_sql("main.paint pots", "the colour", "sqlite", limit=4)
    cursor = colours.execute(sql)
    assert [d[0] for d in cursor.description] == ["value", "n"]
    assert cursor.fetchall() == [("blue", 3), ("red", 3), (None, 2), ("green", 2)]
