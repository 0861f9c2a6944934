"""`acts-sql bench everyday` end to end with a scripted LLM: correct, score, report, resume."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from acts_sql.bench.everyday.cases import select_cases
from acts_sql.bench.everyday.report import load_report
from acts_sql.bench.everyday.runner import load_records
from acts_sql.cli.app import app

S01, S10 = select_cases(["S01", "S10"])


def fenced(sql: str) -> str:
    return f"```sql\n{sql}\n```"


def script() -> dict[str, list[str]]:
    """raw: S10 answered right, S01 answered with every customer (runs, wrong rows);
    maplerepair: S10 (a comma that made an alias) repaired by the `column_alias` rule with no
    LLM call, S01 (a keyword typo) by the `keyword_typo` rule, also with no call (the third
    reply is never asked for)."""
    return {
        "correct": [
            fenced(S10.gold_sql),
            fenced("SELECT name FROM customers"),
            fenced(S01.gold_sql),
        ]
    }


def run(tmp_path, replies, *extra: str):
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    args = ["bench", "everyday", "--out", str(tmp_path / "out"), "--method", "raw",
            "--method", "maplerepair", "--ids", "S10,S01", "--llm", f"scripted:{path}",
            *extra]  # fmt: skip
    return CliRunner().invoke(app, args)


def test_bench_everyday_scores_and_reports_each_method(tmp_path):
    out = run(tmp_path, script())
    assert out.exit_code == 0, out.output
    report = load_report(tmp_path / "out")
    rows = {row.method: row for row in report.rows}
    assert list(rows) == ["raw", "maplerepair"]
    raw, maple = rows["raw"], rows["maplerepair"]
    assert (raw.cases, raw.right, raw.accepted, raw.wrong_accepted) == (2, 1, 2, 1)
    assert (raw.fixed, raw.broken, raw.by_rules) == (1, 0, 0)
    assert raw.llm_calls.mean == 1.0 and raw.seconds.mean > 0 and raw.seconds.p90 > 0
    assert (maple.right, maple.by_rules, maple.llm_calls.mean) == (2, 2, 0.0)
    assert maple.llm_calls.p50 == 0 and maple.llm_calls.p90 == 0
    assert raw.by_class["comma_alias"].right == 1 and raw.by_class["keyword_typo"].right == 0
    assert raw.by_class["keyword_typo"].wrong_accepted == 1
    assert raw.by_dialect == {"sqlite": raw.by_dialect["sqlite"]}
    assert raw.candidates >= raw.candidates_ran >= 2 and raw.executed_share is not None

    records = {r.id: r for r in load_records(tmp_path / "out", "raw")}
    assert records["S10"].right and records["S10"].final_sql == S10.gold_sql
    assert records["S10"].wrong_ran and not records["S01"].wrong_ran
    assert records["S01"].accepted and not records["S01"].right
    markdown = (tmp_path / "out" / "report.md").read_text()
    assert "| raw | 50.0% (1/2) | 2 | 1 | 1 | 0 | 0 | 1.00 / 1 / 1 |" in markdown
    assert "| raw | 0/1, 1 wrong acc. | 1/1 |" in markdown  # by class: keyword_typo, comma_alias


def test_a_second_run_goes_on_from_the_records(tmp_path):
    assert run(tmp_path, script()).exit_code == 0
    again = run(tmp_path, {})  # no reply left: nothing may be asked again
    assert again.exit_code == 0, again.output
    assert [row.right for row in load_report(tmp_path / "out").rows] == [1, 2]
    assert len(load_records(tmp_path / "out", "raw")) == 2


def test_rules_alone_fix_a_misspelled_column_without_a_call(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text("{}")
    args = ["bench", "everyday", "--out", str(tmp_path / "out"), "--method", "maplerepair",
            "--dialect", "duckdb", "--limit", "2", "--llm", f"scripted:{path}"]  # fmt: skip
    out = CliRunner().invoke(app, [*args[:-2], "--ids", "D02", *args[-2:]])
    assert out.exit_code == 0, out.output
    [row] = load_report(tmp_path / "out").rows
    assert (row.cases, row.right, row.by_rules, row.wrong_accepted) == (1, 1, 1, 0)
    [record] = load_records(tmp_path / "out", "maplerepair")
    assert "distance_km)" in record.final_sql and record.llm_calls == 0


def test_postgresql_cases_without_a_server_are_bad_input(tmp_path, monkeypatch):
    monkeypatch.delenv("ACTS_SQL_TEST_PG_URL", raising=False)
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    out = CliRunner().invoke(
        app,
        ["bench", "everyday", "--out", str(tmp_path / "o"), "--method", "raw", "--ids", "P01",
         "--llm", f"scripted:{empty}"],
    )  # fmt: skip
    assert out.exit_code == 2
    assert "--pg-url" in " ".join(out.output.split())
    assert not (tmp_path / "o" / "records-raw.jsonl").exists()


def test_an_unknown_case_id_is_bad_input(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    out = CliRunner().invoke(
        app,
        ["bench", "everyday", "--out", str(tmp_path / "o"), "--method", "raw", "--ids", "S99",
         "--llm", f"scripted:{empty}"],
    )  # fmt: skip
    assert out.exit_code == 2
    assert "unknown case id(s): S99" in " ".join(out.output.split())


def test_a_postgresql_server_that_does_not_answer_is_bad_configuration(tmp_path):
    empty = tmp_path / "empty.json"
    empty.write_text("{}")
    out = CliRunner().invoke(
        app,
        ["bench", "everyday", "--out", str(tmp_path / "o"), "--method", "raw", "--ids", "P01",
         "--pg-url", "postgresql://nobody:secret@127.0.0.1:1/postgres",
         "--llm", f"scripted:{empty}"],
    )  # fmt: skip
    assert out.exit_code == 2, out.output
    text = " ".join(out.output.split())
    assert "cannot create the database acts_everyday_hr_" in text and "secret" not in text
    assert not (tmp_path / "o" / "records-raw.jsonl").exists()
