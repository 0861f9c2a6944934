"""Builds the demo database: a small shop plus meeting rooms, fixed seed.

The data reproduces the three cases of the ACTS-SQL paper (see
``tasks.json``): ``order_lines.description`` reads ``"MxN"`` with N a product
type that contains 'Electronics' only inside longer values (Figure 1);
some rooms have several bookings that never intersect, others have
intersecting ones (Figure 3); and a few products sell in one big month
rather than steadily, so ranking by annual and by monthly sales disagree
(Section 5.4). Everything comes from ``random.Random(SEED)``, so two builds
hold the same rows.
"""

from __future__ import annotations

import random
import sqlite3
from datetime import date, timedelta
from pathlib import Path

SEED = 2608_15145

SCHEMA = """
CREATE TABLE products (
    product_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT NOT NULL,
    unit_price REAL NOT NULL
);
CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer TEXT NOT NULL,
    order_date TEXT NOT NULL
);
CREATE TABLE order_lines (
    line_id INTEGER PRIMARY KEY,
    order_id INTEGER NOT NULL REFERENCES orders(order_id),
    product_id INTEGER NOT NULL REFERENCES products(product_id),
    description TEXT NOT NULL -- 'MxN': M = quantity, N = product type
);
CREATE TABLE sales (
    sale_id INTEGER PRIMARY KEY,
    product_id INTEGER NOT NULL REFERENCES products(product_id),
    sale_date TEXT NOT NULL,
    quantity INTEGER NOT NULL,
    amount REAL NOT NULL
);
CREATE TABLE rooms (
    room_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    capacity INTEGER NOT NULL
);
CREATE TABLE bookings (
    booking_id INTEGER PRIMARY KEY,
    room_id INTEGER NOT NULL REFERENCES rooms(room_id),
    booked_by TEXT NOT NULL,
    start_time TEXT NOT NULL,
    end_time TEXT NOT NULL
);
"""

# category -> (name, unit price); 'Electronics' never stands alone.
CATALOG: dict[str, list[tuple[str, float]]] = {
    "Electronics/Audio": [
        ("Aria Headphones", 89.0),
        ("Pulse Earbuds", 49.0),
        ("Boom Speaker", 119.0),
        ("Echo Soundbar", 199.0),
        ("Vinyl Turntable", 249.0),
        ("Pocket Radio", 29.0),
    ],
    "Home Electronics": [
        ("Smart Thermostat", 129.0),
        ("Robot Vacuum", 299.0),
        ("Air Purifier", 159.0),
        ("LED Desk Lamp", 39.0),
        ("Video Doorbell", 99.0),
        ("Smart Plug", 19.0),
    ],
    "Garden Tools": [
        ("Pruning Shears", 24.0),
        ("Garden Hose", 35.0),
        ("Leaf Blower", 139.0),
        ("Lawn Mower", 349.0),
        ("Hedge Trimmer", 119.0),
        ("Watering Can", 15.0),
    ],
    "Kitchen": [
        ("Chef Knife", 59.0),
        ("Cast Iron Pan", 45.0),
        ("Espresso Maker", 229.0),
        ("Blender", 79.0),
        ("Toaster", 35.0),
        ("Kettle", 29.0),
    ],
}

# Products that sell in a single burst month of 2022 instead of steadily.
BURSTS: dict[str, tuple[int, int]] = {  # name -> (month, units in that month)
    "Hedge Trimmer": (6, 5),
    "Vinyl Turntable": (12, 8),
}
STEADY_MONTHS = 8  # a steady product sells in this many months of 2022

CUSTOMERS = ["Ana", "Ben", "Chloe", "Dev", "Eli", "Fay", "Gus", "Hana", "Ivo", "Jun"]
ROOMS = [
    ("Atlas", 8),
    ("Borealis", 12),
    ("Cedar", 4),
    ("Delta", 6),
    ("Ember", 10),
    ("Fjord", 20),
]
# room -> number of bookings on separate days; intersecting pairs added below.
ROOM_DAYS = {"Atlas": 3, "Borealis": 1, "Cedar": 4, "Delta": 1, "Ember": 2, "Fjord": 0}
BOOKING_DAYS = [0, 1, 2, 3, 4, 7, 10, 11]  # weekday offsets from FIRST_BOOKING_DAY
FIXED_BOOKINGS = [  # (room, day offset, start, end): two overlaps, one back-to-back run
    ("Atlas", 8, "09:00", "10:30"),
    ("Atlas", 8, "10:00", "11:00"),
    ("Ember", 9, "13:00", "17:00"),
    ("Ember", 9, "14:00", "15:00"),
    ("Borealis", 8, "09:00", "10:00"),
    ("Borealis", 8, "10:00", "11:00"),
    ("Borealis", 8, "11:00", "12:00"),
]
FIRST_BOOKING_DAY = date(2023, 3, 6)

Product = tuple[int, str, str, float]  # product_id, name, category, unit_price


def build_demo_db(path: str | Path) -> Path:
    """Write the demo database to ``path`` (replacing it) and return the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = target.with_name(target.name + ".tmp")
    scratch.unlink(missing_ok=True)
    rng = random.Random(SEED)
    conn = sqlite3.connect(scratch)
    try:
        conn.executescript(SCHEMA)
        products = _insert_products(conn)
        _insert_orders(conn, rng, products)
        _insert_sales(conn, rng, products)
        _insert_rooms_and_bookings(conn, rng)
        conn.commit()
        conn.execute("VACUUM")
    finally:
        conn.close()
    scratch.replace(target)
    return target


def _insert_products(conn: sqlite3.Connection) -> list[Product]:
    rows: list[Product] = []
    for category, items in CATALOG.items():
        for name, price in items:
            rows.append((len(rows) + 1, name, category, price))
    conn.executemany("INSERT INTO products VALUES (?, ?, ?, ?)", rows)
    return rows


def _insert_orders(conn: sqlite3.Connection, rng: random.Random, products: list[Product]) -> None:
    lines: list[tuple[int, int, int, str]] = []
    for order_id in range(1, 41):
        day = date(2022, 1, 3) + timedelta(days=rng.randrange(540))
        conn.execute(
            "INSERT INTO orders VALUES (?, ?, ?)",
            (order_id, rng.choice(CUSTOMERS), day.isoformat()),
        )
        for product_id, _name, category, _price in rng.sample(products, rng.randint(1, 4)):
            quantity = rng.randint(1, 5)
            lines.append((len(lines) + 1, order_id, product_id, f"{quantity}x{category}"))
    conn.executemany("INSERT INTO order_lines VALUES (?, ?, ?, ?)", lines)


def _insert_sales(conn: sqlite3.Connection, rng: random.Random, products: list[Product]) -> None:
    rows: list[tuple[int, int, str, int, float]] = []

    def add(product_id: int, year: int, month: int, quantity: int, price: float) -> None:
        day = date(year, month, rng.randint(1, 28)).isoformat()
        rows.append((len(rows) + 1, product_id, day, quantity, round(quantity * price, 2)))

    for product_id, name, _category, price in products:
        if name in BURSTS:
            month, units = BURSTS[name]
            for part in (units // 2, units - units // 2):
                add(product_id, 2022, month, part, price)
        else:
            for month in sorted(rng.sample(range(1, 13), STEADY_MONTHS)):
                add(product_id, 2022, month, rng.randint(1, 6), price)
        for year in (2021, 2023):  # outside the question's year
            add(product_id, year, rng.randint(1, 12), rng.randint(5, 20), price)
    rows.sort(key=lambda row: (row[2], row[1]))
    numbered = [(i, *row[1:]) for i, row in enumerate(rows, start=1)]
    conn.executemany("INSERT INTO sales VALUES (?, ?, ?, ?, ?)", numbered)


def _insert_rooms_and_bookings(conn: sqlite3.Connection, rng: random.Random) -> None:
    conn.executemany(
        "INSERT INTO rooms VALUES (?, ?, ?)",
        [(i, name, cap) for i, (name, cap) in enumerate(ROOMS, start=1)],
    )
    room_ids = {name: i for i, (name, _cap) in enumerate(ROOMS, start=1)}
    slots: list[tuple[str, int, str, str]] = list(FIXED_BOOKINGS)
    for room, count in ROOM_DAYS.items():
        for offset in rng.sample(BOOKING_DAYS, count):  # separate days: never intersect
            hour = rng.randint(8, 15)
            until = hour + rng.randint(1, 2)
            slots.append((room, offset, f"{hour:02d}:00", f"{until:02d}:30"))
    rows: list[tuple[int, int, str, str, str]] = []
    for room, offset, start, end in sorted(slots, key=lambda s: (s[1], s[2], room_ids[s[0]])):
        day = (FIRST_BOOKING_DAY + timedelta(days=offset)).isoformat()
        rows.append(
            (len(rows) + 1, room_ids[room], rng.choice(CUSTOMERS), f"{day} {start}", f"{day} {end}")
        )
    conn.executemany("INSERT INTO bookings VALUES (?, ?, ?, ?, ?)", rows)
