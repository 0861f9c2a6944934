"""SQLiteExecutor.execute: read-only, timeouts, row caps, error kinds, statements."""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

import pytest

from acts_sql.db.executor import DEFAULT_TIMEOUT_S, RECURSIVE_TIMEOUT_S, Executor, statement_timeout
from acts_sql.db.sqlite import SQLiteExecutor

ENDLESS = "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r) SELECT count(*) FROM r"
FIFTY_K = (
    "WITH RECURSIVE r(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM r WHERE i < 50000) "
    "SELECT i FROM r"
)


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_is_an_executor(shop: SQLiteExecutor) -> None:
    assert isinstance(shop, Executor)
    assert shop.dialect == "sqlite"


def test_select_returns_typed_rows(shop: SQLiteExecutor) -> None:
    result = shop.execute("SELECT customer_id, name, city FROM customers ORDER BY customer_id")
    assert result.ok
    assert result.columns == ["customer_id", "name", "city"]
    assert result.rows[:2] == [[1, "Ana", "Lisbon"], [2, "Ben", None]]
    assert result.row_count == 4
    assert not result.truncated
    assert result.seconds >= 0


@pytest.mark.parametrize(
    "statement",
    [
        "INSERT INTO customers (name) VALUES ('Eve')",
        "UPDATE orders SET total = 0",
        "DELETE FROM orders",
        "DROP TABLE orders",
        "CREATE TABLE hacked (x)",
        "ALTER TABLE orders ADD COLUMN y",
        "CREATE INDEX idx ON orders(total)",
        "SELECT 1; DROP TABLE customers",
    ],
)
def test_writes_are_blocked_and_file_unchanged(
    shop: SQLiteExecutor, shop_path: Path, statement: str
) -> None:
    before = _digest(shop_path)
    result = shop.execute(statement)
    assert result.status == "blocked"
    assert result.error_kind == "blocked"
    assert (result.error or "").startswith("blocked: writes are not allowed")
    assert _digest(shop_path) == before
    assert shop.execute("SELECT count(*) FROM orders").rows == [[4]]


@pytest.mark.parametrize(
    "statement",
    [
        "ATTACH DATABASE '{dir}/other.db' AS other",
        "VACUUM INTO '{dir}/copy.db'",
        "CREATE TEMP TABLE orders (x)",
        "PRAGMA case_sensitive_like = ON",
    ],
)
def test_side_doors_are_blocked(shop: SQLiteExecutor, shop_path: Path, statement: str) -> None:
    before = sorted(p.name for p in shop_path.parent.iterdir())
    result = shop.execute(statement.format(dir=shop_path.parent))
    assert result.status == "blocked", result
    assert result.error_kind == "blocked"
    assert result.error and result.error.startswith("blocked: ")
    assert sorted(p.name for p in shop_path.parent.iterdir()) == before
    assert shop.execute("SELECT count(*) FROM orders").rows == [[4]]


def test_read_pragmas_are_allowed(shop: SQLiteExecutor) -> None:
    assert shop.execute("PRAGMA table_info(orders)").row_count == 4
    assert shop.execute("SELECT name FROM pragma_table_info('orders')").row_count == 4


def test_timeout_stops_a_runaway_statement(shop: SQLiteExecutor) -> None:
    started = time.monotonic()
    result = shop.execute(ENDLESS, timeout=0.5)
    elapsed = time.monotonic() - started
    assert result.status == "timeout"
    assert result.error_kind == "timeout"
    assert "0.5" in (result.error or "")
    assert elapsed < 1.5
    assert shop.execute("SELECT 1").rows == [[1]]  # the connection is still usable


def test_default_timeouts_follow_bird_critic() -> None:
    assert statement_timeout(ENDLESS) == RECURSIVE_TIMEOUT_S == 15
    assert statement_timeout("  -- note\n/* c */ with\n  recursive x AS (SELECT 1) SELECT 1") == 15
    assert statement_timeout("WITH x AS (SELECT 1) SELECT * FROM x") == DEFAULT_TIMEOUT_S == 60
    assert statement_timeout("SELECT 'WITH RECURSIVE'") == 60


def test_row_cap_truncates(shop: SQLiteExecutor) -> None:
    result = shop.execute(FIFTY_K, max_rows=10_000)
    assert result.ok
    assert result.row_count == len(result.rows) == 10_000
    assert result.truncated
    assert result.rows[-1] == [10_000]
    assert shop.execute(FIFTY_K).row_count == 10_000  # the default cap
    small = shop.execute(FIFTY_K.replace("50000", "10000"), max_rows=10_000)
    assert small.row_count == 10_000 and not small.truncated


@pytest.mark.parametrize(
    ("statement", "kind"),
    [
        ("SELEC name FROM customers", "syntax"),
        ("SELECT name FROM customers WHERE", "syntax"),
        ("SELECT (1", "syntax"),
        ("SELECT 'unterminated", "syntax"),
        ("SELECT nope FROM customers", "schema"),
        ("SELECT * FROM nowhere", "schema"),
        ("SELECT no_such_fn(1)", "schema"),
        ("SELECT customer_id FROM customers, orders", "schema"),
        ("SELECT abs(1, 2)", "type"),
        ("SELECT * FROM customers ORDER BY 9", "runtime"),
    ],
)
def test_error_kinds(shop: SQLiteExecutor, statement: str, kind: str) -> None:
    result = shop.execute(statement)
    assert result.status == "error"
    assert result.error_kind == kind, result.error
    assert result.error
    assert result.error_code == "SQLITE_ERROR"


def test_empty_input_is_an_error(shop: SQLiteExecutor) -> None:
    result = shop.execute("  -- nothing here\n ; ")
    assert result.status == "error" and result.error_kind == "syntax"


def test_multiple_statements_return_the_last(shop: SQLiteExecutor) -> None:
    result = shop.execute(
        "SELECT 1; SELECT 'a;b' AS x; -- done;\nSELECT name FROM customers LIMIT 1"
    )
    assert result.ok and result.columns == ["name"] and result.rows == [["Ana"]]
    quoted = shop.execute("SELECT 'x;y' AS \"a;b\"; /* ; */ SELECT 2 AS two;")
    assert quoted.columns == ["two"] and quoted.rows == [[2]]


def test_multiple_statements_stop_at_first_error(shop: SQLiteExecutor) -> None:
    result = shop.execute("SELECT 1; SELECT * FROM nowhere; SELECT 3")
    assert result.status == "error" and result.error_kind == "schema"


def test_transactions_do_not_linger(shop: SQLiteExecutor) -> None:
    assert shop.execute("BEGIN; SELECT 1").status in ("ok", "blocked")  # the guard may refuse
    assert shop.execute("SELECT count(*) FROM customers").rows == [[4]]


def test_cells_are_json_safe(shop: SQLiteExecutor) -> None:
    result = shop.execute("SELECT note, 1e999, -1e999 FROM orders ORDER BY order_id")
    assert result.rows[0] == ["00ff", "inf", "-inf"]
    assert result.rows[1][0] is None
    assert result.rows[3][0] == "<blob 100 bytes>"
    json.dumps(result.model_dump())


def test_invalid_utf8_does_not_fail(shop: SQLiteExecutor) -> None:
    result = shop.execute("SELECT CAST(x'61ff62' AS TEXT)")
    assert result.ok and result.rows[0][0].startswith("a")


def test_summary_shows_truncation(shop: SQLiteExecutor) -> None:
    assert "10000+" in shop.execute(FIFTY_K).summary()
