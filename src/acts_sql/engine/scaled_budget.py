"""Budgets scaled to the evidence: the search gets the calls the evidence says it can use.

The evidence gate (`acts_sql.engine.evidence`) settles a run when independent candidates
agree. When it does not, the budget's limits (`Budget`) are a ceiling, not an amount to
spend: with the option `scaled_budget` (on by default; `--no-scaled-budget`), the gate's
candidates decide how many LLM calls the search may still make (`scale`):

- **single**: the user's SQL fails (an error the database reported), exactly one result
  may be accepted (it runs, returns a result set, is not the user's SQL or rows, no result
  check fails), it is the raw rewrite's or the rule repair's, and no other gathered
  candidate returns another result that may be accepted. A repair of a reported error with
  nothing against it: the search stops there and the run returns it, *not* accepted
  (agreement is missing). No more calls. (When the user's SQL runs, or in text-to-SQL mode,
  one result is not that much evidence: the level is **open**.)
- **contested**: two or more results may be accepted; the tree is there to choose between
  them (readings, judging, backtracking): one plan round more (`ROUND_CALLS`).
- **open**: no result may be accepted yet: one plan round more.

While the search runs, each candidate that returns a *new* result that may be accepted
grows the allowance by another round (`SearchAllowance.grow`): a search that keeps finding
new evidence goes on, one that only repeats or fails stops. Nothing here passes the
budget's limits, and a run whose user's SQL may not be accepted against (the gate's
precondition: it runs and the issue is about speed) keeps the whole budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from acts_sql.engine.budget import BudgetTracker
from acts_sql.engine.evidence_rule import Evidence, anchors, usable
from acts_sql.engine.result_checks import failed, shape_checks

ROUND_CALLS = 6
"""One plan round of the tree: the plan, ambiguity detection, a choice, a SQL-writing step,
the judgement, one spare (a re-ask after invalid JSON)."""

Level = Literal["single", "contested", "open"]


class Scaling(BaseModel):
    """What the gate's candidates say the search may still spend."""

    level: Level
    more_calls: int
    reason: str


def acceptable(evidence: Sequence[Evidence], question: str) -> list[Evidence]:
    """The gathered candidates whose result may be accepted: usable (ran with a result set,
    not refused) and no result check fails on it."""
    return [e for e in usable(evidence) if not failed(shape_checks(question, e.result))]


def scale(evidence: Sequence[Evidence], question: str, *, user_sql_fails: bool) -> Scaling:
    """The level of a gate that accepted nothing, from its candidates (pure)."""
    kept = acceptable(evidence, question)
    results = {e.fingerprint for e in kept}
    if user_sql_fails and len(results) == 1 and results <= anchors(evidence):
        origin = kept[0].origin
        return Scaling(
            level="single",
            more_calls=0,
            reason=f"one result may be accepted ({origin}), no candidate returns another",
        )
    if len(results) > 1:
        return Scaling(
            level="contested",
            more_calls=ROUND_CALLS,
            reason=f"{len(results)} results may be accepted; one plan round to choose",
        )
    return Scaling(
        level="open", more_calls=ROUND_CALLS, reason="no result may be accepted yet; one round"
    )


class SearchAllowance:
    """The scaled allowance of one run's search, on its budget tracker."""

    def __init__(self, budget: BudgetTracker) -> None:
        self._budget = budget
        self._known: set[str] = set()
        self.active = False

    def start(self, scaling: Scaling, known: set[str]) -> int:
        """Set the allowance from the gate's level; `known`: the results the gate's candidates
        return (the level counted them: they grow nothing when they join the first pool).
        The calls the run may make in all."""
        self.active = True
        self._known = set(known)
        self._budget.allow(self._budget.llm_calls + scaling.more_calls, scaling.reason)
        return self._budget.call_limit

    def stop(self) -> None:
        """The search is over: what is registered now (the unpooled raw rewrite) grows nothing."""
        self.active = False

    def grow(self, fingerprint: str) -> int | None:
        """A result that may be accepted: one round more when it is new; the new total, or
        None when the allowance is not active, the result is known, or the allowance is
        already at the budget's limit."""
        if not self.active or fingerprint in self._known:
            return None
        self._known.add(fingerprint)
        if self._budget.call_limit >= self._budget.budget.max_llm_calls:
            return None
        self._budget.allow(
            max(self._budget.call_limit, self._budget.llm_calls) + ROUND_CALLS,
            "a new result may be accepted",
        )
        return self._budget.call_limit
