"""A judge's "accept" whose own reason says the candidate is wrong is not an acceptance."""

from __future__ import annotations

import pytest

from acts_sql.agent.consistency import contradicts_acceptance, fault_phrase

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
    assert contradicts_acceptance(reason), reason
    assert fault_phrase(reason)


@pytest.mark.parametrize("reason", CONSISTENT)
def test_a_reason_that_supports_the_candidate_does_not(reason):
    assert not contradicts_acceptance(reason), (reason, fault_phrase(reason))
