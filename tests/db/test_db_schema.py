"""render_schema: DDL with sample rows, focus ordering, character budget."""

from __future__ import annotations

import pytest

from acts_sql.db.executor import ColumnInfo, TableInfo
from acts_sql.db.schema import order_tables, render_schema
from acts_sql.db.sqlite import SQLiteExecutor


def _table(name: str, columns: list[str], rows: int = 3) -> TableInfo:
    ddl = f"CREATE TABLE {name} ({', '.join(c + ' TEXT' for c in columns)})"
    sample = [[f"{name}-{c}-{i}" for c in columns] for i in range(rows)]
    return TableInfo(
        name=name,
        ddl=ddl,
        columns=[ColumnInfo(name=c) for c in columns],
        sample_rows=sample,
        row_count=rows * 10,
    )


TABLES = [_table(f"table_{i:02d}", ["alpha", "beta", "gamma"]) for i in range(20)] + [
    _table("rooms", ["room_id", "name"]),
    _table("bookings", ["booking_id", "room_id", "start_time", "end_time"]),
]


def test_everything_fits_with_a_large_budget() -> None:
    text = render_schema(TABLES, max_chars=100_000)
    assert text.count("CREATE TABLE") == len(TABLES)
    assert "-- bookings: 30 row(s), first 3:" in text
    assert "'bookings-start_time-0'" in text
    assert "omitted" not in text


def test_samples_go_before_tables() -> None:
    full = render_schema(TABLES, max_chars=100_000)
    ddl_only = sum(len(t.ddl) + 1 for t in TABLES) + 2 * (len(TABLES) - 1)
    text = render_schema(TABLES, max_chars=ddl_only + 300)
    assert len(text) <= ddl_only + 300 < len(full)
    assert text.count("CREATE TABLE") == len(TABLES)
    assert "first 3" in text  # the first tables keep their samples
    assert "omitted" not in text


@pytest.mark.parametrize("budget", [200, 500, 1000, 2000, 4000, 6000])
def test_budget_is_respected(budget: int) -> None:
    text = render_schema(TABLES, max_chars=budget)
    assert len(text) <= budget
    assert text.startswith("CREATE TABLE")


def test_omitted_tables_are_counted() -> None:
    text = render_schema(TABLES, max_chars=600)
    kept = text.count("CREATE TABLE")
    assert 0 < kept < len(TABLES)
    assert f"-- ... {len(TABLES) - kept} more tables omitted" in text
    assert "first 3" not in text


def test_tiny_budget_still_returns_something() -> None:
    text = render_schema(TABLES, max_chars=40)
    assert 0 < len(text) <= 40


def test_focus_terms_come_first() -> None:
    ordered = order_tables(TABLES, ["Which rooms have overlapping bookings?"])
    assert [t.name for t in ordered[:2]] == ["bookings", "rooms"]
    assert [t.name for t in ordered[2:]] == [t.name for t in TABLES[:20]]
    text = render_schema(TABLES, max_chars=600, focus_terms=["bookings", "rooms"])
    assert text.startswith("CREATE TABLE bookings")
    assert "CREATE TABLE rooms" in text


def test_no_focus_keeps_order() -> None:
    assert order_tables(TABLES, []) == TABLES
    assert render_schema([]) == ""


def test_long_cells_are_cut() -> None:
    table = _table("notes", ["body"], rows=1)
    table.sample_rows = [["x" * 500]]
    text = render_schema([table])
    assert "x" * 40 not in text and "…" in text


def test_renders_a_reflected_database(shop: SQLiteExecutor) -> None:
    text = render_schema(shop.reflect(), focus_terms=["orders"])
    assert text.startswith("CREATE TABLE orders")
    assert "CREATE VIEW big_orders" in text
    assert "'Lisbon'" in text and "NULL" in text
