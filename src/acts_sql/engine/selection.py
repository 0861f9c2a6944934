"""What a run returns: the accepted candidate, else the best one, else the user's SQL.

Never worse than one raw call: when nothing is accepted, candidates are
ranked (`CandidateBook.rank`): runs > not refused > not rejected with
evidence (a rejection whose reason the rows bear out) > the most support
(the votes of the candidates that agree on its result and are not refused)
> the judge's most favourable verdict on its rows > the raw rewrite or a
rule repair > earlier. So the answer is the result most candidates agree
on; a minority group wins over a larger one only when the larger one is
refused (the user's SQL or the user's rows) or its rejection was checked
against its rows. The judge's verdict breaks ties of support (and so orders
groups when each has one vote); on a tie it did not break, the raw rewrite
or a rule repair comes first, then the earlier candidate. A candidate that
runs is returned, marked not accepted. When no candidate runs but the
user's SQL does, the user's SQL comes back unchanged, also not accepted.
"""

from __future__ import annotations

from pydantic import BaseModel

from acts_sql.db.result import ExecResult
from acts_sql.engine.candidates import Candidate, CandidateBook
from acts_sql.engine.trust import SAME_SQL


class FinalChoice(BaseModel):
    candidate: Candidate | None = None
    returns_original: bool = False
    note: str = ""
    """Why this one, when nothing was accepted (appended to the stop reason)."""


def final_choice(
    book: CandidateBook, accepted: Candidate | None, original: ExecResult | None
) -> FinalChoice:
    """The run's answer; see the module doc."""
    if accepted is not None:
        return FinalChoice(candidate=accepted)
    best = book.best()
    original_runs = original is not None and original.ok
    if best is None:
        return FinalChoice(
            returns_original=True, note="no candidate; returning the user's SQL unchanged"
        )
    if not best.runs and original_runs:
        return FinalChoice(
            returns_original=True,
            note="no candidate runs; returning the user's SQL unchanged (not accepted)",
        )
    if best.verdict == "refused" and best.reason == SAME_SQL:
        return FinalChoice(
            returns_original=True,
            note="every candidate that runs repeats the user's SQL; returning it unchanged "
            "(not accepted)",
        )
    return FinalChoice(candidate=best, note=_why(book, best))


def _why(book: CandidateBook, best: Candidate) -> str:
    if not best.runs:
        return f"nothing accepted; returning the best candidate ({best.id}), which does not run"
    votes = book.group_votes(best)
    total = sum(g.votes for g in book.groups.values())
    verdict = {"rejected": ", rejected by the judge", "refused": ", refused"}.get(best.verdict, "")
    support = book.support(best.group)
    counted = book.running_votes()
    trusted = (  # refusals took votes out of the count: say what the ranking counted
        f" ({support} of the {counted} vote(s) for results that run and are not refused)"
        if best.verdict != "refused" and (support, counted) != (votes, total)
        else ""
    )
    return (
        f"nothing accepted; returning the best candidate ({best.id}, not accepted): it runs"
        f"{verdict}, and {votes} of {total} candidate(s) that ran agree on its result{trusted}"
    )
