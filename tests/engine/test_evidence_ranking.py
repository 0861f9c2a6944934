"""Issue 38, items 3 and 4: rejections need evidence too; never worse than one raw call.

A judge's rejection may not discard a result most candidates agree on unless
its reason names a value or a row count that the rows bear out
(`engine/verdict_check.py`); otherwise it is overruled, in the trace. When
nothing is accepted, the answer is the result with the most support; the
judge only breaks ties, then the raw rewrite and the rule repairs come first.
Scripted LLM, a real SQLite database.
"""

from __future__ import annotations

import sqlite3

import pytest

from acts_sql import Budget, correct
from acts_sql.cli.render import judgement_lines, progress_line
from acts_sql.db.result import ExecResult
from acts_sql.engine.candidates import CandidateBook
from acts_sql.engine.fingerprint import result_shape
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.selection import final_choice
from acts_sql.engine.trust import SAME_ROWS
from acts_sql.engine.verdict_check import check_rejection
from acts_sql.sql.query_text import normalize_sql
from support import scripted

QUESTION = "List the names of all users."
TYPO = "SELEC name FROM users"
RIGHT = "SELECT name FROM users"
WRONG = "SELECT T.name FROM users AS T WHERE T.name NOT IN ('ann', 'bob')"
FIRST_TWO = "SELECT name FROM users WHERE id <= 2"
ANN_ONLY = "SELECT name FROM users WHERE id = 1"
FLAT_PLAN = {
    "cursor": "n1",
    "nodes": [
        {"id": "n1", "tool": "run_sql", "input": {"sql": "SELECT COUNT(*) FROM users"}},
        {"id": "n2", "tool": "generate_sql", "input": {}},
    ],
}
GENERATE_ONLY = {"cursor": "m1", "nodes": [{"id": "m1", "tool": "generate_sql"}]}


@pytest.fixture
def users_db(tmp_path) -> str:
    path = tmp_path / "users.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL)")
        conn.executemany(
            "INSERT INTO users (id, name) VALUES (?, ?)",
            [(1, "ann"), (2, "bob"), (3, "carol"), (4, "dan")],
        )
    return f"sqlite:///{path}"


def raw(sql: str) -> str:
    return f"The query should be:\n```sql\n{sql}\n```"


def gen(sql: str) -> dict[str, str]:
    return {"sql": sql, "rationale": "scripted"}


def verdict(kind: str, reason: str, group: str | None = None) -> dict:
    return {"reason": reason, "verdict": kind, "group": group, "backtrack_to": None}


def same(a: str, b: str) -> bool:
    return normalize_sql(a, "sqlite") == normalize_sql(b, "sqlite")


def of_kind(result, kind):
    return [e for e in result.trace if e.kind == kind]


def test_the_typo_story_the_fallback_returns_the_right_answer_the_judge_pruned(users_db):
    """The 0.5B on `SELEC name FROM users`: the right SQL was the raw rewrite and the greedy
    answer, the samples repeated it; the judge "accepted" it with a reason saying it "does not
    list" (pruned), then rejected it twice with vague reasons; a wrong candidate turned up
    twice at the end (under the old rules its pool's judge is the one that fails). The run
    returned the wrong one (2 of 32): unjudged ranked above rejected. It must return the right
    one, and the trace must say which rejections were overruled."""
    llm = scripted(
        {
            "correct": [raw(RIGHT)],
            "plan": [FLAT_PLAN, GENERATE_ONLY],
            "generate_sql": [gen(RIGHT)] * 10
            + [gen(ANN_ONLY), gen(RIGHT)]
            + [gen(WRONG), gen(WRONG), gen(RIGHT), gen("select name from users;")],
            "judge": [
                verdict("accept", "The query does not list only some users, it lists them all."),
                verdict("reject", "This query is not correct for the question."),
                *["I am not sure."] * 3,  # a judge that fails: its groups stay unjudged
                verdict("reject", "I do not think the query answers it."),
            ],
        }
    )
    result = correct(
        users_db,
        QUESTION,
        TYPO,
        llm=llm,
        options=CorrectionOptions(
            candidates=4,
            budget=Budget(max_llm_calls=30),
            evidence_gate=False,
            rule_candidates=False,  # the story predates keyword_typo, which repairs SELEC
        ),
    )

    assert same(result.sql, RIGHT), result.reason
    assert result.result is not None and sorted(result.result.rows) == [
        ["ann"],
        ["bob"],
        ["carol"],
        ["dan"],
    ]
    assert result.accepted is False  # not accepted is fine; the answer is right
    pruned = [e for e in of_kind(result, "judgement") if "says the candidate is wrong" in e.summary]
    assert len(pruned) == 1  # the consistency check pruned the "accept"
    overruled = of_kind(result, "overruled")
    assert len(overruled) == 2  # both later rejections of the right result
    right_group = next(c["group"] for c in result.candidates if same(c["sql"], RIGHT))
    assert {e.data["group"] for e in overruled} == {right_group}
    assert overruled[0].data["reason"] == "This query is not correct for the question."
    assert overruled[-1].data["votes"] > overruled[-1].data["total"] / 2
    wrong = next(c for c in result.candidates if same(c["sql"], WRONG))
    assert wrong["votes"] == 2
    groups = {g["id"]: g for g in result.groups}
    assert len(groups[right_group]["overruled"]) == 2
    assert not groups[right_group]["rejected_reason"]
    assert f"{groups[right_group]['votes']} of 17 candidate(s) that ran agree" in result.reason
    assert len(llm.prompts("judge")) == 6 and len(llm.prompts("generate_sql")) == 16
    # the terminal says so too: the pools panel and the progress lines
    shown = "\n".join(line.plain for line in judgement_lines(result))
    assert shown.count(f"rejected all (overruled for {right_group}: no evidence") == 2
    assert progress_line(overruled[0]).startswith(f"  overruled {overruled[0].node}")


POOL = [gen(FIRST_TWO), gen(FIRST_TWO), gen(RIGHT), gen("SELECT id FROM users")]


@pytest.mark.parametrize(
    ("reason", "returned", "overruled"),
    [
        # vague: the majority (ann, bob: raw + 2 draws = 3 of 5) is overruled and stays first
        ("The query is not correct.", FIRST_TWO, 1),
        # a value its rows lack, as the reason says: the rejection stands, the group drops
        ("The result does not list 'carol', who is a user.", RIGHT, 0),
        # a value the rows do hold, though the reason says it is missing: overruled
        ("The result does not list 'ann'.", FIRST_TWO, 1),
        # a row count the rows bear out: the rejection stands
        ("It returns 2 rows, but every user must be listed.", RIGHT, 0),
        # a row count the rows do not bear out: overruled
        ("It returns 3 rows, too few.", FIRST_TWO, 1),
    ],
)
def test_a_rejection_of_a_majority_group_stands_only_with_evidence_from_its_rows(
    users_db, reason, returned, overruled
):
    llm = scripted(
        {
            "correct": [raw(FIRST_TWO)],
            "plan": [GENERATE_ONLY],
            "generate_sql": POOL,
            "judge": [verdict("reject", reason)],
        }
    )
    result = correct(
        users_db,
        QUESTION,
        TYPO,
        llm=llm,
        options=CorrectionOptions(
            candidates=4,
            budget=Budget(max_llm_calls=7),
            evidence_gate=False,
            rule_candidates=False,  # no keyword_typo vote: the pool's groups as written
        ),
    )

    assert len(llm.prompts("judge")) == 1
    assert same(result.sql, returned), result.reason
    events = of_kind(result, "overruled")
    assert len(events) == overruled
    judgement = next(e for e in of_kind(result, "judgement") if e.data["by"] == "agent")
    majority = next(c["group"] for c in result.candidates if same(c["sql"], FIRST_TWO))
    if overruled:
        assert events[0].data["group"] == majority and events[0].data["votes"] == 3
        assert majority not in judgement.data.get("checked", {})
    else:
        assert majority in judgement.data["checked"]
    # the minority groups' rejections stand either way (they need no evidence)
    minority = [c for c in result.candidates if c["group"] != majority and c["votes"] == 1]
    assert minority and all(c["verdict"] == "rejected" for c in minority)


# ---------------------------------------------------------------- the ranking, no LLM


def ok(rows: list[tuple]) -> ExecResult:
    return ExecResult(
        status="ok",
        columns=[f"c{i}" for i in range(len(rows[0]))],
        rows=[list(r) for r in rows],
        row_count=len(rows),
    )


ROWS = {"A": ok([(1,)]), "B": ok([(2,)]), "C": ok([(3,)])}


def book_of(entries: list[tuple[str, str, int]]) -> tuple[CandidateBook, list]:
    """(result A/B/C, origin, votes) per candidate, each a distinct SQL."""
    book = CandidateBook("sqlite")
    made = []
    for i, (rows, origin, votes) in enumerate(entries):
        sql = f"SELECT {ROWS[rows].rows[0][0]} AS c0 /* {i} */"
        shape = result_shape(sql, ROWS[rows], "sqlite")
        made.append(book.add("n1", sql, ROWS[rows], shape, origin=origin, votes=votes))
    return book, made


def judge(book, candidate, view):
    if view == "accept":
        candidate.judge = "accept"  # an unconfirmed "accept": the judge's favour, no acceptance
    elif view == "reject":
        book.reject(candidate, "not what was asked")
        book.reject_group(candidate.group, "not what was asked")
    elif view == "refuse":
        book.refuse(candidate, SAME_ROWS)
    elif view == "checked":
        book.reject(candidate, "does not return 9")
        book.reject_group(candidate.group, "does not return 9", checked="does not return 9")


@pytest.mark.parametrize(
    ("entries", "verdicts", "winner"),
    [
        # a minority group the judge favoured does not beat the majority
        ([("A", "greedy", 3), ("B", "sample", 1)], {1: "accept"}, 0),
        # nor does it beat a majority the judge rejected without evidence
        ([("A", "greedy", 3), ("B", "sample", 1)], {0: "reject", 1: "accept"}, 0),
        # a majority refused as the user's rows loses to a minority
        ([("A", "greedy", 3), ("B", "sample", 1)], {0: "refuse"}, 1),
        # a majority whose rejection the rows bear out loses to a minority
        ([("A", "greedy", 3), ("B", "sample", 1)], {0: "checked"}, 1),
        # a plurality (2 of 4) wins over single votes, whatever the judge said of them
        ([("A", "sample", 2), ("B", "raw", 1), ("C", "greedy", 1)], {2: "accept"}, 0),
        # equal support: the judge's verdict breaks the tie, before the origin
        ([("A", "greedy", 1), ("B", "raw", 1)], {0: "accept"}, 0),
        ([("A", "raw", 1), ("B", "greedy", 1)], {0: "reject"}, 1),
        # equal support, no verdict: the raw rewrite, then a rule repair, then earlier
        ([("A", "greedy", 1), ("B", "sample", 1), ("C", "raw", 1)], {}, 2),
        ([("A", "greedy", 1), ("B", "rule:unknown_identifier", 1)], {}, 1),
        ([("A", "greedy", 1), ("B", "raw", 1), ("C", "rule:equals_null", 1)], {}, 1),
        ([("A", "greedy", 1), ("B", "raw:from_sql", 1)], {}, 1),
        ([("A", "greedy", 1), ("B", "sample", 1)], {}, 0),
        # the same rows from several SQL texts: their votes add up
        ([("A", "greedy", 1), ("B", "sample", 2), ("A", "retry", 1), ("A", "sample", 1)], {}, 0),
    ],
)
def test_never_worse_than_one_raw_call_the_most_support_wins(entries, verdicts, winner):
    book, made = book_of(entries)
    for index, view in verdicts.items():
        judge(book, made[index], view)
    choice = final_choice(book, None, None)
    assert choice.candidate is made[winner]


def test_majority_needs_two_votes_and_more_than_half_of_the_trusted_votes():
    book, made = book_of([("A", "greedy", 2), ("B", "sample", 2)])
    assert not book.is_majority(made[0].group)  # 2 of 4: a tie, no majority
    book.refuse(made[1], SAME_ROWS)
    assert book.is_majority(made[0].group)  # refused votes do not count
    lone, (single,) = book_of([("A", "raw", 1)])
    assert not lone.is_majority(single.group)  # one vote is no agreement


def test_the_stop_note_counts_the_votes_that_agree():
    book, made = book_of([("A", "greedy", 3), ("B", "sample", 1), ("C", "sample", 1)])
    judge(book, made[0], "reject")
    judge(book, made[2], "refuse")
    note = final_choice(book, None, None).note
    assert "returning the best candidate (c1, not accepted)" in note
    assert "3 of 5 candidate(s) that ran agree on its result" in note
    assert "(3 of the 4 vote(s) for results that run and are not refused)" in note


# ---------------------------------------------------------------- the claims


NAMES = ok([("ann",), ("bob",)])


@pytest.mark.parametrize(
    ("reason", "backed"),
    [
        ("The result does not list 'carol', who is a user.", True),
        ('It is missing the user "carol".', True),
        ("The query should include 'carol'.", True),
        ("The query should not return 'ann'.", True),
        ("It still returns 'bob', who left.", True),
        ("The result does not list 'ann'.", False),  # it does
        ("The query should include 'bob'.", False),  # it does
        ("It returns 2 rows, too few.", True),
        ("It returns only one row.", False),
        ("The result is empty.", False),
        ("It should return 4 rows.", True),
        ("It should return 2 rows.", False),
        ("The query is wrong and does not answer the question.", False),  # names nothing
        ("The 'c0' column should list names.", False),  # a column name is no value
        ("It does not list 'carol' and returns 5 rows.", False),  # one claim false
    ],
)
def test_a_rejection_is_backed_only_by_claims_the_rows_bear_out(reason, backed):
    shape = result_shape("SELECT name FROM users", NAMES, "sqlite")
    assert (check_rejection(reason, NAMES, shape) is not None) is backed


def test_absence_cannot_be_checked_on_rows_the_cap_cut():
    cut = NAMES.model_copy(update={"truncated": True})
    shape = result_shape("SELECT name FROM users", cut, "sqlite")
    assert check_rejection("It does not list 'carol'.", cut, shape) is None
    assert check_rejection("It returns 2 rows.", cut, shape) is None
    assert check_rejection("It includes 'ann', who left.", cut, shape) is not None


ANN = "SELECT name FROM users WHERE id = 1"
MAJORITY = [
    gen(FIRST_TWO),
    gen("SELECT name FROM users WHERE id < 3"),
    gen("SELECT u.name FROM users AS u WHERE u.id IN (1, 2)"),
    gen(RIGHT),
]


@pytest.mark.parametrize("scaled", [True, False])
def test_an_overruled_rejection_settles_the_scaled_search(users_db, scaled):
    """A slip (the user's SQL runs, the issue says its rows are wrong): the raw rewrite repeats
    it, so the gate has nothing to weigh and the search runs one round. Its pool agrees 3 to 1
    on a result no anchor returns, the judge rejects it with a vague reason, the rejection is
    overruled: with the scaled budget the search stops there and returns that result, not
    accepted; without it, the search spends more calls and returns the same."""
    llm = scripted(
        {
            "correct": [raw(ANN)],
            "plan": [GENERATE_ONLY] * 3,
            "generate_sql": MAJORITY * 3,
            "judge": [verdict("reject", "The query is not correct.")] * 3,
        }
    )
    issue = QUESTION + " I only get ann."
    options = CorrectionOptions(candidates=4, scaled_budget=scaled)
    result = correct(users_db, issue, ANN, llm=llm, options=options)

    assert result.accepted is False and same(result.sql, FIRST_TWO)
    assert of_kind(result, "overruled")
    settled = [e for e in of_kind(result, "budget_scaled") if "stands" in e.summary]
    if scaled:
        assert result.usage.llm_calls == 7  # raw, plan, 4 samples, judge: nothing after
        assert settled[0].data["allowed_calls"] == 7
    else:
        assert result.usage.llm_calls > 7 and not settled
