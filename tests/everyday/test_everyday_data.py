"""The everyday cases are what they claim: each wrong SQL is wrong on its own database, each
gold SQL runs and returns rows, the suite is spread over dialects, classes and schemas, and
no question gives the fix away."""

from __future__ import annotations

from collections import Counter

import psycopg
import pytest

from acts_sql.bench.everyday.cases import (
    DIALECTS,
    ERROR_CLASSES,
    SILENT_CLASSES,
    EverydayCase,
    load_cases,
    select_cases,
)
from acts_sql.bench.everyday.databases import case_databases, with_database
from acts_sql.bench.everyday.scoring import gold_result, returns_gold
from acts_sql.db.connect import open_database
from acts_sql.db.result import ExecResult
from acts_sql.errors import ConfigError

from .conftest import pg_url

CASES = load_cases()
FIX_WORDS = ("distinct", "is null", "coalesce", "group by", "cast", "quote", "typo", "misspel",
             "comma", "alias", "ambiguous", "integer", "join key", "spelled")  # fmt: skip


def test_the_suite_is_spread_over_dialects_classes_and_schemas():
    assert len(CASES) >= 36
    assert len({c.id for c in CASES}) == len(CASES)
    per_dialect = Counter(c.dialect for c in CASES)
    assert set(per_dialect) == set(DIALECTS) and min(per_dialect.values()) >= 12
    for error_class in ERROR_CLASSES:
        dialects = {c.dialect for c in CASES if c.error_class == error_class}
        assert len(dialects) >= 2, error_class
    for dialect in DIALECTS:
        assert len({c.schema_name for c in CASES if c.dialect == dialect}) >= 4, dialect
    assert all(c.id[0] == c.dialect[0].upper() for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_no_question_gives_the_fix_away(case: EverydayCase):
    question = case.question.lower()
    assert not [w for w in FIX_WORDS if w in question]
    assert case.wrong_sql.lower() not in question and case.gold_sql.lower() not in question


def _check(case: EverydayCase, url: str) -> None:
    executor = open_database(url)
    try:
        gold = executor.execute(case.gold_sql)
        wrong = executor.execute(case.wrong_sql)
    finally:
        executor.close()
    assert gold.ok and gold.rows, (case.id, gold.failure())
    assert not returns_gold(wrong, gold_result(gold, case.ordered)), case.id
    if case.error_class in SILENT_CLASSES:
        assert wrong.ok, (case.id, wrong.failure())  # a silent slip: it runs


def _of(dialect: str) -> list[EverydayCase]:
    return [c for c in CASES if c.dialect == dialect]


@pytest.mark.parametrize("case", _of("sqlite") + _of("duckdb"), ids=lambda c: c.id)
def test_wrong_sql_is_wrong_and_gold_sql_gives_rows(case, file_databases):
    _check(case, file_databases[(case.dialect, case.schema_name)])


@pytest.mark.parametrize("case", _of("postgresql"), ids=lambda c: c.id)
def test_wrong_sql_is_wrong_and_gold_sql_gives_rows_on_postgresql(case, pg_databases):
    _check(case, pg_databases[(case.dialect, case.schema_name)])


def test_postgresql_databases_are_dropped_afterwards():
    url = pg_url()
    if not url:
        pytest.skip("ACTS_SQL_TEST_PG_URL is not set")
    with case_databases(select_cases(["P01"]), url) as urls:
        name = urls[("postgresql", "hr")].rsplit("/", 1)[1]
        assert name.startswith("acts_everyday_hr_")
    with psycopg.connect(with_database(url, "postgres")) as conn:
        row = conn.execute("SELECT count(*) FROM pg_database WHERE datname = %s", [name]).fetchone()
    assert row == (0,)


def test_file_databases_are_removed_afterwards():
    with case_databases(select_cases(["S01", "D01"]), None) as urls:
        paths = [u.split(":///", 1)[1] for u in urls.values()]
        assert len(paths) == 2
    from pathlib import Path

    assert not any(Path(p).exists() for p in paths)
    assert not Path(paths[0]).parent.exists()


def test_postgresql_cases_without_a_server_are_bad_configuration():
    with pytest.raises(ConfigError, match="--pg-url"), case_databases(select_cases(["P01"]), None):
        pass


def test_selection_by_id_dialect_and_limit():
    assert [c.id for c in select_cases(["P02", "S01"])] == ["P02", "S01"]
    assert {c.dialect for c in select_cases(dialects=["duckdb"])} == {"duckdb"}
    assert len(select_cases(dialects=["sqlite"], limit=2)) == 2
    with pytest.raises(ConfigError, match="unknown case id"):
        select_cases(["X99"])
    with pytest.raises(ConfigError, match="unknown dialect"):
        select_cases(dialects=["oracle"])


def _result(columns: list[str], rows: list[list[object]]) -> ExecResult:
    return ExecResult(status="ok", columns=columns, rows=rows, row_count=len(rows))


def test_scoring_ignores_names_and_order_but_not_columns_or_ordered_rows():
    gold = gold_result(_result(["a", "b"], [["x", 1], ["y", 2]]), ordered=False)
    assert returns_gold(_result(["n", "m"], [[2, "y"], [1, "x"]]), gold)
    assert not returns_gold(_result(["a"], [["x"], ["y"]]), gold)  # a column short
    assert not returns_gold(_result(["a", "b", "c"], [["x", 1, 0], ["y", 2, 0]]), gold)
    assert not returns_gold(_result(["a", "b"], [["x", 1], ["x", 1], ["y", 2]]), gold)
    ordered = gold_result(_result(["a"], [["y"], ["x"]]), ordered=True)
    assert returns_gold(_result(["a"], [["y"], ["x"]]), ordered)
    assert not returns_gold(_result(["a"], [["x"], ["y"]]), ordered)


def test_a_long_numeric_passed_as_text_scores_as_the_number():
    gold = gold_result(_result(["r"], [["0.55555555555555555556"]]), ordered=False)
    assert returns_gold(_result(["r"], [[0.5555555555555556]]), gold)
    assert not returns_gold(_result(["r"], [[0]]), gold)


def test_order_is_part_of_the_answer_only_when_the_gold_sql_orders():
    assert {c.id for c in CASES if c.ordered} == {"S09", "P01"}
