"""Schema reflection on live servers: DDL with keys, sample rows, counts, relevance."""

from __future__ import annotations

from live import Engine

from acts_sql.db.connect import open_database
from acts_sql.db.schema import render_schema


def test_reflect_reconstructs_tables_keys_samples_and_counts(server: Engine) -> None:
    with open_database(server.url) as executor:
        tables = {t.name: t for t in executor.reflect(sample_rows=2)}
    assert set(tables) == {"customers", "orders", "rooms", "bookings", "big_orders"}
    orders = tables["orders"]
    assert orders.row_count == 4 and len(orders.sample_rows) == 2
    q = "`" if server.name == "mysql" else '"'
    assert orders.ddl.startswith(f"CREATE TABLE {q}orders{q} (")
    assert f"PRIMARY KEY ({q}id{q})" in orders.ddl
    assert f"FOREIGN KEY ({q}customer_id{q}) REFERENCES {q}customers{q} ({q}id{q})" in orders.ddl
    assert f"{q}customer_id{q} int" in orders.ddl and "NOT NULL" in orders.ddl
    assert [c.name for c in orders.columns] == ["id", "customer_id", "total", "placed_at"]
    assert orders.columns[0].primary_key and not orders.columns[1].nullable
    view = tables["big_orders"]
    assert view.ddl.startswith("CREATE VIEW") and view.row_count is None
    assert tables["customers"].sample_rows[0][:2] == [1, "Ana"]


def test_render_schema_puts_tables_whose_values_are_mentioned_first(server: Engine) -> None:
    with open_database(server.url) as executor:
        tables = executor.reflect(sample_rows=3)
    text = render_schema(tables, max_chars=10_000, focus_terms=["'Atlas'"])
    assert text.index("rooms") < text.index("customers")
    text = render_schema(tables, max_chars=10_000, focus_terms=["lisbon"])
    assert text.index("customers") < text.index("rooms")
