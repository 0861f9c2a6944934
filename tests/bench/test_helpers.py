"""The official helper functions, one by one (pure ones; the database ones run in the evaluator
tests)."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from acts_sql.bench.helpers import common, sqlite


def test_remove_distinct_regex_removes_the_word_anywhere():
    queries = ["SELECT DISTINCT(a) FROM t", "select distinct a, count(Distinct b) from t"]
    assert common.remove_distinct(queries) == [
        "SELECT (a) FROM t",
        "select  a, count( b) from t",
    ]
    # a whole word only: DISTINCTROW and column names containing it stay
    assert common.remove_distinct(["SELECT distinctive FROM t"]) == ["SELECT distinctive FROM t"]


def test_sqlite_remove_distinct_splits_on_single_spaces():
    assert sqlite.remove_distinct(["SELECT DISTINCT a FROM t"]) == ["SELECT a FROM t"]
    assert sqlite.remove_distinct(["SELECT DISTINCT(a) FROM t"]) == ["SELECT DISTINCT(a) FROM t"]
    assert sqlite.remove_distinct(["SELECT\nDISTINCT a"]) == ["SELECT\nDISTINCT a"]


def test_preprocess_results_writes_dates_as_iso_days():
    rows = [(date(2024, 1, 5), datetime(2024, 1, 5, 13, 45), "2024-01-05", 1.234567)]
    assert common.preprocess_results(rows) == [("2024-01-05", "2024-01-05", "2024-01-05", 1.234567)]


def test_sqlite_preprocess_results_rounds_and_serialises():
    rows = [(1.005, Decimal("2.345"), {"b": 1.239, "a": [1.111]}, [3.333], "x")]
    assert sqlite.preprocess_results(rows) == [
        (1.0, Decimal("2.35"), '{"a": [1.11], "b": 1.24}', "[3.33]", "x")
    ]


def test_check_sql_function_usage_is_a_case_insensitive_substring_test():
    assert (
        common.check_sql_function_usage(["SELECT STRING_AGG(a, ',') FROM t"], ["string_agg"]) == 1
    )
    assert common.check_sql_function_usage(["SELECT a FROM t"], ["string_agg"]) == 0
    assert common.check_sql_function_usage([], []) == 0


def test_remove_round_keeps_the_first_argument_even_nested():
    assert sqlite.remove_round(["SELECT ROUND(ROUND(price, 2), 1) FROM t"]) == [
        "SELECT price FROM t"
    ]
    assert sqlite.remove_round(["SELECT round (AVG(x * (1 + y)), 2) AS m"]) == [
        "SELECT AVG(x * (1 + y)) AS m"
    ]
    # no word boundary, as in the official helper; unbalanced calls are left alone
    assert sqlite.remove_round(["SELECT PROUND(a, 1)"]) == ["SELECT Pa"]
    assert sqlite.remove_round(["SELECT ROUND(a, 1"]) == ["SELECT ROUND(a, 1"]


def test_remove_comments_keeps_a_final_comment_without_newline():
    sql = "SELECT a -- first\n/* block\n comment */ FROM t\n\n\n-- last"
    assert sqlite.remove_comments([sql]) == ["SELECT a \n FROM t\n-- last"]


def test_statement_timeouts_follow_the_official_rule():
    assert common.statement_timeout_s("SELECT 1") == 60
    assert common.statement_timeout_s("with recursive r AS (SELECT 1) SELECT * FROM r") == 15
    assert common.missing_extension('extension "postgis" is not available') == "postgis"
    assert common.counts_as_missing("INSERT INTO t VALUES (1)")
    assert not common.counts_as_missing("  drop table t")
