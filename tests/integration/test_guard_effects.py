"""Issue 37's hostile corpus run through the real executors on live engines, each
statement checked by its EFFECT, not by the guard's word: a second PostgreSQL session
('victim') stays alive, no file appears in a temporary directory, the sequence and the
table are unchanged, no advisory lock is held by anyone, large objects and replication
slots are as before, and the process (DuckDB: a child process) is alive.

The counts (attempted / blocked / executed harmlessly / effects seen) are printed
(`pytest -s`) and effects seen must be 0. "Executed harmlessly" on PostgreSQL are the
invalid `U&` escapes and a call of a function that does not exist: only the server's parser
sees them (PREPARE, never run) and its own error comes back.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import duckdb
import psycopg
import pymysql
import pytest
from live import MYSQL_ENV, PG_ENV

import acts_sql.db.guard as guard
from acts_sql.db.connect import open_database
from acts_sql.sql.safety import SafetyVerdict
from acts_sql.sql.safety_rules.escapes import EscapeError, decode_body
from hostile_corpus import load_hostile

_PG_STATE = """
SELECT (SELECT last_value || '/' || is_called FROM acts_seq),
       (SELECT md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM t),
       (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'),
       (SELECT count(*) FROM pg_largeobject_metadata),
       (SELECT count(*) FROM pg_replication_slots)
"""


def _counts(engine: str, statuses: list[str], effects: list[str]) -> dict[str, int]:
    blocked = sum(status == "blocked" for status in statuses)
    counts = {
        "attempted": len(statuses),
        "blocked": blocked,
        "executed_harmlessly": len(statuses) - blocked,
        "effects_seen": len(effects),
    }
    print(f"\n{engine} hostile corpus: {json.dumps(counts)}")
    return counts


@pytest.fixture
def pg_database() -> Iterator[str]:
    """A fresh database with a table `t` and a sequence `acts_seq`; dropped afterwards."""
    admin = os.environ.get(PG_ENV)
    if not admin:
        pytest.skip(f"no live PostgreSQL server: {PG_ENV} is not set")
    name = f"acts_guard_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}")
    url = admin.rsplit("/", 1)[0] + "/" + name
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("CREATE TABLE t (id int PRIMARY KEY, v text)")
            conn.execute("INSERT INTO t SELECT g, md5(g::text) FROM generate_series(1, 50) g")
            conn.execute("CREATE SEQUENCE acts_seq")
            conn.execute("SELECT nextval('acts_seq')")
            conn.execute(
                "CREATE FUNCTION acts_double(x int) RETURNS int IMMUTABLE "
                "LANGUAGE sql AS 'SELECT x * 2'"
            )
            conn.execute("CREATE FUNCTION acts_touch() RETURNS int LANGUAGE sql AS 'SELECT 1'")
        yield url
    finally:
        with psycopg.connect(admin, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def _victim(url: str) -> psycopg.Connection:
    return psycopg.connect(url, autocommit=True, application_name="victim")


def test_postgresql_hostile_corpus_has_no_effect(pg_database: str, tmp_path: Path) -> None:
    tmp_path.chmod(0o777)  # a server that got through could write here
    cases = [c for c in load_hostile(str(tmp_path)) if c.dialect == "postgresql"]
    watcher = psycopg.connect(pg_database, autocommit=True)
    victim = _victim(pg_database)
    before = watcher.execute(_PG_STATE).fetchone()
    statuses: list[str] = []
    effects: list[str] = []
    with open_database(pg_database, timeout=5) as executor:
        for case in cases:
            statuses.append(executor.execute(case.sql).status)
            try:
                victim.execute("SELECT 1")
            except psycopg.Error:
                effects.append(f"victim killed: {case}")
                victim = _victim(pg_database)
            if list(tmp_path.iterdir()):
                effects.append(f"file created: {case}")
            if watcher.execute(_PG_STATE).fetchone() != before:
                effects.append(f"state changed: {case}")
        assert executor.execute("SELECT 1").ok
    victim.close()
    watcher.close()
    counts = _counts("postgresql", statuses, effects)
    assert effects == []
    assert counts["attempted"] >= 50
    # the guard blocks all but the escapes PostgreSQL itself rejects and a function that
    # does not exist: those reach only the server's parser (PREPARE, never run) so that the
    # agent sees the engine's own error
    assert "ok" not in statuses
    assert counts["blocked"] >= counts["attempted"] - 5


def test_postgresql_sessions_are_read_only_from_the_first_statement(pg_database: str) -> None:
    with open_database(pg_database) as executor:
        shown = {
            name: executor.execute(f"SHOW {name}").rows[0][0]
            for name in (
                "default_transaction_read_only",
                "lock_timeout",
                "idle_in_transaction_session_timeout",
            )
        }
        assert shown == {
            "default_transaction_read_only": "on",
            "lock_timeout": "5s",
            "idle_in_transaction_session_timeout": "1min",
        }
        # the user's own functions: an IMMUTABLE one may be called, a VOLATILE one not
        assert executor.execute("SELECT acts_double(21)").rows == [[42]]
        touched = executor.execute("SELECT acts_touch()")
        assert touched.status == "blocked" and "acts_touch()" in (touched.error or "")
        # a function that does not exist is the engine's own error (a parse-only PREPARE),
        # so the agent can repair it; one that exists off the allowlist stays blocked
        missing = executor.execute("SELECT nvl(1, 2)")
        assert missing.status == "error" and "nvl(integer, integer) does not exist" in (
            missing.error or ""
        )
        # ... but not when anything else in the text is blocked
        mixed = executor.execute("SELECT nvl(1, 2), pg_terminate_backend(pg_backend_pid())")
        assert mixed.status == "blocked"


def test_without_the_guard_the_session_still_refuses_and_frees_locks(
    pg_database: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: with the guard switched off, the READ ONLY session refuses
    sequence and large-object writes, and an advisory lock does not outlive its batch."""
    monkeypatch.setattr(guard, "check_statement", lambda *a, **k: SafetyVerdict(allowed=True))
    watcher = psycopg.connect(pg_database, autocommit=True)
    before = watcher.execute(_PG_STATE).fetchone()
    with open_database(pg_database) as executor:
        for sql in ("SELECT setval('acts_seq', 777777)", "SELECT nextval('acts_seq')"):
            result = executor.execute(sql)
            assert result.error_code == "25006", sql  # read_only_sql_transaction
        assert executor.execute("SELECT lo_from_bytea(4242, 'x'::bytea)").ok  # rolled back
        assert executor.execute("SELECT pg_advisory_lock(4242)").ok
        held = watcher.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'")
        assert held.fetchone() == (0,)
    assert watcher.execute(_PG_STATE).fetchone() == before
    watcher.close()


_DUCK_RUNNER = """
import json, sys
from acts_sql.db.connect import open_database
with open_database(sys.argv[1], timeout=5) as executor:
    statuses = [executor.execute(sql).status for sql in json.loads(sys.argv[2])]
    assert executor.execute("SELECT 1").ok
print(json.dumps(statuses))
"""


def _duck_state(path: Path) -> tuple[object, ...]:
    conn = duckdb.connect(str(path), read_only=True)
    try:
        row = conn.execute(
            "SELECT (SELECT md5(string_agg(id || ':' || v, ',' ORDER BY id)) FROM t), "
            "(SELECT last_value FROM duckdb_sequences() WHERE sequence_name = 'acts_seq')"
        ).fetchone()
    finally:
        conn.close()
    return tuple(row or ())


def test_duckdb_hostile_corpus_has_no_effect(tmp_path: Path) -> None:
    """Run in a child process: an input that aborts DuckDB must show up as a dead child,
    not take the test run down with it."""
    files = tmp_path / "files"
    files.mkdir()
    database = tmp_path / "guard.duckdb"
    conn = duckdb.connect(str(database))
    conn.execute("CREATE TABLE t AS SELECT range AS id, md5(range::VARCHAR) AS v FROM range(50)")
    conn.execute("CREATE SEQUENCE acts_seq")
    conn.execute("SELECT nextval('acts_seq')")
    conn.close()
    before = _duck_state(database)
    cases = [c for c in load_hostile(str(files)) if c.dialect == "duckdb"]
    src = str(Path(__file__).resolve().parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    child = subprocess.run(
        [sys.executable, "-c", _DUCK_RUNNER, str(database), json.dumps([c.sql for c in cases])],
        cwd=files,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    effects = [] if child.returncode == 0 else [f"process died ({child.returncode})"]
    effects += [f"file created: {p.name}" for p in files.iterdir()]
    if _duck_state(database) != before:
        effects.append("table or sequence changed")
    statuses = json.loads(child.stdout.strip().splitlines()[-1]) if child.returncode == 0 else []
    counts = _counts("duckdb", statuses or ["?"] * len(cases), effects)
    assert effects == [], child.stderr[-2000:]
    assert counts["blocked"] == counts["attempted"] >= 20


def test_sqlite_hostile_corpus_has_no_effect(tmp_path: Path) -> None:
    files = tmp_path / "files"
    files.mkdir()
    database = tmp_path / "guard.db"
    import sqlite3

    conn = sqlite3.connect(database)
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    conn.commit()
    conn.close()
    cases = [c for c in load_hostile(str(files)) if c.dialect == "sqlite"]
    with open_database(f"sqlite:///{database}") as executor:
        statuses = [executor.execute(case.sql).status for case in cases]
    effects = [f"file created: {p.name}" for p in files.iterdir()]
    counts = _counts("sqlite", statuses, effects)
    assert effects == []
    assert counts["blocked"] == counts["attempted"] >= 3


_MY_STATE = """
SELECT (SELECT MD5(GROUP_CONCAT(id, ':', v ORDER BY id)) FROM t),
       (SELECT next_not_cached_value FROM acts_seq),
       IS_USED_LOCK('acts'),
       @@global.max_connections
"""


@pytest.fixture
def mysql_database() -> Iterator[dict[str, object]]:
    """A fresh MariaDB database with a table `t` and a sequence `acts_seq`; dropped after."""
    url = os.environ.get(MYSQL_ENV)
    if not url:
        pytest.skip(f"no live MariaDB server: {MYSQL_ENV} is not set")
    parsed = urlsplit(url)
    params: dict[str, object] = {
        "host": parsed.hostname,
        "port": parsed.port,
        "user": parsed.username,
        "password": parsed.password,
        "autocommit": True,
    }
    name = f"acts_guard_{uuid.uuid4().hex[:10]}"
    admin = pymysql.connect(**params)  # type: ignore[arg-type]
    try:
        with admin.cursor() as cur:
            cur.execute(f"CREATE DATABASE {name}")
            cur.execute(f"CREATE TABLE {name}.t (id INT PRIMARY KEY, v TEXT)")
            cur.execute(f"INSERT INTO {name}.t SELECT seq, MD5(seq) FROM {name}.seq_1_to_50")
            cur.execute(f"CREATE SEQUENCE {name}.acts_seq")
        yield {**params, "database": name, "url": url.rsplit("/", 1)[0] + "/" + name}
    finally:
        with admin.cursor() as cur:
            cur.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.close()


def _my_connect(params: dict[str, object]) -> pymysql.connections.Connection:
    return pymysql.connect(**{k: v for k, v in params.items() if k != "url"})  # type: ignore[arg-type]


def _my_query(conn: pymysql.connections.Connection, sql: str) -> tuple[object, ...]:
    with conn.cursor() as cur:
        cur.execute(sql)
        return tuple(cur.fetchone() or ())


def test_mariadb_hostile_corpus_has_no_effect(
    mysql_database: dict[str, object], tmp_path: Path
) -> None:
    """The MariaDB part of the corpus, with a second session ('victim') whose id the KILL
    statements name; files would appear in a folder the server may write to."""
    tmp_path.chmod(0o777)
    victim = _my_connect(mysql_database)
    watcher = _my_connect(mysql_database)
    victim_id = _my_query(victim, "SELECT CONNECTION_ID()")[0]
    cases = [c for c in load_hostile(str(tmp_path), victim=int(victim_id)) if c.dialect == "mysql"]
    before = _my_query(watcher, _MY_STATE)
    statuses: list[str] = []
    effects: list[str] = []
    with open_database(str(mysql_database["url"]), timeout=5) as executor:
        for case in cases:
            statuses.append(executor.execute(case.sql).status)
            try:
                victim.ping(reconnect=False)
            except pymysql.Error:
                effects.append(f"victim killed: {case}")
                victim = _my_connect(mysql_database)
            if list(tmp_path.iterdir()):
                effects.append(f"file created: {case}")
            if _my_query(watcher, _MY_STATE) != before:
                effects.append(f"state changed: {case}")
            in_use = _my_query(
                watcher, f"SHOW OPEN TABLES FROM {mysql_database['database']} WHERE In_use > 0"
            )
            if in_use:
                effects.append(f"table locked: {case}")
        assert executor.execute("SELECT 1").ok
    victim.close()
    watcher.close()
    counts = _counts("mariadb", statuses, effects)
    assert effects == []
    assert counts["blocked"] == counts["attempted"] >= 40


ESCAPE_BODIES = [
    "d\\0061t\\0061",
    "\\+01F600 \\D83D\\DE00",
    "a\\\\b",
    "x\\00e9y",
    "\\006",
    "\\0000",
    "\\D800",
    "\\DE00",
    "\\D83Dx",
    "\\+110000",
    "\\x041",
    "end\\",
]


def test_unicode_escapes_decode_exactly_as_postgresql_does(pg_database: str) -> None:
    """Each body: PostgreSQL's own reading of U&'<body>' equals `decode_body`, and a body
    PostgreSQL rejects is one `decode_body` rejects."""
    with psycopg.connect(pg_database, autocommit=True) as conn:
        for body in ESCAPE_BODIES:
            try:
                expected = conn.execute(f"SELECT U&'{body}'").fetchone()
            except psycopg.Error:
                with pytest.raises(EscapeError):
                    decode_body(body)
                continue
            assert expected is not None and decode_body(body) == expected[0], body
