"""The `raw` method: single-turn correction with the BIRD-CRITIC baseline prompt (in
`agent/single_call.py`); no judge (`single_call.py`)."""

from __future__ import annotations

from acts_sql.agent.single_call import raw_correction
from acts_sql.engine.events import NodeFinishedData
from acts_sql.engine.methods.base import MethodRun, unjudged
from acts_sql.engine.methods.single_call import execute_candidate
from acts_sql.engine.search import SearchOutcome
from acts_sql.engine.translation import in_task_language


@unjudged
def run(r: MethodRun) -> SearchOutcome:
    statements, _ = raw_correction(r.llm.for_node("raw"), r.task)
    if not statements:
        r.trace.emit(
            NodeFinishedData(status="failed"),
            node="raw",
            summary="failed: no ```sql block in the reply",
        )
        return SearchOutcome(stop_reason="no ```sql block in the reply")
    sql = ";\n".join(statements)
    if r.task.language is not None:  # one query (`raw_correction`), maybe written in SQL
        sql = in_task_language(sql, r.executor, r.trace, "raw", r.llm.budget)
        statements = [sql]
    return execute_candidate(r, "raw", sql, statements)
