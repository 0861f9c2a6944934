"""The `critic` and `raw` methods: one LLM call, then one execution.

Neither has a judge: a candidate that executes without error counts as
accepted, one that does not is returned with `accepted: false`.
"""

from __future__ import annotations

from acts_sql.agent.baselines import critique_and_rewrite, raw_correction
from acts_sql.db.executor import Executor
from acts_sql.engine.candidates import CandidateBook
from acts_sql.engine.search import SearchOutcome
from acts_sql.engine.trace import Trace
from acts_sql.engine.traced import TracedExecutor, TracedLLM
from acts_sql.tools.context import TaskContext


def _execute_candidate(
    sql: str, statements: list[str], executor: Executor, trace: Trace, dialect: str, node: str
) -> SearchOutcome:
    result = TracedExecutor(executor, trace, node, "candidate").execute(sql)
    book = CandidateBook(dialect)
    candidate = book.add(node, sql, result, verdict="accepted" if result.ok else "unjudged")
    trace.emit(
        "candidate",
        node=node,
        summary=result.summary(max_rows=3),
        sql=sql,
        status=result.status,
        statements=statements,
    )
    accepted = candidate if result.ok else None
    stop = (
        "accepted (executes without error)"
        if result.ok
        else f"candidate does not execute: {result.error}"
    )
    return SearchOutcome(accepted=accepted, best=candidate, stop_reason=stop, statements=statements)


def run_critic(
    executor: Executor, llm: TracedLLM, task: TaskContext, retries: int, trace: Trace
) -> SearchOutcome:
    reply = critique_and_rewrite(llm.for_node("critic"), task, retries)
    if reply.value is None:
        trace.emit(
            "node_finished", node="critic", summary=f"failed: {reply.error}", status="failed"
        )
        return SearchOutcome(stop_reason=f"no usable rewrite: {reply.error}")
    trace.emit("node_finished", node="critic", summary=reply.value.critique, status="done")
    sql = reply.value.sql.strip().rstrip(";")
    return _execute_candidate(sql, [sql], executor, trace, task.dialect, "critic")


def run_raw(executor: Executor, llm: TracedLLM, task: TaskContext, trace: Trace) -> SearchOutcome:
    statements, _ = raw_correction(llm.for_node("raw"), task)
    if not statements:
        trace.emit(
            "node_finished",
            node="raw",
            summary="failed: no ```sql block in the reply",
            status="failed",
        )
        return SearchOutcome(stop_reason="no ```sql block in the reply")
    sql = ";\n".join(statements)
    return _execute_candidate(sql, statements, executor, trace, task.dialect, "raw")
