"""A missing Python driver is one error naming the extra to install.

A server dialect's drivers are checked once, before any task runs.

Without them every PostgreSQL task used to fail on its own ("the method failed:
No module named 'psycopg2'") after the model had loaded, and the run went on.
Now the run stops at once with the install command, and a run of SQLite tasks
does not need them. The log benchmark's database (DuckDB) says the same.
"""

from __future__ import annotations

import json
import sys

import pytest
from typer.testing import CliRunner

from acts_sql.bench.databases import MySQLFactory, PostgresFactory, require_drivers
from acts_sql.bench.errors import DriverMissingError, EvaluatorSetupError
from acts_sql.bench.logs.generator import generate
from acts_sql.bench.models import Dialect
from acts_sql.cli.app import app

UNREACHABLE_PG = "postgresql://acts:pw@127.0.0.1:9/postgres"


def test_missing_drivers_are_named_with_the_install_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    with pytest.raises(EvaluatorSetupError) as caught:
        require_drivers(Dialect.POSTGRESQL, ("json", "psycopg2"))
    message = str(caught.value)
    assert "PostgreSQL" in message and "psycopg2" in message and "json" not in message
    assert "pip install 'acts-sql[bench]'" in message
    require_drivers(Dialect.POSTGRESQL, ("json",))  # present: no error


@pytest.mark.parametrize(
    ("factory", "blocked"),
    [(PostgresFactory, "psycopg"), (PostgresFactory, "psycopg2"), (MySQLFactory, "pymysql")],
)
def test_factory_check_needs_the_harness_and_engine_drivers(monkeypatch, factory, blocked):
    monkeypatch.setitem(sys.modules, blocked, None)
    with pytest.raises(EvaluatorSetupError, match=blocked):
        factory("postgresql://unused").check()  # before any connection is tried


def _bench(root, tmp_path, task_set, ids):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"correct": []}))  # any LLM call would fail the run
    out = tmp_path / "run"
    args = ["bench", "bird-critic", "--tasks", str(root / "tasks" / f"{task_set}.jsonl")]
    args += ["--gt", str(root / "dev"), "--method", "raw", "--llm", f"scripted:{script}"]
    args += ["--ids", ids, "--out", str(out), "--pg-url", UNREACHABLE_PG]
    return CliRunner().invoke(app, args), out


def test_a_run_of_postgresql_tasks_stops_before_any_task(bird_critic_dir, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    result, out = _bench(bird_critic_dir, tmp_path, "pg530", "PostgreSQL_118,PostgreSQL_124")
    assert result.exit_code == 2, result.output
    assert "psycopg2" in result.output and "pip install 'acts-sql[bench]'" in result.output
    assert not (out / "records.jsonl").exists() or not (out / "records.jsonl").read_text()


def test_a_run_of_sqlite_tasks_does_not_need_them(bird_critic_dir, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "psycopg2", None)
    result, out = _bench(bird_critic_dir, tmp_path, "sqlite500", "SQLite_4")
    assert "psycopg2" not in result.output
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert [r["instance_id"] for r in records] == ["SQLite_4"]


def test_the_log_benchmark_names_the_duckdb_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "duckdb", None)
    with pytest.raises(DriverMissingError, match=r"pip install 'acts-sql\[duckdb\]'"):
        generate(tmp_path / "logs.duckdb")
    assert not (tmp_path / "logs.duckdb").exists()  # nothing half-written
    assert not list(tmp_path.glob("*.partial"))
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"correct": []}))
    args = ["bench", "logs", "--method", "raw", "--llm", f"scripted:{script}"]
    result = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "run"), "--limit", "1"])
    assert result.exit_code == 2 and "acts-sql[duckdb]" in result.output, result.output
