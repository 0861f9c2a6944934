"""The `critic` method: one LLM call that critiques the user's SQL, then rewrites it
(prompt in `agent/single_call.py`); no judge (`single_call.py`)."""

from __future__ import annotations

from acts_sql.agent.single_call import critique_and_rewrite
from acts_sql.engine.events import NodeFinishedData
from acts_sql.engine.methods.base import MethodRun, unjudged
from acts_sql.engine.methods.single_call import execute_candidate
from acts_sql.engine.search import SearchOutcome
from acts_sql.engine.translation import in_task_language


@unjudged
def run(r: MethodRun) -> SearchOutcome:
    llm, trace = r.llm, r.trace
    reply = critique_and_rewrite(llm.for_node("critic"), r.task, r.options.json_retries)
    if reply.value is None:
        trace.emit(
            NodeFinishedData(status="failed"), node="critic", summary=f"failed: {reply.error}"
        )
        return SearchOutcome(stop_reason=f"no usable rewrite: {reply.error}")
    trace.emit(NodeFinishedData(status="done"), node="critic", summary=reply.value.critique)
    sql = in_task_language(
        reply.value.sql.strip().rstrip(";"), r.executor, trace, "critic", llm.budget
    )
    return execute_candidate(r, "critic", sql, [sql])
