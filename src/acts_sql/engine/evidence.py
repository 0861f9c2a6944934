"""The evidence gate: stop before any plan when independent candidates agree.

Run by the search (`acts`, `linear`) after the raw rewrite is written and before the plan
is asked for. It gathers up to four kinds of independent candidates, cheaply:

1. the rule chain's repair of the user's SQL (no LLM call; `CandidateStage._rule_entries`);
2. the raw single-turn rewrite (one call, already written first; `_raw_entries`), and when it
   fails with a fault of its own, its rule-chain repair (`CandidateStage._repaired_reply`,
   origin ``raw:rule:<rules>``: an anchor as the raw rewrite is; samples and the witness are
   repaired the same way);
3. text-to-SQL mode only: the witness, a generation from the question alone that has not
   seen the first query (one call; `acts_sql.engine.witness`);
4. only while these do not agree, and one of them returns a result that may be accepted:
   raw samples at the pool's temperature (one call each; at most `MAX_SAMPLES`, at most
   K - 1 of a pool of K, none at temperature 0, never the last call of the budget, and
   none in text-to-SQL mode, where they could not change the verdict). When the user's SQL
   failed, a sample's prompt also quotes the database's error (the raw rewrite's does not:
   it stays the `raw` method's call, byte for byte), so that a sample can confirm or
   contradict a rule repair of that error instead of repeating the failing SQL. When the
   user's SQL runs and the issue says its rows are wrong, the sample's prompt shows those
   rows instead (`single_call.rows_note`), for the same reason.

Before all of it, before any model call, a lexical repair of the user's SQL that fails,
or a certain one of SQL that fails or whose rows the issue says are wrong, is accepted alone
when the checks let it stand (`_accept_rule_repair`, `evidence_rule.LEXICAL_RULE` and
`CERTAIN_RULE`).

The rule itself is `acts_sql.engine.evidence_rule`; when it accepts nothing, the gathered
candidates also scale the search's budget (`acts_sql.engine.scaled_budget`).

The rule runs again after each pool of the search, before the judge is asked
(`EvidenceStage._agreed_after_pool`): evidence before judgement. The gathered candidates
joined the first pool; a result the raw rewrite or the rule repair returns and that the
pools' samples now agree on is accepted there, at the pool's node, without a judge call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from acts_sql.agent.single_call import raw_correction, text_to_sql
from acts_sql.db.result import ExecResult
from acts_sql.engine.budget import BudgetTracker
from acts_sql.engine.candidate_stage import RAW_PROSE_TOKENS
from acts_sql.engine.candidates import Candidate, CandidateBook
from acts_sql.engine.events import EvidenceData
from acts_sql.engine.evidence_rule import (
    AGREEMENT,
    CERTAIN_RULE,
    EVIDENCE_NODE,
    EVIDENCE_RULE,
    LEXICAL_RULE,
    MAX_SAMPLES,
    SAMPLE_ORIGIN,
    UNANIMOUS,
    Evidence,
    EvidenceVerdict,
    anchors,
    is_certain,
    is_lexical,
    may_accept,
    repair_verdict,
    verdict,
)
from acts_sql.engine.fingerprint import result_shape
from acts_sql.engine.named_names import NamedNames
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.recording import TracedLLM
from acts_sql.engine.scaled_budget import SearchAllowance, scale
from acts_sql.engine.trace import Trace
from acts_sql.engine.tree import NodeState, NodeStatus
from acts_sql.engine.trust import TrustContext
from acts_sql.engine.witness import WITNESS_ORIGIN
from acts_sql.prompts.context import TaskContext, sql_reply_cap
from acts_sql.tools.base import PoolEntry, PoolSettings

FAILED = ("error", "blocked")
"""Statuses of a user's SQL the lexical rule may repair (`_accept_rule_repair`)."""
WITNESS_SEED = 1
"""The witness's sampling seed (the raw samples use 1, 2, ... with another prompt)."""

__all__ = [
    "AGREEMENT",
    "CERTAIN_RULE",
    "EVIDENCE_NODE",
    "EVIDENCE_RULE",
    "LEXICAL_RULE",
    "MAX_SAMPLES",
    "Evidence",
    "EvidenceStage",
    "EvidenceVerdict",
    "anchors",
    "verdict",
]


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
    allowance: SearchAllowance
    _raw_pending: bool
    _rules_pending: bool
    _gathered: tuple[list[PoolEntry], list[PoolEntry]]
    named: NamedNames
    witnessed: str | None
    _anchors: set[str]
    """Book keys of the candidates an acceptance may rest on: the raw rewrite (and its
    repair) and the rule chain's repair of the user's SQL."""

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
        if self.trust.generated:
            head.extend(self._witness_entries())
        tail = self._gathered[1]  # the rule chain's repair, made before any call
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
            self._emit_evidence(head + tail, decided, None, allowed=self._scale(head + tail))
        return decided.accepted

    def _accept_rule_repair(self) -> str | None:
        """`LEXICAL_RULE` or `CERTAIN_RULE`, before any model call: the rule, when it accepted the
        rule chain's repair of the user's SQL (gathered by `_rule_entries`). Only in correction
        mode, with the gate and the option on. A lexical repair: when the user's SQL fails with
        the database's error or was blocked (a function the read-only guard does not know:
        another dialect's; not when it timed out: it was valid) and lexical rules alone made
        it. A certain repair: when, besides, the user's SQL runs and the issue says its rows
        are wrong (`may_accept`), and certain rules made it, with lexical ones or alone."""
        if not (self.options.evidence_gate and self.options.lexical_repairs):
            return None
        original = self.task.original_result
        if self.trust.generated or original is None:
            return None
        kinds: list[tuple[str, Callable[[str], bool]]] = [(CERTAIN_RULE, is_certain)]
        if original.status in FAILED:
            kinds.insert(0, (LEXICAL_RULE, is_lexical))
        elif not (original.ok and may_accept(self.task, self.trust)):
            return None
        for rule, made_by in kinds:
            repairs = [e for e in self._gathered[1] if made_by(e.origin)][:1]
            if not repairs:
                continue
            decided = repair_verdict(
                self._evidence(repairs)[0], question=self.task.question, named=self.named, rule=rule
            )
            if not decided.accepted:
                return None
            self._gathered = ([], [])
            self._accept_evidence(repairs, decided, rule=rule)
            return rule if self.accepted is not None else None
        return None

    def _agreed_after_pool(self, node: NodeState) -> bool:
        """The gate's rule once more, on every candidate of the run, after a pool and before
        its judgement (see the module doc): True when it accepted one (the node is accepted
        and no judge is asked). Not in text-to-SQL mode, where the judge decides with the
        witness, nor when the gate is off or its precondition does not hold."""
        if not self.options.evidence_gate or self.trust.generated:
            return False
        if not may_accept(self.task, self.trust):
            return False
        evidence = self._book_evidence()
        decided = verdict(
            evidence,
            question=self.task.question,
            generated=False,
            named=self.named,
            unanimous=UNANIMOUS if self._slip() else None,
            failed=sum(c.votes for c in self.book.candidates if not c.runs),
            slip=self._slip(),
        )
        group = next(
            (g for g in self.book.groups.values() if g.fingerprint == decided.fingerprint), None
        )
        if not decided.accepted or group is None:
            return False
        winner = self._voter(group.id)
        if winner is None:
            return False
        reason = f"{EVIDENCE_RULE}: {decided.reason}"
        self.book.accept(winner, reason)
        node.status, node.reason, node.candidate_sql = NodeStatus.ACCEPTED, reason, winner.sql
        self.accepted = winner
        self.trace.emit(
            EvidenceData(
                rule=EVIDENCE_RULE,
                accepted=True,
                candidates=[
                    {
                        "candidate": c.id,
                        "origin": c.origin,
                        "votes": c.votes,
                        "status": c.result.status,
                        "group": c.group,
                        "anchor": self.book.key(c.sql) in self._anchors,
                        "refusal": c.reason
                        if c.verdict in ("refused", "rejected")
                        else self.named.unnamed(c.sql),
                    }
                    for c in self.book.candidates
                ],
                group=group.id,
                candidate=winner.id,
                checks=[c.model_dump() for c in decided.checks],
            ),
            node=node.id,
            summary=f"accepted after the pool, before its judgement: {decided.reason}",
        )
        return True

    def _voter(self, group_id: str) -> Candidate | None:
        """The candidate an acceptance of the group returns: its open member with the most
        votes (earliest on a tie) among those with a vote (`NamedNames.unnamed`)."""
        voters = [
            c
            for c in self.book.members(group_id)
            if c.verdict == "unjudged" and self.named.unnamed(c.sql) is None
        ]
        return max(voters, key=lambda c: (c.votes, -c.order)) if voters else None

    def _book_evidence(self) -> list[Evidence]:
        """Every vote of the run's candidates that ran, as the rule sees it: a candidate the
        engine refused or the judge rejected (its rejection standing) is refused, one that
        reads a table nobody named has no vote (`unnamed`), one that is no anchor is
        `pooled`."""
        out = []
        for candidate in self.book.candidates:
            if candidate.shape is None or not candidate.runs:
                continue
            group = self.book.groups[candidate.group] if candidate.group else None
            refusal = candidate.reason if candidate.verdict in ("refused", "rejected") else None
            rejected = candidate.verdict == "rejected"
            if refusal is None and group is not None and group.rejected_reason:
                refusal = f"the judge rejected its rows: {group.rejected_reason}"
                rejected = True
            vote = Evidence(
                origin=candidate.origin,
                sql=candidate.sql,
                result=candidate.result,
                fingerprint=candidate.shape.fingerprint,
                refusal=refusal,
                rejected=rejected,
                unnamed=self.named.unnamed(candidate.sql),
                pooled=self.book.key(candidate.sql) not in self._anchors,
            )
            out.extend([vote] * candidate.votes)
        return out

    def _scale(self, entries: list[PoolEntry]) -> int | None:
        """Scale the search's calls to the gathered candidates (`scaled_budget`); the calls
        the run may make in all, None when the option is off."""
        if not self.options.scaled_budget:
            return None
        original = self.task.original_result
        fails = not self.trust.generated and original is not None and not original.ok
        evidence = self._evidence(entries)
        scaling = scale(
            evidence, self.task.question, user_sql_fails=fails, pool_size=self.pool.size
        )
        votes = Counter(e.fingerprint for e in evidence if e.fingerprint)
        return self.allowance.start(scaling, {f for f, n in votes.items() if n >= AGREEMENT})

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
                    unnamed=self.named.unnamed(entry.sql),
                )
            )
        return out

    def _verdict(self, entries: list[PoolEntry]) -> EvidenceVerdict:
        return verdict(
            self._evidence(entries),
            question=self.task.question,
            generated=self.trust.generated,
            named=self.named,
            slip=self._slip(),
        )

    def _slip(self) -> bool:
        """Whether the user's SQL runs (correction mode): see `verdict`'s `slip`."""
        return not self.trust.generated and self.trust.original_runs

    def _may_sample(self, drawn: int, entries: list[PoolEntry]) -> bool:
        """Another raw sample: only when the raw rewrite or the rule repair returns a result
        that may be accepted (samples alone never are), within MAX_SAMPLES and the pool's
        K - 1, at a temperature above 0, and leaving at least one call of the budget. Never
        in text-to-SQL mode: there an acceptance needs the witness and an anchor, and a
        sample is neither, so it could not change the verdict."""
        if self.trust.generated:
            return False
        if drawn >= min(MAX_SAMPLES, self.pool.size - 1) or self.pool.temperature <= 0:
            return False
        if not anchors(self._evidence(entries)):
            return False
        return self._spares_the_last_call()

    def _spares_the_last_call(self) -> bool:
        """Whether one more gathering call leaves at least one call of the budget."""
        return self.budget.llm_calls + 2 <= self.budget.call_limit

    def _witness_entries(self) -> list[PoolEntry]:
        """Text-to-SQL mode: the witness (`acts_sql.engine.witness`), one generation from the
        question alone at the pool's temperature; none at temperature 0 (it would be the
        first query again) or when it would take the budget's last call."""
        if self.pool.temperature <= 0 or not self._spares_the_last_call():
            return []
        unseen = self.task.model_copy(update={"original_sql": "", "original_result": None})
        reply = text_to_sql(
            self.llm.for_node(None),
            unseen,
            retries=0,
            temperature=self.pool.temperature,
            seed=WITNESS_SEED,
        )
        if reply.value is None or not reply.value.sql.strip():
            return []
        entries = self._raw_entry(None, reply.value.sql.strip().rstrip(";"), WITNESS_ORIGIN)
        shape = result_shape(entries[0].sql, entries[0].result, self.task.dialect)
        self.witnessed = shape.fingerprint if shape else None
        return entries

    def _raw_sample(self, k: int) -> list[PoolEntry]:
        """The raw prompt once more, at the pool's temperature with seed `k`, told the
        database's error when the user's SQL failed with one (`_user_error`), or the rows it
        returns when it runs and the issue says they are wrong (`_user_rows`)."""
        statements, _ = raw_correction(
            self.llm.for_node(None),
            self.task,
            max_tokens=sql_reply_cap(self.task.original_sql) + RAW_PROSE_TOKENS,
            temperature=self.pool.temperature,
            seed=k,
            error=self._user_error(),
            rows=self._user_rows(),
            prose_after=False,
        )
        if not statements:
            return []
        return self._raw_entry(None, ";\n".join(statements), SAMPLE_ORIGIN)

    def _user_error(self) -> str | None:
        """The database's own error for the user's SQL; None when it ran, was not sent or
        not answered (blocked, timed out), or there is no user's SQL."""
        original = self.task.original_result
        if self.trust.generated or original is None or original.status != "error":
            return None
        return original.error

    def _user_rows(self) -> ExecResult | None:
        """The user's SQL's result when it runs and the issue says its rows are wrong (a
        silent slip); None otherwise, and in text-to-SQL mode."""
        original = self.task.original_result
        if self.trust.generated or original is None or not original.ok:
            return None
        return original if may_accept(self.task, self.trust) else None

    def _accept_evidence(
        self, entries: list[PoolEntry], decided: EvidenceVerdict, *, rule: str = EVIDENCE_RULE
    ) -> None:
        pool = self._register(EVIDENCE_NODE, entries)
        agreeing = [c for c in pool if c.shape and c.shape.fingerprint == decided.fingerprint]
        group = agreeing[0].group if agreeing and agreeing[0].group else None
        winner = self._voter(group) if group else None
        if winner is None:
            refused = decided.model_copy(update={"accepted": False})
            self._emit_evidence(entries, refused, None, rule=rule)
            return
        self.book.accept(winner, f"{rule}: {decided.reason}")
        self.accepted = winner
        self._emit_evidence(entries, decided, winner, rule=rule)

    def _emit_evidence(
        self,
        entries: list[PoolEntry],
        decided: EvidenceVerdict,
        winner: Candidate | None,
        allowed: int | None = None,
        *,
        rule: str = EVIDENCE_RULE,
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
                "refusal": e.refusal or e.unnamed,
            }
            for e in evidence
        ]
        self.trace.emit(
            EvidenceData(
                rule=rule,
                accepted=decided.accepted,
                candidates=shown,
                group=labels.get(decided.fingerprint) if decided.fingerprint else None,
                candidate=winner.id if winner else None,
                checks=[c.model_dump() for c in decided.checks],
                allowed_calls=allowed,
                scaled=self.budget.allowance_reason if allowed is not None else None,
            ),
            node=EVIDENCE_NODE if winner else None,
            summary=("accepted: " if decided.accepted else "not accepted: ")
            + decided.reason
            + (f"; the search may make {allowed} LLM calls in all" if allowed is not None else ""),
        )
