#!/usr/bin/env python
"""How much the witness of text-to-SQL mode (`acts_sql.engine.witness`) is worth on the log tasks.

    .venv/bin/python scripts/witness_agreement.py OUT --llm local:qwen2.5-coder-0.5b
        [--seeds 1] [--temperature 0.8] [--ids L01,L02]

For each log task (`acts-sql bench logs`): the first query, written as text-to-query mode
writes it (the text-to-SQL prompt, greedy), and one generation per seed from the same prompt
at the temperature (the witness is the one with seed 1), each run on the log database and
scored against the gold result. Records go to OUT/records.jsonl (re-running skips the tasks
done). Printed: how often the first query is right, how often the first seed's generation
returns the first query's result, how often that result is right, and how many of those the
evidence gate could accept (a shape check passes and none fails).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from acts_sql.api import correct
from acts_sql.bench.logs.runner import LANGUAGE, LogsBenchRequest, ensure_database
from acts_sql.bench.logs.scoring import equivalent
from acts_sql.bench.logs.tasks import gold_results, select_tasks
from acts_sql.cli.app import make_backend
from acts_sql.db.connect import open_database
from acts_sql.db.language import with_language
from acts_sql.engine.evidence import WITNESS_SEED
from acts_sql.engine.fingerprint import result_shape
from acts_sql.engine.options import DEFAULT_TEMPERATURE, CorrectionOptions, Method
from acts_sql.engine.result_checks import failed, passed, shape_checks
from acts_sql.llm.base import LLMRequest, LLMResponse


class _Sampled:
    """The backend, with the text-to-SQL call sampled at `temperature` with `seed`."""

    def __init__(self, inner: Any, temperature: float, seed: int | None) -> None:
        self.inner, self.temperature, self.seed = inner, temperature, seed

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def complete(self, request: LLMRequest) -> LLMResponse:
        if request.purpose == "generate_sql" and self.temperature > 0:
            update = {"temperature": self.temperature, "seed": self.seed}
            request = request.model_copy(update=update)
        return self.inner.complete(request)


def _generation(
    executor: Any, backend: Any, question: str, gold: Any, seed: int | None, temperature: float
) -> dict[str, Any]:
    options = CorrectionOptions.of(method="raw", parallel=1, max_llm_calls=1)
    llm = _Sampled(backend, temperature if seed is not None else 0.0, seed)
    query = correct(executor, question, None, llm=llm, options=options).original_sql
    result = executor.execute(query) if query.strip() else None
    shape = result_shape(query, result, executor.dialect) if result is not None else None
    checks = shape_checks(question, result) if result is not None and result.ok else []
    return {
        "seed": seed,
        "query": query,
        "ok": bool(result and result.ok),
        "passed": bool(result and result.ok and not result.truncated
                       and equivalent(result.rows, gold)),
        "fp": shape.fingerprint if shape else None,
        "checks_pass": bool(passed(checks)) and not failed(checks),
    }  # fmt: skip


def _summary(records: list[dict[str, Any]]) -> str:
    first_right = sum(r["gens"][0]["passed"] for r in records)
    agree = [r for r in records if r["gens"][0]["fp"] and r["gens"][1]["fp"] == r["gens"][0]["fp"]]
    gate = [r for r in agree if r["gens"][0]["checks_pass"]]
    return (
        f"{len(records)} tasks; first query right {first_right}; the witness returns its result "
        f"{len(agree)} (right {sum(r['gens'][0]['passed'] for r in agree)}); of those a shape "
        f"check passes {len(gate)} (right {sum(r['gens'][0]['passed'] for r in gate)})"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--llm", required=True)
    parser.add_argument("--seeds", default=str(WITNESS_SEED))
    parser.add_argument("--temperature", type=float, default=DEFAULT_TEMPERATURE)
    parser.add_argument("--ids", default="")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    request = LogsBenchRequest(
        out=args.out, methods=[Method.RAW], ids=[i for i in args.ids.split(",") if i]
    )
    executor = with_language(open_database(f"duckdb:///{ensure_database(request)}"), LANGUAGE)
    tasks = select_tasks(request.ids, None)
    gold = gold_results(executor, tasks)
    backend = make_backend(args.llm, {}, cache=None)
    seeds = [int(s) for s in args.seeds.split(",")]
    path = args.out / "records.jsonl"
    records = [json.loads(line) for line in path.open()] if path.exists() else []
    done = {r["id"] for r in records}
    for task in tasks:
        if task.id in done:
            continue
        gens = [_generation(executor, backend, task.question, gold[task.id], seed, args.temperature)
                for seed in [None, *seeds]]  # fmt: skip
        record = {"id": task.id, "category": task.category, "gens": gens}
        with path.open("a", encoding="utf-8") as sink:
            sink.write(json.dumps(record) + "\n")
        records.append(record)
        print(task.id, "".join("R" if g["passed"] else "x" if g["ok"] else "." for g in gens),
              flush=True)  # fmt: skip
    print(_summary(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
