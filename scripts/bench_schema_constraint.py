"""The share of raw rewrites that execute, written with and without the schema constraint.

For each everyday case (``acts_sql.bench.everyday``; a selection with --ids, --dialect,
--limit) the raw single-call rewrite (`agent/single_call.py raw_correction`, the BIRD-CRITIC
baseline prompt) is written twice by the same model: freely, and with the request's
``sql_names`` (the schema's tables and columns; a local model then holds its identifiers to
them, `acts_sql.llm.local.constraint`). Optionally `--samples` more candidates at a
temperature, as the pools draw them. Each candidate's statement is run on the case's
database; the script prints, per case and in total, how many candidates execute before and
after, and how many tokens the constraint refused.

Loads a local model: run it under the machine's model lock, e.g.

    flock /tmp/acts-model.lock .venv/bin/python scripts/bench_schema_constraint.py \\
        --llm local:qwen2.5-coder-1.5b --dialect sqlite --limit 4
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from contextlib import ExitStack, closing
from dataclasses import dataclass, field
from typing import Any

from acts_sql.agent.single_call import raw_correction
from acts_sql.bench.everyday.cases import EverydayCase, select_cases
from acts_sql.bench.everyday.databases import case_databases
from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.runner import _task, constraint_names
from acts_sql.llm.base import LLMBackend, LLMRequest, LLMResponse, SqlNames
from acts_sql.llm.models import DEFAULT_LOCAL_MODEL
from acts_sql.llm.spec import parse_llm_spec

SAMPLE_TEMPERATURE = 0.8


class WithNames:
    """A backend whose every request carries `names` (the engine's TracedLLM does the same
    for the requests that write SQL)."""

    def __init__(self, inner: LLMBackend, names: SqlNames) -> None:
        self.inner = inner
        self.name = inner.name
        self.names = names

    def complete(self, request: LLMRequest) -> LLMResponse:
        return self.inner.complete(request.model_copy(update={"sql_names": self.names}))


@dataclass
class Tally:
    candidates: int = 0
    execute: int = 0
    refused_tokens: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)


def _candidates(llm: Any, task: Any, samples: int) -> list[tuple[str, int]]:
    """(SQL, refused tokens) of the greedy rewrite and `samples` sampled ones."""
    out = []
    for index in range(samples + 1):
        temperature, seed = (0.0, None) if index == 0 else (SAMPLE_TEMPERATURE, index)
        statements, response = raw_correction(llm, task, temperature=temperature, seed=seed)
        out.append((statements[-1] if statements else "", response.usage.refused_tokens))
    return out


def _measure(
    case: EverydayCase, executor: Executor, backend: LLMBackend, samples: int, tallies: dict
) -> None:
    options = CorrectionOptions()
    task = _task(executor, case.question, case.wrong_sql, options)
    names = constraint_names(task, options)
    assert names is not None, f"{case.id}: the schema's names are unknown"
    for label, llm in (("free", backend), ("constrained", WithNames(backend, names))):
        tally = tallies[label]
        for index, (sql, refused) in enumerate(_candidates(llm, task, samples)):
            ok = bool(sql) and executor.execute(sql).ok
            tally.candidates += 1
            tally.execute += int(ok)
            tally.refused_tokens += refused
            row = {"case": case.id, "candidate": index, "ok": ok, "refused": refused, "sql": sql}
            tally.rows.append(row)
            print(
                f"{case.id} {label:<11} #{index}: {'runs ' if ok else 'FAILS'} "
                f"(refused {refused}) {' '.join(sql.split())[:110]}",
                flush=True,
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--llm", default=f"local:{DEFAULT_LOCAL_MODEL}")
    parser.add_argument("--ids", default="", help="comma-separated case ids")
    parser.add_argument("--dialect", action="append", default=[])
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--samples", type=int, default=0, help="sampled rewrites per case")
    parser.add_argument("--pg-url", default=os.environ.get("ACTS_SQL_TEST_PG_URL"))
    parser.add_argument("--json", default=None, help="write every candidate here")
    args = parser.parse_args(argv)
    ids = [i.strip() for i in args.ids.split(",") if i.strip()]
    cases = select_cases(ids, args.dialect, args.limit)
    backend = parse_llm_spec(args.llm)
    tallies = {"free": Tally(), "constrained": Tally()}
    with case_databases(cases, args.pg_url) as urls, ExitStack() as stack:
        executors = {k: stack.enter_context(closing(open_database(u))) for k, u in urls.items()}
        for case in cases:
            executor = executors[(case.dialect, case.schema_name)]
            _measure(case, executor, backend, args.samples, tallies)
    for label, tally in tallies.items():
        share = 100.0 * tally.execute / max(tally.candidates, 1)
        print(
            f"{label}: {tally.execute}/{tally.candidates} candidates execute ({share:.0f} %), "
            f"{tally.refused_tokens} tokens refused"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as sink:
            json.dump({k: t.rows for k, t in tallies.items()}, sink, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
