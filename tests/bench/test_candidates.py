"""`acts-sql bench candidates`: every candidate of a run scored, generation versus selection.

The run directories are synthetic (records and traces written here); the
candidate SQL comes from the development files at run time (one candidate is a
task's solution, read from the solutions file, never stored in the repository).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from acts_sql.bench.candidates import (
    CANDIDATES,
    CandidatesRequest,
    canonical,
    project_dialect,
    read_candidates,
    score_candidates,
    trace_candidates,
)
from acts_sql.bench.compare import load_run
from acts_sql.bench.loader import load_solutions, load_tasks
from acts_sql.bench.runner import BenchRecord
from acts_sql.bench.scorer import EvalOptions
from acts_sql.cli.app import app

WRONG, RIGHT, NO_TRACE = "SQLite_4", "SQLite_7", "SQLite_20"


@pytest.fixture
def dev(bird_critic_dir):
    tasks = {t.instance_id: t for t in load_tasks(bird_critic_dir / "tasks" / "sqlite500.jsonl")}
    solutions = load_solutions(bird_critic_dir / "dev" / "sqlite500_solutions.jsonl")
    return bird_critic_dir, tasks, {key[1]: s.sol_sql for key, s in solutions.items()}


def candidate_event(seq: int, sql: str, status: str, **extra) -> dict:
    return {
        "seq": seq,
        "t": 0.1 * seq,
        "kind": "candidate",
        "node": f"n{seq}",
        "summary": "",
        "data": {"sql": sql, "status": status, **extra},
    }


def write_trace(run: Path, instance_id: str, events: list[dict]) -> str:
    folder = run / "traces" / "sqlite500"
    folder.mkdir(parents=True, exist_ok=True)
    other = {"seq": 99, "t": 9.0, "kind": "run_finished", "data": {"sql": "SELECT 0"}}
    (folder / f"{instance_id}.json").write_text(json.dumps({"sql": "", "trace": [*events, other]}))
    return f"traces/sqlite500/{instance_id}.json"


def record(instance_id: str, method: str = "acts", **fields) -> BenchRecord:
    base = dict(
        instance_id=instance_id,
        set="sqlite500",
        dialect="SQLite",
        category="Query",
        method=method,
        llm="scripted",
        ran=True,
    )
    return BenchRecord.model_validate({**base, **fields})


def write_records(run: Path, records: list[BenchRecord]) -> None:
    run.mkdir(parents=True, exist_ok=True)
    lines = [r.model_dump_json() for r in records]
    (run / "records.jsonl").write_text("\n".join(lines) + "\n")


def make_run(run: Path, tasks, solutions) -> None:
    """Three tasks: the gold SQL generated but a wrong one accepted; the gold SQL generated and
    returned (raw-style event with statements); no trace at all."""
    issue = tasks[WRONG].issue_sql[0]
    gold = ";\n".join(solutions[WRONG])
    again = "/* once more */ " + issue.replace("\n", "\n   ") + " ;"  # a duplicate of `issue`
    wrong_events = [
        candidate_event(1, issue, "ok", origin="greedy", duplicate=False, group=1),
        candidate_event(2, again, "ok", origin="sample", duplicate=True, group=1),
        candidate_event(3, gold, "ok", origin="sample", group=2),
        candidate_event(4, "SELEC broken FROM nowhere", "error"),
    ]
    right_events = [candidate_event(1, "\n".join(solutions[RIGHT]), "ok")]
    right_events[0]["data"]["statements"] = solutions[RIGHT]
    write_records(
        run,
        [
            record(
                WRONG,
                pred_sqls=[issue],
                accepted=True,
                status="failed",
                reason="record verdict",
                trace_file=write_trace(run, WRONG, wrong_events),
            ),
            record(
                RIGHT,
                pred_sqls=solutions[RIGHT],
                accepted=True,
                status="passed",
                trace_file=write_trace(run, RIGHT, right_events),
            ),
            record(NO_TRACE, pred_sqls=["SELEC x"], status="error"),
        ],
    )


def test_trace_candidates_reads_candidate_events_only_and_ignores_unknown_fields(tmp_path):
    events = [
        candidate_event(1, "SELECT 1", "ok", origin="pool", duplicate=False, group=3, new=[1]),
        {"seq": 2, "kind": "judgement", "data": {"sql": "SELECT 2"}},
        candidate_event(3, "  ", "ok"),  # empty SQL: not a candidate
        candidate_event(4, "SELECT 3", "timeout", statements=["SELECT 3"]),
        {"seq": 5, "kind": "candidate", "data": {"sql": "SELECT 4"}},  # older, minimal
    ]
    path = tmp_path / "trace.json"
    path.write_text(json.dumps({"trace": events}))
    found = trace_candidates(path)
    assert [(c.sql, c.status) for c in found] == [
        ("SELECT 1", "ok"),
        ("SELECT 3", "timeout"),
        ("SELECT 4", ""),
    ]
    assert found[1].prediction("sqlite") == ["SELECT 3"]
    assert found[0].prediction("sqlite") == ["SELECT 1"]
    assert project_dialect("PostgreSQL") == "postgresql" and project_dialect("SQLite") == "sqlite"
    assert canonical("select  a from t;", "sqlite") == canonical("SELECT a\nFROM t", "sqlite")


def test_candidates_separate_generation_from_selection(dev, tmp_path):
    root, tasks, solutions = dev
    run = tmp_path / "acts"
    make_run(run, tasks, solutions)
    issue = tasks[WRONG].issue_sql[0]
    assert canonical(issue, "sqlite") == canonical("/* x */ " + issue + " ;", "sqlite")
    seen = []
    request = CandidatesRequest(
        run=run,
        tasks=root / "tasks" / "sqlite500.jsonl",
        gt=root / "dev",
        options=EvalOptions(test_timeout_s=10, task_timeout_s=60),
    )
    lines = score_candidates(request, on_line=lambda line, done, total: seen.append(done))
    assert sorted(seen) == [1, 2, 3]
    wrong, right, missing = lines
    # the solution was generated, a wrong candidate (the issue SQL) was accepted and returned
    assert (wrong.candidates, wrong.events, wrong.duplicates) == (3, 4, 1)
    assert (wrong.executing, wrong.passing) == (2, 1)
    assert wrong.any_pass and not wrong.final_passed
    assert wrong.accepted and wrong.wrong_acceptance and wrong.final_in_candidates
    assert wrong.scored == 2  # the final one took the record's verdict
    verdicts = {v.sql[:20]: v for v in wrong.verdicts}
    final = next(v for v in wrong.verdicts if v.final)
    assert (final.occurrences, final.verdict, final.reason) == (2, "failed", "record verdict")
    gold = next(v for v in wrong.verdicts if v.verdict == "passed")
    assert gold.sql == ";\n".join(solutions[WRONG]) and not gold.final
    assert verdicts["SELEC broken FROM no"].verdict == "error"
    # generated and selected: nothing to score again
    assert right.any_pass and right.final_passed and not right.wrong_acceptance
    assert (right.candidates, right.scored, right.passing) == (1, 0, 1)
    # no trace: nothing generated
    assert missing.trace_missing and missing.candidates == 0 and not missing.any_pass
    assert not missing.wrong_acceptance

    written = read_candidates(run / CANDIDATES)
    assert list(written) == [("sqlite500", WRONG), ("sqlite500", RIGHT), ("sqlite500", NO_TRACE)]
    fields = json.loads((run / CANDIDATES).read_text().splitlines()[0])
    assert {
        "instance_id",
        "set",
        "dialect",
        "candidates",
        "duplicates",
        "executing",
        "passing",
        "any_pass",
        "final_passed",
        "accepted",
        "wrong_acceptance",
    } <= set(fields)

    # resumable: nothing is scored again; a task without a line is
    assert score_candidates(request, on_line=lambda *a: seen.append("again")) == lines
    assert "again" not in seen
    kept = (run / CANDIDATES).read_text().splitlines()
    (run / CANDIDATES).write_text("\n".join(kept[1:]) + "\n")
    again = score_candidates(request, on_line=lambda line, *a: seen.append(line.instance_id))
    assert seen[-1] == WRONG and seen.count(WRONG) == 1
    assert again[0].model_dump(exclude={"seconds"}) == wrong.model_dump(exclude={"seconds"})

    # compare shows the new columns
    out = tmp_path / "cmp"
    result = CliRunner().invoke(app, ["bench", "compare", str(run), "--out", str(out)])
    assert result.exit_code == 0, result.output
    row = json.loads((out / "comparison.json").read_text())["rows"][0]
    trust = row["trust"]
    assert (trust["wrong_acceptances"], trust["accepted"]) == (1, 2)
    assert (trust["any_pass"], trust["final_passed"], trust["not_selected"]) == (2, 1, 1)
    assert trust["duplicates_per_task"] == round(1 / 3, 2)
    assert trust["execution_share"] == 75.0  # 3 of 4 distinct candidates executed
    markdown = (out / "comparison.md").read_text()
    assert "| acts | 1/3 (33.3 %) | 2/3 (66.7 %) | 1 | 1/2 | 1.33 | 0.33 | 75 % | 3/3 |" in (
        markdown
    )


def test_cli_candidates_scores_a_run_and_reports_progress(dev, tmp_path):
    root, tasks, solutions = dev
    run = tmp_path / "run"
    make_run(run, tasks, solutions)
    args = ["bench", "candidates", str(run), "--tasks", str(root / "tasks" / "sqlite500.jsonl")]
    no_gt = CliRunner().invoke(app, args)
    assert no_gt.exit_code == 2 and "--gt" in no_gt.output
    result = CliRunner().invoke(app, [*args, "--gt", str(root / "dev")])
    assert result.exit_code == 0, result.output
    assert f"sqlite500/{WRONG}: 3 candidates (+1 duplicates), 2 execute, 1 pass" in result.output
    assert "WRONGLY ACCEPTED" in result.output
    assert "a candidate passes in 2, the final SQL in 1; wrong acceptances 1/2" in result.output
    assert len((run / CANDIDATES).read_text().splitlines()) == 3
    again = CliRunner().invoke(app, [*args, "--gt", str(root / "dev")])
    assert again.exit_code == 0 and "[1/3]" not in again.output


def test_cli_candidates_rejects_a_directory_without_records(tmp_path):
    args = ["bench", "candidates", str(tmp_path), "--tasks", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2 and "not an `acts-sql bench` output" in result.output


def test_wrong_acceptance_needs_an_evaluable_task(tmp_path):
    run = tmp_path / "run"
    write_records(run, [record("X_1", accepted=True, status="not_evaluable", pred_sqls=["x"])])
    request = CandidatesRequest(run=run, tasks=tmp_path / "none.jsonl")
    (line,) = score_candidates(request)
    assert not line.evaluable and not line.wrong_acceptance and line.trace_missing
    assert load_run(run).candidates is not None
