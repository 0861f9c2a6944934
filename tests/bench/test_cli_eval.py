"""`acts-sql eval bird-critic` end to end on synthetic SQLite files."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from acts_sql.bench.models import EvalMode, Status, TaskResult
from acts_sql.bench.report import Tally, build_report, render_markdown
from acts_sql.cli.app import app

SCHEMA = [
    "CREATE TABLE pets (id INTEGER PRIMARY KEY, kind TEXT, born TEXT)",
    "INSERT INTO pets VALUES (1, 'cat', '2020-01-01'), (2, 'dog', '2021-06-30'), (3, 'cat', NULL)",
]
TEST = """
def test_case(pred_sqls, sol_sqls, db_path, conn, conditions):
    assert ex_base(pred_sqls, sol_sqls, db_path, conn, conditions) == 1
"""


def write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def sqlite_task(instance_id, category, issue):
    return {
        "dialect": "SQLite",
        "version": "3",
        "instance_id": instance_id,
        "db_id": "pets",
        "query": "count cats",
        "issue_sql": [issue],
        "preprocess_sql": SCHEMA,
        "clean_up_sql": [],
        "category": category,
    }


def make_files(tmp_path):
    tasks = write(
        tmp_path / "sqlite500.jsonl",
        [
            sqlite_task("SQLite_1", "Query", "SELECT COUNT(*) FROM pets"),
            sqlite_task("SQLite_2", "Personalization", "SELECT kind FROM pets WHERE id = 2"),
            sqlite_task("SQLite_3", "Query", "SELECT * FROM owners"),
        ],
    )
    gt = write(
        tmp_path / "sqlite500_solutions.jsonl",
        [
            {
                "instance_id": "SQLite_1",
                "sol_sql": ["SELECT COUNT(*) FROM pets WHERE kind = 'cat'"],
                "test_cases": [TEST],
            },
            {
                "instance_id": "SQLite_2",
                "sol_sql": ["SELECT kind FROM pets WHERE born IS NULL"],
                "test_cases": [TEST],
            },
            {"instance_id": "SQLite_3", "sol_sql": ["SELECT * FROM owners"], "test_cases": [TEST]},
        ],
    )
    preds = write(
        tmp_path / "preds.jsonl",
        [
            {"instance_id": "SQLite_1", "pred_sqls": "[\"SELECT SUM(kind = 'cat') FROM pets\"]"},
            {"instance_id": "SQLite_2", "pred_sqls": ["SELECT kind FROM pets"]},
        ],
    )
    return tasks, gt, preds


def test_eval_writes_results_and_reports(tmp_path):
    tasks, gt, preds = make_files(tmp_path)
    out = tmp_path / "out"
    args = ["eval", "bird-critic", "--tasks", str(tasks), "--gt", str(gt)]
    result = CliRunner().invoke(app, [*args, "--preds", str(preds), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "accuracy 50.00 %: 1/2 evaluable tasks passed" in result.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [(r["instance_id"], r["status"]) for r in rows] == [
        ("SQLite_1", "passed"),
        ("SQLite_2", "failed"),
        ("SQLite_3", "not_evaluable"),
    ]
    assert {"instance_id", "dialect", "category", "status", "reason"} <= set(rows[0])
    report = json.loads((out / "report.json").read_text())
    assert report["overall"]["accuracy"] == 50.0
    assert report["by_category"]["Personalization"]["passed"] == 0
    assert report["engines"]["SQLite"].startswith("SQLite 3.")
    markdown = (out / "report.md").read_text()
    assert "| SQLite | 3 | 2 | 1 | 1 | 0 | 0 | 50.00 |" in markdown


def test_eval_gold_and_issue_modes(tmp_path):
    tasks, gt, _ = make_files(tmp_path)
    base = ["eval", "bird-critic", "--tasks", str(tasks), "--gt", str(gt), "--out"]
    gold = CliRunner().invoke(app, [*base, str(tmp_path / "g"), "--mode", "gold"])
    assert gold.exit_code == 0, gold.output
    assert "accuracy 100.00 %: 2/2" in gold.output
    issue = CliRunner().invoke(app, [*base, str(tmp_path / "i"), "--mode", "issue"])
    assert "accuracy 0.00 %: 0/2" in issue.output


def test_eval_bad_input_exits_2_with_one_line(tmp_path):
    tasks, gt, _ = make_files(tmp_path)
    base = ["eval", "bird-critic", "--tasks", str(tasks), "--out", str(tmp_path / "o")]
    no_preds = CliRunner().invoke(app, [*base, "--gt", str(gt)])
    assert no_preds.exit_code == 2
    assert "--preds is needed" in no_preds.output
    missing = CliRunner().invoke(
        app, [*base, "--gt", str(tmp_path / "nope.jsonl"), "--mode", "gold"]
    )
    assert missing.exit_code == 2
    assert "file not found" in missing.output
    assert "Traceback" not in missing.output


def test_report_counts_not_evaluable_apart():
    def result(status, dialect="SQLite", category="Query"):
        return TaskResult(
            instance_id="x", set="s", dialect=dialect, category=category, status=status
        )

    results = [
        result(Status.PASSED),
        result(Status.ERROR),
        result(Status.NOT_EVALUABLE),
        result(Status.PASSED, dialect="PostgreSQL", category="Management"),
    ]
    assert Tally.of(results).model_dump() == {
        "tasks": 4,
        "evaluable": 3,
        "passed": 2,
        "failed": 0,
        "error": 1,
        "timeout": 0,
        "not_evaluable": 1,
        "accuracy": 66.67,
    }
    report = build_report(results, mode=EvalMode.ISSUE)
    assert report.unexpected == ["s/x", "s/x"]
    assert report.by_dialect["PostgreSQL"].accuracy == 100.0
    assert "Issue SQL that passed" in render_markdown(report)


def test_eval_scores_only_the_sets_the_predictions_cover(tmp_path):
    tasks, gt, preds = make_files(tmp_path)
    other = tmp_path / "tasks"
    other.mkdir()
    tasks.rename(other / "sqlite500.jsonl")
    write(other / "flash.jsonl", [{**sqlite_task(1, "Query", "SELECT 1"), "dialect": "SQLite"}])
    renamed = preds.rename(tmp_path / "sqlite_500.jsonl")
    out = tmp_path / "out"
    args = ["eval", "bird-critic", "--tasks", str(other), "--gt", str(gt), "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--preds", str(renamed)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert {r["set"] for r in rows} == {"sqlite500"}


def test_eval_with_an_unreachable_server_exits_2(tmp_path):
    tasks = write(
        tmp_path / "pg530.jsonl",
        [{**sqlite_task("PostgreSQL_1", "Query", "SELECT 1"), "dialect": "PostgreSQL"}],
    )
    gt = write(
        tmp_path / "pg530_solutions.jsonl",
        [{"instance_id": "PostgreSQL_1", "sol_sql": ["SELECT 1"], "test_cases": []}],
    )
    args = ["eval", "bird-critic", "--tasks", str(tasks), "--gt", str(gt), "--mode", "gold"]
    bad = "postgresql://nobody@127.0.0.1:1/postgres"
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "o"), "--pg-url", bad])
    assert result.exit_code == 2
    assert "cannot connect to the PostgreSQL server" in result.output
