"""Hostile command-line input (issue 37): control characters never reach the terminal raw,
byte-order marks are accepted, empty SQL and every usage error are one `error:` line and
exit 2, and inputs above the documented limits are refused before any work."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acts_sql.cli.app import app
from acts_sql.cli.console import make_console, shown
from acts_sql.engine.inputs import MAX_QUESTION_CHARS, MAX_SQL_CHARS
from support import DEMO_SCRIPTS

runner = CliRunner()
FIGURE3 = f"scripted:{DEMO_SCRIPTS / 'figure3.json'}"
BOM = "\ufeff"
CLEAR = "\x1b[2J"
RLO = "\u202e"


def one_error_line(result) -> str:
    assert result.exit_code == 2, result.output
    err = result.stderr.strip()
    assert err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert "Traceback" not in result.output
    return err


# ---------------------------------------------------------------- control characters


@pytest.fixture
def hostile_db(tmp_path: Path) -> Path:
    """A table whose cell holds ESC[2J (clears a screen) and a bidi override."""
    path = tmp_path / "hostile.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (id INTEGER, s TEXT)")
    conn.execute("INSERT INTO t VALUES (1, char(27) || '[2J' || 'evil' || char(8238) || 'cba')")
    conn.commit()
    conn.close()
    return path


def hostile_script(tmp_path: Path) -> str:
    """The `raw` method's reply: SQL that itself carries ESC, BEL and a bidi override."""
    reply = f"```sql\nSELECT s FROM t WHERE s <> 'a{CLEAR}\x07{RLO}' AND id = 1\n```"
    script = tmp_path / "S.json"
    script.write_text(json.dumps({"correct": [reply]}))
    return f"scripted:{script}"


def test_fix_shows_control_characters_of_cells_and_sql_escaped(hostile_db, tmp_path):
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT s FROM t")
    llm = hostile_script(tmp_path)
    common = ["fix", "--db", str(hostile_db), "--llm", llm, "--method", "raw"]
    human = runner.invoke(app, [*common, "--question", f"q{CLEAR}", "--sql-file", str(sql)])
    as_json = runner.invoke(app, [*common, "--question", "q", "--sql-file", str(sql), "--json"])
    assert human.exit_code in (0, 1), human.output
    for raw in ("\x1b", "\x07", "\u202e"):
        assert raw not in human.stdout and raw not in human.stderr
    assert "\\x1b[2Jevil\\u202ecba" in human.stdout  # the cell, escaped
    assert "a\\x1b[2J\\x07\\u202e" in human.stdout  # the SQL, escaped
    # --json keeps the exact text
    result = json.loads(as_json.stdout)
    assert result["result"]["rows"] == [[f"{CLEAR}evil{RLO}cba"]]
    assert f"a{CLEAR}\x07{RLO}" in result["sql"]


@pytest.mark.parametrize(
    ("text", "layout", "expected"),
    [
        ("a\x1b[31mb", False, "a\\x1b[31mb"),
        ("\x9b2J\x7f\x08\r", False, "\\x9b2J\\x7f\\x08\\r"),
        ("x\u202ey\u2066z\u2069", False, "x\\u202ey\\u2066z\\u2069"),
        ("line 1\n\tline 2", False, "line 1\\n\\tline 2"),
        ("line 1\n\tline 2\r", True, "line 1\n\tline 2\\r"),
        ("plain [b]text[/b] é ✓", False, "plain [b]text[/b] é ✓"),
    ],
    ids=["esc", "c1-del-bs-cr", "bidi", "cell-newlines", "layout-newlines", "plain"],
)
def test_shown_escapes_control_characters(text, layout, expected):
    assert shown(text, layout=layout) == expected


def test_the_console_escapes_text_a_renderer_did_not(capsys):
    make_console().print(f"x{CLEAR}y\x9b{RLO}")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x9b" not in out and RLO not in out
    assert "x\\x1b[2Jy\\x9b\\u202e" in out


def test_html_keeps_the_text_for_the_viewer_to_escape(hostile_db, tmp_path):
    sql, page = tmp_path / "q.sql", tmp_path / "tree.html"
    sql.write_text("SELECT s FROM t")
    args = ["fix", "--db", str(hostile_db), "--llm", hostile_script(tmp_path), "--method", "raw"]
    result = runner.invoke(
        app, [*args, "--question", "q", "--sql-file", str(sql), "--html", str(page)]
    )
    assert result.exit_code in (0, 1), result.output
    html = page.read_text(encoding="utf-8")
    # the data block is JSON: the ESC travels as \u001b and the viewer inserts it as text
    assert "\\u001b[2Jevil" in html and "\x1b" not in html


# ---------------------------------------------------------------- byte-order marks


def test_a_bom_at_the_start_of_sql_and_question_files_is_dropped(demo_db, demo_tasks, tmp_path):
    task = demo_tasks["figure3"]
    sql, question = tmp_path / "q.sql", tmp_path / "q.txt"
    sql.write_text(BOM + task.sql, encoding="utf-8")
    question.write_text(BOM + task.question, encoding="utf-8")
    args = ["fix", "--db", demo_db, "--llm", FIGURE3, "--json"]
    by_files = runner.invoke(app, [*args, "--sql-file", str(sql), "--question-file", str(question)])
    assert by_files.exit_code == 0, by_files.output
    result = json.loads(by_files.stdout)
    assert result["original_sql"] == task.sql and result["question"] == task.question
    assert result["accepted"] is True


def test_a_bom_on_stdin_is_dropped(demo_db, demo_tasks):
    task = demo_tasks["figure3"]
    args = ["fix", "--db", demo_db, "--llm", FIGURE3, "--json", "--question", task.question]
    result = runner.invoke(app, [*args, "--sql-file", "-"], input=BOM + task.sql)
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["original_sql"] == task.sql


# ---------------------------------------------------------------- empty SQL


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--sql", ""], "--sql is empty"),
        (["--sql", "  \n\t "], "--sql is empty"),
        (["--sql-file", "{empty}"], "--sql-file {empty} is empty"),
        (["--sql-file", "{blank}"], "--sql-file {blank} is empty"),
        (["--sql-file", "{bom}"], "--sql-file {bom} is empty"),
        (["--sql-file", "-"], "--sql-file - is empty"),
    ],
    ids=["empty", "whitespace", "empty-file", "blank-file", "bom-only-file", "empty-stdin"],
)
def test_empty_sql_is_exit_2_never_text_to_sql(args, said, demo_db, tmp_path):
    files = {"empty": tmp_path / "e.sql", "blank": tmp_path / "b.sql", "bom": tmp_path / "m.sql"}
    files["empty"].write_text("")
    files["blank"].write_text("  \n\n ")
    files["bom"].write_text(BOM + "\n")
    given = [a.format(**files) for a in args]
    result = runner.invoke(
        app,
        ["fix", "--db", demo_db, "--llm", FIGURE3, "--question", "which rooms?", *given],
        input="   \n",
    )
    assert said.format(**files) in one_error_line(result)
    assert result.stdout == ""  # no run: nothing was generated


# ---------------------------------------------------------------- usage errors

BAD_INVOCATIONS = [
    (["fix", "--db", "x.db", "--parallel", "0"], "--parallel"),
    (["fix", "--db", "x.db", "--parallel", "many"], "--parallel"),
    (["fix", "--db", "x.db", "--timeout", "soon"], "--timeout"),
    (["fix", "--sql", "SELECT 1"], "Missing option '--db'"),
    (["fix", "--db", "x.db", "--no-such-flag"], "No such option: --no-such-flag"),
    (["fix", "--db", "x.db", "extra-argument"], "extra-argument"),
    (["fix", "--db"], "--db"),
    (["batch", "--workers", "0"], "--workers"),
    (["batch", "--in", "t.jsonl", "--out", "o", "--workers", "x"], "--workers"),
    (["serve", "--port", "http"], "--port"),
    (["serve", "--bogus"], "No such option: --bogus"),
    (["bench", "bird-critic", "--limit", "-x"], "--limit"),
    (["bench", "no-such-benchmark"], "No such command 'no-such-benchmark'"),
    (["demo", "--max-llm-calls", "lots"], "--max-llm-calls"),
    (["demo", "--method", "acts"], "No such option: --method"),
    (["doctor"], "Missing option '--db'"),
    (["doctor", "--db", "x.db", "--verbose"], "No such option: --verbose"),
    (["no-such-command"], "No such command 'no-such-command'"),
]


@pytest.mark.parametrize(
    ("args", "said"), BAD_INVOCATIONS, ids=[" ".join(a) for a, _ in BAD_INVOCATIONS]
)
def test_every_usage_error_is_one_error_line_and_exit_2(args, said):
    result = runner.invoke(app, args)
    line = one_error_line(result)
    assert said in line
    assert "Usage:" not in result.output and "--help" in line


@pytest.mark.parametrize("args", [["--help"], ["fix", "--help"], ["doctor", "--help"]])
def test_help_still_works(args):
    result = runner.invoke(app, args)
    assert result.exit_code == 0 and "Usage:" in result.stdout and result.stderr == ""


# ---------------------------------------------------------------- input limits


def test_sql_and_questions_above_the_limits_are_refused_before_any_work(demo_db, tmp_path):
    at_limit = "SELECT 1 -- " + "x" * (MAX_SQL_CHARS - 12)
    over = at_limit + "x"
    big_sql = tmp_path / "big.sql"
    big_sql.write_text(over)
    big_question = tmp_path / "q.txt"
    big_question.write_text("q" * (MAX_QUESTION_CHARS + 1))
    args = ["fix", "--db", demo_db, "--llm", "scripted:/no/such/script.json"]
    from_file = runner.invoke(app, [*args, "--question", "q", "--sql-file", str(big_sql)])
    from_stdin = runner.invoke(app, [*args, "--question", "q", "--sql-file", "-"], input=over)
    from_flag = runner.invoke(app, [*args, "--question", "q", "--sql", over])
    question = runner.invoke(
        app, [*args, "--sql", "SELECT 1", "--question-file", str(big_question)]
    )
    for result in (from_file, from_stdin, from_flag):
        assert "too large" in one_error_line(result)
        assert f"at most {MAX_SQL_CHARS:,}" in result.stderr
    assert f"at most {MAX_QUESTION_CHARS:,}" in one_error_line(question)
    # at the limit the input is taken: the run gets as far as the (missing) LLM script
    at = runner.invoke(app, [*args, "--question", "q", "--sql", at_limit])
    assert "too large" not in at.stderr and "/no/such/script.json" in one_error_line(at)
