"""`generate_sql`: write a candidate from the evidence on the path, run it.

Input: `{"hypothesis": "...", "feedback": "..."}`, both optional. The LLM sees
the shared task block, the path history (every executed node from the root to
here with its result), the hypothesis this branch follows and feedback on
rejected candidates, and writes a minimally edited SQL. The node writes a
pool of candidates (greedy, samples, deterministic repairs of failing ones:
see :mod:`acts_sql.tools.pool`), each executed at once; the engine groups
them by result for the judge.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from acts_sql.db.result import ExecResult
from acts_sql.prompts.context import format_path
from acts_sql.protocol import GeneratedSql, Purpose
from acts_sql.tools.base import (
    PoolEntry,
    Tool,
    ToolArgs,
    ToolCall,
    ToolEnv,
    ToolOutcome,
    ToolOutput,
    advertised,
    not_advertised,
)
from acts_sql.tools.llm_call import SqlAsker
from acts_sql.tools.pool import collect_pool


class GenerateSqlArgs(ToolArgs):
    hypothesis: str = advertised("H", "")
    feedback: str = not_advertised("the engine writes it: why earlier candidates failed", "")
    instructions: str = not_advertised("accepted; the tool list asks for `hypothesis`", "")


class PoolLine(BaseModel):
    """One candidate of the pool, as the trace lists it."""

    sql: str
    origin: str
    votes: int
    status: str


class PoolOutput(ToolOutput):
    """A pool: its first candidate (the node's representative) and every candidate."""

    sql: str = ""
    rationale: str = ""
    result: ExecResult | None = None
    """The first candidate's first rows (`ExecResult.preview`)."""
    pool: list[PoolLine] = Field(default_factory=list)
    pool_stopped: str = ""
    """Why the pool drew fewer candidates than its size (set only when it did)."""


class GenerateSqlTool(Tool[GenerateSqlArgs]):
    name = "generate_sql"
    description = (
        "writes a minimally edited SQL from the evidence on the path; it is executed at once."
    )
    Args = GenerateSqlArgs
    Output = PoolOutput
    uses_execution = False
    produces_candidate = True

    def run(self, env: ToolEnv, call: ToolCall, args: GenerateSqlArgs) -> ToolOutcome:
        ask = SqlAsker(
            env,
            Purpose.GENERATE_SQL,
            "generate_sql.txt",
            GeneratedSql,
            notes="\n".join(n for n in (args.instructions, args.feedback) if n),
            based_on=max((env.task.original_sql, call.base_sql), key=len),
            path=format_path(call.path),
            hypothesis=args.hypothesis or "(none: use the most natural reading of the issue)",
        )
        stops: list[str] = []
        entries = collect_pool(env, ask, env.pool, env.memory, stops=stops)
        if not entries:
            return ToolOutcome.failed(f"no usable SQL from the model: {ask.last_error}")
        first = ask.replies.get(entries[0].sql)
        return pool_outcome(
            env, entries, rationale=first.rationale if first else "", stopped="; ".join(stops)
        )


def pool_outcome(
    env: ToolEnv,
    entries: list[PoolEntry],
    *,
    rationale: str = "",
    stopped: str = "",
    output: PoolOutput | None = None,
) -> ToolOutcome:
    """Describe a pool; its first candidate is the node's representative. `stopped`: why
    the pool drew fewer candidates than its size, if it did; `output`: a tool's own fields
    (split_fix_syntax's), which the pool's are added to."""
    first = entries[0]
    shown = first.result.summary() if env.execution_enabled else f"executed: {first.result.status}"
    summary = f"candidate:\n{first.sql}\nresult: {shown}"
    if len(entries) > 1:
        running = sum(1 for e in entries if e.result.ok)
        summary += f"\n(pool: {len(entries)} distinct candidate(s), {running} run)"
    if stopped:
        summary += f"\n(pool {stopped})"
    pool = {
        "sql": first.sql,
        "rationale": rationale,
        "result": first.result.preview(),
        "pool": [
            PoolLine(sql=e.sql, origin=e.origin, votes=e.votes, status=e.result.status)
            for e in entries
        ],
        **({"pool_stopped": stopped} if stopped else {}),
    }
    return ToolOutcome(
        status="done",
        summary=summary,
        output=(output or PoolOutput()).model_copy(update=pool),
        candidate_sql=first.sql,
        candidate_result=first.result,
        candidates=entries,
    )
