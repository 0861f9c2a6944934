"""SQL rewritten as PRQL (`acts_sql.sql.languages.prql.from_sql`), table-driven from
tests/fixtures/sql/prql/from_sql.json; that the rewrites return the SQL's rows is checked
on a real database in tests/logs/test_sql_translation.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acts_sql.sql.languages import get_language
from acts_sql.sql.languages.prql.from_sql import translate

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sql" / "prql" / "from_sql.json"
CASES = json.loads(FIXTURE.read_text(encoding="utf-8"))
prql = get_language("prql")


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_sql_is_rewritten_as_the_expected_prql(case):
    assert translate(case["sql"], "duckdb") == case["prql"]


@pytest.mark.parametrize("case", CASES["cases"], ids=[c["name"] for c in CASES["cases"]])
def test_every_expected_prql_compiles(case):
    assert prql.check(case["prql"]) == []


@pytest.mark.parametrize("sql", CASES["untranslatable"])
def test_what_is_not_covered_is_left_alone(sql):
    assert translate(sql, "duckdb") is None


def test_the_plugin_offers_the_rewrite_for_its_targets_sql():
    assert prql.from_sql("select count(*) as n from requests", "duckdb") == (
        "from requests\naggregate {n = count this}"
    )
    # PostgreSQL's SQL is read as PostgreSQL: its :: cast becomes an s-string of its own SQL
    assert prql.from_sql("select x::int as y from t", "postgresql") == (
        'from t\nselect {y = s"CAST({x} AS INT)"}'
    )


def test_a_prql_query_is_not_sql_to_rewrite():
    assert prql.from_sql("from requests\ntake 3", "duckdb") is None


def test_sql_languages_rewrite_nothing():
    assert get_language("sqlite").from_sql("select 1", "sqlite") is None
