#!/usr/bin/env python
"""Several correction methods on the same development tasks, side by side.

    .venv/bin/python scripts/bird_critic_methods.py --out runs/local-0.5b \\
        [--llm local:] [--methods raw,critic,dac,maplerepair,linear,acts] \\
        [--sqlite 10] [--postgresql 10] \\
        [--mysql 0] [--offset-sqlite 0] [--offset-postgresql 0] [--offset-mysql 0] \\
        [--candidates K] [--temperature T] [--label SUFFIX] \\
        [--max-seconds 600] [--max-llm-calls 40] [--data DIR] [--no-candidates]

Takes N development tasks of each dialect (``dev/ids.tsv`` order, from the
``--offset-*``-th on; SQLite from sqlite500, PostgreSQL from pg530, MySQL from
open570), runs every method on them with the same backbone (`acts-sql bench
bird-critic`, one output directory per method: ``--out/<method>[-<label>]``,
resumable, interrupt and re-run at will), scores every candidate of each run
(`acts-sql bench candidates`, also resumable), then writes
``--out/comparison.md`` (`acts-sql bench compare` over every run directory in
``--out``, named by directory, correct→broken against this invocation's
``raw`` run when there is one, else the directory ``raw``).

The paper's Table 3 columns are ``--methods raw,critic,dac,maplerepair,linear,acts``
("No critic", "LLM critic", DAC, MapleRepair, and the tree without and with
branching). A method name is a `Method` value, optionally with the ablation suffixes
``-no-exec`` and ``-no-ambiguity``. ``--label`` keeps variants apart: run once
with ``--llm local:qwen2.5-coder-0.5b --label 0.5b`` and once with the 1.5B
model and ``--label 1.5b`` into the same ``--out`` and both ``acts`` runs
appear in one comparison. Use the offsets to tune on other tasks than the
reported ones. Needs a PostgreSQL server for the PostgreSQL tasks
(ACTS_SQL_BENCH_PG_URL or ACTS_SQL_TEST_PG_URL, or --pg-url).
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
from pathlib import Path
from typing import Any

from acts_sql.bench.candidates import CandidatesRequest, score_candidates
from acts_sql.bench.compare import compare, load_run, write_comparison
from acts_sql.bench.loader import load_dev_ids
from acts_sql.bench.runner import RECORDS, BenchRequest, MethodSpec, run_bench
from acts_sql.bench.scorer import EvalOptions
from acts_sql.bench.selection import TaskFilter
from acts_sql.bench.servers import ServerURLs
from acts_sql.engine.options import CorrectionOptions, Method
from acts_sql.llm.spec import parse_llm_spec

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "bird-critic"
SOURCE_SET = {"SQLite": "sqlite500", "PostgreSQL": "pg530", "MySQL": "open570"}
ABLATIONS = {"no-exec": "execution_tools", "no-ambiguity": "ambiguity_detection"}
_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def chosen_ids(
    data: Path, counts: dict[str, int], offsets: dict[str, int] | None = None
) -> list[str]:
    """``set/id`` of N development tasks of each dialect, from its offset on."""
    offsets = offsets or {}
    ids: list[str] = []
    entries = load_dev_ids(data / "dev")
    for dialect, count in counts.items():
        mine = [e for e in entries if e.dialect == dialect and e.set == SOURCE_SET[dialect]]
        start = offsets.get(dialect, 0)
        ids += [f"{e.set}/{e.instance_id}" for e in mine[start : start + count]]
    return ids


def method_spec(name: str, llm: str | None = None, **fields: Any) -> MethodSpec:
    """The spec of a method name such as ``acts``, ``vote`` or ``acts-no-exec-no-ambiguity``."""
    base = name
    switches: dict[str, bool] = {}
    changed = True
    while changed:
        changed = False
        for suffix, field in ABLATIONS.items():
            if base.endswith("-" + suffix):
                base = base[: -len(suffix) - 1]
                switches[field] = False
                changed = True
    try:
        method = Method(base)
    except ValueError:
        known = ", ".join(m.value for m in Method)
        raise SystemExit(f"unknown method {name!r} (methods: {known})") from None
    return MethodSpec(llm=llm, options=CorrectionOptions.of(method=method, **switches, **fields))


def main() -> int:
    logging.getLogger("sqlglot").setLevel(logging.ERROR)  # "unsupported syntax" noise
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--llm", default="local:")
    parser.add_argument("--methods", default="raw,linear,acts")
    parser.add_argument("--sqlite", type=int, default=10)
    parser.add_argument("--postgresql", type=int, default=10)
    parser.add_argument("--mysql", type=int, default=0)
    parser.add_argument("--offset-sqlite", type=int, default=0, metavar="N")
    parser.add_argument("--offset-postgresql", type=int, default=0, metavar="N")
    parser.add_argument("--offset-mysql", type=int, default=0, metavar="N")
    parser.add_argument("--candidates", type=int, default=None, metavar="K")
    parser.add_argument("--temperature", type=float, default=None, metavar="T")
    parser.add_argument(
        "--label", default="", help="suffix of the output directories: <method>-<label>"
    )
    parser.add_argument("--max-seconds", type=float, default=600.0)
    parser.add_argument("--max-llm-calls", type=int, default=40)
    parser.add_argument("--workers", type=int, default=1, help="tasks scored in parallel")
    parser.add_argument("--no-candidates", action="store_true", help="skip scoring every candidate")
    parser.add_argument("--pg-url")
    parser.add_argument("--mysql-url")
    args = parser.parse_args()
    if args.label and not _LABEL.match(args.label):
        parser.error("--label: letters, digits, '.', '_' and '-' only")
    if args.candidates is not None and args.candidates < 1:
        parser.error("--candidates must be at least 1")
    if args.temperature is not None and args.temperature < 0:
        parser.error("--temperature must not be negative")

    counts = {"SQLite": args.sqlite, "PostgreSQL": args.postgresql, "MySQL": args.mysql}
    offsets = {
        "SQLite": args.offset_sqlite,
        "PostgreSQL": args.offset_postgresql,
        "MySQL": args.offset_mysql,
    }
    if any(n < 0 for n in offsets.values()):
        parser.error("offsets must not be negative")
    ids = chosen_ids(args.data, {d: n for d, n in counts.items() if n > 0}, offsets)
    suffix = f"-{args.label}" if args.label else ""
    specs = [
        method_spec(
            name,
            llm=args.llm,
            max_seconds=args.max_seconds,
            max_llm_calls=args.max_llm_calls,
            candidates=args.candidates,
            temperature=args.temperature,
        )
        for name in [m.strip() for m in args.methods.split(",") if m.strip()]
    ]
    backend = parse_llm_spec(args.llm)
    options = EvalOptions(
        workers=args.workers, servers=ServerURLs.resolve(args.pg_url, args.mysql_url)
    )
    for spec in specs:
        out = args.out / f"{spec.label}{suffix}"
        print(f"== {spec.label}{suffix} on {len(ids)} tasks -> {out}", flush=True)

        def progress(record, label=spec.label + suffix):
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
        print(f"{spec.label}{suffix}: {t.passed}/{t.evaluable} passed", flush=True)
        if not args.no_candidates:

            def scored(line, done, total, label=spec.label + suffix):
                print(
                    f"{label} candidates [{done}/{total}] {line.set}/{line.instance_id}: "
                    f"{line.candidates} distinct, {line.duplicates} duplicates, "
                    f"{line.executing} execute, {line.passing} pass; final "
                    f"{'passed' if line.final_passed else line.final_status.value}"
                    + (" (wrongly accepted)" if line.wrong_acceptance else ""),
                    file=sys.stderr,
                    flush=True,
                )

            lines = score_candidates(
                CandidatesRequest(
                    run=out, tasks=args.data / "tasks", gt=args.data / "dev", options=options
                ),
                on_line=scored,
            )
            generated = sum(1 for line in lines if line.evaluable and line.any_pass)
            print(f"{spec.label}{suffix}: a candidate passes in {generated} tasks", flush=True)

    directories = sorted(d for d in args.out.iterdir() if (d / RECORDS).exists())
    names = [d.name for d in directories]
    baseline = f"raw{suffix}" if any(s.method == Method.RAW for s in specs) else "raw"
    comparison = compare(
        [load_run(d) for d in directories],
        baseline=baseline if baseline in names else "raw",
        names=names,
    )
    write_comparison(args.out, comparison)
    sys.stdout.write((args.out / "comparison.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
