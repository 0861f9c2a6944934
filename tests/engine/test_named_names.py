"""The names check (issue 38, item 5): a correction that drops a name the question and the
user's SQL both give is not accepted, by the evidence gate or by the judge; it stays ranked.
Its counterpart: a candidate that reads a table neither of them names has no vote in the
evidence rule. Table-driven unit cases, then scripted runs on real SQLite that accept without
the check."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from acts_sql import Budget, CorrectionOptions, correct
from acts_sql.engine.named_names import NamedNames
from support import generated_reply as gen
from support import raw_reply as raw
from support import scripted

SCHEMA = {"cards": ["id", "name"], "card_choice": ["id", "card_id", "non_valid_cards"]}
QUESTION = (
    "Return the cards that no card_choice row references, as its card_id or inside its "
    "non_valid_cards JSON array."
)
USERS_SQL = (
    "SELECT c.* FROM cards AS c WHERE NOT EXISTS (SELECT 1 FROM card_choice AS cc "
    "WHERE cc.non_valid_cards = CAST(c.id AS TEXT))"
)

CASES = [
    # id, candidate SQL, verdict
    (
        "drops the JSON column",
        "SELECT c.* FROM cards AS c WHERE c.id NOT IN (SELECT card_id FROM card_choice)",
        "fail",
    ),
    (
        "keeps it inside json_each",
        "SELECT c.* FROM cards AS c WHERE NOT EXISTS (SELECT 1 FROM card_choice AS cc, "
        "json_each(cc.non_valid_cards) AS j WHERE cc.card_id = c.id OR j.value = c.id)",
        "pass",
    ),
    (
        "keeps it in any case",
        "SELECT * FROM CARDS WHERE id NOT IN (SELECT CARD_ID FROM CARD_CHOICE UNION "
        "SELECT value FROM card_choice, json_each(NON_VALID_CARDS))",
        "pass",
    ),
]


@pytest.mark.parametrize(("sql", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_candidate_keeps_the_names_the_question_and_the_users_sql_give(sql, expected):
    named = NamedNames.of(QUESTION, USERS_SQL, SCHEMA)
    assert named.names == {"cards", "card_choice", "non_valid_cards"}  # "id" is too short
    check = named.check([sql])
    assert check.verdict == expected, check.detail
    if expected == "fail":
        assert "non_valid_cards" in check.detail


@pytest.mark.parametrize(
    ("question", "sql", "schema"),
    [
        # the user's wrong table name is not a schema name: dropping it is the fix
        (
            "Where is each department?",
            "SELECT place FROM department",
            {"departments": ["place"]},
        ),
        # the question names a column the user's SQL never used
        ("Group the rows by non_valid_cards.", "SELECT COUNT(*) FROM cards", SCHEMA),
        # no user's SQL (text-to-SQL)
        (QUESTION, "", SCHEMA),
    ],
)
def test_names_the_check_does_not_hold_to(question, sql, schema):
    named = NamedNames.of(question, sql, schema)
    assert named.check(["SELECT 1"]).verdict == "unknown"


WEEKLY = "Aggregate (average) the levels by week; mine gives an incorrect count per week."
WEEKLY_SQL = "SELECT week, COUNT(*), AVG(cl) AS cl FROM experiment GROUP BY week"
AGGREGATE_CASES = [
    # id, candidate SQL, verdict, dropped
    (
        "sums instead of averaging, and drops the count",
        "SELECT week, SUM(cl) AS cl FROM experiment GROUP BY week",
        "fail",
        "AVG(), COUNT()",
    ),
    (
        "keeps both, another grouping",
        "SELECT date(ts, 'weekday 4') AS week, count (*), avg(cl) FROM experiment GROUP BY 1",
        "pass",
        "",
    ),
]


@pytest.mark.parametrize(
    ("sql", "expected", "dropped"),
    [c[1:] for c in AGGREGATE_CASES],
    ids=[c[0] for c in AGGREGATE_CASES],
)
def test_a_candidate_keeps_the_aggregates_the_question_asks_for(sql, expected, dropped):
    named = NamedNames.of(WEEKLY, WEEKLY_SQL, {"experiment": ["week", "cl", "ts"]})
    assert named.aggregates == {"AVG", "COUNT"}  # SUM is neither asked for nor used
    check = named.check([sql])
    assert check.verdict == expected, check.detail
    assert dropped in check.detail


def test_min_and_max_may_become_an_order_by():
    question = "Which room has the highest price?"
    named = NamedNames.of(question, "SELECT MAX(price) FROM rooms", {"rooms": ["price"]})
    assert not named.aggregates
    assert named.check(["SELECT name FROM rooms ORDER BY price DESC LIMIT 1"]).verdict == "pass"


# ------------------------------------------------------------------ in a run

RUN_QUESTION = "List the users whose name or nickname starts with 'a'; mine returns too few."
RUN_USERS_SQL = "SELECT name FROM users WHERE name LIKE 'a%' AND nickname LIKE 'a%'"
DROPS = "SELECT name FROM users WHERE name LIKE 'a%'"
KEEPS = "SELECT name FROM users WHERE name LIKE 'a%' OR nickname LIKE 'a%'"
GENERATE_ONLY = {"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]}


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "app.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, nickname TEXT)")
        conn.executemany(
            "INSERT INTO users VALUES (?, ?, ?)",
            [(1, "ann", "zed"), (2, "bob", "al"), (3, "amy", "ace")],
        )
    return str(path)


def accept(group: str) -> str:
    reason = f"group {group} filters the users by the first letter"
    return json.dumps({"reason": reason, "verdict": "accept", "group": group, "backtrack_to": None})


def events(result: Any, kind: str) -> list[Any]:
    return [e for e in result.trace if e.kind == kind]


def script(generated: str, group: str) -> dict[str, list[str]]:
    """The gate's two raw replies (both drop `nickname`), a plan, a pool of two `generated`,
    and a judge accepting `group` (A: the gate's result, which has the most votes; B: the
    other)."""
    return {
        "correct": [raw(DROPS), raw("SELECT u.name FROM users AS u WHERE u.name LIKE 'a%'")],
        "plan": [json.dumps(GENERATE_ONLY)],
        "generate_sql": [gen(generated)] * 2,
        "judge": [accept(group)],
    }


def test_the_gate_does_not_accept_an_agreement_that_drops_a_named_column(db):
    options = CorrectionOptions(candidates=2, budget=Budget(max_llm_calls=7))
    result = correct(
        db, RUN_QUESTION, RUN_USERS_SQL, llm=scripted(script(KEEPS, "B")), options=options
    )

    gate = events(result, "evidence")
    assert len(gate) == 1 and gate[0].data.accepted is False
    assert "names kept: fail" in gate[0].summary and "nickname" in gate[0].summary
    assert events(result, "plan")  # the search ran
    # and the judge accepted the candidate that keeps the column
    assert result.accepted is True and result.reason == "accepted"
    assert sorted(r[0] for r in result.result.rows) == ["amy", "ann", "bob"]


def test_the_judge_may_not_accept_a_candidate_that_drops_a_named_column(db):
    options = CorrectionOptions(candidates=2, evidence_gate=False, budget=Budget(max_llm_calls=5))
    result = correct(
        db, RUN_QUESTION, RUN_USERS_SQL, llm=scripted(script(DROPS, "A")), options=options
    )

    judged = events(result, "judgement")
    assert judged and judged[0].data.by == "engine" and judged[0].data.verdict == "reject"
    assert "the judge accepted, but a check fails (names kept" in judged[0].summary
    assert result.accepted is False
    # it stays ranked: the returned SQL is still the candidate many agree on
    assert sorted(r[0] for r in result.result.rows) == ["amy", "ann"]


# ------------------------------------------------------------------ tables named

FLEET = {
    "trips": ["trip_id", "vehicle_id", "driver_id"],
    "vehicles": ["vehicle_id", "plate"],
    "drivers": ["driver_id", "name"],
    "order_items": ["order_id", "qty"],
    "status": ["status"],
}
PLATES = "For every trip, show the trip id, the vehicle id and the vehicle's plate."
AMBIGUOUS = "SELECT trip_id, vehicle_id, plate FROM trips JOIN vehicles ON 1 = 1"

TABLES = [
    # id, question, user's SQL, candidate, tables it adds
    (
        "a join nobody asked for",
        PLATES,
        AMBIGUOUS,
        "SELECT d.name FROM trips, drivers d",
        ["drivers"],
    ),
    ("tables the user's SQL reads", PLATES, AMBIGUOUS, "SELECT plate FROM vehicles", []),
    (
        "a singular in the question",
        "Which driver drove most?",
        "SELECT 1",
        "SELECT * FROM drivers",
        [],
    ),
    (
        "the user's misspelled table",
        "List them.",
        "SELECT * FROM driver",
        "SELECT * FROM drivers",
        [],
    ),
    ("a name in parts", "Sum the order items.", "SELECT 1", "SELECT SUM(qty) FROM order_items", []),
    ("a table named like a column", "x", "SELECT 1", "SELECT status FROM status", []),
    ("no user SQL: nothing checked", PLATES, "", "SELECT d.name FROM drivers d", []),
]


@pytest.mark.parametrize(
    ("question", "users", "candidate", "added"),
    [c[1:] for c in TABLES],
    ids=[c[0] for c in TABLES],
)
def test_tables_neither_the_question_nor_the_users_sql_names(question, users, candidate, added):
    named = NamedNames.of(question, users, FLEET)
    assert named.added(candidate) == added
    assert (named.unnamed(candidate) is None) == (not added)
    # text-to-SQL mode: the first query is the model's own, nothing is checked
    assert NamedNames.of(question, users, FLEET, tables=False).added(candidate) == []


@pytest.fixture
def fleet(tmp_path: Path) -> str:
    path = tmp_path / "fleet.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE vehicles (vehicle_id INTEGER PRIMARY KEY, plate TEXT)")
        conn.execute("CREATE TABLE drivers (driver_id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("CREATE TABLE trips (trip_id INT, vehicle_id INT, driver_id INT)")
        conn.executemany("INSERT INTO vehicles VALUES (?, ?)", [(1, "AB-1"), (2, "CD-2")])
        conn.executemany("INSERT INTO drivers VALUES (?, ?)", [(1, "ann"), (2, "bob")])
        conn.executemany("INSERT INTO trips VALUES (?, ?, ?)", [(1, 1, 1), (2, 2, 2), (3, 1, 2)])
    return str(path)


def test_an_agreement_on_a_join_nobody_named_is_no_evidence(fleet):
    """The story of a kept everyday run (P06): the user's SQL fails on an ambiguous column; the
    raw rewrite and a sample agree on a result with the drivers' names joined in, which the
    question never asks for. That agreement no longer counts; the rule's repair is confirmed
    by the search's pool instead, and accepted without the judge."""
    users = (
        "SELECT trip_id, vehicle_id, plate FROM trips "
        "JOIN vehicles ON trips.vehicle_id = vehicles.vehicle_id"
    )
    joined = (
        "SELECT t.trip_id, t.vehicle_id, v.plate, d.name FROM trips t JOIN vehicles v "
        "ON t.vehicle_id = v.vehicle_id JOIN drivers d ON t.driver_id = d.driver_id"
    )
    right = (
        "SELECT t.trip_id, t.vehicle_id, v.plate FROM trips t "
        "JOIN vehicles v ON t.vehicle_id = v.vehicle_id"
    )
    llm = scripted(
        {
            "correct": [raw(joined), raw(joined.replace("t.trip_id", "trip_id")), raw(users)],
            "plan": [json.dumps(GENERATE_ONLY)],
            "generate_sql": [gen(right)] * 3,
            "judge": [accept("A")],
        }
    )
    # the agreement path: the lexical rule would accept ambiguous_join_key's repair alone
    options = CorrectionOptions(candidates=3, lexical_repairs=False)
    result = correct(fleet, PLATES, users, llm=llm, options=options)

    gate, after_pool = events(result, "evidence")
    assert gate.data.accepted is False
    unnamed = [c for c in gate.data.candidates if c["refusal"] and "drivers" in c["refusal"]]
    assert len(unnamed) == 2  # the raw rewrite and the sample: no votes
    assert after_pool.data.accepted is True
    assert not [e for e in events(result, "llm_call") if e.purpose == "judge"]
    assert result.accepted is True
    assert result.result.columns == ["trip_id", "vehicle_id", "plate"]
