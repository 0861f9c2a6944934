"""`acts-sql languages` and `acts-sql fix --language prql`."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
from typer.testing import CliRunner

from acts_sql.cli.app import app

TYPO = "from requests\nfiltr status >= 500\naggregate {n = count this}"
RIGHT = "from requests\nfilter status >= 500\naggregate {n = count this}"


def test_languages_lists_the_sql_dialects_and_prql():
    out = CliRunner().invoke(app, ["languages", "--json"])
    assert out.exit_code == 0, out.output
    listed = {i["name"]: i for i in json.loads(out.stdout)["languages"]}
    assert listed["sqlite"]["kind"] == "sql" and listed["sqlite"]["source"] == "built-in"
    assert listed["prql"]["kind"] == "compiled" and listed["prql"]["source"] == "bundled"
    assert listed["prql"]["targets"] == ["duckdb", "sqlite", "postgresql"]
    assert list(listed["prql"]["unavailable_tools"]) == ["split_fix_syntax"]
    table = CliRunner().invoke(app, ["languages"])
    assert table.exit_code == 0 and "prql" in table.stdout and "PRQL" in table.stdout


def _script(tmp_path: Path) -> Path:
    reply = {"sql": RIGHT, "rationale": "filter, not filtr"}
    script = {
        "correct": [f"```prql\n{RIGHT}\n```"],
        "plan": [json.dumps({"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]})],
        "generate_sql": [json.dumps(reply)],
        "judge": [
            json.dumps(
                {"reason": "counts 5xx", "verdict": "accept", "group": "A", "backtrack_to": None}
            )
        ],
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(script))
    return path


def test_fix_corrects_a_prql_file_and_answers_in_prql(tmp_path):
    db = tmp_path / "logs.duckdb"
    with duckdb.connect(str(db)) as conn:
        conn.execute(
            "CREATE TABLE requests AS SELECT * FROM (VALUES (200), (500), (503)) t(status)"
        )
    query = tmp_path / "query.prql"
    query.write_text(TYPO + "\n")
    args = [
        "fix",
        "--db",
        f"duckdb:///{db}",
        "--language",
        "prql",
        "--question",
        "How many server errors?",
        "--sql-file",
        str(query),
        "--llm",
        f"scripted:{_script(tmp_path)}",
        "--no-scaled-budget",  # the script's plan and judge are part of the story
    ]
    out = CliRunner().invoke(app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    result = json.loads(out.stdout)
    assert result["accepted"] is True
    assert result["sql"] == RIGHT and result["original_sql"] == TYPO
    assert result["dialect"] == "prql"
    assert result["result"]["rows"] == [[2]]
    shown = CliRunner().invoke(app, args)
    assert shown.exit_code == 0 and "final PRQL query (acts)" in shown.stdout


def test_fix_with_a_language_the_database_cannot_run_is_bad_input(tmp_path, demo_db):
    out = CliRunner().invoke(
        app, ["fix", "--db", demo_db, "--language", "kql", "--sql", "x", "--question", "q"]
    )
    assert out.exit_code == 2
    assert "unknown query language 'kql'" in out.output


def test_a_prql_file_needs_no_language_flag_and_a_flag_wins_over_the_suffix(tmp_path):
    db = tmp_path / "logs.duckdb"
    with duckdb.connect(str(db)) as conn:
        conn.execute(
            "CREATE TABLE requests AS SELECT * FROM (VALUES (200), (500), (503)) t(status)"
        )
    query = tmp_path / "query.PRQL"
    query.write_text(TYPO + "\n")
    base = ["fix", "--db", f"duckdb:///{db}", "--question", "How many server errors?"]
    base += ["--sql-file", str(query), "--llm", f"scripted:{_script(tmp_path)}", "--json"]
    base += ["--no-scaled-budget"]  # the script's plan and judge are part of the story
    inferred = CliRunner().invoke(app, base)
    assert inferred.exit_code == 0, inferred.output
    assert json.loads(inferred.stdout)["dialect"] == "prql"
    as_sql = CliRunner().invoke(app, [*base, "--language", "duckdb"])
    assert json.loads(as_sql.stdout)["dialect"] == "duckdb"  # the flag decides: read as SQL
