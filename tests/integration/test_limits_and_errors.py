"""Timeouts, row caps and error reports on every live engine."""

from __future__ import annotations

import json
import time

import pytest
from live import FIFTY_K, SLOW, Engine, engine_or_skip

from acts_sql.db.connect import open_database


def test_slow_statement_times_out_within_two_seconds(engine: Engine) -> None:
    with open_database(engine.url) as executor:
        started = time.monotonic()
        result = executor.execute(SLOW[engine.name], timeout=1)
        elapsed = time.monotonic() - started
        assert result.status == "timeout", result
        assert result.error_kind == "timeout"
        assert "1 s" in (result.error or "")
        assert elapsed < 2.0
        assert executor.execute("SELECT 1").rows == [[1]]  # still usable afterwards


def test_timeout_given_at_open_time_is_the_default(engine: Engine) -> None:
    with open_database(engine.url, timeout=1) as executor:
        started = time.monotonic()
        assert executor.execute(SLOW[engine.name]).status == "timeout"
        assert time.monotonic() - started < 2.0


def test_fifty_thousand_rows_are_capped_and_flagged(engine: Engine) -> None:
    with open_database(engine.url) as executor:
        started = time.monotonic()
        result = executor.execute(FIFTY_K[engine.name])
        assert result.ok, result.error
        assert result.row_count == len(result.rows) == 10_000
        assert result.truncated
        assert result.rows[0] == [1] and result.rows[-1] == [10_000]
        assert time.monotonic() - started < 5
        # the connection is fine afterwards, and a small result is not flagged
        small = executor.execute("SELECT 1 AS one")
        assert small.rows == [[1]] and not small.truncated
        assert executor.execute(FIFTY_K[engine.name], max_rows=50_000).row_count == 50_000
    with open_database(engine.url, max_rows=7) as executor:
        capped = executor.execute(FIFTY_K[engine.name])
        assert capped.row_count == 7 and capped.truncated


def test_truncated_result_in_a_batch_does_not_break_the_next_statement(engine: Engine) -> None:
    with open_database(engine.url) as executor:
        result = executor.execute(f"{FIFTY_K[engine.name]}; SELECT count(*) AS n FROM customers")
        assert result.ok, result.error
        assert result.rows == [[3]]


# (statement, kind, code, position) per engine; position None: the driver gives none
ERRORS = {
    "sqlite": [
        ("SELECT name FROM customers WHERE", "syntax", "SQLITE_ERROR", None),
        ("SELECT nope FROM customers", "schema", "SQLITE_ERROR", None),
        ("SELECT abs(1, 2)", "type", "SQLITE_ERROR", None),
    ],
    "postgresql": [
        ("SELECT name FROM customers WHERE", "syntax", "42601", 33),
        ("SELECT nope FROM customers", "schema", "42703", 8),
        ("SELECT name + 1 FROM customers", "type", "42883", 13),
        ("SELECT 1 + 'abc'", "type", "22P02", 12),
    ],
    "mysql": [
        ("SELECT name FROM customers WHERE", "syntax", "1064", 33),
        ("SELECT nope FROM customers", "schema", "1054", None),
        ("SELECT 1 + POINT(1, 1)", "type", "4078", None),
    ],
}


@pytest.mark.parametrize(
    ("name", "statement", "kind", "code", "position"),
    [(name, *case) for name, cases in ERRORS.items() for case in cases],
)
def test_errors_come_back_with_code_and_position(
    live_engines: dict[str, Engine],
    name: str,
    statement: str,
    kind: str,
    code: str,
    position: int | None,
) -> None:
    engine = engine_or_skip(live_engines, name)
    with open_database(engine.url) as executor:
        result = executor.execute(statement)
    assert result.status == "error", result
    assert result.error_kind == kind, result.error
    assert result.error_code == code
    assert result.error_position == position
    assert result.error


def test_position_counts_in_the_whole_text(server: Engine) -> None:
    text = "SELECT 1;\nSELECT nope FROM customers"
    with open_database(server.url) as executor:
        result = executor.execute(text)
    assert result.status == "error"
    if server.name == "postgresql":
        assert result.error_position == text.index("nope") + 1
        assert "LINE 1: SELECT nope FROM customers" in (result.error or "")


def test_cells_are_json_safe(server: Engine) -> None:
    extra = {
        "postgresql": ", INTERVAL '1 day 2 hours' AS span, gen_random_uuid() AS uid, "
        "ARRAY[1, 2] AS arr, '{\"a\": 1}'::jsonb AS doc, '\\x00ff'::bytea AS raw",
        "mysql": ", TIMEDIFF('10:00:00', '08:30:00') AS span, UUID() AS uid, x'00ff' AS raw",
    }[server.name]
    with open_database(server.url) as executor:
        result = executor.execute(
            f"SELECT total, placed_at, CAST(placed_at AS DATE) AS day{extra} FROM orders "
            "ORDER BY id"
        )
    assert result.ok, result.error
    json.dumps(result.model_dump())
    first = dict(zip(result.columns, result.rows[0], strict=True))
    assert first["total"] == 50.5
    assert first["placed_at"] == "2024-01-05 10:00:00"
    assert first["day"] == "2024-01-05"
    assert first["raw"] == "00ff"
    assert first["span"] in ("1 day 02:00:00", "01:30:00")


def test_mariadb_statement_stopped_silently_by_the_timeout_is_a_timeout(
    live_engines: dict[str, Engine],
) -> None:
    """MariaDB's max_statement_time ends BENCHMARK without an error (it returns 0): the
    session's kill counter shows it, and the result is `timeout`, never `ok`."""
    engine = engine_or_skip(live_engines, "mysql")
    with open_database(engine.url) as executor:
        started = time.monotonic()
        result = executor.execute("SELECT BENCHMARK(5000000000, SHA2('x', 512))", timeout=1)
        assert result.status == "timeout", result
        assert time.monotonic() - started < 2.5
        # a statement that ends near its limit on its own is still ok, and so is the next
        assert executor.execute("SELECT SLEEP(0.95)", timeout=1).rows == [[0]]
        assert executor.execute("SELECT 1").rows == [[1]]
    with open_database(engine.url, allow_writes=True) as sandbox:  # on the copy too
        killed = sandbox.execute("SELECT BENCHMARK(5000000000, SHA2('x', 512))", timeout=1)
        assert killed.status == "timeout", killed
        isolated = sandbox.execute(
            "SELECT BENCHMARK(5000000000, SHA2('x', 512))", timeout=1, isolate=True
        )
        assert isolated.status == "timeout", isolated
