#!/usr/bin/env python
"""The evaluator on the whole BIRD-CRITIC development split, and the official example predictions.

    .venv/bin/python scripts/bird_critic_dev.py --out runs/dev [--data DIR] [--workers 2]
        [--pg-url URL] [--mysql-url URL] [--no-models] [--models claude-opus-4.6,...]

1. Evaluable tasks per set and dialect: static check over every task file, and
   the development split (tasks with solutions).
2. ``--mode gold`` and ``--mode issue`` over every development task of every set.
3. The example predictions of each model (``example_output/<model>/``) scored on
   the development tasks.

Writes each run's results and reports under ``--out`` and prints a markdown
summary (also saved as ``--out/summary.md``). Servers come from the options or
ACTS_SQL_BENCH_PG_URL / ACTS_SQL_TEST_PG_URL (and the MYSQL ones); without one,
that dialect's tasks are reported not evaluable.
"""

from __future__ import annotations

import argparse
import collections
import sys
import time
from pathlib import Path

from acts_sql.bench.evaluability import check_task
from acts_sql.bench.evaluate import EvalRequest, evaluate
from acts_sql.bench.loader import KNOWN_SETS, join, load_dev_ids, load_solutions, load_tasks
from acts_sql.bench.models import EvalMode
from acts_sql.bench.report import EvalReport
from acts_sql.bench.scorer import EvalOptions
from acts_sql.bench.selection import TaskFilter
from acts_sql.bench.servers import ServerURLs

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATA = REPO.parent / "shared" / "data" / "bird-critic"
PREDICTION_FILES = {
    "flash": "flash",
    "open570": "open",
    "pg530": "pg530",
    "sqlite500": "sqlite_500",
}


def evaluable_counts(data: Path) -> list[str]:
    """Markdown table: tasks, statically evaluable tasks and dev tasks per set and dialect."""
    solutions = load_solutions(data / "dev")
    dev = {e.key for e in load_dev_ids(data / "dev")}
    rows: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    for set_name in KNOWN_SETS:
        for item in join(load_tasks(data / "tasks" / f"{set_name}.jsonl"), solutions):
            counts = rows[(set_name, item.task.dialect)]
            counts[0] += 1
            counts[1] += check_task(item).evaluable
            counts[2] += item.key in dev
    lines = [
        "| set | dialect | tasks | evaluable (static check) | development split |",
        "|---|---|---:|---:|---:|",
    ]
    totals = [0, 0, 0]
    for (set_name, dialect), counts in sorted(rows.items()):
        lines.append(f"| {set_name} | {dialect} | {counts[0]} | {counts[1]} | {counts[2]} |")
        totals = [a + b for a, b in zip(totals, counts, strict=True)]
    lines.append(f"| all | | {totals[0]} | {totals[1]} | {totals[2]} |")
    return lines


def run_one(
    data: Path,
    set_name: str,
    mode: EvalMode,
    out: Path,
    options: EvalOptions,
    preds: Path | None = None,
) -> EvalReport:
    request = EvalRequest(
        tasks=data / "tasks" / f"{set_name}.jsonl",
        gt=data / "dev",
        preds=preds,
        out=out,
        options=options.model_copy(update={"mode": mode}),
        filter=TaskFilter(with_solution_only=True),
    )
    return evaluate(request)


def pct(passed: int, evaluable: int) -> str:
    return f"{100.0 * passed / evaluable:.1f}" if evaluable else "–"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pg-url")
    parser.add_argument("--mysql-url")
    parser.add_argument("--no-models", action="store_true", help="skip the example predictions")
    parser.add_argument("--models", help="comma-separated model directories (default: all)")
    args = parser.parse_args()

    options = EvalOptions(
        workers=args.workers, servers=ServerURLs.resolve(args.pg_url, args.mysql_url)
    )
    started = time.perf_counter()
    summary = ["# BIRD-CRITIC development split", "", "## Evaluable tasks", ""]
    summary += evaluable_counts(args.data)

    summary += ["", "## Solutions (gold) and issue SQL", ""]
    summary += [
        "| set | dialect | dev tasks | evaluable here | gold passed | issue passed |",
        "|---|---|---:|---:|---:|---:|",
    ]
    unexpected: list[str] = []
    for set_name in KNOWN_SETS:
        gold = run_one(args.data, set_name, EvalMode.GOLD, args.out / "gold" / set_name, options)
        issue = run_one(args.data, set_name, EvalMode.ISSUE, args.out / "issue" / set_name, options)
        for dialect, g in gold.by_dialect.items():
            i = issue.by_dialect[dialect]
            summary.append(
                f"| {set_name} | {dialect} | {g.tasks} | {g.evaluable} | {g.passed} | {i.passed} |"
            )
        unexpected += [f"gold not passing: {u}" for u in gold.unexpected]
        unexpected += [f"issue SQL passing: {u}" for u in issue.unexpected]
    summary += ["", *(f"- {u}" for u in unexpected or ["none unexpected"])]

    models_dir = args.data / "example_output"
    models = (
        sorted(p.name for p in models_dir.iterdir() if p.is_dir()) if models_dir.exists() else []
    )
    if args.models:
        models = [m.strip() for m in args.models.split(",") if m.strip()]
    if not args.no_models and models:
        summary += ["", "## Example predictions on the evaluable development tasks", ""]
        header = "| model | " + " | ".join(KNOWN_SETS) + " | all | errors on absent tables |"
        summary += [header, "|---|" + "---:|" * (len(KNOWN_SETS) + 2)]
        for model in models:
            cells, passed_all, evaluable_all, absent = [], 0, 0, 0
            for set_name in KNOWN_SETS:
                preds = models_dir / model / f"{PREDICTION_FILES[set_name]}.jsonl"
                out = args.out / "models" / model / set_name
                report = run_one(args.data, set_name, EvalMode.PRED, out, options, preds)
                t = report.overall
                cells.append(f"{t.passed}/{t.evaluable} ({pct(t.passed, t.evaluable)})")
                passed_all += t.passed
                absent += len(report.absent_tables)
                evaluable_all += t.evaluable
            total = f"{passed_all}/{evaluable_all} ({pct(passed_all, evaluable_all)})"
            summary.append(f"| {model} | " + " | ".join(cells) + f" | {total} | {absent} |")
    summary += ["", f"{time.perf_counter() - started:.0f} s, {args.workers} workers."]
    text = "\n".join(summary) + "\n"
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.md").write_text(text)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
