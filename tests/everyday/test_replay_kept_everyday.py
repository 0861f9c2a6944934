"""The kept everyday runs, replayed through the current code: 0 wrong acceptances.

Every `acts` run kept in ``results/everyday-local`` with its traces is replayed case by case
(`scripts/replay_everyday.py`: the current engine, the recorded options, and a scripted backend
that answers each purpose with the model's recorded replies in order) on its SQLite and DuckDB
cases, whose databases are files (the PostgreSQL cases are left to the script with
``--pg-url``). A *wrong acceptance* is a replayed answer that comes back accepted and does not
return the gold rows. A replay whose code asks other questions than the recording may run out of
replies and end on an LLM error; that is fine here. Run with ``-s`` to see each run's totals.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from acts_sql.engine.options import Method
from support import load_script

KEPT = Path(__file__).resolve().parents[2] / "results" / "everyday-local"
RUNS = sorted(d for d in KEPT.glob("*") if (d / "traces" / "acts").is_dir())
FILE_DIALECTS = ("sqlite", "duckdb")


@pytest.mark.parametrize("run", RUNS, ids=[r.name for r in RUNS])
def test_replayed_kept_everyday_runs_accept_no_wrong_answer(run, tmp_path):
    replay = load_script("replay_everyday")
    done = replay.replay(run, tmp_path / run.name, Method.ACTS, dialects=FILE_DIALECTS)
    totals = replay.totals(done)
    print(run.name, json.dumps(totals))
    assert done, f"{run.name}: no case replayed"
    wrong = [r.after.id for r in done if r.after.accepted and not r.after.right]
    assert wrong == [], f"{run.name}: wrongly accepted {wrong}"


def test_the_check_sees_a_wrong_acceptance(tmp_path):
    """A replay made to accept a wrong answer is reported: a kept record of S01 whose
    recorded replies all agree on a wrong answer."""
    replay = load_script("replay_everyday")
    run = tmp_path / "kept"
    lines = (KEPT / "acts-1.5b-errnote" / "records-acts.jsonl").read_text().splitlines()
    record = next(r for r in map(json.loads, lines) if r["id"] == "S01")
    (run / "traces" / "acts").mkdir(parents=True)
    with gzip.open(run / record["trace_file"], "wt", encoding="utf-8") as sink:
        json.dump(_wrong_agreement_trace(), sink)
    (run / "records-acts.jsonl").write_text(json.dumps(record) + "\n")
    done = replay.replay(run, tmp_path / "out", Method.ACTS, dialects=FILE_DIALECTS)
    assert [r.after.id for r in done if r.after.accepted and not r.after.right] == ["S01"]


def _wrong_agreement_trace() -> dict[str, object]:
    """A recording of S01 ("List the names of customers who live in Paris.", the user's SQL
    `SELEC name FROM customers WHERE city = 'Paris'`) whose raw rewrite and samples all give
    the names of every customer: an agreement the gate accepts, and a wrong answer."""
    reply = "```sql\nSELECT name FROM customers\n```"
    calls = [
        {
            "kind": "llm_call",
            "purpose": "correct",
            "t": 1.0,
            "data": {"ok": True, "response": reply},
        }
    ] * 3
    # without the lexical rule: its repair of SELEC would be accepted before any reply
    options = {"method": "acts", "lexical_repairs": False}
    started = {"kind": "run_started", "t": 0.0, "data": {"options": options}}
    return {"trace": [started, *calls]}
