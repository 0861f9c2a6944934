"""The shipped demo database: reproducible, small, with the paper's data traits."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from acts_sql.demo import demo_db_path
from acts_sql.demo.build import build_demo_db


def _contents(path: Path) -> dict[str, object]:
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = conn.execute(
            "SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name"
        ).fetchall()
        return {
            name: (ddl, conn.execute(f'SELECT * FROM "{name}" ORDER BY rowid').fetchall())
            for name, ddl in tables
        }
    finally:
        conn.close()


def test_shipped_file_equals_a_fresh_build(tmp_path: Path) -> None:
    shipped = demo_db_path()
    assert shipped.is_file()
    fresh = build_demo_db(tmp_path / "fresh.sqlite")
    assert _contents(fresh) == _contents(shipped)
    assert not list(tmp_path.glob("*.tmp"))


def test_small_and_complete() -> None:
    contents = _contents(demo_db_path())
    assert set(contents) == {"products", "orders", "order_lines", "sales", "rooms", "bookings"}
    total = sum(len(rows) for _ddl, rows in contents.values())  # type: ignore[misc]
    assert 200 <= total <= 1000


def test_electronics_only_inside_longer_categories() -> None:
    conn = sqlite3.connect(f"file:{demo_db_path()}?mode=ro", uri=True)
    try:
        categories = {row[0] for row in conn.execute("SELECT DISTINCT category FROM products")}
        assert "Electronics" not in categories
        assert {"Home Electronics", "Electronics/Audio"} <= categories
        assert (
            conn.execute("SELECT name FROM products WHERE category = 'Electronics'").fetchall()
            == []
        )
        kinds = {row[0] for row in conn.execute("SELECT description FROM order_lines")}
        assert all(d.split("x", 1)[0].isdigit() for d in kinds)
        assert any(d.endswith("xHome Electronics") for d in kinds)
        assert any(d.endswith("xElectronics/Audio") for d in kinds)
        years = {
            row[0] for row in conn.execute("SELECT DISTINCT substr(sale_date, 1, 4) FROM sales")
        }
        assert years == {"2021", "2022", "2023"}
    finally:
        conn.close()
