"""`execute(sql, isolate=True)`: candidates leave the copy exactly as they found it.

With writes allowed, the engine runs a pool of alternative candidates on one
throw-away copy. Each runs isolated, so that one candidate's DROP, ALTER or
INSERT never changes what the next one runs against. Non-isolated calls (the
agent's `run_sql`) keep their effects on the copy, as before.

The autouse `data_intact` fixture checks after every test that the original is
unchanged and that no copy was left behind.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from live import FIFTY_K, SLOW, Engine, engine_or_skip

from acts_sql import CorrectionOptions, correct
from acts_sql.db.connect import open_database
from acts_sql.db.postgres import PostgresExecutor
from support import scripted

ADD_COLUMN = {
    "sqlite": "ALTER TABLE customers ADD COLUMN vip BOOLEAN DEFAULT 0",
    "postgresql": "ALTER TABLE customers ADD COLUMN vip BOOLEAN DEFAULT false",
    "mysql": "ALTER TABLE customers ADD COLUMN vip BOOLEAN DEFAULT false",
}
COUNTER_TABLE = {
    "sqlite": "CREATE TABLE tickets (id INTEGER PRIMARY KEY AUTOINCREMENT, label TEXT)",
    "postgresql": "CREATE TABLE tickets (id SERIAL PRIMARY KEY, label TEXT)",
    "mysql": "CREATE TABLE tickets (id INT AUTO_INCREMENT PRIMARY KEY, label TEXT)",
}
NEW_CUSTOMER = "INSERT INTO customers (id, name, city) VALUES (9, 'Zoe', 'Rome')"


def _count(executor: Any, table: str) -> int:
    result = executor.execute(f"SELECT count(*) FROM {table}")
    assert result.ok, result.error
    return int(result.rows[0][0])


def test_an_isolated_drop_leaves_the_table_and_its_rows(engine: Engine) -> None:
    with open_database(engine.url, allow_writes=True) as sandbox:
        dropped = sandbox.execute("DROP TABLE bookings", isolate=True)
        assert dropped.ok, dropped.error
        assert sandbox.execute("SELECT count(*) FROM bookings").rows == [[5]]
        # within the run the table is gone; afterwards it is back
        inside = sandbox.execute("DROP TABLE bookings; SELECT count(*) FROM bookings", isolate=True)
        assert inside.status == "error" and inside.error_kind == "schema"
        assert sandbox.execute("SELECT count(*) FROM bookings").rows == [[5]]


def test_the_same_alter_runs_twice_isolated(engine: Engine) -> None:
    with open_database(engine.url, allow_writes=True) as sandbox:
        for _ in range(2):
            altered = sandbox.execute(ADD_COLUMN[engine.name], isolate=True)
            assert altered.ok, altered.error
        assert sandbox.execute("SELECT vip FROM customers").error_kind == "schema"
        # a candidate sees its own DDL
        seen = sandbox.execute(
            f"{ADD_COLUMN[engine.name]}; SELECT count(*) FROM customers WHERE vip IS NOT NULL",
            isolate=True,
        )
        assert seen.rows == [[3]], seen.error


def test_an_isolated_insert_is_seen_within_the_run_and_gone_afterwards(engine: Engine) -> None:
    with open_database(engine.url, allow_writes=True) as sandbox:
        for _ in range(2):
            result = sandbox.execute(
                f"{NEW_CUSTOMER}; SELECT count(*) FROM customers", isolate=True
            )
            assert result.rows == [[4]], result.error
        assert _count(sandbox, "customers") == 3
        changed = sandbox.execute("UPDATE orders SET total = 0; DELETE FROM bookings", isolate=True)
        assert changed.ok and changed.row_count == 5
        assert _count(sandbox, "bookings") == 5
        assert sandbox.execute("SELECT count(*) FROM orders WHERE total = 0").rows == [[0]]


def test_isolation_restores_the_state_before_the_call_not_the_original(engine: Engine) -> None:
    with open_database(engine.url, allow_writes=True) as sandbox:
        assert sandbox.execute(ADD_COLUMN[engine.name]).ok  # run_sql: kept on the copy
        assert sandbox.execute("UPDATE customers SET vip = TRUE WHERE id = 1").ok
        deleted = "DELETE FROM orders WHERE customer_id = 3; DELETE FROM customers WHERE id = 3"
        assert sandbox.execute(deleted, isolate=True).ok
        assert sandbox.execute("UPDATE customers SET vip = FALSE", isolate=True).ok
        assert sandbox.execute("SELECT name FROM customers WHERE vip = TRUE").rows == [["Ana"]]
        assert _count(sandbox, "customers") == 3
        # and non-isolated calls still build on each other
        assert sandbox.execute(NEW_CUSTOMER).ok
        assert _count(sandbox, "customers") == 4


def test_counters_an_isolated_insert_used_are_set_back(engine: Engine) -> None:
    """SERIAL sequences (PostgreSQL) and AUTO_INCREMENT (MariaDB) do not roll back by
    themselves; isolated runs set them back, so two candidates get the same ids."""
    with open_database(engine.url, allow_writes=True) as sandbox:
        assert sandbox.execute(COUNTER_TABLE[engine.name]).ok
        assert sandbox.execute("INSERT INTO tickets (label) VALUES ('a'), ('b')").ok
        insert = "INSERT INTO tickets (label) VALUES ('c'); SELECT max(id) FROM tickets"
        ids = [sandbox.execute(insert, isolate=True).rows for _ in range(2)]
        assert ids == [[[3]], [[3]]]
        assert sandbox.execute("INSERT INTO tickets (label) VALUES ('c')").ok
        assert sandbox.execute("SELECT max(id) FROM tickets").rows == [[3]]


def test_transaction_control_stays_blocked_in_an_isolated_run(engine: Engine) -> None:
    with open_database(engine.url, allow_writes=True) as sandbox:
        for text in (f"{NEW_CUSTOMER}; COMMIT", "COMMIT", f"BEGIN; {NEW_CUSTOMER}", "ROLLBACK"):
            result = sandbox.execute(text, isolate=True)
            assert result.status == "blocked", (text, result)
        assert _count(sandbox, "customers") == 3


def test_timeouts_and_row_caps_still_apply_when_isolated(engine: Engine) -> None:
    with open_database(engine.url, allow_writes=True) as sandbox:
        started = time.monotonic()
        slow = sandbox.execute(f"{NEW_CUSTOMER}; {SLOW[engine.name]}", isolate=True, timeout=1)
        assert slow.status == "timeout", slow
        assert time.monotonic() - started < 2.5
        capped = sandbox.execute(f"{NEW_CUSTOMER}; {FIFTY_K[engine.name]}", isolate=True)
        assert capped.ok and capped.truncated and capped.row_count == 10_000
        # a result cut short mid-batch keeps the batch's earlier writes for what follows
        batch = sandbox.execute(
            f"{NEW_CUSTOMER}; {FIFTY_K[engine.name]}; SELECT count(*) FROM customers",
            isolate=True,
            max_rows=5,
        )
        assert batch.rows == [[4]], batch.error
        assert _count(sandbox, "customers") == 3
        assert sandbox.execute("SELECT 1").rows == [[1]]  # the connection is fine


def test_isolate_changes_nothing_on_a_read_only_executor(engine: Engine) -> None:
    with open_database(engine.url) as executor:
        assert executor.execute("SELECT count(*) FROM orders", isolate=True).rows == [[4]]
        blocked = executor.execute("DROP TABLE orders", isolate=True)
        assert blocked.status == "blocked"


def test_postgres_reports_why_a_statement_cannot_run_isolated(
    live_engines: dict[str, Engine],
) -> None:
    engine = engine_or_skip(live_engines, "postgresql")
    with open_database(engine.url, allow_writes=True) as sandbox:
        index = "CREATE INDEX CONCURRENTLY orders_total_idx ON orders (total)"
        result = sandbox.execute(index, isolate=True)
        assert result.status == "error" and result.error_code == "25001"
        assert "rolled back" in (result.error or "")
        assert sandbox.execute(index).ok  # run for good, it works


def test_postgres_routines_cannot_commit_out_of_an_isolated_run(
    live_engines: dict[str, Engine],
) -> None:
    engine = engine_or_skip(live_engines, "postgresql")
    # the test user is a superuser: let routines run, as `acts-sql bench` does
    with PostgresExecutor(engine.url, allow_writes=True, privileged_routines=True) as sandbox:
        procedure = (
            "CREATE PROCEDURE add_zoe() LANGUAGE plpgsql AS $$ BEGIN "
            f"{NEW_CUSTOMER}; COMMIT; END $$"
        )
        assert sandbox.execute(procedure).ok
        for text in ("CALL add_zoe()", f"DO $$ BEGIN {NEW_CUSTOMER}; COMMIT; END $$"):
            result = sandbox.execute(text, isolate=True)
            assert result.status == "error" and result.error_code == "2D000", result
            assert "rolled back" in (result.error or "")
        assert _count(sandbox, "customers") == 3


def test_mysql_ddl_runs_on_a_snapshot_that_is_dropped(live_engines: dict[str, Engine]) -> None:
    engine = engine_or_skip(live_engines, "mysql")
    with open_database(engine.url, allow_writes=True) as sandbox:
        copies = engine.copies()
        assert len(copies) == 1
        seen = sandbox.execute("DROP VIEW big_orders; SELECT DATABASE()", isolate=True)
        assert seen.ok and seen.rows[0][0] not in copies  # it ran on a second copy
        assert engine.copies() == copies  # which is gone again
        assert sandbox.execute("SELECT count(*) FROM big_orders").rows == [[2]]
        # the copy itself may not be named: the snapshot must not write it
        named = sandbox.execute(f"DROP TABLE {copies[0]}.bookings", isolate=True)
        assert named.status == "blocked"
        assert _count(sandbox, "bookings") == 5


def test_mysql_dml_on_a_non_transactional_table_is_isolated_too(
    live_engines: dict[str, Engine],
) -> None:
    engine = engine_or_skip(live_engines, "mysql")
    with open_database(engine.url, allow_writes=True) as sandbox:
        assert sandbox.execute("CREATE TABLE notes (id INT, body TEXT) ENGINE=MyISAM").ok
        assert sandbox.execute("INSERT INTO notes VALUES (1, 'kept')").ok
        for _ in range(2):
            result = sandbox.execute(
                "INSERT INTO notes VALUES (2, 'tried'); SELECT count(*) FROM notes", isolate=True
            )
            assert result.rows == [[2]], result.error
        assert sandbox.execute("SELECT body FROM notes").rows == [["kept"]]


# ---------------------------------------------------------------- end to end

QUESTION = "How many bookings are there?"
USER_SQL = "SELECT count(*) FROM booking"
COUNT_SQL = "SELECT count(*) AS n FROM bookings"
COUNT_AGAIN = "SELECT COUNT(booking_id) AS n FROM bookings"


def test_a_candidate_that_drops_the_table_does_not_hide_it_from_the_next(engine: Engine) -> None:
    """The pool's first candidate drops the table, a later one deletes its rows; the
    others, run after them on the same copy, still read all five bookings."""
    script = {
        "plan": [{"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]}],
        "generate_sql": [
            {"sql": "DROP TABLE bookings", "rationale": "start over"},
            {"sql": COUNT_SQL, "rationale": "the table is bookings"},
            {"sql": "DELETE FROM bookings", "rationale": "clear them"},
        ],
        "correct": [f"```sql\n{COUNT_AGAIN}\n```"],  # the raw rewrite, run after the pool
        "judge": [
            {
                "verdict": "accept",
                "reason": "group A counts the bookings",
                "group": "A",
                "backtrack_to": None,
            }
        ],
    }
    with open_database(engine.url, allow_writes=True) as database:
        result = correct(
            database,
            QUESTION,
            USER_SQL,
            llm=scripted(script),
            # the pool is under test: the evidence gate (rule repair and raw rewrite agree)
            # would accept before it
            options=CorrectionOptions(candidates=3, evidence_gate=False),
        )
    # the candidates' statements; the rule chain's probes of the user's SQL are "rules"
    ran = [
        e.data
        for e in result.trace
        if e.kind == "statement" and e.node == "n1" and e.purpose != "rules"
    ]
    assert [s["sql"] for s in ran] == [
        "DROP TABLE bookings",
        COUNT_SQL,
        "DELETE FROM bookings",
        COUNT_AGAIN,
    ]
    assert all(s["status"] == "ok" for s in ran), ran
    assert result.accepted is True, result.reason
    assert result.sql in (COUNT_SQL, COUNT_AGAIN)
    assert result.result is not None and result.result.rows == [[5]]
    counted = [c for c in result.candidates if c["sql"] in (COUNT_SQL, COUNT_AGAIN)]
    assert len(counted) == 2 and counted[0]["group"] == counted[1]["group"]  # same rows


@pytest.mark.parametrize("method", ["raw", "vote"])
def test_baselines_run_their_candidates_isolated(engine: Engine, method: str) -> None:
    drop_then_count = "DROP TABLE bookings"
    script = {"correct": [f"```sql\n{drop_then_count}\n```", f"```sql\n{COUNT_SQL}\n```"]}
    with open_database(engine.url, allow_writes=True) as sandbox:
        result = correct(
            sandbox,
            QUESTION,
            USER_SQL,
            llm=scripted(script),
            options=CorrectionOptions(method=method, candidates=2),
        )
        assert result.sql is not None
        assert _count(sandbox, "bookings") == 5  # the DROP did not stay on the copy


@pytest.mark.parametrize("user_sql", ["DELETE FROM bookings", "DROP TABLE bookings"])
def test_the_users_own_write_does_not_change_what_later_statements_see(
    engine: Engine, user_sql: str
) -> None:
    """The user's SQL runs first on the copy; the tool check and the candidate that follow
    still see all five bookings (each statement starts from the database as it was)."""
    script = {
        "plan": [
            {
                "cursor": "n1",
                "nodes": [
                    {
                        "id": "n1",
                        "tool": "run_sql",
                        "input": {"sql": COUNT_SQL},
                        "children": ["n2"],
                    },
                    {"id": "n2", "tool": "generate_sql"},
                ],
            }
        ],
        "generate_sql": [{"sql": COUNT_SQL, "rationale": "count them"}],
        "correct": [f"```sql\n{COUNT_AGAIN}\n```"],
        "judge": [{"verdict": "accept", "reason": "counts", "group": "A", "backtrack_to": None}],
    }
    with open_database(engine.url, allow_writes=True) as database:
        result = correct(
            database,
            QUESTION,
            user_sql,
            llm=scripted(script),
            options=CorrectionOptions(candidates=1),
        )
    statements = [e for e in result.trace if e.kind == "statement"]
    assert statements[0].purpose == "original" and statements[0].data["status"] == "ok"
    counts = [e.data for e in statements if e.data["sql"] in (COUNT_SQL, COUNT_AGAIN)]
    assert len(counts) >= 2 and all(c["status"] == "ok" for c in counts), counts
    assert result.result is not None and result.result.rows == [[5]]
    checked = next(e for e in result.trace if e.kind == "node_finished" and e.node == "n1")
    assert "5" in checked.summary or "5" in str(checked.data.get("output"))
