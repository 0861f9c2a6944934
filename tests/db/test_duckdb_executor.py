"""The DuckDB executor against real DuckDB files made in the test."""

from __future__ import annotations

import hashlib
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from acts_sql.db import base, duckdb_executor
from acts_sql.db.duckdb_executor import DuckDBExecutor, caret_position, open_url
from acts_sql.db.executor import Executor, ScratchSession
from acts_sql.errors import DatabaseOpenError

CORPUS = Path(__file__).resolve().parents[1] / "fixtures" / "sql" / "safety" / "corpus.tsv"


def load_corpus() -> list[tuple[str, str, str]]:
    """(dialect, verdict, sql) per corpus line; format in tests/sql/test_sql_safety_corpus.py."""
    escapes = {"n": "\n", "t": "\t", "\\": "\\"}
    cases = []
    for line in CORPUS.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            dialect, verdict, sql = line.split("\t", 2)
            sql = re.sub(r"\\(.)", lambda m: escapes.get(m.group(1), m.group(0)), sql)
            cases.append((dialect, verdict, sql))
    return cases


SHOP = """
CREATE TABLE customers (customer_id INTEGER PRIMARY KEY, name VARCHAR NOT NULL, city VARCHAR);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER REFERENCES customers (customer_id),
    total DECIMAL(10, 2)
);
CREATE VIEW big_orders AS SELECT order_id, total FROM orders WHERE total > 100;
INSERT INTO customers VALUES (1, 'Ana', 'Lisbon'), (2, 'Ben', NULL), (3, 'Chloe', 'Oslo');
INSERT INTO orders VALUES (1, 1, 50.5), (2, 1, 150.0), (3, 2, 999.99);
"""


@pytest.fixture(scope="module")
def shop_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("template") / "shop.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute(SHOP)
    conn.close()
    return path


@pytest.fixture
def shop_path(shop_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the shop database for each test."""
    path = tmp_path / "shop.duckdb"
    shutil.copy2(shop_template, path)
    return path


@pytest.fixture
def shop(shop_path: Path) -> Iterator[DuckDBExecutor]:
    executor = DuckDBExecutor(shop_path)
    yield executor
    executor.close()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def table_digests(path: Path) -> dict[str, str]:
    conn = duckdb.connect(str(path), read_only=True)
    try:
        names = [
            row[0] for row in conn.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        ]
        return {
            name: str(
                conn.execute(
                    f"SELECT md5(string_agg(t::VARCHAR, '|' ORDER BY t::VARCHAR)) "
                    f'FROM "{name}" AS t'
                ).fetchone()
            )
            for name in names
        }
    finally:
        conn.close()


# ------------------------------------------------------------------ running


def test_implements_the_protocol(shop: DuckDBExecutor) -> None:
    assert isinstance(shop, Executor)
    with shop.scratch() as session:
        assert isinstance(session, ScratchSession)


def test_select_returns_typed_rows(shop: DuckDBExecutor) -> None:
    result = shop.execute("SELECT name, city FROM customers ORDER BY customer_id")
    assert result.ok and result.columns == ["name", "city"]
    assert result.rows == [["Ana", "Lisbon"], ["Ben", None], ["Chloe", "Oslo"]]
    assert result.row_count == 3 and not result.truncated and result.seconds > 0


def test_decimals_and_reads_of_every_kind(shop: DuckDBExecutor) -> None:
    assert shop.execute("SELECT total FROM orders WHERE order_id = 1").rows == [[50.5]]
    for sql in [
        "SHOW TABLES",
        "DESCRIBE orders",
        "SUMMARIZE orders",
        "EXPLAIN SELECT 1",
        "PRAGMA table_info('orders')",
        "FROM big_orders",
        "SELECT 1; SELECT 2",
    ]:
        assert shop.execute(sql).ok, sql


def test_row_cap_truncates_fifty_thousand_rows(shop: DuckDBExecutor) -> None:
    result = shop.execute("SELECT * FROM range(50000)")
    assert result.row_count == 10_000 and result.truncated
    capped = shop.execute("SELECT * FROM range(50000)", max_rows=7)
    assert capped.row_count == 7 and capped.truncated and capped.rows[-1] == [6]
    exact = shop.execute("SELECT * FROM range(7)", max_rows=7)
    assert exact.row_count == 7 and not exact.truncated


def test_executor_defaults_come_from_open_url(shop_path: Path) -> None:
    executor = open_url(f"duckdb:///{shop_path}", timeout=None, max_rows=5)
    try:
        assert executor.execute("SELECT * FROM range(50)").row_count == 5
    finally:
        executor.close()


def test_slow_statement_times_out_quickly(shop: DuckDBExecutor) -> None:
    started = time.monotonic()
    result = shop.execute("SELECT count(*) FROM range(10000000000) a, range(1000) b", timeout=0.5)
    assert result.status == "timeout" and result.error_kind == "timeout"
    assert result.error == "timeout: statement exceeded 0.5 s"
    assert time.monotonic() - started < 2.0
    assert shop.execute("SELECT 42").rows == [[42]]  # the connection is still usable


def test_a_quick_statement_is_not_interrupted_later(shop: DuckDBExecutor) -> None:
    assert shop.execute("SELECT 1", timeout=0.05).ok
    time.sleep(0.1)
    assert shop.execute("SELECT count(*) FROM range(1000000)").ok


@pytest.mark.parametrize(
    ("sql", "kind", "code"),
    [
        ("SELEC 1", "syntax", "ParserException"),
        ("SELECT * FROM customers WHERE", "syntax", "ParserException"),
        ("SELECT nope FROM customers", "schema", "BinderException"),
        ("SELECT * FROM nowhere", "schema", "CatalogException"),
        ("SELECT CAST('abc' AS INTEGER)", "type", "ConversionException"),
        ("SELECT 'a' + 1", "type", "BinderException"),
        ("SELECT name FROM customers GROUP BY city", "runtime", "BinderException"),
        ("SELECT 2147483647::INTEGER + 1", "runtime", "OutOfRangeException"),
    ],
)
def test_errors_are_typed(shop: DuckDBExecutor, sql: str, kind: str, code: str) -> None:
    result = shop.execute(sql)
    assert (result.status, result.error_kind, result.error_code) == ("error", kind, code)
    assert result.error


def test_error_position_points_into_the_callers_text(shop: DuckDBExecutor) -> None:
    sql = "SELECT 1;\nSELECT name,\n  nope FROM customers"
    result = shop.execute(sql)
    assert result.error_kind == "schema"
    assert result.error_position is not None
    assert sql[result.error_position - 1 :].startswith("nope")


def test_caret_position_reads_duckdb_carets() -> None:
    message = "Binder Error: x\n\nLINE 2:   nope FROM t\n          ^^^^"
    assert caret_position(message, "SELECT a,\n  nope FROM t") == 13
    assert caret_position("no caret here", "SELECT 1") is None
    assert caret_position("E\nLINE 1: ...truncated\n        ^", "SELECT 1") is None


# ------------------------------------------------------------------ read-only


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM orders",
        "DROP TABLE customers",
        "WITH d AS (SELECT 1) INSERT INTO orders VALUES (9, 1, 1)",
        "SELECT 1; UPDATE orders SET total = 0",
        "CREATE TEMP TABLE x AS SELECT 1",
        "COPY orders TO 'out.csv'",
        "ATTACH 'other.duckdb'",
        "SET threads = 1",
    ],
)
def test_writes_are_blocked_and_the_file_is_unchanged(shop_path: Path, sql: str) -> None:
    before = file_digest(shop_path)
    with DuckDBExecutor(shop_path) as executor:
        result = executor.execute(sql)
        assert result.status == "blocked" and result.error_kind == "blocked"
        assert result.error and result.error.startswith("blocked: ")
        assert executor.execute("SELECT count(*) FROM orders").rows == [[3]]
    assert file_digest(shop_path) == before


def test_the_whole_corpus_leaves_every_table_unchanged(shop_path: Path) -> None:
    """Every corpus statement, of every dialect, is sent; DuckDB's own lines
    marked block never run."""
    before_file, before_tables = file_digest(shop_path), table_digests(shop_path)
    cases = load_corpus()
    assert len(cases) >= 80
    with DuckDBExecutor(shop_path) as executor:
        for dialect, verdict, sql in cases:
            result = executor.execute(sql, timeout=2)
            if dialect == "duckdb" and verdict == "block":
                assert result.status == "blocked", sql
    assert table_digests(shop_path) == before_tables
    assert file_digest(shop_path) == before_file


def test_duckdbs_own_parser_is_a_second_line(
    shop: DuckDBExecutor, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even if the guard let a write through, DuckDB's statement types stop it."""
    from acts_sql.sql.safety import SafetyVerdict

    monkeypatch.setattr(base, "check_statement", lambda *a, **k: SafetyVerdict(allowed=True))
    result = shop.execute("DELETE FROM orders")
    assert result.status == "blocked" and "DELETE" in (result.error or "")
    assert shop.execute("SELECT count(*) FROM orders").rows == [[3]]


def test_the_read_only_connection_is_the_last_line(shop: DuckDBExecutor) -> None:
    """Statements sent straight to the connection still cannot write or read files."""
    conn = shop._conn
    write = duckdb_executor.run_statement(conn, "DELETE FROM orders", 10, 5)
    assert write.status == "blocked" and write.error == "blocked: writes are not allowed"
    outside = duckdb_executor.run_statement(conn, "SELECT * FROM read_csv('/etc/hosts')", 10, 5)
    assert outside.status == "blocked" and "disabled" in (outside.error or "")
    extension = duckdb_executor.run_statement(conn, "LOAD httpfs", 10, 5)
    assert extension.status == "blocked"


def test_unparseable_text_gets_duckdbs_own_syntax_error(shop: DuckDBExecutor) -> None:
    result = shop.execute("SELECT * FROM customers WHERE name = 'x' ORDER")
    assert result.status == "error" and result.error_kind == "syntax"
    assert result.error and "Parser Error" in result.error


def test_empty_text_is_an_error(shop: DuckDBExecutor) -> None:
    result = shop.execute("  -- nothing\n ")
    assert result.status == "error" and result.error == "no SQL statement to execute"


# ------------------------------------------------------------------ writes on a copy


def test_allow_writes_works_on_a_copy_that_is_deleted(shop_path: Path) -> None:
    before = file_digest(shop_path)
    executor = DuckDBExecutor(shop_path, allow_writes=True)
    copy = executor.database_path
    assert copy != shop_path and copy.exists()
    result = executor.execute("DELETE FROM orders WHERE total < 100; SELECT count(*) FROM orders")
    assert result.rows == [[2]]
    assert executor.execute("CREATE TABLE audit AS SELECT * FROM orders").ok
    assert executor.execute("COPY orders TO 'x.csv'").status == "blocked"
    assert executor.execute("ATTACH 'x.duckdb'").status == "blocked"
    executor.close()
    assert not copy.exists() and not copy.parent.exists()
    assert file_digest(shop_path) == before


# ------------------------------------------------------------------ reflection


def test_reflect_gives_ddl_columns_keys_and_samples(shop: DuckDBExecutor) -> None:
    tables = {t.name: t for t in shop.reflect(sample_rows=2)}
    assert list(tables) == ["customers", "orders", "big_orders"]
    orders = tables["orders"]
    assert orders.ddl.startswith("CREATE TABLE orders") and "REFERENCES customers" in orders.ddl
    assert [c.name for c in orders.columns] == ["order_id", "customer_id", "total"]
    assert [c.primary_key for c in orders.columns] == [True, False, False]
    assert tables["customers"].columns[1].nullable is False
    assert orders.row_count == 3 and len(orders.sample_rows) == 2
    assert tables["big_orders"].ddl.startswith("CREATE VIEW big_orders")
    assert tables["big_orders"].row_count is None


# ------------------------------------------------------------------ scratch sessions


def test_stand_ins_are_private_empty_and_resolve_unqualified_names(
    shop: DuckDBExecutor, shop_path: Path
) -> None:
    before = file_digest(shop_path)
    with shop.scratch() as session, shop.scratch() as other:
        assert session.create_stand_in("recent", ["order_id", "total"]).ok
        unit = session.execute(
            "SELECT c.name, sum(r.total) + 1, max(upper(r.order_id)) FROM recent AS r "
            "JOIN customers AS c ON c.customer_id = r.order_id GROUP BY c.name"
        )
        assert unit.ok and unit.rows == []
        assert session.execute("SELECT count(*) FROM customers").rows == [[3]]
        assert other.execute("SELECT * FROM recent").error_kind == "schema"
        assert shop.execute("SELECT * FROM recent").error_kind == "schema"
        assert session.execute("DROP TABLE recent").status == "blocked"
        assert session.create_stand_in("empty", []).status == "error"
    with shop.scratch() as later:
        assert later.execute("SELECT * FROM recent").error_kind == "schema"
    assert file_digest(shop_path) == before


def test_scratch_sessions_time_out_too(shop: DuckDBExecutor) -> None:
    with shop.scratch() as session:
        result = session.execute(
            "SELECT count(*) FROM range(10000000000) a, range(1000) b", timeout=0.3
        )
    assert result.status == "timeout"


# ------------------------------------------------------------------ opening


def test_open_url_forms(shop_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    urls = (f"duckdb:///{shop_path.name}", f"duckdb:///{shop_path}", str(shop_path), shop_path.name)
    for url in urls:
        executor = open_url(url, timeout=None, max_rows=None)
        assert executor.execute("SELECT count(*) FROM customers").rows == [[3]]
        executor.close()


def test_open_url_errors(tmp_path: Path) -> None:
    text = tmp_path / "notes.duckdb"
    text.write_text("not a database at all")
    with pytest.raises(DatabaseOpenError, match="not found"):
        open_url(f"duckdb:///{tmp_path / 'missing.duckdb'}", timeout=None, max_rows=None)
    with pytest.raises(DatabaseOpenError, match="not a DuckDB database"):
        open_url(f"duckdb:///{text}", timeout=None, max_rows=None)
    with pytest.raises(DatabaseOpenError, match="needs a file"):
        open_url("duckdb://", timeout=None, max_rows=None)
    with pytest.raises(DatabaseOpenError, match="not a DuckDB URL"):
        open_url("sqlite:///x.db", timeout=None, max_rows=None)
    with pytest.raises(DatabaseOpenError, match="directory"):
        open_url(f"duckdb:///{tmp_path}", timeout=None, max_rows=None)
