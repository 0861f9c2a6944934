#!/usr/bin/env python
"""Several correction methods on the same development tasks, side by side.

    .venv/bin/python scripts/bird_critic_methods.py --out runs/local-0.5b \\
        [--llm local:] [--methods raw,linear,acts] [--sqlite 10] [--postgresql 10] \\
        [--mysql 0] [--max-seconds 600] [--max-llm-calls 40] [--data DIR]

Takes the first N development tasks of each dialect (``dev/ids.tsv`` order,
SQLite from sqlite500, PostgreSQL from pg530, MySQL from open570), runs every
method on them with the same backbone (`acts-sql bench bird-critic`, one
output directory per method: resumable, interrupt and re-run at will), then
writes ``--out/comparison.md`` (`acts-sql bench compare`, against ``raw``).
Needs a PostgreSQL server for the PostgreSQL tasks (ACTS_SQL_BENCH_PG_URL or
ACTS_SQL_TEST_PG_URL, or --pg-url).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acts_sql.bench.compare import compare, load_run, write_comparison
from acts_sql.bench.loader import load_dev_ids
from acts_sql.bench.runner import BenchRequest, MethodSpec, run_bench
from acts_sql.bench.scorer import EvalOptions
from acts_sql.bench.selection import TaskFilter
from acts_sql.bench.servers import ServerURLs
from acts_sql.engine.options import Method
from acts_sql.llm.spec import parse_llm_spec

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "bird-critic"
SOURCE_SET = {"SQLite": "sqlite500", "PostgreSQL": "pg530", "MySQL": "open570"}


def chosen_ids(data: Path, counts: dict[str, int]) -> list[str]:
    """``set/id`` of the first N development tasks of each dialect."""
    ids: list[str] = []
    for dialect, count in counts.items():
        entries = [
            e
            for e in load_dev_ids(data / "dev")
            if e.dialect == dialect and e.set == SOURCE_SET[dialect]
        ]
        ids += [f"{e.set}/{e.instance_id}" for e in entries[:count]]
    return ids


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--llm", default="local:")
    parser.add_argument("--methods", default="raw,linear,acts")
    parser.add_argument("--sqlite", type=int, default=10)
    parser.add_argument("--postgresql", type=int, default=10)
    parser.add_argument("--mysql", type=int, default=0)
    parser.add_argument("--max-seconds", type=float, default=600.0)
    parser.add_argument("--max-llm-calls", type=int, default=40)
    parser.add_argument("--pg-url")
    parser.add_argument("--mysql-url")
    args = parser.parse_args()

    counts = {"SQLite": args.sqlite, "PostgreSQL": args.postgresql, "MySQL": args.mysql}
    ids = chosen_ids(args.data, {d: n for d, n in counts.items() if n > 0})
    backend = parse_llm_spec(args.llm)
    options = EvalOptions(workers=1, servers=ServerURLs.resolve(args.pg_url, args.mysql_url))
    runs = []
    for name in [m.strip() for m in args.methods.split(",") if m.strip()]:
        spec = MethodSpec(
            method=Method(name.split("-")[0]),
            llm=args.llm,
            execution_tools="no-exec" not in name,
            ambiguity_detection="no-ambiguity" not in name,
            max_seconds=args.max_seconds,
            max_llm_calls=args.max_llm_calls,
        )
        out = args.out / spec.label
        print(f"== {spec.label} on {len(ids)} tasks -> {out}", flush=True)

        def progress(record, label=spec.label):
            print(
                f"{label} {record.set}/{record.instance_id}: {record.status.value} "
                f"({record.llm_calls} calls, {record.seconds:.0f} s)",
                flush=True,
            )

        report = run_bench(
            BenchRequest(
                tasks=args.data / "tasks",
                gt=args.data / "dev",
                out=out,
                method=spec,
                filter=TaskFilter(ids=ids),
                options=options,
            ),
            backend=backend,
            on_record=progress,
        )
        t = report.overall
        print(f"{spec.label}: {t.passed}/{t.evaluable} passed", flush=True)
        runs.append(load_run(out))
    comparison = compare(runs, baseline="raw")
    write_comparison(args.out, comparison)
    sys.stdout.write((args.out / "comparison.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
