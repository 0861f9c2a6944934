"""`acts_sql.correct(...)` and `acts-sql fix` end to end on PostgreSQL and MariaDB.

Scripted LLM, real servers. One story has a candidate that tries DROP TABLE
(blocked, data intact, the search goes on); one is a Management-style task
whose fix needs DDL, tried on a throw-away copy (isolated: the copy is left as
it was) and then verified there.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from live import Engine
from typer.testing import CliRunner

from acts_sql import correct
from acts_sql.cli.app import app
from acts_sql.db.connect import open_database
from support import scripted

QUESTION = "Which rooms have overlapping bookings?"
USER_SQL = (
    "SELECT r.room_id, r.name FROM rooms AS r JOIN bookings AS b ON b.room_id = r.room_id "
    "GROUP BY r.room_id, r.name HAVING COUNT(*) > 1 ORDER BY r.room_id"
)
RIGHT_SQL = (
    "SELECT DISTINCT r.room_id, r.name FROM rooms AS r "
    "JOIN bookings AS b1 ON b1.room_id = r.room_id "
    "JOIN bookings AS b2 ON b2.room_id = r.room_id AND b1.booking_id < b2.booking_id "
    "WHERE b1.start_time < b2.end_time AND b2.start_time < b1.end_time ORDER BY r.room_id"
)


def overlap_script() -> dict[str, list[Any]]:
    """The agent reads 'overlapping' two ways; its first candidate drops a table."""
    return {
        "plan": [
            {
                "cursor": "n1",
                "nodes": [
                    {
                        "id": "n1",
                        "description": "What does 'overlapping' mean?",
                        "tool": "detect_ambiguities",
                        "input": {},
                        "children": [],
                    }
                ],
            }
        ],
        "detect_ambiguities": [
            {
                "ambiguities": [
                    {
                        "phrase": "overlapping bookings",
                        "interpretations": [
                            "start over: rebuild the bookings table",
                            "two bookings of a room whose time ranges intersect",
                        ],
                    }
                ]
            }
        ],
        "choose": [{"cursor": "n1.1", "reason": "try the first reading"}],
        "correct": [f"```sql\n{USER_SQL}\n```"],  # the raw rewrite: refused, it changes nothing
        "generate_sql": [
            {"sql": "DROP TABLE bookings", "rationale": "rebuild from scratch"},
            {"sql": RIGHT_SQL, "rationale": "pair bookings whose ranges intersect"},
        ],
        # the blocked DROP and the refused raw rewrite never reach the judge
        "judge": [
            {
                "verdict": "accept",
                "reason": "rooms with intersecting bookings",
                "backtrack_to": None,
                "new_nodes": [],
            },
        ],
    }


def test_correct_on_a_server_blocks_drop_table_and_finds_the_fix(server: Engine) -> None:
    result = correct(server.url, QUESTION, USER_SQL, llm=scripted(overlap_script()))

    assert result.accepted is True
    assert result.sql == RIGHT_SQL
    assert result.dialect == ("mysql" if server.name == "mysql" else "postgresql")
    assert result.result is not None and result.result.rows == [[1, "Atlas"]]
    candidates = {e.data["sql"]: e.data for e in result.trace if e.kind == "candidate"}
    assert candidates["DROP TABLE bookings"]["status"] == "blocked"
    assert candidates[USER_SQL]["verdict"] == "refused"
    nodes = {n["id"]: n for n in result.tree}
    assert nodes["n1.1"]["status"] == "rejected"
    assert nodes["n1.2"]["status"] == "accepted"
    statements = [e for e in result.trace if e.kind == "statement"]
    assert any(e.data["status"] == "blocked" for e in statements)
    with open_database(server.url) as executor:  # and the table is still there
        assert executor.execute("SELECT count(*) FROM bookings").rows == [[5]]


def test_acts_sql_fix_cli_on_a_server(server: Engine, tmp_path: Path) -> None:
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            {
                k: [r if isinstance(r, str) else json.dumps(r) for r in v]
                for k, v in overlap_script().items()
            }
        )
    )
    outcome = CliRunner().invoke(
        app,
        [
            "fix",
            "--db",
            server.url,
            "--question",
            QUESTION,
            "--sql",
            USER_SQL,
            "--llm",
            f"scripted:{script}",
            "--json",
        ],
    )
    assert outcome.exit_code == 0, outcome.output
    payload = json.loads(outcome.stdout)
    assert payload["accepted"] is True and payload["sql"] == RIGHT_SQL
    assert "acts-test-pw" not in outcome.output


def test_cli_reports_a_bad_password_in_one_line(server: Engine, tmp_path: Path) -> None:
    bad = server.url.replace("acts-test-pw", "wrong-pw")
    script = tmp_path / "script.json"
    script.write_text("{}")
    outcome = CliRunner().invoke(
        app,
        ["fix", "--db", bad, "--question", "q", "--sql", "SELECT 1", "--llm", f"scripted:{script}"],
    )
    assert outcome.exit_code == 2
    err = outcome.stderr.strip()
    assert err.startswith("error:") and len(err.splitlines()) == 1
    assert "wrong-pw" not in err and "acts@127.0.0.1" in err


MANAGEMENT_QUESTION = (
    "Add a boolean column vip (default false) to the customers table and index orders by "
    "customer so that lookups are fast."
)
MANAGEMENT_SQL = (
    "ALTER TABLE customer ADD COLUMN vip BOOLEAN DEFAULT false; "
    "CREATE INDEX orders_customer_idx ON orders (customer_id)"
)
MANAGEMENT_FIX = (
    "ALTER TABLE customers ADD COLUMN vip BOOLEAN DEFAULT false; "
    "CREATE INDEX orders_customer_idx ON orders (customer_id)"
)
INDEX_QUERY = {
    "postgresql": "SELECT indexname FROM pg_indexes WHERE tablename = 'orders' "
    "AND indexname = 'orders_customer_idx'",
    "mysql": "SELECT DISTINCT index_name FROM information_schema.statistics "
    "WHERE table_schema = DATABASE() AND index_name = 'orders_customer_idx'",
}


def test_management_task_is_tried_and_verified_on_a_copy(server: Engine) -> None:
    script = {
        "plan": [
            {
                "cursor": "n1",
                "nodes": [
                    {
                        "id": "n1",
                        "description": "fix the table name",
                        "tool": "generate_sql",
                        "input": {"hypothesis": "the table is called customers"},
                        "children": [],
                    }
                ],
            }
        ],
        "correct": [f"```sql\n{MANAGEMENT_SQL}\n```"],  # the raw rewrite repeats the user's
        "generate_sql": [{"sql": MANAGEMENT_FIX, "rationale": "the table is customers"}],
        "judge": [
            {
                "verdict": "accept",
                "reason": "both statements ran on the copy",
                "backtrack_to": None,
                "new_nodes": [],
            }
        ],
    }
    with open_database(server.url, allow_writes=True) as sandbox:
        result = correct(sandbox, MANAGEMENT_QUESTION, MANAGEMENT_SQL, llm=scripted(script))
        assert result.accepted is True, result.reason
        assert result.sql == MANAGEMENT_FIX
        original = next(e for e in result.trace if e.kind == "statement")
        assert original.data["status"] == "error"  # the user's DDL failed: no table customer
        # tried on the copy: it ran there, then the copy was left as it was (candidates run
        # isolated, so that every candidate starts from the same data)
        tried = [
            e for e in result.trace if e.kind == "statement" and e.data["sql"] == MANAGEMENT_FIX
        ]
        assert tried and all(e.data["status"] == "ok" for e in tried)
        assert sandbox.execute("SELECT vip FROM customers").error_kind == "schema"
        assert sandbox.execute(INDEX_QUERY[server.name]).rows == []
        # run for good, the accepted fix works on the copy
        assert sandbox.execute(result.sql).ok
        assert sandbox.execute("SELECT count(*) FROM customers WHERE vip = false").rows == [[3]]
        assert sandbox.execute(INDEX_QUERY[server.name]).rows == [["orders_customer_idx"]]
    with open_database(server.url) as executor:  # the original never changed
        assert executor.execute("SELECT vip FROM customers").error_kind == "schema"
        assert executor.execute(INDEX_QUERY[server.name]).rows == []
