#!/usr/bin/env python
"""Keep benchmark runs in the repository, without the benchmark's ground truth.

    .venv/bin/python scripts/keep_run.py RUN_DIR [RUN_DIR ...] [--to results/bird-critic-dev]
    .venv/bin/python scripts/keep_run.py RUN_A RUN_B --join NAME [--to ...]

Each RUN_DIR (a `bench bird-critic` output directory, e.g. ``runs/dev40/acts-1.5b``) is
copied to ``--to/<its name>``: records, predictions, scored candidates and the report, and
every task's trace gzipped; the evaluator's reasons keep the names of the failing tests
only (see `acts_sql.bench.archive`). `bench compare`, `bench candidates`,
`scripts/replay_run.py` and `scripts/trace_stats.py` read the kept folder as they read the
run. Prints one JSON line per run. With ``--join NAME`` the runs (parts of one
measurement, e.g. the first 16 tasks and the other 24, run in different sessions) become
one folder ``--to/NAME``; a task in two of them is refused, and ``sources.json`` says
which run each task came from.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acts_sql.bench.archive import keep_run, keep_runs
from acts_sql.bench.errors import BenchDataError

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="bench output directories")
    parser.add_argument("--to", type=Path, default=REPO / "results" / "bird-critic-dev")
    parser.add_argument("--join", metavar="NAME", help="keep all the runs as one folder NAME")
    args = parser.parse_args(argv)
    if args.join is not None and (not args.join or Path(args.join).name != args.join):
        parser.error("--join: a folder name, not a path")
    try:
        if args.join:
            print(keep_runs(args.runs, args.to / args.join).model_dump_json(), flush=True)
            return 0
        for run in args.runs:
            kept = keep_run(run, args.to / run.resolve().name)
            print(kept.model_dump_json(), flush=True)
    except BenchDataError as exc:
        print(f"keep_run: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
