"""`acts-sql` as a user runs it: exit codes, one-line errors, JSON and trace output."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acts_sql.api import correct
from acts_sql.cli.app import app, protocol_schema
from acts_sql.cli.demo import gives_intended_result
from acts_sql.llm.scripted import ScriptedBackend
from support import DEMO_SCRIPTS

runner = CliRunner()
DOCS_SCHEMA = Path(__file__).resolve().parents[2] / "docs" / "protocol.schema.json"


def fix(*args: str):
    return runner.invoke(app, ["fix", *args])


def figure3_args(demo_db, demo_tasks, script="figure3.json"):
    task = demo_tasks["figure3"]
    return [
        "--db",
        demo_db,
        "--question",
        task.question,
        "--sql",
        task.sql,
        "--llm",
        f"scripted:{DEMO_SCRIPTS / script}",
    ]


def test_fix_json_prints_the_documented_object(demo_db, demo_tasks, tmp_path):
    trace = tmp_path / "trace.json"
    result = fix(*figure3_args(demo_db, demo_tasks), "--json", "--trace", str(trace))
    assert result.exit_code == 0, result.output
    obj = json.loads(result.stdout)
    assert {"sql", "accepted", "original_sql", "method", "usage", "trace"} <= set(obj)
    assert {"llm_calls", "prompt_tokens", "completion_tokens", "seconds"} <= set(obj["usage"])
    assert obj["accepted"] is True and obj["method"] == "acts"
    assert obj["original_sql"] == demo_tasks["figure3"].sql
    events = json.loads(trace.read_text())
    assert events == obj["trace"]
    assert events[0]["kind"] == "run_started" and events[-1]["kind"] == "run_finished"


def test_fix_human_output_shows_the_tree_pruned_reason_and_final_sql(demo_db, demo_tasks):
    result = fix(*figure3_args(demo_db, demo_tasks))
    assert result.exit_code == 0, result.output
    out = result.output
    assert "debugging tree" in out and "n1.1" in out and "[rejected]" in out
    assert "hours apart" in out  # the pruned reason
    assert "verdict: accepted" in out
    assert "b1.start_time < b2.end_time" in out


def test_fix_exits_1_when_nothing_is_accepted(demo_db, demo_tasks):
    result = fix(*figure3_args(demo_db, demo_tasks), "--max-llm-calls", "5", "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["accepted"] is False


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--db", "/nonexistent/x.db", "--sql", "SELECT 1"], "not found"),
        (["--db", "{tmp}", "--sql", "SELECT 1"], "directory"),
        (["--db", "{text}", "--sql", "SELECT 1"], "not a SQLite database"),
        (["--db", "mongodb://x/y", "--sql", "SELECT 1"], "mongodb"),
        (["--db", "{demo}"], "nothing to do"),
        (
            ["--db", "{demo}", "--sql", "SELECT 1", "--dialect", "klingon"],
            "unknown dialect 'klingon'",
        ),
        (
            ["--db", "{demo}", "--sql", "SELECT 1", "--dialect", "postgresql"],
            "unsupported dialect 'postgresql'",
        ),
        (["--db", "{demo}", "--sql", "SELECT 1", "--method", "magic"], "unknown method 'magic'"),
        (["--db", "{demo}", "--sql", "SELECT 1", "--llm", "scripted:{text}"], "{text}"),
        (["--db", "{demo}", "--sql", "SELECT 1", "--llm", "telepathy:x"], "telepathy"),
        (["--db", "{demo}", "--sql", "SELECT 1", "--max-nodes", "0"], "max_nodes"),
    ],
    ids=[
        "missing-file",
        "directory",
        "not-a-db",
        "scheme",
        "no-input",
        "dialect",
        "dialect-mismatch",
        "method",
        "bad-script",
        "bad-llm",
        "bad-budget",
    ],
)
def test_bad_input_gets_one_line_and_exit_2(args, message, tmp_path, demo_db):
    text = tmp_path / "notes.txt"
    text.write_text("just some notes\n")
    values = {"tmp": str(tmp_path), "text": str(text), "demo": demo_db}
    args = [a.format(**values) for a in args]
    result = (
        fix(*args, "--llm", "scripted:" + str(DEMO_SCRIPTS / "figure3.json"))
        if "--llm" not in args
        else fix(*args)
    )
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1
    assert message.format(**values) in err
    assert "Traceback" not in result.output


def test_no_traceback_from_the_installed_console_script(tmp_path):
    exe = Path(sys.executable).with_name("acts-sql")
    proc = subprocess.run(
        [
            str(exe),
            "fix",
            "--db",
            str(tmp_path / "missing.db"),
            "--sql",
            "SELECT 1",
            "--llm",
            "scripted:/x.json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr and proc.stderr.startswith("error:")


def test_demo_runs_every_example_and_says_it_is_scripted():
    result = runner.invoke(app, ["demo", "--llm", "scripted"])
    assert result.exit_code == 0, result.output
    assert "scripted backend" in result.output
    for title in ("Figure 1", "Figure 3", "Section 5.4"):
        assert title in result.output
    assert result.output.count("verdict: accepted") == 3
    assert "demo summary" in result.output
    for task_id in ("figure1", "figure3", "case_5_4"):
        assert re.search(rf"{task_id}\s+│\s+accepted\s+│\s+yes\s+│", result.output)


def test_the_demo_checks_the_final_rows_against_the_intended_sql(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    script = ScriptedBackend.from_file(DEMO_SCRIPTS / "figure3.json")
    result = correct(demo_db, task.question, task.sql, llm=script)
    assert gives_intended_result(task, result)
    wrong = result.model_copy(update={"sql": task.wrong_sql})
    assert not gives_intended_result(task, wrong)
    original = result.model_copy(update={"sql": task.sql})
    assert not gives_intended_result(task, original)  # the faulty SQL's rows are not the intended


def test_demo_without_llama_cpp_says_how_to_install_it(monkeypatch):
    monkeypatch.setattr("acts_sql.llm.local.backend.llama_cpp_available", lambda: False)
    result = runner.invoke(app, ["demo", "--task", "figure3"])
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1
    assert "pip install 'acts-sql[local]'" in err and "--llm scripted" in err


def test_fix_llm_cache_answers_a_rerun_from_disk(demo_db, demo_tasks, tmp_path):
    script = tmp_path / "figure3.json"
    script.write_text((DEMO_SCRIPTS / "figure3.json").read_text())
    cache = tmp_path / "cache"
    args = [*figure3_args(demo_db, demo_tasks), "--json", "--llm-cache", str(cache)]
    args[args.index("--llm") + 1] = f"scripted:{script}"
    first = fix(*args)
    assert first.exit_code == 0, first.output
    calls = json.loads(first.stdout)["usage"]["llm_calls"]
    assert len(list(cache.glob("*/*.json"))) == calls
    script.write_text("{}")  # the same backend, with no replies left: only the cache can answer
    second = fix(*args)
    assert second.exit_code == 0, second.output
    again = json.loads(second.stdout)
    assert again["accepted"] is True
    assert again["sql"] == json.loads(first.stdout)["sql"]
    assert again["usage"]["llm_seconds"] == 0


def test_demo_unknown_task_is_bad_input():
    result = runner.invoke(app, ["demo", "--task", "figure9"])
    assert result.exit_code == 2 and "unknown demo task 'figure9'" in result.stderr


def test_protocol_schema_in_docs_is_current():
    result = runner.invoke(app, ["protocol"])
    assert json.loads(result.stdout) == protocol_schema()
    assert json.loads(DOCS_SCHEMA.read_text()) == protocol_schema(), (
        "docs/protocol.schema.json is stale: run `acts-sql protocol > docs/protocol.schema.json`"
    )


def test_fix_html_writes_a_self_contained_viewer(demo_db, demo_tasks, tmp_path):
    page = tmp_path / "run.html"
    result = fix(*figure3_args(demo_db, demo_tasks), "--json", "--html", str(page))
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert text.lstrip().lower().startswith("<!doctype html")
    assert "n1.2" in text and "rejected" in text
    # nothing is loaded from the network: no external scripts, styles or images
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text)


def test_fix_limits_reach_the_executor(demo_db, demo_tasks):
    # a one-row cap: the accepted candidate's result comes back truncated
    result = fix(*figure3_args(demo_db, demo_tasks), "--json", "--max-rows", "1")
    assert result.exit_code == 0, result.output
    final = json.loads(result.stdout)["result"]
    assert final["row_count"] == 1 and final["truncated"] is True


def test_fix_rejects_a_bad_timeout(demo_db, demo_tasks):
    result = fix(*figure3_args(demo_db, demo_tasks), "--timeout", "-1")
    assert result.exit_code == 2 and "timeout" in result.stderr


def test_fix_maplerepair_repairs_a_mechanical_error_without_an_llm_call(demo_db, tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("{}")  # no reply for any purpose: an LLM call would fail the run
    result = fix(
        "--db",
        demo_db,
        "--question",
        "How many rooms seat more than 10?",
        "--sql",
        "SELECT COUNT(*) FROM rooms WHERE capacty > 10 AND name = NULL",
        "--method",
        "maplerepair",
        "--llm",
        f"scripted:{empty}",
        "--json",
    )
    assert result.exit_code == 0, result.output
    obj = json.loads(result.stdout)
    assert obj["method"] == "maplerepair" and obj["usage"]["llm_calls"] == 0
    assert "capacity > 10" in obj["sql"] and "IS NULL" in obj["sql"]
    fired = [
        (e["data"]["rule"], e["data"]["status"]) for e in obj["trace"] if e["kind"] == "rule_fired"
    ]
    assert ("unknown_identifier", "repaired") in fired and ("equals_null", "repaired") in fired
