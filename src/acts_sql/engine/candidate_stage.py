"""What happens to a pool of candidates: register, refuse, repair, judge.

The candidate half of the search loop (`acts_sql.engine.search`): a pool is
added to the run's `CandidateBook` (repeats become votes, results become
groups) with the engine's refusals (`acts_sql.engine.trust`); then either the
judge compares the pool's result groups, or a failing candidate goes to
repair (`<id>.fix`: `split_fix_syntax`, or for a query language without it a
`generate_sql` told the error), or the branch is rejected. `TreeSearch` mixes this in;
the names it relies on are declared below.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acts_sql.agent.central_agent import judge_instructions
from acts_sql.agent.consistency import copied_from, endorsement_phrase, fault_phrase
from acts_sql.agent.single_call import raw_correction
from acts_sql.db.executor import Executor
from acts_sql.db.result import ExecResult
from acts_sql.engine.budget import BudgetTracker
from acts_sql.engine.candidates import Candidate, CandidateBook
from acts_sql.engine.events import (
    BudgetScaledData,
    CandidateData,
    FixInsertedData,
    JudgeFailedData,
    JudgementData,
    OverruledData,
    PoolData,
    RawCandidateData,
    UnconfirmedData,
)
from acts_sql.engine.evidence_rule import AGREEMENT
from acts_sql.engine.fingerprint import ResultShape, result_shape
from acts_sql.engine.groups_view import present_groups
from acts_sql.engine.named_names import NamedNames
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.recording import TracedExecutor, TracedLLM
from acts_sql.engine.result_checks import judge_unsupported
from acts_sql.engine.rule_trace import rule_events
from acts_sql.engine.scaled_budget import SearchAllowance
from acts_sql.engine.trace import Trace
from acts_sql.engine.translation import in_task_language
from acts_sql.engine.tree import NodeState, NodeStatus, PlanTree, PlanValidationError, check_nodes
from acts_sql.engine.trust import (
    SAME_ROWS,
    SAME_ROWS_LESS_CONSTANT,
    SAME_SQL,
    TrustContext,
    emit_refusal,
)
from acts_sql.engine.verdict_check import check_rejection
from acts_sql.engine.witness import unwitnessed
from acts_sql.prompts.context import TaskContext, format_path, sql_reply_cap
from acts_sql.protocol import JudgeDecision, PlanNode, ToolName
from acts_sql.sql.languages import unavailable_tools
from acts_sql.sql.query_text import normalize_sql
from acts_sql.tools.base import PathStep, PoolEntry, PoolSettings, ToolOutcome
from acts_sql.tools.pool import FROM_SQL, failure_reason, repairable
from acts_sql.tools.rule_chain import ChainResult, RuleChain

if TYPE_CHECKING:
    from acts_sql.agent.central_agent import CentralAgent

USERS_SQL = "it is the user's SQL, which the issue says does not do what it asks"
RAW_PROSE_TOKENS = 192
"""Room the raw rewrite gets beyond `sql_reply_cap`: its reply is free text around the SQL."""


class BookMemory:
    """The candidate book as the tools' CandidateMemory; the user's SQL counts as rejected
    from the start, and a SQL that failed to run as dropped (a pool told so asks its next
    draws for something else)."""

    def __init__(self, book: CandidateBook, trust: TrustContext, original_sql: str = "") -> None:
        self.book = book
        self.trust = trust
        self.original_sql = original_sql

    def known_result(self, sql: str) -> ExecResult | None:
        known = self.book.known(sql)
        return known.result if known else None

    def rejection(self, sql: str) -> str | None:
        if self.trust.is_original(sql):
            return USERS_SQL
        known = self.book.known(sql)
        if known is None:
            return None
        if known.verdict == "failed":
            return failure_reason(known.result)
        if known.verdict not in ("rejected", "refused"):
            return None
        return known.reason or known.verdict

    def reasons(self) -> list[str]:
        dropped = [
            failure_reason(c.result) if c.verdict == "failed" else c.reason
            for c in self.book.candidates
            if c.verdict in ("failed", "rejected", "refused")
        ]
        return [USERS_SQL, SAME_SQL, SAME_ROWS, SAME_ROWS_LESS_CONSTANT, *(r for r in dropped if r)]

    def dropped(self) -> list[str]:
        users = [self.original_sql] if self.trust.original_key and self.original_sql else []
        return users + [
            c.sql for c in self.book.candidates if c.verdict in ("failed", "rejected", "refused")
        ]


class CandidateStage:
    """Pools, refusals, repairs and judging of one search (mixed into TreeSearch)."""

    executor: Executor
    llm: TracedLLM
    task: TaskContext
    options: CorrectionOptions
    trace: Trace
    budget: BudgetTracker
    trust: TrustContext
    pool: PoolSettings
    book: CandidateBook
    allowance: SearchAllowance
    tree: PlanTree
    accepted: Candidate | None
    min_agreement: int
    named: NamedNames
    witnessed: str | None
    _raw_pending: bool
    _raw_sql: str | None
    _rules_pending: bool
    _users_rules: frozenset[str]
    """The rules whose repair of the user's SQL is a candidate (`_rule_entries`)."""
    _repaired: set[str]
    _anchors: set[str]

    if TYPE_CHECKING:

        def enabled_tools(self) -> list[str]: ...

        def known_tools(self) -> list[str]: ...

        def _agent(self, node: str | None) -> CentralAgent: ...

        def _path_steps(self, node_id: str) -> list[PathStep]: ...

        def _valid_target(self, target: str, rejected: str) -> bool: ...

        def _take_gathered(self) -> tuple[list[PoolEntry], list[PoolEntry]]: ...

        def _agreed_after_pool(self, node: NodeState) -> bool: ...

        def _backtrack(
            self, node: NodeState, decision: JudgeDecision | None, reason: str
        ) -> str | None: ...

    def _write_raw(self) -> None:
        """The raw single-turn rewrite, written first of all the run's calls: its prompt
        shares nothing with the others, so written later it would push their shared
        prefix out of a local model's KV cache. It joins the first pool (`_raw_entries`)."""
        statements, _ = raw_correction(
            self.llm.for_node(None),
            self.task,
            max_tokens=sql_reply_cap(self.task.original_sql) + RAW_PROSE_TOKENS,
        )
        self._raw_sql = ";\n".join(statements) if statements else ""

    def _raw_entries(self, node_id: str | None) -> list[PoolEntry]:
        """The raw rewrite, once per run, as the first candidate of a pool."""
        self._raw_pending = False
        if self._raw_sql is None:  # not written yet (no pool was asked for before)
            self._write_raw()
        sql = self._raw_sql or ""
        if not sql:
            self.trace.emit(
                RawCandidateData(), node=node_id, summary="no ```sql block in the reply"
            )
            return []
        entries = self._raw_entry(node_id, sql, "raw")
        self._anchors.update(self.book.key(e.sql) for e in entries)
        return entries

    def _raw_entry(self, node_id: str | None, written: str, origin: str) -> list[PoolEntry]:
        """A raw reply's SQL as a pool entry: kept in the task's language, and executed
        unless the run knows its result (origin `<origin>:from_sql` when rewritten)."""
        sql = in_task_language(written, self.executor, self.trace, node_id, self.budget)
        known = self.book.known(sql)
        result = (
            known.result
            if known
            else TracedExecutor(
                self.executor, self.trace, node_id, "candidate", budget=self.budget
            ).execute(sql)
        )
        origin = origin if sql == written else f"{origin}:{FROM_SQL}"
        entry = PoolEntry(sql=sql, origin=origin, result=result, known=known is not None)
        return [entry, *self._repaired_reply(node_id, entry)]

    def _repaired_reply(self, node_id: str | None, entry: PoolEntry) -> list[PoolEntry]:
        """A raw reply that fails, repaired by the rule chain as the user's SQL is (origin
        `<origin>:rule:<names>`): one candidate at most, so that a reply never counts twice.
        Not a reply that keeps the user's fault (the user's SQL again, the same error, or a
        fault fixed by a rule that also repaired the user's SQL): its repair would be the
        user's SQL's repair counted a second time."""
        if not self.pool.rules or not repairable(entry.result) or self._keeps_users_fault(entry):
            return []
        state = self._chain_repair(node_id, entry.sql, entry.result, self.task.original_sql)
        if state is None or self._users_rules.intersection(state.repaired_by):
            return []
        origin = f"{entry.origin}:rule:" + "+".join(state.repaired_by)
        return [PoolEntry(sql=state.sql, origin=origin, result=state.result)]

    def _keeps_users_fault(self, entry: PoolEntry) -> bool:
        """Whether a failing reply is the user's SQL again or fails with its error."""
        dialect = self.task.dialect
        if normalize_sql(entry.sql, dialect) == normalize_sql(self.task.original_sql, dialect):
            return True
        original = self.task.original_result
        error = _first_line(entry.result.error)
        return original is not None and error is not None and error == _first_line(original.error)

    def _rule_entries(self, node_id: str | None) -> list[PoolEntry]:
        """The rule chain's repair of the user's SQL, and each guess of the rules that do not
        compose (`RuleChain.guesses`, on the SQL as given), once per run, as candidates of the
        first pool (a mechanical error such as `= NULL` then costs no LLM call to fix)."""
        self._rules_pending = False
        original = self.task.original_result
        if original is None:
            return []
        state = self._chain_repair(node_id, self.task.original_sql, original, None)
        found = [state] if state is not None else []
        found += self._chain(node_id, None).guesses(self.task.original_sql, original)
        self._users_rules = frozenset(rule for s in found for rule in s.repaired_by)
        entries = []
        for repair in found:
            self._anchors.add(self.book.key(repair.sql))
            origin = "rule:" + "+".join(repair.repaired_by)
            entries.append(PoolEntry(sql=repair.sql, origin=origin, result=repair.result))
        return entries

    def _chain_repair(
        self, node_id: str | None, sql: str, result: ExecResult, reference_sql: str | None
    ) -> ChainResult | None:
        """The rule chain's repair of `sql` (its statements traced as "rules"), or None when
        the repair does not run or changes nothing."""
        state = self._chain(node_id, reference_sql).run(sql, result)
        if not state.result.ok or not state.changed(sql, self.task.dialect):
            return None
        return state

    def _chain(self, node_id: str | None, reference_sql: str | None) -> RuleChain:
        """The rule chain on the run's database, its statements traced as "rules"."""
        run = TracedExecutor(self.executor, self.trace, node_id, "rules", budget=self.budget)
        return RuleChain(
            run,
            self.task.facts(),
            self.task.dialect,
            reference_sql=reference_sql,
            on_fire=rule_events(self.trace, node_id),
        )

    def _register_unpooled_raw(self) -> None:
        """A raw rewrite written but never pooled (the search ended first) still counts:
        the run's answer is never worse than the raw single-turn one."""
        head, tail = self._take_gathered()
        if self._raw_pending and self._raw_sql:
            head = self._raw_entries("raw") + head
        if head or tail:
            self._register("raw", head + tail)

    def _judge_on_arrival(self, candidate: Candidate, shape: ResultShape | None) -> None:
        """Refuse a new candidate with the user's SQL or rows; reject one whose rows an
        earlier rejection already covers."""
        refusal = self.trust.refusal(candidate.sql, shape)
        earlier = self.book.rejected_group_of(candidate)
        if refusal:
            self.book.refuse(candidate, refusal)
        elif earlier is not None:
            self.book.reject(
                candidate,
                "returns the same rows as a result already rejected: " + earlier.rejected_reason,
                by_judge=False,
            )

    def _grow_allowance(self, node_id: str) -> None:
        """A result that may be accepted and that independent candidates now agree on grows
        the scaled allowance one round (`acts_sql.engine.scaled_budget`)."""
        for group in self.book.groups.values():
            if group.votes < AGREEMENT or group.rejected_reason:
                continue
            if self.book.representative(group.id).verdict != "unjudged":
                continue
            allowed = self.allowance.grow(group.fingerprint)
            if allowed is not None:
                self.trace.emit(
                    BudgetScaledData(allowed_calls=allowed, group=group.id, votes=group.votes),
                    node=node_id,
                    summary=f"{group.votes} candidates agree on {group.id}: the search may "
                    f"make {allowed} LLM calls in all",
                )

    def _register(self, node_id: str, entries: list[PoolEntry]) -> list[Candidate]:
        """Add a pool to the book; returns its candidates (repeats included), in order."""
        pool: list[Candidate] = []
        for entry in entries:
            existing = self.book.known(entry.sql)
            if existing is not None:
                for _ in range(entry.votes):
                    self.book.add_vote(existing)
                    self._emit_candidate(node_id, existing, entry.origin, duplicate=True)
                if existing not in pool:
                    pool.append(existing)
                continue
            shape = result_shape(entry.sql, entry.result, self.task.dialect)
            candidate = self.book.add(
                node_id, entry.sql, entry.result, shape, origin=entry.origin, votes=entry.votes
            )
            if candidate.runs:
                self._judge_on_arrival(candidate, shape)
            self._emit_candidate(node_id, candidate, entry.origin, duplicate=False)
            for _ in range(entry.votes - 1):
                self.book.duplicates += 1
                self._emit_candidate(node_id, candidate, entry.origin, duplicate=True)
            pool.append(candidate)
        self._grow_allowance(node_id)
        return pool

    def _emit_candidate(
        self, node_id: str, candidate: Candidate, origin: str, *, duplicate: bool
    ) -> None:
        self.trace.emit(
            CandidateData(
                sql=candidate.sql,
                status=candidate.result.status,
                candidate=candidate.id,
                origin=origin,
                duplicate=duplicate,
                group=candidate.group,
                verdict=candidate.verdict,
                reason=candidate.reason,
            ),
            node=node_id,
            summary=f"repeats {candidate.id}"
            if duplicate
            else candidate.result.summary(max_rows=3),
        )
        if not duplicate and candidate.verdict in ("refused", "rejected"):
            emit_refusal(self.trace, node_id, candidate)

    def _after_pool(self, node: NodeState, outcome: ToolOutcome) -> str | None:
        entries = list(outcome.candidates)
        if self._raw_pending:
            entries = self._raw_entries(node.id) + entries
        if self._rules_pending:
            entries = entries + self._rule_entries(node.id)
        head, tail = self._take_gathered()  # what the evidence gate gathered and left
        entries = head + entries + tail
        if not entries:
            return self._backtrack(node, None, outcome.error or "no candidate")
        pool = self._register(node.id, entries)
        self.trace.emit(
            PoolData(
                candidates=[c.id for c in pool],
                groups=list(dict.fromkeys(c.group for c in pool if c.group)),
            ),
            node=node.id,
            summary=_pool_summary(pool),
        )
        eligible = [c for c in pool if c.verdict == "unjudged" and c.runs]
        if eligible and self._agreed_after_pool(node):
            return None  # evidence before judgement: no judge call
        if eligible:
            return self._judge_pool(node, eligible)
        return self._repair_or_reject(node, pool)

    def _repair_or_reject(self, node: NodeState, pool: list[Candidate]) -> str | None:
        """Nothing in the pool may be judged: repair a failing candidate (once), else reject.

        The node's own first failing candidate is repaired (greedy before
        samples, the raw rewrite last), whatever its error; the node itself
        ends `failed`, with that candidate's error as its reason (no candidate
        of it could be judged). A repair node whose candidates fail too is not repaired
        again: the branch is rejected.
        """
        failing = sorted(
            (c for c in pool if repairable(c.result)),
            key=lambda c: _REPAIR_ORDER.get(c.origin.split(":")[0], 9),
        )
        target = next((c for c in failing if self.book.key(c.sql) not in self._repaired), None)
        fixer = self._repair_tool()
        if target is None or fixer is None or _is_repair(node):
            why = _unjudgeable_reason(node, pool, repaired_before=bool(failing) and bool(fixer))
            return self._reject_node(node, why, decision=None)
        self._repaired.add(self.book.key(target.sql))
        node.status, node.reason = NodeStatus.FAILED, target.reason
        fix = PlanNode(
            id=self.tree.fresh_id(f"{node.id}.fix"),
            description=f"repair the failing candidate ({target.result.error_kind or 'error'})",
            tool=fixer,
            input=(
                {"sql": target.sql}
                if fixer == ToolName.SPLIT_FIX_SYNTAX
                else {"feedback": _repair_feedback(target), "repair_of": target.id}
            ),
        )
        self.tree.add_child(node.id, fix, origin="engine")
        self.trace.emit(
            FixInsertedData(child=fix.id, candidate=target.id), node=node.id, summary=target.reason
        )
        return fix.id

    def _repair_tool(self) -> ToolName | None:
        """What repairs a failing candidate: split_fix_syntax; where the query language rules
        it out (PRQL), a generate_sql step told the error (with execution tools on); else
        nothing (the branch is rejected)."""
        enabled = self.enabled_tools()
        if ToolName.SPLIT_FIX_SYNTAX in enabled:
            return ToolName.SPLIT_FIX_SYNTAX
        ruled_out = ToolName.SPLIT_FIX_SYNTAX in unavailable_tools(self.task.dialect)
        if ruled_out and self.options.execution_tools and ToolName.GENERATE_SQL in enabled:
            return ToolName.GENERATE_SQL
        return None

    def _judge_pool(self, node: NodeState, eligible: list[Candidate]) -> str | None:
        group_ids = [c.group for c in eligible if c.group]
        view = present_groups(
            self.book,
            group_ids,
            original_sql=self.task.original_sql,
            original_shape=self.trust.original_shape,
            dialect=self.task.dialect,
            show_results=self.options.execution_tools,
        )
        decision, error = self._judge(node, view.text, list(view.labels))
        if decision is None:
            return self._reject_node(node, f"judge failed: {error}", decision=None, judged=False)
        chosen = view.group_of(decision.group) if decision.verdict == "accept" else None
        if decision.verdict == "accept" and chosen is None:
            chosen = next(iter(view.labels.values()))  # "accept" without a group: the largest
        fault = self._unfounded(decision, node.id, view.text) if chosen is not None else None
        if chosen is not None and fault is None and self.trust.generated:
            group = self.book.groups[chosen]  # text-to-SQL: a check besides the judge
            fault = judge_unsupported(
                self.task.question, self.book.representative(chosen).result, group.votes
            ) or self._unwitnessed(chosen)
        if chosen is not None and fault is None:
            fault = self._drops_names(chosen)
        if chosen is not None and fault is None and self._too_few_votes(chosen):
            return self._unconfirmed(node, chosen, decision, view.labels)
        if chosen is not None and fault is None:
            winner = self.book.representative(chosen)
            self.book.accept(winner, decision.reason)
            node.status, node.reason = NodeStatus.ACCEPTED, decision.reason
            node.candidate_sql = winner.sql
            self.accepted = winner
            self.trace.emit(
                JudgementData(
                    verdict="accept",
                    by="agent",
                    sql=winner.sql,
                    group=chosen,
                    candidate=winner.id,
                    labels=view.labels,
                ),
                node=node.id,
                summary=decision.reason,
            )
            return None
        if fault is not None:
            reason = f"the judge accepted, but {fault}: {decision.reason}"
            return self._reject_node(node, reason, decision=None, judged=False, labels=view.labels)
        checked = self._reject_groups(node, eligible, decision.reason, view.labels)
        return self._reject_node(
            node, decision.reason, decision=decision, labels=view.labels, checked=checked
        )

    def _unwitnessed(self, group_id: str) -> str | None:
        """Text-to-SQL mode: why the group's result may not be accepted for want of the
        witness (`acts_sql.engine.witness`), or None."""
        witnessed = self.book.groups[group_id].fingerprint == self.witnessed
        return unwitnessed(self.trust.generated, witnessed)

    def _reject_groups(
        self, node: NodeState, eligible: list[Candidate], reason: str, labels: dict[str, str]
    ) -> dict[str, str]:
        """The judge rejected every group shown. A group's rejection stands when its rows
        bear out a claim of the reason (`verdict_check`; it then drops in the ranking), or
        when the group is no majority; a majority group's rejection without such a claim is
        overruled: its candidates stay unjudged and ranked on their support, and the trace
        gets an `overruled` event. Returns group id -> the claim, for the groups checked."""
        checked: dict[str, str] = {}
        for group_id in labels.values():
            rep = self.book.representative(group_id)
            claim = check_rejection(reason, rep.result, rep.shape)
            if claim is None and self.book.is_majority(group_id):
                self._overrule(node, group_id, reason, labels)
                continue
            if claim is not None:
                checked[group_id] = claim
            for candidate in eligible:  # groups beyond the ones shown stay unjudged
                if candidate.group == group_id:
                    self.book.reject(candidate, reason)
            self.book.reject_group(group_id, reason, checked=claim or "")
        return checked

    def _overrule(
        self, node: NodeState, group_id: str, reason: str, labels: dict[str, str]
    ) -> None:
        self.book.overrule(group_id, reason)
        votes, total = self.book.support(group_id), self.book.running_votes()
        why = (
            f"{votes} of the {total} vote(s) for results that run agree on this result, and "
            "the reason names no value or row count that its rows bear out"
        )
        self.trace.emit(
            OverruledData(
                group=group_id, votes=votes, total=total, reason=reason, why=why, labels=labels
            ),
            node=node.id,
            summary=f"rejection of {group_id} overruled: {why}",
        )
        settled = self.allowance.settle(
            f"the judge rejected {group_id}, the result most candidates agree on, and was "
            "overruled: it stands"
        )
        if settled is not None:
            self.trace.emit(
                BudgetScaledData(allowed_calls=settled, group=group_id, votes=votes),
                node=node.id,
                summary=f"{group_id} stands: the search makes no more LLM calls ({settled} in all)",
            )

    def _unfounded(self, decision: JudgeDecision, node_id: str, shown: str) -> str | None:
        """Why an "accept" is no acceptance: its reason says the candidate is wrong, or it
        vouches for the user's SQL instead of the candidate, or it is mostly copied from what
        the judge was shown (the issue, its instructions, the groups) or from a reason the
        judge rejected another result with
        (`acts_sql.agent.consistency`); None when the reason may stand."""
        fault = fault_phrase(decision.reason)
        if fault is not None:
            return f"its reason says the candidate is wrong ({fault!r})"
        praise = endorsement_phrase(decision.reason)
        if praise is not None:
            return (
                f"its reason vouches for the user's SQL ({praise!r}), which is never the "
                "answer, so it says nothing of the candidate"
            )
        sources = {
            "the issue": self.task.question,
            "the judge's instructions": judge_instructions().replace("$node", node_id),
            "the groups shown": shown,
        }
        for group in self.book.groups.values():
            if group.rejected_reason:
                sources[f"the reason group {group.id} was rejected with"] = group.rejected_reason
            for i, overruled in enumerate(group.overruled, start=1):
                sources[f"a reason group {group.id} was rejected with (overruled, {i})"] = overruled
        copied = copied_from(decision.reason, sources)
        if copied is None:
            return None
        source, share = copied
        return (
            f"{share:.0%} of its reason is copied (most of it from {source}), "
            "so it says nothing of the candidate"
        )

    def _drops_names(self, group_id: str) -> str | None:
        """Why the SQL a judge's "accept" would return may not be accepted: it drops a name
        the question and the user's SQL both give (`acts_sql.engine.named_names`); or None."""
        check = self.named.check([self.book.representative(group_id).sql])
        if check.verdict != "fail":
            return None
        return f"a check fails ({check.name}: {check.detail})"

    def _too_few_votes(self, group_id: str) -> bool:
        return self.book.groups[group_id].votes < self.min_agreement

    def _unconfirmed(
        self, node: NodeState, group_id: str, decision: JudgeDecision, labels: dict[str, str]
    ) -> str | None:
        """The judge chose a result that too few candidates agree on: not yet an acceptance.

        Its candidates keep the judge's favour (they rank first if nothing is
        accepted) and stay open: when later candidates return the same rows,
        the group is shown again with more votes. The search goes on elsewhere.
        """
        for candidate in self.book.members(group_id):
            candidate.judge = "accept"
        votes = self.book.groups[group_id].votes
        reason = (
            f"the judge accepted a result only {votes} candidate(s) agree on (at least "
            f"{self.min_agreement} needed to accept): {decision.reason}"
        )
        self.trace.emit(
            UnconfirmedData(group=group_id, votes=votes, needed=self.min_agreement, labels=labels),
            node=node.id,
            summary=reason,
        )
        return self._reject_node(node, reason, decision=None, labels=labels)

    def _reject_node(
        self,
        node: NodeState,
        reason: str,
        *,
        decision: JudgeDecision | None,
        judged: bool = True,
        labels: dict[str, str] | None = None,
        checked: dict[str, str] | None = None,
    ) -> str | None:
        node.status, node.reason = NodeStatus.REJECTED, reason
        self.trace.emit(
            JudgementData(
                verdict="reject",
                by="agent" if decision is not None else "engine",
                sql=node.candidate_sql,
                backtrack_to=decision.backtrack_to if decision else None,
                judged=judged,
                labels=labels or {},
                **({"checked": checked} if checked else {}),
            ),
            node=node.id,
            summary=reason,
        )
        return self._backtrack(node, decision, reason)

    def _judge(
        self, node: NodeState, groups: str, labels: list[str]
    ) -> tuple[JudgeDecision | None, str | None]:
        targets = [n.id for n in self.tree.nodes.values() if self._valid_target(n.id, node.id)]

        def validate(decision: JudgeDecision) -> str | None:
            target = decision.backtrack_to
            if decision.verdict == "reject" and target is not None and target not in targets:
                return f"backtrack_to {target!r} is not an executed node; executed nodes: {targets}"
            if decision.new_nodes:
                try:
                    check_nodes(decision.new_nodes, self.known_tools(), taken=self.tree.nodes)
                except PlanValidationError as exc:
                    return f"new_nodes: {exc}"
            return None

        reply = self._agent(node.id).judge(
            plan=self.tree.to_prompt_lines(node.id),
            node_id=node.id,
            path=format_path(self._path_steps(node.id)),
            groups=groups,
            labels=labels,
            targets=targets,
            validate=validate,
        )
        if reply.value is None:
            self.trace.emit(
                JudgeFailedData(reason=reply.error), node=node.id, summary=reply.error or ""
            )
        return reply.value, reply.error


_REPAIR_ORDER = {"greedy": 0, "retry": 1, "sample": 2, "repair": 3, "rule": 4, "raw": 5}


def _first_line(error: str | None) -> str | None:
    """An error's first line, without the statement text an engine may quote below it."""
    line = (error or "").strip().splitlines()[:1]
    return line[0] if line else None


def _is_repair(node: NodeState) -> bool:
    """An engine-inserted repair step (whose own failures are not repaired again)."""
    return node.tool == ToolName.SPLIT_FIX_SYNTAX or "repair_of" in node.input


def _repair_feedback(candidate: Candidate) -> str:
    """What a generate_sql repair step is told: the failing query and its error."""
    return (
        f"This candidate fails: {' '.join(candidate.sql.split())}\n"
        f"Its error: {candidate.reason}\n"
        "Write it again without that error; keep what it does right."
    )


def _unjudgeable_reason(node: NodeState, pool: list[Candidate], *, repaired_before: bool) -> str:
    """Why a pool had nothing for the judge: refusals, repeats, or nothing ran."""
    ran = [c for c in pool if c.runs]
    if ran:
        said = {"refused": "refused", "rejected": "already rejected"}
        return "; ".join(
            sorted({f"{c.id} {said.get(c.verdict, c.verdict)}: {c.reason}" for c in ran})
        )
    first = (pool[0].reason if pool else "") or "no candidate"
    if _is_repair(node):
        return f"the repair does not run either ({first})"
    tried = "; its repair was already tried" if repaired_before else ""
    return f"no candidate runs ({first}){tried}"


def _pool_summary(pool: list[Candidate]) -> str:
    runs = sum(1 for c in pool if c.runs)
    refused = sum(1 for c in pool if c.verdict in ("refused", "rejected"))
    groups = len({c.group for c in pool if c.group})
    return (
        f"{len(pool)} distinct candidate(s): {runs} run, {len(pool) - runs} fail, "
        f"{refused} refused or already rejected; {groups} result group(s)"
    )
