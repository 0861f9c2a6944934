"""Budgets scaled to the evidence (issue 38, item 7) and the rule chain before any model call
(item 1). The pure rule (`scale`) is table-driven on gathered candidates; the runs use a
scripted LLM on real SQLite, each next to the same script with `scaled_budget=False`, which
shows what the search alone spends."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from acts_sql import Budget, CorrectionOptions, correct
from acts_sql.db.connect import open_database
from acts_sql.db.result import ExecResult
from acts_sql.engine.budget import Budget as BudgetModel
from acts_sql.engine.budget import BudgetTracker, ScaledBudgetSpentError
from acts_sql.engine.evidence_rule import Evidence
from acts_sql.engine.scaled_budget import (
    JUDGEMENT_CALLS,
    SearchAllowance,
    round_calls,
    scale,
    unit_calls,
)
from support import generated_reply as gen
from support import raw_reply as raw
from support import scripted

QUESTION = "List the names of all users."
GENERATE_ONLY = {"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]}


def ok(*rows: tuple[Any, ...], columns: tuple[str, ...] = ("name",)) -> ExecResult:
    return ExecResult(
        status="ok", columns=list(columns), rows=[list(r) for r in rows], row_count=len(rows)
    )


def failing() -> ExecResult:
    return ExecResult(status="error", error="no such column: nam")


def ev(origin: str, fingerprint: str | None, result: ExecResult, refusal: str | None = None):
    return Evidence(
        origin=origin, sql="SELECT 1", result=result, fingerprint=fingerprint, refusal=refusal
    )


ROUND_CALLS = round_calls(4)
"""A round with pools of 4 (the local default): plan, detection, 4 samples, judgement, spare."""
ANN = ok(("ann",), ("bob",))
CY = ok(("cy",), ("dee",))

LEVELS = [
    # id, gathered candidates, the user's SQL fails, level, more calls
    ("a lone rule repair of a failing SQL", [ev("rule:x", "f1", ANN)], True, "single", 0),
    (
        "a lone raw rewrite, samples failed",
        [ev("raw", "f1", ANN), ev("raw:sample", None, failing())],
        True,
        "single",
        0,
    ),
    (
        "raw and rule disagree",
        [ev("raw", "f1", ANN), ev("rule:x", "f2", CY)],
        True,
        "contested",
        ROUND_CALLS,
    ),
    (
        "a sample disagrees with the raw rewrite",
        [ev("raw", "f1", ANN), ev("raw:sample", "f2", CY)],
        True,
        "contested",
        ROUND_CALLS,
    ),
    (
        "only a sample runs: samples alone are no anchor",
        [ev("raw", None, failing()), ev("raw:sample", "f2", CY)],
        True,
        "open",
        ROUND_CALLS,
    ),
    (
        "the raw rewrite returns the user's rows",
        [ev("raw", "f1", ANN, refusal="the user's rows")],
        True,
        "open",
        ROUND_CALLS,
    ),
    ("nothing runs", [ev("raw", None, failing())], True, "open", ROUND_CALLS),
    ("one result while the user's SQL runs", [ev("raw", "f1", ANN)], False, "open", ROUND_CALLS),
]


@pytest.mark.parametrize(
    ("gathered", "fails", "level", "more"),
    [case[1:] for case in LEVELS],
    ids=[case[0] for case in LEVELS],
)
def test_the_level_of_the_gathered_evidence(gathered, fails, level, more):
    scaled = scale(gathered, QUESTION, user_sql_fails=fails, pool_size=4)
    assert (scaled.level, scaled.more_calls) == (level, more)


def test_a_result_the_shape_check_fails_does_not_stop_the_search():
    """ "How many" wants one number: two rows are no evidence to stop on."""
    scaled = scale(
        [ev("raw", "f1", ANN)], "How many users are there?", user_sql_fails=True, pool_size=4
    )
    assert scaled.level == "open"


def test_a_round_reaches_its_judgement():
    """Plan, detection, a choice, a pool of K and its judgement fit in a round, with a spare."""
    assert [round_calls(k) for k in (1, 4, 8)] == [6, 9, 13]
    assert [unit_calls(k) for k in (1, 4)] == [2, 5]


def test_the_allowance_caps_calls_below_the_limit_and_grows_for_a_judgement():
    tracker = BudgetTracker(BudgetModel(max_llm_calls=10))
    tracker.take_llm_call()
    allowance = SearchAllowance(tracker)
    assert allowance.grow("f1") is None  # not started: the budget's limit holds
    gathered = [ev("raw", None, failing()), ev("rule:x", "f0", ANN)]
    level = scale(gathered, QUESTION, user_sql_fails=False, pool_size=1)
    assert allowance.start(level, {"f0"}) == 1 + round_calls(1) == 7
    for _ in range(4):
        tracker.take_llm_call()
    assert allowance.grow("f0") is None  # agreed on at the gate: already counted
    assert allowance.grow("f1") is None  # 5 made: the round leaves its judgement and a spare
    tracker.take_llm_call()
    assert allowance.grow("f2") == 6 + JUDGEMENT_CALLS  # 6 made: its judgement, no round
    assert allowance.grow("f2") is None
    for _ in range(2):
        tracker.take_llm_call()
    with pytest.raises(Exception, match="scaled budget spent: 8 LLM calls"):
        tracker.take_llm_call()


def test_room_for_a_unit_counts_what_is_left():
    tracker = BudgetTracker(BudgetModel(max_llm_calls=20))
    allowance = SearchAllowance(tracker)
    assert allowance.room_for(100)  # not started: the budget's own limit decides
    allowance.start(scale([], QUESTION, user_sql_fails=False, pool_size=4), set())
    for _ in range(7):
        tracker.take_llm_call()
    assert allowance.room_for(2) and not allowance.room_for(3)
    error = allowance.spent("a pool and its judgement", 5)
    assert str(error) == (
        "scaled budget spent: 9 LLM calls: no result may be accepted yet; one round; "
        "a pool and its judgement needs 5, 2 left"
    )


def test_agreement_grows_the_allowance_at_most_twice_and_never_past_the_limit():
    tracker = BudgetTracker(BudgetModel(max_llm_calls=11))
    allowance = SearchAllowance(tracker)
    round1 = round_calls(1)
    allowance.start(scale([], QUESTION, user_sql_fails=False, pool_size=1), set())
    grown = []
    for fingerprint in ("a", "a", "b", "c"):
        for _ in range(round1 if fingerprint == "a" and not grown else 0):
            tracker.take_llm_call()
        grown.append(allowance.grow(fingerprint))
        tracker.take_llm_call()
    assert grown == [
        round1 + JUDGEMENT_CALLS,
        None,  # the same result again
        round1 + 2 + JUDGEMENT_CALLS,
        None,  # MAX_GROWTH reached
    ]
    capped = BudgetTracker(BudgetModel(max_llm_calls=7))
    near = SearchAllowance(capped)
    near.start(scale([], QUESTION, user_sql_fails=False, pool_size=1), set())
    for _ in range(round1):
        capped.take_llm_call()
    assert near.grow("a") == 7  # capped at the budget's limit


def test_a_spent_allowance_says_so():
    tracker = BudgetTracker(BudgetModel(max_llm_calls=10))
    tracker.allow(1, "one repair, nothing against it")
    tracker.take_llm_call()
    with pytest.raises(ScaledBudgetSpentError, match=r"^scaled budget spent: 1 LLM call: one"):
        tracker.take_llm_call()


# ------------------------------------------------------------------------- runs


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "app.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT, team TEXT)")
        conn.executemany(
            "INSERT INTO users VALUES (?, ?, ?)",
            [(1, "ann", "red"), (2, "bob", "blue"), (3, "cy", "red")],
        )
    return str(path)


def accept() -> str:
    return json.dumps(
        {"reason": "it lists ann and bob", "verdict": "accept", "group": "A", "backtrack_to": None}
    )


def run(db: str, sql: str, script: dict[str, list[str]], calls: int = 12, **options: Any):
    executor = open_database(db)
    try:
        return correct(
            executor,
            QUESTION,
            sql,
            llm=scripted(script),
            options=CorrectionOptions(
                # the agreement path: the lexical rule would accept `nam`'s repair alone
                **{"candidates": 1, "lexical_repairs": False, **options},
                budget=Budget(max_llm_calls=calls),
            ),
        )
    finally:
        executor.close()


def llm_calls(result: Any) -> list[Any]:
    return [e for e in result.trace if e.kind == "llm_call"]


def test_a_lone_repair_of_a_failing_sql_stops_after_the_raw_call(db):
    """The rule chain cannot repair a query cut short, the raw rewrite runs and nothing
    contradicts it: returned, not accepted, after 1 call; the full budget asks
    for a plan, a SQL and a judgement on the same result."""
    script = {
        "correct": [raw("SELECT name FROM users")],
        "plan": [json.dumps(GENERATE_ONLY)],
        "generate_sql": [gen("SELECT name FROM users")],
        "judge": [accept()],
    }
    scaled = run(db, "SELECT name FROM users WHERE", script)
    full = run(db, "SELECT name FROM users WHERE", script, scaled_budget=False)

    assert scaled.sql == "SELECT name FROM users" and scaled.accepted is False
    assert len(llm_calls(scaled)) == 1
    assert not [e for e in scaled.trace if e.kind == "budget_scaled"]  # stopped: nothing grows
    assert scaled.reason.startswith("scaled budget spent: 1 LLM call: one result may be accepted")
    [gate] = [e for e in scaled.trace if e.kind == "evidence"]
    assert gate.data["allowed_calls"] == 1 and "one result" in gate.data["scaled"]
    assert len(llm_calls(full)) >= 3 and full.sql == scaled.sql


def reject() -> str:
    return json.dumps(
        {
            "reason": "bob is not on the red team",
            "verdict": "reject",
            "group": None,
            "backtrack_to": None,
        }
    )


DISAGREEING_GATE = {
    # the raw rewrite, then (pools of 4) two gate samples that fail
    "correct": [raw("SELECT name FROM users WHERE team = 'red'")] + [raw("SELECT nme FROM u")] * 2,
    "plan": [json.dumps(GENERATE_ONLY)] * 2,
}
AGREEING_POOL = [
    gen("SELECT name FROM users WHERE id = 3"),
    gen("SELECT name FROM users WHERE id = 1"),
    gen("SELECT name FROM users WHERE id > 1"),
    gen("SELECT name FROM users WHERE id >= 2"),
]
SCATTERED_POOL = [*AGREEING_POOL[:3], gen("SELECT name FROM users WHERE id < 3")]


def test_disagreement_gets_a_round_that_reaches_its_judgement(db):
    """The raw rewrite and the rule repair disagree: the tree gets one round, 3 + 9 calls in
    all with pools of 4. Its pool returns one result twice (two independent candidates agree)
    and the round has room for the judgement, which accepts: nothing needed to grow."""
    script = {**DISAGREEING_GATE, "generate_sql": AGREEING_POOL * 2, "judge": [accept()]}
    agreed = run(db, "SELECT nam FROM users", script, candidates=4)

    [gate] = [e for e in agreed.trace if e.kind == "evidence"]
    assert gate.data["allowed_calls"] == 3 + ROUND_CALLS
    assert not [e for e in agreed.trace if e.kind == "budget_scaled"]
    assert agreed.accepted and "id > 1" in agreed.sql
    assert [e.purpose for e in llm_calls(agreed)][-1] == "judge"


def test_a_pool_that_cannot_be_judged_is_not_started(db):
    """The round's pool scatters and its judgement rejects: 3 calls are left, fewer than a new
    plan, a pool of 4 and its judgement. The search stops there, instead of writing SQL that
    no judgement could follow (without the rule it plans again and writes 2 samples)."""
    script = {**DISAGREEING_GATE, "generate_sql": SCATTERED_POOL * 2, "judge": [reject()] * 2}
    result = run(db, "SELECT nam FROM users", script, calls=20, candidates=4)

    purposes = [e.purpose for e in llm_calls(result)]
    assert purposes == ["correct"] * 3 + ["plan"] + ["generate_sql"] * 4 + ["judge"]
    assert result.reason.startswith(
        "scaled budget spent: 12 LLM calls: 2 results may be accepted; one plan round to "
        "choose; a new plan, a pool and its judgement needs 6, 3 left"
    )
    assert not result.accepted


def test_readings_add_their_choice_and_one_more_reading():
    tracker = BudgetTracker(BudgetModel(max_llm_calls=40))
    allowance = SearchAllowance(tracker)
    allowance.start(scale([], QUESTION, user_sql_fails=False, pool_size=4), set())
    assert tracker.call_limit == ROUND_CALLS
    assert allowance.grow_readings(1, 4) is None  # one reading: the round covers it
    # one more reading: its choice, its pool of 4 and its judgement
    assert allowance.grow_readings(3, 4) == ROUND_CALLS + 1 + unit_calls(4)
    assert tracker.allowance_reason == "3 readings to explore"
    assert allowance.grow_readings(4, 4) is None  # at most one reading past the first a run


def test_a_search_that_finds_nothing_new_stops_after_its_round(db):
    """Every SQL the model writes fails: no new result, no growth; the run ends at one
    round past the raw call, well under the limit of 12."""
    bad = "SELECT nam FROM users WHERE"
    script = {
        "correct": [raw(bad)],
        "plan": [json.dumps(GENERATE_ONLY)] * 3,
        "generate_sql": [gen(bad)] * 12,
        "decompose": [json.dumps({"units": [{"name": "main", "sql": bad, "depends_on": []}]})] * 12,
        "fix_syntax": [json.dumps({"sql": bad})] * 12,
        "judge": [accept()] * 6,
    }
    result = run(db, "SELECT nam FROM users WHERE id IN (SELECT", script)
    full = run(db, "SELECT nam FROM users WHERE id IN (SELECT", script, scaled_budget=False)

    assert len(llm_calls(result)) <= 1 + ROUND_CALLS
    assert result.reason.startswith("scaled budget spent")
    assert len(llm_calls(full)) > len(llm_calls(result))


def test_the_rule_chain_runs_before_any_model_call(db):
    script = {"correct": [raw("SELECT name FROM users")]}
    result = run(db, "SELECT nam FROM users", script)

    kinds = [(e.kind, e.purpose) for e in result.trace if e.kind in ("statement", "llm_call")]
    first_call = kinds.index(("llm_call", "correct"))
    assert ("statement", "rules") in kinds[:first_call]
    assert result.accepted is True  # the rule repair and the raw rewrite agree
