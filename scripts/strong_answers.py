#!/usr/bin/env python
"""What the engine's acceptance does with right answers: the development split's solutions
and strong LLMs' published predictions, put through `raw` and `vote` with no model.

    .venv/bin/python scripts/strong_answers.py --out /tmp/strong \\
        [--sqlite 20] [--postgresql 20] [--mysql 0] [--models a,b,...|none] \\
        [--data DIR] [--pg-url URL] [--mysql-url URL]

With the 0.5B almost no candidate passes, so its runs cannot show what the trust rules
(`engine/trust.py`) and the vote do to a right answer. This script hands the engine right
answers, and strong ones that may be wrong, through a scripted backend, on the first N
development tasks of each dialect (``dev/ids.tsv`` order, as `bird_critic_methods.py`
takes them):

- ``gold``: `raw` whose reply is the task's solution. A solution that passes but is not
  accepted is a **false refusal**: a right answer the engine would hand back without the
  flag.
- one run per model under ``example_output/`` (that model's single-turn predictions,
  published with the benchmark; ``--models`` picks some): `raw` whose reply is the
  prediction. Passed, accepted, passed but refused (false refusals), failed but accepted
  (`raw` has no judge: whatever runs and is not refused is accepted).
- ``vote``: `vote` with K = the number of models, whose K samples are the models'
  predictions, in the order given. Whether grouping strong answers by their result and
  taking the majority picks a right one, against the best single model and the tasks where
  any model passes (the oracle). ``vote ties`` counts the tasks where several result
  groups share the most votes (`vote` then returns the first of them), those where a
  passing answer is among the tied groups, and those where the answer returned passes:
  what a better tie-break could gain at most.

Each run is one task at a time into ``--out/<run>/tasks/<set>-<id>`` (resumable: a task done
there is not run again); the script prints one JSON summary. Its output holds the
solutions: keep it out of the repository. Needs a PostgreSQL server for the PostgreSQL tasks
(ACTS_SQL_TEST_PG_URL or --pg-url) and MySQL/MariaDB for the MySQL ones.
"""

from __future__ import annotations

import argparse
import ast
import json
import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from acts_sql.bench.loader import read_trace
from acts_sql.bench.runner import RECORDS, BenchRequest, MethodSpec, run_bench
from acts_sql.bench.scorer import EvalOptions
from acts_sql.bench.selection import TaskFilter
from acts_sql.bench.servers import ServerURLs
from acts_sql.engine.events import EventKind
from acts_sql.engine.options import CorrectionOptions, Method
from acts_sql.llm.scripted import ScriptedBackend

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bird_critic_methods import DEFAULT_DATA, chosen_ids

PREDICTION_FILES = {
    "sqlite500": "sqlite_500.jsonl",
    "pg530": "pg530.jsonl",
    "open570": "open.jsonl",
    "flash": "flash.jsonl",
}
"""The file of each task set in an ``example_output/<model>/`` directory."""

GOLD = "gold"
VOTE = "vote"


def reply(statements: list[str] | None) -> str:
    """A model reply holding each of `statements` in its own ```sql block ("" when there are
    none): `raw` submits each block as one element of ``pred_sqls``, as the benchmark's
    baseline does, so the prediction reaches the evaluator as the list it was."""
    return "\n".join(f"```sql\n{s.strip().rstrip(';')}\n```" for s in statements or [])


def read_predictions(directory: Path) -> dict[str, list[str]]:
    """``set/id`` -> the statements a model predicted, from one ``example_output`` model."""
    found: dict[str, list[str]] = {}
    for set_name, file_name in PREDICTION_FILES.items():
        path = directory / file_name
        if not path.exists():
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                found[f"{set_name}/{row['instance_id']}"] = _statements(row["pred_sqls"])
    return found


def _statements(value: Any) -> list[str]:
    """``pred_sqls`` as a list: the published files hold a list or its Python repr."""
    if isinstance(value, list):
        return [str(s) for s in value]
    parsed = ast.literal_eval(str(value))
    return [str(s) for s in parsed] if isinstance(parsed, list) else [str(parsed)]


def read_solutions(data: Path) -> dict[str, list[str]]:
    """``set/id`` -> the solution's statements, from ``dev/<set>_solutions.jsonl``."""
    found: dict[str, list[str]] = {}
    for path in sorted((data / "dev").glob("*_solutions.jsonl")):
        set_name = path.name.removesuffix("_solutions.jsonl")
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                found[f"{set_name}/{row['instance_id']}"] = list(row["sol_sql"])
    return found


def run_one(
    out: Path, task: str, method: MethodSpec, replies: list[str], data: Path, options: EvalOptions
) -> dict[str, Any] | None:
    """One task of one run, with the scripted `replies`; its record (None if none was written)."""
    where = out / "tasks" / task.replace("/", "-")
    done = _last_record(where)
    if done is not None:
        return done
    run_bench(
        BenchRequest(
            tasks=data / "tasks",
            gt=data / "dev",
            out=where,
            method=method,
            filter=TaskFilter(ids=[task]),
            options=options,
        ),
        backend=ScriptedBackend({"correct": replies}, source=f"{out.name}/{task}"),
    )
    return _last_record(where)


def _trace(out: Path, task: str, record: dict[str, Any]) -> dict[str, Any] | None:
    """The trace of one task's run under `out` (None when the record names none)."""
    name = record.get("trace_file")
    return read_trace(out / "tasks" / task.replace("/", "-") / name) if name else None


def _last_record(where: Path) -> dict[str, Any] | None:
    path = where / RECORDS
    if not path.exists():
        return None
    lines = [line for line in path.read_text().splitlines() if line.strip()]
    return json.loads(lines[-1]) if lines else None


def summary(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """Counts over one run's records: what was accepted, and which right answers were not."""
    rows = list(records)
    evaluable = [r for r in rows if r["status"] != "not_evaluable"]
    passed = [r for r in evaluable if r["status"] == "passed"]
    refused = [r for r in passed if not r["accepted"]]
    return {
        "tasks": len(rows),
        "evaluable": len(evaluable),
        "passed": len(passed),
        "accepted": sum(1 for r in evaluable if r["accepted"]),
        "right acceptances": len(passed) - len(refused),
        "wrong acceptances": sum(1 for r in evaluable if r["accepted"] and r["status"] != "passed"),
        "right but not accepted": {
            f"{r['set']}/{r['instance_id']}": r["stop_reason"][:200] for r in refused
        },
    }


def oracle(runs: dict[str, dict[str, dict[str, Any]]]) -> int:
    """Tasks that at least one of `runs` (run -> task -> record) passes."""
    tasks = {task for records in runs.values() for task in records}
    return sum(
        1
        for task in tasks
        if any(records.get(task, {}).get("status") == "passed" for records in runs.values())
    )


def tied_groups(trace: dict[str, Any], passed: list[bool]) -> tuple[bool, bool] | None:
    """Where a vote's largest result groups tie: (a passing answer is among them, the answer
    returned is one that passes); None when one group has the most votes, or none runs.

    `passed` says for each sample, in the order they were drawn, whether that answer passes
    on its own (its model's `raw` run). Votes are counted as the vote counts them: refused
    samples cast none."""
    draws = [
        e for e in trace["trace"] if e["kind"] in (EventKind.CANDIDATE, EventKind.CANDIDATE_MISSING)
    ]
    passing: dict[str, bool] = {}
    for ok, event in zip(passed, draws, strict=True):
        if event["kind"] == EventKind.CANDIDATE:
            name = event["data"]["candidate"]
            passing[name] = passing.get(name, False) or ok
    votes: dict[str, int] = {}
    for candidate in trace["candidates"]:
        if candidate["group"] is not None and candidate["verdict"] != "refused":
            votes[candidate["group"]] = votes.get(candidate["group"], 0) + candidate["votes"]
    top = max(votes.values(), default=0)
    tied = {group for group, count in votes.items() if count == top}
    if top == 0 or len(tied) < 2:
        return None
    members = [c for c in trace["candidates"] if c["group"] in tied and c["verdict"] != "refused"]
    returned = [c for c in members if " ".join(c["sql"].split()) == " ".join(trace["sql"].split())]
    return (
        any(passing.get(c["id"], False) for c in members),
        any(passing.get(c["id"], False) for c in returned),
    )


def tie_summary(ties: Iterable[tuple[bool, bool] | None]) -> dict[str, int]:
    found = [tie for tie in ties if tie is not None]
    return {
        "tasks": len(found),
        "a passing answer among the tied groups": sum(1 for among, _ in found if among),
        "the answer returned passes": sum(1 for _, returned in found if returned),
    }


def main() -> int:
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sqlite", type=int, default=20, metavar="N")
    parser.add_argument("--postgresql", type=int, default=20, metavar="N")
    parser.add_argument("--mysql", type=int, default=0, metavar="N")
    parser.add_argument(
        "--models", help="comma-separated example_output models (default: all; none: gold only)"
    )
    parser.add_argument("--pg-url")
    parser.add_argument("--mysql-url")
    args = parser.parse_args()
    counts = {"SQLite": args.sqlite, "PostgreSQL": args.postgresql, "MySQL": args.mysql}
    if any(n < 0 for n in counts.values()):
        parser.error("task counts must not be negative")
    tasks = chosen_ids(args.data, {d: n for d, n in counts.items() if n > 0})
    examples = args.data / "example_output"
    available = (
        sorted(p.name for p in examples.iterdir() if p.is_dir()) if examples.exists() else []
    )
    models = available if not args.models else [m for m in args.models.split(",") if m != "none"]
    unknown = [m for m in models if m not in available]
    if unknown:
        parser.error(f"no example_output for {', '.join(unknown)} (there are: {available})")
    options = EvalOptions(workers=1, servers=ServerURLs.resolve(args.pg_url, args.mysql_url))
    answers = {GOLD: read_solutions(args.data)}
    answers |= {m: read_predictions(examples / m) for m in models}
    one = MethodSpec(
        llm="scripted", options=CorrectionOptions.of(method=Method.RAW, max_llm_calls=2)
    )
    runs: dict[str, dict[str, dict[str, Any]]] = {}
    for name, given in answers.items():
        runs[name] = {}
        for task in tasks:
            record = run_one(
                args.out / name, task, one, [reply(given.get(task))], args.data, options
            )
            if record is not None:
                runs[name][task] = record
        print(f"{name}: {len(runs[name])} tasks", file=sys.stderr, flush=True)
    voted: dict[str, dict[str, Any]] = {}
    ties: list[tuple[bool, bool] | None] = []
    if len(models) > 1:
        vote = CorrectionOptions.of(
            method=Method.VOTE, candidates=len(models), max_llm_calls=len(models)
        )
        pool = MethodSpec(llm="scripted", options=vote)
        for task in tasks:
            replies = [reply(answers[m].get(task)) for m in models]
            record = run_one(args.out / VOTE, task, pool, replies, args.data, options)
            if record is not None:
                voted[task] = record
                trace = _trace(args.out / VOTE, task, record)
                passed = [runs[m].get(task, {}).get("status") == "passed" for m in models]
                ties.append(tied_groups(trace, passed) if trace is not None else None)
    report: dict[str, Any] = {"tasks": len(tasks), "models": models}
    report |= {name: summary(records.values()) for name, records in runs.items()}
    if voted:
        report[VOTE] = summary(voted.values())
        report["vote ties"] = tie_summary(ties)
        report["any model passes"] = oracle({m: runs[m] for m in models})
        report["best single model"] = max((report[m]["passed"], m) for m in models)
    print(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
