"""`generate_sql`: write a candidate from the evidence on the path, run it.

Input: `{"hypothesis": "...", "feedback": "..."}`, both optional. The LLM sees
the shared task block, the path history (every executed node from the root to
here with its result), the hypothesis this branch follows and feedback on
rejected candidates, and writes a minimally edited SQL. The candidate is
executed at once; its result is part of the outcome the judge sees.
"""

from __future__ import annotations

from typing import ClassVar

from acts_sql.protocol import GeneratedSql, Purpose
from acts_sql.tools.base import ToolArgs, ToolCall, ToolEnv, ToolOutcome, parse_args
from acts_sql.tools.context import format_path
from acts_sql.tools.llm_call import ask_tool_llm


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
        notes = [n for n in (args.instructions, args.feedback) if n]
        reply = ask_tool_llm(
            env,
            Purpose.GENERATE_SQL,
            "generate_sql.txt",
            GeneratedSql,
            path=format_path(call.path),
            hypothesis=args.hypothesis or "(none: use the most natural reading of the issue)",
            notes="\n".join(notes) or "(none)",
        )
        if reply.value is None:
            return ToolOutcome.failed(f"no usable SQL from the model: {reply.error}")
        return run_candidate(env, reply.value.sql, rationale=reply.value.rationale)


def run_candidate(env: ToolEnv, sql: str, *, rationale: str = "") -> ToolOutcome:
    """Execute a candidate and describe it; the engine decides what follows."""
    sql = sql.strip().rstrip(";").strip()
    result = env.executor.execute(sql)
    shown = result.summary() if env.execution_enabled else f"executed: {result.status}"
    summary = f"candidate:\n{sql}\nresult: {shown}"
    return ToolOutcome(
        status="done",
        summary=summary,
        output={"sql": sql, "rationale": rationale, "result": result.preview().model_dump()},
        candidate_sql=sql,
        candidate_result=result,
    )
