"""bench.archive: a run kept in the repository reads like the run, without the tests' detail."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from acts_sql.bench.archive import keep_run, keep_runs, redact_reason
from acts_sql.bench.candidates import trace_candidates
from acts_sql.bench.compare import load_run
from acts_sql.bench.errors import BenchDataError
from acts_sql.bench.loader import read_trace, stored_trace
from support import load_script

TRACE = {
    "sql": "SELECT 2",
    "trace": [
        {"kind": "llm_call", "purpose": "correct", "data": {"ok": True, "response": "x"}},
        {"kind": "candidate", "data": {"sql": "SELECT 1", "status": "ok"}},
        {"kind": "candidate", "data": {"sql": "SELECT 2", "status": "ok"}},
    ],
}


def _record(task: str, status: str, reason: str, trace_file: str | None) -> dict:
    return {
        "instance_id": task,
        "set": "sqlite500",
        "dialect": "SQLite",
        "category": "Query",
        "method": "acts",
        "llm": "scripted",
        "pred_sqls": ["SELECT 2"],
        "ran": True,
        "status": status,
        "reason": reason,
        "trace_file": trace_file,
    }


def _run(root: Path) -> Path:
    run = root / "acts-test"
    (run / "traces" / "sqlite500").mkdir(parents=True)
    (run / "traces" / "sqlite500" / "SQLite_1.json").write_text(json.dumps(TRACE))
    records = [
        _record(
            "SQLite_1",
            "failed",
            "test_1: assertion failed: expected 3 rows; test_2: got [(1,)] expected [(7,)]",
            "traces/sqlite500/SQLite_1.json",
        ),
        _record("SQLite_2", "passed", "", "traces/sqlite500/SQLite_2.json"),  # trace lost
    ]
    (run / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (run / "preds.jsonl").write_text('{"instance_id": "SQLite_1", "pred_sqls": ["SELECT 2"]}\n')
    candidates = {
        "instance_id": "SQLite_1",
        "set": "sqlite500",
        "dialect": "SQLite",
        "final_status": "failed",
        "verdicts": [
            {
                "sql": "SELECT 1",
                "status": "ok",
                "verdict": "failed",
                "reason": "test_1: expected 42",
            }
        ],
    }
    (run / "candidates.jsonl").write_text(json.dumps(candidates) + "\n")
    return run


@pytest.mark.parametrize(
    ("reason", "kept"),
    [
        ("", ""),
        ("test_1: assertion failed: ex_base returned 0 but expected 1.", "test_1: detail not kept"),
        ("test_1: a; test_3: expected [(1,)]", "test_1, test_3: detail not kept"),
        ('relation "t" does not exist', "detail not kept"),
    ],
)
def test_a_kept_reason_names_the_failing_tests_and_nothing_they_expected(reason, kept):
    assert redact_reason(reason) == kept


def test_a_kept_run_reads_like_the_run(tmp_path):
    run = _run(tmp_path)
    kept = keep_run(run, tmp_path / "kept" / "acts-test")

    assert (kept.tasks, kept.traces, kept.traces_missing) == (2, 1, 1)
    dest = Path(kept.dest)
    packed = dest / "traces" / "sqlite500" / "SQLite_1.json.gz"
    assert packed.is_file() and not (dest / "traces" / "sqlite500" / "SQLite_1.json").exists()
    # every reader takes the gzipped copy under the recorded name
    assert stored_trace(dest / "traces/sqlite500/SQLite_1.json") == packed
    assert read_trace(dest / "traces/sqlite500/SQLite_1.json") == TRACE
    assert [c.sql for c in trace_candidates(dest / "traces/sqlite500/SQLite_1.json")] == [
        "SELECT 1",
        "SELECT 2",
    ]
    loaded = load_run(dest)
    assert [r.status for r in loaded.records] == ["failed", "passed"]
    assert loaded.records[0].reason == "test_1, test_2: detail not kept"
    assert (dest / "preds.jsonl").read_text() == (run / "preds.jsonl").read_text()
    line = json.loads((dest / "candidates.jsonl").read_text())
    assert line["verdicts"][0]["reason"] == "test_1: detail not kept"
    text = "".join(p.read_text() for p in dest.glob("*.jsonl"))
    assert "expected" not in text and "42" not in text


def test_keeping_again_writes_the_same_bytes(tmp_path):
    run = _run(tmp_path)
    first = keep_run(run, tmp_path / "kept" / "a")
    blob = (Path(first.dest) / "traces/sqlite500/SQLite_1.json.gz").read_bytes()
    second = keep_run(run, tmp_path / "kept" / "a")
    assert (Path(second.dest) / "traces/sqlite500/SQLite_1.json.gz").read_bytes() == blob
    assert gzip.decompress(blob) == (run / "traces/sqlite500/SQLite_1.json").read_bytes()


def test_a_run_holding_a_solution_field_is_refused_and_nothing_is_left(tmp_path):
    run = _run(tmp_path)
    leaked = dict(TRACE, sol_sql=["SELECT 42"])
    (run / "traces" / "sqlite500" / "SQLite_1.json").write_text(json.dumps(leaked))
    dest = tmp_path / "kept" / "acts-test"
    with pytest.raises(BenchDataError, match="sol_sql"):
        keep_run(run, dest)
    assert not dest.exists() and not (tmp_path / "kept" / "acts-test.partial").exists()


def test_a_folder_that_is_not_a_run_is_refused(tmp_path):
    with pytest.raises(BenchDataError, match="not an `acts-sql bench` output"):
        keep_run(tmp_path, tmp_path / "kept")


def test_a_missing_trace_is_a_typed_error(tmp_path):
    with pytest.raises(BenchDataError, match="no trace file"):
        read_trace(tmp_path / "nothing.json")


def _rest_run(root: Path, task: str = "SQLite_3") -> Path:
    """A second part of the same measurement: other tasks, run later."""
    run = root / "acts-rest"
    (run / "traces" / "sqlite500").mkdir(parents=True)
    (run / "traces" / "sqlite500" / f"{task}.json").write_text(json.dumps(TRACE))
    record = _record(task, "passed", "", f"traces/sqlite500/{task}.json")
    (run / "records.jsonl").write_text(json.dumps(record) + "\n")
    (run / "preds.jsonl").write_text(json.dumps({"instance_id": task, "pred_sqls": ["X"]}))
    return run


def test_runs_kept_as_one_read_like_one_run(tmp_path):
    first, rest = _run(tmp_path), _rest_run(tmp_path)
    kept = keep_runs([first, rest], tmp_path / "kept" / "acts-40")

    assert (kept.tasks, kept.traces, kept.traces_missing) == (3, 2, 1)
    dest = Path(kept.dest)
    loaded = load_run(dest)
    assert [r.instance_id for r in loaded.records] == ["SQLite_1", "SQLite_2", "SQLite_3"]
    preds = [json.loads(line) for line in (dest / "preds.jsonl").read_text().splitlines()]
    assert [p["instance_id"] for p in preds] == ["SQLite_1", "SQLite_3"]  # no newline lost
    assert read_trace(dest / "traces/sqlite500/SQLite_3.json") == TRACE
    sources = json.loads((dest / "sources.json").read_text())["sources"]
    assert [(s["run"], s["tasks"]) for s in sources] == [
        ("acts-test", ["sqlite500/SQLite_1", "sqlite500/SQLite_2"]),
        ("acts-rest", ["sqlite500/SQLite_3"]),
    ]
    assert not (dest / "report.json").exists()


def test_runs_that_share_a_task_are_not_kept_as_one(tmp_path):
    first, rest = _run(tmp_path), _rest_run(tmp_path, task="SQLite_2")
    dest = tmp_path / "kept" / "acts-40"
    with pytest.raises(BenchDataError, match="sqlite500/SQLite_2 is in both"):
        keep_runs([first, rest], dest)
    assert not dest.exists() and not dest.with_name("acts-40.partial").exists()


def test_keep_run_script_joins_runs_and_refuses_a_path_as_the_name(tmp_path, capsys):
    script = _script("keep_run")
    first, rest = _run(tmp_path), _rest_run(tmp_path)
    to = tmp_path / "kept"
    assert script.main([str(first), str(rest), "--join", "acts-40", "--to", str(to)]) == 0
    assert json.loads(capsys.readouterr().out)["tasks"] == 3
    assert (to / "acts-40" / "sources.json").is_file()
    with pytest.raises(SystemExit) as stop:
        script.main([str(first), "--join", "../elsewhere", "--to", str(to)])
    assert stop.value.code == 2
    assert script.main([str(first), str(first), "--join", "twice", "--to", str(to)]) == 2
    assert "is in both" in capsys.readouterr().err


def _script(name: str):
    return load_script(name)


def test_replay_and_trace_stats_read_a_kept_run(tmp_path):
    dest = Path(keep_run(_run(tmp_path), tmp_path / "kept" / "acts-test").dest)
    replay = _script("replay_run")
    record = replay.load_records(dest)[0]
    assert replay.recorded_script(replay.trace_events(dest, record)) == {"correct": ["x"]}
    stats = _script("trace_stats").run_stats(dest)
    assert stats["counts"]["candidates"] == 2
