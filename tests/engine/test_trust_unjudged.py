"""The trust rules hold for the methods without a judge: raw, critic, vote
(engine/methods/vouch.py)."""

from __future__ import annotations

import json

import pytest

from acts_sql import correct
from acts_sql.db.connect import open_database
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.runner import run_correction
from support import scripted


def _block(sql: str) -> str:
    return f"The fix:\n```sql\n{sql}\n```"


def _reformatted(sql: str) -> str:
    """The same SQL with other whitespace and keyword case."""
    return " ".join(sql.split()).replace("SELECT", "select").replace("FROM", "from")


def _refusals(result) -> list[str]:
    return [e.summary for e in result.trace if e.kind == "refusal"]


@pytest.mark.parametrize("method", ["raw", "critic"])
def test_the_users_sql_handed_back_is_returned_but_not_accepted(demo_db, demo_tasks, method):
    task = demo_tasks["figure1"]
    same = _reformatted(task.sql)
    reply = _block(same) if method == "raw" else {"critique": "looks fine", "sql": same}
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=scripted({"correct": [reply]}),
        options=CorrectionOptions(method=method),
    )

    assert result.accepted is False
    assert result.sql.strip().rstrip(";") == same  # the method's answer is still what comes back
    assert result.reason.startswith("refused: the same SQL as the user's")
    assert _refusals(result) == [result.reason.removeprefix("refused: ")]
    assert [c["verdict"] for c in result.candidates] == ["refused"]


def test_raw_sql_that_returns_the_users_rows_is_not_accepted(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    same_rows = task.sql + " AND 1 = 1"  # other SQL, the same (wrong) total
    llm = scripted({"correct": [_block(same_rows)]})
    result = correct(
        demo_db, task.question, task.sql, llm=llm, options=CorrectionOptions(method="raw")
    )

    assert result.accepted is False
    assert "returns exactly the rows of the user's SQL" in result.reason


def test_raw_same_rows_are_accepted_when_the_issue_is_about_speed(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    same_rows = task.sql + " AND 1 = 1"
    question = "This total is right but the query is too slow; make it faster."
    llm = scripted({"correct": [_block(same_rows)]})
    result = correct(demo_db, question, task.sql, llm=llm, options=CorrectionOptions(method="raw"))

    assert result.accepted is True
    assert _refusals(result) == []


def test_raw_with_a_real_change_is_still_accepted(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    llm = scripted({"correct": [_block(task.right_sql)]})
    result = correct(
        demo_db, task.question, task.sql, llm=llm, options=CorrectionOptions(method="raw")
    )

    assert result.accepted is True and result.result.rows == [[126]]


def test_raw_in_text_to_sql_mode_may_repeat_the_generated_sql(demo_db, demo_tasks):
    # no SQL from the user: the first SQL is the model's own, not one a user calls wrong
    task = demo_tasks["figure1"]
    initial = json.dumps({"sql": task.sql, "rationale": "sum the quantities"})
    llm = scripted({"generate_sql": [initial], "correct": [_block(task.sql)]})
    result = correct(demo_db, task.question, None, llm=llm, options=CorrectionOptions(method="raw"))

    assert result.generated_initial_sql is True
    assert result.accepted is True


def test_vote_counts_no_refused_sample(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    replies = [
        _block(task.sql),  # greedy: the user's SQL
        _block(_reformatted(task.sql)),  # the same SQL, formatted otherwise: a repeat
        _block(task.sql + " AND 1 = 1"),  # other SQL, the user's rows
        *[_block(task.right_sql)] * 4,  # the trusted answer, four times
    ]
    llm = scripted({"correct": replies})
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(method="vote", candidates=7),
    )

    # three samples return the user's rows, four the right total: the trusted four win
    assert result.accepted is True and result.result.rows == [[126]]
    assert "4 of 7 samples agree, 4 of the 4 votes" in result.reason
    assert [(c["origin"], c["votes"], c["verdict"]) for c in result.candidates] == [
        ("greedy", 2, "refused"),
        ("sample", 1, "refused"),
        ("sample", 4, "accepted"),
    ]
    assert len(_refusals(result)) == 2  # one per distinct refused candidate, not per repeat


def test_vote_does_not_accept_a_lone_answer(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    odd = "SELECT 7 AS total_quantity"
    replies = [_block(task.right_sql), _block(odd), _block("SELECT nope FROM x")]
    llm = scripted({"correct": replies})
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(method="vote", candidates=3),
    )

    # two groups of one: the first is returned, but one sample of three is no agreement
    assert result.accepted is False
    assert result.result.rows == [[126]]
    assert "has 1 of 3 samples (at least 2 must agree)" in result.reason

    executor = open_database(demo_db)  # min_agreement=1: one sample is enough
    try:
        again = run_correction(
            executor=executor,
            llm=scripted({"correct": replies}),
            question=task.question,
            sql=task.sql,
            options=CorrectionOptions(method="vote", candidates=3, min_agreement=1),
        )
    finally:
        executor.close()
    assert again.accepted is True and again.result.rows == [[126]]


def test_vote_where_every_sample_is_refused_accepts_nothing(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    replies = [_block(task.sql), _block(task.sql + " AND 1 = 1"), _block("SELECT nope FROM x")]
    llm = scripted({"correct": replies})
    result = correct(
        demo_db,
        task.question,
        task.sql,
        llm=llm,
        options=CorrectionOptions(method="vote", candidates=3),
    )

    assert result.accepted is False
    assert result.reason.startswith("refused: every sample that runs")
    assert "the same SQL as the user's" in result.reason
    assert "returns exactly the rows of the user's SQL" in result.reason


def test_vote_accepts_only_a_majority_of_the_samples(demo_db, demo_tasks):
    task = demo_tasks["figure1"]
    odd, broken = "SELECT 7 AS total_quantity", "SELECT nope FROM x"

    def vote(*sqls: str):
        llm = scripted({"correct": [_block(sql) for sql in sqls]})
        return correct(
            demo_db,
            task.question,
            task.sql,
            llm=llm,
            options=CorrectionOptions(method="vote", candidates=4),
        )

    # two against two: the first group comes back, not accepted
    tie = vote(odd, task.right_sql, odd, task.right_sql)
    assert tie.accepted is False and tie.result.rows == [[7]]
    assert "has 2 of the 4 samples (4 cast for results that run" in tie.reason

    # 2 of the 3 votes for results that run, but 2 of 4 samples: a sample that fails counts
    # against the winner, so this is no majority either
    few = vote(odd, task.right_sql, broken, task.right_sql)
    assert few.accepted is False and few.result.rows == [[126]]
    assert "has 2 of the 4 samples (3 cast for results that run" in few.reason

    # 3 of 4 samples: a majority
    most = vote(odd, task.right_sql, task.right_sql, task.right_sql)
    assert most.accepted is True and most.result.rows == [[126]]
    assert "3 of 4 samples agree, 3 of the 4 votes for results that run" in most.reason
