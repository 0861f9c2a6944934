"""scripts/replay_run.py: a recorded run replayed through the current code, with no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acts_sql.bench.runner import BenchRequest, MethodSpec, run_bench
from acts_sql.bench.scorer import EvalOptions
from acts_sql.bench.selection import TaskFilter
from acts_sql.engine.options import CorrectionOptions, Method
from support import load_script, scripted

TASK = "SQLite_4"


@pytest.fixture(scope="module")
def replay():
    return load_script("replay_run")


def _issue_sql(root: Path) -> str:
    for line in (root / "tasks" / "sqlite500.jsonl").read_text().splitlines():
        task = json.loads(line)
        if task["instance_id"] == TASK:
            return task["issue_sql"][0]
    raise AssertionError(f"{TASK} not in sqlite500.jsonl")


def _recorded(root: Path, out: Path, reply: str) -> dict:
    """A raw run of one task whose record says what the model replied, as a local run would."""
    run_bench(
        BenchRequest(
            tasks=root / "tasks",
            gt=root / "dev",
            out=out,
            method=MethodSpec(
                llm="scripted", options=CorrectionOptions.of(method=Method.RAW, max_llm_calls=5)
            ),
            filter=TaskFilter(ids=[f"sqlite500/{TASK}"]),
        ),
        backend=scripted({"correct": [reply]}),
    )
    return json.loads((out / "records.jsonl").read_text())


def test_a_replay_answers_with_the_recorded_replies_under_the_current_rules(
    replay, bird_critic_dir, tmp_path
):
    issue_sql = _issue_sql(bird_critic_dir)
    record = _recorded(bird_critic_dir, tmp_path / "run", f"```sql\n{issue_sql}\n```")
    # pretend the recording was a local model's, made before the trust rules covered raw
    record["accepted"] = True
    record["llm"] = "local:qwen2.5-coder-0.5b"
    (tmp_path / "run" / "records.jsonl").write_text(json.dumps(record) + "\n")

    new, diverged = replay.replay_task(
        tmp_path / "run", tmp_path / "replay", record, bird_critic_dir, EvalOptions(workers=1)
    )

    assert not diverged
    assert new.pred_sqls == record["pred_sqls"] == [issue_sql]  # the recorded reply, replayed
    assert new.accepted is False and "same SQL as the user's" in new.stop_reason
    assert new.llm_calls == 1 and new.method == "raw"
    assert new.llm == "replay:local:qwen2.5-coder-0.5b"  # named after the model: its defaults
    trace = tmp_path / "replay" / new.trace_file
    assert trace.exists()  # the record points at its trace from the replay directory
    replay.gather(tmp_path / "replay", [new])
    lines = (tmp_path / "replay" / "records.jsonl").read_text().splitlines()
    assert [json.loads(line)["instance_id"] for line in lines] == [TASK]
    assert len((tmp_path / "replay" / "preds.jsonl").read_text().splitlines()) == 1


def test_a_replay_whose_calls_differ_from_the_recording_is_flagged(
    replay, bird_critic_dir, tmp_path
):
    record = _recorded(bird_critic_dir, tmp_path / "run", "```sql\nSELECT 1\n```")
    trace_path = tmp_path / "run" / record["trace_file"]
    trace = json.loads(trace_path.read_text())
    trace["trace"] = [e for e in trace["trace"] if e["kind"] != "llm_call"]  # no reply recorded
    trace_path.write_text(json.dumps(trace))

    new, diverged = replay.replay_task(
        tmp_path / "run", tmp_path / "replay", record, bird_critic_dir, EvalOptions(workers=1)
    )

    assert diverged
    assert new is not None and new.accepted is False
