#!/usr/bin/env python
"""Replay a recorded benchmark run through the current code, with no model.

    .venv/bin/python scripts/replay_run.py --run runs/dev40/raw-0.5b --out runs/replay/raw-0.5b \\
        [--data DIR] [--pg-url URL] [--mysql-url URL]

A local-model run takes hours; a change to what the engine does with the
model's replies (the trust rules, the vote, the ranking) should not. Every
task of ``--run`` (a ``bench bird-critic`` output directory) is run again
with the current code and the same method, budgets and task, on a scripted
backend that answers each purpose with the replies the model gave in that
task's trace, in order. Each task is replayed into ``--out/tasks/<set>-<id>``
(a task done there is not replayed again), and ``--out/records.jsonl`` and
``preds.jsonl`` gather them, so ``--out`` reads like any run for `bench
compare` and `bench candidates`. The script prints, per task, whether the
verdict or the accepted flag changed.

A replay is faithful only while the new code asks the same questions in the
same order. The script compares the purposes of the LLM calls of both runs;
a task where they differ is reported as ``diverged`` (its replayed answers
then no longer match their prompts), and counted apart in the summary.
The scripted backend is named ``replay:<recorded LLM>``, so the defaults that
depend on the backend (candidates per pool) are those of the recorded model.
Seconds in the replay measure the engine, not the model.

`replay_answer` replays one task in the calling process on a shared evaluator,
writing and scoring nothing (tests/bench/test_replay_kept_runs.py replays the
kept runs with it).
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any, NamedTuple

from acts_sql.api import correct
from acts_sql.bench.errors import EvaluatorSetupError
from acts_sql.bench.loader import read_jsonl, read_trace, stored_trace
from acts_sql.bench.models import ScoredTask
from acts_sql.bench.prepare import open_agent_executor, prepare_database
from acts_sql.bench.runner import (
    PREDICTIONS,
    RECORDS,
    BenchRecord,
    BenchRequest,
    MethodSpec,
    run_bench,
)
from acts_sql.bench.scorer import EvalOptions, Evaluator
from acts_sql.bench.selection import TaskFilter
from acts_sql.bench.servers import ServerURLs
from acts_sql.engine.events import EventKind
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.result import CorrectionResult
from acts_sql.llm.base import LLMBackend
from acts_sql.llm.scripted import ScriptedBackend

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "bird-critic"
BUDGETS = ("max_llm_calls", "max_nodes", "max_depth", "max_seconds")


def load_records(run: Path) -> list[dict[str, Any]]:
    path = run / RECORDS
    if not path.exists():
        raise SystemExit(f"{run}: no {RECORDS} (not a bench bird-critic output directory)")
    latest = {(r["set"], r["instance_id"]): r for _, r in read_jsonl(path)}  # resumed: last line
    return list(latest.values())


def trace_events(run: Path, record: dict[str, Any]) -> list[dict[str, Any]]:
    name = record.get("trace_file")
    if not name or stored_trace(run / name) is None:
        return []
    return list(read_trace(run / name).get("trace", []))


def recorded_script(events: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The model's replies per purpose, in the order they were given."""
    script: dict[str, list[str]] = defaultdict(list)
    for event in events:
        if event["kind"] == EventKind.LLM_CALL and event["data"].get("ok"):
            script[event["purpose"]].append(str(event["data"].get("response") or ""))
    return dict(script)


def call_purposes(events: list[dict[str, Any]]) -> list[tuple[str, bool]]:
    """Each LLM call's purpose and whether it was answered."""
    return [
        (e["purpose"], bool(e["data"].get("ok"))) for e in events if e["kind"] == EventKind.LLM_CALL
    ]


def method_of(record: dict[str, Any], events: list[dict[str, Any]]) -> MethodSpec:
    """The recorded run's method, switches and budgets (from its `run_started` options)."""
    options: dict[str, Any] = {}
    started = next((e for e in events if e["kind"] == EventKind.RUN_STARTED), None)
    if started is not None:
        options = started["data"].get("options") or {}
    budget = options.get("budget") or options
    fields: dict[str, Any] = {k: budget[k] for k in BUDGETS if budget.get(k) is not None}
    for switch in ("execution_tools", "ambiguity_detection"):
        if options.get(switch) is not None:
            fields[switch] = options[switch]
    correction = CorrectionOptions.of(
        method=record["method"],
        candidates=record.get("candidates"),
        temperature=record.get("temperature"),
        **fields,
    )
    return MethodSpec(llm=record.get("llm"), options=correction)


def task_dir(set_name: str, instance_id: object) -> Path:
    return Path("tasks") / f"{set_name}-{instance_id}"


def replay_backend(run: Path, record: dict[str, Any], events: list[dict[str, Any]]) -> LLMBackend:
    """A scripted backend answering with the task's recorded replies, named
    ``replay:<recorded LLM>`` so that the recorded model's defaults (candidates per pool)
    hold in the replay too."""
    backend = ScriptedBackend(recorded_script(events), source=f"{run}/{record['trace_file']}")
    backend.name = f"replay:{record.get('llm') or 'unknown'}"
    return backend


class Answer(NamedTuple):
    """A task replayed in this process: the engine's result and whether its LLM calls
    differ from the recording's (`call_purposes`)."""

    result: CorrectionResult
    diverged: bool


def replay_answer(
    run: Path, record: dict[str, Any], item: ScoredTask, evaluator: Evaluator
) -> Answer | None:
    """One task of `run` replayed on a fresh database from `evaluator`'s servers, as `run_bench`
    prepares it, writing nothing and scoring nothing (None: no trace to replay). Faster than
    `replay_task` for many tasks: one evaluator serves them all, and the caller scores only
    what it needs (`prediction_of`). EvaluatorSetupError when the task's dialect has no server."""
    events = trace_events(run, record)
    if not events:
        return None
    task = item.task
    factory = evaluator.factory(task.dialect)
    if factory is None:
        raise EvaluatorSetupError(f"no {task.dialect} server to replay {task.instance_id} on")
    prepared = prepare_database(factory, task, evaluator.options.now)
    try:
        executor = open_agent_executor(prepared.url)
        try:
            result = correct(
                executor,
                task.query,
                ";\n".join(task.issue_sql) or None,
                llm=replay_backend(run, record, events),
                options=method_of(record, events).options,
            )
        finally:
            executor.close()
    finally:
        prepared.drop()
    replayed = [event.model_dump(mode="json") for event in result.trace]
    return Answer(result, call_purposes(replayed) != call_purposes(events))


def prediction_of(result: CorrectionResult) -> list[str]:
    """The statements a benchmark record gives as the prediction (as `run_bench` does)."""
    return list(result.statements) or ([result.sql] if result.sql.strip() else [])


def replay_task(
    run: Path, out: Path, record: dict[str, Any], data: Path, options: EvalOptions
) -> tuple[BenchRecord | None, bool]:
    """One task replayed into its own directory; (its new record, whether the calls diverged).

    The record's ``trace_file`` is made relative to `out`."""
    events = trace_events(run, record)
    if not events:
        return None, True
    where = task_dir(record["set"], record["instance_id"])
    run_bench(
        BenchRequest(
            tasks=data / "tasks",
            gt=data / "dev",
            out=out / where,
            method=method_of(record, events),
            filter=TaskFilter(ids=[f"{record['set']}/{record['instance_id']}"]),
            options=options,
        ),
        backend=replay_backend(run, record, events),
    )
    done = load_records(out / where)
    if not done:
        return None, True
    new = BenchRecord.model_validate(done[-1])
    replayed = trace_events(out / where, done[-1])
    if new.trace_file:
        new.trace_file = str(where / new.trace_file)
    return new, call_purposes(replayed) != call_purposes(events)


def gather(out: Path, records: list[BenchRecord]) -> None:
    """`out`'s records.jsonl and preds.jsonl: every replayed task, in the order given."""
    (out / RECORDS).write_text("".join(r.model_dump_json() + "\n" for r in records))
    lines: list[str] = []
    for record in records:
        preds = out / task_dir(record.set, record.instance_id) / PREDICTIONS
        if preds.exists():
            lines += [line for line in preds.read_text().splitlines() if line.strip()]
    (out / PREDICTIONS).write_text("".join(line + "\n" for line in lines))


def _shown(verdict: tuple[str, bool]) -> str:
    return f"{verdict[0]}, accepted={verdict[1]}"


def main() -> int:
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a recorded run directory")
    parser.add_argument("--out", type=Path, required=True, help="where the replay goes")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--pg-url")
    parser.add_argument("--mysql-url")
    args = parser.parse_args()
    if args.out.resolve() == args.run.resolve():
        parser.error("--out must differ from --run")
    options = EvalOptions(workers=1, servers=ServerURLs.resolve(args.pg_url, args.mysql_url))
    counts: dict[str, int] = defaultdict(int)
    replayed: list[BenchRecord] = []
    for old in sorted(load_records(args.run), key=lambda r: (r["set"], r["instance_id"])):
        new, diverged = replay_task(args.run, args.out, old, args.data, options)
        name = f"{old['set']}/{old['instance_id']}"
        if new is None:
            print(f"{name}: no trace to replay", flush=True)
            counts["no trace"] += 1
            continue
        was = (old["status"], bool(old["accepted"]))
        now = (new.status.value, new.accepted)
        change = "same" if was == now else f"{_shown(was)} -> {_shown(now)}"
        print(f"{name}: {change}" + (" (diverged)" if diverged else ""), flush=True)
        replayed.append(new)
        counts["diverged" if diverged else "replayed"] += 1
        counts["accepted before"] += was[1]
        counts["accepted now"] += now[1]
        counts["wrongly accepted before"] += was[1] and was[0] != "passed"
        counts["wrongly accepted now"] += now[1] and now[0] != "passed"
        counts["passed before"] += was[0] == "passed"
        counts["passed now"] += now[0] == "passed"
    gather(args.out, replayed)
    print(json.dumps(dict(counts)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
