"""Wall time of the rule chain on one failing statement, by the statement's size.

    .venv/bin/python scripts/bench_rule_chain.py [--columns 10,80,1500] [--repeat 3]

The statement is ``SELECT name AS c0, name AS c1, ... FROM nosuchtable`` on the demo's
SQLite database: it fails ("no such table"), so every syntax-stage rule reads it, as when
the engine repairs the user's SQL or a failing candidate. Each size is run `--repeat`
times, each with a new `RuleChain` and the remembered canonical texts forgotten
(`acts_sql.sql.normalize.clear_remembered`), and the median is printed with the
statement's length. Nothing is written.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from acts_sql.db.connect import open_database
from acts_sql.sql.normalize import clear_remembered
from acts_sql.tools.rule_chain import RuleChain, schema_facts

DEMO_DB = Path(__file__).resolve().parents[1] / "src" / "acts_sql" / "demo" / "demo.sqlite"


def failing_statement(columns: int) -> str:
    return "SELECT " + ", ".join(f"name AS c{i}" for i in range(columns)) + " FROM nosuchtable"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--columns", default="10,80,1500", help="SELECT-list sizes, comma-separated"
    )
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    executor = open_database(f"sqlite:///{DEMO_DB}")
    try:
        facts = schema_facts(executor.reflect(3), "sqlite")
        for columns in (int(c) for c in args.columns.split(",")):
            sql = failing_statement(columns)
            failed = executor.execute(sql)
            seconds = []
            for _ in range(args.repeat):
                clear_remembered()  # each run reads the statement as the first time
                started = time.perf_counter()
                RuleChain(executor, facts, "sqlite").run(sql, failed)
                seconds.append(time.perf_counter() - started)
            median = statistics.median(seconds)
            print(f"{len(sql):>7} characters: {median:.3f} s (median of {args.repeat})")
    finally:
        executor.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
