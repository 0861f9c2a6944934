"""The search loop: the paper's Algorithm 1 (method `acts`) and its linear variant.

0. Deterministic first: the rule chain repairs the user's SQL before any model call.
   The evidence gate (`acts_sql.engine.evidence`): when the raw rewrite, the rule
   chain's repair and up to two raw samples agree on a result the engine may accept,
   and the result checks let it stand, it is accepted without a plan (at most 3 LLM
   calls); otherwise they join the first pool, and they scale the calls the search may
   still make (`acts_sql.engine.scaled_budget`).
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
     too is not built upon: the branch is rejected. Where the query language
     rules split_fix_syntax out (PRQL), the child is a `generate_sql` told the
     failing query and its error (the compiler's line, column and message);
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

The linear method (`acts_sql.engine.methods.linear.LinearSearch`, a subclass
that overrides these steps) runs the same tools but never branches (only the
first interpretation becomes a child) and never rolls back (a rejection
appends a new attempt under the rejected node, up to `linear_retries`).

Budgets bound everything (depth bounds a path: a node below it ends its branch,
and the search goes back); when nothing is accepted the best candidate is
returned (`acts_sql.engine.selection`). Step 3, what happens to a pool, lives
in `acts_sql.engine.candidate_stage`.
"""

from __future__ import annotations

from contextlib import suppress
from typing import Any

from pydantic import BaseModel

from acts_sql.agent.central_agent import CentralAgent
from acts_sql.db.executor import Executor
from acts_sql.engine.budget import BudgetExhaustedError, BudgetTracker
from acts_sql.engine.candidate_stage import BookMemory, CandidateStage
from acts_sql.engine.candidates import Candidate, CandidateBook
from acts_sql.engine.choice import ChoiceAsker, ChoiceQuestion, reading_options
from acts_sql.engine.events import (
    BacktrackData,
    BudgetExhaustedData,
    BudgetScaledData,
    ChoiceData,
    ChoiceFailedData,
    ChoiceMadeData,
    ChoiceNeededData,
    ExpandedData,
    GraftedData,
    LlmFailedData,
    NodeFinishedData,
    NodeStartedData,
    PlanData,
    PlanFailedData,
    PrunedData,
    ReplanData,
)
from acts_sql.engine.evidence import EVIDENCE_RULE, EvidenceStage
from acts_sql.engine.feedback import rejection_feedback
from acts_sql.engine.named_names import NamedNames
from acts_sql.engine.options import CorrectionOptions
from acts_sql.engine.prefetch import NoExecution, first_request
from acts_sql.engine.recording import TracedExecutor, TracedLLM
from acts_sql.engine.scaled_budget import SearchAllowance, unit_calls
from acts_sql.engine.selection import FinalChoice, final_choice
from acts_sql.engine.trace import Trace
from acts_sql.engine.tree import (
    EXECUTED,
    NodeState,
    NodeStatus,
    PlanTree,
    PlanValidationError,
    check_plan,
    repair_plan,
)
from acts_sql.engine.trust import TrustContext
from acts_sql.errors import LLMError, LLMUnavailableError
from acts_sql.llm.base import LLMBackend, LLMRequest
from acts_sql.prompts.context import TaskContext
from acts_sql.protocol import AmbiguityReport, JudgeDecision, Plan, PlanNode, ToolName
from acts_sql.sql.languages import unavailable_tools
from acts_sql.tools.base import (
    PathStep,
    PoolEntry,
    PoolSettings,
    SampleLedger,
    ToolCall,
    ToolEnv,
    ToolOutcome,
)
from acts_sql.tools.detect_ambiguities import branching_readings
from acts_sql.tools.registry import TOOLS, Tools, run_tool
from acts_sql.tools.split_fix_syntax import RepairOutput


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


class PlanMade(BaseModel):
    """A `plan` or `plan_failed` event, emitted once the nodes have their ids in the tree."""

    summary: str
    data: PlanData | PlanFailedData

    def emit(self, trace: Trace, nodes: list[dict[str, Any]], *, replan: bool = False) -> None:
        """`nodes`: the plan as the engine runs it (repaired, chained, renamed on a re-plan);
        `data.plan` keeps the agent's reply as written."""
        trace.emit(
            self.data.model_copy(update={"nodes": nodes, "replan": replan}), summary=self.summary
        )


class TreeSearch(EvidenceStage, CandidateStage):
    """One run of the tree search over one task (`LinearSearch` narrows it to one path)."""

    tools: Tools = TOOLS
    """The registry the plans name tools from (a test's search may have its own)."""

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
        asker: ChoiceAsker | None = None,
    ) -> None:
        self.executor = executor
        self.asker = asker
        self.llm = llm
        self.task = task
        self.options = options
        self.trace = trace
        self.budget = budget
        self.trust = trust
        self.pool = pool
        self.book = CandidateBook(task.dialect)
        self.tree = PlanTree()
        self.accepted: Candidate | None = None
        self._regenerations: dict[str, int] = {}
        self._raw_pending = options.raw_candidate
        self._raw_sql: str | None = None
        # pool.rules: the option, off for a query language other than SQL (the rules rewrite SQL)
        self._rules_pending = pool.rules and bool(task.original_sql.strip())
        self._users_rules: frozenset[str] = frozenset()
        self._replanned = False
        self._gathered: tuple[list[PoolEntry], list[PoolEntry]] = ([], [])
        self._repaired: set[str] = set()
        self._anchors: set[str] = set()
        self.draws = SampleLedger()
        self.min_agreement = options.agreement_needed(pool.size)
        self.allowance = SearchAllowance(budget)
        self.named = NamedNames.of(
            task.question, task.original_sql, task.schema_names, tables=not trust.generated
        )
        self.witnessed: str | None = None
        """Text-to-SQL mode: the result fingerprint of the witness (`engine/witness.py`)."""

    # ----------------------------------------------------------------- setup
    def known_tools(self) -> list[str]:
        """Tools a plan may name: all, less those the query language rules out (PRQL has
        no split_fix_syntax); a plan naming one is refused like an unknown tool."""
        ruled_out = unavailable_tools(self.task.dialect)
        return [n for n in self.tools if n not in ruled_out]

    def enabled_tools(self) -> list[str]:
        names = self.known_tools()
        if not self.options.execution_tools:
            names = [n for n in names if not self.tools[n].uses_execution]
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
            if self._rules_pending:  # deterministic first: before any model call
                self._gathered = ([], self._rule_entries(None))
                rule = self._accept_rule_repair()
                if rule is not None:
                    return self.outcome(f"accepted ({rule}), without a model call")
            if self._raw_pending:
                self._send_plan_ahead()
                self._write_raw()
            if self._weigh_evidence():
                return self.outcome(f"accepted ({EVIDENCE_RULE}), without a plan")
            self.tree, event = self._make_plan()
            event.emit(self.trace, self.tree.plan_nodes())
            cursor: str | None = self.tree.root
            while cursor is not None:
                while cursor is not None:
                    cursor = self._step(cursor)
                cursor = None if self.accepted else self._replan()
            stop = "accepted" if self.accepted else "no branch left to explore"
        except BudgetExhaustedError as exc:
            stop = str(exc)
            self.trace.emit(BudgetExhaustedData(which=exc.which), summary=stop)
        except LLMError as exc:
            if isinstance(exc, LLMUnavailableError) and exc.before_any_reply:
                raise  # the run cannot start: acts_sql.correct raises it
            stop = f"LLM backend failed: {exc}"
            self.trace.emit(LlmFailedData(), summary=stop)
        return self.outcome(stop)

    def outcome(self, stop: str) -> SearchOutcome:
        self.allowance.stop()
        if self.accepted is None:  # no time left even to run it: the answer stands without it
            with suppress(BudgetExhaustedError, LLMError):
                self._register_unpooled_raw()
        choice = final_choice(self.book, self.accepted, self.task.original_result)
        if self.accepted is None and self.asker is not None:
            choice = self._ask_person(choice, self.asker)
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

    def _ask_person(self, choice: FinalChoice, asker: ChoiceAsker) -> FinalChoice:
        """Readings that lead to different results and nothing accepted: the asker chooses
        (`acts_sql.engine.choice`); no answer in time keeps the engine's choice."""
        options = reading_options(self.tree, self.book)
        if not options:
            return choice
        timeout = max(self.budget.remaining(), 0.0)
        self.trace.emit(
            ChoiceNeededData(readings=[o.model_dump() for o in options], timeout=timeout),
            summary=f"{len(options)} readings lead to different results: asking the person",
        )
        answer = asker(ChoiceQuestion(question=self.task.question, readings=options), timeout)
        picked = next((o for o in options if o.id == answer), None)
        if picked is None:
            ours = next(
                (o.id for o in options if choice.candidate and o.candidate == choice.candidate.id),
                None,
            )
            self.trace.emit(
                ChoiceMadeData(
                    reading=ours,
                    by="timeout",
                    candidate=choice.candidate.id if choice.candidate else None,
                ),
                summary="no answer: the engine's own choice stands",
            )
            return choice
        self.trace.emit(
            ChoiceMadeData(reading=picked.id, by="person", candidate=picked.candidate),
            summary=f"the person chose {picked.id}: {picked.reading}",
        )
        return FinalChoice(
            candidate=self.book[picked.candidate],
            note=f"nothing accepted; the person chose reading {picked.id} ({picked.reading}): "
            f"returning its best candidate ({picked.candidate}, not accepted)",
        )

    def _make_plan(
        self, previous: str = "", fallback: Plan | None = None
    ) -> tuple[PlanTree, PlanMade]:
        """The agent's plan as a tree (repaired, flat lists chained), or the fallback plan;
        with the `plan`/`plan_failed` event to emit once the nodes have their final ids."""
        enabled = self.enabled_tools()
        known = self.known_tools()

        def validate(plan: Plan) -> str | None:
            """Re-ask only when not even a repaired plan is left (see `repair_plan`)."""
            try:
                check_plan(repair_plan(plan, known)[0], known)
            except PlanValidationError as exc:
                return str(exc)
            return None

        reply = self._agent(None).plan(enabled, validate, previous)
        if reply.value is not None:
            repaired, repairs = repair_plan(reply.value, known)
            tree = PlanTree.from_plan(repaired, known)
            chained = [n.id for n in tree.nodes.values() if n.origin == "plan:chained"]
            summary = f"{len(tree)} node(s)"
            if chained:
                summary += f", {len(chained)} listed without links chained in order"
            if tree.repeats:
                summary += f", {len(tree.repeats)} repeated step(s) left out"
            if repairs:
                summary += f", {len(repairs)} flaw(s) repaired"
            event = PlanMade(
                summary=summary,
                data=PlanData(
                    plan=reply.value.model_dump(),
                    attempts=reply.attempts,
                    chained=chained,
                    repeats=dict(tree.repeats),
                    repairs=repairs,
                ),
            )
            return tree, event
        fallback = fallback or default_plan(enabled)
        event = PlanMade(
            summary=f"no usable plan ({reply.error}); using the default plan",
            data=PlanFailedData(reason=reply.error, plan=fallback.model_dump()),
        )
        return PlanTree.from_plan(fallback, self.tools), event

    def _replan(self) -> str | None:
        """Once per run, with budget left: a new plan under the root, told what failed."""
        if self._replanned or not self.options.replan or self.tree.root is None:
            return None
        if self.budget.llm_calls + 2 > self.budget.call_limit:
            return None
        self._room_for("a new plan, a pool and its judgement", 1 + unit_calls(self.pool.size))
        if self.budget.too_deep(self.tree[self.tree.root].depth + 1):
            return None  # the new plan's nodes, under the root, could not run
        self._replanned = True
        lessons = "\n".join(
            f"- {n.id} ({n.description or n.tool}): {n.reason}"
            for n in self.tree.nodes.values()
            if n.status == NodeStatus.REJECTED and n.reason
        )
        self.trace.emit(
            ReplanData(lessons=lessons), summary="every branch is exhausted; planning again"
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
        fresh_tree, event = self._make_plan(
            previous="\n" + lessons if lessons else "", fallback=retry
        )
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
        event.emit(self.trace, [n.model_dump(mode="json") for n in renamed], replan=True)
        tops = self.tree.graft(root, renamed, self.tools, origin="replan")
        self.trace.emit(
            GraftedData(children=tops), node=root, summary=f"{len(renamed)} new node(s)"
        )
        return tops[0] if tops else None

    def _step(self, node_id: str) -> str | None:
        node = self.tree[node_id]
        if self.budget.too_deep(node.depth):
            return self._too_deep(node)
        if self.tools[node.tool].produces_candidate and node.tool in self.enabled_tools():
            self._room_for("a pool and its judgement", unit_calls(self.pool.size))
        self.budget.take_node()
        self.trace.emit(
            NodeStartedData(input=node.input),
            node=node.id,
            tool=node.tool,
            summary=node.description,
        )
        if node.tool not in self.enabled_tools():
            return self._skip(node, f"tool {node.tool} is disabled in this configuration")
        outcome = self._run_tool(node)
        if isinstance(outcome.output, RepairOutput) and outcome.output.runs:
            return self._skip(node, outcome.summary)
        node.status = NodeStatus.DONE if outcome.status == "done" else NodeStatus.FAILED
        node.summary = outcome.summary
        node.reason = outcome.error or ""
        node.candidate_sql = outcome.candidate_sql
        self.trace.emit(
            NodeFinishedData(
                status=node.status.value, output=outcome.output.dump(), error=outcome.error
            ),
            node=node.id,
            tool=node.tool,
            summary=outcome.summary,
        )
        if self.tools[node.tool].produces_candidate:
            return self._after_pool(node, outcome)
        if isinstance(outcome.output, AmbiguityReport):
            self._expand(node, outcome.output)
        return self._next_from(node)

    def _skip(self, node: NodeState, reason: str) -> str | None:
        self._mark_skipped(node, reason)
        return self._next_from(node)

    def _mark_skipped(self, node: NodeState, reason: str) -> None:
        node.status = NodeStatus.SKIPPED
        node.reason = reason
        self.trace.emit(
            NodeFinishedData(status=node.status.value), node=node.id, tool=node.tool, summary=reason
        )

    def _too_deep(self, node: NodeState) -> str | None:
        """A node below the depth limit ends its branch: skipped, then the search goes back
        as after a rejection."""
        reason = f"below the depth limit ({self.budget.budget.max_depth}): this branch ends here"
        self._mark_skipped(node, reason)
        return self._backtrack(node, None, reason)

    def _tool_env(self, llm: LLMBackend, executor: Executor, draws: SampleLedger) -> ToolEnv:
        return ToolEnv(
            executor=executor,
            llm=llm,
            task=self.task,
            json_retries=self.options.json_retries,
            execution_enabled=self.options.execution_tools,
            pool=self.pool,
            memory=BookMemory(self.book, self.trust, self.task.original_sql),
            draws=draws,
        )

    def _tool_call(self, node: NodeState) -> ToolCall:
        base = self.book.last_running([n.id for n in self.tree.path(node.id)[:-1]])
        return ToolCall(
            node_id=node.id,
            input=node.input,
            path=self._path_steps(node.id),
            base_sql=base.sql if base else self.task.original_sql,
            base_result=base.result if base else self.task.original_result,
        )

    def _run_tool(self, node: NodeState) -> ToolOutcome:
        executor = TracedExecutor(self.executor, self.trace, node.id, node.tool, budget=self.budget)
        env = self._tool_env(self.llm.for_node(node.id), executor, self.draws)
        call = self._tool_call(node)
        try:
            return run_tool(node.tool, env, call, self.tools)
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
        readings = self._readings(report)
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
                ExpandedData(children=added), node=node.id, summary=f"{len(added)} branch(es)"
            )
            self._allow_readings(node.id, len(added))

    def _allow_readings(self, node_id: str, readings: int) -> None:
        """Readings grow the scaled allowance (`scaled_budget`): a choice, a pool and its
        judgement for a reading past the first."""
        allowed = self.allowance.grow_readings(readings, self.pool.size)
        if allowed is not None:
            self.trace.emit(
                BudgetScaledData(allowed_calls=allowed, readings=readings),
                node=node_id,
                summary=f"{self.budget.allowance_reason}: the search may make {allowed} LLM "
                "calls in all",
            )

    def _room_for(self, unit: str, calls: int) -> None:
        """Under the scaled allowance, a unit that cannot finish is not started: the search
        stops (`ScaledBudgetSpentError`)."""
        if not self.allowance.room_for(calls):
            raise self.allowance.spent(unit, calls)

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
        return self._pick(node, pending)

    def _readings(self, report: AmbiguityReport) -> list[tuple[str, str]]:
        """The readings of an ambiguity that become branches (a phrase and its reading)."""
        return branching_readings(report)

    def _pick(self, node: NodeState, pending: list[NodeState]) -> str:
        """Which of a node's untried children runs next: the agent chooses among several."""
        if len(pending) == 1:
            return pending[0].id
        return self._choose(node, pending)

    # ----------------------------------------------------- sent ahead (--parallel)
    def _send_plan_ahead(self) -> None:
        """The plan's request, sent while the raw rewrite is written."""
        if self.llm.parallel <= 1:
            return
        enabled = self.enabled_tools()
        request = first_request(
            lambda llm: CentralAgent(llm, self.task, json_retries=self.options.json_retries).plan(
                enabled, lambda _plan: None, ""
            ),
            self.llm.name,
        )
        self.llm.send_ahead([request] if request else [])

    def _send_branches_ahead(self, pending: list[NodeState]) -> None:
        """The first request of each open branch, in order, while the agent chooses."""
        if self.llm.parallel <= 1:
            return
        requests = [
            request
            for child in pending
            if child.tool in self.enabled_tools()
            and (request := self._first_request_of(child)) is not None
        ]
        self.llm.send_ahead(requests)

    def _first_request_of(self, node: NodeState) -> LLMRequest | None:
        """What running `node` would send first, found without running it (no statement,
        no draw taken, nothing recorded); None when its tool runs a statement first."""
        call, draws = self._tool_call(node), self.draws.copy()

        def build(llm: LLMBackend) -> object:
            env = self._tool_env(llm, NoExecution(self.task.dialect), draws)
            return run_tool(node.tool, env, call, self.tools)

        return first_request(build, self.llm.name)

    def _choose(self, node: NodeState, pending: list[NodeState]) -> str:
        self._room_for("a choice, its pool and judgement", 1 + unit_calls(self.pool.size))
        self._send_branches_ahead(pending)
        ids = [p.id for p in pending]
        options = "\n".join(f"- {p.id}: {p.tool} {p.description}".rstrip() for p in pending)
        reply = self._agent(node.id).choose(
            self.tree.to_prompt_lines(node.id), node.id, options, ids
        )
        if reply.value is not None:
            self.trace.emit(
                ChoiceData(cursor=reply.value.cursor, options=ids),
                node=node.id,
                summary=reply.value.reason,
            )
            return reply.value.cursor
        self.trace.emit(
            ChoiceFailedData(reason=reply.error, cursor=ids[0]),
            node=node.id,
            summary=f"{reply.error}; following {ids[0]}",
        )
        return ids[0]

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
        asked = decision.backtrack_to if decision else None
        target = (
            asked if asked and self._valid_target(asked, node.id) else self._auto_target(node.id)
        )
        if target is None:
            self.trace.emit(
                BacktrackData(to=None), node=node.id, summary="nowhere left to go back to"
            )
            return None
        pruned = self.tree.prune_branch(node.id, target, f"branch rejected at {node.id}: {reason}")
        self.trace.emit(
            PrunedData(nodes=[node.id, *pruned], reason=reason), node=node.id, summary=reason
        )
        self.trace.emit(
            BacktrackData(to=target, by="agent" if target == asked else "engine"),
            node=node.id,
            summary=f"back to {target}",
        )
        if decision and decision.new_nodes:
            tops = self.tree.graft(target, decision.new_nodes, self.tools, origin="judge")
            self.trace.emit(
                GraftedData(children=tops), node=target, summary=f"{len(tops)} new node(s)"
            )
        if not self.tree.pending_children(target):
            if self._regenerations.get(target, 0) >= self.options.regenerations_per_node:
                target = self._auto_target(target, include_self=False)
                if target is None:
                    return None
            self._regenerations[target] = self._regenerations.get(target, 0) + 1
        return self._next_from(self.tree[target])

    def _auto_target(self, node_id: str, include_self: bool = False) -> str | None:
        """Nearest ancestor with untried branches, else one that may regenerate; never one
        whose children would lie below the depth limit."""
        chain = self.tree.path(node_id)
        ancestors = list(reversed(chain if include_self else chain[:-1]))
        ancestors = [a for a in ancestors if not self.budget.too_deep(a.depth + 1)]
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

    def _feedback(self) -> str:
        return rejection_feedback([(c.sql, c.reason) for c in self.book.rejected()])


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
