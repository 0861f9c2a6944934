"""The `maplerepair` method: MapleRepair's staged repair chain, the LLM repairer last.

MapleRepair (NL2SQL-Empirical/NL2SQL_Error_Empirical, "Demystifying and
Repairing In-Context-Learning-Based Text-to-SQL Errors") in acts-sql's
structure: the rules are `acts_sql.sql.rules`, executed by
`acts_sql.tools.rule_chain`.

1. Syntax stage on the user's SQL while it fails (rules only).
2. Still failing: the LLM repairer, with the error and the rules' hints; if
   its repair does not run either, the user's SQL comes back unchanged
   (MapleRepair returns what it cannot repair untouched).
3. Logic, convention and output stages on the running statement.
4. Hints left (an error a rule found but could not fix safely): the LLM
   repairer once more; its repair is kept only if it runs (MapleRepair keeps
   it regardless; acts-sql never returns a failing statement for a running one).

Zero LLM calls when the rules leave no error. Every rule that fired is a
`rule_fired` trace event; the LLM repairs are `llm_repair` events.

The rules read SQL's tree. A query in another language (PRQL) has none of
them: a query that fails goes to the LLM repairer with the compiler's or the
database's error (kept only if it runs), a query that runs comes back as it is.
"""

from __future__ import annotations

from acts_sql.agent.maplerepair import repair_with_hints
from acts_sql.db.result import ExecResult
from acts_sql.engine.events import LlmRepairData
from acts_sql.engine.methods.base import MethodRun, unjudged
from acts_sql.engine.methods.staged import StagedRun
from acts_sql.engine.recording import TracedExecutor, TracedLLM
from acts_sql.engine.rule_trace import rule_events
from acts_sql.engine.search import SearchOutcome
from acts_sql.engine.translation import in_task_language
from acts_sql.prompts.context import TaskContext
from acts_sql.sql.rules import Stage
from acts_sql.tools.rule_chain import LATER_STAGES, ChainResult, RuleChain, hint_text

NODE = "maplerepair"


@unjudged
def run(r: MethodRun) -> SearchOutcome:
    llm, task, trace = r.llm, r.task, r.trace
    original = task.original_result
    if original is None:
        return SearchOutcome(stop_reason="the user's SQL was not executed")
    traced = TracedExecutor(r.executor, trace, NODE, "rules", budget=llm.budget)
    if task.language is not None:
        staged = StagedRun(NODE, task.dialect, task.original_sql, trace)
        return _without_rules(llm, task, original, traced, staged)
    chain = RuleChain(traced, task.facts(), task.dialect, on_fire=rule_events(trace, NODE))
    staged = StagedRun(NODE, task.dialect, task.original_sql, trace)
    state = chain.run(task.original_sql, original, stages=[Stage.SYNTAX])
    origin = _origin(state.repaired_by)
    if not state.result.ok:
        fixed = _llm_repair(llm, task, traced, staged, state)
        if fixed is None or not fixed.result.ok:
            why = "neither the rules nor the LLM repairer make it run"
            return staged.finish(task.original_sql, original, "original", why)
        state, origin = fixed, "llm_repair"
    later = chain.run(state.sql, state.result, stages=LATER_STAGES)
    rules = [*state.repaired_by, *later.repaired_by]
    if later.repaired_by:
        origin = _origin(rules)
    if later.hints:
        fixed = _llm_repair(llm, task, traced, staged, later)
        if fixed is not None and fixed.result.ok:
            later, origin = fixed, "llm_repair"
    why = f"repaired by {', '.join(rules)}" if rules else "the rules repaired nothing"
    if origin == "llm_repair":
        why += "; then by the LLM repairer"
    return staged.finish(later.sql, later.result, origin, why)


def _without_rules(
    llm: TracedLLM, task: TaskContext, original: ExecResult, run: TracedExecutor, staged: StagedRun
) -> SearchOutcome:
    """A query language the rules cannot read: only the LLM repairer, for a failing query."""
    name = task.language.display_name if task.language else task.dialect
    if original.ok:
        why = f"the repair rules read SQL, not {name}: nothing to repair in a query that runs"
        return staged.finish(task.original_sql, original, "original", why)
    fixed = _llm_repair(llm, task, run, staged, ChainResult(sql=task.original_sql, result=original))
    if fixed is None or not fixed.result.ok:
        why = f"the LLM repairer does not make it run (no repair rules for {name})"
        return staged.finish(task.original_sql, original, "original", why)
    return staged.finish(fixed.sql, fixed.result, "llm_repair", "repaired by the LLM repairer")


def _origin(rules: list[str]) -> str:
    return "rule:" + "+".join(rules) if rules else "original"


def _llm_repair(
    llm: TracedLLM, task: TaskContext, run: TracedExecutor, staged: StagedRun, state: ChainResult
) -> ChainResult | None:
    """The LLM repairer on `state`; the new state when it wrote a statement."""
    hints = hint_text(state.hints)
    shown = state.result.summary(max_rows=10)
    sql = repair_with_hints(llm.for_node(NODE), task, state.sql, shown, hints)
    if sql is None:
        staged.trace.emit(
            LlmRepairData(ok=False), node=NODE, summary="no ```sql block in the reply"
        )
        return None
    sql = in_task_language(sql, run, staged.trace, NODE, llm.budget)
    result = run.execute(sql)
    candidate = staged.record(sql, result, "llm_repair")
    staged.trace.emit(
        LlmRepairData(ok=result.ok, sql=sql, candidate=candidate.id, hints=hints),
        node=NODE,
        summary=result.summary(max_rows=3),
    )
    return ChainResult(sql=sql, result=result)
