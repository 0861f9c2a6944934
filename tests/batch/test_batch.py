"""`acts-sql batch` with the local executor: results, bad lines, resuming, errors."""

from __future__ import annotations

import json
import socket

import pytest
from typer.testing import CliRunner

from acts_sql.batch.databases import DatabaseCatalog
from acts_sql.batch.runner import BatchAbortedError, BatchRequest, run_batch, trace_name
from acts_sql.batch.worker import BatchSettings
from acts_sql.cli.app import app
from acts_sql.demo import demo_db_path
from acts_sql.engine.options import CorrectionOptions
from acts_sql.errors import ConfigError, DatabaseOpenError
from acts_sql.scale import ThreadPool
from batch_inputs import SCRIPT, decided, results, twelve_lines

runner = CliRunner()


def batch_args(tasks, databases, out, *extra):
    return [
        "batch",
        "--in",
        str(tasks),
        "--out",
        str(out),
        "--databases",
        str(databases),
        "--llm",
        f"scripted:{SCRIPT}",
        *extra,
    ]


def test_twelve_lines_two_bad_ten_results_and_a_resumed_run_adds_nothing(tmp_path):
    tasks, databases = twelve_lines(tmp_path)
    out = tmp_path / "out"
    first = runner.invoke(app, batch_args(tasks, databases, out, "--workers", "2"))
    assert first.exit_code == 1, first.output  # complete, but two lines were not tasks
    assert "line 4: not JSON" in first.stderr
    assert "line 9: database: Field required" in first.stderr

    records = results(out)
    assert sorted(r["id"] for r in records) == [f"task-{n}" for n in range(10)]
    assert all(r["error"] is None for r in records)
    assert all((out / r["trace_file"]).is_file() for r in records)
    by_id = {r["id"]: r for r in records}
    assert by_id["task-0"]["accepted"] and "b1.start_time" in by_id["task-0"]["sql"]
    assert by_id["task-0"]["usage"]["llm_calls"] == 7
    # the user's SQL was already right: the script's judge accepts the other reading
    assert by_id["task-1"]["accepted"] and "b1.start_time" not in by_id["task-1"]["sql"]
    generated = json.loads((out / by_id["task-2"]["trace_file"]).read_text())
    assert generated["generated_initial_sql"] is True  # no SQL given: text-to-SQL mode
    errors = [json.loads(line) for line in (out / "errors.jsonl").read_text().splitlines()]
    assert [(e["line"], e["id"]) for e in errors] == [(4, None), (9, "no-database")]
    summary = json.loads((out / "summary.json").read_text())
    accepted = sum(r["accepted"] for r in records)
    assert (summary["tasks"], summary["finished"], summary["bad_lines"]) == (10, 10, 2)
    assert summary["accepted"] == accepted and summary["accepted_share"] == accepted / 10
    assert summary["usage"]["llm_calls"]["median"] > 0 and summary["ran"] == 10
    assert f"{accepted} accepted of 10 finished" in first.stderr

    before = (out / "results.jsonl").read_bytes()
    traces = {p.name: p.stat().st_mtime_ns for p in (out / "traces").iterdir()}
    again = runner.invoke(app, batch_args(tasks, databases, out, "--workers", "2"))
    assert again.exit_code == 1, again.output
    assert "0 run now" in again.stderr and "line 4: not JSON" in again.stderr
    assert (out / "results.jsonl").read_bytes() == before
    assert {p.name: p.stat().st_mtime_ns for p in (out / "traces").iterdir()} == traces
    assert json.loads((out / "summary.json").read_text())["ran"] == 0


def test_the_tasks_decide_the_same_in_processes_and_in_threads(tmp_path):
    tasks, databases = twelve_lines(tmp_path)
    settings = BatchSettings(llm=f"scripted:{SCRIPT}")
    for name, pool in (("processes", None), ("threads", ThreadPool(2))):
        request = BatchRequest(
            input=tasks, out=tmp_path / name, databases=databases, settings=settings, workers=2
        )
        run_batch(request, pool=pool)
    assert decided(tmp_path / "processes") == decided(tmp_path / "threads")


def test_a_task_with_an_error_is_recorded_and_runs_again_on_resume(tmp_path):
    tasks = tmp_path / "tasks.jsonl"
    demo = demo_db_path()
    lines = [
        {"id": 1, "database": str(demo), "question": "q", "sql": "SELECT 1", "dialect": "mysql"},
        {"id": 2, "database": str(tmp_path / "missing.db"), "question": "q"},
    ]
    tasks.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    request = BatchRequest(
        input=tasks, out=tmp_path / "out", settings=BatchSettings(llm=f"scripted:{SCRIPT}")
    )
    first = run_batch(request, pool=ThreadPool(1))
    (record,) = results(tmp_path / "out")
    assert record["id"] == "1" and record["error_kind"] == "input"
    assert "dialect 'mysql' does not match the database, which is sqlite" in record["error"]
    assert (first.errors, first.bad_lines, first.finished) == (1, 1, 0)
    errors = (tmp_path / "out" / "errors.jsonl").read_text()
    assert "is not a URL, not a database file" in errors
    again = run_batch(request, pool=ThreadPool(1))
    assert again.ran == 1 and len(results(tmp_path / "out")) == 1


def closed_port_url() -> str:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}/v1"


def test_an_llm_that_cannot_be_used_stops_the_batch(tmp_path):
    tasks, databases = twelve_lines(tmp_path)
    settings = BatchSettings(llm="openai:m", base_url=closed_port_url(), api_key="k")
    request = BatchRequest(
        input=tasks, out=tmp_path / "out", databases=databases, settings=settings
    )
    with pytest.raises(BatchAbortedError, match=r"cannot connect.*the same command goes on"):
        run_batch(request, pool=ThreadPool(1))
    assert "api_key" not in (tmp_path / "out" / "run.json").read_text()


def test_an_out_directory_of_another_method_is_refused(tmp_path):
    tasks, databases = twelve_lines(tmp_path)
    out = tmp_path / "out"
    settings = BatchSettings(llm=f"scripted:{SCRIPT}", options=CorrectionOptions(method="raw"))
    run_batch(
        BatchRequest(input=tasks, out=out, databases=databases, settings=settings),
        pool=ThreadPool(1),
    )
    other = BatchRequest(input=tasks, out=out, databases=databases, settings=BatchSettings())
    with pytest.raises(ConfigError, match="holds a batch with method 'raw', not 'acts'"):
        run_batch(other, pool=ThreadPool(1))


def test_database_names_urls_and_relative_paths(tmp_path):
    folder = tmp_path / "conf"
    folder.mkdir()
    (folder / "shop.db").write_bytes(demo_db_path().read_bytes())
    config = folder / "databases.toml"
    config.write_text(
        '[databases]\nshop = "sqlite:///shop.db"\nremote = "postgresql://u:secret@db/x"\n'
        '[databases.books]\nurl = "shop.db"\n'
    )
    catalog = DatabaseCatalog.load(config)
    assert catalog.resolve("shop", tmp_path) == f"sqlite:///{folder / 'shop.db'}"
    assert catalog.resolve("books", tmp_path) == str(folder / "shop.db")
    assert catalog.resolve("sqlite:///conf/shop.db", tmp_path) == f"sqlite:///{folder}/shop.db"
    assert catalog.resolve("conf/shop.db", tmp_path) == str(folder / "shop.db")
    with pytest.raises(DatabaseOpenError, match="not a name in"):
        catalog.resolve("nowhere", tmp_path)
    config.write_text("[databases]\nbad = 3\n")
    with pytest.raises(ConfigError, match="'bad' needs a URL"):
        DatabaseCatalog.load(config)


def test_trace_names_are_safe_and_distinct():
    assert trace_name("task-1") == "task-1.json"
    unsafe = [trace_name("a/b"), trace_name("a_b"), trace_name("a b")]
    assert len(set(unsafe)) == 3 and all("/" not in name for name in unsafe)
