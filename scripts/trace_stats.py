#!/usr/bin/env python
"""How a method behaved on a benchmark run, read from its traces: the task-by-task reading
behind the accuracy numbers.

    .venv/bin/python scripts/trace_stats.py RUN_DIR [RUN_DIR ...] [--json]

RUN_DIR is an `acts-sql bench bird-critic` output directory (records.jsonl, results.jsonl,
traces/). For each run, over its tasks:

- candidates: distinct candidate SQL texts executed per task (repeats of a text within a task
  are duplicates), the share that ran without error, and what the failures were (syntax,
  schema, type, runtime, timeout, blocked);
- plans: how many plans there were, how many nodes they had, the tasks where only the
  root of the first plan ran, and the first plans' steps that repeat an `inspect_columns` or
  `run_sql` of their own path (the engine leaves them out since 2026-12-04; for older traces
  they are found by rebuilding the tree from the plan);
- choices: `choose` replies that were not valid (the engine followed the first branch);
- echoes: replies, and candidates, in which the model copied a reason the engine gave for
  dropping a SQL ("(it fails: ...)", "(returns exactly the rows of the user's SQL ...)") into
  its own SQL;
- judge: verdicts, "accept" replies whose reason says the candidate is wrong, those whose
  reason is mostly copied (from the issue, the prompt or a rejection), and "accept" replies
  the engine withdrew because too few candidates agree on the result, and "accept" replies
  whose reason vouches for the user's SQL instead of the candidate;
- outcome: tasks accepted, accepted but failed (wrong acceptances), and tasks whose final SQL
  is the issue SQL itself (whitespace and case aside);
- duplicates: candidates that repeat a SQL of the task, and how many of them repeat one
  already dropped (refused, rejected or failing); replies the local model was steered away
  from a dropped SQL (`steered` of the `llm_call` event), and the forks that took;
- feedback: `generate_sql` steps given the rejected candidates as feedback, and those whose
  feedback starts in the middle of a line (a cut SQL; the engine cut at a character count
  before 97ff839);
- cost: LLM calls and their seconds by purpose, the runaway replies (ones cut at their token
  cap), and the writing rate (tokens per second) of the calls whose prompt was already in the
  KV cache (their seconds are writing: the samples of a pool, mostly), by decoder (`decoder`
  of the `llm_call` event; "unknown" in traces written before it was recorded);
- time per task: wall seconds, LLM seconds, and with ``--prompt-rate P --gen-rate G``
  (tokens/s measured on the same machine, e.g. by `scripts/bench_local_llm.py`) the
  throughput floor, uncached prompt tokens / P + written tokens / G: what the model's calls
  cost at those rates, which prompt lookup and samples from a cached prefix can beat.

Older traces (before candidate pools) have no `candidate` events: their candidates are read
from the statements that `generate_sql` and `split_fix_syntax` nodes executed.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from acts_sql.agent.consistency import endorsement_phrase
from acts_sql.bench.loader import read_trace, stored_trace
from acts_sql.engine.events import EventKind
from acts_sql.engine.tree import PlanTree, PlanValidationError, repair_plan
from acts_sql.protocol import Plan
from acts_sql.tools.registry import TOOLS

CANDIDATE_PURPOSES = {"candidate", "generate_sql", "split_fix_syntax"}


def _norm(sql: str) -> str:
    return " ".join(sql.lower().replace(";", " ").split())


def _jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


_KINDS = (
    ("syntax", ("syntax error", "incomplete input", "unterminated", "unrecognized token")),
    (
        "schema",
        (
            "does not exist",
            "no such column",
            "no such table",
            "unknown column",
            "missing from-clause",
            "ambiguous",
        ),
    ),
    (
        "type",
        (
            "invalid input syntax for type",
            "operator does not exist",
            "cannot cast",
            "datatype mismatch",
            "type",
            "function",
        ),
    ),
)


def _failure_kind(data: dict[str, Any], kinds: dict[str, str]) -> str:
    """timeout, blocked, or the error's kind: the statement event's own (newer traces), else
    read from the engine's message."""
    status = data.get("status")
    said = str(data.get("error") or data.get("reason") or kinds.get(_norm(data.get("sql") or "")))
    if status == "blocked" and "syntax error" in said.lower():
        return "syntax"  # the guard could not parse it: a syntax error found before running
    if status in ("timeout", "blocked"):
        return str(status)
    kind = data.get("error_kind")
    if kind:
        return str(kind)
    known = kinds.get(_norm(data.get("sql") or ""), "")
    if known in ("syntax", "schema", "type", "runtime", "other"):
        return known
    message = (data.get("error") or known or data.get("reason") or "").lower()
    for name, words in _KINDS:
        if any(word in message for word in words):
            return name
    return "runtime"


def _vouches(data: dict[str, Any]) -> bool:
    """A judge reply that says "accept" with a reason vouching for the user's SQL ("already
    correct and does not need any changes"); the engine withdraws such accepts since
    2026-12-04, and this finds them in older traces too."""
    try:
        reply = json.loads(data.get("response") or "")
    except ValueError:
        return False
    if not isinstance(reply, dict) or reply.get("verdict") != "accept":
        return False
    return endorsement_phrase(str(reply.get("reason") or "")) is not None


def task_stats(trace: dict[str, Any]) -> dict[str, Any]:
    events = trace.get("trace") or []
    stats: Counter[str] = Counter()
    usage = trace.get("usage") or {}
    time: Counter[str] = Counter(
        {
            "wall seconds": usage.get("seconds") or 0.0,
            "llm seconds": usage.get("llm_seconds") or 0.0,
            "uncached prompt tokens": (usage.get("prompt_tokens") or 0)
            - (usage.get("cached_prompt_tokens") or 0),
            "written tokens": usage.get("completion_tokens") or 0,
        }
    )
    purposes: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    writing: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    seen: set[str] = set()
    pooled = any(e["kind"] == EventKind.CANDIDATE for e in events)
    plan_nodes: list[int] = []
    started: list[str] = []
    kinds = {  # the statement's own kind (newer traces), else its message to read
        _norm(e["data"].get("sql") or ""): e["data"].get("error_kind") or e["data"]["error"]
        for e in events
        if e["kind"] == EventKind.STATEMENT and (e.get("data") or {}).get("error")
    }
    for event in events:
        kind, data = event["kind"], event.get("data") or {}
        if kind == EventKind.LLM_CALL:
            purposes[event.get("purpose") or "?"] += 1
            seconds[event.get("purpose") or "?"] += data.get("seconds") or 0.0
            if data.get("stopped_by") == "length":
                stats["runaway replies"] += 1
            if data.get("steered"):
                stats["steered replies"] += 1
                stats["forks"] += data["steered"]
            stats["replies with a copied reason"] += bool(_ECHO.search(data.get("response") or ""))
            if event.get("purpose") == "judge":
                stats["judge accepts vouching for the user's SQL"] += _vouches(data)
            _count_writing(writing, data)
        elif kind == EventKind.CANDIDATE and not data.get("duplicate"):
            _count_candidate(stats, failures, seen, data.get("sql") or "", data, kinds)
        elif kind == EventKind.CANDIDATE:
            stats["duplicates"] += 1
            if data.get("verdict") in ("failed", "refused", "rejected"):
                stats["repeats of a dropped SQL"] += 1
        elif (
            kind == EventKind.STATEMENT
            and not pooled
            and event.get("purpose") in CANDIDATE_PURPOSES
        ):
            sql = data.get("sql") or ""
            if _norm(sql) in seen:
                stats["duplicates"] += 1
            else:
                _count_candidate(stats, failures, seen, sql, data, kinds)
        elif kind in (EventKind.PLAN, EventKind.PLAN_FAILED):
            plan = data.get("nodes") or (data.get("plan") or {}).get("nodes") or []
            plan_nodes.append(len(plan))
            if kind == EventKind.PLAN and not data.get("replan"):
                stats["plan steps repeating their path"] += _repeated_steps(data)
        elif kind == EventKind.NODE_STARTED:
            started.append(event.get("node") or "")
        elif kind == EventKind.CHOICE:
            stats["choices"] += 1
        elif kind == EventKind.CHOICE_FAILED:
            stats["choices"] += 1
            stats["invalid choices"] += 1
        elif kind == EventKind.JUDGEMENT and data.get("by") == "agent":
            stats["judge verdicts"] += 1
            stats[f"judge {data.get('verdict')}"] += 1
        elif kind == EventKind.JUDGEMENT and "reason says the candidate is wrong" in (
            event.get("summary") or ""
        ):
            stats["judge verdicts"] += 1
            stats["judge accept contradicted by its reason"] += 1
        elif kind == EventKind.JUDGEMENT and "of its reason is copied" in (
            event.get("summary") or ""
        ):
            stats["judge verdicts"] += 1
            stats["judge accept with a copied reason"] += 1
        elif kind == EventKind.JUDGEMENT and (event.get("summary") or "").startswith(
            "the judge accepted a result only"
        ):
            stats["judge verdicts"] += 1
            stats["judge accept of too few agreeing"] += 1
    _count_feedback(stats, trace.get("tree") or [])
    stats["plans"] = len(plan_nodes)
    stats["plan nodes"] = sum(plan_nodes)
    first_plan = plan_nodes[0] if plan_nodes else 0
    ran_from_plan = [n for n in started if not any(c in n for c in (".", "r."))]
    stats["only the root of the first plan ran"] = int(first_plan > 1 and len(ran_from_plan) <= 1)
    return {
        "counts": stats,
        "purposes": purposes,
        "seconds": seconds,
        "writing": writing,
        "failures": failures,
        "time": time,
    }


def _repeated_steps(data: dict[str, Any]) -> int:
    """Steps of the agent's plan that repeat an evidence step of their own path: what the
    engine leaves out since it does (`repeats` of the event), else rebuilt from the plan."""
    if "repeats" in data:
        return len(data["repeats"])
    try:
        plan = Plan.model_validate(data.get("plan") or {})
        return len(PlanTree.from_plan(repair_plan(plan, TOOLS)[0], TOOLS).repeats)
    except (ValueError, PlanValidationError):
        return 0


FEEDBACK_LINE_STARTS = ("Rejected: ", "(", "This candidate fails: ")
"""How a whole first line of `generate_sql` feedback starts (engine/feedback.py, repairs)."""


def _count_feedback(stats: Counter[str], tree: list[dict[str, Any]]) -> None:
    """`generate_sql` steps given feedback, and those whose feedback starts mid-line."""
    for node in tree:
        feedback = (node.get("input") or {}).get("feedback")
        if node.get("tool") == "generate_sql" and feedback:
            stats["steps with feedback"] += 1
            stats["feedback starting mid-line"] += not feedback.startswith(FEEDBACK_LINE_STARTS)


def _count_writing(writing: Counter[str], data: dict[str, Any]) -> None:
    """Tokens and seconds of a call whose prompt was cached (all but the last token)."""
    prompt, cached = data.get("prompt_tokens") or 0, data.get("cached_prompt_tokens") or 0
    written, took = data.get("completion_tokens") or 0, data.get("seconds") or 0.0
    if prompt and cached >= prompt - 1 and written >= 8 and took > 0:
        decoder = data.get("decoder") or "unknown"
        writing[f"{decoder} tokens"] += written
        writing[f"{decoder} seconds"] += took


_ECHO = re.compile(
    r"\((?:it fails: |returns exactly the rows of the user's SQL|it is the user's SQL"
    r"|the same SQL as the user's)"
)
"""A reason the engine gave for dropping a SQL, copied by the model into its own SQL."""


def _count_candidate(
    stats: Counter[str],
    failures: Counter[str],
    seen: set[str],
    sql: str,
    data: dict[str, Any],
    kinds: dict[str, str],
) -> None:
    seen.add(_norm(sql))
    stats["candidates"] += 1
    stats["candidates with a copied reason"] += bool(_ECHO.search(sql))
    if data.get("status") == "ok":
        stats["candidates that run"] += 1
    else:
        failures[_failure_kind(data, kinds)] += 1


def run_stats(run: Path) -> dict[str, Any]:
    records = {(r["set"], r["instance_id"]): r for r in _jsonl(run / "records.jsonl")}
    totals: Counter[str] = Counter()
    purposes: Counter[str] = Counter()
    seconds: Counter[str] = Counter()
    writing: Counter[str] = Counter()
    failures: Counter[str] = Counter()
    time: Counter[str] = Counter()
    issue_sql = _issue_sql(run)
    for key, record in records.items():
        trace_file = run / (record.get("trace_file") or "")
        if record.get("trace_file") and stored_trace(trace_file) is not None:
            one = task_stats(read_trace(trace_file))
            totals.update(one["counts"])
            purposes.update(one["purposes"])
            seconds.update(one["seconds"])
            writing.update(one["writing"])
            failures.update(one["failures"])
            time.update(one["time"])
            time["tasks"] += 1
        totals["tasks"] += 1
        passed = record.get("status") == "passed"
        totals["passed"] += int(passed)
        if record.get("accepted"):
            totals["accepted"] += 1
            totals["wrong acceptances"] += int(not passed)
        pred = " ".join(record.get("pred_sqls") or [])
        if key in issue_sql and _norm(pred) == issue_sql[key]:
            totals["final SQL is the issue SQL"] += 1
    return {
        "run": run.name,
        "counts": dict(totals),
        "llm calls by purpose": dict(purposes),
        "llm seconds by purpose": {k: round(v, 1) for k, v in seconds.items()},
        "writing with a cached prompt": dict(writing),
        "candidate failures": dict(failures),
        "time": {k: round(v, 1) for k, v in time.items()},
    }


def with_floor(stats: dict[str, Any], prompt_rate: float, gen_rate: float) -> dict[str, Any]:
    """`stats` with the throughput floor of its tasks at these rates (tokens/s)."""
    time = stats["time"]
    floor = time.get("uncached prompt tokens", 0) / prompt_rate + (
        time.get("written tokens", 0) / gen_rate
    )
    return {
        **stats,
        "time": {**time, "floor seconds": round(floor, 1), "rates": [prompt_rate, gen_rate]},
    }


def _issue_sql(run: Path) -> dict[tuple[str, str], str]:
    """(set, id) -> the issue SQL, normalised, from the task files next to the data."""
    data = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "bird-critic" / "tasks"
    found: dict[tuple[str, str], str] = {}
    names = {"flash": "flash", "open570": "open570", "pg530": "pg530", "sqlite500": "sqlite500"}
    for set_name, stem in names.items():
        path = data / f"{stem}.jsonl"
        for task in _jsonl(path):
            found[(set_name, str(task["instance_id"]))] = _norm(" ".join(task["issue_sql"]))
    return found


def render(stats: dict[str, Any]) -> str:
    c = stats["counts"]
    tasks = c.get("tasks", 0) or 1
    cands = c.get("candidates", 0)
    lines = [f"## {stats['run']}", ""]
    rows = [
        ("tasks", c.get("tasks", 0)),
        ("passed", c.get("passed", 0)),
        (
            "accepted / wrong acceptances",
            f"{c.get('accepted', 0)} / {c.get('wrong acceptances', 0)}",
        ),
        ("final SQL is the issue SQL", c.get("final SQL is the issue SQL", 0)),
        ("distinct candidates (per task)", f"{cands} ({cands / tasks:.1f})"),
        (
            "candidates that run",
            f"{c.get('candidates that run', 0)} "
            f"({100 * c.get('candidates that run', 0) / max(cands, 1):.0f} %)",
        ),
        (
            "candidate failures",
            ", ".join(f"{k} {v}" for k, v in sorted(stats["candidate failures"].items())) or "-",
        ),
        (
            "duplicates / of which repeat a dropped SQL",
            f"{c.get('duplicates', 0)} / {c.get('repeats of a dropped SQL', 0)}",
        ),
        (
            "engine reasons copied into SQL: replies / candidates",
            f"{c.get('replies with a copied reason', 0)} / "
            f"{c.get('candidates with a copied reason', 0)}",
        ),
        ("plans / nodes", f"{c.get('plans', 0)} / {c.get('plan nodes', 0)}"),
        (
            "first-plan steps that repeat an inspection of their path (left out since 2026-12-04)",
            c.get("plan steps repeating their path", 0),
        ),
        (
            "tasks where only the first plan's root ran",
            c.get("only the root of the first plan ran", 0),
        ),
        ("invalid choices", f"{c.get('invalid choices', 0)} of {c.get('choices', 0)}"),
        (
            "judge: accept / reject / accept contradicted / accept with a copied reason / "
            "accept of too few agreeing",
            f"{c.get('judge accept', 0)} / {c.get('judge reject', 0)} / "
            f"{c.get('judge accept contradicted by its reason', 0)} / "
            f"{c.get('judge accept with a copied reason', 0)} / "
            f"{c.get('judge accept of too few agreeing', 0)}",
        ),
        (
            'judge "accept" replies vouching for the user\'s SQL (withdrawn since 2026-12-04)',
            c.get("judge accepts vouching for the user's SQL", 0),
        ),
        ("runaway replies (cut at their cap)", c.get("runaway replies", 0)),
        (
            "generate_sql feedback starting mid-line / steps given feedback",
            f"{c.get('feedback starting mid-line', 0)} / {c.get('steps with feedback', 0)}",
        ),
        (
            "replies steered away from a dropped SQL (forks)",
            f"{c.get('steered replies', 0)} ({c.get('forks', 0)})",
        ),
        (
            "LLM calls by purpose",
            ", ".join(f"{k} {v}" for k, v in sorted(stats["llm calls by purpose"].items())),
        ),
        ("LLM seconds by purpose (share)", _shares(stats["llm seconds by purpose"])),
        ("writing rate, prompt cached (tokens/s)", _rates(stats["writing with a cached prompt"])),
        ("seconds per task: wall / LLM / throughput floor", _per_task(stats["time"])),
    ]
    lines += ["| | |", "|---|---|"] + [f"| {k} | {v} |" for k, v in rows]
    return "\n".join(lines) + "\n"


def _shares(seconds: dict[str, float]) -> str:
    total = sum(seconds.values()) or 1.0
    ordered = sorted(seconds.items(), key=lambda kv: -kv[1])
    return ", ".join(f"{k} {v:.0f} s ({100 * v / total:.0f} %)" for k, v in ordered) or "-"


def _per_task(time: dict[str, Any]) -> str:
    tasks = time.get("tasks") or 0
    if not tasks:
        return "-"
    floor = time.get("floor seconds")
    rates = time.get("rates") or []
    shown = (
        f"{floor / tasks:.0f} (at {rates[0]:g} / {rates[1]:g} tokens/s)"
        if floor is not None
        else "- (give --prompt-rate and --gen-rate)"
    )
    return (
        f"{time.get('wall seconds', 0) / tasks:.0f} / {time.get('llm seconds', 0) / tasks:.0f} / "
        f"{shown}; uncached prompt {time.get('uncached prompt tokens', 0) / tasks:.0f}, "
        f"written {time.get('written tokens', 0) / tasks:.0f} tokens"
    )


def _rates(writing: dict[str, float]) -> str:
    decoders = sorted({k.rsplit(" ", 1)[0] for k in writing})
    return (
        ", ".join(
            f"{d} {writing[f'{d} tokens'] / writing[f'{d} seconds']:.1f} "
            f"({writing[f'{d} tokens']:.0f} tokens)"
            for d in decoders
        )
        or "-"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--prompt-rate", type=float, help="cold prompt tokens/s (floor)")
    parser.add_argument("--gen-rate", type=float, help="plain generation tokens/s (floor)")
    args = parser.parse_args()
    if (args.prompt_rate is None) != (args.gen_rate is None):
        parser.error("--prompt-rate and --gen-rate go together")
    if args.prompt_rate is not None and (args.prompt_rate <= 0 or args.gen_rate <= 0):
        parser.error("rates must be positive")
    results = [run_stats(run) for run in args.runs]
    if args.prompt_rate is not None:
        results = [with_floor(r, args.prompt_rate, args.gen_rate) for r in results]
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        sys.stdout.write("\n".join(render(r) for r in results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
