"""The batch input's edges (issue 37): a byte-order mark on the first line, empty SQL,
questions and SQL above the input limits; each a bad line or a task, never a silent
switch to text-to-SQL mode."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from acts_sql.batch.databases import DatabaseCatalog
from acts_sql.batch.tasks import BadLine, BatchJob, read_jobs
from acts_sql.cli.app import app
from acts_sql.demo import demo_db_path, get_task
from acts_sql.engine.inputs import MAX_QUESTION_CHARS, MAX_SQL_CHARS
from batch_inputs import SCRIPT

BOM = "\ufeff"


def jobs(path: Path, catalog: DatabaseCatalog | None = None) -> list[BatchJob | BadLine]:
    return list(read_jobs(path, catalog or DatabaseCatalog()))


def line(**fields: object) -> str:
    return json.dumps({"database": f"sqlite:///{demo_db_path()}", **fields})


def test_a_bom_before_the_first_line_is_dropped(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(BOM + line(id="a", sql="SELECT 1") + "\n" + line(id="b", sql="SELECT 2"))
    read = jobs(tasks)
    assert [type(j) for j in read] == [BatchJob, BatchJob]
    assert read[0].task.id == "a" and read[0].task.sql == "SELECT 1"


def test_a_bom_in_the_databases_file_is_dropped(tmp_path):
    databases = tmp_path / "databases.toml"
    databases.write_text(BOM + f'[databases]\ndemo = "sqlite:///{demo_db_path()}"\n')
    assert "demo" in DatabaseCatalog.load(databases).urls


def test_empty_sql_and_inputs_above_the_limits_are_bad_lines(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    rows = [
        line(id="empty", question="q", sql=""),
        line(id="blank", question="q", sql="  \n "),
        line(id="huge-sql", question="q", sql="SELECT 1 -- " + "x" * MAX_SQL_CHARS),
        line(id="huge-question", question="q" * (MAX_QUESTION_CHARS + 1), sql="SELECT 1"),
        line(id="text-to-sql", question="q"),
        line(id="null-sql", question="q", sql=None),
    ]
    tasks.write_text("\n".join(rows) + "\n")
    read = {j.id if isinstance(j, BadLine) else j.task.id: j for j in jobs(tasks)}
    for bad in ("empty", "blank"):
        assert isinstance(read[bad], BadLine) and "empty SQL" in read[bad].error
    assert isinstance(read["huge-sql"], BadLine) and "sql:" in read["huge-sql"].error
    assert f"{MAX_SQL_CHARS}" in read["huge-sql"].error
    assert isinstance(read["huge-question"], BadLine) and "question:" in read["huge-question"].error
    assert isinstance(read["text-to-sql"], BatchJob) and read["text-to-sql"].task.sql is None
    assert isinstance(read["null-sql"], BatchJob) and read["null-sql"].task.sql is None


def test_a_bom_file_runs_its_first_task(tmp_path):
    tasks, out = tmp_path / "tasks.jsonl", tmp_path / "out"
    task = get_task("figure3")
    tasks.write_text(BOM + line(id="first", question=task.question, sql=task.sql) + "\n")
    result = CliRunner().invoke(
        app, ["batch", "--in", str(tasks), "--out", str(out), "--llm", f"scripted:{SCRIPT}"]
    )
    assert result.exit_code == 0, result.output
    records = [json.loads(r) for r in (out / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["first"] and records[0].get("error") is None
