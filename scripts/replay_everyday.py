#!/usr/bin/env python
"""Replay a kept `bench everyday` run through the current code, with no model.

    .venv/bin/python scripts/replay_everyday.py --run results/everyday-local/acts-1.5b-errnote \\
        --out runs/replay-everyday [--method acts] [--pg-url URL]

The everyday suite's counterpart of `scripts/replay_run.py`: every case of ``--run`` that kept
its trace is corrected again with the current code, the recorded options and a scripted
backend that answers each purpose with the replies the model gave in that case, in order
(``replay:<recorded LLM>``). The answer is scored as the bench scores it; ``--out`` gets
``records-<method>.jsonl``, the traces and the report, like a bench run.

A replay is faithful while the new code asks the same questions in the same order; a case
whose LLM calls are not a prefix of the recorded ones is ``diverged`` (its later replies no
longer match their prompts) and is counted apart. Seconds: the recorded time up to the end
of the last call the replay made (the model's time; the engine's own is small), so a change
that ends a run earlier shows what it saves.

Prints one line per case (right, accepted and calls, before -> after) and the totals.
"""

from __future__ import annotations

import argparse
import gzip
import json
import logging
import sys
from collections.abc import Sequence
from contextlib import ExitStack, closing
from pathlib import Path
from typing import Any, NamedTuple

from acts_sql.bench.everyday.cases import select_cases
from acts_sql.bench.everyday.databases import case_databases
from acts_sql.bench.everyday.report import build_report, write_report
from acts_sql.bench.everyday.runner import EverydayRecord, load_records, run_case
from acts_sql.bench.everyday.scoring import gold_result
from acts_sql.db.connect import open_database
from acts_sql.engine.events import EventKind
from acts_sql.engine.options import CorrectionOptions, Method
from acts_sql.llm.scripted import ScriptedBackend

sys.path.insert(0, str(Path(__file__).resolve().parent))
from replay_run import call_purposes, recorded_script


def recorded_events(run: Path, record: EverydayRecord) -> list[dict[str, Any]]:
    if not record.trace_file or not (run / record.trace_file).exists():
        return []
    with gzip.open(run / record.trace_file, "rt", encoding="utf-8") as source:
        return list(json.load(source).get("trace", []))


def recorded_options(events: list[dict[str, Any]]) -> CorrectionOptions:
    started = next(e for e in events if e["kind"] == EventKind.RUN_STARTED)
    return CorrectionOptions.model_validate(started["data"]["options"])


def model_seconds(events: list[dict[str, Any]], calls: int) -> float:
    """The recorded run's time at the end of its `calls`-th LLM call (its whole time when it
    made no more)."""
    ends = [float(e["t"]) for e in events if e["kind"] == EventKind.LLM_CALL]
    if calls >= len(ends):
        return float(events[-1]["t"])
    return ends[calls - 1] if calls > 0 else 0.0


class Replayed(NamedTuple):
    """One case: its kept record, the replay's, and whether the calls diverged."""

    before: EverydayRecord
    after: EverydayRecord
    diverged: bool
    model_seconds: float
    """The recorded model time up to the replay's last call (`model_seconds`)."""


def replay(
    run: Path,
    out: Path,
    method: Method,
    *,
    pg_url: str | None = None,
    dialects: Sequence[str] = (),
) -> list[Replayed]:
    """Every case of `run` under `method` that kept its trace (of `dialects`, all when empty),
    replayed into `out` (records, traces and report, like a bench run)."""
    old = {r.id: r for r in load_records(run, method.value) if r.trace_file}
    cases = select_cases(sorted(old), list(dialects), None)
    out.mkdir(parents=True, exist_ok=True)
    llm = recorded_llm(run)
    done: list[Replayed] = []
    with case_databases(cases, pg_url) as urls, ExitStack() as stack:
        for case in cases:
            executor = stack.enter_context(
                closing(open_database(urls[(case.dialect, case.schema_name)]))
            )
            events = recorded_events(run, old[case.id])
            backend = ScriptedBackend(recorded_script(events), source=str(run))
            backend.name = f"replay:{llm}"
            gold = gold_result(executor.execute(case.gold_sql), case.ordered)
            options = recorded_options(events)
            record = run_case(case, method, gold, executor, backend, options, traces=out)
            made = call_purposes(recorded_events(out, record))
            forked = made != call_purposes(events)[: len(made)]
            seconds = model_seconds(events, record.llm_calls)
            done.append(Replayed(old[case.id], record, forked, seconds))
    new = [r.after for r in done]
    (out / f"records-{method.value}.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in new)
    )
    write_report(out, build_report({method.value: new}, llm=f"replay:{llm}"))
    return done


def totals(done: list[Replayed]) -> dict[str, Any]:
    """Before and after: right, accepted, wrong acceptances, calls, model seconds."""
    was = [r.before for r in done]
    now = [r.after for r in done]
    return {
        "cases": len(done),
        "diverged": sum(r.diverged for r in done),
        "right": [sum(r.right for r in was), sum(r.right for r in now)],
        "accepted": [sum(r.accepted for r in was), sum(r.accepted for r in now)],
        "wrong acceptances": [
            sum(r.accepted and not r.right for r in was),
            sum(r.accepted and not r.right for r in now),
        ],
        "calls": [sum(r.llm_calls for r in was), sum(r.llm_calls for r in now)],
        "model seconds": [
            round(sum(r.seconds for r in was), 1),
            round(sum(r.model_seconds for r in done), 1),
        ],
    }


def main() -> int:
    logging.getLogger("sqlglot").setLevel(logging.ERROR)
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--run", type=Path, required=True, help="a kept bench everyday run")
    parser.add_argument("--out", type=Path, required=True, help="where the replay goes")
    parser.add_argument("--method", default="acts")
    parser.add_argument("--dialect", action="append", default=[], help="only these dialects")
    parser.add_argument("--pg-url", help="a PostgreSQL server for the PostgreSQL cases")
    args = parser.parse_args()
    if args.out.resolve() == args.run.resolve():
        parser.error("--out must differ from --run")
    done = replay(
        args.run, args.out, Method(args.method), pg_url=args.pg_url, dialects=args.dialect
    )
    for r in done:
        print(
            f"{r.after.id}: right {r.before.right}->{r.after.right}, accepted "
            f"{r.before.accepted}->{r.after.accepted}, calls {r.before.llm_calls}->"
            f"{r.after.llm_calls}" + (" (diverged)" if r.diverged else "")
        )
    print(json.dumps(totals(done)), flush=True)
    return 0


def recorded_llm(run: Path) -> str:
    """The LLM the run was made with (its report's), so that the defaults that depend on the
    backend (candidates per pool) are the recorded model's."""
    report = run / "report.json"
    llm = json.loads(report.read_text()).get("llm") if report.exists() else None
    return str(llm or "unknown")


if __name__ == "__main__":
    sys.exit(main())
