#!/usr/bin/env python
"""What the evidence gate (`acts_sql.engine.evidence`) would have done on kept `vote` runs.

    .venv/bin/python scripts/evidence_replay.py RUN_DIR [RUN_DIR ...] [--rules RUN_DIR ...]
        [--agreement N] [--json]

No model and no database: a `vote` run with K >= 3 holds what the gate would gather. Its
first sample is the greedy raw rewrite (the gate's raw rewrite), its next two are raw
samples at the run's temperature with seeds 1 and 2 (the gate's samples), each executed,
grouped by its result and refused or not by the trust rules (the trace's `candidate`
events), and every distinct candidate was scored (`candidates.jsonl`: passed, failed,
error). The rule chain's repair of the user's SQL (0 calls) is read from acts/linear runs
of the same tasks (`--rules`): the last candidate of the first pool when it was written by
the rule chain on the user's SQL (`statement` events of purpose `rules` at that node).

For each task the gate's rule runs as the engine runs it (`evidence.verdict`, with the
result checks on the candidate's kept result preview): raw first (with the rule repair),
then a sample while nothing is accepted and the raw rewrite or the rule repair returns a
result that may be accepted, at most two. Reported: tasks accepted, calls, and
how many acceptances are right (the accepted candidate's SQL passed the task's tests), wrong
(it failed them) or unknown (not scored).
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from pathlib import Path
from typing import Any

from acts_sql.db.result import ExecResult
from acts_sql.engine.evidence import AGREEMENT, MAX_SAMPLES, Evidence, anchors, verdict
from acts_sql.engine.trust import expects_same_rows


def _key(sql: str) -> str:
    return " ".join(sql.split()).rstrip(";").lower()


def scores(run: Path) -> dict[str, dict[str, str]]:
    """Task id -> candidate SQL (whitespace and case aside) -> passed/failed/error."""
    out: dict[str, dict[str, str]] = {}
    path = run / "candidates.jsonl"
    if not path.exists():
        return out
    for line in path.read_text().splitlines():
        row = json.loads(line)
        out[str(row["instance_id"])] = {_key(v["sql"]): v["verdict"] for v in row["verdicts"]}
    return out


def traces(run: Path) -> dict[str, dict[str, Any]]:
    found = {}
    for file in sorted(run.glob("traces/*/*.json.gz")):
        with gzip.open(file) as text:
            found[file.name.removesuffix(".json.gz")] = json.loads(text.read())
    return found


def generations(trace: dict[str, Any]) -> list[Evidence | None]:
    """The vote run's samples in order (None: a reply without SQL), as the gate sees them."""
    results = {c["id"]: c for c in trace["candidates"]}
    out: list[Evidence | None] = []
    for event in trace["trace"]:
        if event["kind"] == "candidate_missing":
            out.append(None)
        elif event["kind"] == "candidate" and not event["data"]["origin"].startswith("rule"):
            out.append(_evidence(event["data"], results, "raw" if not out else "raw:sample"))
    return out


def _evidence(data: dict[str, Any], results: dict[str, Any], origin: str) -> Evidence:
    candidate = results.get(data.get("candidate", ""), {})
    result = ExecResult(**candidate["result"]) if candidate else ExecResult(status="error")
    runs = data["status"] == "ok" and data.get("group")
    return Evidence(
        origin=origin,
        sql=data["sql"],
        result=result,
        fingerprint=data["group"] if runs else None,
        refusal=data.get("reason") or "refused" if data.get("verdict") == "refused" else None,
    )


def rule_repair(trace: dict[str, Any]) -> dict[str, Any] | None:
    """The rule chain's repair of the user's SQL in an acts/linear trace, if one ran."""
    events = trace["trace"]
    pools = [e for e in events if e["kind"] == "pool"]
    if not pools:
        return None
    node = pools[0]["node"]
    if not any(
        e["kind"] == "statement" and e["purpose"] == "rules" and e["node"] == node for e in events
    ):
        return None
    cands = [e for e in events if e["kind"] == "candidate" and e["node"] == node]
    last = cands[-1]["data"] if cands else None
    if not last or not last["origin"].startswith("rule:") or last["status"] != "ok":
        return None
    return last


def _rule_evidence(
    rule: dict[str, Any], gens: list[Evidence | None], results: dict[str, Any]
) -> Evidence:
    """The rule repair, in the vote run's groups: the group of a sample with the same SQL
    or the same kept result; else a group of its own."""
    refusal = rule.get("reason") if rule.get("verdict") == "refused" else None
    same = next((g for g in gens if g and _key(g.sql) == _key(rule["sql"])), None)
    if same is None:
        mine = ExecResult(**results[rule["candidate"]]["result"])
        same = next(
            (g for g in gens if g and g.fingerprint and _same_preview(g.result, mine)), None
        )
    fingerprint = same.fingerprint if same else "rule-only"
    result = ExecResult(**results[rule["candidate"]]["result"])
    return Evidence(
        origin=rule["origin"],
        sql=rule["sql"],
        result=result,
        fingerprint=fingerprint,
        refusal=refusal,
    )


def _same_preview(a: ExecResult, b: ExecResult) -> bool:
    return (
        a.row_count == b.row_count
        and len(a.columns) == len(b.columns)
        and a.row_count <= len(a.rows)
        and sorted(map(repr, a.rows)) == sorted(map(repr, b.rows))
    )


def replay_task(trace, rule, rule_results, scored, needed) -> dict[str, Any]:
    question = trace["question"]
    original = next(
        e for e in trace["trace"] if e["kind"] == "statement" and e["purpose"] == "original"
    )
    fails = original["data"]["status"] != "ok"
    row = {"fails": fails, "speed": expects_same_rows(question), "calls": 1, "accepted": False}
    if not fails and row["speed"]:
        row["why"] = "precondition"
        return row
    gens = generations(trace)
    pooled = [_rule_evidence(rule, gens, rule_results)] if rule else []
    drawn = [g for g in gens[:1] if g]
    decided = verdict(pooled + drawn, question=question, generated=False, needed=needed)
    for k in range(1, MAX_SAMPLES + 1):
        if decided.accepted or k >= len(gens) or not anchors(pooled + drawn):
            break  # as the engine: no sample unless the raw rewrite or rule repair may stand
        row["calls"] = k + 1
        if gens[k]:
            drawn.append(gens[k])
        decided = verdict(pooled + drawn, question=question, generated=False, needed=needed)
    row["why"] = decided.reason
    if decided.accepted:
        members = [e for e in pooled + drawn if e.fingerprint == decided.fingerprint]
        row["accepted"] = True
        row["origins"] = [e.origin for e in members]
        row["right"] = scored.get(_key(members[0].sql), "unknown")
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--rules", nargs="*", type=Path, default=[])
    parser.add_argument("--agreement", type=int, default=AGREEMENT)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    rules: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    for run in args.rules:
        for task, trace in traces(run).items():
            found = rule_repair(trace)
            if found and task not in rules:
                rules[task] = (found, {c["id"]: c for c in trace["candidates"]})
    rows = {}
    for run in args.runs:
        scored = scores(run)
        for task, trace in traces(run).items():
            rule, results = rules.get(task, (None, {}))
            if rule:
                results = {**{c["id"]: c for c in trace["candidates"]}, **results}
            rows[task] = replay_task(trace, rule, results, scored.get(task, {}), args.agreement)
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    accepted = {t: r for t, r in rows.items() if r["accepted"]}
    verdicts = [r["right"] for r in accepted.values()]
    print(f"tasks: {len(rows)}; rule repairs of the user's SQL that run: {len(rules)}")
    print(
        f"precondition fails (speed issue, SQL runs): "
        f"{sum(1 for r in rows.values() if r['why'] == 'precondition')}"
    )
    print(
        f"accepted by the gate: {len(accepted)} (right {verdicts.count('passed')}, wrong "
        f"{sum(1 for v in verdicts if v in ('failed', 'error'))}, unknown "
        f"{verdicts.count('unknown')})"
    )
    calls = [r["calls"] for r in rows.values()]
    print(
        f"gate calls: {sum(calls)} over {len(calls)} tasks; accepted tasks: "
        f"{sum(r['calls'] for r in accepted.values())}"
    )
    for task, r in sorted(rows.items()):
        print(
            f"  {task:16} calls={r['calls']} accepted={r['accepted']!s:5} "
            f"{r.get('right', '')} {r.get('origins', '')} {r['why'][:110]}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
