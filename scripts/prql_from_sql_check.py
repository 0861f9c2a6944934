#!/usr/bin/env python
"""How well SQL comes back as PRQL (`acts_sql.sql.languages.prql.from_sql`), on the log
benchmark's database, without an LLM.

    .venv/bin/python scripts/prql_from_sql_check.py [RECORDS.jsonl ...] [--db PATH] [--json]

Two kinds of SQL are read back:

- the 60 gold PRQL queries of `bench logs`, compiled to DuckDB SQL by prqlc: SQL with CTEs,
  joins, windows and s-strings whose right answer is known;
- the queries of kept `bench logs` runs (`records-<method>.jsonl`, e.g.
  results/logs-local/records-raw.jsonl): the model's first query (`initial_query`) and the
  method's answer (`final_query`), which a small model writes in SQL.

For each set it prints how many are SQL, how many of those are right as SQL, and of their
rewrites: how many there are, how many compile and run, how many return the SQL's own rows
(what the engine checks before it keeps one, `acts_sql.db.language.translate_sql`: results
cut at the row cap do not count; a query whose rows are not fixed, such as LIMIT over ties,
can match in one run and not the next) and how many return the gold answer. The database
is the small log database (built in a temporary directory when --db is not given).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from acts_sql.bench.logs.generator import LogSize, generate
from acts_sql.bench.logs.scoring import GoldResult, equivalent
from acts_sql.bench.logs.tasks import gold_results, select_tasks
from acts_sql.db.connect import open_database
from acts_sql.db.executor import Executor
from acts_sql.db.language import with_language
from acts_sql.db.result import ExecResult
from acts_sql.sql.languages import get_language
from acts_sql.sql.languages.prql.from_sql import translate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("records", nargs="*", type=Path, help="records-<method>.jsonl files")
    parser.add_argument("--db", type=Path, help="a log database (default: the small one, built)")
    parser.add_argument("--json", action="store_true", help="one JSON object per set")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as scratch:
        db = args.db or generate(Path(scratch) / "logs-small.duckdb", LogSize.SMALL).path
        sql = open_database(f"duckdb:///{db}")
        prql = with_language(open_database(f"duckdb:///{db}"), "prql")
        try:
            tasks = select_tasks()
            gold = gold_results(prql, tasks)
            language = get_language("prql")
            sets = {"gold PRQL compiled to SQL": [(t.id, language.compile(t.gold, "duckdb"))
                                                  for t in tasks]}  # fmt: skip
            for path in args.records:
                records = [json.loads(line) for line in path.read_text().splitlines() if line]
                for key in ("initial_query", "final_query"):
                    sets[f"{path.name} {key}"] = [(r["id"], r.get(key) or "") for r in records]
            for name, queries in sets.items():
                row = {"set": name, **check(queries, sql, prql, gold)}
                print(json.dumps(row) if args.json else _line(row))
        finally:
            sql.close()
            prql.close()
    return 0


def check(
    queries: list[tuple[str, str]], sql: Executor, prql: Executor, gold: dict[str, GoldResult]
) -> dict[str, int]:
    counts = dict.fromkeys(
        ["queries", "sql", "sql_right", "rewritten", "run", "same_rows", "right"], 0
    )
    for task_id, text in queries:
        counts["queries"] += 1
        if not text.strip() or prql.execute(text).ok:  # empty, or PRQL already
            continue
        own = sql.execute(text)
        counts["sql"] += 1
        counts["sql_right"] += _right(own, gold[task_id])
        back = translate(text, "duckdb")
        if back is None:
            continue
        counts["rewritten"] += 1
        result = prql.execute(back)
        if not result.ok:
            continue
        counts["run"] += 1
        # as the engine checks it: neither cut at the row cap (a cut result's rows vary)
        counts["same_rows"] += (
            own.ok and not own.truncated and not result.truncated and _rows(own) == _rows(result)
        )
        counts["right"] += _right(result, gold[task_id])
    return counts


def _right(result: ExecResult, gold: GoldResult) -> bool:
    return result.ok and not result.truncated and equivalent(result.rows, gold)


def _rows(result: ExecResult) -> list[str]:
    return sorted(repr(tuple(r)) for r in result.rows)


def _line(row: dict) -> str:
    return (
        f"{row['set']}: {row['queries']} queries, {row['sql']} SQL ({row['sql_right']} right "
        f"as SQL); rewritten {row['rewritten']}, run {row['run']}, same rows as the SQL "
        f"{row['same_rows']}, right as PRQL {row['right']}"
    )


if __name__ == "__main__":
    sys.exit(main())
