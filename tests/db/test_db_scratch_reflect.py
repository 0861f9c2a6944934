"""Scratch sessions (stand-in tables, concurrency) and schema reflection."""

from __future__ import annotations

import hashlib
import threading
from pathlib import Path

from acts_sql.db.executor import ScratchSession
from acts_sql.db.sqlite import SQLiteExecutor


def test_stand_in_shadows_a_real_table(shop: SQLiteExecutor) -> None:
    with shop.scratch() as session:
        assert isinstance(session, ScratchSession)
        assert session.create_stand_in("orders", ["order_id", "total"]).ok
        result = session.execute("SELECT * FROM orders")
        assert result.ok and result.columns == ["order_id", "total"] and result.rows == []
        assert session.execute("SELECT count(*) FROM customers").rows == [[4]]
    assert shop.execute("SELECT count(*) FROM orders").rows == [[4]]


def test_stand_in_quotes_identifiers(shop: SQLiteExecutor) -> None:
    with shop.scratch() as session:
        assert session.create_stand_in('odd "name"', ["col one", 'q"uote', "select"]).ok
        result = session.execute('SELECT "col one", "q""uote", "select" FROM "odd ""name"""')
        assert result.ok and result.columns == ["col one", 'q"uote', "select"]


def test_stand_in_needs_columns(shop: SQLiteExecutor) -> None:
    with shop.scratch() as session:
        assert session.create_stand_in("t", []).status == "error"


def test_scratch_cannot_write_the_file(shop: SQLiteExecutor, shop_path: Path) -> None:
    before = hashlib.sha256(shop_path.read_bytes()).hexdigest()
    with shop.scratch() as session:
        assert session.execute("DELETE FROM orders").status == "blocked"
        assert session.execute(f"ATTACH '{shop_path.parent}/x.db' AS x").status == "blocked"
        session.create_stand_in("tmp", ["a"])
        assert session.execute("INSERT INTO tmp VALUES (1); SELECT a FROM tmp").rows == [[1]]
    assert hashlib.sha256(shop_path.read_bytes()).hexdigest() == before
    assert not (shop_path.parent / "x.db").exists()


def test_closing_the_session_drops_stand_ins(shop: SQLiteExecutor) -> None:
    with shop.scratch() as session:
        session.create_stand_in("ghost", ["a"])
    with shop.scratch() as session:
        assert session.execute("SELECT * FROM ghost").error_kind == "schema"
    assert shop.execute("SELECT * FROM ghost").error_kind == "schema"


def test_concurrent_scratch_sessions_are_isolated(shop: SQLiteExecutor) -> None:
    workers = 6
    barrier = threading.Barrier(workers)
    seen: dict[int, object] = {}

    def work(k: int) -> None:
        with shop.scratch() as session:
            session.create_stand_in("orders", ["order_id", "worker"])
            session.execute(f"INSERT INTO orders VALUES ({k}, 'w{k}')")
            barrier.wait(timeout=5)  # every session holds its stand-in at once
            result = session.execute("SELECT order_id, worker FROM orders")
            long_one = session.execute(
                "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 20000)"
                " SELECT count(*) FROM r"
            )
            seen[k] = (result.rows, long_one.rows)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert seen == {k: ([[k, f"w{k}"]], [[20000]]) for k in range(workers)}
    assert shop.execute("SELECT count(*) FROM orders").rows == [[4]]


def test_reflect(shop: SQLiteExecutor) -> None:
    tables = shop.reflect(sample_rows=2)
    assert [t.name for t in tables] == ["customers", "orders", "big_orders"]
    customers, orders, view = tables
    assert customers.ddl.startswith("CREATE TABLE customers")
    assert [c.name for c in customers.columns] == ["customer_id", "name", "city"]
    assert customers.columns[0].primary_key and customers.columns[0].type == "INTEGER"
    assert not customers.columns[1].nullable and customers.columns[2].nullable
    assert customers.row_count == 4
    assert customers.sample_rows == [[1, "Ana", "Lisbon"], [2, "Ben", None]]
    assert orders.sample_rows[0][3] == "00ff"
    assert view.ddl.startswith("CREATE VIEW") and view.row_count is None
    assert [c.name for c in view.columns] == ["order_id", "total"]
    assert shop.reflect(sample_rows=0)[0].sample_rows == []
