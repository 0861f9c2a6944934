#!/usr/bin/env python
"""Keep benchmark runs in the repository, without the benchmark's ground truth.

    .venv/bin/python scripts/keep_run.py RUN_DIR [RUN_DIR ...] [--to results/bird-critic-dev]

Each RUN_DIR (a `bench bird-critic` output directory, e.g. ``runs/dev40/acts-1.5b``) is
copied to ``--to/<its name>``: records, predictions, scored candidates and the report, and
every task's trace gzipped; the evaluator's reasons keep the names of the failing tests
only (see `acts_sql.bench.archive`). `bench compare`, `bench candidates`,
`scripts/replay_run.py` and `scripts/trace_stats.py` read the kept folder as they read the
run. Prints one JSON line per run.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from acts_sql.bench.archive import keep_run
from acts_sql.bench.errors import BenchDataError

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="bench output directories")
    parser.add_argument("--to", type=Path, default=REPO / "results" / "bird-critic-dev")
    args = parser.parse_args(argv)
    for run in args.runs:
        try:
            kept = keep_run(run, args.to / run.resolve().name)
        except BenchDataError as exc:
            print(f"keep_run: {exc}", file=sys.stderr)
            return 2
        print(kept.model_dump_json(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
