"""The search loop: the paper's Algorithm 1 (method `acts`) and its linear variant.

1. The agent writes a plan; the cursor names the node to run.
2. Run the node's tool. A `detect_ambiguities` result expands the node: one
   child `<id>.<k>` (a `generate_sql` with that hypothesis) per interpretation.
3. A `generate_sql` (or `split_fix_syntax`) node yields a candidate, executed
   at once. A syntax error gets an automatic `<id>.fix` child
   (`split_fix_syntax`) instead of a judgement. A candidate equal to one
   already rejected is rejected without asking. Any other candidate is
   judged: accepted (and executed without error) ends the search; rejected
   prunes the branch with the reason and backtracks to the executed node the
   agent names (or, failing that, the nearest ancestor with untried branches),
   grafting any new nodes the agent proposes.
4. Otherwise go to the node's children: one, go on; several, the agent
   chooses (linear: the first); none, the engine adds a `generate_sql` leaf.

The linear method runs the same tools but never branches (only the first
interpretation becomes a child) and never rolls back (a rejection appends a
new attempt under the rejected node, up to `linear_retries`).

Budgets bound everything; when one runs out the best candidate is returned.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from acts_sql.agent.central_agent import CentralAgent
from acts_sql.db.executor import Executor
from acts_sql.engine.budget import BudgetExhaustedError, BudgetTracker
from acts_sql.engine.candidates import Candidate, CandidateBook
from acts_sql.engine.options import CorrectionOptions, Method
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
)
from acts_sql.errors import LLMError
from acts_sql.protocol import (
    AmbiguityReport,
    ChooseDecision,
    JudgeDecision,
    Plan,
    PlanNode,
    ToolName,
)
from acts_sql.tools.base import PathStep, ToolCall, ToolEnv, ToolOutcome
from acts_sql.tools.context import TaskContext, format_path
from acts_sql.tools.detect_ambiguities import branching_readings
from acts_sql.tools.registry import TOOLS

EXECUTION_TOOLS = {ToolName.INSPECT_COLUMNS, ToolName.RUN_SQL, ToolName.SPLIT_FIX_SYNTAX}
FEEDBACK_CHARS = 1200


class SearchOutcome(BaseModel):
    accepted: Candidate | None = None
    best: Candidate | None = None
    stop_reason: str
    tree: list[dict[str, Any]] = []
    statements: list[str] | None = None
    """The final SQL as the method wrote it, statement by statement (`raw`: one per ```sql
    block, as the official baseline submits them); None: the final SQL split by the dialect."""


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
    ) -> None:
        self.executor = executor
        self.llm = llm
        self.task = task
        self.options = options
        self.trace = trace
        self.budget = budget
        self.linear = options.method == Method.LINEAR
        self.book = CandidateBook(task.dialect)
        self.tree = PlanTree()
        self.accepted: Candidate | None = None
        self._linear_retries = options.linear_retries
        self._regenerations: dict[str, int] = {}

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
                cursor = self._step(cursor)
            stop = "accepted" if self.accepted else "no branch left to explore"
        except BudgetExhaustedError as exc:
            stop = str(exc)
            self.trace.emit("budget_exhausted", summary=stop, which=exc.which)
        except LLMError as exc:
            stop = f"LLM backend failed: {exc}"
            self.trace.emit("llm_failed", summary=stop)
        return SearchOutcome(
            accepted=self.accepted,
            best=self.book.best(),
            stop_reason=stop,
            tree=self.tree.snapshot(),
        )

    def _make_plan(self) -> PlanTree:
        enabled = self.enabled_tools()

        def validate(plan: Plan) -> str | None:
            try:
                check_plan(plan, TOOLS)
            except PlanValidationError as exc:
                return str(exc)
            return None

        reply = self._agent(None).plan(enabled, validate)
        if reply.value is not None:
            tree = PlanTree.from_plan(reply.value, TOOLS)
            self.trace.emit(
                "plan",
                summary=f"{len(tree)} node(s)",
                plan=reply.value.model_dump(),
                attempts=reply.attempts,
            )
            return tree
        fallback = default_plan(enabled)
        self.trace.emit(
            "plan_failed",
            summary=f"no usable plan ({reply.error}); using the default plan",
            reason=reply.error,
            plan=fallback.model_dump(),
        )
        return PlanTree.from_plan(fallback, TOOLS)

    def _step(self, node_id: str) -> str | None:
        node = self.tree[node_id]
        self.budget.take_node(node.depth)
        self.trace.emit(
            "node_started", node=node.id, tool=node.tool, summary=node.description, input=node.input
        )
        if node.tool not in self.enabled_tools():
            node.status = NodeStatus.SKIPPED
            node.reason = f"tool {node.tool} is disabled in this configuration"
            self.trace.emit(
                "node_finished",
                node=node.id,
                tool=node.tool,
                summary=node.reason,
                status=node.status.value,
            )
            return self._next_from(node)
        outcome = self._run_tool(node)
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
            return self._after_candidate(node, outcome)
        if node.tool == ToolName.DETECT_AMBIGUITIES and outcome.status == "done":
            self._expand(node, AmbiguityReport.model_validate(outcome.output))
        return self._next_from(node)

    def _run_tool(self, node: NodeState) -> ToolOutcome:
        env = ToolEnv(
            executor=TracedExecutor(self.executor, self.trace, node.id, node.tool),
            llm=self.llm.for_node(node.id),
            task=self.task,
            json_retries=self.options.json_retries,
            execution_enabled=self.options.execution_tools,
        )
        parent = self.tree[node.parent] if node.parent else None
        base = self.book.latest_for(parent.id) if parent else None
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

        def validate(decision: ChooseDecision) -> str | None:
            return (
                None
                if decision.cursor in ids
                else f"cursor {decision.cursor!r} is not one of {ids}"
            )

        options = "\n".join(
            f"- {p.id}: {p.tool} {json.dumps(p.input, ensure_ascii=False)} {p.description}".rstrip()
            for p in pending
        )
        reply = self._agent(node.id).choose(
            self.tree.to_prompt_json(node.id), node.id, options, validate
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
    def _after_candidate(self, node: NodeState, outcome: ToolOutcome) -> str | None:
        sql, result = outcome.candidate_sql, outcome.candidate_result
        if sql is None or result is None:
            return self._backtrack(node, None, outcome.error or "no candidate")
        if (
            result.is_syntax_error
            and node.tool == ToolName.GENERATE_SQL
            and ToolName.SPLIT_FIX_SYNTAX in self.enabled_tools()
        ):
            self.book.add(node.id, sql, result, verdict="syntax_error")
            fix = PlanNode(
                id=self.tree.fresh_id(f"{node.id}.fix"),
                description="repair the syntax error clause by clause",
                tool=ToolName.SPLIT_FIX_SYNTAX,
                input={"sql": sql},
            )
            self.tree.add_child(node.id, fix, origin="engine")
            self.trace.emit("fix_inserted", node=node.id, summary=result.error or "", child=fix.id)
            return fix.id
        earlier = self.book.rejected_match(sql)
        if earlier is not None:
            reason = f"same SQL as the candidate rejected at {earlier.node}: {earlier.reason}"
            node.status, node.reason = NodeStatus.REJECTED, reason
            self.trace.emit(
                "judgement", node=node.id, summary=reason, verdict="reject", by="engine", sql=sql
            )
            return self._backtrack(node, None, reason)
        candidate = self.book.add(node.id, sql, result)
        self.trace.emit(
            "candidate",
            node=node.id,
            summary=result.summary(max_rows=3),
            sql=sql,
            status=result.status,
        )
        decision, error = self._judge(node, candidate)
        if decision is not None and decision.verdict == "accept":
            if result.ok:
                candidate.verdict, candidate.reason = "accepted", decision.reason
                node.status, node.reason = NodeStatus.ACCEPTED, decision.reason
                self.accepted = candidate
                self.trace.emit(
                    "judgement",
                    node=node.id,
                    summary=decision.reason,
                    verdict="accept",
                    by="agent",
                    sql=sql,
                )
                return None
            reason = (
                "the agent accepted, but the candidate does not execute "
                f"({result.status}: {result.error})"
            )
            decision = None
        else:
            reason = decision.reason if decision is not None else f"judge failed: {error}"
        self.book.reject(candidate, reason)
        node.status, node.reason = NodeStatus.REJECTED, reason
        self.trace.emit(
            "judgement",
            node=node.id,
            summary=reason,
            verdict="reject",
            by="agent" if decision is not None else "engine",
            sql=sql,
            backtrack_to=decision.backtrack_to if decision else None,
        )
        return self._backtrack(node, decision, reason)

    def _judge(
        self, node: NodeState, candidate: Candidate
    ) -> tuple[JudgeDecision | None, str | None]:
        def validate(decision: JudgeDecision) -> str | None:
            target = decision.backtrack_to
            if (
                decision.verdict == "reject"
                and target is not None
                and not self._valid_target(target, node.id)
            ):
                executed = [n.id for n in self.tree.nodes.values() if n.status in EXECUTED]
                return (
                    f"backtrack_to {target!r} is not an executed node; executed nodes: {executed}"
                )
            if decision.new_nodes:
                try:
                    check_nodes(decision.new_nodes, TOOLS, taken=self.tree.nodes)
                except PlanValidationError as exc:
                    return f"new_nodes: {exc}"
            return None

        if self.options.execution_tools:
            shown = candidate.result.summary()
        else:
            shown = "(execution results are not available in this configuration)"
        reply = self._agent(node.id).judge(
            self.tree.to_prompt_json(node.id),
            node.id,
            format_path(self._path_steps(node.id)),
            candidate.sql,
            shown,
            validate,
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
        lines = [f"Rejected: {c.sql} -- {c.reason}" for c in self.book.rejected()]
        text = "\n".join(lines)
        return text[-FEEDBACK_CHARS:]


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
