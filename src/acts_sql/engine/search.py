"""The search loop: the paper's Algorithm 1 (method `acts`) and its linear variant.

1. The agent writes a plan; the cursor names the node to run. Nodes a weak
   planner lists without links are chained in the order given.
2. Run the node's tool. A `detect_ambiguities` result expands the node: one
   child `<id>.<k>` (a `generate_sql` with that hypothesis) per distinct
   interpretation.
3. A `generate_sql` (or `split_fix_syntax`) node yields a pool of candidates
   (`acts_sql.tools.pool`), each executed at once; the first pool of the run
   also holds the raw single-turn rewrite. The engine registers them
   (`CandidateBook`: repeats become votes, results become groups) and refuses
   what may never be accepted (`acts_sql.engine.trust`). Then:
   - nothing ran: an automatic `<id>.fix` child (`split_fix_syntax`) repairs
     the first failing candidate, whatever the error; a repair that fails
     too is not built upon: the branch is rejected;
   - everything that ran was refused or repeats a rejected result: the
     branch is rejected without asking the judge;
   - otherwise the judge sees the result groups side by side and accepts one
     (ending the search, unless its reason says the candidate is wrong) or
     rejects them all: the branch is pruned with the reason and the search
     backtracks to the executed node the agent names (or, failing that, the
     nearest ancestor with untried branches), grafting any new nodes.
4. Otherwise go to the node's children: one, go on; several, the agent
   chooses (an invalid choice follows the first untried child at no extra
   call; linear: the first); none, the engine adds a `generate_sql` leaf.
5. When every branch is exhausted with budget left, the agent re-plans once
   from the root, told why the pruned branches failed.

The linear method runs the same tools but never branches (only the first
interpretation becomes a child) and never rolls back (a rejection appends a
new attempt under the rejected node, up to `linear_retries`).

Budgets bound everything; when nothing is accepted the best candidate is
returned (`acts_sql.engine.selection`).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from acts_sql.agent.baselines import raw_correction
from acts_sql.agent.central_agent import CentralAgent
from acts_sql.agent.consistency import fault_phrase
from acts_sql.db.executor import Executor
from acts_sql.db.result import ExecResult
from acts_sql.engine.budget import BudgetExhaustedError, BudgetTracker
from acts_sql.engine.candidates import Candidate, CandidateBook
from acts_sql.engine.fingerprint import result_shape
from acts_sql.engine.groups_view import present_groups
from acts_sql.engine.options import CorrectionOptions, Method
from acts_sql.engine.selection import FinalChoice, final_choice
from acts_sql.engine.trace import Trace
from acts_sql.engine.traced import TracedExecutor, TracedLLM
from acts_sql.engine.tree import (
    EXECUTED,
    NodeState,
    NodeStatus,
    PlanTree,
    PlanValidationError,
    check_nodes,
    check_plan,
    repair_plan,
)
from acts_sql.engine.trust import TrustContext
from acts_sql.errors import LLMError
from acts_sql.protocol import AmbiguityReport, JudgeDecision, Plan, PlanNode, ToolName
from acts_sql.tools.base import (
    PathStep,
    PoolEntry,
    PoolSettings,
    SampleLedger,
    ToolCall,
    ToolEnv,
    ToolOutcome,
)
from acts_sql.tools.context import TaskContext, format_path
from acts_sql.tools.detect_ambiguities import branching_readings
from acts_sql.tools.pool import repairable
from acts_sql.tools.registry import TOOLS

EXECUTION_TOOLS = {ToolName.INSPECT_COLUMNS, ToolName.RUN_SQL, ToolName.SPLIT_FIX_SYNTAX}
FEEDBACK_CHARS = 1200
RAW_MAX_TOKENS = 1024


class SearchOutcome(BaseModel):
    accepted: Candidate | None = None
    best: Candidate | None = None
    returns_original: bool = False
    """Nothing better than the user's SQL: it comes back unchanged, not accepted."""
    stop_reason: str
    tree: list[dict[str, Any]] = []
    candidates: list[Candidate] = []
    groups: list[dict[str, Any]] = []
    statements: list[str] | None = None
    """The final SQL as the method wrote it, statement by statement (`raw`: one per ```sql
    block, as the official baseline submits them); None: the final SQL split by the dialect."""


class _BookMemory:
    """The candidate book as the tools' CandidateMemory; the user's SQL counts as rejected
    from the start (a pool told so asks its next draws for something else)."""

    def __init__(self, book: CandidateBook, trust: TrustContext) -> None:
        self.book = book
        self.trust = trust

    def known_result(self, sql: str) -> ExecResult | None:
        known = self.book.known(sql)
        return known.result if known else None

    def rejection(self, sql: str) -> str | None:
        if self.trust.is_original(sql):
            return "it is the user's SQL, which the issue says does not do what it asks"
        known = self.book.known(sql)
        if known is None or known.verdict not in ("rejected", "refused"):
            return None
        return known.reason or known.verdict


class TreeSearch:
    """One run of the tree (or linear) search over one task."""

    def __init__(
        self,
        *,
        executor: Executor,
        llm: TracedLLM,
        task: TaskContext,
        options: CorrectionOptions,
        trace: Trace,
        budget: BudgetTracker,
        trust: TrustContext,
        pool: PoolSettings,
    ) -> None:
        self.executor = executor
        self.llm = llm
        self.task = task
        self.options = options
        self.trace = trace
        self.budget = budget
        self.trust = trust
        self.pool = pool
        self.linear = options.method == Method.LINEAR
        self.book = CandidateBook(task.dialect)
        self.tree = PlanTree()
        self.accepted: Candidate | None = None
        self._linear_retries = options.linear_retries
        self._regenerations: dict[str, int] = {}
        self._raw_pending = options.raw_candidate
        self._replanned = False
        self._repaired: set[str] = set()
        self.draws = SampleLedger()
        self.min_agreement = options.min_agreement or (2 if pool.size > 1 else 1)

    # ----------------------------------------------------------------- setup
    def enabled_tools(self) -> list[str]:
        names = list(TOOLS)
        if not self.options.execution_tools:
            names = [n for n in names if n not in EXECUTION_TOOLS]
        if not self.options.ambiguity_detection:
            names = [n for n in names if n != ToolName.DETECT_AMBIGUITIES]
        return names

    def _agent(self, node: str | None) -> CentralAgent:
        return CentralAgent(
            self.llm.for_node(node), self.task, json_retries=self.options.json_retries
        )

    # ------------------------------------------------------------------ loop
    def run(self) -> SearchOutcome:
        try:
            self.tree = self._make_plan()
            cursor: str | None = self.tree.root
            while cursor is not None:
                while cursor is not None:
                    cursor = self._step(cursor)
                cursor = None if self.accepted else self._replan()
            stop = "accepted" if self.accepted else "no branch left to explore"
        except BudgetExhaustedError as exc:
            stop = str(exc)
            self.trace.emit("budget_exhausted", summary=stop, which=exc.which)
        except LLMError as exc:
            stop = f"LLM backend failed: {exc}"
            self.trace.emit("llm_failed", summary=stop)
        return self.outcome(stop)

    def outcome(self, stop: str) -> SearchOutcome:
        choice = final_choice(self.book, self.accepted, self.task.original_result)
        if choice.note:
            stop = f"{stop}; {choice.note}"
        return SearchOutcome(
            accepted=self.accepted,
            best=choice.candidate,
            returns_original=choice.returns_original,
            stop_reason=stop,
            tree=self.tree.snapshot(),
            candidates=list(self.book.candidates),
            groups=[g.model_dump() for g in self.book.groups.values()],
        )

    def _make_plan(self, previous: str = "", fallback: Plan | None = None) -> PlanTree:
        enabled = self.enabled_tools()

        def validate(plan: Plan) -> str | None:
            """Re-ask only when not even a repaired plan is left (see `repair_plan`)."""
            try:
                check_plan(repair_plan(plan, TOOLS)[0], TOOLS)
            except PlanValidationError as exc:
                return str(exc)
            return None

        reply = self._agent(None).plan(enabled, validate, previous)
        if reply.value is not None:
            repaired, repairs = repair_plan(reply.value, TOOLS)
            tree = PlanTree.from_plan(repaired, TOOLS)
            chained = [n.id for n in tree.nodes.values() if n.origin == "plan:chained"]
            summary = f"{len(tree)} node(s)"
            if chained:
                summary += f", {len(chained)} listed without links chained in order"
            if repairs:
                summary += f", {len(repairs)} flaw(s) repaired"
            self.trace.emit(
                "plan",
                summary=summary,
                plan=reply.value.model_dump(),
                attempts=reply.attempts,
                chained=chained,
                repairs=repairs,
            )
            return tree
        fallback = fallback or default_plan(enabled)
        self.trace.emit(
            "plan_failed",
            summary=f"no usable plan ({reply.error}); using the default plan",
            reason=reply.error,
            plan=fallback.model_dump(),
        )
        return PlanTree.from_plan(fallback, TOOLS)

    def _replan(self) -> str | None:
        """Once per run, with budget left: a new plan under the root, told what failed."""
        if self._replanned or self.linear or not self.options.replan or self.tree.root is None:
            return None
        if self.budget.llm_calls + 2 > self.budget.budget.max_llm_calls:
            return None
        self._replanned = True
        lessons = "\n".join(
            f"- {n.id} ({n.description or n.tool}): {n.reason}"
            for n in self.tree.nodes.values()
            if n.status == NodeStatus.REJECTED and n.reason
        )
        self.trace.emit(
            "replan", summary="every branch is exhausted; planning again", lessons=lessons
        )
        retry = Plan(
            cursor="n1",
            nodes=[
                PlanNode(
                    id="n1",
                    description="write the candidate again, told why earlier ones failed",
                    tool=ToolName.GENERATE_SQL,
                    input={"feedback": self._feedback()},
                )
            ],
        )
        fresh_tree = self._make_plan(previous="\n" + lessons if lessons else "", fallback=retry)
        fresh = Plan(
            cursor=fresh_tree.root or "n1",
            nodes=[
                PlanNode(
                    id=n.id,
                    description=n.description,
                    tool=n.tool,
                    input=n.input,
                    children=n.children,
                )
                for n in fresh_tree.nodes.values()
            ],
        )
        root = self.tree.root
        renamed = _renamed_nodes(fresh, self.tree)
        tops = self.tree.graft(root, renamed, TOOLS, origin="replan")
        self.trace.emit("grafted", node=root, summary=f"{len(renamed)} new node(s)", children=tops)
        return tops[0] if tops else None

    def _step(self, node_id: str) -> str | None:
        node = self.tree[node_id]
        self.budget.take_node(node.depth)
        self.trace.emit(
            "node_started", node=node.id, tool=node.tool, summary=node.description, input=node.input
        )
        if node.tool not in self.enabled_tools():
            return self._skip(node, f"tool {node.tool} is disabled in this configuration")
        outcome = self._run_tool(node)
        if outcome.output.get("runs") and not outcome.candidates:
            return self._skip(node, outcome.summary)
        node.status = NodeStatus.DONE if outcome.status == "done" else NodeStatus.FAILED
        node.summary = outcome.summary
        node.reason = outcome.error or ""
        node.candidate_sql = outcome.candidate_sql
        self.trace.emit(
            "node_finished",
            node=node.id,
            tool=node.tool,
            summary=outcome.summary,
            status=node.status.value,
            output=outcome.output,
            error=outcome.error,
        )
        if TOOLS[node.tool].produces_candidate:
            return self._after_pool(node, outcome)
        if node.tool == ToolName.DETECT_AMBIGUITIES and outcome.status == "done":
            self._expand(node, AmbiguityReport.model_validate(outcome.output))
        return self._next_from(node)

    def _skip(self, node: NodeState, reason: str) -> str | None:
        node.status = NodeStatus.SKIPPED
        node.reason = reason
        self.trace.emit(
            "node_finished", node=node.id, tool=node.tool, summary=reason, status=node.status.value
        )
        return self._next_from(node)

    def _run_tool(self, node: NodeState) -> ToolOutcome:
        env = ToolEnv(
            executor=TracedExecutor(
                self.executor, self.trace, node.id, node.tool, budget=self.budget
            ),
            llm=self.llm.for_node(node.id),
            task=self.task,
            json_retries=self.options.json_retries,
            execution_enabled=self.options.execution_tools,
            pool=self.pool,
            memory=_BookMemory(self.book, self.trust),
            draws=self.draws,
        )
        base = self.book.last_running([n.id for n in self.tree.path(node.id)[:-1]])
        call = ToolCall(
            node_id=node.id,
            input=node.input,
            path=self._path_steps(node.id),
            base_sql=base.sql if base else self.task.original_sql,
            base_result=base.result if base else self.task.original_result,
        )
        try:
            return TOOLS[node.tool].run(env, call)
        except (BudgetExhaustedError, LLMError):
            raise
        except Exception as exc:  # a tool bug must not take the run down
            return ToolOutcome.failed(f"internal error in {node.tool}: {type(exc).__name__}: {exc}")

    def _path_steps(self, node_id: str) -> list[PathStep]:
        return [
            PathStep(
                node_id=n.id,
                tool=n.tool,
                description=n.description,
                input=n.input,
                summary=n.summary,
            )
            for n in self.tree.path(node_id)[:-1]
            if n.status != NodeStatus.PENDING
        ]

    # ------------------------------------------------------------- branching
    def _expand(self, node: NodeState, report: AmbiguityReport) -> None:
        readings = branching_readings(report)
        if self.linear:
            readings = readings[:1]
        planned = list(node.children)
        added = []
        for k, (phrase, reading) in enumerate(readings, 1):
            child = PlanNode(
                id=self.tree.fresh_id(f"{node.id}.{k}"),
                description=f"read {phrase!r} as: {reading}",
                tool=ToolName.GENERATE_SQL,
                input={"hypothesis": f"{phrase}: {reading}"},
            )
            added.append(self.tree.add_child(node.id, child, origin="expansion").id)
        node.children = added + planned
        if added:
            self.trace.emit(
                "expanded", node=node.id, summary=f"{len(added)} branch(es)", children=added
            )

    def _next_from(self, node: NodeState) -> str | None:
        pending = self.tree.pending_children(node.id)
        if not pending:
            leaf = PlanNode(
                id=self.tree.fresh_id(f"{node.id}.gen"),
                description="write the candidate from the evidence on this path",
                tool=ToolName.GENERATE_SQL,
                input={"feedback": self._feedback()} if self.book.rejected() else {},
            )
            return self.tree.add_child(node.id, leaf, origin="engine").id
        if len(pending) == 1 or self.linear:
            return pending[0].id
        return self._choose(node, pending)

    def _choose(self, node: NodeState, pending: list[NodeState]) -> str:
        ids = [p.id for p in pending]
        options = "\n".join(f"- {p.id}: {p.tool} {p.description}".rstrip() for p in pending)
        reply = self._agent(node.id).choose(
            self.tree.to_prompt_lines(node.id), node.id, options, ids
        )
        if reply.value is not None:
            self.trace.emit(
                "choice",
                node=node.id,
                summary=reply.value.reason,
                cursor=reply.value.cursor,
                options=ids,
            )
            return reply.value.cursor
        self.trace.emit(
            "choice_failed",
            node=node.id,
            summary=f"{reply.error}; following {ids[0]}",
            reason=reply.error,
            cursor=ids[0],
        )
        return ids[0]

    # ------------------------------------------------------------ candidates
    def _raw_entries(self, node: NodeState) -> list[PoolEntry]:
        """The raw single-turn rewrite, once per run, as the first candidate."""
        self._raw_pending = False
        statements, _ = raw_correction(
            self.llm.for_node(node.id), self.task, max_tokens=RAW_MAX_TOKENS
        )
        if not statements:
            self.trace.emit("raw_candidate", node=node.id, summary="no ```sql block in the reply")
            return []
        sql = ";\n".join(statements)
        known = self.book.known(sql)
        result = (
            known.result
            if known
            else TracedExecutor(
                self.executor, self.trace, node.id, "candidate", budget=self.budget
            ).execute(sql)
        )
        return [PoolEntry(sql=sql, origin="raw", result=result, known=known is not None)]

    def _register(self, node: NodeState, entries: list[PoolEntry]) -> list[Candidate]:
        """Add a pool to the book; returns its candidates (repeats included), in order."""
        pool: list[Candidate] = []
        for entry in entries:
            existing = self.book.known(entry.sql)
            if existing is not None:
                for _ in range(entry.votes):
                    self.book.add_vote(existing)
                    self._emit_candidate(node, existing, entry.origin, duplicate=True)
                if existing not in pool:
                    pool.append(existing)
                continue
            shape = result_shape(entry.sql, entry.result, self.task.dialect)
            candidate = self.book.add(
                node.id, entry.sql, entry.result, shape, origin=entry.origin, votes=entry.votes
            )
            if candidate.runs:
                refusal = self.trust.refusal(candidate.sql, shape)
                earlier = self.book.rejected_group_of(candidate)
                if refusal:
                    self.book.refuse(candidate, refusal)
                elif earlier is not None:
                    self.book.reject(
                        candidate,
                        "returns the same rows as a result already rejected: "
                        + earlier.rejected_reason,
                        by_judge=False,
                    )
            self._emit_candidate(node, candidate, entry.origin, duplicate=False)
            for _ in range(entry.votes - 1):
                self.book.duplicates += 1
                self._emit_candidate(node, candidate, entry.origin, duplicate=True)
            pool.append(candidate)
        return pool

    def _emit_candidate(
        self, node: NodeState, candidate: Candidate, origin: str, *, duplicate: bool
    ) -> None:
        self.trace.emit(
            "candidate",
            node=node.id,
            summary=(
                f"repeats {candidate.id}" if duplicate else candidate.result.summary(max_rows=3)
            ),
            sql=candidate.sql,
            status=candidate.result.status,
            candidate=candidate.id,
            origin=origin,
            duplicate=duplicate,
            group=candidate.group,
            verdict=candidate.verdict,
            reason=candidate.reason,
        )
        if not duplicate and candidate.verdict in ("refused", "rejected"):
            self.trace.emit(
                "refusal",
                node=node.id,
                summary=candidate.reason,
                candidate=candidate.id,
                verdict=candidate.verdict,
                sql=candidate.sql,
            )

    def _after_pool(self, node: NodeState, outcome: ToolOutcome) -> str | None:
        entries = list(outcome.candidates)
        if self._raw_pending:
            entries = self._raw_entries(node) + entries
        if not entries:
            return self._backtrack(node, None, outcome.error or "no candidate")
        pool = self._register(node, entries)
        self.trace.emit(
            "pool",
            node=node.id,
            summary=_pool_summary(pool),
            candidates=[c.id for c in pool],
            groups=list(dict.fromkeys(c.group for c in pool if c.group)),
        )
        eligible = [c for c in pool if c.verdict == "unjudged" and c.runs]
        if eligible:
            return self._judge_pool(node, eligible)
        return self._repair_or_reject(node, pool)

    def _repair_or_reject(self, node: NodeState, pool: list[Candidate]) -> str | None:
        """Nothing in the pool may be judged: repair a failing candidate (once), else reject.

        The node's own first failing candidate is repaired (greedy before
        samples, the raw rewrite last), whatever its error. A repair node
        whose candidates fail too is not repaired again: the branch is rejected.
        """
        failing = sorted(
            (c for c in pool if repairable(c.result)),
            key=lambda c: _REPAIR_ORDER.get(c.origin.split(":")[0], 9),
        )
        target = next((c for c in failing if self.book.key(c.sql) not in self._repaired), None)
        can_fix = ToolName.SPLIT_FIX_SYNTAX in self.enabled_tools()
        if target is None or not can_fix or node.tool == ToolName.SPLIT_FIX_SYNTAX:
            why = _unjudgeable_reason(node, pool, repaired_before=bool(failing) and can_fix)
            return self._reject_node(node, why, decision=None)
        self._repaired.add(self.book.key(target.sql))
        fix = PlanNode(
            id=self.tree.fresh_id(f"{node.id}.fix"),
            description=f"repair the failing candidate ({target.result.error_kind or 'error'})",
            tool=ToolName.SPLIT_FIX_SYNTAX,
            input={"sql": target.sql},
        )
        self.tree.add_child(node.id, fix, origin="engine")
        self.trace.emit(
            "fix_inserted", node=node.id, summary=target.reason, child=fix.id, candidate=target.id
        )
        return fix.id

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
        fault = fault_phrase(decision.reason) if decision.verdict == "accept" else None
        if chosen is not None and fault is None and self._too_few_votes(chosen):
            return self._unconfirmed(node, chosen, decision, view.labels)
        if chosen is not None and fault is None:
            winner = self.book.representative(chosen)
            self.book.accept(winner, decision.reason)
            node.status, node.reason = NodeStatus.ACCEPTED, decision.reason
            node.candidate_sql = winner.sql
            self.accepted = winner
            self.trace.emit(
                "judgement",
                node=node.id,
                summary=decision.reason,
                verdict="accept",
                by="agent",
                sql=winner.sql,
                group=chosen,
                candidate=winner.id,
                labels=view.labels,
            )
            return None
        if fault is not None:
            reason = (
                f"the judge accepted, but its reason says the candidate is wrong "
                f"({fault!r}): {decision.reason}"
            )
            return self._reject_node(node, reason, decision=None, judged=False, labels=view.labels)
        shown = set(view.labels.values())
        for candidate in eligible:
            if candidate.group in shown:  # groups beyond the ones shown stay unjudged
                self.book.reject(candidate, decision.reason)
        for group_id in shown:
            self.book.reject_group(group_id, decision.reason)
        return self._reject_node(node, decision.reason, decision=decision, labels=view.labels)

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
            "unconfirmed",
            node=node.id,
            summary=reason,
            group=group_id,
            votes=votes,
            needed=self.min_agreement,
            labels=labels,
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
    ) -> str | None:
        node.status, node.reason = NodeStatus.REJECTED, reason
        self.trace.emit(
            "judgement",
            node=node.id,
            summary=reason,
            verdict="reject",
            by="agent" if decision is not None else "engine",
            sql=node.candidate_sql,
            backtrack_to=decision.backtrack_to if decision else None,
            judged=judged,
            labels=labels or {},
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
                    check_nodes(decision.new_nodes, TOOLS, taken=self.tree.nodes)
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
                "judge_failed", node=node.id, summary=reply.error or "", reason=reply.error
            )
        return reply.value, reply.error

    def _valid_target(self, target: str, rejected: str) -> bool:
        return (
            target in self.tree
            and target != rejected
            and self.tree[target].status in EXECUTED
            and target not in self.tree.subtree(rejected)
        )

    # ------------------------------------------------------------- rollback
    def _backtrack(
        self, node: NodeState, decision: JudgeDecision | None, reason: str
    ) -> str | None:
        if self.linear:
            return self._linear_retry(node, reason)
        asked = decision.backtrack_to if decision else None
        target = (
            asked if asked and self._valid_target(asked, node.id) else self._auto_target(node.id)
        )
        if target is None:
            self.trace.emit(
                "backtrack", node=node.id, summary="nowhere left to go back to", to=None
            )
            return None
        pruned = self.tree.prune_branch(node.id, target, f"branch rejected at {node.id}: {reason}")
        self.trace.emit(
            "pruned", node=node.id, summary=reason, nodes=[node.id, *pruned], reason=reason
        )
        self.trace.emit(
            "backtrack",
            node=node.id,
            summary=f"back to {target}",
            to=target,
            by="agent" if target == asked else "engine",
        )
        if decision and decision.new_nodes:
            tops = self.tree.graft(target, decision.new_nodes, TOOLS, origin="judge")
            self.trace.emit(
                "grafted", node=target, summary=f"{len(tops)} new node(s)", children=tops
            )
        if not self.tree.pending_children(target):
            if self._regenerations.get(target, 0) >= self.options.regenerations_per_node:
                target = self._auto_target(target, include_self=False)
                if target is None:
                    return None
            self._regenerations[target] = self._regenerations.get(target, 0) + 1
        return self._next_from(self.tree[target])

    def _auto_target(self, node_id: str, include_self: bool = False) -> str | None:
        """Nearest ancestor with untried branches, else one that may regenerate."""
        chain = self.tree.path(node_id)
        ancestors = list(reversed(chain if include_self else chain[:-1]))
        for anc in ancestors:
            if anc.status in EXECUTED and self.tree.pending_children(anc.id):
                return anc.id
        for anc in ancestors:
            if (
                anc.status in EXECUTED
                and self._regenerations.get(anc.id, 0) < self.options.regenerations_per_node
            ):
                return anc.id
        return None

    def _linear_retry(self, node: NodeState, reason: str) -> str | None:
        if self._linear_retries <= 0:
            return None
        self._linear_retries -= 1
        retry = PlanNode(
            id=self.tree.fresh_id(f"{node.id}.r"),
            description="try again on the same path, with the judge's feedback",
            tool=ToolName.GENERATE_SQL,
            input={"hypothesis": node.input.get("hypothesis", ""), "feedback": self._feedback()},
        )
        return self.tree.add_child(node.id, retry, origin="engine").id

    def _feedback(self) -> str:
        lines = [f"Rejected: {' '.join(c.sql.split())} -- {c.reason}" for c in self.book.rejected()]
        text = "\n".join(lines)
        return text[-FEEDBACK_CHARS:]


_REPAIR_ORDER = {"greedy": 0, "retry": 1, "sample": 2, "repair": 3, "rule": 4, "raw": 5}


def _unjudgeable_reason(node: NodeState, pool: list[Candidate], *, repaired_before: bool) -> str:
    """Why a pool had nothing for the judge: refusals, repeats, or nothing ran."""
    ran = [c for c in pool if c.runs]
    if ran:
        said = {"refused": "refused", "rejected": "already rejected"}
        return "; ".join(
            sorted({f"{c.id} {said.get(c.verdict, c.verdict)}: {c.reason}" for c in ran})
        )
    first = (pool[0].reason if pool else "") or "no candidate"
    if node.tool == ToolName.SPLIT_FIX_SYNTAX:
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


def _renamed_nodes(plan: Plan, tree: PlanTree) -> list[PlanNode]:
    """The nodes of a second plan with ids that do not collide with the tree's."""
    taken = set(tree.nodes)
    mapping: dict[str, str] = {}
    for node in plan.nodes:
        new = f"r.{node.id}"
        k = 2
        while new in taken:
            new = f"r{k}.{node.id}"
            k += 1
        taken.add(new)
        mapping[node.id] = new
    order = [plan.cursor] + [n.id for n in plan.nodes if n.id != plan.cursor]
    by_id = {n.id: n for n in plan.nodes}
    renamed = PlanTree.from_plan(plan, TOOLS)  # links, with flat lists chained
    return [
        by_id[i].model_copy(
            update={"id": mapping[i], "children": [mapping[c] for c in renamed[i].children]}
        )
        for i in order
        if i in renamed
    ]


def default_plan(enabled_tools: list[str]) -> Plan:
    """The plan used when the agent cannot produce one.

    Ambiguity detection alone when enabled (its readings become branches, and
    with none the engine adds a generate_sql leaf), else one generate_sql.
    """
    if ToolName.DETECT_AMBIGUITIES in enabled_tools:
        first = PlanNode(
            id="n1", description="find what the issue leaves open", tool=ToolName.DETECT_AMBIGUITIES
        )
        return Plan(cursor="n1", nodes=[first])
    generate = PlanNode(id="n1", description="write the corrected SQL", tool=ToolName.GENERATE_SQL)
    return Plan(cursor="n1", nodes=[generate])


__all__ = ["FinalChoice", "SearchOutcome", "TreeSearch", "default_plan"]
