"""The service on PostgreSQL (when the test command started one): same API, same story."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from server.service import running_service, service_config

PG_ENV = "ACTS_SQL_TEST_PG_URL"
DATABASE = "acts_service_test"
SETUP = [
    "CREATE TABLE rooms (room_id INTEGER PRIMARY KEY, name VARCHAR(50) NOT NULL)",
    "CREATE TABLE bookings (booking_id INTEGER PRIMARY KEY, room_id INTEGER NOT NULL "
    "REFERENCES rooms (room_id), start_time TIMESTAMP, end_time TIMESTAMP)",
    "INSERT INTO rooms VALUES (1, 'Atlas'), (2, 'Borealis'), (5, 'Ember')",
    "INSERT INTO bookings VALUES "
    "(1, 1, '2024-05-01 09:00', '2024-05-01 11:00'), "
    "(2, 1, '2024-05-01 10:00', '2024-05-01 12:00'), "
    "(3, 2, '2024-05-01 09:00', '2024-05-01 10:00'), "
    "(4, 2, '2024-05-01 14:00', '2024-05-01 15:00'), "
    "(5, 5, '2024-05-02 09:00', '2024-05-02 12:00'), "
    "(6, 5, '2024-05-02 11:00', '2024-05-02 13:00')",
]


@pytest.fixture(scope="module")
def pg_url() -> str:
    admin = os.environ.get(PG_ENV)
    if not admin:
        if os.environ.get("ACTS_SQL_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{PG_ENV} is not set but ACTS_SQL_REQUIRE_SERVICES=1")
        pytest.skip(f"{PG_ENV} is not set (scripts/test.sh starts a PostgreSQL)")
    psycopg = pytest.importorskip("psycopg")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {DATABASE} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {DATABASE}")
    url = admin.rsplit("/", 1)[0] + "/" + DATABASE
    with psycopg.connect(url, autocommit=True) as conn:
        for statement in SETUP:
            conn.execute(statement)
    return url


def test_figure3_on_postgresql(tmp_path: Path, pg_url: str, figure3):
    config = service_config(tmp_path, databases={"pg": {"url": pg_url, "dialect": "postgresql"}})
    body = {"database": "pg", "question": figure3.question, "sql": figure3.sql}
    with running_service(config) as svc, svc.client() as client:
        reply = client.post("/v1/correct", json={**body, "dialect": "postgresql"})
        wrong = client.post("/v1/correct", json={**body, "dialect": "sqlite"})
    assert reply.status_code == 200, reply.text
    result = reply.json()
    assert result["dialect"] == "postgresql"
    assert result["accepted"] is True
    assert result["result"]["rows"] == [[1, "Atlas"], [5, "Ember"]]
    assert wrong.status_code == 400 and wrong.json()["error"]["code"] == "dialect_mismatch"


def test_service_start_removes_copies_that_dead_processes_left(
    tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
):
    """`acts-sql serve` sweeps the server of each database with writes on a copy, and the
    temp dir: copies whose owner process is gone go, a live process's copy stays."""
    import subprocess
    import sys
    import tempfile

    import psycopg

    from acts_sql.db.sandbox import copy_name, current_owner
    from acts_sql.server import create_app, load_config

    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    me = current_owner()
    dead = f"acts_sandbox_{child.pid}_{me.start}_{me.host}_0123abcd"
    live = copy_name()
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    folder = temp / f"acts-sql-sandbox-{child.pid}-{me.start}-{me.host}-abcd1234"
    folder.mkdir()
    config = service_config(tmp_path, databases={"pg": {"url": pg_url, "writes": "copy"}})
    admin = psycopg.connect(pg_url, autocommit=True)
    try:
        for name in (dead, live):
            admin.execute(f'CREATE DATABASE "{name}"')
        create_app(load_config(config, environ={}))
        names = {row[0] for row in admin.execute("SELECT datname FROM pg_database")}
        assert dead not in names and live in names
        assert not folder.exists()
    finally:
        for name in (dead, live):
            admin.execute(f'DROP DATABASE IF EXISTS "{name}"')
        admin.close()
