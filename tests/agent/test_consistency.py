"""A judge's "accept" whose own reason says the candidate is wrong is not an acceptance."""

from __future__ import annotations

import pytest

from acts_sql.agent.consistency import (
    COPIED_SHARE,
    copied_from,
    copied_share,
    endorsement_phrase,
    fault_phrase,
)

CONTRADICTIONS = [
    "The query is wrong: it counts every booking, not overlapping ones.",
    "The candidate still returns the same rows as the user's query.",
    "It does not filter by year, so the totals are off.",
    "This SQL doesn't answer the question about months.",
    "The result is incorrect because rooms with one booking appear.",
    "Group A fails to handle NULL descriptions.",
    "It is not what the user asked for.",
    "The candidate returns an error on the date cast.",
    "I would reject this: the join duplicates rows.",
    "The query should use LEFT JOIN instead.",
    "The original SQL is fine, but this candidate is incorrect.",
    "The candidate from the evidence on this path does not appear in the result set.",
    "The new row doesn't show up in the output.",
    # an acts run with the 0.5B, PostgreSQL_23: "accept" with the reason it had rejected with
    "The function `what_quarter_is` does not correctly classify transactions by quarter. It "
    "returns the default value of 1 for April, which is not the first quarter.",
    "The join cannot properly handle users without assets.",
    # a linear judge's accept with the 0.5B (SQLite_64), replayed
    "The issue asks for a list of all years between two given dates from the 'loan' table, but "
    "the SQL does not do it.",
    "However, the SQL is not returning the correct result for the given dates.",
]
CONSISTENT = [
    "Only rooms whose bookings intersect are listed; this matches the issue.",
    "It fixes the syntax error and ranks products by their best month.",
    "The original query is wrong because it counts all bookings; the candidate checks "
    "whether time ranges intersect.",
    "The user's SQL does not filter by year. The candidate adds the 2022 filter.",
    "Group B returns one row per category, as asked.",
    "It no longer returns the wrong totals.",
    "The user's SQL does not correctly classify April; the candidate starts the quarter there.",
    "",
]


@pytest.mark.parametrize("reason", CONTRADICTIONS)
def test_a_reason_that_states_a_fault_contradicts_accept(reason):
    assert fault_phrase(reason) is not None, reason
    assert fault_phrase(reason)


@pytest.mark.parametrize("reason", CONSISTENT)
def test_a_reason_that_supports_the_candidate_does_not(reason):
    assert fault_phrase(reason) is None, (reason, fault_phrase(reason))


ISSUE = (
    "In the financial database, we need to generate a list of all years between two given "
    "dates from the 'loan' table. The goal is to generate all years between the earliest and "
    "latest loan approval dates, regardless of the interval between them."
)
COPIED = [
    # the accept of a kept 0.5B run (SQLite_64), the issue's words with nothing of the candidate
    "The issue asks for a list of all years between two given dates from the 'loan' table. "
    "The goal is to generate all years between the earliest and latest loan approval dates.",
    "We need to generate a list of all years between two given dates from the 'loan' table.",
]
OWN = [
    "Group A returns 1994, 1995, 1996 and 1997: every year between the earliest and latest "
    "loan dates, once each, which the user's query did not.",
    "The recursive CTE adds one year at a time until the latest approval year.",
    "Lists all years between two given dates.",  # too short to tell: left to the judge
]


@pytest.mark.parametrize("reason", COPIED)
def test_a_reason_copied_from_the_issue_is_found(reason):
    found = copied_from(reason, {"the issue": ISSUE, "the rules": "Write your reason first."})
    assert found is not None and found[0] == "the issue" and found[1] >= COPIED_SHARE


@pytest.mark.parametrize("reason", OWN)
def test_a_reason_in_its_own_words_is_not(reason):
    assert copied_from(reason, {"the issue": ISSUE}) is None, copied_share(reason, [ISSUE])


def test_copied_share_counts_only_runs_of_words_in_order():
    source = "alpha beta gamma delta epsilon zeta eta theta"
    assert copied_share("alpha beta gamma delta epsilon zeta eta theta", [source]) == 1.0
    assert copied_share("theta eta zeta epsilon delta gamma beta alpha", [source]) == 0.0
    half = "alpha beta gamma delta epsilon one two three four five"
    assert copied_share(half, [source]) == 0.5


# Reasons a judge gave for an "accept" that speak for the user's SQL, not the candidate
# (the first four are 1.5B judge replies from the kept runs).
ENDORSEMENTS = [
    "The user's SQL statement is already correct and does not need any changes.",
    "The user's SQL is correct and does not need any changes. The query correctly identifies "
    "tables in the 'public' schema.",
    "The user's SQL statement is already using the correct syntax for the 'aggregate' "
    "function, which is 'AVG' for average.",
    "The user's SQL statement already includes a `GROUP BY week` clause, which is sufficient "
    "to aggregate the concentration levels.",
    "The original query looks fine as written.",
    "No changes are needed to the original query.",
    "The user's SQL already correctly selects the trip date and driver name from the trips table.",
    "The original query is correctly written for SQLite.",
    # a 1.5B judge's accept of the text inside the user's crosstab call (PostgreSQL_160)
    "The user's SQL already produces the desired output. The crosstab function is not "
    "necessary here because the user's SQL already generates the required format.",
]
NOT_ENDORSEMENTS = [
    "The user's SQL is not correct; the candidate groups by week.",
    "The original query is wrong because it counts all bookings; the candidate checks overlap.",
    "The user's SQL does not filter by year. The candidate adds the 2022 filter.",
    "The candidate is correct and the user's SQL needs a GROUP BY.",
    "The original query already returns duplicates, which the candidate removes.",
    "The original query already produces the wrong totals; the candidate sums per day.",
    "Group A is correct: it lists rooms whose bookings intersect.",
    "The user's SQL does not correctly join the tables; the candidate joins on driver_id.",
    "The original query is not correctly written: it divides integers.",
    "",
]


@pytest.mark.parametrize(
    ("reason", "vouches"),
    [(r, True) for r in ENDORSEMENTS] + [(r, False) for r in NOT_ENDORSEMENTS],
)
def test_a_reason_that_vouches_for_the_users_sql_is_told_from_one_that_does_not(reason, vouches):
    assert (endorsement_phrase(reason) is not None) is vouches, (reason, endorsement_phrase(reason))
