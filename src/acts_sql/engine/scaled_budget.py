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
  them (readings, judging, backtracking): one plan round more (`round_calls`).
- **open**: no result may be accepted yet: one plan round more.

A round is what it takes to reach a judgement: the plan, ambiguity detection, the choice
among readings, one pool of SQL (K samples) and its judgement, and one spare call (a re-ask
after invalid JSON).

While the search runs, three things shape the allowance:

- **Readings.** Ambiguity detection that gives several readings adds, for one reading past
  the first (`MAX_EXTRA_READINGS`), its choice, pool and judgement: exploring readings and
  backtracking between them is what the tree is for.
- **Agreement.** A result that may be accepted and that independent candidates come to agree
  on (its group reaches `AGREEMENT` votes for the first time, and the gate had not seen it
  agreed) is guaranteed its judgement: the allowance is raised, where needed, to leave
  `JUDGEMENT_CALLS` for it (`SearchAllowance.grow`), at most `MAX_GROWTH` times. It is not
  given another round: when the judge does not accept it, the best candidate
  (`acts_sql.engine.selection`) already ranks it first on its support.
- **Whole units.** A pool is not started unless its samples and its judgement fit in what is
  left, a choice among branches not unless the chosen branch's pool and judgement fit too,
  and a new plan not unless its pool and judgement do (`SearchAllowance.room_for`): a pool
  cut short, or one that cannot be judged, spends calls that decide nothing. The search stops
  instead. When the budget's own limit is the lower one, it is the user's to spend.

- **A majority the judge rejected without evidence.** When the judge rejects the result most
  candidates agree on and its reason names nothing the rows bear out, the rejection is
  overruled (`CandidateStage._overrule`) and the allowance ends there (`SearchAllowance.settle`):
  the search stops and returns that result, *not* accepted, ranked first on its support. In
  the kept runs the calls after such an event changed the answer in 2 of 74 traces, one for
  the better and one for the worse (docs/BENCHMARKS.md).

A search that only repeats, fails or scatters stops. Nothing here passes the budget's limits,
and a run whose user's SQL may not be accepted against (the gate's precondition: it runs and
the issue is about speed) keeps the whole budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel

from acts_sql.engine.budget import BudgetTracker, ScaledBudgetSpentError, llm_calls_text
from acts_sql.engine.evidence_rule import Evidence, anchors, unrefused
from acts_sql.engine.result_checks import failed, shape_checks

MAX_GROWTH = 2
"""Times the search's new agreements may raise the allowance."""
JUDGEMENT_CALLS = 2
"""What an agreed result is guaranteed: its judgement, and one re-ask after invalid JSON."""
MAX_EXTRA_READINGS = 1
"""Readings past the first that a run may explore on its allowance."""
ROUND_OVERHEAD = 4
"""The calls of a plan round besides its pool: the plan, ambiguity detection, the choice among
readings, the judgement."""
SPARE_CALLS = 1
"""A round's spare: a re-ask after invalid JSON."""


def round_calls(pool_size: int) -> int:
    """One plan round of the tree with pools of `pool_size` samples: the plan, ambiguity
    detection, a choice, a pool, its judgement and a spare."""
    return ROUND_OVERHEAD + pool_size + SPARE_CALLS


def unit_calls(pool_size: int) -> int:
    """A pool of `pool_size` samples and its judgement."""
    return pool_size + 1


Level = Literal["single", "contested", "open"]


class Scaling(BaseModel):
    """What the gate's candidates say the search may still spend."""

    level: Level
    more_calls: int
    reason: str


def acceptable(evidence: Sequence[Evidence], question: str) -> list[Evidence]:
    """The gathered candidates whose result may be accepted, by agreement or by the search's
    judge: ran with a result set, not refused, and no result check fails on it."""
    return [e for e in unrefused(evidence) if not failed(shape_checks(question, e.result))]


def scale(
    evidence: Sequence[Evidence], question: str, *, user_sql_fails: bool, pool_size: int
) -> Scaling:
    """The level of a gate that accepted nothing, from its candidates, for a search whose pools
    draw `pool_size` samples (pure)."""
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
            more_calls=round_calls(pool_size),
            reason=f"{len(results)} results may be accepted; one plan round to choose",
        )
    return Scaling(
        level="open",
        more_calls=round_calls(pool_size),
        reason="no result may be accepted yet; one round",
    )


class SearchAllowance:
    """The scaled allowance of one run's search, on its budget tracker."""

    def __init__(self, budget: BudgetTracker) -> None:
        self._budget = budget
        self._agreed: set[str] = set()
        self._grown = 0
        self._readings = 0
        self.active = False

    def start(self, scaling: Scaling, agreed: set[str]) -> int:
        """Set the allowance from the gate's level; `agreed`: the results the gate's
        candidates already agree on (the level counted them). The calls the run may make
        in all."""
        self.active = True
        self._agreed = set(agreed)
        self._budget.allow(self._budget.llm_calls + scaling.more_calls, scaling.reason)
        return self._budget.call_limit

    def stop(self) -> None:
        """The search is over: what is registered now (the unpooled raw rewrite) grows nothing."""
        self.active = False

    def room_for(self, calls: int) -> bool:
        """Whether `calls` more LLM calls fit in the allowance (always, when none is active or
        the budget's own limit binds: a user's limit is theirs to spend)."""
        if not self.active or self._budget.call_limit >= self._budget.budget.max_llm_calls:
            return True
        return self._budget.call_limit - self._budget.llm_calls >= calls

    def spent(self, unit: str, calls: int) -> ScaledBudgetSpentError:
        """The error that ends a search whose allowance has no room for `unit` (`calls`)."""
        limit = self._budget.call_limit
        left = limit - self._budget.llm_calls
        return ScaledBudgetSpentError(
            f"{llm_calls_text(limit)}: {self._budget.allowance_reason}; "
            f"{unit} needs {calls}, {left} left"
        )

    def grow(self, fingerprint: str) -> int | None:
        """Independent candidates now agree on a result that may be accepted: the first time
        for that result, the allowance leaves at least `JUDGEMENT_CALLS` for its judgement,
        at most `MAX_GROWTH` times in all. The new total, or None when nothing grew (not
        active, already agreed, grown enough, calls enough left, at the limit)."""
        if not self.active or fingerprint in self._agreed or self._grown >= MAX_GROWTH:
            return None
        self._agreed.add(fingerprint)
        wanted = min(self._budget.llm_calls + JUDGEMENT_CALLS, self._budget.budget.max_llm_calls)
        if wanted <= self._budget.call_limit:
            return None
        self._grown += 1
        self._budget.allow(wanted, "candidates came to agree on a new result: its judgement")
        return self._budget.call_limit

    def settle(self, reason: str) -> int | None:
        """The search's answer is settled without an acceptance: no more calls. The new
        total, or None when nothing changed (not active, or the budget's own limit binds)."""
        if not self.active or self._budget.call_limit >= self._budget.budget.max_llm_calls:
            return None
        self._budget.allow(self._budget.llm_calls, reason)
        return self._budget.call_limit

    def grow_readings(self, readings: int, pool_size: int) -> int | None:
        """Ambiguity detection gave `readings` to explore: the choice, pool and judgement of
        each one past the first (the round covers the first), at most `MAX_EXTRA_READINGS` in
        a run. The new total, or None when nothing grew."""
        extra = min(readings - 1, MAX_EXTRA_READINGS - self._readings)
        if not self.active or extra <= 0:
            return None
        if self._budget.call_limit >= self._budget.budget.max_llm_calls:
            return None
        self._readings += extra
        self._budget.allow(
            max(self._budget.call_limit, self._budget.llm_calls)
            + extra * (1 + unit_calls(pool_size)),
            f"{readings} readings to explore",
        )
        return self._budget.call_limit
