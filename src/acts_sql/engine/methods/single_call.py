"""What `critic` and `raw` share: one LLM call, one candidate.

Neither has a judge: a candidate that executes without error counts as accepted, one that
does not is returned with `accepted: false`; the trust rules still apply
(`acts_sql.engine.methods.vouch`: the user's SQL and the user's rows are never accepted).
"""

from __future__ import annotations

from acts_sql.engine.candidates import CandidateBook
from acts_sql.engine.events import CandidateData
from acts_sql.engine.fingerprint import result_shape
from acts_sql.engine.methods.base import MethodRun
from acts_sql.engine.recording import TracedExecutor
from acts_sql.engine.search import SearchOutcome


def execute_candidate(r: MethodRun, node: str, sql: str, statements: list[str]) -> SearchOutcome:
    """The outcome of the method's one candidate, accepted when it executes without error."""
    trace, dialect = r.trace, r.task.dialect
    result = TracedExecutor(r.executor, trace, node, "candidate", budget=r.llm.budget).execute(sql)
    book = CandidateBook(dialect)
    candidate = book.add(node, sql, result, result_shape(sql, result, dialect), origin="greedy")
    if result.ok:
        book.accept(candidate, "executes without error")
    trace.emit(
        CandidateData(
            sql=sql,
            status=result.status,
            statements=statements,
            candidate=candidate.id,
            origin="greedy",
            duplicate=False,
        ),
        node=node,
        summary=result.summary(max_rows=3),
    )
    accepted = candidate if result.ok else None
    stop = (
        "accepted (executes without error)"
        if result.ok
        else f"candidate does not execute: {result.error}"
    )
    return SearchOutcome(
        accepted=accepted,
        best=candidate,
        stop_reason=stop,
        statements=statements,
        candidates=[candidate],
    )
