"""Time and peak memory of `acts-sql fix` on huge SQL inputs (the documented input limits).

Each measurement is one `acts-sql fix --method raw` process on a small SQLite
database with a scripted LLM (its reply is ``SELECT 1``), ``--timeout 10
--max-seconds 60``, the SQL read from a file. The script prints, per SQL shape
and size: the exit code, the wall time and the process's peak resident memory
(its own, from wait4). Sizes above the limit show how fast the refusal is.

    PYTHONPATH=src .venv/bin/python scripts/bench_input_size.py [--sizes 100000,1000000]

Shapes: ``in-list`` (SELECT ... WHERE id IN (0, 1, 2, ...)), ``literal`` (one
long string literal), ``or-chain`` (WHERE id = 0 OR id = 1 OR ...), ``columns``
(SELECT 0 AS c0, 1 AS c1, ...).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from acts_sql.engine.inputs import MAX_SQL_CHARS


def _repeat(head: str, item: Callable[[int], str], sep: str, tail: str, size: int) -> str:
    parts, length, i = [], len(head) + len(tail), 0
    while True:  # as many items as fit in `size` characters
        piece = item(i)
        if length + len(piece) + len(sep) > size:
            break
        parts.append(piece)
        length += len(piece) + len(sep)
        i += 1
    return head + sep.join(parts) + tail


SHAPES: dict[str, Callable[[int], str]] = {
    "in-list": lambda n: _repeat("SELECT s FROM t WHERE id IN (", str, ", ", ")", n),
    "literal": lambda n: "SELECT s FROM t WHERE s <> '" + "x" * max(n - 30, 0) + "'",
    "or-chain": lambda n: _repeat("SELECT s FROM t WHERE ", lambda i: f"id = {i}", " OR ", "", n),
    "columns": lambda n: _repeat("SELECT ", lambda i: f"{i} AS c{i}", ", ", " FROM t", n),
}


def measure(command: list[str]) -> tuple[int, float, float]:
    """Exit code, wall seconds and peak RSS (MB) of one process."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.stderr is not None:
        process.stderr.close()
    return process.returncode, wall, usage.ru_maxrss / 1024


def setup(directory: Path) -> tuple[Path, Path]:
    db = directory / "t.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, s TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"row {i}") for i in range(100)])
    conn.commit()
    conn.close()
    script = directory / "S.json"
    script.write_text(json.dumps({"correct": ["```sql\nSELECT 1\n```"]}))
    return db, script


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = f"10000,100000,{MAX_SQL_CHARS},{MAX_SQL_CHARS + 10},5500000"
    parser.add_argument("--sizes", default=default, help="comma-separated SQL sizes (chars)")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        db, script = setup(directory)
        print(f"{'shape':<10} {'chars':>10} {'exit':>4} {'seconds':>8} {'peak MB':>8}")
        for shape in args.shapes.split(","):
            for size in (int(s) for s in args.sizes.split(",")):
                sql = directory / "q.sql"
                sql.write_text(SHAPES[shape](size))
                chars = len(sql.read_text())
                command = [
                    sys.executable, "-m", "acts_sql", "fix", "--db", str(db),
                    "--llm", f"scripted:{script}", "--method", "raw", "--question", "q",
                    "--sql-file", str(sql), "--timeout", "10", "--max-seconds", "60", "--json",
                ]  # fmt: skip
                code, wall, peak = measure(command)
                print(f"{shape:<10} {chars:>10,} {code:>4} {wall:>8.2f} {peak:>8.0f}", flush=True)


if __name__ == "__main__":
    main()
