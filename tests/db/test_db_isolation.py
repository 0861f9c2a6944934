"""`execute(sql, isolate=True)` without a server: SQLite, DuckDB, and the DB-API loop.

An isolated call runs its statements, returns the last result (or the first
failure) and leaves the database exactly as it was before the call, so that a
pool of candidates is judged on one starting state. Live PostgreSQL and
MariaDB are in tests/integration/test_isolation.py.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path

import duckdb
import pytest
from fake_dbapi import Connector

from acts_sql.db import mssql
from acts_sql.db.duckdb_executor import DuckDBExecutor
from acts_sql.db.mssql import MSSQLExecutor
from acts_sql.db.oracle import OracleExecutor
from acts_sql.db.sqlite import SQLiteExecutor

ENDLESS_INSERT = (
    "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) "
    "INSERT INTO orders (order_id, total) SELECT i + 100, 1 FROM r"
)
FIFTY_K = (
    "WITH RECURSIVE s(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM s WHERE n < 50000) "
    "SELECT n FROM s"
)
NEW_CUSTOMER = "INSERT INTO customers (name, city) VALUES ('Eve', 'Rome')"


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def copy(shop_path: Path):
    executor = SQLiteExecutor(shop_path, allow_writes=True)
    yield executor
    executor.close()


def _count(executor, table: str) -> int:
    return executor.execute(f"SELECT count(*) FROM {table}").rows[0][0]


# ------------------------------------------------------------------ SQLite


def test_sqlite_an_isolated_drop_leaves_the_table(copy: SQLiteExecutor) -> None:
    assert copy.execute("DROP VIEW big_orders; DROP TABLE orders", isolate=True).ok
    assert _count(copy, "orders") == 4
    assert _count(copy, "big_orders") == 2
    gone = copy.execute("DROP TABLE orders; SELECT count(*) FROM orders", isolate=True)
    assert gone.error_kind == "schema"  # within the run it is gone


def test_sqlite_the_same_alter_runs_twice(copy: SQLiteExecutor) -> None:
    for _ in range(2):
        assert copy.execute("ALTER TABLE orders ADD COLUMN c INTEGER", isolate=True).ok
    assert copy.execute("SELECT c FROM orders").error_kind == "schema"


def test_sqlite_an_insert_counts_within_the_run_and_is_gone_after(copy: SQLiteExecutor) -> None:
    for _ in range(2):
        result = copy.execute(
            f"{NEW_CUSTOMER}; SELECT count(*), max(customer_id) FROM customers", isolate=True
        )
        assert result.rows == [[5, 5]]  # AUTOINCREMENT's counter is rolled back too
    assert _count(copy, "customers") == 4
    assert copy.execute("SELECT seq FROM sqlite_sequence WHERE name = 'customers'").rows == [[4]]


def test_sqlite_triggers_and_indexes_made_in_a_run_vanish(copy: SQLiteExecutor) -> None:
    trigger = (
        "CREATE TRIGGER zero AFTER INSERT ON orders BEGIN "
        "UPDATE orders SET total = 0 WHERE order_id = new.order_id; END"
    )
    assert copy.execute(trigger, isolate=True).ok
    assert copy.execute("CREATE INDEX orders_total ON orders (total)", isolate=True).ok
    objects = copy.execute("SELECT name FROM sqlite_master WHERE type IN ('trigger', 'index')")
    assert objects.rows == []


def test_sqlite_non_isolated_calls_keep_their_effects(copy: SQLiteExecutor) -> None:
    assert copy.execute("ALTER TABLE orders ADD COLUMN c INTEGER").ok
    assert copy.execute("UPDATE orders SET c = 1", isolate=True).ok
    assert copy.execute("SELECT count(*) FROM orders WHERE c IS NULL").rows == [[4]]
    assert copy.execute(NEW_CUSTOMER).ok
    assert _count(copy, "customers") == 5


def test_sqlite_transaction_control_is_blocked_and_nothing_stays(copy: SQLiteExecutor) -> None:
    for text in (f"{NEW_CUSTOMER}; COMMIT", "COMMIT", "END", f"BEGIN; {NEW_CUSTOMER}"):
        assert copy.execute(text, isolate=True).status == "blocked", text
    assert _count(copy, "customers") == 4
    assert not copy._conn.in_transaction


def test_sqlite_timeouts_and_row_caps_still_apply(copy: SQLiteExecutor) -> None:
    started = time.monotonic()
    slow = copy.execute(f"{NEW_CUSTOMER}; {ENDLESS_INSERT}", isolate=True, timeout=0.5)
    assert slow.status == "timeout" and time.monotonic() - started < 2
    assert _count(copy, "orders") == 4 and _count(copy, "customers") == 4
    capped = copy.execute(f"{NEW_CUSTOMER}; {FIFTY_K}", isolate=True, max_rows=10)
    assert capped.row_count == 10 and capped.truncated
    batch = copy.execute(f"{NEW_CUSTOMER}; {FIFTY_K}; SELECT count(*) FROM customers", isolate=True)
    assert batch.rows == [[5]]
    assert _count(copy, "customers") == 4
    assert not copy._conn.in_transaction


def test_sqlite_a_failure_ends_the_run_and_rolls_back(copy: SQLiteExecutor) -> None:
    failed = copy.execute(f"{NEW_CUSTOMER}; SELECT nope FROM customers", isolate=True)
    assert failed.error_kind == "schema"
    assert _count(copy, "customers") == 4


def test_sqlite_read_only_ignores_isolate(shop: SQLiteExecutor, shop_path: Path) -> None:
    before = _digest(shop_path)
    assert shop.execute("SELECT count(*) FROM orders", isolate=True).rows == [[4]]
    assert shop.execute("DROP TABLE orders", isolate=True).status == "blocked"
    assert _digest(shop_path) == before


def test_sqlite_the_users_file_never_changes(copy: SQLiteExecutor, shop_path: Path) -> None:
    before = _digest(shop_path)
    copy.execute("DROP TABLE orders", isolate=True)
    copy.execute("DELETE FROM customers")
    assert _digest(shop_path) == before


# ------------------------------------------------------------------ DuckDB


@pytest.fixture
def duck(tmp_path: Path):
    path = tmp_path / "shop.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute(
        "CREATE SEQUENCE ids; CREATE TABLE t (id INTEGER DEFAULT nextval('ids') PRIMARY KEY, "
        "x INTEGER); INSERT INTO t (x) VALUES (1), (2), (3)"
    )
    conn.close()
    executor = DuckDBExecutor(path, allow_writes=True)
    yield executor
    executor.close()


def test_duckdb_isolated_runs_leave_the_copy_as_it_was(duck: DuckDBExecutor) -> None:
    assert duck.execute("DROP TABLE t", isolate=True).ok
    assert _count(duck, "t") == 3
    for _ in range(2):
        assert duck.execute("ALTER TABLE t ADD COLUMN c INTEGER", isolate=True).ok
    inserted = duck.execute("INSERT INTO t (x) VALUES (9); SELECT count(*) FROM t", isolate=True)
    assert inserted.rows == [[4]]
    assert _count(duck, "t") == 3
    assert duck.execute("COMMIT", isolate=True).status == "blocked"
    slow = duck.execute(
        "INSERT INTO t (x) VALUES (9); SELECT count(*) FROM range(100000000000) a, range(10) b",
        isolate=True,
        timeout=0.5,
    )
    assert slow.status == "timeout"
    assert _count(duck, "t") == 3
    # non-isolated calls keep their effects, as before
    assert duck.execute("INSERT INTO t (x) VALUES (9)").ok
    assert _count(duck, "t") == 4


def test_duckdb_sequences_an_isolated_run_moved_are_set_back(duck: DuckDBExecutor) -> None:
    """DuckDB does not roll back nextval: the executor sets moved sequences back."""
    insert = "INSERT INTO t (x) VALUES (9); SELECT max(id) FROM t"
    assert [duck.execute(insert, isolate=True).rows for _ in range(3)] == [[[4]]] * 3
    assert _count(duck, "t") == 3
    # a sequence never used before goes back to unused; each step sees the same values
    assert duck.execute("CREATE SEQUENCE fresh START 10 INCREMENT BY 5").ok  # kept
    both = "SELECT nextval('fresh'), nextval('ids')"
    assert [duck.execute(both, isolate=True).rows for _ in range(3)] == [[[10, 4]]] * 3
    # a kept call moves them for good, and isolated runs then start from there
    assert duck.execute("INSERT INTO t (x) VALUES (9) RETURNING id").rows == [[4]]
    assert duck.execute(both).rows == [[10, 5]]
    assert [duck.execute(both, isolate=True).rows for _ in range(2)] == [[[15, 6]]] * 2
    assert duck.execute("INSERT INTO t (x) VALUES (9) RETURNING id").rows == [[6]]


def test_duckdb_sequences_of_a_kept_call_after_a_restore_stay_moved(
    duck: DuckDBExecutor,
) -> None:
    """A sequence set back to 'never used' still shows a value: a kept nextval that
    returns the start must count as a move (no duplicate id afterwards)."""
    assert duck.execute("CREATE SEQUENCE one_step START 1").ok
    assert duck.execute("SELECT nextval('one_step')", isolate=True).rows == [[1]]
    assert duck.execute("SELECT nextval('one_step')").rows == [[1]]  # kept: now used
    assert duck.execute("SELECT nextval('one_step')", isolate=True).rows == [[2]]
    assert duck.execute("SELECT nextval('one_step')", isolate=True).rows == [[2]]


# ------------------------------------------------------------------ DB-API (SQL Server, Oracle)


def test_sql_server_batches_are_rolled_back_isolated_or_not() -> None:
    connector = Connector()
    executor = MSSQLExecutor(connector, allow_writes=True)
    assert executor.execute("DELETE FROM t WHERE id = 1", isolate=True).ok
    assert executor.execute("DELETE FROM t WHERE id = 2").ok
    sent = connector.last.sent
    assert sent.count("BEGIN TRANSACTION") == 2 and sent.count(mssql.rollback_sql()) == 2
    assert executor.execute("DELETE FROM t; COMMIT", isolate=True).status == "blocked"


def test_oracle_batches_are_rolled_back_isolated_or_not() -> None:
    connector = Connector()
    executor = OracleExecutor(connector, allow_writes=True)
    assert executor.execute("DELETE FROM t WHERE id = 1", isolate=True).ok
    assert connector.last.log[-1] == "<rollback>" and "<COMMIT>" not in connector.last.log
    # Oracle commits around DDL, which no rollback could undo: blocked, isolated or not
    assert executor.execute("CREATE TABLE x (a NUMBER)", isolate=True).status == "blocked"
