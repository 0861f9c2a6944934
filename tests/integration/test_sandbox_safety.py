"""`--allow-writes` never touches the original, each step starts from it, leftovers go.

Issue 37, rows 5, 6 and 9: when a private copy cannot be made the executor
does not open (no fallback to a transaction on the original) and the CLI exits
2 with one line; every isolated step on a PostgreSQL copy sets back the
sequences it moved; copies carry their owner's pid and start time, and copies
whose owner is gone (a `kill -9`) are removed by the next open.

Each test works on its own database (`shop`), made and dropped here.
"""

from __future__ import annotations

import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import psycopg
import pytest
from checksums import (
    SANDBOX_PREFIX,
    mysql_checksums,
    mysql_connect,
    mysql_databases,
    pg_checksums,
    pg_databases,
)
from live import Engine, engine_or_skip
from typer.testing import CliRunner

import acts_sql
from acts_sql.cli.app import app
from acts_sql.db import mysql
from acts_sql.db.connect import open_database, sweep_orphans
from acts_sql.db.postgres import PostgresExecutor
from acts_sql.db.sandbox import copy_name, current_owner, host_tag
from acts_sql.errors import DatabaseOpenError

SHOP = f"acts_sbx_{os.getpid()}"


@dataclass
class Shop:
    """A small database of one engine, with a counter."""

    name: str
    url: str
    admin_url: str
    state: Callable[[], object]
    """Checksums of the tables and where the counters stand, read with the raw driver."""
    copies: Callable[[], list[str]]


def _with_database(url: str, database: str) -> str:
    return url.rsplit("/", 1)[0] + "/" + database


def _pg_state(url: str) -> object:
    with psycopg.connect(url, autocommit=True) as conn:
        counters = conn.execute(
            "SELECT sequencename, last_value FROM pg_sequences ORDER BY 1"
        ).fetchall()
    return pg_checksums(url), counters


def _mysql_state(url: str) -> object:
    conn = mysql_connect(url)
    try:
        with conn.cursor() as cursor:
            cursor.execute(
                "SELECT table_name, auto_increment FROM information_schema.tables "
                "WHERE table_schema = DATABASE() ORDER BY 1"
            )
            counters = list(cursor.fetchall())
    finally:
        conn.close()
    return mysql_checksums(url), counters


def _sqlite_shop(directory: Path) -> Shop:
    path = directory / f"{SHOP}.db"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE tickets (id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT)")
    conn.execute("INSERT INTO tickets (label) VALUES ('a'), ('b')")
    conn.commit()
    conn.close()
    temp = Path(tempfile.gettempdir())
    return Shop(
        "sqlite",
        f"sqlite:///{path}",
        f"sqlite:///{path}",
        lambda: path.read_bytes(),
        lambda: sorted(p.name for p in temp.glob("acts-sql-sandbox-*")),
    )


@pytest.fixture(params=["sqlite", "postgresql", "mysql"])
def shop(
    request: pytest.FixtureRequest, live_engines: dict[str, Engine], tmp_path: Path
) -> Iterator[Shop]:
    """The shop on each engine."""
    if request.param == "sqlite":
        yield _sqlite_shop(tmp_path)
        return
    engine = engine_or_skip(live_engines, request.param)
    maker = _pg_shop if request.param == "postgresql" else _mysql_shop
    yield from maker(engine)


@pytest.fixture(params=["postgresql", "mysql"])
def server_shop(request: pytest.FixtureRequest, live_engines: dict[str, Engine]) -> Iterator[Shop]:
    """The shop on each server engine."""
    engine = engine_or_skip(live_engines, request.param)
    maker = _pg_shop if request.param == "postgresql" else _mysql_shop
    yield from maker(engine)


@pytest.fixture
def pg_shop(live_engines: dict[str, Engine]) -> Iterator[Shop]:
    yield from _pg_shop(engine_or_skip(live_engines, "postgresql"))


@pytest.fixture
def my_shop(live_engines: dict[str, Engine]) -> Iterator[Shop]:
    yield from _mysql_shop(engine_or_skip(live_engines, "mysql"))


def _pg_shop(engine: Engine) -> Iterator[Shop]:
    admin = psycopg.connect(engine.admin_url, autocommit=True)
    admin.execute(f"DROP DATABASE IF EXISTS {SHOP} WITH (FORCE)")
    admin.execute(f"CREATE DATABASE {SHOP}")
    url = _with_database(engine.admin_url, SHOP)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SEQUENCE counter_seq START 100")
        conn.execute("CREATE TABLE tickets (id SERIAL PRIMARY KEY, label TEXT)")
        conn.execute("INSERT INTO tickets (label) VALUES ('a'), ('b')")
    try:
        yield Shop(
            "postgresql",
            url,
            engine.admin_url,
            lambda: _pg_state(url),
            lambda: [d for d in pg_databases(engine.admin_url) if d.startswith(SANDBOX_PREFIX)],
        )
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {SHOP} WITH (FORCE)")
        admin.close()


def _mysql_shop(engine: Engine) -> Iterator[Shop]:
    conn = mysql_connect(engine.admin_url)
    with conn.cursor() as cursor:
        cursor.execute(f"DROP DATABASE IF EXISTS {SHOP}")
        cursor.execute(f"CREATE DATABASE {SHOP}")
        cursor.execute(
            f"CREATE TABLE {SHOP}.tickets (id INT AUTO_INCREMENT PRIMARY KEY, label TEXT) "
            "ENGINE=InnoDB"
        )
        cursor.execute(f"INSERT INTO {SHOP}.tickets (label) VALUES ('a'), ('b')")
    url = _with_database(engine.admin_url, SHOP)
    try:
        yield Shop(
            "mysql",
            url,
            engine.admin_url,
            lambda: _mysql_state(url),
            lambda: [d for d in mysql_databases(engine.admin_url) if d.startswith(SANDBOX_PREFIX)],
        )
    finally:
        with conn.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS {SHOP}")
        conn.close()


def _mine(names: list[str]) -> list[str]:
    """The copies this process made (other processes may be testing on the same server)."""
    me = current_owner()
    return [n for n in names if n.startswith(f"{SANDBOX_PREFIX}{me.pid}_")]


# ------------------------------------------------------------------ no copy, no run


def _hold_postgres(shop: Shop) -> psycopg.Connection:
    """A second session on the original: PostgreSQL cannot copy it then."""
    other = psycopg.connect(shop.url, autocommit=True)
    other.execute("SET application_name = 'second-session'")
    return other


def test_postgres_refuses_to_open_when_another_session_is_connected(pg_shop: Shop) -> None:
    """PostgreSQL copies only a database nobody else is connected to."""
    shop = pg_shop
    before = shop.state()
    other = _hold_postgres(shop)
    try:
        with pytest.raises(DatabaseOpenError) as raised:
            open_database(shop.url, allow_writes=True)
        message = str(raised.value)
        assert message.startswith(f"cannot make a private copy of {SHOP!r} for --allow-writes")
        # at least the held session (a connection of this test's own fixtures may still be
        # closing on the server, so the count is not pinned)
        assert re.search(r"\b[1-9]\d* other sessions? (is|are) connected to it", message)
        assert "\n" not in message
        assert other.execute("SELECT 1").fetchone() == (1,)  # the other session lives
    finally:
        other.close()
    assert shop.state() == before  # tables and sequences as they were
    assert _mine(shop.copies()) == []


def test_postgres_refuses_a_role_that_may_not_copy_the_database(pg_shop: Shop) -> None:
    shop = pg_shop
    role, password = f"acts_nocreatedb_{os.getpid()}", "no-createdb-pw-1"
    admin = psycopg.connect(shop.url, autocommit=True)
    try:
        admin.execute(f"CREATE ROLE {role} LOGIN PASSWORD '{password}'")
        admin.execute(f"GRANT SELECT ON ALL TABLES IN SCHEMA public TO {role}")
        url = shop.url.replace("acts:acts-test-pw@", f"{role}:{password}@")
        with pytest.raises(DatabaseOpenError) as raised:
            open_database(url, allow_writes=True)
        assert "may not create databases" in str(raised.value)
        assert f'ALTER ROLE "{role}" CREATEDB' in str(raised.value)
        admin.execute(f"ALTER ROLE {role} CREATEDB")  # yet the database is not its own
        with pytest.raises(DatabaseOpenError) as raised:
            open_database(url, allow_writes=True)
        assert "does not own the database" in str(raised.value)
    finally:
        admin.execute(f"DROP OWNED BY {role}")
        admin.execute(f"DROP ROLE {role}")
        admin.close()


def test_mariadb_copies_while_another_session_is_connected(my_shop: Shop) -> None:
    """MariaDB copies table by table, whoever is connected."""
    shop = my_shop
    before = shop.state()
    other = mysql_connect(shop.url)
    try:
        with other.cursor() as cursor:  # an open transaction that has read the table
            cursor.execute("START TRANSACTION")
            cursor.execute("SELECT count(*) FROM tickets")
        with open_database(shop.url, allow_writes=True) as sandbox:
            assert sandbox.execute("INSERT INTO tickets (label) VALUES ('c')").ok
            assert sandbox.execute("ALTER TABLE tickets AUTO_INCREMENT = 500").ok
            assert sandbox.execute("DELETE FROM tickets WHERE id = 1").ok
        with other.cursor() as cursor:
            cursor.execute("SELECT count(*) FROM tickets")
            assert cursor.fetchone() == (2,)
            cursor.execute("COMMIT")
    finally:
        other.close()
    assert shop.state() == before
    assert _mine(shop.copies()) == []


def test_mariadb_refuses_to_open_when_a_lock_blocks_the_copy(
    my_shop: Shop, monkeypatch: pytest.MonkeyPatch
) -> None:
    shop = my_shop
    monkeypatch.setattr(mysql, "COPY_LOCK_WAIT_S", 1)
    before = shop.state()
    other = mysql_connect(shop.url)
    try:
        with other.cursor() as cursor:
            cursor.execute("LOCK TABLES tickets WRITE")
        with pytest.raises(DatabaseOpenError) as raised:
            open_database(shop.url, allow_writes=True)
        message = str(raised.value)
        assert message.startswith(f"cannot make a private copy of {SHOP!r} for --allow-writes")
        assert "lock" in message and "\n" not in message
        with other.cursor() as cursor:
            cursor.execute("UNLOCK TABLES")
    finally:
        other.close()
    assert shop.state() == before
    assert _mine(shop.copies()) == []  # the half-made copy is gone


def test_cli_exits_2_with_one_line_when_no_copy_can_be_made(
    server_shop: Shop, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PostgreSQL with a second session, MariaDB with a table locked."""
    shop = server_shop
    monkeypatch.setattr(mysql, "COPY_LOCK_WAIT_S", 1)
    script = tmp_path / "script.json"
    script.write_text("{}")
    before = shop.state()
    if shop.name == "postgresql":
        other: object = _hold_postgres(shop)
    else:
        other = mysql_connect(shop.url)
        with other.cursor() as cursor:  # type: ignore[attr-defined]
            cursor.execute("LOCK TABLES tickets WRITE")
    try:
        outcome = CliRunner().invoke(
            app,
            [
                "fix",
                "--db",
                shop.url,
                "--allow-writes",
                "--question",
                "q",
                "--sql",
                "INSERT INTO tickets (label) VALUES ('z')",
                "--llm",
                f"scripted:{script}",
            ],
        )
    finally:
        other.close()  # type: ignore[attr-defined]
    assert outcome.exit_code == 2, outcome.output
    err = outcome.stderr.strip()
    assert err.startswith("error: cannot make a private copy of") and len(err.splitlines()) == 1
    assert "acts-test-pw" not in err
    assert shop.state() == before


# ------------------------------------------------------------------ every step from the start


def test_postgres_isolated_steps_start_from_the_same_sequences(pg_shop: Shop) -> None:
    """(MariaDB's AUTO_INCREMENT: test_isolation.py, DuckDB's sequences: tests/db.)"""
    shop = pg_shop
    before = shop.state()
    with open_database(shop.url, allow_writes=True) as sandbox:
        assert isinstance(sandbox, PostgresExecutor)
        insert = "INSERT INTO tickets (label) VALUES ('c') RETURNING id"
        assert [sandbox.execute(insert, isolate=True).rows for _ in range(3)] == [[[3]]] * 3
        # a batch the guard admits as a read may still move a sequence (a function that
        # calls nextval): set back too. The guard blocks a plain nextval, so the hook is
        # called directly, as `execute` does for a read.
        steps = [
            "SELECT nextval('counter_seq')",
            "SELECT nextval('counter_seq')",
            "SELECT last_value, is_called FROM counter_seq",
        ]
        seen = [sandbox._run_isolated(step, 10, 5.0, writes=False).rows for step in steps]
        assert seen == [[[100]], [[100]], [[100, False]]]
        used = "SELECT setval('counter_seq', 150)"  # a sequence already used goes back too
        assert sandbox._run_isolated(used, 10, 5.0, writes=False).ok
        assert sandbox.execute("SELECT last_value, is_called FROM counter_seq").rows == [
            [100, False]
        ]
    assert shop.state() == before


# ------------------------------------------------------------------ leftovers


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def _make_database(shop: Shop, name: str) -> None:
    if shop.name == "postgresql":
        with psycopg.connect(shop.admin_url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
    else:
        conn = mysql_connect(shop.admin_url)
        with conn.cursor() as cursor:
            cursor.execute(f"CREATE DATABASE `{name}`")
        conn.close()


def _drop_database(shop: Shop, name: str) -> None:
    if shop.name == "postgresql":
        with psycopg.connect(shop.admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    else:
        conn = mysql_connect(shop.admin_url)
        with conn.cursor() as cursor:
            cursor.execute(f"DROP DATABASE IF EXISTS `{name}`")
        conn.close()


def test_sweep_drops_only_server_copies_whose_owner_is_gone(server_shop: Shop) -> None:
    """(Folders: tests/db/test_sandbox_owners.py.)"""
    shop = server_shop
    me, dead = current_owner(), _dead_pid()
    other_host = "000000" if host_tag() != "000000" else "111111"
    names = {
        "dead": f"{SANDBOX_PREFIX}{dead}_{me.start}_{me.host}_0123abcd",
        "recycled": f"{SANDBOX_PREFIX}{me.pid}_{me.start + 3}_{me.host}_0123abcd",
        "live": copy_name(),
        "other_host": f"{SANDBOX_PREFIX}{dead}_{me.start}_{other_host}_0123abcd",
        "old_format": f"{SANDBOX_PREFIX}{dead}_0123abcd",
    }
    for name in names.values():
        _make_database(shop, name)
    try:
        removed = sweep_orphans(shop.url)
        assert names["dead"] in removed and names["recycled"] in removed
        left = set(shop.copies())
        assert names["dead"] not in left and names["recycled"] not in left
        assert {names[k] for k in ("live", "other_host", "old_format")} <= left
    finally:
        for name in names.values():
            _drop_database(shop, name)


CHILD = """
import sys, time
from acts_sql.db.connect import open_database
executor = open_database(sys.argv[1], allow_writes=True)
copy = executor._copy
print(copy.dir.name if hasattr(copy, "dir") else copy.name, flush=True)
time.sleep(60)
"""


def test_a_copy_left_by_kill_9_is_removed_by_the_next_open(shop: Shop) -> None:
    env = {**os.environ, "PYTHONPATH": str(Path(acts_sql.__file__).parents[1])}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, shop.url], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert child.stdout is not None
        name = child.stdout.readline().strip()
        assert name and name in shop.copies(), name
    finally:
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
    assert name in shop.copies()  # no atexit hook ran: it is left behind
    try:
        with open_database(shop.url, allow_writes=True):
            assert name not in shop.copies()
    finally:
        if shop.name != "sqlite":
            _drop_database(shop, name)
