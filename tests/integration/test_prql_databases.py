"""PRQL on the live engines it targets (SQLite, PostgreSQL): compiled, guarded, run.

The autouse `data_intact` fixture checks every user table's checksum after
each test.
"""

from __future__ import annotations

import pytest
from live import Engine, engine_or_skip

from acts_sql.db.connect import open_database
from acts_sql.db.language import with_language

BIG_ORDERS = "from orders\nfilter total > 100\nsort {-total}\nselect {id, total}"
PER_ROOM = (
    "from b = bookings\njoin r = rooms (==room_id)\n"
    "group {r.name} (aggregate {n = count this})\nsort {-n, name}"
)


@pytest.fixture(params=["sqlite", "postgresql"])
def prql_engine(request: pytest.FixtureRequest, live_engines: dict[str, Engine]) -> Engine:
    return engine_or_skip(live_engines, request.param)


def test_prql_runs_on_each_target(prql_engine: Engine) -> None:
    with open_database(prql_engine.url) as database:
        executor = with_language(database, "prql")
        result = executor.execute(BIG_ORDERS)
        assert result.ok, result.error
        assert [[int(i), float(t)] for i, t in result.rows] == [[3, 999.99], [2, 150.0]]
        joined = executor.execute(PER_ROOM)
        assert joined.ok, joined.error
        assert [list(r) for r in joined.rows] == [["Atlas", 2], ["Borealis", 2], ["Cygnus", 1]]


@pytest.mark.parametrize(
    "query",
    [
        'from s"SELECT * FROM customers; DROP TABLE customers"',
        'from s"SELECT * FROM customers WHERE 1 = 1; DELETE FROM orders"',
    ],
)
def test_the_guard_blocks_writes_smuggled_into_the_compiled_sql(
    prql_engine: Engine, query: str
) -> None:
    with open_database(prql_engine.url) as database:
        result = with_language(database, "prql").execute(query)
        assert result.status == "blocked", result
        assert database.execute("SELECT count(*) FROM customers").rows == [[3]]


def test_a_compile_error_never_reaches_the_server(prql_engine: Engine) -> None:
    with open_database(prql_engine.url) as database:
        result = with_language(database, "prql").execute("from orders\nsrot total")
        assert result.error_kind == "syntax"
        assert (
            result.error
            == "PRQL compile error: line 2, column 1: Unknown name `srot` (near 'srot')"
        )
