"""The evidence gate: stop before any plan when independent candidates agree.

Run by the search (`acts`, `linear`) after the raw rewrite is written and before the plan
is asked for. It gathers up to three kinds of independent candidates, cheaply:

1. the rule chain's repair of the user's SQL (no LLM call; `CandidateStage._rule_entries`);
2. the raw single-turn rewrite (one call, already written first; `_raw_entries`);
3. only while these do not agree, and one of them returns a result that may be accepted:
   raw samples at the pool's temperature (one call each; at most `MAX_SAMPLES`, at most
   K - 1 of a pool of K, none at temperature 0, and never the last call of the budget).

On the 40 development tasks with the 0.5B (replayed from the kept `vote` runs,
`scripts/evidence_replay.py`), the rule without the last two conditions on the raw rewrite
and on result sets accepted 2 tasks, both wrong (two copies of one CREATE FUNCTION; two
samples agreeing after the raw rewrite returned the user's rows); with them, none.

The rule (`EVIDENCE_RULE`, named in the `evidence` event and in the stop reason): the run
**accepts**, without a plan or a tree, when

- the user's SQL fails, or the issue says its rows are wrong (not a question of speed:
  `trust.expects_same_rows`); in text-to-SQL mode (no user SQL) there is no such condition;
- at least `AGREEMENT` of the gathered candidates run and return the same result set (the
  result fingerprint of `acts_sql.engine.fingerprint`; a statement without a result set has
  nothing to agree on), and no other result has as many;
- the raw rewrite or the rule repair is among them (samples that agree with each other
  alone are not enough: the issue's "a minimal repair or the raw rewrite runs with a
  different result"; so no sample is drawn unless one of them returns such a result);
- that result is not refused (`TrustContext.refusal`: not the user's SQL, not its rows);
- the result checks (`acts_sql.engine.result_checks`) do not fail, and in text-to-SQL mode
  at least one of them passes.

Otherwise nothing is decided: the gathered candidates join the first pool of the search, as
the raw rewrite and the rule repair always did (no call is lost), and the search runs.
`verdict` is the pure part of the rule; `EvidenceStage` is the part that calls and runs.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from acts_sql.agent.single_call import raw_correction
from acts_sql.db.result import ExecResult
from acts_sql.engine.budget import BudgetTracker
from acts_sql.engine.candidate_stage import RAW_PROSE_TOKENS
from acts_sql.engine.candidates import Candidate, CandidateBook
from acts_sql.engine.events import EvidenceData
from acts_sql.engine.fingerprint import result_shape
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.recording import TracedLLM
from acts_sql.engine.result_checks import ShapeCheck, describe, failed, passed, shape_checks
from acts_sql.engine.trace import Trace
from acts_sql.engine.trust import TrustContext
from acts_sql.prompts.context import TaskContext, sql_reply_cap
from acts_sql.tools.base import PoolEntry, PoolSettings

EVIDENCE_RULE = "evidence: agreement"
EVIDENCE_NODE = "evidence"
"""The node an accepted candidate is registered under (there is no tree); the gate's calls,
statements and an `evidence` event that accepts nothing belong to no node."""
AGREEMENT = 2
"""Independent candidates that must return the same result."""
MAX_SAMPLES = 2
"""Raw samples the gate may draw: with the raw rewrite, at most 3 LLM calls."""
SAMPLE_ORIGIN = "raw:sample"


class Evidence(BaseModel):
    """One gathered candidate as the rule sees it."""

    origin: str
    sql: str
    result: ExecResult
    fingerprint: str | None = None
    refusal: str | None = None


class EvidenceVerdict(BaseModel):
    """What the gate decided, and why."""

    accepted: bool
    reason: str
    fingerprint: str | None = None
    """The agreeing result (set when some result has the most votes, accepted or not)."""
    checks: list[ShapeCheck] = Field(default_factory=list)


def anchors(evidence: list[Evidence]) -> set[str]:
    """The results an acceptance may rest on: those of the raw rewrite or of the rule repair
    (not of a sample alone) that ran with a result set and are not refused."""
    return {
        e.fingerprint
        for e in _usable(evidence)
        if e.fingerprint and not e.origin.startswith(SAMPLE_ORIGIN)
    }


def _usable(evidence: list[Evidence]) -> list[Evidence]:
    """Candidates whose result may be agreed on: ran, returned a result set, not refused."""
    return [e for e in evidence if e.fingerprint and e.result.columns and e.refusal is None]


def verdict(
    evidence: list[Evidence], *, question: str, generated: bool, needed: int = AGREEMENT
) -> EvidenceVerdict:
    """The rule on gathered candidates (the precondition on the user's SQL is the caller's)."""
    ranked = Counter(e.fingerprint for e in _usable(evidence)).most_common()
    if not ranked or ranked[0][1] < needed:
        most = ranked[0][1] if ranked else 0
        why = f"no agreement: {most} candidate(s) return the largest result that may be accepted"
        if any(e.refusal for e in evidence):
            why += f" (refused: {_refusals(evidence)})"
        return EvidenceVerdict(accepted=False, reason=f"{why}; at least {needed} needed")
    fingerprint, count = ranked[0]
    if len(ranked) > 1 and ranked[1][1] == count:
        return EvidenceVerdict(
            accepted=False, reason=f"a tie: two results have {count} candidates each"
        )
    if fingerprint not in anchors(evidence):
        return EvidenceVerdict(
            accepted=False,
            fingerprint=fingerprint,
            reason=f"{count} samples agree, but neither the raw rewrite nor the rule repair "
            "returns their result",
        )
    return _checked(evidence, fingerprint, count, question=question, generated=generated)


def _checked(
    evidence: list[Evidence], fingerprint: str, count: int, *, question: str, generated: bool
) -> EvidenceVerdict:
    """The agreeing result against the result checks."""
    result = next(e.result for e in evidence if e.fingerprint == fingerprint)
    checks = shape_checks(question, result)
    bad = failed(checks)
    if bad:
        return EvidenceVerdict(
            accepted=False,
            fingerprint=fingerprint,
            checks=checks,
            reason=f"{count} candidates agree, but a result check fails: {describe(bad)}",
        )
    if generated and not passed(checks):
        return EvidenceVerdict(
            accepted=False,
            fingerprint=fingerprint,
            checks=checks,
            reason=f"{count} candidates agree, but no result check passes ({describe(checks)})",
        )
    return EvidenceVerdict(
        accepted=True,
        fingerprint=fingerprint,
        checks=checks,
        reason=f"{count} of {len(evidence)} independent candidates return the same result "
        f"({describe(checks)})",
    )


def may_accept(task: TaskContext, trust: TrustContext) -> bool:
    """The rule's precondition: the user's SQL fails, or the issue says its rows are wrong
    (text-to-SQL mode: always)."""
    if trust.generated:
        return True
    original = task.original_result
    if original is None:
        return False
    return not original.ok or not trust.same_rows_expected


def _refusals(evidence: list[Evidence]) -> str:
    return "; ".join(sorted({e.refusal for e in evidence if e.refusal}))


class EvidenceStage:
    """The gate, mixed into `TreeSearch` (with `CandidateStage`, whose entries it uses)."""

    llm: TracedLLM
    task: TaskContext
    options: CorrectionOptions
    trace: Trace
    budget: BudgetTracker
    trust: TrustContext
    pool: PoolSettings
    book: CandidateBook
    accepted: Candidate | None
    _raw_pending: bool
    _rules_pending: bool
    _gathered: tuple[list[PoolEntry], list[PoolEntry]]

    if TYPE_CHECKING:

        def _raw_entries(self, node_id: str | None) -> list[PoolEntry]: ...

        def _raw_entry(self, node_id: str | None, written: str, origin: str) -> list[PoolEntry]: ...

        def _rule_entries(self, node_id: str | None) -> list[PoolEntry]: ...

        def _register(self, node_id: str, entries: list[PoolEntry]) -> list[Candidate]: ...

    def _weigh_evidence(self) -> bool:
        """The gate (see the module doc): True when it accepted a candidate."""
        if not (self.options.evidence_gate and self._raw_pending):
            return False
        if not may_accept(self.task, self.trust):
            return False
        head = self._raw_entries(None)  # run-level, as the user's SQL: no node of the tree
        tail = self._rule_entries(None) if self._rules_pending else []
        self._gathered = (head, tail)
        decided = self._verdict(head + tail)
        samples = 0
        while not decided.accepted and self._may_sample(samples, head + tail):
            samples += 1
            head.extend(self._raw_sample(samples))
            decided = self._verdict(head + tail)
        if decided.accepted:
            self._gathered = ([], [])
            self._accept_evidence(head + tail, decided)
        else:
            self._emit_evidence(head + tail, decided, None)
        return decided.accepted

    def _take_gathered(self) -> tuple[list[PoolEntry], list[PoolEntry]]:
        """The candidates the gate gathered and did not accept, once: they join the first pool."""
        gathered, self._gathered = self._gathered, ([], [])
        return gathered

    def _evidence(self, entries: list[PoolEntry]) -> list[Evidence]:
        out = []
        for entry in entries:
            shape = result_shape(entry.sql, entry.result, self.task.dialect)
            out.append(
                Evidence(
                    origin=entry.origin,
                    sql=entry.sql,
                    result=entry.result,
                    fingerprint=shape.fingerprint if shape else None,
                    refusal=self.trust.refusal(entry.sql, shape) if shape else None,
                )
            )
        return out

    def _verdict(self, entries: list[PoolEntry]) -> EvidenceVerdict:
        return verdict(
            self._evidence(entries), question=self.task.question, generated=self.trust.generated
        )

    def _may_sample(self, drawn: int, entries: list[PoolEntry]) -> bool:
        """Another raw sample: only when the raw rewrite or the rule repair returns a result
        that may be accepted (samples alone never are), within MAX_SAMPLES and the pool's
        K - 1, at a temperature above 0, and leaving at least one call of the budget."""
        if drawn >= min(MAX_SAMPLES, self.pool.size - 1) or self.pool.temperature <= 0:
            return False
        if not anchors(self._evidence(entries)):
            return False
        return self.budget.llm_calls + 2 <= self.budget.budget.max_llm_calls

    def _raw_sample(self, k: int) -> list[PoolEntry]:
        """The raw prompt once more, at the pool's temperature with seed `k`."""
        statements, _ = raw_correction(
            self.llm.for_node(None),
            self.task,
            max_tokens=sql_reply_cap(self.task.original_sql) + RAW_PROSE_TOKENS,
            temperature=self.pool.temperature,
            seed=k,
        )
        if not statements:
            return []
        return self._raw_entry(None, ";\n".join(statements), SAMPLE_ORIGIN)

    def _accept_evidence(self, entries: list[PoolEntry], decided: EvidenceVerdict) -> None:
        pool = self._register(EVIDENCE_NODE, entries)
        agreeing = [c for c in pool if c.shape and c.shape.fingerprint == decided.fingerprint]
        group = agreeing[0].group if agreeing and agreeing[0].group else None
        winner = self.book.representative(group) if group else None
        if winner is None or winner.verdict != "unjudged":
            self._emit_evidence(entries, decided.model_copy(update={"accepted": False}), None)
            return
        self.book.accept(winner, f"{EVIDENCE_RULE}: {decided.reason}")
        self.accepted = winner
        self._emit_evidence(entries, decided, winner)

    def _emit_evidence(
        self, entries: list[PoolEntry], decided: EvidenceVerdict, winner: Candidate | None
    ) -> None:
        evidence = self._evidence(entries)
        runs = dict.fromkeys(e.fingerprint for e in evidence if e.fingerprint)
        labels = {f: f"e{k}" for k, f in enumerate(runs, 1)}
        shown: list[dict[str, Any]] = [
            {
                "origin": e.origin,
                "sql": e.sql,
                "status": e.result.status,
                "group": labels[e.fingerprint] if e.fingerprint else None,
                "refusal": e.refusal,
            }
            for e in evidence
        ]
        self.trace.emit(
            EvidenceData(
                rule=EVIDENCE_RULE,
                accepted=decided.accepted,
                candidates=shown,
                group=labels.get(decided.fingerprint) if decided.fingerprint else None,
                candidate=winner.id if winner else None,
                checks=[c.model_dump() for c in decided.checks],
            ),
            node=EVIDENCE_NODE if winner else None,
            summary=("accepted: " if decided.accepted else "not accepted: ") + decided.reason,
        )
