"""Tasks that read the clock: found, flagged in the report, and run on a fixed day with --today."""

from __future__ import annotations

import json
import sqlite3
from datetime import UTC, date, datetime

import pytest
from typer.testing import CliRunner

from acts_sql.bench.clock import clock_fixed, clock_readers, fixed_now
from acts_sql.bench.helpers.sqlite_clock import FixedClock
from acts_sql.bench.models import EvalMode, Status
from acts_sql.bench.report import build_report, render_markdown
from acts_sql.bench.scorer import EvalOptions, Evaluator
from acts_sql.cli.app import app

DAY = date(2024, 3, 15)
EVENTS = [
    "CREATE TABLE ev (id INTEGER PRIMARY KEY, day TEXT)",
    "INSERT INTO ev VALUES (1, '2024-03-01'), (2, '2024-03-10'), (3, '2024-03-14')",
]
RELATIVE = ["SELECT id FROM ev WHERE day >= date('now', '-7 days')"]
"""The solution: events of the last week, relative to the clock."""
WRITTEN_OUT = ["SELECT id FROM ev WHERE day >= '2024-03-08'"]
"""A prediction with the day written out: right on 2024-03-15 only."""
EX_BASE = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    assert ex_base(pred_sqls, sol_sqls, db_path, conn, conditions) == 1
"""


@pytest.fixture
def fixed_conn():
    clock = FixedClock(fixed_now(DAY))
    conn = sqlite3.connect(":memory:")
    clock.install(conn)
    yield conn
    conn.close()
    clock.close()


def one(conn, sql):
    return conn.execute(sql).fetchone()


def test_fixed_sqlite_clock_answers_every_way_of_asking(fixed_conn):
    assert one(fixed_conn, "SELECT date('now'), date('NOW', '-1 day'), date()") == (
        "2024-03-15",
        "2024-03-14",
        "2024-03-15",
    )
    assert one(fixed_conn, "SELECT datetime('now'), time('now'), strftime('%Y-%m', 'now')") == (
        "2024-03-15 12:00:00",
        "12:00:00",
        "2024-03",
    )
    assert one(fixed_conn, "SELECT strftime('%s'), unixepoch('now'), julianday('now')") == (
        str(int(datetime(2024, 3, 15, 12, tzinfo=UTC).timestamp())),
        int(datetime(2024, 3, 15, 12, tzinfo=UTC).timestamp()),
        2460385.0,
    )
    assert one(fixed_conn, "SELECT CURRENT_DATE, CURRENT_TIME, CURRENT_TIMESTAMP") == (
        "2024-03-15",
        "12:00:00",
        "2024-03-15 12:00:00",
    )
    # other time values and SQLite's own rules stay as they are
    assert one(fixed_conn, "SELECT date('2020-02-29', '+1 year'), date('garbage')") == (
        "2021-03-01",
        None,
    )


def test_fixed_sqlite_clock_reaches_defaults_and_triggers(fixed_conn):
    fixed_conn.execute(
        "CREATE TABLE t (id INT, made TEXT DEFAULT CURRENT_TIMESTAMP,"
        " due TEXT DEFAULT (date('now', '+3 days')), seen TEXT)"
    )
    fixed_conn.execute(
        "CREATE TRIGGER stamp AFTER INSERT ON t BEGIN"
        " UPDATE t SET seen = datetime('now') WHERE id = new.id; END"
    )
    fixed_conn.execute("INSERT INTO t (id) VALUES (1)")
    assert one(fixed_conn, "SELECT made, due, seen FROM t") == (
        "2024-03-15 12:00:00",
        "2024-03-18",
        "2024-03-15 12:00:00",
    )


def test_clock_readers_are_found_in_sql_and_test_code():
    assert clock_readers(["SELECT * FROM t WHERE d > date('now', '-1 day')"]) == ["'now'"]
    assert clock_readers(["SELECT CURRENT_DATE, now ( ), curdate()"]) == [
        "curdate()",
        "current_date",
        "now()",
    ]
    assert clock_readers(["SELECT date(d, 'localtime'), current_dates FROM t"]) == []
    source = 'def test_case(a, b, c, d):\n    assert date.today().year == 2024, "SELECT now()"'
    assert clock_readers([], [source]) == ["now()", "python:date.today()"]


def test_clock_fixed_only_where_it_can_be():
    assert clock_fixed("SQLite", ["'now'"], DAY)
    assert clock_fixed("MySQL", ["now()", "current_date"], DAY)
    assert not clock_fixed("MySQL", ["sysdate()"], DAY)
    assert not clock_fixed("PostgreSQL", ["now()"], DAY)
    assert not clock_fixed("SQLite", ["'now'", "python:date.today()"], DAY)
    assert not clock_fixed("SQLite", ["'now'"], None)


def test_today_decides_a_date_dependent_sqlite_verdict(task):
    item = task(preprocess=EVENTS, sol=RELATIVE, tests=[EX_BASE])
    verdicts = {}
    for day in (DAY, date(2024, 6, 1)):
        options = EvalOptions(test_timeout_s=10, task_timeout_s=30, today=day)
        with Evaluator(options) as evaluator:
            verdicts[day] = evaluator.score(item, WRITTEN_OUT)
    assert verdicts[DAY].status == Status.PASSED, verdicts[DAY].reason
    assert verdicts[date(2024, 6, 1)].status == Status.FAILED
    assert verdicts[DAY].clock == ["'now'"] and verdicts[DAY].clock_fixed


def test_without_today_a_clock_task_is_flagged(sqlite_evaluator, task):
    result = sqlite_evaluator.score(
        task(preprocess=EVENTS, sol=RELATIVE, tests=[EX_BASE]), RELATIVE
    )
    assert result.clock == ["'now'"] and not result.clock_fixed
    plain = sqlite_evaluator.score(task(preprocess=EVENTS, sol=["SELECT id FROM ev"]), ["SELECT 1"])
    assert plain.clock == []
    report = build_report([result, plain], mode=EvalMode.PRED)
    assert report.clock_dependent == ["synthetic/T_1"]
    text = render_markdown(report)
    assert "1 tasks read the current date or time" in text and "--today YYYY-MM-DD" in text


def test_mysql_today_sets_the_session_clock(mysql_url, task):
    probe = """
def test_case(pred_sqls, sol_sqls, db_name, conn):
    rows, _ = perform_query_on_mysql_databases(
        "SELECT CURDATE(), NOW(), made FROM ev WHERE id = 9", db_name, conn)
    assert [tuple(str(c) for c in r) for r in rows] == [
        ("2024-03-15", "2024-03-15 12:00:00", "2024-03-15 12:00:00")], rows
"""
    item = task(
        dialect="MySQL",
        preprocess=[
            "CREATE TABLE ev (id INT PRIMARY KEY, made DATETIME DEFAULT CURRENT_TIMESTAMP)",
        ],
        sol=["SELECT 1"],
        tests=[probe],
    )
    from acts_sql.bench.servers import ServerURLs

    options = EvalOptions(
        servers=ServerURLs(mysql=mysql_url), test_timeout_s=20, task_timeout_s=60, today=DAY
    )
    with Evaluator(options) as evaluator:
        result = evaluator.score(item, ["INSERT INTO ev (id) VALUES (9)"])
    assert result.status == Status.PASSED, result.reason
    assert result.clock_fixed


def test_postgresql_clock_is_flagged_not_fixed(pg_url, task):
    from acts_sql.bench.servers import ServerURLs

    item = task(
        dialect="PostgreSQL",
        preprocess=["CREATE TABLE ev (id INT, day DATE)"],
        sol=["SELECT id FROM ev WHERE day > CURRENT_DATE"],
        tests=[],
    )
    options = EvalOptions(
        servers=ServerURLs(postgresql=pg_url), test_timeout_s=20, task_timeout_s=60, today=DAY
    )
    with Evaluator(options) as evaluator:
        result = evaluator.score(item, ["SELECT 1"])
    assert result.clock == ["current_date"] and not result.clock_fixed
    report = build_report([result], mode=EvalMode.PRED, today=DAY)
    assert report.clock_dependent == ["synthetic/T_1"]
    assert "PostgreSQL's clock" in render_markdown(report)


def test_cli_today_reaches_the_report_and_rejects_bad_days(tmp_path):
    task_line = {
        "dialect": "SQLite",
        "instance_id": "SQLite_1",
        "db_id": "ev",
        "issue_sql": ["SELECT id FROM ev"],
        "preprocess_sql": EVENTS,
        "category": "Query",
    }
    (tmp_path / "sqlite500.jsonl").write_text(json.dumps(task_line) + "\n")
    solution = {"instance_id": "SQLite_1", "sol_sql": RELATIVE, "test_cases": [EX_BASE]}
    (tmp_path / "sqlite500_solutions.jsonl").write_text(json.dumps(solution) + "\n")
    (tmp_path / "preds.jsonl").write_text(
        json.dumps({"instance_id": "SQLite_1", "pred_sqls": WRITTEN_OUT}) + "\n"
    )
    base = ["eval", "bird-critic", "--tasks", str(tmp_path / "sqlite500.jsonl")]
    base += ["--gt", str(tmp_path / "sqlite500_solutions.jsonl")]
    base += ["--preds", str(tmp_path / "preds.jsonl"), "--workers", "1"]
    runner = CliRunner()
    ran = runner.invoke(app, [*base, "--out", str(tmp_path / "out"), "--today", "2024-03-15"])
    assert ran.exit_code == 0, ran.output
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["today"] == "2024-03-15" and report["clock_fixed"] == ["sqlite500/SQLite_1"]
    assert report["overall"]["passed"] == 1
    bad = runner.invoke(app, [*base, "--out", str(tmp_path / "bad"), "--today", "15/03/2024"])
    assert bad.exit_code == 2
    assert "expected a date as YYYY-MM-DD" in bad.output
