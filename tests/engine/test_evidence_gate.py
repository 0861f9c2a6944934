"""The evidence gate (issue 38, item 2): independent candidates that agree are accepted before
any plan, within 3 LLM calls; refusals, speed issues, disagreement and the result checks stop
it. Scripted LLM, real SQLite. Each case would pass differently without its rule (the
`gate_off` run of a case shows what the search alone does)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from acts_sql import Budget, CorrectionOptions, correct
from acts_sql.db.connect import open_database
from acts_sql.engine.evidence_rule import EVIDENCE_NODE
from acts_sql.llm.base import LLMRequest, LLMResponse, Usage
from support import generated_reply as gen
from support import raw_reply as raw
from support import scripted

QUESTION = "List the names of all users."
GENERATE_ONLY = {"cursor": "n1", "nodes": [{"id": "n1", "tool": "generate_sql"}]}


@pytest.fixture
def db(tmp_path: Path) -> str:
    path = tmp_path / "app.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
        conn.executemany("INSERT INTO users VALUES (?, ?)", [(1, "ann"), (2, "bob"), (3, "cy")])
        conn.execute("CREATE TABLE requests (id INTEGER PRIMARY KEY, day TEXT, path TEXT)")
        conn.executemany(
            "INSERT INTO requests VALUES (?, ?, ?)",
            [(1, "2024-01-01", "/"), (2, "2024-01-01", "/a"), (3, "2024-01-02", "/")],
        )
    return str(path)


def accept(reason: str = "it answers the question") -> str:
    return json.dumps({"reason": reason, "verdict": "accept", "group": "A", "backtrack_to": None})


def kinds(result: Any, kind: str) -> list[Any]:
    return [e for e in result.trace if e.kind == kind]


def calls(result: Any, purpose: str) -> int:
    return sum(1 for e in kinds(result, "llm_call") if e.purpose == purpose)


def gate_event(result: Any) -> Any:
    """The gate's own `evidence` event (run-level, or at the gate's node when it accepts; the
    rule after a pool is at the pool's node)."""
    found = [e for e in kinds(result, "evidence") if e.node in (None, EVIDENCE_NODE)]
    assert len(found) == 1
    return found[0]


def wrong_names(db: str, users: str, llm: Any) -> Any:
    """A run whose issue says the user's SQL (which runs) returns the wrong names; pools of 3."""
    issue = "The names are wrong: " + QUESTION
    return correct(db, issue, users, llm=llm, options=CorrectionOptions(candidates=3))


def pools_of_3(db: str, users: str, replies: list[str], **options: Any) -> Any:
    """A run on QUESTION with pools of 3, the model answering the raw prompt with `replies`."""
    llm = scripted({"correct": replies})
    return correct(db, QUESTION, users, llm=llm, options=CorrectionOptions(candidates=3, **options))


def text_to_sql(db: str, question: str, llm: Any, *, candidates: int, calls: int) -> Any:
    """A text-to-SQL run (no user SQL) with pools of `candidates` and at most `calls` calls."""
    options = CorrectionOptions(candidates=candidates, budget=Budget(max_llm_calls=calls))
    return correct(db, question, None, llm=llm, options=options)


# ------------------------------------------------------------------ the gate accepts

ACCEPTED = [
    # id, user's SQL, `correct` replies, K, calls at most, origins that agree
    (
        "misspelled column: rule repair + raw rewrite, 1 call",
        "SELECT nam FROM users",
        [raw("SELECT name FROM users")],
        1,
        1,
        {"raw", "rule:unknown_identifier"},
    ),
    (
        "keyword typo: rule repair (keyword_typo) + raw rewrite, 1 call",
        "SELEC name FROM users",
        [raw("SELECT name FROM users")],
        3,
        1,
        {"raw", "rule:keyword_typo"},
    ),
    (
        "no rule repair: raw rewrite + 1 sample, 2 calls",
        "SELECT name FROM users WHERE",
        [raw("SELECT name FROM users"), raw("SELECT name FROM users;")],
        3,
        2,
        {"raw", "raw:sample"},
    ),
    (
        "wrong rows: the user's SQL runs, raw + 2 samples agree on other rows, 3 calls",
        "SELECT name FROM users WHERE id > 1",
        [
            raw("SELECT name FROM users"),
            raw("SELECT u.name FROM users AS u"),
            raw("SELECT name FROM users AS x"),
        ],
        3,
        3,
        {"raw", "raw:sample"},
    ),
    (
        "rows that repeat: the guess (duplicate_rows) + raw rewrite, 1 call",
        "SELECT u.name FROM users AS u JOIN requests AS r ON r.id >= u.id",
        [raw("SELECT DISTINCT u.name FROM users AS u JOIN requests AS r ON r.id >= u.id")],
        3,
        1,
        {"raw", "rule:duplicate_rows"},
    ),
]


@pytest.mark.parametrize("method", ["acts", "linear"])
@pytest.mark.parametrize(
    ("sql", "replies", "k", "most", "origins"),
    [case[1:] for case in ACCEPTED],
    ids=[case[0] for case in ACCEPTED],
)
def test_agreeing_candidates_are_accepted_without_a_plan(
    db, method, sql, replies, k, most, origins
):
    llm = scripted({"correct": replies})
    # agreement: the lexical rule (tests/engine/test_lexical_repair.py) would accept the
    # repairs of `nam` and `SELEC` alone, before the raw rewrite
    options = CorrectionOptions(method=method, candidates=k, lexical_repairs=False)
    result = correct(db, QUESTION, sql, llm=llm, options=options)

    assert result.accepted is True
    assert sorted(row[0] for row in result.result.rows) == ["ann", "bob", "cy"]
    assert result.usage.llm_calls <= most
    assert [r.purpose for r in llm.requests] == ["correct"] * result.usage.llm_calls
    assert not kinds(result, "plan") and not kinds(result, "plan_failed")
    assert result.tree == []
    assert result.reason.startswith("accepted (evidence: agreement)")
    event = gate_event(result)
    assert event.data.accepted is True and event.data.rule == "evidence: agreement"
    agreeing = {c["origin"] for c in event.data.candidates if c["group"] == event.data.group}
    assert origins <= agreeing
    assert event.data.candidate == next(
        c["id"] for c in result.candidates if c["verdict"] == "accepted"
    )

    # without the rule, the same replies do not end the run: the search asks for a plan
    off = correct(
        db,
        QUESTION,
        sql,
        llm=scripted({"correct": replies}),
        options=CorrectionOptions(method=method, candidates=k, evidence_gate=False),
    )
    assert off.accepted is False and not kinds(off, "evidence")


def test_a_failing_raw_rewrite_is_repaired_by_the_rules_and_anchors_agreement(db):
    """The raw rewrite slips (a misspelled column) where the user's SQL had another fault no
    rule repairs: the chain repairs the raw rewrite as it repairs the user's SQL, and a
    sample confirms the repair, 2 calls. Without the rules, the raw rewrite anchors
    nothing, so no sample is drawn and the gate accepts nothing."""
    users = "SELECT name FROM users WHERE"
    replies = [raw("SELECT nme FROM users"), raw("SELECT name FROM users")]

    result = pools_of_3(db, users, replies)
    assert result.accepted is True and result.usage.llm_calls == 2
    assert sorted(row[0] for row in result.result.rows) == ["ann", "bob", "cy"]
    event = gate_event(result)
    agreeing = {c["origin"] for c in event.data.candidates if c["group"] == event.data.group}
    assert agreeing == {"raw:rule:unknown_identifier", "raw:sample"}

    off = pools_of_3(db, users, replies[:1], rule_candidates=False, budget=Budget(max_llm_calls=2))
    gate = gate_event(off)
    assert gate.data.accepted is False
    assert [c["origin"] for c in gate.data.candidates] == ["raw"]


def test_a_raw_rewrite_with_the_users_fault_under_another_name_is_not_repaired(db):
    """The raw rewrite keeps the user's misspelled column behind an alias (another error text):
    the rule that repairs it is the one that repaired the user's SQL, so its repair would
    count that repair twice. It is not made; a sample has to confirm the rule repair."""
    users = "SELECT nam FROM users"
    replies = [raw("SELECT u.nam FROM users AS u"), raw("SELECT name FROM users")]
    result = pools_of_3(db, users, replies, lexical_repairs=False)
    assert result.accepted is True and result.usage.llm_calls == 2
    event = gate_event(result)
    origins = [c["origin"] for c in event.data.candidates]
    assert "raw:sample" in origins and "rule:unknown_identifier" in origins
    assert not any(origin.startswith("raw:rule") for origin in origins)


class ErrorAwareModel:
    """A model that repeats the user's SQL unless its prompt quotes the database's error
    (then it fixes the table name), the way a small model echoes a query it sees no fault in."""

    name = "error-aware"

    def __init__(
        self, echo_sql: str, fixed_sql: str, cue: str = "fails with:\nno such table: user"
    ) -> None:
        self.echo_sql, self.fixed_sql, self.cue = echo_sql, fixed_sql, cue
        self.prompts: list[str] = []

    def complete(self, request: LLMRequest) -> LLMResponse:
        prompt = "\n".join(m.content for m in request.messages)
        self.prompts.append(prompt)
        told = self.cue in prompt
        sql = self.fixed_sql if told else self.echo_sql
        return LLMResponse(text=raw(sql), usage=Usage(purpose=request.purpose))


@pytest.mark.parametrize(
    "echo",
    ["SELECT name FROM user", "SELECT u.name FROM user AS u"],
    ids=["the same SQL", "the same error"],
)
def test_a_sample_told_the_error_confirms_the_rule_repair(db, echo):
    """The raw rewrite echoes the failing SQL (or keeps its fault: the same error); a sample
    whose prompt quotes the database's error writes the repair the rule made: two
    independent candidates agree, 2 calls. The echo is not repaired by the rules: its repair
    would be the user's SQL's repair counted twice."""
    users = "SELECT name FROM user"
    llm = ErrorAwareModel(echo, "SELECT name FROM users")
    options = CorrectionOptions(candidates=3, lexical_repairs=False)
    result = correct(db, QUESTION, users, llm=llm, options=options)

    assert result.accepted is True and result.usage.llm_calls == 2
    assert result.reason.startswith("accepted (evidence: agreement)")
    event = gate_event(result)
    agreeing = {c["origin"] for c in event.data.candidates if c["group"] == event.data.group}
    assert {"raw:sample", "rule:unknown_identifier"} <= agreeing
    assert not any(c["origin"].startswith("raw:rule") for c in event.data.candidates)
    first, sample = llm.prompts
    assert "no such table: user" not in first  # the raw rewrite keeps the baseline's prompt
    assert "Running the issue SQL on the database fails with:\nno such table: user" in sample


def test_a_sample_is_not_told_an_error_when_the_users_sql_runs(db):
    users = "SELECT name FROM users WHERE id > 1"
    llm = ErrorAwareModel("SELECT name FROM users WHERE id > 2", "SELECT name FROM users")
    result = wrong_names(db, users, llm)
    # the raw rewrite and two samples (the user's SQL runs: the model's candidates alone
    # need 3), none told of an error, agree on other rows
    assert result.accepted is True and result.usage.llm_calls == 3
    assert [r[0] for r in result.result.rows] == ["cy"]
    assert not any("fails with" in p for p in llm.prompts)


def test_a_sample_told_the_users_rows_confirms_a_guess(db):
    """The user's SQL runs and lists a day once per request; the raw rewrite echoes it (the
    user's rows: refused). A sample whose prompt shows those rows, which the issue says are
    wrong, writes the DISTINCT that the `duplicate_rows` guess made: two independent
    candidates agree, 2 calls. A model that is never shown the rows would go on echoing."""
    users = "SELECT r.day FROM requests AS r"
    cue = "returns 3 row(s); columns: day\n  ('2024-01-01')\n  ('2024-01-01')"
    llm = ErrorAwareModel("SELECT day FROM requests", "SELECT DISTINCT day FROM requests", cue)
    issue = "Which days had requests? I see a day twice."
    result = correct(db, issue, users, llm=llm, options=CorrectionOptions(candidates=3))

    assert result.accepted is True and result.usage.llm_calls == 2
    assert sorted(r[0] for r in result.result.rows) == ["2024-01-01", "2024-01-02"]
    event = gate_event(result)
    agreeing = {c["origin"] for c in event.data.candidates if c["group"] == event.data.group}
    assert agreeing == {"raw:sample", "rule:duplicate_rows"}
    first, sample = llm.prompts
    assert "returns 3 row(s)" not in first  # the raw rewrite keeps the baseline's prompt
    assert "The user says this is wrong." in sample


# ------------------------------------------------------------------ the gate does not accept


def tree_script(correct_replies: list[str], k: int) -> dict[str, list[str]]:
    """The replies the search needs after the gate: a plan, one pool of K, one judge."""
    return {
        "correct": correct_replies,
        "plan": [json.dumps(GENERATE_ONLY)],
        "generate_sql": [gen("SELECT name FROM users ORDER BY name")] * k,
        "judge": [accept()],
    }


def test_disagreement_draws_a_third_call_then_the_search_runs(db):
    replies = [
        raw("SELECT name FROM users WHERE id < 3"),
        raw("SELECT name FROM users WHERE id <> 2"),
        raw("SELECT name FROM users WHERE id = 1"),
    ]
    llm = scripted(tree_script(replies, 3))
    result = correct(
        db,
        QUESTION,
        "SELECT name FROM users WHERE id > 2",
        llm=llm,
        options=CorrectionOptions(candidates=3),
    )

    assert calls(result, "correct") == 3  # the raw rewrite and the gate's two samples
    event = gate_event(result)
    assert event.data.accepted is False and "no agreement" in event.summary
    assert kinds(result, "plan")  # the search ran
    # the gate's candidates joined the first pool (no call is lost)
    pool = kinds(result, "pool")[0]
    origins = {c["origin"] for c in result.candidates if c["id"] in pool.data.candidates}
    assert {"raw", "raw:sample"} <= origins
    assert result.accepted is True and result.reason == "accepted"  # by the judge, not the gate
    first = [e.data.origin for e in kinds(result, "candidate") if e.node == pool.node]
    assert first[:3] == ["raw", "raw:sample", "raw:sample"]


def test_the_users_own_rows_are_refused_and_the_search_goes_on(db):
    users = "SELECT name FROM users WHERE id > 1"
    replies = [
        raw("SELECT name FROM users WHERE id >= 2"),  # the user's rows again
        raw("SELECT name FROM users WHERE id != 1"),  # so would the samples be
        raw("SELECT name FROM users WHERE 1 < id"),
    ]
    llm = scripted(tree_script(replies, 3))
    result = wrong_names(db, users, llm)

    event = gate_event(result)
    assert event.data.accepted is False
    assert "refused" in event.summary and "rows of the user's SQL" in event.summary
    assert all(c["refusal"] for c in event.data.candidates)
    # nothing the raw rewrite returns may be accepted: no sample is drawn for the gate
    assert calls(result, "correct") == 1
    assert kinds(result, "plan")
    assert sorted(r[0] for r in result.result.rows) == ["ann", "bob", "cy"]


def test_samples_that_agree_without_the_raw_rewrite_are_not_enough(db):
    replies = [
        raw("SELECT name FROM users WHERE id < 3"),
        raw("SELECT name FROM users"),
        raw("SELECT u.name FROM users AS u"),
    ]
    llm = scripted(tree_script(replies, 3))
    result = correct(
        db,
        QUESTION,
        "SELECT name FROM users WHERE id > 2",
        llm=llm,
        options=CorrectionOptions(candidates=3),
    )
    event = gate_event(result)
    assert event.data.accepted is False
    assert "neither the raw rewrite nor the rule repair" in event.summary
    assert kinds(result, "plan")


def test_a_statement_without_rows_is_nothing_to_agree_on(tmp_path):
    path = tmp_path / "w.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (a INT)")
    view = "CREATE VIEW v AS SELECT a FROM t"
    llm = scripted(tree_script([raw(view), raw(view)], 2))
    executor = open_database(str(path), allow_writes=True)  # on a throw-away copy
    try:
        result = correct(
            executor,
            "Create the view v over t; mine fails.",
            "CREATE VIEW v AS SELEC a FROM t",
            llm=llm,
            options=CorrectionOptions(candidates=2),
        )
    finally:
        executor.close()
    raws = [c for c in result.candidates if c["origin"] == "raw"]
    assert raws and raws[0]["result"]["status"] == "ok"  # it ran, without a result set
    assert calls(result, "correct") == 1  # nothing to agree on: no sample drawn
    assert not result.reason.startswith("accepted (evidence")


def test_a_speed_issue_is_left_to_the_search(db):
    users = "SELECT name FROM users WHERE id > 1"
    question = "This query is slow on our data, please optimize it."
    replies = [
        raw("SELECT u.name FROM users AS u WHERE u.id > 1"),
        raw("SELECT name FROM users WHERE id >= 2"),
    ]
    llm = scripted(tree_script(replies, 3))
    result = correct(db, question, users, llm=llm, options=CorrectionOptions(candidates=3))

    assert not kinds(result, "evidence")
    assert calls(result, "correct") == 1  # no sample drawn for a rule that cannot accept
    assert kinds(result, "plan")
    assert not result.reason.startswith("accepted (evidence")


def test_the_gate_leaves_the_last_call_of_the_budget(db):
    replies = [raw("SELECT name FROM users WHERE id < 3"), raw("SELECT name FROM users")]
    llm = scripted(tree_script(replies, 1))
    result = correct(
        db,
        QUESTION,
        "SELECT name FROM users WHERE id > 2",
        llm=llm,
        options=CorrectionOptions(candidates=3, budget=Budget(max_llm_calls=2)),
    )
    assert calls(result, "correct") == 1  # a sample would have spent the plan's call
    assert kinds(result, "plan")


# ------------------------------------------------------------------ text-to-SQL

PER_DAY = "How many requests were made on each day?"


def test_text_to_sql_one_total_for_each_day_is_neither_gate_nor_judge_accepted(db):
    total = "SELECT COUNT(*) FROM requests"
    llm = scripted(
        {
            # the first query, the witness (it agrees: the shape check alone refuses), a pool
            "generate_sql": [gen(total), gen("SELECT COUNT(id) FROM requests")] * 2,
            "correct": [raw(total), raw("SELECT COUNT(*) AS n FROM requests")],
            "plan": [json.dumps(GENERATE_ONLY)],
            "judge": [accept("it counts the requests")],
        }
    )
    result = text_to_sql(db, PER_DAY, llm, candidates=2, calls=8)

    event = gate_event(result)
    assert event.data.accepted is False
    assert "result check fails" in event.summary and "one row per group" in event.summary
    judgements = kinds(result, "judgement")
    assert (
        judgements and judgements[0].data.verdict == "reject" and judgements[0].data.by == "engine"
    )
    assert "the judge accepted, but a result check fails" in judgements[0].summary
    assert result.accepted is False


def test_text_to_sql_a_lone_candidate_needs_a_check_besides_the_judge(db):
    llm = scripted(
        {
            "generate_sql": [
                gen("SELECT day FROM requests"),
                gen("SELECT nope FROM requests"),  # the witness: it fails
                gen("SELECT path FROM requests"),
            ],
            "correct": [raw("SELECT id FROM requests")],
            "plan": [json.dumps(GENERATE_ONLY)],
            "judge": [accept("it answers the question")],
        }
    )
    result = text_to_sql(db, "Tell me about the requests.", llm, candidates=1, calls=6)
    judgement = kinds(result, "judgement")[0]
    assert judgement.data.verdict == "reject" and "no check besides the judge" in judgement.summary
    assert result.accepted is False


def test_text_to_sql_agreement_on_one_row_per_day_is_accepted(db):
    per_day = "SELECT day, COUNT(*) FROM requests GROUP BY day"
    llm = scripted(
        {
            "generate_sql": [
                gen("SELECT COUNT(*) FROM requests"),
                gen("SELECT day, COUNT(id) AS n FROM requests GROUP BY 1"),  # the witness
            ],
            "correct": [raw(per_day)],
        }
    )
    result = correct(db, PER_DAY, None, llm=llm, options=CorrectionOptions(candidates=2))

    assert result.accepted is True and result.usage.llm_calls == 3
    assert sorted(result.result.rows) == [["2024-01-01", 2], ["2024-01-02", 1]]
    checks = {c["name"]: c["verdict"] for c in gate_event(result).data.checks}
    assert checks["one row per group"] == "pass"


ECHO_WITNESSES = [
    # id, the witness's SQL, accepted by the gate
    ("the witness returns another result", "SELECT path, COUNT(*) FROM requests GROUP BY 1", False),
    ("the witness fails", "SELECT nope FROM requests", False),
    (
        "the witness returns the first query's result",
        "SELECT day, COUNT(id) FROM requests GROUP BY day",
        True,
    ),
]


@pytest.mark.parametrize(
    ("witness", "accepted"), [c[1:] for c in ECHO_WITNESSES], ids=[c[0] for c in ECHO_WITNESSES]
)
def test_text_to_sql_the_first_query_s_result_needs_the_witness(db, witness, accepted):
    """The model's first query runs and has the right shape; the raw rewrite returns its
    result again. It was written from it: only the witness, a generation from the question
    alone, can confirm it."""
    per_day = "SELECT day, COUNT(*) FROM requests GROUP BY day"
    llm = scripted(
        {
            "generate_sql": [gen(per_day), gen(witness)],
            "correct": [raw(per_day), raw("SELECT day, COUNT(id) AS n FROM requests GROUP BY 1")],
            "plan": [json.dumps(GENERATE_ONLY)],
        }
    )
    result = text_to_sql(db, PER_DAY, llm, candidates=2, calls=5)

    event = gate_event(result)
    assert event.data.accepted is accepted and result.accepted is accepted
    assert calls(result, "generate_sql") >= 2  # the first query and the witness
    if accepted:
        agreeing = {c["origin"] for c in event.data.candidates if c["group"] == event.data.group}
        assert "witness" in agreeing and not kinds(result, "plan")
    else:
        assert kinds(result, "plan")  # the search runs instead
    # no raw sample: it could neither anchor nor witness an acceptance
    assert not [c for c in event.data.candidates if c["origin"] == "raw:sample"]


def test_text_to_sql_the_judge_may_not_accept_an_unwitnessed_echo(db):
    """The gate refused the echo (the witness returned another result); the pool repeats the
    first query and the judge accepts it: the engine overrules, nothing is accepted."""
    per_day = "SELECT day, COUNT(*) FROM requests GROUP BY day"
    llm = scripted(
        {
            "generate_sql": [
                gen(per_day),
                gen("SELECT path, COUNT(*) FROM requests GROUP BY 1"),  # the witness
                gen(per_day),
            ],
            "correct": [raw(per_day), raw(per_day)],
            "plan": [json.dumps(GENERATE_ONLY)],
            "judge": [accept("it counts the requests of each day")],
        }
    )
    result = text_to_sql(db, PER_DAY, llm, candidates=1, calls=7)

    judgement = kinds(result, "judgement")[0]
    assert judgement.data.verdict == "reject" and judgement.data.by == "engine"
    assert "no independent generation" in judgement.summary
    assert result.accepted is False


def test_text_to_sql_the_judge_may_not_accept_a_rewrite_no_witness_returns(db):
    """The first query counts all requests; the raw rewrite and a pool's candidate count them
    per day (a shape check passes, they agree), but they were written from the first query
    and the witness returns another result: neither the gate nor the judge accepts."""
    per_day = "SELECT day, COUNT(*) FROM requests GROUP BY day"
    llm = scripted(
        {
            "generate_sql": [
                gen("SELECT COUNT(*) FROM requests"),
                gen("SELECT path, COUNT(*) FROM requests GROUP BY path"),  # the witness
                gen(per_day),
            ],
            "correct": [raw(per_day)],
            "plan": [json.dumps(GENERATE_ONLY)],
            "judge": [accept("it counts the requests of each day")],
        }
    )
    result = text_to_sql(db, PER_DAY, llm, candidates=1, calls=7)

    assert gate_event(result).data.accepted is False
    judgement = kinds(result, "judgement")[0]
    assert judgement.data.verdict == "reject" and judgement.data.by == "engine"
    assert "no independent generation" in judgement.summary
    assert result.accepted is False and sorted(result.result.rows)[0] == ["2024-01-01", 2]


def test_text_to_sql_the_judge_may_accept_a_witnessed_echo(db):
    """The witness writes the first query's very text (a duplicate of the raw rewrite in the
    book); the gate accepts nothing (no shape check passes for this question), the judge
    accepts the result later, and the witness still counts."""
    paths = "SELECT path FROM requests"
    llm = scripted(
        {
            "generate_sql": [gen(paths), gen(paths), gen(paths)],
            "correct": [raw(paths)],
            "plan": [json.dumps(GENERATE_ONLY)],
            "judge": [accept("it lists the request paths")],
        }
    )
    result = text_to_sql(db, "What is in the log?", llm, candidates=1, calls=6)

    assert gate_event(result).data.accepted is False
    judgement = kinds(result, "judgement")[0]
    assert judgement.data.verdict == "accept" and judgement.data.by == "agent"
    assert result.accepted is True and result.sql == paths
