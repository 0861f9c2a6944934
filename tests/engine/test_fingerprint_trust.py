"""Result fingerprints, trust refusals, the candidate book's ranking and the final choice."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from acts_sql.db.result import ExecResult
from acts_sql.engine.candidates import CandidateBook
from acts_sql.engine.fingerprint import (
    result_shape,
    row_delta,
    same_rows,
    same_rows_less_constant_columns,
)
from acts_sql.engine.selection import final_choice
from acts_sql.engine.trust import (
    SAME_ROWS,
    SAME_ROWS_LESS_CONSTANT,
    SAME_SQL,
    TrustContext,
    expects_same_rows,
)


def ok(rows, columns=("a", "b"), truncated=False):
    return ExecResult(
        status="ok",
        columns=list(columns),
        rows=[list(r) for r in rows],
        row_count=len(rows),
        truncated=truncated,
    )


def err(message="no such column: x"):
    return ExecResult(status="error", error=message, error_kind="schema")


def shape(sql, result):
    return result_shape(sql, result, "sqlite")


def test_row_order_does_not_matter_without_an_outer_order_by():
    a = shape("SELECT a, b FROM t", ok([(1, "x"), (2, "y")]))
    b = shape("SELECT a, b FROM t", ok([(2, "y"), (1, "x")]))
    assert a.fingerprint == b.fingerprint


def test_row_order_matters_with_an_outer_order_by():
    a = shape("SELECT a, b FROM t ORDER BY a", ok([(1, "x"), (2, "y")]))
    b = shape("SELECT a, b FROM t ORDER BY a", ok([(2, "y"), (1, "x")]))
    assert a.ordered and a.fingerprint != b.fingerprint


def test_order_by_inside_a_subquery_does_not_order_the_result():
    sql = "SELECT a, b FROM (SELECT a, b FROM t ORDER BY a LIMIT 5)"
    assert not shape(sql, ok([(1, "x")])).ordered


def test_equal_values_from_different_drivers_hash_equal():
    a = shape("SELECT 1", ok([(Decimal("2.50"), dt.date(2024, 1, 2))]))
    b = shape("SELECT 1", ok([(2.5, "2024-01-02")]))
    assert a.fingerprint == b.fingerprint
    c = shape("SELECT 1", ok([(2.5000001, "2024-01-02")]))
    assert c.fingerprint == a.fingerprint  # 6 significant digits
    d = shape("SELECT 1", ok([(2.51, "2024-01-02")]))
    assert d.fingerprint != a.fingerprint


def test_duplicate_rows_count():
    a = shape("SELECT a, b FROM t", ok([(1, "x"), (1, "x")]))
    b = shape("SELECT a, b FROM t", ok([(1, "x")]))
    assert a.fingerprint != b.fingerprint and not same_rows(a, b)


def test_column_names_do_not_matter_but_their_number_does():
    a = shape("SELECT 1", ok([(1, "x")], columns=("id", "name")))
    b = shape("SELECT 1", ok([(1, "x")], columns=("room", "label")))
    c = shape("SELECT 1", ok([(1, "x", None)], columns=("a", "b", "c")))
    assert a.fingerprint == b.fingerprint != c.fingerprint


def test_statements_without_a_result_set_group_by_their_text():
    done = ExecResult(status="ok")
    a = shape("UPDATE t SET a = 1", done)
    b = shape("update t set a=1", done)
    c = shape("UPDATE t SET a = 2", done)
    assert a.fingerprint == b.fingerprint != c.fingerprint
    assert not same_rows(a, c)


def test_failures_have_no_fingerprint():
    assert shape("SELECT x", err()) is None


def test_truncated_results_are_never_the_same_rows():
    a = shape("SELECT a, b FROM t", ok([(1, "x")], truncated=True))
    b = shape("SELECT a, b FROM u", ok([(1, "x")], truncated=True))
    assert not same_rows(a, b)


def test_row_delta_against_the_users_result():
    mine = shape("SELECT a, b FROM t", ok([(1, "x"), (3, "z")]))
    theirs = shape("SELECT a, b FROM t", ok([(1, "x"), (2, "y")]))
    delta = row_delta(mine, theirs)
    assert delta.added_count == 1 and delta.removed_count == 1
    assert '3, "z"' in delta.added[0] and '2, "y"' in delta.removed[0]
    other = shape("SELECT a FROM t", ok([(1,)], columns=("a",)))
    assert not row_delta(other, theirs).comparable


USER_SQL = "SELECT a, b FROM t WHERE a > 1"


def trust(same_rows_expected=False, original_runs=True):
    original = shape(USER_SQL, ok([(2, "y"), (3, "z")]))
    return TrustContext.build("sqlite", USER_SQL, original, same_rows_expected, original_runs)


@pytest.mark.parametrize(
    "sql",
    [USER_SQL, "select a,b from t where a>1;", "SELECT a, b\n  FROM t -- same\n WHERE (a > 1)"],
)
def test_the_users_sql_in_any_formatting_is_refused(sql):
    assert trust().refusal(sql, None) == SAME_SQL


def test_a_different_sql_with_the_users_rows_is_refused_unless_same_rows_are_expected():
    rows = shape("SELECT a, b FROM t WHERE a >= 2", ok([(3, "z"), (2, "y")]))
    assert trust().refusal("SELECT a, b FROM t WHERE a >= 2", rows) == SAME_ROWS
    assert trust(same_rows_expected=True).refusal("SELECT a, b FROM t WHERE a >= 2", rows) is None


FLAGGED = "SELECT id, score, 0 AS is_a_match FROM t"
FLAGGED_ROWS = [(1, 80, 0), (2, 90, 0), (2, 90, 0)]


@pytest.mark.parametrize(
    ("rows", "columns", "same"),
    [
        ([(2, 90), (1, 80), (2, 90)], ("id", "score"), True),  # the flag dropped, order aside
        ([(1, 0), (2, 0), (2, 0)], ("id", "is_a_match"), False),  # score varies: not constant
        ([(1, 80), (2, 90)], ("id", "score"), False),  # a duplicate row lost
        ([(1, 80), (2, 91), (2, 90)], ("id", "score"), False),  # another value
        ([(1,), (2,), (2,)], ("id",), False),  # score is not constant
    ],
)
def test_the_users_rows_less_a_constant_column(rows, columns, same):
    original = shape(FLAGGED, ok(FLAGGED_ROWS, columns=("id", "score", "is_a_match")))
    candidate = shape("SELECT ...", ok(rows, columns=columns))
    assert same_rows_less_constant_columns(candidate, original) is same
    context = TrustContext.build("sqlite", FLAGGED, original, False)
    assert (context.refusal("SELECT ...", candidate) == SAME_ROWS_LESS_CONSTANT) is same


def test_a_single_row_is_no_projection_of_the_users_result():
    original = shape(FLAGGED, ok([(1, 80, 0)], columns=("id", "score", "is_a_match")))
    candidate = shape("SELECT id, score FROM t", ok([(1, 80)], columns=("id", "score")))
    assert not same_rows_less_constant_columns(candidate, original)


def test_when_the_users_sql_fails_a_running_lookalike_is_not_the_same_sql():
    assert trust(original_runs=False).refusal(USER_SQL, None) is None


@pytest.mark.parametrize(
    ("issue", "expected"),
    [
        ("This query is too slow on 10M rows, how can I speed it up?", True),
        ("Optimize the query; it takes too long", True),
        ("Should I create an index on orders.customer_id?", True),
        ("Which rooms have overlapping bookings?", False),
        ("Get the index of the first row where the total exceeds 10", False),
        ("Sum the sales per month", False),
    ],
)
def test_performance_issues_expect_the_same_rows(issue, expected):
    assert expects_same_rows(issue) is expected


def book_with(*entries):
    book = CandidateBook("sqlite")
    made = []
    for sql, result, votes in entries:
        made.append(book.add("n1", sql, result, shape(sql, result), origin="greedy", votes=votes))
    return book, made


def test_ranking_runs_then_not_refused_then_support_then_judge():
    small = ok([(1, "x")])
    big = ok([(2, "y")])
    book, (a, b, c, d) = book_with(
        ("SELECT 1 AS a, 'x' AS b", small, 1),
        ("SELECT 2 AS a, 'y' AS b", big, 3),
        ("SELECT broken", err(), 5),
        ("SELECT 2, 'y'", big, 1),
    )
    # the largest agreeing group (b and d: 4 votes) beats the lone one
    assert book.best() is b
    book.reject(b, "judge said no")
    book.reject(d, "judge said no")
    assert book.best() is b  # a rejection without evidence does not outweigh 4 votes to 1
    book.reject_group(b.group, "judge said no", checked="does not list 'z'")
    assert book.best() is a  # a rejection the rows bear out drops the group
    book.refuse(a, SAME_SQL)
    assert book.best() is b  # refused below rejected
    assert book.ranked()[-1] is c  # what does not run comes last


def test_a_later_candidate_with_rows_the_judge_rejected_ranks_as_rejected():
    """SQLite_66 with the 0.5B: four candidates with the rows the judge rejected outvoted a
    lone unjudged candidate (the one that passed) and were returned. The verdict is on the
    rows (a later candidate with them ranks as rejected), but it only breaks ties of support
    unless its reason is borne out by the rows (issue 38: rejections need evidence too)."""
    rejected_rows, other_rows = ok([(1, "x")]), ok([(2, "y")])
    book, (first, lone) = book_with(
        ("SELECT 1 AS a, 'x' AS b", rejected_rows, 1), ("SELECT 2 AS a, 'y' AS b", other_rows, 1)
    )
    book.reject(first, "the judge: wrong rows")
    book.reject_group(first.group, "the judge: wrong rows")
    assert book.best() is lone  # one vote each: the judge's verdict breaks the tie
    later = book.add(
        "n2",
        "SELECT 1, 'x'",
        rejected_rows,
        shape("SELECT 1, 'x'", rejected_rows),
        origin="sample",
        votes=6,
    )
    book.reject(later, "returns the same rows as a result already rejected", by_judge=False)
    assert later.judge is None  # the judge never saw this candidate itself
    assert book.judge_view(later) == "reject" and book.judge_view(lone) is None
    assert book.best() is first  # 7 votes against 1, and nothing checked against the rows
    book.reject_group(first.group, "the judge: wrong rows", checked="does not return 'y'")
    assert book.best() is lone  # 7 votes for rows the judge showed wrong lose to 1 unjudged


def test_final_choice_returns_the_users_sql_when_nothing_runs_but_it_does():
    book, _ = book_with(("SELECT broken", err(), 1))
    choice = final_choice(book, None, ok([(1, "x")]))
    assert choice.returns_original and choice.candidate is None
    assert "returning the user's SQL unchanged" in choice.note


def test_final_choice_returns_a_failing_candidate_when_the_users_sql_fails_too():
    book, (only,) = book_with(("SELECT broken", err(), 1))
    choice = final_choice(book, None, err())
    assert choice.candidate is only and not choice.returns_original


def test_final_choice_explains_an_unaccepted_best_candidate():
    book, (a, _) = book_with(
        ("SELECT 1", ok([(1,)], ("a",)), 2), ("SELECT 2", ok([(2,)], ("a",)), 1)
    )
    choice = final_choice(book, None, ok([(9,)], ("a",)))
    assert choice.candidate is a
    assert "not accepted" in choice.note and "2 of 3" in choice.note
