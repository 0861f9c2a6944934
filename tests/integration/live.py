"""Live engines for the integration tests: SQLite, and PostgreSQL and MariaDB when running.

(Imported by conftest.py and the tests: a module name of its own, because
several test folders have a `conftest` module.)

`scripts/test.sh` starts private servers (scripts/services.sh) and exports
ACTS_SQL_TEST_PG_URL / ACTS_SQL_TEST_MYSQL_URL (a superuser's URL). Without
them, tests on those engines skip with the reason; with
ACTS_SQL_REQUIRE_SERVICES=1 (set under CI) they fail instead.

Each engine gets a fresh database `acts_it` with the same small data set.
An autouse fixture checks after every test that the checksums of all user
tables are unchanged and that no sandbox copy was left behind.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from checksums import (
    SANDBOX_PREFIX,
    mysql_checksums,
    mysql_connect,
    mysql_databases,
    pg_checksums,
    pg_databases,
    sqlite_checksums,
)

PG_ENV = "ACTS_SQL_TEST_PG_URL"
MYSQL_ENV = "ACTS_SQL_TEST_MYSQL_URL"
TEST_DB = "acts_it"
ENGINES = ("sqlite", "postgresql", "mysql")

_COMMON = [
    "INSERT INTO customers VALUES (1, 'Ana', 'Lisbon'), (2, 'Ben', NULL), (3, 'Chloe', 'Oslo')",
    "INSERT INTO orders VALUES (1, 1, 50.50, '2024-01-05 10:00:00'), "
    "(2, 1, 150.00, '2024-02-01 09:30:00'), (3, 2, 999.99, '2024-02-03 18:00:00'), "
    "(4, 3, 12.00, '2024-03-10 12:00:00')",
    "INSERT INTO rooms VALUES (1, 'Atlas'), (2, 'Borealis'), (3, 'Cygnus')",
    "INSERT INTO bookings VALUES "
    "(1, 1, '2024-05-01 09:00:00', '2024-05-01 11:00:00'), "
    "(2, 1, '2024-05-01 10:00:00', '2024-05-01 12:00:00'), "
    "(3, 2, '2024-05-01 09:00:00', '2024-05-01 10:00:00'), "
    "(4, 2, '2024-05-01 14:00:00', '2024-05-01 15:00:00'), "
    "(5, 3, '2024-05-02 09:00:00', '2024-05-02 10:00:00')",
]


def schema_sql(timestamp: str) -> list[str]:
    """The data set's DDL and rows, with the engine's timestamp type."""
    return [
        "CREATE TABLE customers (id INTEGER PRIMARY KEY, name VARCHAR(50) NOT NULL, "
        "city VARCHAR(50))",
        "CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER NOT NULL "
        "REFERENCES customers (id), total DECIMAL(10, 2), placed_at "
        f"{timestamp})",
        "CREATE TABLE rooms (room_id INTEGER PRIMARY KEY, name VARCHAR(50) NOT NULL)",
        "CREATE TABLE bookings (booking_id INTEGER PRIMARY KEY, room_id INTEGER NOT NULL "
        f"REFERENCES rooms (room_id), start_time {timestamp}, end_time {timestamp})",
        "CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100",
        *_COMMON,
    ]


# statements per engine that the limit tests share: one that outlasts a 1 s timeout, one
# that returns 50,000 rows (over the 10,000-row cap)
SLOW = {
    "sqlite": (
        "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r"
    ),
    "postgresql": "SELECT pg_sleep(5)",
    "mysql": "SELECT SLEEP(5)",
}
FIFTY_K = {
    "sqlite": (
        "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 50000) "
        "SELECT n FROM s"
    ),
    "postgresql": "SELECT g AS n FROM generate_series(1, 50000) AS g",
    "mysql": "SELECT seq AS n FROM seq_1_to_50000",
}


@dataclass
class Engine:
    """One live database with the data set."""

    name: str
    url: str
    admin_url: str
    checksum: Callable[[], dict[str, str]]
    copies: Callable[[], list[str]]
    """Sandbox copies that exist now (databases or temp dirs)."""


def own_copy_prefix() -> str:
    """The name prefix of the copies this test process makes (other processes, such as
    another test run on the same server, have their own)."""
    return f"{SANDBOX_PREFIX}{os.getpid()}_"


def _require(variable: str) -> str | None:
    url = os.environ.get(variable)
    if not url and os.environ.get("ACTS_SQL_REQUIRE_SERVICES") == "1":
        pytest.fail(f"{variable} is not set but ACTS_SQL_REQUIRE_SERVICES=1")
    return url


def _with_database(url: str, database: str) -> str:
    return url.rsplit("/", 1)[0] + "/" + database


def _sqlite_engine(directory: Path) -> Engine:
    path = directory / f"{TEST_DB}.db"
    conn = sqlite3.connect(path)
    for statement in schema_sql("TIMESTAMP"):
        conn.execute(statement)
    conn.commit()
    conn.close()
    temp = Path(tempfile.gettempdir())
    return Engine(
        name="sqlite",
        url=f"sqlite:///{path}",
        admin_url=f"sqlite:///{path}",
        checksum=lambda: sqlite_checksums(path),
        copies=lambda: sorted(p.name for p in temp.glob(f"acts-sql-sandbox-{os.getpid()}-*")),
    )


def _pg_engine(admin: str) -> Engine:
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {TEST_DB} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {TEST_DB}")
    url = _with_database(admin, TEST_DB)
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in schema_sql("TIMESTAMP"):
            conn.execute(statement)
        conn.execute("ANALYZE")
    return Engine(
        name="postgresql",
        url=url,
        admin_url=admin,
        checksum=lambda: pg_checksums(url),
        copies=lambda: [d for d in pg_databases(admin) if d.startswith(own_copy_prefix())],
    )


def _mysql_engine(admin: str) -> Engine:
    conn = mysql_connect(admin)
    with conn.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {TEST_DB}")
        cursor.execute(f"CREATE DATABASE {TEST_DB}")
        cursor.execute(f"USE {TEST_DB}")
        for statement in schema_sql("DATETIME"):
            cursor.execute(statement)
    conn.close()
    url = _with_database(admin, TEST_DB)
    return Engine(
        name="mysql",
        url=url,
        admin_url=admin,
        checksum=lambda: mysql_checksums(url),
        copies=lambda: [d for d in mysql_databases(admin) if d.startswith(own_copy_prefix())],
    )


def engine_or_skip(live_engines: dict[str, Engine], name: str) -> Engine:
    if name not in live_engines:
        variable = PG_ENV if name == "postgresql" else MYSQL_ENV
        pytest.skip(f"no live {name} server: {variable} is not set (scripts/test.sh sets it)")
    return live_engines[name]


def make_engines(directory: Path) -> dict[str, Engine]:
    """Every engine that is available in this run, by name, each with a fresh data set."""
    engines = {"sqlite": _sqlite_engine(directory)}
    pg = _require(PG_ENV)
    if pg:
        engines["postgresql"] = _pg_engine(pg)
    my = _require(MYSQL_ENV)
    if my:
        engines["mysql"] = _mysql_engine(my)
    return engines
