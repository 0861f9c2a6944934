"""The executors' admission rules (read-only, sandbox writes, stand-ins) and JSON-safe cells."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from decimal import Decimal
from ipaddress import ip_address

import pytest

from acts_sql.db.cells import json_safe
from acts_sql.db.guard import (
    admit,
    caret_context,
    located_statements,
    only_writes_to,
    sandbox_violation,
)
from acts_sql.sql.dialects import get_dialect


def test_reads_pass_and_writes_are_blocked_read_only() -> None:
    assert admit("SELECT 1", "postgresql").allowed
    blocked = admit("DROP TABLE t", "postgresql")
    assert not blocked.allowed and not blocked.probe
    assert blocked.blocked().error.startswith("blocked: ")  # type: ignore[union-attr]
    assert blocked.blocked().error_kind == "blocked"


def test_unparseable_text_asks_for_a_server_probe() -> None:
    admission = admit("SELECT (1", "postgresql")
    assert not admission.allowed and admission.probe
    assert "cannot be verified as read-only" in admission.reason


@pytest.mark.parametrize(
    "sql",
    [
        "INSERT INTO t VALUES (1)",
        "UPDATE t SET a = 1",
        "DELETE FROM t",
        "CREATE TABLE t2 (a INT)",
        "ALTER TABLE t ADD COLUMN b INT",
        "CREATE INDEX i ON t (a)",
        "DROP TABLE t",
        "TRUNCATE TABLE t",
        "CREATE VIEW v AS SELECT 1",
        "SELECT 1; INSERT INTO t VALUES (2)",
    ],
)
def test_sandbox_allows_ordinary_writes(sql: str) -> None:
    assert admit(sql, "postgresql", allow_writes=True).allowed
    assert admit(sql, "mysql", allow_writes=True, database="copy").allowed


@pytest.mark.parametrize(
    ("dialect", "sql"),
    [
        ("postgresql", "DROP DATABASE shop"),
        ("postgresql", "CREATE DATABASE x"),
        ("postgresql", "ALTER DATABASE shop RENAME TO x"),
        ("postgresql", "CREATE ROLE r"),
        ("postgresql", "GRANT SELECT ON t TO PUBLIC"),
        ("postgresql", "COPY t TO '/tmp/x'"),
        ("mysql", "DROP TABLE shop.t"),
        ("mysql", "INSERT INTO shop.t SELECT * FROM t"),
        ("mysql", "CREATE SCHEMA x"),
        ("mysql", "USE shop"),
        ("sqlite", "ATTACH DATABASE 'x.db' AS x"),
    ],
)
def test_sandbox_blocks_what_reaches_beyond_the_copy(dialect: str, sql: str) -> None:
    admission = admit(sql, dialect, allow_writes=True, database="copy")
    assert not admission.allowed, sql


@pytest.mark.parametrize(
    ("dialect", "sql", "allowed"),
    [
        # CREATEs sqlglot keeps as raw text: ordinary objects pass on the copy
        (
            "postgresql",
            "CREATE OR REPLACE FUNCTION f(a date) RETURNS SETOF date LANGUAGE sql IMMUTABLE"
            " PARALLEL SAFE ROWS 12 AS $f$ SELECT a $f$",
            True,
        ),
        (
            "sqlite",
            "CREATE TRIGGER t AFTER INSERT ON c FOR EACH ROW WHEN NEW.a IS NOT NULL"
            " BEGIN UPDATE c SET b = 1; DELETE FROM d; END; INSERT INTO c VALUES (1)",
            True,
        ),
        ("sqlite", "/* x */ CREATE TEMP TRIGGER t AFTER DELETE ON c BEGIN SELECT 1; END", True),
        # ... what they create decides, and a trigger does not hide what follows it
        ("postgresql", "CREATE OR REPLACE LANGUAGE plpython3u", False),
        (
            "sqlite",
            "CREATE TRIGGER t AFTER INSERT ON c BEGIN SELECT 1; END; ATTACH DATABASE 'x' AS x",
            False,
        ),
        # MySQL names can point into another database; raw text cannot be checked for it
        (
            "mysql",
            "CREATE FUNCTION shop.f() RETURNS INT DETERMINISTIC NO SQL SQL SECURITY INVOKER"
            " RETURN 1",
            False,
        ),
    ],
)
def test_sandbox_judges_a_create_sqlglot_cannot_model_by_what_it_creates(
    dialect: str, sql: str, allowed: bool
) -> None:
    assert admit(sql, dialect, allow_writes=True, database="copy").allowed is allowed
    assert not admit(sql, dialect).allowed  # never without writes


@pytest.mark.parametrize(
    ("dialect", "sql", "allowed"),
    [
        # a plan on the copy, beside the writes a performance issue makes (BIRD-CRITIC
        # PostgreSQL_59: a function, then the EXPLAIN of a query that calls it)
        ("postgresql", "CREATE TABLE t2 (a INT); EXPLAIN SELECT * FROM t2", True),
        ("postgresql", "CREATE TABLE t2 (a INT); EXPLAIN (ANALYZE, BUFFERS) SELECT 1", True),
        ("postgresql", "CREATE TABLE t2 (a INT); EXPLAIN ANALYZE DELETE FROM t2", True),
        ("sqlite", "CREATE TABLE t2 (a INT); EXPLAIN QUERY PLAN SELECT * FROM t2", True),
        ("mysql", "CREATE TABLE t2 (a INT); EXPLAIN FORMAT=JSON SELECT * FROM t2", True),
        # ... judged as the statement it explains (EXPLAIN ANALYZE runs it)
        ("postgresql", "CREATE TABLE t2 (a INT); EXPLAIN ANALYZE CREATE DATABASE x", False),
        ("mysql", "CREATE TABLE t2 (a INT); EXPLAIN ANALYZE DELETE FROM shop.t", False),
        ("postgresql", "CREATE TABLE t2 (a INT); EXPLAIN ANALYZE", False),
    ],
)
def test_sandbox_judges_an_explain_by_the_statement_it_explains(
    dialect: str, sql: str, allowed: bool
) -> None:
    assert admit(sql, dialect, allow_writes=True, database="copy").allowed is allowed, sql


def test_sandbox_violation_names_the_reason() -> None:
    d = get_dialect("mysql")
    assert sandbox_violation("SELECT * FROM copy.t", d, "copy") is None
    assert "other databases (shop)" in (sandbox_violation("DELETE FROM shop.t", d, "copy") or "")


@pytest.mark.parametrize(
    ("sql", "allowed"),
    [
        ("INSERT INTO orders VALUES (1)", True),
        ("INSERT INTO Orders (a, b) VALUES (1, 2); SELECT * FROM orders", True),
        ("UPDATE orders SET a = 1", True),
        ("DELETE FROM orders WHERE a = 1", True),
        ("DELETE FROM customers", False),
        ("INSERT INTO main.orders VALUES (1)", False),
        ("DROP TABLE orders", False),
        ("INSERT INTO orders SELECT * FROM (DELETE FROM customers RETURNING *) AS d", False),
    ],
)
def test_scratch_sessions_may_write_only_their_stand_ins(sql: str, allowed: bool) -> None:
    d = get_dialect("postgresql")
    assert only_writes_to(sql, d, frozenset({"orders"})) is allowed


def test_located_statements_keep_offsets() -> None:
    text = "SELECT 1;\n  SELECT 'a;b';  -- x\nSELECT 3"
    found = located_statements(text, "postgresql")
    assert [piece for _, piece in found] == ["SELECT 1", "SELECT 'a;b'", "SELECT 3"]
    assert [text[at : at + len(piece)] for at, piece in found] == [p for _, p in found]


def test_caret_context_points_at_the_position() -> None:
    text = "SELECT a\nFROM t WHERE"
    assert caret_context(text, text.index("WHERE") + 1) == (
        "LINE 2: FROM t WHERE\n" + " " * len("LINE 2: FROM t ") + "^"
    )


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (Decimal("12.50"), 12.5),
        (Decimal("10"), 10),
        (Decimal("0.1000000000000000000001"), "0.1000000000000000000001"),
        (Decimal("NaN"), "NaN"),
        (float("inf"), "inf"),
        (dt.datetime(2024, 1, 5, 10, 0), "2024-01-05 10:00:00"),
        (dt.date(2024, 1, 5), "2024-01-05"),
        (dt.time(9, 30), "09:30:00"),
        (dt.timedelta(days=1, hours=2), "1 day 02:00:00"),
        (dt.timedelta(seconds=-1.5), "-00:00:01.5"),
        (uuid.UUID(int=1), "00000000-0000-0000-0000-000000000001"),
        (b"\x00\xff", "00ff"),
        (memoryview(b"x" * 100), "<blob 100 bytes>"),
        (ip_address("10.0.0.1"), "10.0.0.1"),
        ([Decimal("1.5"), None], [1.5, None]),
        ({"a": dt.date(2024, 1, 1)}, {"a": "2024-01-01"}),
        (True, True),
    ],
)
def test_cells_are_json_safe(value: object, expected: object) -> None:
    assert json_safe(value) == expected
    json.dumps(json_safe(value))


@pytest.mark.parametrize(
    ("sql", "allowed"),
    [
        ("DO $$ BEGIN EXECUTE 'COPY (SELECT 1) TO PROGRAM ''id'''; END $$", False),
        ("CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $$ SELECT 1 $$", False),
        (
            "CREATE OR REPLACE FUNCTION f(a date) RETURNS SETOF date LANGUAGE sql IMMUTABLE"
            " PARALLEL SAFE ROWS 12 AS $f$ SELECT a $f$",
            False,
        ),
        ("CREATE PROCEDURE p() LANGUAGE plpgsql AS $$ BEGIN NULL; END $$", False),
        # what the guard can read, and routines that already exist, still run
        ("CREATE TABLE t (a int)", True),
        ("CREATE VIEW v AS SELECT 1 AS a", True),
        ("CALL p()", True),
        ("CREATE TRIGGER tr AFTER INSERT ON t FOR EACH ROW EXECUTE FUNCTION f()", True),
    ],
)
def test_without_routines_code_the_guard_cannot_read_is_blocked(sql: str, allowed: bool) -> None:
    assert admit(sql, "postgresql", allow_writes=True).allowed  # allowed by default
    admission = admit(sql, "postgresql", allow_writes=True, routines=False)
    assert admission.allowed is allowed
    if not allowed:
        assert "connect as an ordinary user" in admission.reason
