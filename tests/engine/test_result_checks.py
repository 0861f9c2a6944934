"""The result checks (issue 38, item 5): a result's shape against the question's words, without
the judge. Table-driven: question, result, and the verdict of each check that applies."""

from __future__ import annotations

from typing import Any

import pytest

from acts_sql.db.result import ExecResult
from acts_sql.engine.evidence import Evidence, verdict
from acts_sql.engine.named_names import NamedNames
from acts_sql.engine.result_checks import asks, judge_unsupported, passed, shape_checks


def rows(columns: list[str], data: list[list[Any]], truncated: bool = False) -> ExecResult:
    return ExecResult(
        status="ok", columns=columns, rows=data, row_count=len(data), truncated=truncated
    )


ONE_NUMBER = rows(["n"], [[42]])
PER_DAY = rows(["day", "n"], [["2024-01-01", 2], ["2024-01-02", 1]])
REPEATED_DAY = rows(["day", "n"], [["2024-01-01", 2], ["2024-01-01", 1]])
NAMES = rows(["name"], [["ann"], ["bob"], ["cy"]])
ONE_NAME = rows(["name"], [["ann"]])
ONE_ROW_TWO_COLUMNS = rows(["day", "n"], [["2024-01-01", 3]])
EMPTY = rows(["name"], [])
NO_SET = ExecResult(status="ok")

CASES = [
    # question, result, {check: verdict}
    (
        "How many requests were made on each day?",
        ONE_NUMBER,
        {"rows": "pass", "one row per group": "fail"},
    ),
    (
        "How many requests were made on each day?",
        PER_DAY,
        {"rows": "pass", "one row per group": "pass"},
    ),
    ("Number of bookings per room", REPEATED_DAY, {"rows": "pass", "one row per group": "fail"}),
    (
        "Count the requests by day",
        ONE_ROW_TWO_COLUMNS,
        {"rows": "pass", "one row per group": "unknown"},
    ),
    ("For every host, show the errors", EMPTY, {"rows": "fail", "one row per group": "unknown"}),
    ("How many users are there?", ONE_NUMBER, {"rows": "pass", "one number": "pass"}),
    ("How many users are there?", NAMES, {"rows": "pass", "one number": "fail"}),
    (
        "What is the total number of orders?",
        ONE_ROW_TWO_COLUMNS,
        {"rows": "pass", "one number": "unknown"},
    ),
    ("Which users placed orders, and how many?", NAMES, {"rows": "pass", "one number": "unknown"}),
    ("List the names of all users.", NAMES, {"rows": "pass", "a list": "pass"}),
    ("List the names of all users.", ONE_NUMBER, {"rows": "pass", "a list": "fail"}),
    ("List the names of all users.", ONE_NAME, {"rows": "pass", "a list": "unknown"}),
    ("List the names of all users.", EMPTY, {"rows": "fail", "a list": "unknown"}),
    ("Which year had the most sales?", ONE_NUMBER, {"rows": "pass"}),
    ("Why is my query wrong?", EMPTY, {}),
    ("Why is my query wrong?", ONE_NUMBER, {}),
    # words that look like grouping and are not
    ("They talk to each other, sorted by name", NAMES, {}),
    ("It fails every time; ordered by date", NAMES, {}),
]


@pytest.mark.parametrize(("question", "result", "expected"), CASES)
def test_shape_checks(question, result, expected):
    got = {c.name: c.verdict for c in shape_checks(question, result)}
    assert got == expected


def test_a_statement_that_failed_or_returned_no_result_set_is_not_checked():
    failed = ExecResult(status="error", error="no such table: t")
    assert shape_checks("How many users?", failed) == []
    assert shape_checks("How many users?", ExecResult(status="ok")) == []


@pytest.mark.parametrize(
    ("question", "grouping", "count", "listing"),
    [
        ("How many requests were made on each day?", True, True, False),
        ("Total number of rooms per floor", True, True, False),
        ("Show me the bookings broken down by month", True, False, True),
        ("How many orders were placed by customer 5?", False, True, False),
        ("List the users", False, False, True),
    ],
)
def test_what_the_question_asks(question, grouping, count, listing):
    assert asks(question).model_dump() == {"grouping": grouping, "count": count, "listing": listing}


def test_the_rows_check_alone_is_no_pass():
    checks = shape_checks("Which year had the most sales?", ONE_NUMBER)
    assert [c.verdict for c in checks] == ["pass"] and passed(checks) == []


JUDGE_CASES = [
    # question, result, votes, fault (None: the judge's accept may stand)
    ("How many requests were made on each day?", ONE_NUMBER, 3, "a result check fails"),
    ("How many requests were made on each day?", PER_DAY, 1, None),
    ("Tell me about the users", NAMES, 1, "no check besides the judge"),
    ("Tell me about the users", NAMES, 2, None),
    ("List the names of all users.", EMPTY, 2, "a result check fails"),
]


@pytest.mark.parametrize(("question", "result", "votes", "fault"), JUDGE_CASES)
def test_a_judges_accept_in_text_to_sql_mode_needs_a_check_besides_it(
    question, result, votes, fault
):
    said = judge_unsupported(question, result, votes)
    assert (said is None) if fault is None else (said is not None and fault in said)


def ev(origin: str, fingerprint: str | None, refusal: str | None = None, result=NAMES) -> Evidence:
    return Evidence(origin=origin, sql="-", result=result, fingerprint=fingerprint, refusal=refusal)


VERDICTS = [
    # evidence, generated, accepted, words in the reason
    ([ev("raw", "a"), ev("rule", "a")], False, True, "2 of 2"),
    ([ev("raw", "a"), ev("raw:sample", "b")], False, False, "no agreement"),
    ([ev("raw", "a"), ev("rule", "a"), ev("s", "b"), ev("s", "b")], False, False, "a tie"),
    ([ev("raw", "a", "same rows"), ev("rule", "a", "same rows")], False, False, "refused"),
    ([ev("raw", None), ev("rule", None)], False, False, "no agreement"),
    ([ev("raw", "a", result=ONE_NUMBER), ev("s", "a", result=ONE_NUMBER)], False, False, "fails"),
    ([ev("raw", "a"), ev("witness", "a")], True, True, "2 of 2"),  # "list": a passing check
    # samples alone: the raw rewrite returns another result
    ([ev("raw", "b"), ev("raw:sample", "a"), ev("raw:sample", "a")], False, False, "neither"),
    # a statement without a result set has nothing to agree on
    ([ev("raw", "a", result=NO_SET), ev("rule", "a", result=NO_SET)], False, False, "no agree"),
]


@pytest.mark.parametrize(("evidence", "generated", "accepted", "words"), VERDICTS)
def test_the_evidence_rule(evidence, generated, accepted, words):
    decided = verdict(evidence, question="List the names of all users.", generated=generated)
    assert decided.accepted is accepted and words in decided.reason


WITNESSED = [
    # evidence, generated, accepted, words in the reason
    # written from the first query: in text-to-SQL mode they echo it, nothing confirms it
    ([ev("raw", "a"), ev("raw:sample", "a")], True, False, "no independent generation"),
    ([ev("raw", "a"), ev("raw:sample", "a")], False, True, "2 of 2"),  # correction mode
    # the witness, a generation from the question alone, returns it too
    ([ev("raw", "a"), ev("witness", "a")], True, True, "2 of 2"),
    ([ev("raw:from_sql", "a"), ev("witness:from_sql", "a")], True, True, "2 of 2"),
    ([ev("raw", "a"), ev("raw:sample", "a"), ev("witness", "b")], True, False, "independent"),
    # the witness is no anchor: it and a sample alone are not enough
    ([ev("raw", "b"), ev("witness", "a"), ev("raw:sample", "a")], True, False, "neither"),
]


@pytest.mark.parametrize(("evidence", "generated", "accepted", "words"), WITNESSED)
def test_in_text_to_sql_mode_an_acceptance_needs_the_witness(evidence, generated, accepted, words):
    question = "List the names of all users."
    decided = verdict(evidence, question=question, generated=generated)
    assert decided.accepted is accepted and words in decided.reason


def test_in_text_to_sql_mode_agreement_alone_is_not_enough():
    evidence = [ev("raw", "a"), ev("witness", "a")]
    decided = verdict(evidence, question="Tell me about the users", generated=True)
    assert decided.accepted is False and "no shape check passes" in decided.reason
    assert verdict(evidence, question="Tell me about the users", generated=False).accepted


def test_in_text_to_sql_mode_the_names_check_is_no_evidence():
    """The names the question and the model's own first query both give: kept names guard
    an acceptance, they do not make one."""
    evidence = [
        Evidence(origin=o, sql="SELECT * FROM users", result=NAMES, fingerprint="a")
        for o in ("raw", "witness")
    ]
    named = NamedNames(names=frozenset({"users"}))
    assert named.check(e.sql for e in evidence).verdict == "pass"
    decided = verdict(evidence, question="Tell me about the users", generated=True, named=named)
    assert decided.accepted is False and "no shape check passes" in decided.reason
