"""Median time of one trivial `run_sql` (`SELECT 1`) per live engine, and of a sandbox copy.

    .venv/bin/python scripts/bench_executors.py [--runs N] [--copy-mb MB] [--isolation]

SQLite always; PostgreSQL and MariaDB when ACTS_SQL_TEST_PG_URL / ACTS_SQL_TEST_MYSQL_URL
are set (`scripts/services.sh start` writes them to DIR/env). With --copy-mb, also the time
to open a write sandbox (a throw-away copy) of a database of that size on SQLite and
PostgreSQL. With --isolation as well, what it costs to give every candidate the database as
it was (`--allow-writes`): a fresh copy per candidate against one copy whose candidates run
isolated (`execute(sql, isolate=True)`: rolled back, or on MariaDB a snapshot for DDL), for a
small update, a delete of a tenth of the rows and an added column, on SQLite, PostgreSQL and
MariaDB. Prints a small table.
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


def mysql_db(admin_url: str, megabytes: int) -> str:
    import pymysql

    from acts_sql.db.url import parse_url

    name = f"acts_bench_{megabytes}mb"
    parts = parse_url(admin_url)
    conn = pymysql.connect(
        host=parts.host,
        port=parts.port,
        user=parts.username,
        password=parts.password,
        autocommit=True,
    )
    rows = megabytes * 1024 * 1024 // 1100
    with conn.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {name}")
        cursor.execute(f"CREATE DATABASE {name}")
        cursor.execute(f"USE {name}")
        cursor.execute("CREATE TABLE t (id INT PRIMARY KEY, payload TEXT) ENGINE=InnoDB")
        cursor.execute(f"INSERT INTO t SELECT seq, REPEAT('x', 1000) FROM seq_1_to_{rows}")
    conn.close()
    return admin_url.rsplit("/", 1)[0] + "/" + name


ISOLATION_CASES = {
    "update 100 rows": "UPDATE t SET payload = 'y' WHERE id <= 100; SELECT count(*) FROM t",
    "delete 10% of rows": "DELETE FROM t WHERE id % 10 = 0; SELECT count(*) FROM t",
    "add a column": "ALTER TABLE t ADD COLUMN extra INTEGER; SELECT count(*) FROM t",
}


def isolation_costs(url: str, runs: int) -> dict[str, float]:
    """Seconds per candidate (median of `runs`): a fresh copy, and each case isolated."""
    costs = {"fresh copy per candidate": copy_seconds(url, runs)}
    executor = open_database(url, allow_writes=True)
    try:
        for name, sql in ISOLATION_CASES.items():
            samples = []
            for _ in range(runs):
                started = time.perf_counter()
                result = executor.execute(sql, isolate=True)
                samples.append(time.perf_counter() - started)
                assert result.ok, result.error
            costs[f"isolated: {name}"] = statistics.median(samples)
        left = executor.execute("SELECT count(*) FROM t")
        assert left.ok and left.rows[0][0] == executor.execute("SELECT max(id) FROM t").rows[0][0]
    finally:
        executor.close()
    return costs


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
    parser.add_argument("--isolation", action="store_true", help="with --copy-mb")
    parser.add_argument("--isolation-runs", type=int, default=5)
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
            if args.isolation:
                urls = {"SQLite": f"sqlite:///{path}"}
                if "PostgreSQL" in engines:
                    urls["PostgreSQL"] = url
                if "MariaDB" in engines:
                    urls["MariaDB"] = mysql_db(engines["MariaDB"], args.copy_mb)
                print(
                    f"every candidate on the database as it was, {args.copy_mb} MB, "
                    f"median of {args.isolation_runs} (seconds per candidate):"
                )
                for name, target in urls.items():
                    for case, seconds in isolation_costs(target, args.isolation_runs).items():
                        print(f"  {name:<11} {case:<34} {seconds:8.3f} s")


if __name__ == "__main__":
    main()
