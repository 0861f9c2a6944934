"""`acts-sql fix --sql-file/--question-file`, output paths checked first, long SQL capped."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from acts_sql.cli.app import app
from acts_sql.cli.render import MAX_SQL_CHARS
from support import DEMO_SCRIPTS

runner = CliRunner()
FIGURE3 = f"scripted:{DEMO_SCRIPTS / 'figure3.json'}"


def fix(*args: str, stdin: str | None = None):
    return runner.invoke(app, ["fix", *args], input=stdin)


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1, err
    assert "Traceback" not in result.output
    return err


def test_sql_and_question_files_give_the_same_run_as_the_flags(demo_db, demo_tasks, tmp_path):
    task = demo_tasks["figure3"]
    sql_file, question_file = tmp_path / "q.sql", tmp_path / "issue.txt"
    sql_file.write_text(task.sql)
    question_file.write_text(task.question)
    by_flags = fix(
        "--db", demo_db, "--question", task.question, "--sql", task.sql, "--llm", FIGURE3, "--json"
    )
    by_files = fix(
        "--db", demo_db, "--question-file", str(question_file), "--sql-file", str(sql_file),
        "--llm", FIGURE3, "--json",
    )  # fmt: skip
    assert by_flags.exit_code == by_files.exit_code == 0, by_files.output
    flags, files = json.loads(by_flags.stdout), json.loads(by_files.stdout)
    assert files["original_sql"] == task.sql and files["question"] == task.question
    assert files["sql"] == flags["sql"] and files["accepted"] is True


def test_dash_reads_the_sql_from_stdin(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    result = fix(
        "--db", demo_db, "--question", task.question, "--sql-file", "-", "--llm", FIGURE3, "--json",
        stdin=task.sql,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["original_sql"] == task.sql


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sql", "SELECT 1", "--sql-file", "{sql}"], "give --sql or --sql-file, not both"),
        (["--question", "q", "--question-file", "{sql}"], "--question or --question-file"),
        (["--sql-file", "-", "--question-file", "-"], "only one of --sql-file and --question-file"),
        (["--sql-file", "{tmp}/none.sql"], "--sql-file {tmp}/none.sql: no such file"),
        (["--sql-file", "{tmp}"], "is a directory"),
        (["--sql-file", "{binary}"], "not UTF-8 text"),
        (["--sql", "SELECT 1", "--trace", "{sql}/t.json"], "directory {sql} is not a"),
        (["--sql", "SELECT 1", "--trace", "{tmp}/no/t.json"], "directory {tmp}/no does not"),
        (["--sql", "SELECT 1", "--html", "{tmp}"], "--html {tmp}: is a directory"),
        (["--sql", "SELECT 1", "--llm-cache", "{sql}/cache"], "not a directory: {sql}"),
    ],
    ids=[
        "sql-twice", "question-twice", "stdin-twice", "missing", "directory", "binary",
        "trace-under-a-file", "trace-in-a-missing-dir", "html-is-a-dir", "cache-under-a-file",
    ],
)  # fmt: skip
def test_bad_files_and_unwritable_outputs_stop_before_any_work(args, message, demo_db, tmp_path):
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT 1")
    binary = tmp_path / "x.bin"
    binary.write_bytes(b"SELECT \xff\xfe")
    values = {"tmp": str(tmp_path), "sql": str(sql), "binary": str(binary)}
    script = tmp_path / "script.json"
    script.write_text("{}")  # any LLM call would fail the run: none may happen
    result = fix(
        "--db", demo_db, "--llm", f"scripted:{script}", *(a.format(**values) for a in args)
    )
    assert message.format(**values) in one_error_line(result)
    assert result.stdout == ""  # no progress: the correction never started


def test_checking_an_output_path_neither_changes_nor_leaves_a_file(demo_db, tmp_path):
    old = tmp_path / "old.json"
    old.write_text("old")
    for trace in (old, tmp_path / "new.json"):  # the --trace check passes, --html's fails
        result = fix(
            "--db", demo_db, "--sql", "SELECT 1", "--trace", str(trace), "--html", str(tmp_path)
        )
        one_error_line(result)
    assert old.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"]  # no probe file, no new.json


def big_sql(columns: int = 1500) -> str:
    return "SELECT " + ", ".join(f"name AS c{i}" for i in range(columns)) + " FROM nosuchtable"


def test_a_huge_statement_is_capped_on_the_terminal_and_whole_in_json(demo_db, tmp_path):
    sql = big_sql()
    assert len(sql) > 5 * MAX_SQL_CHARS
    path = tmp_path / "big.sql"
    path.write_text(sql)
    script = tmp_path / "script.json"
    script.write_text("{}")
    args = [
        "--db",
        demo_db,
        "--question",
        "q",
        "--sql-file",
        str(path),
        "--llm",
        f"scripted:{script}",
    ]
    human = fix(*args)
    assert human.exit_code == 1, human.output
    assert len(human.stdout) < 20_000
    cut = len(sql) - MAX_SQL_CHARS
    assert f"… {cut:,} more characters of SQL not shown ({len(sql):,} in all)" in human.stdout
    as_json = fix(*args, "--json")
    assert json.loads(as_json.stdout)["sql"] == sql


def test_a_huge_error_message_is_one_capped_line(tmp_path):
    deep = tmp_path.joinpath(*[c * 200 for c in "abcdefghijklmno"], "none.db")
    result = fix("--db", str(deep), "--sql", "SELECT 1")
    err = one_error_line(result)
    assert "more characters not shown" in err and len(err) < 800


def test_huge_cells_are_capped_on_the_terminal(demo_db, tmp_path):
    sql = "SELECT printf('%.50000c', 'x') AS wide"
    script = tmp_path / "script.json"
    script.write_text("{}")
    result = fix("--db", demo_db, "--question", "q", "--sql", sql, "--llm", f"scripted:{script}")
    assert result.exit_code == 1, result.output
    assert "more characters not shown" in result.stdout and len(result.stdout) < 10_000
