"""decompose: statements into flat units with dependencies, from fixture files.

Each `tests/fixtures/sql/decompose/<case>.sql` has a `<case>.json` with the
dialect and the expected units (name, sql, depends_on, output_columns).
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from sqlglot import exp

from acts_sql.errors import SqlParseError
from acts_sql.sql.decompose import MAIN, Unit, decompose, output_columns
from acts_sql.sql.diagnostics import parse_statements, syntax_diagnostics

FIXTURES = Path(__file__).parents[1] / "fixtures" / "sql" / "decompose"
CASES = sorted(path.stem for path in FIXTURES.glob("*.sql"))


def _case(name: str) -> tuple[str, dict[str, Any]]:
    expected = json.loads((FIXTURES / f"{name}.json").read_text())
    return (FIXTURES / f"{name}.sql").read_text(), expected


def test_the_fixture_set_covers_the_required_shapes() -> None:
    required = {
        "plain_select",
        "two_ctes",
        "derived_table",
        "derived_in_cte",
        "recursive_cte",
        "union_in_cte",
        "star_resolution",
    }
    assert required <= set(CASES)


@pytest.mark.parametrize("case", CASES)
def test_decomposition_matches_fixture(case: str) -> None:
    sql, expected = _case(case)
    units = decompose(sql, expected["dialect"])
    assert [unit.model_dump() for unit in units] == expected["units"]


@pytest.mark.parametrize("case", CASES)
def test_units_are_flat_ordered_and_parse_alone(case: str) -> None:
    sql, expected = _case(case)
    dialect = expected["dialect"]
    units = decompose(sql, dialect)
    assert units[-1].name == MAIN
    names = [unit.name for unit in units]
    assert len({name.lower() for name in names}) == len(names)
    seen: set[str] = set()
    for unit in units:
        assert syntax_diagnostics(unit.sql, dialect) == [], unit.sql
        assert set(unit.depends_on) <= seen, f"{unit.name} needs a later unit"
        assert unit.name not in unit.depends_on
        (tree,) = parse_statements(unit.sql, dialect)
        read = {table.name for table in tree.find_all(exp.Table)}
        # a dependency is referred to by its plain name ...
        assert set(unit.depends_on) <= read
        # ... and nothing is left to split: no CTE, no derived table in FROM/JOIN,
        # except in a self-contained recursive unit or a correlated subquery
        if not (isinstance(tree, exp.Select) and tree.args.get("with_")):
            assert tree.find(exp.CTE) is None, unit.sql
        seen.add(unit.name)


# Real tables behind the SQLite fixtures; units run against them plus empty stand-ins.
SQLITE_TABLES = {
    "users": ["id", "name", "active", "parent_id"],
    "orders": ["id", "user_id", "amount"],
    "customers": ["id", "name"],
}


def _sqlite_cases() -> list[str]:
    return [case for case in CASES if _case(case)[1]["dialect"] == "sqlite"]


@pytest.mark.parametrize("case", _sqlite_cases())
def test_every_sqlite_unit_runs_against_empty_stand_ins(case: str) -> None:
    sql, _ = _case(case)
    units = decompose(sql, "sqlite", tables=SQLITE_TABLES)
    by_name = {unit.name: unit for unit in units}
    for unit in units:
        connection = sqlite3.connect(":memory:")
        try:
            for table, columns in SQLITE_TABLES.items():
                connection.execute(f"CREATE TABLE {table} ({', '.join(columns)})")
            for dep in unit.depends_on:
                dep_columns = by_name[dep].output_columns
                assert dep_columns, f"{dep} has no known columns"
                quoted = ", ".join(f'"{column}"' for column in dep_columns)
                connection.execute(f'CREATE TEMP TABLE "{dep}" ({quoted})')
            connection.execute(unit.sql).fetchall()
        finally:
            connection.close()


def test_recursive_cte_is_one_self_contained_unit() -> None:
    sql, expected = _case("recursive_cte")
    nums = decompose(sql, expected["dialect"])[0]
    assert nums.name == "nums"
    assert nums.depends_on == []  # not itself
    assert nums.sql.startswith("WITH RECURSIVE nums(n) AS (")
    assert nums.sql.endswith("SELECT * FROM nums")


def test_unit_sql_is_generated_in_the_dialect() -> None:
    units = decompose("SELECT TOP 3 d.a FROM (SELECT a FROM t) AS [d] ORDER BY d.a", "mssql")
    assert units[0].sql == "SELECT a FROM t"
    assert units[1].sql == "SELECT TOP 3 d.a FROM [d] ORDER BY d.a"


def test_lateral_and_correlated_derived_tables_stay_inline() -> None:
    sql = (
        "SELECT u.id, x.n FROM users u "
        "CROSS JOIN LATERAL (SELECT COUNT(*) AS n FROM orders o WHERE o.user_id = u.id) AS x"
    )
    (main,) = decompose(sql, "postgresql")
    assert main.name == MAIN
    assert "LATERAL (SELECT" in main.sql
    assert main.output_columns == ["id", "n"]


def test_with_recursive_may_refer_to_a_later_cte() -> None:
    sql = "WITH RECURSIVE a AS (SELECT x FROM b), b AS (SELECT 1 AS x) SELECT x FROM a"
    units = decompose(sql, "postgresql")
    assert [unit.name for unit in units] == ["b", "a", "main"]
    assert units[1].depends_on == ["b"]


def test_a_statement_that_is_not_a_query_is_still_split() -> None:
    units = decompose("INSERT INTO t2 SELECT q.a FROM (SELECT a FROM t) AS q", "sqlite")
    assert [(unit.name, unit.sql) for unit in units] == [
        ("q", "SELECT a FROM t"),
        ("main", "INSERT INTO t2 SELECT q.a FROM q"),
    ]
    assert units[-1].output_columns is None


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT a,\nFROM t WHERE",  # does not parse
        "SELECT 1; SELECT 2",  # more than one statement
        "",  # no statement
        # sqlglot cannot write IGNORE NULLS back in PostgreSQL without dropping it
        "SELECT first_value(b IGNORE NULLS) OVER (ORDER BY a) FROM t",
    ],
)
def test_decompose_raises_sql_parse_error(sql: str) -> None:
    with pytest.raises(SqlParseError) as caught:
        decompose(sql, "postgresql")
    assert caught.value.details["dialect"] == "postgresql"


def test_parse_error_carries_the_position() -> None:
    with pytest.raises(SqlParseError) as caught:
        decompose("SELECT a,\nFROM t WHERE", "sqlite")
    assert (caught.value.details["line"], caught.value.details["column"]) == (2, 8)


@pytest.mark.parametrize(
    ("sql", "expected"),
    [
        ("SELECT a, b AS c, t.d FROM t", ["a", "c", "d"]),
        ("SELECT COUNT(*), 1 FROM t", ["COUNT(*)", "1"]),  # named by their text, as SQLite does
        ("SELECT * FROM t", None),  # a table whose columns are not known
        ("SELECT t.* FROM t", None),
        ("WITH x AS (SELECT 1 AS a, 2 AS b) SELECT * FROM x", ["a", "b"]),
        ("WITH x AS (SELECT 1 AS a) SELECT y.*, 3 AS c FROM x AS y", ["a", "c"]),
        ("WITH x(p, q) AS (SELECT 1, 2) SELECT * FROM x", ["p", "q"]),
        (
            "SELECT * FROM (SELECT 1 AS a) AS s JOIN (SELECT 1 AS a, 2 AS b) AS r USING (a)",
            ["a", "b"],
        ),
        ("SELECT a FROM t UNION SELECT b FROM u", ["a"]),
        ("SELECT * FROM (SELECT 1 AS a) AS s, t", None),  # t unknown
    ],
)
def test_output_columns(sql: str, expected: list[str] | None) -> None:
    assert output_columns(sql, "sqlite") == expected


def test_output_columns_use_known_table_columns() -> None:
    tables = {"Users": ["id", "name"]}
    assert output_columns("SELECT * FROM users", "sqlite", tables=tables) == ["id", "name"]
    assert output_columns("SELECT u.*, 1 AS one FROM users u", "sqlite", tables=tables) == [
        "id",
        "name",
        "one",
    ]


def test_output_columns_raise_on_unparseable_sql() -> None:
    with pytest.raises(SqlParseError):
        output_columns("SELEC a FROM t", "sqlite")


def test_units_are_frozen_pydantic_models() -> None:
    unit = Unit(name="u", sql="SELECT 1", depends_on=[], output_columns=["1"])
    assert Unit.model_validate(unit.model_dump()) == unit
    with pytest.raises(ValueError):
        unit.name = "v"  # type: ignore[misc]
