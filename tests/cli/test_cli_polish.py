"""Command-line polish: --version, `python -m acts_sql`, help, Ctrl-C, statuses, 80 columns."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys

import pytest
from rich.console import Console
from typer.testing import CliRunner

import acts_sql
from acts_sql.cli import app as app_module
from acts_sql.cli import bench as bench_module
from acts_sql.cli import demo as demo_module
from acts_sql.cli.app import app
from acts_sql.cli.demo import task_ids
from acts_sql.cli.render import show_result
from acts_sql.db.result import ExecResult
from support import DEMO_SCRIPTS, sigint_as_default, syntax_repair_story

runner = CliRunner()
COMMANDS = [
    [],
    ["fix"],
    ["demo"],
    ["serve"],
    ["protocol"],
    ["eval", "bird-critic"],
    ["bench", "bird-critic"],
    ["bench", "candidates"],
    ["bench", "compare"],
]


def test_version_from_the_command_and_from_python_m():
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"acts-sql {acts_sql.__version__}\n"
    proc = subprocess.run(
        [sys.executable, "-m", "acts_sql", "--version"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0 and proc.stdout == f"acts-sql {acts_sql.__version__}\n"


def test_python_m_runs_the_same_command_line():
    proc = subprocess.run(
        [sys.executable, "-m", "acts_sql", "fix", "--db", "/nonexistent/x.db", "--sql", "SELECT 1"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stderr.startswith("error:")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "acts-sql")
def test_help_shows_boolean_flags_as_flags(command):
    result = runner.invoke(app, [*command, "--help"])
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.stdout
    assert re.search(r"^\s+--help\s+Show this message", result.stdout, re.M)
    if command == ["fix"]:
        for flag in ("--json", "--allow-writes", "--no-ambiguity", "--no-execution-tools"):
            assert re.search(rf"^\s+{flag}\s+\w", result.stdout, re.M), flag


def test_demo_task_ids_are_listed_in_help_and_for_an_unknown_id():
    ids = task_ids()
    assert ids == ["figure1", "figure3", "case_5_4"]
    shown = runner.invoke(app, ["demo", "--help"]).stdout
    assert all(task_id in shown for task_id in ids)
    unknown = runner.invoke(app, ["demo", "--task", "nope", "--llm", "scripted"])
    assert unknown.exit_code == 2
    assert unknown.stderr.strip() == f"error: unknown demo task 'nope'; tasks: {', '.join(ids)}"


@pytest.mark.parametrize(
    ("status", "error", "text"),
    [
        ("blocked", "blocked: writes are not allowed", "blocked: writes are not allowed"),
        ("timeout", "timeout: statement exceeded 2 s", "timeout: statement exceeded 2 s"),
        ("error", "no such table: t", "error: no such table: t"),
        ("error", "errors everywhere", "error: errors everywhere"),
        ("timeout", None, "timeout"),
        ("ok", None, ""),
    ],
)
def test_a_failure_says_its_status_once(status, error, text):
    assert ExecResult(status=status, error=error).failure() == text


def test_a_blocked_statement_says_blocked_once_on_the_terminal(demo_db, tmp_path):
    script = tmp_path / "script.json"
    script.write_text("{}")
    args = ["fix", "--db", demo_db, "--sql", "DELETE FROM bookings", "--llm", f"scripted:{script}"]
    result = runner.invoke(app, args)
    assert result.exit_code == 1, result.output
    assert "blocked: writes are not allowed" in result.stdout
    assert "blocked: blocked" not in result.stdout


def test_a_node_whose_candidate_does_not_parse_is_shown_failed(demo_db, demo_tasks):
    result = syntax_repair_story(demo_db, demo_tasks["case_5_4"])
    nodes = {n["id"]: n for n in result.tree}
    assert nodes["n1.2"]["status"] == "failed"
    assert nodes["n1.2"]["reason"].startswith("error: ")
    assert nodes["n1.2.fix"]["status"] == "accepted"
    out = Console(record=True, width=200, color_system=None)
    show_result(out, result)
    tree = out.export_text().split("candidates (")[0]
    node_line = next(line for line in tree.splitlines() if "n1.2 generate_sql" in line)
    assert "[failed]" in node_line and "[done]" not in node_line
    assert "why: error: " in tree and "syntax error" in tree


def demo_candidate_panels(text: str) -> list[list[str]]:
    panels, current = [], None
    for line in text.splitlines():
        if line.startswith("╭─ candidates ("):
            current = []
        elif current is not None and line.startswith("╰"):
            panels.append(current)
            current = None
        elif current is not None:
            current.append(line)
    return panels


def test_the_candidates_table_is_readable_at_80_columns():
    result = runner.invoke(app, ["demo", "--llm", "scripted"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.stdout.splitlines())
    panels = demo_candidate_panels(result.stdout)
    assert len(panels) == 3
    for panel in panels:
        rows = [line for line in panel if re.match(r"│ │ c\d+ ", line)]
        whys = [line for line in panel if re.match(r"│ c\d+ why: \S", line)]
        assert rows and len(rows) == len(whys)  # one line per candidate, and one for its reason
        # no cell is wrapped onto a line of its own
        assert not [line for line in panel if re.match(r"│ │\s+│", line)]
    assert "│ c1 why: the same SQL as the user's (formatting aside): it changes nothing" in (
        result.stdout
    )


def test_wide_terminals_keep_the_reason_in_its_column():
    result = runner.invoke(
        app, ["demo", "--llm", "scripted", "--task", "figure3"], env={"COLUMNS": "150"}
    )
    assert result.exit_code == 0, result.output
    panel = demo_candidate_panels(result.stdout)[0]
    assert any("┃ why" in line for line in panel)
    assert not [line for line in panel if re.match(r"│ c\d+ why:", line)]


def interrupt(*_args, **_kwargs):
    raise KeyboardInterrupt


def one_interrupted_line(result, *, after_progress_bar: bool = False) -> str:
    assert result.exit_code == 130, result.output
    lines = result.stderr.strip().splitlines()
    if after_progress_bar:  # the bar's last state stays on screen, above the line
        assert len(lines) == 2 and "0/?" in lines[0], lines
        lines = lines[1:]
    assert len(lines) == 1 and lines[0].startswith("interrupted: "), lines
    assert "Traceback" not in result.output and "Aborted" not in result.output
    return lines[0]


def test_ctrl_c_in_fix_demo_and_eval_is_one_line_and_exit_130(monkeypatch, demo_db, tmp_path):
    monkeypatch.setattr(app_module, "correct", interrupt)
    script = f"scripted:{DEMO_SCRIPTS / 'figure3.json'}"
    fixed = runner.invoke(app, ["fix", "--db", demo_db, "--sql", "SELECT 1", "--llm", script])
    assert "the correction (before its first step); nothing was written" in one_interrupted_line(
        fixed
    )
    calls = []
    real = demo_module.correct

    def second_task_interrupted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs) if len(calls) == 1 else interrupt()

    monkeypatch.setattr(demo_module, "correct", second_task_interrupted)
    demo = runner.invoke(app, ["demo", "--llm", "scripted"])
    assert "the demo at task figure3 (1 of 3 done)" in one_interrupted_line(demo)
    monkeypatch.setattr(bench_module, "evaluate", interrupt)
    args = ["eval", "bird-critic", "--tasks", str(tmp_path), "--out", str(tmp_path / "out")]
    evaluated = runner.invoke(app, args)
    assert "eval bird-critic; no report was written to" in one_interrupted_line(
        evaluated, after_progress_bar=True
    )


def test_ctrl_c_during_an_llm_call_ends_the_real_process_cleanly(demo_db):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as server:
        server.bind(("127.0.0.1", 0))
        server.listen(4)
        server.settimeout(60)
        url = f"http://127.0.0.1:{server.getsockname()[1]}/v1"
        args = ["fix", "--db", demo_db, "--sql", "SELECT 1", "--question", "q"]
        proc = subprocess.Popen(
            [sys.executable, "-m", "acts_sql", *args, "--llm", "openai:m", "--base-url", url],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "OPENAI_API_KEY": "k"},
            preexec_fn=sigint_as_default,
        )
        connection, _ = server.accept()  # the plan request is on its way: it never gets a reply
        with connection:
            proc.send_signal(signal.SIGINT)
            out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert err.strip() == (
        "interrupted: the correction (before its first step); nothing was written"
    )
    assert "Traceback" not in out + err
