"""SQL kept as PRQL on a real database: the rewrites return the SQL's rows
(`acts_sql.sql.languages.prql.from_sql`), and `translate_sql` keeps a rewrite only
when they do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acts_sql.bench.logs.tasks import select_tasks
from acts_sql.db.connect import open_database
from acts_sql.db.language import translate_sql
from acts_sql.sql.languages import get_language
from acts_sql.sql.languages.prql import PRQL
from acts_sql.sql.languages.prql.from_sql import translate

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "sql" / "prql" / "from_sql.json"
CASES = json.loads(FIXTURE.read_text(encoding="utf-8"))["cases"]
prql = get_language("prql")


def rows(result) -> list[str]:
    return sorted(repr(tuple(r)) for r in result.rows)


@pytest.fixture
def sql_logs(small_logs):
    executor = open_database(f"duckdb:///{small_logs.path}")
    yield executor
    executor.close()


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_each_rewrite_returns_the_rows_of_its_sql(case, sql_logs, prql_logs):
    own, rewritten = sql_logs.execute(case["sql"]), prql_logs.execute(case["prql"])
    assert own.ok and rewritten.ok, (own.error, rewritten.error)
    assert own.rows, "a case whose SQL returns nothing proves nothing"
    assert rows(rewritten) == rows(own)


def test_the_gold_queries_compiled_to_sql_come_back_as_prql_with_their_rows(sql_logs, prql_logs):
    """The 60 gold PRQL queries of `bench logs`, compiled to DuckDB SQL by prqlc (CTEs,
    joins, windows, s-strings), read back: every rewrite that runs returns the SQL's rows,
    and most are rewritten (48 of 60 when written; windows and DISTINCT ON are not)."""
    rewritten = 0
    for task in select_tasks():
        sql = prql.compile(task.gold, "duckdb")
        back = translate(sql, "duckdb")
        if back is None:
            continue
        result = prql_logs.execute(back)
        if not result.ok:
            continue
        rewritten += 1
        assert rows(result) == rows(sql_logs.execute(sql)), (task.id, back)
    assert rewritten >= 45


def test_sql_where_prql_is_run_is_kept_as_its_rewrite(prql_logs):
    case = CASES[1]
    kept = translate_sql(prql_logs, case["sql"])
    assert kept is not None
    assert (kept.query, kept.sql, kept.language) == (case["prql"], case["sql"], "prql")
    assert kept.rows == len(prql_logs.execute(case["prql"]).rows) > 0


@pytest.mark.parametrize(
    "text",
    [
        "from requests\ntake 3",  # PRQL already
        "select path, rank() over (order by ts) from requests",  # not covered
        "select nope from requests",  # SQL that does not run: nothing to check a rewrite by
        "",
    ],
)
def test_nothing_is_kept_when_there_is_no_checked_rewrite(prql_logs, text):
    assert translate_sql(prql_logs, text) is None


def test_a_rewrite_with_other_rows_than_its_sql_is_not_kept(prql_logs, monkeypatch):
    monkeypatch.setattr(PRQL, "from_sql", lambda self, sql, dialect: "from requests\ntake 1")
    assert translate_sql(prql_logs, "select request_id from requests limit 2") is None


def test_a_rewrite_in_another_order_than_its_sorted_sql_is_not_kept(prql_logs, monkeypatch):
    sql = "select request_id from requests order by request_id limit 3"
    monkeypatch.setattr(
        PRQL,
        "from_sql",
        lambda self, s, d: "from requests\nsort {request_id}\ntake 3\nsort {-request_id}",
    )
    assert translate_sql(prql_logs, sql) is None
    monkeypatch.undo()
    assert translate_sql(prql_logs, sql) is not None


def test_an_executor_of_plain_sql_keeps_sql(sql_logs):
    assert translate_sql(sql_logs, "select count(*) from requests") is None
