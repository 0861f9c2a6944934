"""Recompute src/acts_sql/bench/logs/data/gold_small.json: the gold results of the 60
`bench logs` tasks on the small log database of the default seed.

Run it after changing the generator or a gold query, then review the diff:
    PYTHONPATH=src python scripts/build_logs_gold.py
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from acts_sql.bench.logs.generator import LogSize, generate
from acts_sql.bench.logs.tasks import gold_results, load_tasks
from acts_sql.db.connect import open_database
from acts_sql.db.language import with_language

TARGET = Path(__file__).resolve().parents[1] / "src/acts_sql/bench/logs/data/gold_small.json"


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        database = generate(Path(tmp) / "logs.duckdb", LogSize.SMALL)
        executor = with_language(open_database(f"duckdb:///{database.path}"), "prql")
        try:
            gold = gold_results(executor, list(load_tasks()))
        finally:
            executor.close()
    lines = [
        f"  {json.dumps(key)}: {json.dumps(value.model_dump(), ensure_ascii=False)}"
        for key, value in gold.items()
    ]
    TARGET.write_text("{\n" + ",\n".join(lines) + "\n}\n", encoding="utf-8")  # a task a line
    print(f"{len(gold)} gold results (checksum {database.checksum}) -> {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
