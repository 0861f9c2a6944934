"""Running PRQL on DuckDB and SQLite: compile, guard, run (acts_sql.db.language)."""

from __future__ import annotations

from pathlib import Path

import pytest

from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.db.language import (
    LanguageExecutor,
    database_dialect,
    database_executor,
    with_language,
)
from acts_sql.errors import ConfigError
from acts_sql.sql.languages import get_language
from support import duckdb_table

ROWS = [
    (1, "api", 200, 12.5),
    (2, "api", 503, 900.0),
    (3, "web", 500, 40.0),
    (4, "web", 200, 8.0),
]
COUNT_5XX = "\n".join(
    [
        "from requests",
        "filter status >= 500",
        "group {service} (aggregate {n = count this})",
        "sort service",
    ]
)


@pytest.fixture
def duck_path(tmp_path: Path) -> Path:
    path = tmp_path / "logs.duckdb"
    duckdb_table(
        path,
        "CREATE TABLE requests (id INTEGER, service VARCHAR, status INTEGER, latency_ms DOUBLE)",
        ROWS,
    )
    return path


@pytest.fixture
def sqlite_path(shop_path: Path) -> Path:
    return shop_path


@pytest.fixture
def prql_duck(duck_path: Path):
    executor = with_language(open_database(f"duckdb:///{duck_path}"), "prql")
    yield executor
    executor.close()


def test_prql_compiles_and_runs_on_duckdb(prql_duck: Executor) -> None:
    assert isinstance(prql_duck, LanguageExecutor)
    assert prql_duck.dialect == "prql" and database_dialect(prql_duck) == "duckdb"
    result = prql_duck.execute(COUNT_5XX)
    assert result.ok, result.error
    assert result.columns == ["service", "n"]
    assert result.rows == [["api", 1], ["web", 1]]


def test_prql_runs_on_sqlite(sqlite_path: Path) -> None:
    executor = with_language(open_database(f"sqlite:///{sqlite_path}"), "prql")
    try:
        result = executor.execute(
            "from orders\nfilter total > 100\nsort {-total}\nselect {order_id, total}"
        )
        assert result.ok, result.error
        assert result.rows == [[3, 999.99], [2, 150.0]]
    finally:
        executor.close()


def test_a_query_that_does_not_compile_is_a_syntax_error_with_the_compilers_position(
    prql_duck: Executor,
) -> None:
    text = "from requests\nfiltr status >= 500"
    result = prql_duck.execute(text)
    assert result.status == "error" and result.error_kind == "syntax"
    assert (
        result.error == "PRQL compile error: line 2, column 1: Unknown name `filtr` (near 'filtr')"
    )
    assert result.error_position == text.index("filtr")


def test_a_database_error_quotes_the_compiled_sql_and_drops_its_position(
    prql_duck: Executor,
) -> None:
    result = prql_duck.execute("from requests\nselect {latency}")
    assert result.status == "error" and result.error_kind == "schema"
    assert "latency" in (result.error or "")
    assert "(in the SQL compiled from the PRQL: SELECT latency FROM requests)" in (
        result.error or ""
    )
    assert result.error_position is None


def test_the_read_only_guard_checks_the_compiled_sql(prql_duck: Executor) -> None:
    """An s-string can smuggle any SQL into the compiled statement: the guard sees it."""
    result = prql_duck.execute('from s"SELECT * FROM requests; DROP TABLE requests"')
    assert result.status == "blocked", result
    count = database_executor(prql_duck).execute("SELECT count(*) FROM requests")
    assert count.rows == [[4]]


def test_the_database_executor_runs_its_own_sql(prql_duck: Executor) -> None:
    sql = database_executor(prql_duck)
    assert sql.dialect == "duckdb"
    assert sql.execute("SELECT count(*) FROM requests").rows == [[4]]
    assert database_executor(sql) is sql  # an SQL executor is its own
    assert [t.name for t in prql_duck.reflect(sample_rows=1)] == ["requests"]


def test_limits_pass_through(prql_duck: Executor) -> None:
    result = prql_duck.execute("from requests", max_rows=2)
    assert result.truncated and len(result.rows) == 2


def test_with_language_keeps_sql_and_refuses_what_cannot_work(duck_path: Path) -> None:
    duck = open_database(f"duckdb:///{duck_path}")
    try:
        assert with_language(duck, None) is duck
        assert with_language(duck, "duckdb") is duck
        with pytest.raises(ConfigError, match="SQL dialects are not translated"):
            with_language(duck, "postgresql")
        with pytest.raises(ConfigError, match="unknown query language 'kql'"):
            with_language(duck, "kql")
        wrapped = with_language(duck, "prql")
        assert with_language(wrapped, "prql") is wrapped
    finally:
        duck.close()


def test_a_database_the_language_does_not_run_on_is_refused() -> None:
    class FakeMySQL:
        dialect = "mysql"

    with pytest.raises(ConfigError, match="PRQL does not run on MySQL databases"):
        LanguageExecutor(FakeMySQL(), get_language("prql"))  # type: ignore[arg-type]
