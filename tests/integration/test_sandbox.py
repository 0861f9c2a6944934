"""allow_writes: statements that write run on a throw-away copy, never on the original.

The autouse `data_intact` fixture checks, after every test, that the original
is unchanged and that the copy was dropped.
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import psycopg
import pytest
from live import Engine, engine_or_skip

from acts_sql.db.connect import open_database
from acts_sql.db.postgres import PostgresExecutor

DDL = {
    "sqlite": "ALTER TABLE customers ADD COLUMN vip BOOLEAN DEFAULT 0",
    "postgresql": "ALTER TABLE customers ADD COLUMN vip BOOLEAN DEFAULT false",
    "mysql": "ALTER TABLE customers ADD COLUMN vip BOOLEAN DEFAULT false",
}


def test_writes_run_on_a_copy_and_vanish_with_it(engine: Engine) -> None:
    with open_database(engine.url, allow_writes=True) as sandbox:
        assert engine.copies(), "a copy exists while the sandbox is open"
        assert sandbox.execute(DDL[engine.name]).ok
        assert sandbox.execute("CREATE INDEX orders_total_idx ON orders (total)").ok
        assert sandbox.execute("UPDATE customers SET vip = TRUE WHERE id = 1").ok
        assert sandbox.execute("DELETE FROM bookings").ok
        assert sandbox.execute("DROP VIEW big_orders").ok
        vip = sandbox.execute("SELECT name FROM customers WHERE vip = TRUE")
        assert vip.rows == [["Ana"]]
        assert sandbox.execute("SELECT count(*) FROM bookings").rows == [[0]]
        # state persists across calls, as a Management task needs
        assert sandbox.execute("SELECT count(*) FROM orders").rows == [[4]]
    with open_database(engine.url) as original:
        assert original.execute("SELECT vip FROM customers").error_kind == "schema"
        assert original.execute("SELECT count(*) FROM bookings").rows == [[5]]


def test_the_copy_holds_views_and_keys(engine: Engine) -> None:
    with open_database(engine.url, allow_writes=True) as sandbox:
        assert sandbox.execute("SELECT count(*) FROM big_orders").rows == [[2]]
        fk = sandbox.execute("INSERT INTO orders VALUES (9, 99, 1.00, NULL)")
        if engine.name != "sqlite":  # SQLite checks foreign keys only when told to
            assert fk.status == "error", fk
        tables = {t.name for t in sandbox.reflect(sample_rows=0)}
        assert {"customers", "orders", "rooms", "bookings", "big_orders"} <= tables


BEYOND = {
    "sqlite": ["ATTACH DATABASE '/tmp/acts-elsewhere.db' AS x", "VACUUM INTO '/tmp/x.db'"],
    "postgresql": [
        "DROP DATABASE acts_it",
        "CREATE DATABASE elsewhere",
        "CREATE ROLE intruder",
        "GRANT ALL ON customers TO PUBLIC",
        "COPY customers TO '/tmp/leak.csv'",
        "ALTER SYSTEM SET work_mem = '1GB'",
    ],
    "mysql": [
        "DROP DATABASE acts_it",
        "DROP TABLE acts_it.customers",
        "INSERT INTO acts_it.rooms VALUES (9, 'Zeta')",
        "CREATE TABLE acts_it.sneaky (x INT)",
        "USE acts_it",
        "GRANT ALL ON *.* TO 'acts'@'%'",
        "CREATE SCHEMA elsewhere",
    ],
}


@pytest.mark.parametrize(
    ("name", "statement"),
    [(name, statement) for name, statements in BEYOND.items() for statement in statements],
)
def test_what_reaches_beyond_the_copy_is_blocked(
    live_engines: dict[str, Engine], name: str, statement: str
) -> None:
    engine = engine_or_skip(live_engines, name)
    with open_database(engine.url, allow_writes=True) as sandbox:
        result = sandbox.execute(statement)
        assert result.status == "blocked", result


# objects whose CREATE sqlglot keeps as raw text (a trigger with WHEN and a body of several
# statements; a function with PARALLEL SAFE and ROWS): the guard lets them run on the copy
UNMODELLED_CREATE = {
    "sqlite": (
        "CREATE TRIGGER tag_vip AFTER UPDATE OF vip ON customers FOR EACH ROW"
        " WHEN NEW.vip = 1 BEGIN DELETE FROM bookings; UPDATE orders SET total = 0; END",
        "UPDATE customers SET vip = 1 WHERE id = 1",
        "SELECT count(*) FROM bookings",
        [[0]],
    ),
    "postgresql": (
        "CREATE OR REPLACE FUNCTION order_ids(c int) RETURNS SETOF int LANGUAGE sql STABLE"
        " PARALLEL SAFE ROWS 5 AS $f$ SELECT id FROM orders WHERE customer_id = c $f$",
        "UPDATE customers SET vip = true WHERE id = 1",
        "SELECT count(*) FROM order_ids(1)",
        [[2]],
    ),
}


@pytest.mark.parametrize("name", sorted(UNMODELLED_CREATE))
def test_routines_and_triggers_sqlglot_cannot_model_run_on_the_copy(
    live_engines: dict[str, Engine], name: str
) -> None:
    engine = engine_or_skip(live_engines, name)
    create, fire, check, expected = UNMODELLED_CREATE[name]
    # the test server's user is a superuser: routines need the explicit opt-in there
    opener = (
        partial(PostgresExecutor, privileged_routines=True)
        if name == "postgresql"
        else open_database
    )
    with opener(engine.url, allow_writes=True) as sandbox:
        assert sandbox.execute(DDL[name]).ok
        created = sandbox.execute(create)
        assert created.ok, created
        assert sandbox.execute(fire).ok
        assert sandbox.execute(check).rows == expected
    with open_database(engine.url) as original:
        assert original.execute("SELECT count(*) FROM bookings").rows == [[5]]
        assert original.execute(create).status == "blocked"


def test_a_superuser_sandbox_refuses_code_the_guard_cannot_read(
    live_engines: dict[str, Engine], tmp_path: Path
) -> None:
    engine = engine_or_skip(live_engines, "postgresql")
    marker = tmp_path / "ran-a-server-program"
    escape = f"DO $$ BEGIN EXECUTE 'COPY (SELECT 1) TO PROGRAM ''touch {marker}'''; END $$"
    with open_database(engine.url, allow_writes=True) as sandbox:
        assert isinstance(sandbox, PostgresExecutor) and sandbox.reaches_server
        for statement in (escape, UNMODELLED_CREATE["postgresql"][0]):
            result = sandbox.execute(statement)
            assert result.status == "blocked", result
            assert "connect as an ordinary user" in (result.error or "")
        assert sandbox.execute(DDL["postgresql"]).ok  # other writes still run on the copy
    assert not marker.exists()


def test_an_ordinary_role_may_create_routines_on_the_copy(
    live_engines: dict[str, Engine],
) -> None:
    """A role that owns its database and may create databases (PostgreSQL copies a
    database only for its owner or a superuser) works on a copy, routines included."""
    engine = engine_or_skip(live_engines, "postgresql")
    role, password, database = "acts_plain_it", "plain-pw-123", f"acts_plain_{os.getpid()}"
    admin = psycopg.connect(engine.admin_url, autocommit=True)
    url = (
        engine.admin_url.rsplit("/", 1)[0].replace("acts:acts-test-pw@", f"{role}:{password}@")
        + f"/{database}"
    )
    try:
        admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        _drop_role(admin, role)
        admin.execute(f"CREATE ROLE {role} LOGIN CREATEDB PASSWORD '{password}'")
        admin.execute(f"CREATE DATABASE {database} OWNER {role}")
        with psycopg.connect(url, autocommit=True) as own:
            own.execute("CREATE TABLE orders (id int PRIMARY KEY, customer_id int)")
            own.execute("INSERT INTO orders VALUES (1, 1), (2, 1), (3, 2)")
            own.execute("CREATE TABLE customers (id int PRIMARY KEY, vip boolean)")
        create, _, check, expected = UNMODELLED_CREATE["postgresql"]
        with open_database(url, allow_writes=True) as sandbox:
            assert isinstance(sandbox, PostgresExecutor) and not sandbox.reaches_server
            assert sandbox.sandbox_mode == "copy"
            assert sandbox.execute(create).ok
            assert sandbox.execute(check).rows == expected
        with psycopg.connect(url, autocommit=True) as own:
            left = own.execute("SELECT count(*) FROM pg_proc WHERE proname = 'order_ids'")
            assert left.fetchone() == (0,)
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {database} WITH (FORCE)")
        _drop_role(admin, role)
        admin.close()


def _drop_role(conn: psycopg.Connection, role: str) -> None:
    if conn.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone():
        conn.execute(f"DROP OWNED BY {role}")
        conn.execute(f"DROP ROLE {role}")


def test_read_only_executor_refuses_the_same_writes(engine: Engine) -> None:
    with open_database(engine.url) as executor:
        assert executor.execute(DDL[engine.name]).status == "blocked"
