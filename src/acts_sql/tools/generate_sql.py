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

from typing import ClassVar

from acts_sql.prompts.context import format_path
from acts_sql.protocol import GeneratedSql, Purpose
from acts_sql.tools.base import PoolEntry, ToolArgs, ToolCall, ToolEnv, ToolOutcome, parse_args
from acts_sql.tools.llm_call import SqlAsker
from acts_sql.tools.pool import clean_sql, collect_pool


class GenerateSqlArgs(ToolArgs):
    hypothesis: str = ""
    feedback: str = ""
    instructions: str = ""


class GenerateSqlTool:
    name: ClassVar[str] = "generate_sql"
    args_model: ClassVar[type[ToolArgs]] = GenerateSqlArgs
    uses_execution: ClassVar[bool] = False
    produces_candidate: ClassVar[bool] = True

    def run(self, env: ToolEnv, call: ToolCall) -> ToolOutcome:
        args = parse_args(self.name, GenerateSqlArgs, call.input)
        if isinstance(args, str):
            return ToolOutcome.failed(args)
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
    env: ToolEnv, entries: list[PoolEntry], *, rationale: str = "", stopped: str = ""
) -> ToolOutcome:
    """Describe a pool; its first candidate is the node's representative. `stopped`: why
    the pool drew fewer candidates than its size, if it did."""
    first = entries[0]
    shown = first.result.summary() if env.execution_enabled else f"executed: {first.result.status}"
    summary = f"candidate:\n{first.sql}\nresult: {shown}"
    if len(entries) > 1:
        running = sum(1 for e in entries if e.result.ok)
        summary += f"\n(pool: {len(entries)} distinct candidate(s), {running} run)"
    if stopped:
        summary += f"\n(pool {stopped})"
    return ToolOutcome(
        status="done",
        summary=summary,
        output={
            "sql": first.sql,
            "rationale": rationale,
            "result": first.result.preview().model_dump(),
            "pool": [
                {"sql": e.sql, "origin": e.origin, "votes": e.votes, "status": e.result.status}
                for e in entries
            ],
            **({"pool_stopped": stopped} if stopped else {}),
        },
        candidate_sql=first.sql,
        candidate_result=first.result,
        candidates=entries,
    )


def run_candidate(env: ToolEnv, sql: str, *, rationale: str = "") -> ToolOutcome:
    """Execute one candidate and describe it; the engine decides what follows."""
    sql = clean_sql(sql)
    result = env.executor.execute(sql)
    return pool_outcome(
        env, [PoolEntry(sql=sql, origin="greedy", result=result)], rationale=rationale
    )
