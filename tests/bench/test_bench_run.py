"""`acts-sql bench bird-critic` end to end: scripted LLM, three SQLite development tasks.

The scripted replies are written at run time from the development files (the
solution of one task, the issue SQL of another, broken SQL for the third):
nothing from the benchmark is stored in the repository.
"""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from acts_sql.bench.loader import load_solutions, load_tasks
from acts_sql.bench.machine import machine_label
from acts_sql.bench.models import Status
from acts_sql.bench.runner import BenchRequest, MethodSpec, run_bench
from acts_sql.bench.selection import TaskFilter
from acts_sql.cli.app import app
from acts_sql.engine.options import CorrectionOptions, Method
from support import scripted

IDS = ["SQLite_4", "SQLite_7", "SQLite_20"]


@pytest.fixture
def dev_sqlite(bird_critic_dir):
    tasks = {t.instance_id: t for t in load_tasks(bird_critic_dir / "tasks" / "sqlite500.jsonl")}
    solutions = load_solutions(bird_critic_dir / "dev" / "sqlite500_solutions.jsonl")
    return bird_critic_dir, tasks, {key[1]: s for key, s in solutions.items()}


def sql_blocks(statements):
    return "".join(f"```sql\n{s}\n```\n" for s in statements)


def test_raw_method_over_three_dev_tasks_end_to_end(dev_sqlite, tmp_path):
    root, tasks, solutions = dev_sqlite
    script = {
        "correct": [
            "The fix:\n" + sql_blocks(solutions[IDS[0]].sol_sql),
            sql_blocks(tasks[IDS[1]].issue_sql),
            sql_blocks(["SELEC broken FROM nowhere"]),
        ]
    }
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps(script))
    out = tmp_path / "run"
    args = [
        "bench",
        "bird-critic",
        "--tasks",
        str(root / "tasks" / "sqlite500.jsonl"),
        "--gt",
        str(root / "dev"),
        "--method",
        "raw",
        "--llm",
        f"scripted:{script_file}",
        "--ids",
        ",".join(IDS),
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "accuracy 33.33 %: 1/3" in result.output

    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert [(r["instance_id"], r["status"]) for r in records] == [
        ("SQLite_4", "passed"),
        ("SQLite_7", "failed"),
        ("SQLite_20", "error"),
    ]
    assert [r["llm_calls"] for r in records] == [1, 1, 1]
    assert records[0]["accepted"] and not records[2]["accepted"]
    assert all(r["prompt_tokens"] > 0 and (out / r["trace_file"]).exists() for r in records)
    assert {r["machine"] for r in records} == {machine_label()}  # seconds say where they ran
    # predictions in the official format, in task order
    preds = [json.loads(line) for line in (out / "preds.jsonl").read_text().splitlines()]
    assert [set(p) for p in preds] == [{"instance_id", "pred_sqls"}] * 3
    assert preds[0]["pred_sqls"] == solutions[IDS[0]].sol_sql
    report = json.loads((out / "report.json").read_text())
    assert report["method"] == "raw" and report["usage"]["llm_calls"]["mean"] == 1
    assert report["overall"]["accuracy"] == 33.33
    assert (out / "results.jsonl").exists() and "Cost per task" in (out / "report.md").read_text()

    # resumable: a second run asks the LLM nothing and keeps the verdicts
    again = CliRunner().invoke(app, [*args[:9], "scripted:" + str(_empty(tmp_path)), *args[10:]])
    assert again.exit_code == 0, again.output
    assert "accuracy 33.33 %: 1/3" in again.output
    assert len((out / "records.jsonl").read_text().splitlines()) == 3

    # a run of fewer tasks into the same directory reports on those, and keeps the others
    fewer = [*args[:9], "scripted:" + str(_empty(tmp_path)), "--ids", IDS[1], "--out", str(out)]
    one = CliRunner().invoke(app, fewer)
    assert one.exit_code == 0, one.output
    assert "accuracy 0.00 %: 0/1" in one.output
    kept = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    assert [r["instance_id"] for r in kept] == [IDS[1], IDS[0], IDS[2]]
    assert kept == [
        next(r for r in records if r["instance_id"] == i) for i in (IDS[1], IDS[0], IDS[2])
    ]
    assert len((out / "preds.jsonl").read_text().splitlines()) == 3


def _empty(tmp_path):
    path = tmp_path / "empty.json"
    path.write_text(json.dumps({"correct": []}))
    return path


def test_acts_method_works_on_a_copy_of_the_prepared_database(dev_sqlite, tmp_path):
    root, _, solutions = dev_sqlite
    task_id = IDS[0]
    plan = {
        "cursor": "n1",
        "nodes": [
            {
                "id": "n1",
                "description": "look at the table the issue is about",
                "tool": "run_sql",
                "input": {"sql": "SELECT COUNT(*) FROM items"},
                "children": ["n2"],
            },
            {
                "id": "n2",
                "description": "rewrite the query",
                "tool": "generate_sql",
                "input": {},
                "children": [],
            },
        ],
    }
    generated = {"sql": "\n".join(solutions[task_id].sol_sql), "rationale": "fixed"}
    # the judge sees two groups: A (the raw rewrite, first seen) and B (the solution)
    judge = {"reason": "right rows", "verdict": "accept", "group": "B", "backtrack_to": None}
    raw = "```sql\nSELECT COUNT(*) FROM items\n```"  # the raw rewrite: a wrong candidate
    backend = scripted(
        {"plan": [plan], "correct": [raw], "generate_sql": [generated], "judge": [judge]}
    )
    request = BenchRequest(
        tasks=root / "tasks" / "sqlite500.jsonl",
        gt=root / "dev",
        out=tmp_path / "acts",
        method=MethodSpec(llm="scripted", options=CorrectionOptions(method=Method.ACTS)),
        filter=TaskFilter(ids=[task_id]),
    )
    report = run_bench(request, backend=backend)
    assert report.overall.passed == 1, report
    record = json.loads((tmp_path / "acts" / "records.jsonl").read_text())
    assert record["status"] == Status.PASSED and record["llm_calls"] == 4
    trace = json.loads((tmp_path / "acts" / record["trace_file"]).read_text())
    # the agent saw the table that preprocess_sql creates (a TEMP table there)
    ran = next(n for n in trace["tree"] if n["id"] == "n1")
    assert ran["status"] == "done", ran
    assert "no such table" not in json.dumps(ran)
    schema = backend.prompts("plan")[0]
    assert "CREATE TABLE items" in schema and "Widget" in schema, schema[:2000]
