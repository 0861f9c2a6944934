"""`acts-sql bench logs` end to end with a scripted LLM: generate, correct, score, report."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from acts_sql.bench.logs.report import load_report
from acts_sql.bench.logs.runner import load_records
from acts_sql.bench.logs.tasks import select_tasks
from acts_sql.cli.app import app
from acts_sql.engine.options import Method

L01, L20 = (t.gold for t in select_tasks(["L01", "L20"]))
WRONG_L01 = L01.replace("404", "400")
METHODS = ["raw", "critic", "linear", "acts"]


def gen(text: str) -> str:
    return json.dumps({"sql": text, "rationale": "scripted"})


def fenced(text: str) -> str:
    return f"```prql\n{text}\n```"


def accept() -> str:
    return json.dumps(
        {"reason": "answers it", "verdict": "accept", "group": "A", "backtrack_to": None}
    )


def script() -> dict[str, list[str]]:
    """The replies in call order: methods in turn, tasks L01 (generated wrong) and L20
    (generated right) each."""
    plan = json.dumps({"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]})
    return {
        "generate_sql": [
            gen(WRONG_L01), gen(L20),  # raw
            gen(WRONG_L01), gen(L20),  # critic
            # linear, acts: L01's first query, its witness (it and the raw rewrite agree:
            # accepted before any plan); L20's first query, its witness, a pool's candidate
            gen(WRONG_L01), gen(L01), gen(L20), gen(L20), gen(L20),  # linear
            gen(WRONG_L01), gen(L01), gen(L20), gen(L20), gen(L20),  # acts
        ],
        "correct": [
            fenced(L01), fenced(L20),
            json.dumps({"critique": "404, not 400", "sql": L01}),
            json.dumps({"critique": "fine", "sql": L20}),
            fenced(L01), fenced(L20), fenced(L01), fenced(L20),
        ],
        "plan": [plan] * 4,
        "judge": [accept()] * 4,
    }  # fmt: skip


def run(tmp_path, small_logs, replies) -> object:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    args = ["bench", "logs", "--out", str(tmp_path / "out"), "--db", str(small_logs.path)]
    for method in METHODS:
        args += ["--method", method]
    args += ["--ids", "L01,L20", "--llm", f"scripted:{path}"]
    return CliRunner().invoke(app, args)


def test_bench_logs_reports_accuracy_and_latency_per_strategy(tmp_path, small_logs):
    out = run(tmp_path, small_logs, script())
    assert out.exit_code == 0, out.output
    report = load_report(tmp_path / "out")
    rows = {row.strategy: row for row in report.rows}
    assert list(rows) == ["generation only", *METHODS]
    assert rows["generation only"].accuracy == 50.0  # L20 generated right, L01 wrong
    for method in METHODS:
        row = rows[method]
        assert (row.accuracy, row.fixed, row.broken) == (100.0, 1, 0), method
        assert row.delta == 50.0 and row.mean_seconds > 0 and row.llm_calls >= 2
    assert rows["acts"].accepted == 2 and rows["raw"].accepted == 2
    assert rows["generation only"].by_category == {"filter": 0.0, "top_k": 100.0}
    records = {r.id: r for r in load_records(tmp_path / "out", "acts")}
    assert records["L01"].initial_query == WRONG_L01 and records["L01"].final_query == L01
    assert records["L01"].passed and not records["L01"].initial_passed
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "| strategy | accuracy | Δ vs generation |" in markdown
    assert "| generation only | 50.0% (1/2) | – |" in markdown
    assert "| acts | 100.0% (2/2) | +50.0 | 1 | 0 | 2 |" in markdown


def test_sql_the_model_writes_is_scored_as_its_prql_rewrite(tmp_path, small_logs):
    """A small model writes SQL for PRQL questions: the generated query and raw's rewrite
    are kept as PRQL, scored as such, and counted in the report's "from SQL" column."""
    replies = {
        "generate_sql": [gen("select count(*) from requests where status = 400")],
        "correct": ["```sql\nselect count(*) as n from requests where status = 404\n```"],
    }
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    args = ["bench", "logs", "--out", str(tmp_path / "out"), "--db", str(small_logs.path),
            "--method", "raw", "--ids", "L01", "--llm", f"scripted:{path}"]  # fmt: skip
    out = CliRunner().invoke(app, args)
    assert out.exit_code == 0, out.output

    [record] = load_records(tmp_path / "out", "raw")
    assert record.initial_query.startswith("from requests\nfilter status == 400")
    assert record.final_query.startswith("from requests\nfilter status == 404")
    assert record.initial_from_sql and record.final_from_sql
    assert record.passed and not record.initial_passed
    rows = {row.strategy: row for row in load_report(tmp_path / "out").rows}
    assert rows["generation only"].from_sql == rows["raw"].from_sql == 1
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "| raw | 100.0% (1/1) | +100.0 | 1 | 0 | 1 | 1 |" in markdown


def test_a_second_run_goes_on_from_the_records(tmp_path, small_logs):
    assert run(tmp_path, small_logs, script()).exit_code == 0
    again = run(tmp_path, small_logs, {})  # no reply left: nothing may be asked again
    assert again.exit_code == 0, again.output
    assert load_report(tmp_path / "out").rows[-1].accuracy == 100.0


def test_every_registered_method_is_offered():
    out = CliRunner().invoke(app, ["bench", "logs", "--help"])
    assert out.exit_code == 0
    text = " ".join(out.output.split())
    for method in Method:
        assert method.value in text


def test_an_unknown_task_id_is_bad_input(tmp_path, small_logs):
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    out = CliRunner().invoke(
        app,
        ["bench", "logs", "--out", str(tmp_path / "o"), "--db", str(small_logs.path),
         "--method", "raw", "--ids", "L99", "--llm", f"scripted:{empty}"],
    )  # fmt: skip
    assert out.exit_code == 2
    assert "unknown task id(s): L99" in out.output


def test_logs_db_writes_the_database(tmp_path, small_logs):
    out = CliRunner().invoke(app, ["bench", "logs-db", str(tmp_path / "logs.duckdb")])
    assert out.exit_code == 0, out.output
    assert f"checksum {small_logs.checksum}" in " ".join(out.output.split())
