"""Evidence before judgement in the search (issue 38, items 2 and 3): after each pool, the
evidence gate's rule runs again on every candidate of the run, and a result that the raw
rewrite or the rule repair returns and that the pool's samples now agree on is accepted
without asking the judge. Scripted LLM, real SQLite. The script's judge rejects: without the
rule, no case below is accepted (and the judge is called)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from acts_sql import CorrectionOptions, correct
from acts_sql.db.result import ExecResult
from acts_sql.engine.evidence_rule import Evidence, verdict
from acts_sql.engine.trust import SAME_ROWS
from support import generated_reply as gen
from support import raw_reply as raw
from support import scripted

QUESTION = "List the names of all users."
GENERATE_ONLY = {"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]}
REJECT = json.dumps(
    {"reason": "it does not answer the issue", "verdict": "reject", "group": None}
    | {"backtrack_to": None}
)


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "app.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO users VALUES (?, ?)", [(1, "ann"), (2, "bob"), (3, "cy")])
    return str(path)


def run(
    db: str, question: str, users: str, gate: list[str], pool: str, method: str, **options: Any
) -> Any:
    """The gate's raw rewrite and samples answer `gate`; one plan, one pool of 3 `pool`
    samples, and a judge that rejects."""
    llm = scripted(
        {
            "correct": gate,
            "plan": [json.dumps(GENERATE_ONLY)],
            "generate_sql": [gen(pool)] * 3,
            "judge": [REJECT] * 3,
        }
    )
    # the agreement path: the lexical rule would accept a repair of `nam` alone
    settings = CorrectionOptions(method=method, candidates=3, lexical_repairs=False, **options)
    return correct(db, question, users, llm=llm, options=settings)


def kinds(result: Any, kind: str) -> list[Any]:
    return [e for e in result.trace if e.kind == kind]


def judge_calls(result: Any) -> int:
    return sum(1 for e in kinds(result, "llm_call") if e.purpose == "judge")


ACCEPTED = [
    # id, question, user's SQL, gate replies (raw rewrite, samples), pool SQL, anchor
    (
        "the pool confirms the raw rewrite",
        QUESTION,
        "SELECT name FROM users WHERE id > 2",
        [
            raw("SELECT name FROM users"),
            raw("SELECT name FROM users WHERE id = 1"),
            raw("SELECT name FROM users WHERE id <> 2"),
        ],
        "SELECT u.name FROM users AS u",
        "raw",
    ),
    (
        "the pool confirms the rule repair, against the raw rewrite",
        QUESTION,
        "SELECT nam FROM users WHERE id > 0",
        [
            raw("SELECT name FROM users WHERE id = 1"),
            raw("SELECT name FROM users WHERE id = 2"),
            raw("SELECT name FROM users WHERE id = 3"),
        ],
        "SELECT name FROM users",
        "rule:unknown_identifier",
    ),
]


@pytest.mark.parametrize("method", ["acts", "linear"])
@pytest.mark.parametrize(
    ("question", "users", "gate", "pool", "anchor"),
    [case[1:] for case in ACCEPTED],
    ids=[case[0] for case in ACCEPTED],
)
def test_a_pool_that_agrees_with_an_anchor_is_accepted_without_the_judge(
    db, method, question, users, gate, pool, anchor
):
    result = run(db, question, users, gate, pool, method)

    assert result.accepted is True
    assert sorted(r[0] for r in result.result.rows) == ["ann", "bob", "cy"]
    assert judge_calls(result) == 0
    gate_event, after_pool = kinds(result, "evidence")
    assert gate_event.data.accepted is False and gate_event.node is None
    assert after_pool.data.accepted is True and after_pool.node == "n1"
    assert after_pool.data.rule == "evidence: agreement"
    assert after_pool.summary.startswith("accepted after the pool, before its judgement")
    agreeing = [c for c in after_pool.data.candidates if c["group"] == after_pool.data.group]
    assert any(c["anchor"] and c["origin"] == anchor for c in agreeing)
    assert sum(c["votes"] for c in agreeing) >= 4  # the anchor and the pool's 3 samples
    accepted = next(c for c in result.candidates if c["verdict"] == "accepted")
    assert accepted["id"] == after_pool.data.candidate
    assert result.tree[0]["status"] == "accepted"


def test_without_the_gate_the_same_pool_goes_to_the_judge(db):
    result = run(db, *ACCEPTED[0][1:5], "acts", evidence_gate=False)

    assert judge_calls(result) >= 1
    assert not kinds(result, "evidence")
    assert result.accepted is False


NOT_ACCEPTED = [
    # id, question, user's SQL, gate replies, pool SQL
    (
        "the pool agrees with a sample only: no anchor",
        QUESTION,
        "SELECT name FROM users WHERE id > 2",
        [
            raw("SELECT name FROM users WHERE id = 1"),
            raw("SELECT name FROM users"),
            raw("SELECT name FROM users WHERE id <> 2"),
        ],
        "SELECT u.name FROM users AS u",
    ),
    (
        "a result check fails: a list where the question asks a count",
        "How many users are there?",
        "SELECT COUNT(*) FROM users WHERE id > 2",
        [
            raw("SELECT name FROM users"),
            raw("SELECT COUNT(*) FROM users WHERE id = 1"),
            raw("SELECT COUNT(*) FROM users WHERE id < 3"),
        ],
        "SELECT u.name FROM users AS u",
    ),
    (
        "the pool returns the user's rows: refused",
        "The names are wrong: " + QUESTION,
        "SELECT name FROM users WHERE id > 1",
        [
            raw("SELECT name FROM users"),
            raw("SELECT name FROM users WHERE id = 1"),
            raw("SELECT name FROM users WHERE id <> 2"),
        ],
        "SELECT name FROM users WHERE id >= 2",
    ),
]


@pytest.mark.parametrize(
    ("question", "users", "gate", "pool"),
    [case[1:] for case in NOT_ACCEPTED],
    ids=[case[0] for case in NOT_ACCEPTED],
)
def test_without_anchored_agreement_the_judge_decides(db, question, users, gate, pool):
    result = run(db, question, users, gate, pool, "acts")

    assert [e.data.accepted for e in kinds(result, "evidence")] == [False]  # the gate's only
    assert result.accepted is False
    assert judge_calls(result) >= 1


def _vote(sql: str, rows: list[tuple[Any, ...]], *, pooled: bool, origin: str = "raw") -> Evidence:
    result = ExecResult(status="ok", columns=["name"], rows=[list(r) for r in rows])
    result.row_count = len(rows)
    return Evidence(origin=origin, sql=sql, result=result, fingerprint=repr(rows), pooled=pooled)


ALL = [("ann",), ("bob",), ("cy",)]


@pytest.mark.parametrize(
    ("votes", "accepted", "why"),
    [
        ([_vote("a", ALL, pooled=False), _vote("b", ALL, pooled=True)], True, "2 of 2"),
        (
            [_vote("a", ALL, pooled=True, origin="greedy"), _vote("b", ALL, pooled=True)],
            False,
            "neither the raw rewrite nor the rule repair",
        ),
        (
            [_vote("a", ALL, pooled=True, origin="rule:x"), _vote("b", ALL, pooled=True)],
            False,
            "neither the raw rewrite nor the rule repair",
        ),
    ],
    ids=["an anchor and a pooled vote", "pooled votes only", "a pooled rule repair"],
)
def test_pooled_votes_count_but_never_anchor(votes, accepted, why):
    decided = verdict(votes, question=QUESTION, generated=False)
    assert decided.accepted is accepted
    assert why in decided.reason


UNANIMOUS_POOL = [
    # id, gate replies (all refused: the user's rows), pool replies, accepted
    (
        "three pooled votes from two statements, none for another result",
        ["SELECT name FROM users", "SELECT u.name FROM users AS u", "SELECT name FROM users"],
        True,
    ),
    ("one statement three times: one derivation", ["SELECT name FROM users"] * 3, False),
    (
        "one pooled vote dissents",
        ["SELECT name FROM users", "SELECT name FROM users", "SELECT name FROM users WHERE id < 3"],
        False,
    ),
    ("two pooled votes only", ["SELECT name FROM users"] * 2 + ["SELEC nam FRM"], False),
]


@pytest.mark.parametrize(
    ("pool", "accepted"),
    [case[1:] for case in UNANIMOUS_POOL],
    ids=[case[0] for case in UNANIMOUS_POOL],
)
def test_a_unanimous_pool_needs_no_anchor(db, pool, accepted):
    """The raw rewrite returns the user's rows (refused), so no result has an anchor; the
    pool's votes alone are accepted when there are 3 of them, from two statements at least,
    and none for another result."""
    refused = raw("SELECT name FROM users WHERE id >= 2")
    llm = scripted(
        {
            "correct": [refused] * 3,
            "plan": [json.dumps(GENERATE_ONLY)],
            "generate_sql": [gen(sql) for sql in pool],
            "judge": [REJECT] * 3,
        }
    )
    result = correct(
        db,
        "The names are wrong: " + QUESTION,
        "SELECT name FROM users WHERE id > 1",
        llm=llm,
        options=CorrectionOptions(method="acts", candidates=3),
    )

    assert result.accepted is accepted
    assert (judge_calls(result) == 0) is accepted
    if accepted:
        after_pool = kinds(result, "evidence")[-1]
        assert after_pool.node == "n1" and after_pool.data.accepted is True
        agreeing = [c for c in after_pool.data.candidates if c["group"] == after_pool.data.group]
        assert len(agreeing) >= 1 and not any(c["anchor"] for c in agreeing)
        assert sorted(r[0] for r in result.result.rows) == ["ann", "bob", "cy"]


@pytest.mark.parametrize(
    ("votes", "accepted"),
    [
        ([_vote(s, ALL, pooled=True, origin="greedy") for s in "abc"], True),
        ([_vote(s, ALL, pooled=True, origin="greedy") for s in "ab"], False),
        (
            [_vote(s, ALL, pooled=True, origin="greedy") for s in "abc"]
            + [_vote("d", ALL[:1], pooled=True, origin="greedy")],
            False,
        ),
        (
            [_vote(s, ALL, pooled=True, origin="greedy") for s in "abc"]
            + [_vote("d", ALL[:1], pooled=True).model_copy(update={"refusal": SAME_ROWS})],
            True,
        ),
        (
            [_vote(s, ALL, pooled=True, origin="greedy") for s in "abc"]
            + [
                _vote("d", ALL[:1], pooled=True).model_copy(
                    update={"refusal": "the judge rejected its rows", "rejected": True}
                )
            ],
            False,
        ),
        ([_vote("a", ALL, pooled=True, origin="greedy")] * 3, False),
    ],
    ids=[
        "3 of 3",
        "2 of 2",
        "3 of 4",
        "the user's rows do not dissent",
        "judged rows dissent",
        "one statement 3 times",
    ],
)
def test_unanimity_stands_in_for_an_anchor_only_when_asked(votes, accepted):
    assert verdict(votes, question=QUESTION, generated=False, unanimous=3).accepted is accepted
    assert verdict(votes, question=QUESTION, generated=False).accepted is False


def test_unanimity_needs_the_users_sql_to_run(db):
    """When the user's SQL fails and neither the raw rewrite nor a rule repair runs, a pool
    whose statements agree on a result still goes to the judge: nothing reached it from the
    user's query (in a kept run, a pivot the model gave up on, read as the bare table)."""
    broken = raw("SELECT nam FROM users WHERE id >>> 1")
    llm = scripted(
        {
            "correct": [broken] * 3,
            "plan": [json.dumps(GENERATE_ONLY)],
            "generate_sql": [
                gen(sql) for sql in ["SELECT name FROM users", "SELECT u.name FROM users AS u"] * 2
            ],
            "judge": [REJECT] * 3,
        }
    )
    result = correct(
        db,
        QUESTION,
        "SELECT nam FROM users WHERE id >>> 1",
        llm=llm,
        options=CorrectionOptions(method="acts", candidates=3),
    )

    assert result.accepted is False
    assert judge_calls(result) >= 1


@pytest.mark.parametrize(
    ("votes", "slip", "accepted"),
    [
        ([_vote("a", ALL, pooled=False), _vote("b", ALL, pooled=False, origin="raw:sample")],
         True, False),
        ([_vote("a", ALL, pooled=False), _vote("b", ALL, pooled=False, origin="raw:sample"),
          _vote("c", ALL, pooled=False, origin="raw:sample")], True, True),
        ([_vote("a", ALL, pooled=False), _vote("b", ALL, pooled=False, origin="rule:equals_null")],
         True, True),
        ([_vote("a", ALL, pooled=False), _vote("b", ALL, pooled=False, origin="raw:rule:x")],
         True, False),
        ([_vote("a", ALL, pooled=False), _vote("b", ALL, pooled=False, origin="raw:sample")],
         False, True),
    ],
    ids=[
        "the user's SQL runs: raw and a sample",
        "the user's SQL runs: raw and two samples",
        "the user's SQL runs: raw and a rule's repair of it",
        "the user's SQL runs: raw and the rules' repair of raw",
        "the user's SQL fails: raw and a sample",
    ],
)  # fmt: skip
def test_when_the_users_sql_runs_the_models_candidates_alone_need_three(votes, slip, accepted):
    decided = verdict(votes, question=QUESTION, generated=False, slip=slip)
    assert decided.accepted is accepted
    if not accepted:
        assert "the user's SQL runs" in decided.reason


def test_unanimity_needs_more_votes_than_the_candidates_that_fail():
    three = [_vote(s, ALL, pooled=True, origin="greedy") for s in "abc"]
    assert verdict(three, question=QUESTION, generated=False, unanimous=3, failed=2).accepted
    held = verdict(three, question=QUESTION, generated=False, unanimous=3, failed=3)
    assert held.accepted is False  # three that run against three that fail: no unanimity
