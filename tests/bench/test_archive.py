"""bench.archive: a run kept in the repository reads like the run, without the tests' detail."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from acts_sql.bench.archive import keep_run, redact_reason
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


def _script(name: str):
    return load_script(name)


def test_replay_and_trace_stats_read_a_kept_run(tmp_path):
    dest = Path(keep_run(_run(tmp_path), tmp_path / "kept" / "acts-test").dest)
    replay = _script("replay_run")
    record = replay.load_records(dest)[0]
    assert replay.recorded_script(replay.trace_events(dest, record)) == {"correct": ["x"]}
    stats = _script("trace_stats").run_stats(dest)
    assert stats["counts"]["candidates"] == 2
