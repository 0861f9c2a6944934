"""Fixtures for the database layer: a small SQLite file made per test."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from acts_sql.db.sqlite import SQLiteExecutor

SHOP_SQL = """
CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    city TEXT
);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER REFERENCES customers(customer_id),
    total REAL,
    note BLOB
);
CREATE VIEW big_orders AS SELECT order_id, total FROM orders WHERE total > 100;
INSERT INTO customers (name, city) VALUES ('Ana', 'Lisbon'), ('Ben', NULL), ('Chloe', 'Oslo'),
    ('Dev', 'Pune');
INSERT INTO orders VALUES (1, 1, 50.5, x'00ff'), (2, 1, 150.0, NULL), (3, 2, 999.99, NULL),
    (4, 3, 12.0, randomblob(100));
"""


@pytest.fixture
def shop_path(tmp_path: Path) -> Path:
    path = tmp_path / "shop.db"
    conn = sqlite3.connect(path)
    conn.executescript(SHOP_SQL)
    conn.commit()
    conn.close()
    return path


@pytest.fixture
def shop(shop_path: Path) -> Iterator[SQLiteExecutor]:
    executor = SQLiteExecutor(shop_path)
    yield executor
    executor.close()
