"""Read-only by default: the guard blocks writes, and the engines would refuse them anyway.

The autouse `data_intact` fixture checks every user table's checksum after
each test.
"""

from __future__ import annotations

import pytest
from live import Engine

from acts_sql.db import guard
from acts_sql.db.connect import open_database
from acts_sql.sql.safety import SafetyVerdict

WRITES = [
    "DROP TABLE customers",
    "DELETE FROM orders",
    "UPDATE customers SET name = 'x'",
    "INSERT INTO rooms VALUES (9, 'Zeta')",
    "CREATE TABLE hacked (x INTEGER)",
    "ALTER TABLE customers ADD COLUMN y INTEGER",
    "CREATE INDEX hacked_idx ON orders (total)",
    "TRUNCATE TABLE bookings",
    "SELECT 1; DROP TABLE customers",
    "WITH gone AS (DELETE FROM orders RETURNING *) SELECT * FROM gone",
    "SELECT * INTO hacked FROM customers",
    "COMMIT; DROP TABLE customers",
]


@pytest.mark.parametrize("statement", WRITES)
def test_writes_are_blocked(engine: Engine, statement: str) -> None:
    with open_database(engine.url) as executor:
        result = executor.execute(statement)
        assert result.status in ("blocked", "error"), result
        if result.status == "blocked":
            assert result.error_kind == "blocked"
            assert (result.error or "").startswith("blocked: ")
        assert executor.execute("SELECT count(*) FROM customers").rows == [[3]]


def _allow_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        guard, "check_statement", lambda sql, dialect, **_: SafetyVerdict(allowed=True)
    )


@pytest.mark.parametrize(
    "statement",
    [
        "DROP TABLE bookings",
        "DELETE FROM orders",
        "INSERT INTO rooms VALUES (9, 'Zeta')",
        "CREATE TABLE hacked (x INTEGER)",
        "COMMIT; DROP TABLE bookings",
        "ROLLBACK; DELETE FROM orders",
    ],
)
def test_the_engine_refuses_writes_even_without_the_guard(
    engine: Engine, statement: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: with the guard switched off, the database itself says no."""
    _allow_everything(monkeypatch)
    with open_database(engine.url) as executor:
        result = executor.execute(statement)
        assert result.status in ("blocked", "error"), result
        assert executor.execute("SELECT count(*) FROM orders").rows == [[4]]


def _unparseable(monkeypatch: pytest.MonkeyPatch) -> None:
    verdict = SafetyVerdict(allowed=False, reason="pretend", category="unparseable")
    monkeypatch.setattr(guard, "check_statement", lambda sql, dialect, **_: verdict)


def test_unparseable_text_gets_the_engines_own_syntax_error(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unparseable(monkeypatch)
    with open_database(engine.url) as executor:
        result = executor.execute("SELECT name FROM customers WHERE")
    assert result.status == "error" and result.error_kind == "syntax", result
    if engine.name != "sqlite":
        assert result.error_position == len("SELECT name FROM customers WHERE") + 1


@pytest.mark.parametrize(
    "statement",
    ["SELECT 1", "DROP TABLE customers", "SELECT 1; DROP TABLE customers", "DELETE FROM orders"],
)
def test_unparseable_text_that_the_engine_parses_is_blocked_and_never_run(
    engine: Engine, statement: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unparseable(monkeypatch)
    with open_database(engine.url) as executor:
        result = executor.execute(statement)
        assert result.status == "blocked", result
        assert "cannot be verified as read-only" in (result.error or "")
        assert executor.execute("SELECT count(*) FROM orders").status == "blocked"  # still


def test_unparseable_text_with_a_name_error_gets_it(
    server: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    _unparseable(monkeypatch)
    with open_database(server.url) as executor:
        result = executor.execute("SELECT 1;\nSELECT nope FROM customers")
    assert result.status == "error" and result.error_kind == "schema", result
    if server.name == "postgresql":
        assert result.error_position == len("SELECT 1;\nSELECT ") + 1


def test_scratch_sessions_shadow_but_never_write(engine: Engine) -> None:
    with open_database(engine.url) as executor:
        with executor.scratch() as session:
            assert session.create_stand_in("customers", ["id", "label"]).ok
            empty = session.execute("SELECT id, label FROM customers")
            assert empty.ok and empty.rows == [] and empty.columns == ["id", "label"]
            assert session.execute("DELETE FROM orders").status == "blocked"
            assert session.execute("DROP TABLE orders").status == "blocked"
            wrote = session.execute(
                "INSERT INTO customers VALUES ('1', 'a'); SELECT * FROM customers"
            )
            assert wrote.ok and wrote.row_count == 1, wrote
            bad = session.execute("SELECT label FROM customers WHERE")
            assert bad.status == "error" and bad.error_kind == "syntax"
        # the stand-in is gone; the real table is back
        assert executor.execute("SELECT count(*) FROM customers").rows == [[3]]
        with executor.scratch() as session:
            assert session.execute("SELECT label FROM customers").error_kind == "schema"
