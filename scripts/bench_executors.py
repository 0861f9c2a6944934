"""Median time of one trivial `run_sql` (`SELECT 1`) per live engine, and of a sandbox copy.

    .venv/bin/python scripts/bench_executors.py [--runs N] [--copy-mb MB]

SQLite always; PostgreSQL and MariaDB when ACTS_SQL_TEST_PG_URL / ACTS_SQL_TEST_MYSQL_URL
are set (`scripts/services.sh start` writes them to DIR/env). With --copy-mb, also the time
to open a write sandbox (a throw-away copy) of a database of that size on SQLite and
PostgreSQL. Prints a small table.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from acts_sql.db.connect import open_database


def median_ms(action: Callable[[], object], runs: int) -> float:
    action()  # warm-up
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        action()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1000


def trivial(url: str, runs: int) -> float:
    executor = open_database(url)
    try:
        result = executor.execute("SELECT 1")
        assert result.ok, result.error
        return median_ms(lambda: executor.execute("SELECT 1"), runs)
    finally:
        executor.close()


def sqlite_db(directory: Path, megabytes: int) -> Path:
    path = directory / f"bench_{megabytes}mb.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, payload TEXT)")
    rows = megabytes * 1024 * 1024 // 1100
    conn.executemany("INSERT INTO t (payload) VALUES (?)", (("x" * 1000,) for _ in range(rows)))
    conn.commit()
    conn.close()
    return path


def pg_db(admin_url: str, megabytes: int) -> str:
    import psycopg

    name = f"acts_bench_{megabytes}mb"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    url = admin_url.rsplit("/", 1)[0] + "/" + name
    rows = megabytes * 1024 * 1024 // 1100
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE t AS SELECT g AS id, repeat('x', 1000) AS payload "
            f"FROM generate_series(1, {rows}) AS g"
        )
        size = conn.execute("SELECT pg_database_size(current_database())").fetchone()
    print(f"  (PostgreSQL database of {size[0] / 1e6:.0f} MB)" if size else "")
    return url


def copy_seconds(url: str, runs: int = 3) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        executor = open_database(url, allow_writes=True)
        samples.append(time.perf_counter() - started)
        mode = getattr(executor, "sandbox_mode", "copy")
        assert mode == "copy", mode
        executor.close()
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--copy-mb", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp)
        tiny = directory / "tiny.db"
        sqlite3.connect(tiny).execute("CREATE TABLE t (x)").connection.close()
        engines = {"SQLite": f"sqlite:///{tiny}"}
        if os.environ.get("ACTS_SQL_TEST_PG_URL"):
            engines["PostgreSQL"] = os.environ["ACTS_SQL_TEST_PG_URL"]
        if os.environ.get("ACTS_SQL_TEST_MYSQL_URL"):
            engines["MariaDB"] = os.environ["ACTS_SQL_TEST_MYSQL_URL"]
        print(f"run_sql('SELECT 1'), median of {args.runs} (guard + round trips + result):")
        for name, url in engines.items():
            print(f"  {name:<11} {trivial(url, args.runs):7.3f} ms")
        if args.copy_mb:
            print(f"open a write sandbox (throw-away copy) of a {args.copy_mb} MB database:")
            path = sqlite_db(directory, args.copy_mb)
            print(f"  (SQLite file of {path.stat().st_size / 1e6:.0f} MB)")
            print(f"  SQLite      {copy_seconds(f'sqlite:///{path}'):7.3f} s  (backup API)")
            if "PostgreSQL" in engines:
                url = pg_db(engines["PostgreSQL"], args.copy_mb)
                seconds = copy_seconds(url)
                print(f"  PostgreSQL  {seconds:7.3f} s  (CREATE DATABASE ... TEMPLATE)")


if __name__ == "__main__":
    main()
